"""Lowering rules for constants, loads, slices and stores.

Loads and slices copy nothing (``slicing.py``): a load or slice of a tile in
memory is a view of it (``memref.subview``), read in place, and a slice of an
elementwise expression is the expression over slices of its operands, fused
into its consumer. A store that would overwrite memory such a view still
needs first copies the view (``KernelLowering.protect``), so every load means
the values at the time it was made, as in ``semantics.py``.
"""

from __future__ import annotations

from tilelang.backends.mlir import scalar_rules
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.lowering import KernelLowering, register
from tilelang.backends.mlir.slicing import load_element, region_of, slice_value, subview
from tilelang.backends.mlir.values import Scalar, Value, View, generic, leaves
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import KOp, Param
from tilelang.ir.ops import OpKind


@register(OpKind.CONST)
def _const(lw: KernelLowering, op: KOp) -> Value:
    dt: DType = op.attr("dtype")  # type: ignore[assignment]
    return Scalar(scalar_rules.const(dt, op.attr("value")), dt)  # type: ignore[arg-type]


@register(OpKind.LOAD)
def _load(lw: KernelLowering, op: KOp) -> Value:
    param: Param = op.operands[0]
    base = lw.params[param.name]
    index = op.attr("index")
    if index is None:
        return base
    if all(isinstance(it, int) for it in index):
        return load_element(base, index)  # an SSA copy: no aliasing to track
    return subview(base, index)


@register(OpKind.SLICE)
def _slice(lw: KernelLowering, op: KOp) -> Value:
    return slice_value(lw.operand(op.operands[0]).value, op.attr("index"))  # type: ignore[arg-type]


def destination(lw: KernelLowering, param: str, index: object) -> View:
    """The view a store into ``index`` of ``param`` writes (not for single elements)."""
    base = lw.params[param]
    return base if index is None else subview(base, index)  # type: ignore[arg-type]


@register(OpKind.STORE)
def _store(lw: KernelLowering, op: KOp) -> None:
    from tilelang.backends.mlir.compute_rules import store_in_place

    param: Param = op.operands[0]
    index = op.attr("index")
    base = lw.params[param.name]
    region = region_of(index, base.type.shape)
    if id(op) in lw.into_store:
        store_in_place(lw, op, region)
        return None
    slot = lw.operand(op.operands[1])
    lw.protect(param.name, region, [slot] if isinstance(slot.value, View) else leaves(slot.value))
    value = slot.value
    if index is not None and all(isinstance(it, int) for it in index):
        assert isinstance(value, Scalar)  # the typing rule: a one-element region takes a scalar
        m = mlir()
        at = [m.arith.constant(m.ir.IndexType.get(), int(i)) for i in index]
        m.memref.store(value.value, base.memref, at)
        return None
    dest = destination(lw, param.name, index)
    if isinstance(value, Scalar):
        mlir().linalg.fill(value.value, outs=[dest.memref])
        return None
    generic(value, dest)
    return None
