"""AIE1 host moves at the physical level: ``aie.external_buffer`` per tensor, ``aie.shim_dma`` BD chains.

Versal AIE1 devices have no NPU runtime sequence to program shim BDs from the
host; mlir-aie describes the shim DMAs statically over external (DDR)
buffers instead. Each planned shim channel gets a chain with one BD per move
on it, in program order (moves on one fifo complete one after another), each
BD guarded by the channel's lock on the shim tile: the host sets the lock to 1
to let the next move run and sees it return to 0 when that move is done.
The AIE1 shim DMA moves contiguous runs only (its BD has no wrap/stride
fields, devices/aie1.py); other patterns were rejected when the moves were checked.
"""

from __future__ import annotations

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir.device import DeviceModule
from tilelang.backends.mlir.dma_programs import BdSpec, ChannelProgram
from tilelang.backends.mlir.runtime_sequence import Channel, host_moves
from tilelang.backends.mlir.types import memref_type
from tilelang.errors import PlanError


def external_buffers(dm: DeviceModule) -> dict[str, object]:
    """``aie.external_buffer`` for every host tensor the moves touch, by tensor name."""
    used = {d.tensor for d in dm.design.dmas if not d.plio}  # PLIO tensors live on the PL side
    out = {}
    for t in dm.design.params:
        if t.name in used:
            op = aie_ops.create(
                "aie.external_buffer",
                attrs={"sym_name": aie_ops.string(t.name)},
                results=[memref_type(t.shape, t.dtype)],
            )
            out[t.name] = op.result
    return out


def shim_programs(dm: DeviceModule) -> list[ChannelProgram]:
    """One acyclic BD chain per shim channel the host uses, its moves in program order.

    Raises:
        PlanError: a move that is not one contiguous run, or a shim out of locks.
    """
    buffers = external_buffers(dm)
    moves = host_moves(dm.plan, per_channel=True)
    chains: dict[Channel, list[BdSpec]] = {}
    locks: dict[Channel, object] = {}
    lock_ids: dict[tuple[int, int], int] = {}
    for mv in moves:
        tile = mv.channel[0]
        if mv.channel not in locks:
            n = lock_ids.get(tile, 0)
            if n >= dm.plan.device.locks(tile):
                raise PlanError(f"shim {tile} has {dm.plan.device.locks(tile)} locks, its host channels need more")
            lock_ids[tile] = n + 1
            name = dm.names.fresh(f"{mv.fifo}_host_lock")
            attrs = {"lockID": aie_ops.i32(n), "init": aie_ops.i32(0), "sym_name": aie_ops.string(name)}
            locks[mv.channel] = aie_ops.create("aie.lock", [dm.tile(tile)], attrs, [aie_ops.index_type()]).result
        if not mv.walk.linear:
            raise PlanError(f"dma {mv.dma.name!r}: the AIE1 shim DMA moves one contiguous run per BD")
        lock = locks[mv.channel]
        bd = BdSpec(buffers[mv.dma.tensor], mv.walk.offset, mv.walk.numel, (lock, "Acquire", 1), (lock, "Release", 0))
        chains.setdefault(mv.channel, []).append(bd)
    out = []
    for (tile, direction, channel), bds in chains.items():
        what = f"shim {tile} {'MM2S' if direction == 'mm2s' else 'S2MM'} channel {channel} (host moves)"
        out.append(ChannelProgram(tile, direction, channel, tuple(bds), what, cyclic=False))
    return out
