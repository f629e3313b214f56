"""The host's moves: ``aie.runtime_sequence`` with ``aiex.npu.dma_memcpy_nd`` and ``aiex.npu.dma_wait``.

One ``dma_memcpy_nd`` per transfer, its tensor walk as 4-entry static
offsets/sizes/strides (outermost first; the outermost entry is the shim BD's
iteration/repeat). Which transfers there are, their order, their BD ids and
where the sequence waits are decided once, in ``tilelang/ir/sequence.py``
(the simulator runs the same commands); this module writes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.bd import Walk, fit_walk, walk_of
from tilelang.backends.mlir.types import memref_type
from tilelang.errors import PlanError
from tilelang.ir.design import Dma
from tilelang.ir.plan import Plan
from tilelang.ir.sequence import Channel, Transfer, Wait, host_sequence, host_transfers


@dataclass(frozen=True)
class HostMove:
    """One ``dma_memcpy_nd``: a transfer with its walk as the shim BD holds it."""

    transfer: Transfer
    walk: Walk

    @property
    def dma(self) -> Dma:
        return self.transfer.dma

    @property
    def fifo(self) -> str:
        return self.transfer.fifo

    @property
    def channel(self) -> Channel:
        return self.transfer.channel


def host_moves(plan: Plan, per_channel: bool = False) -> list[HostMove]:
    """Every transfer of the runtime sequence (``ir.sequence.host_transfers``), in program order,
    with its BD walk checked.

    Each walk is as the shim BD holds it (``bd.fit_walk``: a dimension longer
    than the wrap field split in two where the BD has a dimension to spare).

    Raises:
        PlanError: a walk does not fit the shim DMA's BD fields.
    """
    return [_fit(plan, t) for t in host_transfers(plan, per_channel)]


def _fit(plan: Plan, t: Transfer) -> HostMove:
    d, tile = t.dma, t.channel[0]
    what = f"dma {d.name!r} ({'to' if d.to_device else 'from'} fifo {t.fifo!r}) on shim {tile}"
    walk = fit_walk(walk_of(d.pattern), plan.design.tensors[d.tensor].dtype.bytes, plan.device.bd_field_bits(tile),
                    plan.device.dma_dims(tile), what, iteration=True)
    if len(walk.dims) > 4:
        raise PlanError(f"{what}: dma_memcpy_nd takes at most 4 dimensions, the pattern needs {len(walk.dims)}")
    return HostMove(t, walk)


def static_fields(walk: Walk) -> tuple[list[int], list[int], list[int]]:
    """4-entry offsets, sizes and strides (outermost first) of a walk.

    A repeat (an outermost stride-0 dimension) goes to the first entry, the iteration
    dimension, the only one where mlir-aie accepts stride 0 (``devices.dma_rules``); unit
    dimensions pad the entries between.
    """
    dims = list(walk.dims)
    while len(dims) > 1 and dims[0][0] == 1:
        dims.pop(0)
    repeat = [dims.pop(0)] if len(dims) > 1 and dims[0][1] == 0 else []
    while len(dims) + len(repeat) < 4:
        dims.insert(0, (1, 0))
    dims = repeat + dims
    sizes = [s for s, _ in dims]
    strides = [t for _, t in dims]
    return [0, 0, 0, walk.offset], sizes, strides


def emit_runtime_sequence(plan: Plan, metadata: Callable[[HostMove], str], per_channel: bool = False) -> object:
    """Build ``aie.runtime_sequence @sequence`` at the current insertion point.

    Args:
        plan: the plan.
        metadata: the symbol a move's ``dma_memcpy_nd`` and ``dma_wait`` name
            (the objectfifo, or the shim DMA allocation).
        per_channel: see :func:`host_moves`.

    Returns:
        The operation.

    Raises:
        PlanError: a move's walk does not fit the shim's BD fields.
    """
    m = mlir()
    design = plan.design
    seq = host_sequence(plan, per_channel)
    moves = [_fit(plan, t) for t in seq.transfers]
    arg_types = [memref_type(t.shape, t.dtype) for t in design.params]
    op = aie_ops.create("aie.runtime_sequence", attrs={"sym_name": aie_ops.string("sequence")}, regions=1)
    block = op.regions[0].blocks.append(*arg_types)
    args = {t.name: block.arguments[i] for i, t in enumerate(design.params)}
    with m.ir.InsertionPoint(block):
        for c in seq.commands:
            mv = moves[c.transfer.order]
            if isinstance(c, Wait):
                aie_ops.create("aiex.npu.dma_wait", attrs={"symbol": aie_ops.symbol(metadata(mv))})
            else:
                _memcpy(mv, args[mv.dma.tensor], c.bd, c.token, metadata(mv))
    return op


def _memcpy(mv: HostMove, tensor: object, bd_id: int, token: bool, symbol: str) -> object:
    offsets, sizes, strides = static_fields(mv.walk)
    attrs = {
        "id": aie_ops.i64(bd_id),
        "metadata": aie_ops.symbol(symbol),
        "operandSegmentSizes": aie_ops.dense_i32([1, 0, 0, 0]),
        "static_offsets": aie_ops.dense_i64(offsets),
        "static_sizes": aie_ops.dense_i64(sizes),
        "static_strides": aie_ops.dense_i64(strides),
    }
    if token:
        attrs["issue_token"] = aie_ops.boolean(True)
    return aie_ops.create("aiex.npu.dma_memcpy_nd", [tensor], attrs)
