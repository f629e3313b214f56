"""Buffer descriptors and locks of every DMA channel and buffer set: the one counting rule.

The hardware facts it reads are device data (``Device.bd_pool``, ``lock_max``,
``host_sequence``); this module applies them to a design's fifos and links. The
planner checks tiles with these functions, the plan verifier checks parsed plans
with them, and the physical MLIR level
builds exactly these chains (``backends/mlir/dma_programs.py``,
``resources.py``, ``host_shim.py``, ``runtime_sequence.py``), so a plan the
planner accepts fits the BD and lock pools the emitter draws from. The rule,
as IRON lowers object fifos:

- a core end's channel cycles through one BD per buffer (the fifo's depth);
- a link's memtile holds the buffers of its *whole* fifo (split/forward: the
  source, join: the destination); the channel of the whole fifo moves every
  *part* of every buffer with its own BD, so it needs ``depth x parts`` BDs
  (a forward has one part), and each part fifo's channel one BD per buffer of
  the whole fifo;
- a host end on an NPU shim needs one BD in the runtime sequence's ring (the
  shim's BDs are shared out among its channels); on AIE1, whose shim DMAs are
  described statically, one BD per move on that fifo;
- BD ids come from a pool per channel: a memtile's 48 are split by channel
  parity, even channels BDs 0-23, odd 24-47 (AIE_FACTS "buffer descriptors");
  every other tile has one pool for all its channels;
- locks: AIE2/AIE-ML locks are semaphores (AIE_FACTS "semaphores, max value
  63"), so a buffer set has one producer/consumer pair per part, whatever the
  depth (a depth above 63 does not fit the semaphore); AIE1 locks are binary
  (AIE_FACTS "16 per tile, binary"), one per buffer.
"""

from __future__ import annotations

import itertools

from tilelang.devices import Device
from tilelang.errors import PlanError
from tilelang.ir.design import Design, Link, LinkKind
from tilelang.ir.verify import HOST

Coord = tuple[int, int]

def whole_fifo(link: Link) -> str:
    """The fifo whose buffers a link's memtile holds (split/forward: the source; join: the destination)."""
    return link.dsts[0] if link.kind is LinkKind.JOIN else link.srcs[0]


def part_count(link: Link) -> int:
    """Parts a link moves to or from its whole fifo's buffers, each with its own BDs and locks."""
    if link.kind is LinkKind.FORWARD:
        return 1
    return len(link.srcs) if link.kind is LinkKind.JOIN else len(link.dsts)


def _link(design: Design, name: str) -> Link:
    for ln in design.links:
        if ln.name == name:
            return ln
    raise KeyError(name)


def host_end_bds(design: Design, fifo: str) -> int:
    """BDs the host end of ``fifo`` takes on its shim.

    NPU: one (the runtime sequence shares the shim's BDs out among its channels
    as rings, and needs at least one per channel). AIE1: one per move on the
    fifo, since the shim's BD chain lists every move (backends/mlir/host_shim.py).
    """
    if design.plio_of(fifo):
        return 0  # a PLIO stream: the PL side moves the data, the PL shim has no DMA
    if design.device.host_sequence:
        return 1
    return max(1, sum(1 for d in design.dmas if fifo in d.fifos))


def end_bds(design: Design, fifo: str, agent: str) -> int:
    """BDs in the chain of the DMA channel that carries ``agent``'s end of ``fifo``.

    Args:
        design: the design.
        fifo: the fifo.
        agent: ``host``, ``core:<name>`` or ``link:<name>``.

    Returns:
        The number of buffer descriptors that channel cycles through.
    """
    if agent == HOST:
        return host_end_bds(design, fifo)
    kind, _, name = agent.partition(":")
    if kind == "core":
        return design.fifo(fifo).depth
    ln = _link(design, name)
    whole = whole_fifo(ln)
    depth = design.fifo(whole).depth
    return depth * part_count(ln) if fifo == whole else depth


def bd_pool(device: Device, tile: Coord, channel: int) -> tuple[int, int]:
    """(first BD id, count) the DMA channel ``channel`` of ``tile`` may use (either direction).

    A memtile's BDs are split by channel parity (AIE_FACTS "48 per memtile
    (even channels BDs 0-23, odd 24-47)"); other tiles share one pool.
    """
    return device.bd_pool(tile, channel)


def pools_fit(device: Device, tile: Coord, bds: dict[str, list[int]]) -> bool:
    """Whether some numbering of a memtile's DMA channels keeps every BD pool (``bd_pool``) within its size.

    Args:
        bds: per direction ("mm2s", "s2mm"), the BDs of each end on the tile.

    Each direction's ends go to distinct channels; a channel's parity picks its pool, which both directions
    share. Exact, over every split of each direction's ends into the two parities (the planner's greedy
    link placement asks it before the ends exist; ``plan/channels.py`` then deals them).
    """
    if device.tile_kind(tile) != "mem":
        return True
    pool = bd_pool(device, tile, 0)[1]
    total = sum(map(sum, bds.values()))
    if total <= pool:
        return True
    sums: list[set[int]] = []  # per direction, the BDs its ends can put on the even pool
    for d, ends in bds.items():
        n = device.dma_channels(tile, d)
        slots = [sum(1 for c in range(n) if c % 2 == p) for p in (0, 1)]
        if len(ends) > sum(slots) or len(ends) > device.dma_channels(tile, d):
            return False
        evens = range(max(0, len(ends) - slots[1]), slots[0] + 1)
        sums.append({sum(pick) for k in evens for pick in itertools.combinations(ends, min(k, len(ends)))})
    return any(total - pool <= sum(even) <= pool for even in itertools.product(*sums))


def set_locks(device: Device, depth: int, parts: int = 1) -> int:
    """Locks a buffer set of ``depth`` buffers moved in ``parts`` parts needs on its tile.

    Raises:
        PlanError: an AIE2 fifo deeper than a semaphore lock counts.
    """
    if device.lock_max == 1:  # binary locks: one per buffer
        return depth
    if depth > device.lock_max:
        raise PlanError(
            f"a fifo of depth {depth} needs a lock counting to {depth}; {device.name}'s locks count to "
            f"{device.lock_max} (reduce the depth)"
        )
    return 2 * parts


def host_end_locks(device: Device, tile: Coord | None = None) -> int:
    """Locks a host (shim) end needs (on ``tile`` when given: none on a PL shim, which streams PLIO).

    On AIE2 the runtime sequence synchronises host moves through task completion
    (``aiex.npu.dma_wait``, AIE_FACTS "mlir-aie dialect"), not shim locks; on AIE1
    each shim channel's BD chain is guarded by one lock (backends/mlir/host_shim.py).
    """
    if tile is not None and device.is_pl_shim(tile):
        return 0
    return 0 if device.host_sequence else 1
