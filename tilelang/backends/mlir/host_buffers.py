"""AIE1 host moves at the objectfifo level: ``aie.external_buffer`` registered to each fifo's shim end.

Versal AIE1 devices (xcvc1902) have no NPU runtime sequence (the ``aiex.npu``
ops exist for npu devices only). mlir-aie expresses a host (DDR) end of an
objectfifo on them with ``aie.external_buffer`` ops registered to the fifo's
shim tile by ``aie.objectfifo.register_external_buffers`` (AIEOps.td,
``AIE_ObjectFifoRegisterExternalBuffersOp``: attribute ``objFifo_name``,
operands the shim tile then the buffers). Its objectfifo lowering
(test/objectFifo-stateful-transform/register_external_buffers_test.mlir)
gives the shim channel one BD per registered buffer, in registration order,
each moving the whole buffer contiguously and guarded by a shim lock of its
own the host sets to 1 to start the move and sees return to 0 when it is
done; the chain is cyclic.

So each host move on a fifo is one registered buffer, in program order (moves
on one fifo complete one after another): the tensor's own external buffer
(symbol the tensor's name, its memref type) when the move is the whole tensor,
else a flat external buffer over the contiguous run it moves (symbol
``<tensor>_at_<offset>``, ``memref<numel x dtype>``), which the host maps at
the tensor's address plus the offset. Strided or re-ordering moves have no
form here (``level="physical"`` has them only contiguous too on AIE1).
Moves on different fifos are concurrent; their relative order is the host
program's, which drives the shim locks: it cannot be said in the module.
"""

from __future__ import annotations

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir.device import DeviceModule
from tilelang.backends.mlir.runtime_sequence import HostMove, host_moves
from tilelang.backends.mlir.types import memref_type
from tilelang.errors import PlanError


def register_host_buffers(dm: DeviceModule) -> None:
    """Emit the external buffers and one ``register_external_buffers`` per fifo with a host end.

    Args:
        dm: the device module, its insertion point in the device body.

    Raises:
        PlanError: a move that is not the whole tensor in order (the lowering's
            BD moves the whole registered buffer), or a shim tile with more
            moves than locks or buffer descriptors.
    """
    per_fifo: dict[str, list[HostMove]] = {}
    for mv in host_moves(dm.plan):
        per_fifo.setdefault(mv.fifo, []).append(mv)
    _check_shim_resources(dm, per_fifo)
    buffers: dict[tuple[str, int, int], object] = {}
    for moves in per_fifo.values():
        for mv in moves:
            key = _run(dm, mv)
            if key not in buffers:
                buffers[key] = _external_buffer(dm, *key)
    for fifo, moves in per_fifo.items():
        tile = moves[0].channel[0]
        operands = [dm.tile(tile)] + [buffers[_run(dm, mv)] for mv in moves]
        attrs = {"objFifo_name": aie_ops.symbol(fifo)}
        aie_ops.create("aie.objectfifo.register_external_buffers", operands, attrs)


def _run(dm: DeviceModule, mv: HostMove) -> tuple[str, int, int]:
    """(tensor, offset, elements) of the contiguous run a move walks.

    Raises:
        PlanError: the move is not one contiguous run in order (the lowered
            BD moves its registered buffer whole, in order).
    """
    if not mv.walk.linear:
        raise PlanError(
            f"dma {mv.dma.name!r} (fifo {mv.fifo!r}) walks tensor {mv.dma.tensor!r} with strides; on AIE1 "
            "a host move is one contiguous run (the shim BD has no wrap/stride fields)"
        )
    return mv.dma.tensor, mv.walk.offset, mv.walk.numel


def _external_buffer(dm: DeviceModule, tensor: str, offset: int, numel: int) -> object:
    """``aie.external_buffer`` over a run of a tensor: the tensor itself when whole, else a flat part."""
    t = dm.design.tensors[tensor]
    if offset == 0 and numel == t.type.numel:
        name, typ = tensor, memref_type(t.shape, t.dtype)
    else:
        name, typ = dm.names.fresh(f"{tensor}_at_{offset}"), memref_type((numel,), t.dtype)
    op = aie_ops.create("aie.external_buffer", attrs={"sym_name": aie_ops.string(name)}, results=[typ])
    return op.result


def _check_shim_resources(dm: DeviceModule, per_fifo: dict[str, list[HostMove]]) -> None:
    """Each registered buffer takes a shim BD and a shim lock (register_external_buffers_test.mlir)."""
    per_tile: dict[tuple[int, int], int] = {}
    for moves in per_fifo.values():
        tile = moves[0].channel[0]
        per_tile[tile] = per_tile.get(tile, 0) + len(moves)
    device = dm.plan.device
    for tile, n in per_tile.items():
        limit = min(device.locks(tile), device.buffer_descriptors(tile))
        if n > limit:
            raise PlanError(
                f"shim {tile}: {n} host moves need {n} locks and BDs at the objectfifo level, it has {limit}; "
                "use level='physical'"
            )
