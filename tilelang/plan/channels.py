"""DMA channel indices: which channel of its tile each streamed fifo end uses.

Per tile and direction, ends are numbered in a deterministic order. On a
memtile the index also decides which BD pool the channel's chain draws from
(even channels BDs 0-23, odd 24-47: AIE_FACTS "buffer descriptors",
``descriptors.bd_pool``), so when the plain numbering overfills a pool, the
ends are re-dealt over the pools: every split of each direction's ends into
even and odd channels is tried, and the one with the least-loaded fullest
pool wins (ties: the fewest ends moved from the plain numbering, then the
first found). Within a pool, ends keep their order. Memtiles have at most 6
channels a direction, so at most 2**12 splits are tried.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tilelang.devices import Device
from tilelang.errors import PlanError
from tilelang.ir.descriptors import bd_pool, end_bds, host_end_bds, part_count, whole_fifo
from tilelang.ir.design import Design

Coord = tuple[int, int]
#: Above this many candidate splits of one tile, ends are dealt greedily (largest first) instead.
MAX_SPLITS = 1 << 12


class End(Protocol):
    """What channel assignment reads of a DMA end."""

    fifo: str
    agent: str
    tile: Coord
    direction: str
    bds: int


def assign_channels(device: Device, ends: Sequence[End]) -> dict[tuple[str, str], int]:
    """Channel index of every DMA end: per (tile, direction) in the order given, memtile BD pools balanced.

    Args:
        device: the device.
        ends: every streamed end, in a deterministic order.

    Returns:
        (fifo, agent) -> channel index. Channel counts and BD pools are checked
        later (``resources.check_tiles``), with messages naming who needs them.
    """
    by_tile: dict[Coord, list[End]] = {}
    for e in ends:
        by_tile.setdefault(e.tile, []).append(e)
    out: dict[tuple[str, str], int] = {}
    for tile, mine in by_tile.items():
        out.update(_tile_channels(device, tile, mine))
    return out


def _sequential(ends: list[End]) -> dict[tuple[str, str], int]:
    nxt: dict[str, int] = {}
    out = {}
    for e in ends:
        out[(e.fifo, e.agent)] = nxt.get(e.direction, 0)
        nxt[e.direction] = nxt.get(e.direction, 0) + 1
    return out


def _pool_loads(device: Device, tile: Coord, ends: list[End], channels: dict[tuple[str, str], int]) -> dict[int, int]:
    load: dict[int, int] = {}
    for e in ends:
        first = bd_pool(device, tile, channels[(e.fifo, e.agent)])[0]
        load[first] = load.get(first, 0) + e.bds
    return load


def _tile_channels(device: Device, tile: Coord, ends: list[End]) -> dict[tuple[str, str], int]:
    plain = _sequential(ends)
    if device.tile_kind(tile) != "mem":
        return plain
    pool = bd_pool(device, tile, 0)[1]
    chans = plain
    groups = {d: [e for e in ends if e.direction == d] for d in ("mm2s", "s2mm")}
    if any(len(g) > device.dma_channels(tile, d) for d, g in groups.items()):
        return plain  # too many ends: the channel check reports it
    if max(_pool_loads(device, tile, ends, plain).values()) > pool:
        best = _best_split(device, tile, groups, plain)
        chans = best if best is not None else plain
    return _loops_paired(device, tile, ends, chans)


def _loops_paired(device: Device, tile: Coord, ends: list[End],
                  chans: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """``chans`` with each fifo that leaves and enters this memtile (one link's output feeding another link
    on the same memtile) on one channel number both ways: the memtile's switch connects DMA to DMA only on
    the same channel (``Device.legal_connection``, mlir-aie's ``isLegalTileConnection``).

    Each such fifo takes the channel number, free or held by an end that can swap with it in both directions,
    that keeps the fullest BD pool least loaded (then the fewest ends moved); paired fifos keep theirs.
    Unchanged where no fifo loops, or where no number works (the plan verifier's switch check then names it).
    """
    out = dict(chans)
    send = {e.fifo: e for e in ends if e.direction == "mm2s"}
    loops = [(send[e.fifo], e) for e in ends if e.direction == "s2mm" and e.fifo in send]
    fixed: set[int] = set()
    width = min(device.dma_channels(tile, "mm2s"), device.dma_channels(tile, "s2mm"))
    for out_end, in_end in loops:
        keys = [(out_end.fifo, out_end.agent), (in_end.fifo, in_end.agent)]
        if out[keys[0]] == out[keys[1]] and out[keys[0]] not in fixed:
            fixed.add(out[keys[0]])
            continue
        best: tuple[tuple[int, int], dict[tuple[str, str], int]] | None = None
        for c in range(width):
            if c in fixed:
                continue
            trial = dict(out)
            for key, d in zip(keys, ("mm2s", "s2mm"), strict=True):
                holder = next((k for k, v in trial.items() if v == c and k != key
                               and any((e.fifo, e.agent) == k and e.direction == d for e in ends)), None)
                if holder is not None:
                    trial[holder] = trial[key]
                trial[key] = c
            score = (max(_pool_loads(device, tile, ends, trial).values()), sum(trial[k] != out[k] for k in trial))
            if best is None or score < best[0]:
                best = (score, trial)
        if best is None:
            return out
        out = best[1]
        fixed.add(out[keys[0]])
    return out


def _best_split(
    device: Device, tile: Coord, groups: dict[str, list[End]], plain: dict[tuple[str, str], int]
) -> dict[tuple[str, str], int] | None:
    """The split of each direction's ends over even/odd channels with the least-loaded fullest pool."""
    ends = [e for g in groups.values() for e in g]
    if 2 ** len(ends) > MAX_SPLITS:
        return _greedy_split(device, tile, groups)
    best: tuple[tuple[int, int], dict[tuple[str, str], int]] | None = None
    for parities in itertools.product((0, 1), repeat=len(ends)):
        chans = _numbered(device, tile, groups, dict(zip(((e.fifo, e.agent) for e in ends), parities, strict=True)))
        if chans is None:
            continue
        worst = max(_pool_loads(device, tile, ends, chans).values())
        moved = sum(chans[k] != plain[k] for k in chans)
        if best is None or (worst, moved) < best[0]:
            best = ((worst, moved), chans)
    return None if best is None else best[1]


def _numbered(
    device: Device, tile: Coord, groups: dict[str, list[End]], parity: dict[tuple[str, str], int]
) -> dict[tuple[str, str], int] | None:
    """Channel indices giving each end its parity, in order within a parity; None if a parity runs out."""
    out = {}
    for d, g in groups.items():
        free = {p: [c for c in range(device.dma_channels(tile, d)) if c % 2 == p] for p in (0, 1)}
        for e in g:
            p = parity[(e.fifo, e.agent)]
            if not free[p]:
                return None
            out[(e.fifo, e.agent)] = free[p].pop(0)
    return out


def _greedy_split(device: Device, tile: Coord, groups: dict[str, list[End]]) -> dict[tuple[str, str], int] | None:
    """Largest chains first, each into the less loaded parity with a channel left."""
    load = {0: 0, 1: 0}
    parity: dict[tuple[str, str], int] = {}
    left = {(d, p): len([c for c in range(device.dma_channels(tile, d)) if c % 2 == p]) for d in groups for p in (0, 1)}
    for e in sorted((e for g in groups.values() for e in g), key=lambda e: (-e.bds, e.direction, e.fifo, e.agent)):
        options = [p for p in (0, 1) if left[(e.direction, p)] > 0]
        if not options:
            return None
        p = min(options, key=lambda q: (load[q], q))
        parity[(e.fifo, e.agent)] = p
        load[p] += e.bds
        left[(e.direction, p)] -= 1
    return _numbered(device, tile, groups, parity)


# -- a link on its own -----------------------------------------------------------------------


@dataclass(frozen=True)
class _LinkEnd:
    fifo: str
    agent: str
    tile: Coord
    direction: str
    bds: int


def check_link_channels(design: Design) -> None:
    """Every link fits a memtile's BD pools on its own, wherever it goes (checked before placement).

    Raises:
        PlanError: naming the link, the BDs its channels need and what to change.
    """
    dev = design.device
    mems = dev.tiles("mem")
    if not mems:
        return
    tile = mems[0]
    pool = bd_pool(dev, tile, 0)[1]
    for ln in design.links:
        agent = f"link:{ln.name}"
        ends = [_LinkEnd(f, agent, tile, "s2mm", end_bds(design, f, agent)) for f in ln.srcs]
        ends += [_LinkEnd(f, agent, tile, "mm2s", end_bds(design, f, agent)) for f in ln.dsts]
        if any(sum(e.direction == d for e in ends) > dev.dma_channels(tile, d) for d in ("s2mm", "mm2s")):
            continue  # the channel check names it once the link is placed
        whole = whole_fifo(ln)
        depth, parts = design.fifo(whole).depth, part_count(ln)
        worst = _fullest_pool(dev, tile, ends, depth, depth)
        if worst <= pool:
            continue
        fit = _deepest_fit(dev, tile, ends, depth, pool)
        advice = f"give {whole!r} depth {fit} or less" if fit else f"split into fewer than {parts} parts"
        raise PlanError(
            f"link {ln.name!r} needs {sum(e.bds for e in ends)} buffer descriptors on its memtile: the channel of its "
            f"fifo {whole!r} cycles through {depth} buffers x {parts} parts = {depth * parts}, each part's channel "
            f"{depth}; a memtile channel draws from {pool} (AIE_FACTS: even channels BDs 0-{pool - 1}, odd "
            f"{pool}-{2 * pool - 1}) and no choice of channels fits them (the fullest pool would need {worst}): "
            f"{advice}"
        )


def check_host_ends(design: Design) -> None:
    """Every host end's BD chain fits a NoC shim on its own, wherever it goes (checked before placement).

    On AIE1 the shim DMAs are described statically: a host end's chain takes one BD per move on its fifo
    (``descriptors.host_end_bds``), so a fifo moved in more pieces than a shim has BDs fits no shim.

    Raises:
        PlanError: naming the fifo, its moves, the shim's BDs and what to change.
    """
    dev = design.device
    shims = [t for t in dev.tiles("shim") if dev.is_noc_shim(t)]
    if not shims:
        return
    have = max(dev.buffer_descriptors(t) for t in shims)
    for f in design.fifos:
        if design.plio_of(f.name):
            continue
        need = host_end_bds(design, f.name)
        if need > have:
            raise PlanError(
                f"fifo {f.name!r}: its {need} host moves need {need} buffer descriptors on one shim ({dev.name}'s shim "
                f"DMAs are static chains, one BD per move), and a shim has {have}: move it in at most {have} "
                f"moves (larger or multi-dimensional patterns)"
            )


def _deepest_fit(dev: Device, tile: Coord, ends: list[_LinkEnd], depth: int, pool: int) -> int:
    """The largest depth below ``depth`` whose fullest pool fits ``pool`` (0: none), by bisection.

    Every end's BDs grow with the depth and a channel choice that fits a depth fits any smaller
    one, so fitting is monotone in the depth: log2(depth) tries, not one per depth.
    """
    lo, hi = 0, depth - 1  # depth lo fits (0 trivially), the answer is in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _fullest_pool(dev, tile, ends, depth, mid) <= pool:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _fullest_pool(dev: Device, tile: Coord, ends: list[_LinkEnd], depth: int, new_depth: int) -> int:
    """The fullest BD pool of a link's channels with its whole fifo ``new_depth`` deep (BDs scale with depth)."""
    scaled = [_LinkEnd(e.fifo, e.agent, e.tile, e.direction, e.bds // depth * new_depth) for e in ends]
    channels = assign_channels(dev, scaled)
    return max(_pool_loads(dev, tile, scaled, channels).values())
