"""The physical level: the plan's own buffers, locks, DMA programs and routes, explicit.

What mlir-aie's objectfifo, BD-id, pathfinder and buffer-address passes would
decide is given here from the Plan instead: ``aie.buffer`` with the planned
address and bank, ``aie.lock``, ``aie.mem``/``aie.memtile_dma`` BD chains on
the planned channels, switchbox connections along the planned links, cores
synchronising on those locks. The module has the shape those passes produce
(reference/vector_scalar_mul.physical.mlir).

Host moves: on NPUs, ``aie.shim_dma_allocation`` names each planned shim
channel and the runtime sequence drives it. On AIE1 (xcvc1902), whose host
runtime has no runtime sequence (``aiex.npu`` operations are for NPU devices),
each host tensor is an ``aie.external_buffer`` and the planned shim channels
run ``aie.shim_dma`` BD chains over it (host_shim.py), their locks the host's
handshake; the module has no runtime sequence and no shim allocations.
"""

from __future__ import annotations

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir.cascade import emit_cascade_flows
from tilelang.backends.mlir.device import DeviceModule, emit_core, emit_kernels, emit_tiles, plan_tiles
from tilelang.backends.mlir.dma_programs import BdIds, channel_programs, emit_dma_programs
from tilelang.backends.mlir.enums import DMA_CHANNEL_DIR
from tilelang.backends.mlir.physical_sync import PhysicalSync
from tilelang.backends.mlir.resources import Resources
from tilelang.backends.mlir.runtime_sequence import Channel, HostMove, emit_runtime_sequence, host_moves
from tilelang.backends.mlir.switchboxes import emit_switchboxes, route_tiles


def build_physical_level(dm: DeviceModule) -> None:
    """Fill the device's body at the current insertion point.

    Raises:
        PlanError: the plan needs more locks or BDs than a tile has, or a BD field overflows.
    """
    plan, design = dm.plan, dm.design
    emit_tiles(dm, plan_tiles(plan) | route_tiles(dm))
    emit_cascade_flows(dm)
    res = Resources(dm)
    res.build()
    emit_kernels(dm)
    for core in design.cores:
        emit_core(dm, core, PhysicalSync(res, core.name), addresses=True)
    ids = BdIds(dm)
    programs = channel_programs(dm, res)
    static_shims = not plan.device.host_sequence
    if static_shims:
        from tilelang.backends.mlir.host_shim import shim_programs

        programs += shim_programs(dm)
    emit_dma_programs(dm, programs, ids)
    emit_switchboxes(dm)
    if not static_shims:
        allocs = _shim_allocations(dm, host_moves(plan, per_channel=True))
        emit_runtime_sequence(plan, lambda mv: allocs[mv.channel], per_channel=True)
    aie_ops.end()


def _shim_allocations(dm: DeviceModule, moves: list[HostMove]) -> dict[Channel, str]:
    """``aie.shim_dma_allocation`` per planned shim channel the host uses; its symbol by channel."""
    out: dict[Channel, str] = {}
    for mv in moves:
        if mv.channel in out:
            continue
        tile, direction, channel = mv.channel
        name = dm.names.fresh(f"{mv.fifo}_shim_alloc")
        attrs = {
            "sym_name": aie_ops.string(name),
            "channel_dir": aie_ops.i32(DMA_CHANNEL_DIR[direction]),
            "channel_index": aie_ops.i64(channel),
            "plio": aie_ops.boolean(False),
        }
        aie_ops.create("aie.shim_dma_allocation", [dm.tile(tile)], attrs)
        out[mv.channel] = name
    return out
