"""The plan's routes as stream-switch settings: ``aie.switchbox`` / ``aie.shim_mux`` with ``aie.connect``.

A route is a tree of neighbour links from its source's MM2S channel to each
destination's S2MM channel. The plan chooses the links; which channel of each
link a flow takes follows the device's switch rules
(``tilelang.ir.stream_channels``). A tile's switchbox then connects, for every flow through it, the
slave port the flow arrives on to each master port it leaves on (several for a
broadcast). A shim DMA reaches its switchbox through the shim mux on a fixed
port (enums.SHIM_MUX_PORT).
"""

from __future__ import annotations

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.device import DeviceModule
from tilelang.backends.mlir.enums import SHIM_MUX_PORT, WIRE_BUNDLE
from tilelang.devices.layout import LINK_BUNDLES
from tilelang.errors import PlanError
from tilelang.ir.plan import FifoEnd
from tilelang.ir.stream_channels import assign_channels, route_hops

Coord = tuple[int, int]
Port = tuple[str, int]  # (bundle name, channel)
Connect = tuple[Port, Port]  # (slave port in, master port out)


def route_tiles(dm: DeviceModule) -> set[Coord]:
    """Every tile a route passes through."""
    out: set[Coord] = set()
    for r in dm.plan.routes.values():
        out.add(r.source)
        out.update(r.dests)
        for a, b in r.links:
            out.update((a, b))
    return out


def _end_at(dm: DeviceModule, fifo: str, tile: Coord) -> FifoEnd:
    fp = dm.plan.fifos[fifo]
    for e in fp.consumers:
        if e.tile == tile:
            return e
    raise PlanError(f"route {fifo!r} reaches {tile}, where the fifo has no consumer")


def _dma_port(dm: DeviceModule, tile: Coord, direction: str, channel: int) -> Port:
    """The switchbox port a DMA channel meets: the DMA bundle, or on a shim the mux's port; on a PL shim
    a PLIO stream's channel is the South port of that number (the PL side of the switch)."""
    if dm.plan.device.is_pl_shim(tile):
        return ("South", channel)
    if dm.plan.device.tile_kind(tile) == "shim":
        return ("South", SHIM_MUX_PORT[(direction, channel)])
    return ("DMA", channel)


def connections(dm: DeviceModule) -> tuple[dict[Coord, list[Connect]], dict[Coord, list[Connect]]]:
    """(switchbox connects, shim mux connects) per tile for every route of the plan.

    Every connection is checked against the device's switch rules (``Device.legal_connection``,
    mlir-aie's ``isLegalTileConnection``).

    Raises:
        PlanError: a route is not a tree from its source, misses a consumer, a link carries
            more flows than it has channels, or a connection is not one the switch can make.
    """
    device = dm.plan.device
    channel = assign_channels(dm.plan.device, dm.plan.routes)
    boxes: dict[Coord, list[Connect]] = {}
    muxes: dict[Coord, list[Connect]] = {}
    for name in sorted(dm.plan.routes):
        route = dm.plan.routes[name]
        fp = dm.plan.fifos[name]
        src_ch = fp.producer.channel
        if src_ch is None:
            raise PlanError(f"route {name!r}: its producer has no DMA channel")
        arrive: dict[Coord, Port] = {route.source: _dma_port(dm, route.source, "mm2s", src_ch)}
        if device.is_pl_shim(route.source):
            # mlir-aie's router passes a PL stream through the shim mux on its own port number (AIE1). On
            # AIE-ML the mux has no PL setting: aie-translate configures a mux connect with
            # XAie_EnableShimDmaToAieStrmPort, which refuses a PLIO port ("Invalid port number"), and the
            # switch's South port takes the PL stream as it is.
            if device.family == "aie1":
                muxes.setdefault(route.source, []).append((("South", src_ch), ("North", src_ch)))
        elif device.tile_kind(route.source) == "shim":
            muxes.setdefault(route.source, []).append((("DMA", src_ch), ("North", SHIM_MUX_PORT[("mm2s", src_ch)])))
        for a, b in route_hops(name, route):
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
            if device.tile_kind(d) == "shim" and not device.is_pl_shim(d):
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
