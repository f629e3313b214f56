"""The plan's routes as stream-switch settings: ``aie.switchbox`` / ``aie.shim_mux`` with ``aie.connect``.

A route is a tree of neighbour links from its source's MM2S channel to each
destination's S2MM channel. The plan chooses the links; the emitter chooses
which channel of each link a flow takes (channel ``k`` of a master port feeds
channel ``k`` of the neighbour's facing slave port). Channels matter where a
switch keeps the index (the device's switch rules, e.g. an AIE-ML memtile
connects South k only to North k): hops joined that way take one index. A tile's switchbox then connects, for every flow through it, the
slave port the flow arrives on to each master port it leaves on (several for a
broadcast). A shim DMA reaches its switchbox through the shim mux on a fixed
port (enums.SHIM_MUX_PORT).
"""

from __future__ import annotations

from collections import deque

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.device import DeviceModule
from tilelang.backends.mlir.enums import SHIM_MUX_PORT, WIRE_BUNDLE
from tilelang.errors import PlanError
from tilelang.ir.plan import FifoEnd, Route

Coord = tuple[int, int]
Port = tuple[str, int]  # (bundle name, channel)
Connect = tuple[Port, Port]  # (slave port in, master port out)

#: (dc, dr) of a link -> (master bundle at its source, slave bundle at its destination).
LINK_BUNDLES = {
    (0, 1): ("North", "South"),
    (0, -1): ("South", "North"),
    (1, 0): ("East", "West"),
    (-1, 0): ("West", "East"),
}


def route_tiles(dm: DeviceModule) -> set[Coord]:
    """Every tile a route passes through."""
    out: set[Coord] = set()
    for r in dm.plan.routes.values():
        out.add(r.source)
        out.update(r.dests)
        for a, b in r.links:
            out.update((a, b))
    return out


def _ordered_links(route: Route) -> list[tuple[Coord, Coord]]:
    """The route's links breadth first from its source (a fixed order)."""
    children: dict[Coord, list[Coord]] = {}
    for a, b in route.links:
        children.setdefault(a, []).append(b)
    out, queue = [], deque([route.source])
    while queue:
        t = queue.popleft()
        for c in sorted(children.get(t, [])):
            out.append((t, c))
            queue.append(c)
    return out


def _end_at(dm: DeviceModule, fifo: str, tile: Coord) -> FifoEnd:
    fp = dm.plan.fifos[fifo]
    for e in fp.consumers:
        if e.tile == tile:
            return e
    raise PlanError(f"route {fifo!r} reaches {tile}, where the fifo has no consumer")


def _dma_port(dm: DeviceModule, tile: Coord, direction: str, channel: int) -> Port:
    """The switchbox port a DMA channel meets: the DMA bundle, or on a shim the mux's port."""
    if dm.plan.device.tile_kind(tile) == "shim":
        return ("South", SHIM_MUX_PORT[(direction, channel)])
    return ("DMA", channel)


Hop = tuple[Coord, Coord]


def _hops(name: str, route: Route) -> list[Hop]:
    """The route's links from its source outward, each continuing a path already reached."""
    reached = {route.source}
    hops = _ordered_links(route)
    for a, b in hops:
        if (b[0] - a[0], b[1] - a[1]) not in LINK_BUNDLES or a not in reached:
            raise PlanError(f"route {name!r}: link {a}->{b} does not continue a path from {route.source}")
        reached.add(b)
    return hops


def _channel_groups(dm: DeviceModule, hops: list[Hop]) -> list[list[Hop]]:
    """The route's hops in groups that must use one channel index.

    Two consecutive hops a->b->c share a group when b's switch keeps the channel from the
    arriving bundle to the leaving one (device rule ``"same"``, e.g. an AIE-ML memtile's
    North/South pass-through).
    """
    device = dm.plan.device
    group_of: dict[Hop, list[Hop]] = {}
    groups: list[list[Hop]] = []
    arriving = {b: (a, b) for a, b in hops}
    for a, b in hops:
        prev = arriving.get(a)
        in_bundle = LINK_BUNDLES[(prev[1][0] - prev[0][0], prev[1][1] - prev[0][1])][1] if prev else None
        out_bundle = LINK_BUNDLES[(b[0] - a[0], b[1] - a[1])][0]
        if prev is not None and device.switch_rule(a, in_bundle, out_bundle) == "same":
            group = group_of[prev]
        else:
            group = []
            groups.append(group)
        group.append((a, b))
        group_of[(a, b)] = group
    return groups


def _assign_channels(dm: DeviceModule) -> dict[tuple[str, Hop], int]:
    """The channel index each route takes on each of its links.

    Groups of hops that must keep one index are placed first (longest first, then by route
    name), each at the lowest index free on all its links; single hops then fill in. The
    switch rules that force a shared index (memtile pass-through) join links of equal
    capacity that only pass-through flows share, so a routing within link capacities
    always gets an assignment this way.

    Raises:
        PlanError: a link carries more flows than it has channels.
    """
    device = dm.plan.device
    pending: list[tuple[int, str, int, list[Hop]]] = []
    for name in sorted(dm.plan.routes):
        for i, group in enumerate(_channel_groups(dm, _hops(name, dm.plan.routes[name]))):
            pending.append((-len(group), name, i, group))
    taken: dict[Hop, set[int]] = {}
    chosen: dict[tuple[str, Hop], int] = {}
    for _, name, _, group in sorted(pending, key=lambda p: p[:3]):
        cap = min(device.link_capacity(a, b) for a, b in group)
        k = next((k for k in range(cap) if all(k not in taken.get(h, ()) for h in group)), None)
        if k is None:
            a, b = group[0]
            raise PlanError(
                f"route {name!r}: link {a}->{b} has {device.link_capacity(a, b)} channels, all taken "
                f"(by {len(taken.get((a, b), ()))} flows)"
            )
        for h in group:
            taken.setdefault(h, set()).add(k)
            chosen[(name, h)] = k
    return chosen


def connections(dm: DeviceModule) -> tuple[dict[Coord, list[Connect]], dict[Coord, list[Connect]]]:
    """(switchbox connects, shim mux connects) per tile for every route of the plan.

    Every connection is checked against the device's switch rules (``Device.legal_connection``,
    mlir-aie's ``isLegalTileConnection``).

    Raises:
        PlanError: a route is not a tree from its source, misses a consumer, a link carries
            more flows than it has channels, or a connection is not one the switch can make.
    """
    device = dm.plan.device
    channel = _assign_channels(dm)
    boxes: dict[Coord, list[Connect]] = {}
    muxes: dict[Coord, list[Connect]] = {}
    for name in sorted(dm.plan.routes):
        route = dm.plan.routes[name]
        fp = dm.plan.fifos[name]
        src_ch = fp.producer.channel
        if src_ch is None:
            raise PlanError(f"route {name!r}: its producer has no DMA channel")
        arrive: dict[Coord, Port] = {route.source: _dma_port(dm, route.source, "mm2s", src_ch)}
        if device.tile_kind(route.source) == "shim":
            muxes.setdefault(route.source, []).append((("DMA", src_ch), ("North", SHIM_MUX_PORT[("mm2s", src_ch)])))
        for a, b in _hops(name, route):
            k = channel[(name, (a, b))]
            out_bundle, in_bundle = LINK_BUNDLES[(b[0] - a[0], b[1] - a[1])]
            boxes.setdefault(a, []).append((arrive[a], (out_bundle, k)))
            arrive[b] = (in_bundle, k)
        for d in route.dests:
            if d not in arrive:
                raise PlanError(f"route {name!r} does not reach its destination {d}")
            end = _end_at(dm, name, d)
            if end.channel is None:
                raise PlanError(f"route {name!r}: the consumer at {d} has no DMA channel")
            boxes.setdefault(d, []).append((arrive[d], _dma_port(dm, d, "s2mm", end.channel)))
            if device.tile_kind(d) == "shim":
                muxes.setdefault(d, []).append((("North", SHIM_MUX_PORT[("s2mm", end.channel)]), ("DMA", end.channel)))
    for tile, conns in sorted(boxes.items()):
        for src, dst in conns:
            if not device.legal_connection(tile, src, dst):
                raise PlanError(
                    f"tile {tile} ({device.tile_kind(tile)}): its stream switch cannot connect "
                    f"{src[0]}:{src[1]} to {dst[0]}:{dst[1]}"
                )
    return boxes, muxes


def emit_switchboxes(dm: DeviceModule) -> None:
    """``aie.switchbox`` and ``aie.shim_mux`` ops with the plan's connections."""
    boxes, muxes = connections(dm)
    for tile in sorted(boxes):
        _box("aie.switchbox", dm.tile(tile), boxes[tile])
    for tile in sorted(muxes):
        _box("aie.shim_mux", dm.tile(tile), muxes[tile])


def _box(kind: str, tile: object, conns: list[Connect]) -> None:
    m = mlir()
    op = aie_ops.create(kind, [tile], results=[aie_ops.index_type()], regions=1)
    block = op.regions[0].blocks.append()
    with m.ir.InsertionPoint(block):
        for (sb, sc), (db, dc) in conns:
            attrs = {
                "source_bundle": aie_ops.i32(WIRE_BUNDLE[sb]),
                "source_channel": aie_ops.i32(sc),
                "dest_bundle": aie_ops.i32(WIRE_BUNDLE[db]),
                "dest_channel": aie_ops.i32(dc),
            }
            aie_ops.create("aie.connect", attrs=attrs)
        aie_ops.end()
