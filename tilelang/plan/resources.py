"""Per-tile resource accounting and the PlanError messages when a tile runs out.

One place answers "how many DMA channels, buffer descriptors, locks and
bytes does this tile need, and who needs them": the greedy placer, the
placement ILP's result check and the driver's final check all call
:func:`check_tiles`, so every infeasible plan is reported the same way.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from tilelang.devices import Device
from tilelang.errors import PlanError
from tilelang.ir.descriptors import bd_pool, host_end_locks
from tilelang.ir.plan import agent_name
from tilelang.ir.verify import HOST
from tilelang.plan.carriage import MM2S, Carriage, DmaEnd
from tilelang.plan.problem import Coord


def fmt_tile(t: Coord) -> str:
    return f"({t[0]},{t[1]})"


def who(e: DmaEnd) -> str:
    """How a message names the user of a DMA end."""
    if e.agent == HOST:
        verb = "host move into" if e.direction == MM2S else "host move out of"
        return f"{verb} {e.fifo}"
    return f"{e.agent.replace(':', ' ')} ({e.fifo})"


@dataclass
class TileUse:
    """What one tile is asked for."""

    ends: dict[str, list[DmaEnd]] = field(default_factory=lambda: defaultdict(list))
    bds: int = 0
    #: BDs per pool, keyed by the pool's (first id, size) (``descriptors.bd_pool``), with who uses them.
    pools: dict[tuple[int, int], list[tuple[DmaEnd, int]]] = field(default_factory=lambda: defaultdict(list))
    locks: int = 0
    lock_users: list[str] = field(default_factory=list)


def tile_usage(device: Device, carriage: Carriage, shared_at: dict[str, Coord]) -> dict[Coord, TileUse]:
    """DMA ends, BDs and locks per tile.

    Args:
        device: the device.
        carriage: the carriage decisions.
        shared_at: the memory chosen for each shared fifo.

    Returns:
        Usage per tile, for tiles with any.
    """
    use: dict[Coord, TileUse] = defaultdict(TileUse)
    for e in carriage.ends:
        u = use[e.tile]
        u.ends[e.direction].append(e)
        u.bds += e.bds
        channel = carriage.channels[(e.fifo, e.agent)]
        u.pools[bd_pool(device, e.tile, channel)].append((e, channel))
        if e.agent == HOST and host_end_locks(device, e.tile):
            u.locks += host_end_locks(device, e.tile)
            u.lock_users.append(f"host end of {e.fifo}")
    for s in carriage.buffer_sets:
        tile = shared_at.get(s.fifo, s.tiles[0]) if s.fifo in carriage.shared else s.tiles[0]
        use[tile].locks += s.locks
        use[tile].lock_users.append(s.label)
    return dict(use)


def check_tiles(device: Device, carriage: Carriage, shared_at: dict[str, Coord]) -> None:
    """Raise PlanError for the first tile (in tile order) short of DMA channels, BDs (per pool) or locks.

    Raises:
        PlanError: naming the tile, the resource, what it has and who needs it.
    """
    for tile, u in sorted(tile_usage(device, carriage, shared_at).items()):
        for direction in ("mm2s", "s2mm"):
            ends = u.ends.get(direction, [])
            have = device.end_channels(tile, direction)
            if len(ends) > have:
                users = ", ".join(who(e) for e in ends)
                kind = "PLIO stream" if device.is_pl_shim(tile) else "DMA"
                raise PlanError(
                    f"tile {fmt_tile(tile)} ({device.tile_kind(tile)}) has {have} {direction.upper()} {kind} channels, "
                    f"{len(ends)} needed: {users}"
                )
        _check_pools(device, tile, u)
        if u.locks > device.locks(tile):
            raise PlanError(
                f"tile {fmt_tile(tile)} has {device.locks(tile)} locks, {u.locks} needed: {', '.join(u.lock_users)}"
            )


def _check_pools(device: Device, tile: Coord, u: TileUse) -> None:
    """Each BD pool of the tile holds the chains of the channels drawing from it."""
    for (first, size), users in sorted(u.pools.items()):
        need = sum(e.bds for e, _ in users)
        if need <= size:
            continue
        listed = ", ".join(f"{who(e)} {e.direction.upper()} ch{ch}: {e.bds}" for e, ch in users)
        if device.tile_kind(tile) != "mem":
            raise PlanError(f"tile {fmt_tile(tile)} has {size} buffer descriptors, {need} needed: {listed}")
        parity = "even" if first == 0 else "odd"
        links = sorted({agent_name(e.agent) for e, _ in users if e.agent.startswith("link:")})
        raise PlanError(
            f"memtile {fmt_tile(tile)} has {size} buffer descriptors for its {parity} DMA channels "
            f"(BDs {first}-{first + size - 1}; AIE_FACTS), {need} needed: {listed}; links needing them: "
            f"{', '.join(links)}. Reduce the depth of their fifos, the parts of a split or join, or the links on this memtile"
        )


def agent_label(agent: str) -> str:
    return "host" if agent == HOST else f"{agent.partition(':')[0]} {agent_name(agent)}"
