"""Which stream-switch connections a tile can make, per architecture and tile kind, as data.

A switchbox connects a slave port (a stream arriving: bundle and channel) to a master port (a stream leaving).
Not every pair is wired. Each table below maps (slave bundle, master bundle) to a rule:

- ``ANY``: any channel of the slave bundle to any channel of the master bundle;
- ``SAME``: only channel k to channel k (e.g. an AIE-ML memtile's North/South pass-through);
- an int n: only to master channel n (e.g. trace into DMA channel 0).

Pairs absent from a table cannot be connected. Channel numbers must also lie below the port counts of
``TileSpec.ports_in`` / ``ports_out``.

Source [TMc]: mlir-aie ``lib/Dialect/AIE/IR/AIETargetModel.cpp`` (main, March 2026, the version of
../shared/tools/mlir-aie), ``AIE1TargetModel::isLegalTileConnection`` and
``AIE2TargetModel::isLegalTileConnection`` (AIE2P uses the AIE2 rules). TileControl ports are not modelled
(tilelang routes no control packets).
"""

from __future__ import annotations

ANY = "any"
SAME = "same"

Rule = str | int
RuleTable = tuple[tuple[tuple[str, str], Rule], ...]

_DATA = ("DMA", "FIFO", "South", "West", "North", "East")


def _table(entries: dict[tuple[str, str], Rule]) -> RuleTable:
    return tuple(sorted(entries.items()))


# [TMc] AIE2 core tile: DMA/FIFO/South/West/North/East -> Core/DMA/FIFO/South/West/North/East, the same
# channel when the bundle is the same; Core -> anything but Core; Trace -> DMA channel 0, FIFO, South.
AIE2_COMPUTE_RULES = _table(
    {
        **{(s, d): (SAME if s == d else ANY) for s in _DATA for d in ("Core", *_DATA)},
        **{("Core", d): ANY for d in _DATA},
        ("Trace", "DMA"): 0,
        ("Trace", "FIFO"): ANY,
        ("Trace", "South"): ANY,
    }
)

# [TMc] AIE2 memtile: DMA -> DMA the same channel, DMA -> South/North any; South/North -> DMA any;
# South/North -> South/North the same channel; Trace -> DMA channel 5, South.
AIE2_MEM_RULES = _table(
    {
        ("DMA", "DMA"): SAME,
        ("DMA", "South"): ANY,
        ("DMA", "North"): ANY,
        ("South", "DMA"): ANY,
        ("North", "DMA"): ANY,
        ("South", "South"): SAME,
        ("South", "North"): SAME,
        ("North", "South"): SAME,
        ("North", "North"): SAME,
        ("Trace", "DMA"): 5,
        ("Trace", "South"): ANY,
    }
)

_SHIM_OUT = ("FIFO", "South", "West", "North", "East")

# [TMc] AIE2 shim: FIFO/South -> FIFO/South/West/North/East any; West/North/East -> the same bundle on the
# same channel, another bundle any; Trace -> FIFO/South any, West/East channel 0.
AIE2_SHIM_RULES = _table(
    {
        **{(s, d): ANY for s in ("FIFO", "South") for d in _SHIM_OUT},
        **{(s, d): (SAME if s == d else ANY) for s in ("West", "North", "East") for d in _SHIM_OUT},
        ("Trace", "FIFO"): ANY,
        ("Trace", "South"): ANY,
        ("Trace", "West"): 0,
        ("Trace", "East"): 0,
    }
)

_AIE1_ALL = ("Core", "DMA", "FIFO", "South", "West", "North", "East")

# [TMc] AIE1 core and shim tiles: any connection within the port counts, except that Trace goes only South.
AIE1_RULES = _table(
    {
        **{(s, d): ANY for s in _AIE1_ALL for d in _AIE1_ALL},
        ("Trace", "South"): ANY,
    }
)


def allows(rules: RuleTable, src: tuple[str, int], dst: tuple[str, int]) -> bool:
    """Whether ``rules`` connect slave port ``src`` to master port ``dst`` (channels unchecked against counts)."""
    rule = dict(rules).get((src[0], dst[0]))
    if rule is None:
        return False
    if rule == ANY:
        return True
    if rule == SAME:
        return src[1] == dst[1]
    return dst[1] == rule
