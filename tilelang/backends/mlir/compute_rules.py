"""Lowering rules for elementwise ops (fused), matmuls and reductions.

Elementwise ops become :class:`~values.Expr` nodes fused into whatever consumes
them. A matmul or reduction whose only use is a store (``c[...] = a @ b``,
``c[...] += a @ b``, ``y[...] = tl.sum(x, axis=1)``) is computed straight
into the store's destination, with no temporary: on an AIE core temporaries
live on the core's small stack.

Accumulation (semantics.py computes float matmuls and sums in f64 and rounds
once): floats accumulate in f32 in loop order, integers in the result dtype
(wrapping, which equals numpy's wrap of the exact sum). ``c += a @ b`` in place
adds the products into ``c`` one by one instead of adding a rounded matmul to
``c``: another f32 summation order, within the same documented tolerance.

A bf16 ``c = a @ b`` or ``c += a @ b`` (the product rounded to bf16 before it
is stored or added) cannot accumulate in ``c`` itself; it is computed a block
of rows at a time into an f32 temporary of at most ``ROUND_CHUNK_BYTES``,
rounded and stored (or added, in f32, and rounded) into those rows of ``c``:
the same values as the whole product in one temporary, on a small stack.
"""

from __future__ import annotations

from tilelang.backends.mlir import scalar_rules
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.lowering import KernelLowering, register
from tilelang.backends.mlir.memory_rules import destination
from tilelang.backends.mlir.slicing import subview
from tilelang.backends.mlir.types import memref_type
from tilelang.backends.mlir.values import Expr, Scalar, Slot, Value, View, generic, leaves, materialize, temporary
from tilelang.ir.dtypes import DType, f32
from tilelang.ir.index import Index, index_shape
from tilelang.ir.kernel import KOp, Param
from tilelang.ir.ops import ELEMENTWISE, REDUCE, OpKind
from tilelang.ir.types import TileType

# -- elementwise (fused) ---------------------------------------------------------------------


def _operand_dtype(x: KOp | Param) -> DType:
    t = x.type if isinstance(x, KOp) else x.value_type
    assert t is not None
    return t.dtype if isinstance(t, TileType) else t


@register(*ELEMENTWISE)
def _elementwise(lw: KernelLowering, op: KOp) -> Value:
    rule = scalar_rules.RULES[op.kind]
    dts = [_operand_dtype(x) for x in op.operands]
    assert op.type is not None
    out, attrs = op.type.dtype, dict(op.attrs)
    slots = [lw.operand(x) for x in op.operands]
    if all(isinstance(s.value, Scalar) for s in slots):
        return Scalar(rule([s.value.value for s in slots], dts, out, attrs), out)

    def element(args: list) -> object:
        return rule(args, dts, out, attrs)

    expr = Expr(element, tuple(slots), op.type)
    # A value whose elements are read twice is computed once into a temporary,
    # not once per consumer; one read per element stays fused into its consumer.
    return expr if lw.read_once(op) else materialize(expr)


# -- matmul and reductions into temporaries ---------------------------------------------------------


def _work_dtype(op: KOp) -> DType:
    """What a matmul or reduction accumulates in: f32 for floats, the result dtype for integers."""
    assert op.type is not None
    dt = op.type.dtype
    return f32 if dt.is_float else dt


@register(OpKind.MATMUL)
def _matmul(lw: KernelLowering, op: KOp) -> Value:
    m = mlir()
    a, b = lw.readable(op.operands[0]), lw.readable(op.operands[1])
    assert op.type is not None
    work = _work_dtype(op)
    out = temporary(TileType(op.type.shape, work))
    m.linalg.fill(scalar_rules.const(work, 0.0 if work.is_float else 0), outs=[out.memref])
    m.linalg.matmul(a.memref, b.memref, outs=[out.memref])
    return _rounded(lw, op, out, op.type.dtype)


def _reduce_into(lw: KernelLowering, op: KOp, out: View) -> None:
    """Reduce ``op``'s operand into ``out`` (initialised here), which has ``op``'s kept dimensions."""
    m = mlir()
    x = lw.operand(op.operands[0]).value
    axes: tuple[int, ...] = op.attr("axes")  # type: ignore[assignment]
    assert op.type is not None and not isinstance(x, Scalar)
    dt = op.type.dtype
    space = x.type.shape
    kept = tuple(d for d in range(len(space)) if d not in axes)
    m.linalg.fill(scalar_rules.reduce_init(op.kind, dt), outs=[out.memref])

    def combine(acc: object, elem: object) -> object:
        return scalar_rules.reduce_step(op.kind, acc, elem, dt)

    generic(x, out, reduce_space=space, out_dims=kept, combine=combine)


@register(*REDUCE)
def _reduce(lw: KernelLowering, op: KOp) -> Value:
    m = mlir()
    x = lw.operand(op.operands[0]).value
    assert op.type is not None
    if isinstance(x, Scalar):
        return x  # a rank-0 reduction over no axes is the value itself
    dt, work = op.type.dtype, _work_dtype(op)
    t = TileType(op.type.shape, work)
    if t.shape:
        out = temporary(t)
    else:  # over every axis: a rank-0 accumulator, read back as a scalar
        out = View(m.memref.alloca(memref_type((), work), [], []), t, ())
    _reduce_into(lw, op, out)
    if not t.shape:
        loaded = m.memref.load(out.memref, [])
        return Scalar(scalar_rules.narrow(loaded, dt) if work != dt else loaded, dt)
    return _rounded(lw, op, out, dt)


def _rounded(lw: KernelLowering, op: KOp, acc: View, dt: DType) -> Value:
    """The accumulator rounded to the op's dtype (fused into the consumer when it differs)."""
    if acc.type.dtype == dt:
        return acc

    def element(args: list) -> object:
        return scalar_rules.narrow(args[0], dt)

    expr = Expr(element, (Slot(acc),), TileType(acc.type.shape, dt))
    return expr if lw.read_once(op) else materialize(expr)


# -- computing straight into a store's destination ------------------------------------------------------

#: Largest f32 temporary a rounded matmul store takes per block of rows (the core stack is 1 KiB).
ROUND_CHUNK_BYTES = 512


def plan_stores_in_place(lw: KernelLowering) -> None:
    """Find stores whose value a matmul or reduction can compute into the destination directly.

    The value must be used by that store only, accumulate in the destination's
    dtype (no rounding step), fill the region exactly (no broadcast, no
    dropped dimension), and no other store may come between the ops involved.
    For ``c[...] += a @ b`` the other addend must be a load of exactly the
    region stored.
    """
    body = lw.kernel.body
    stores = [i for i, op in enumerate(body) if op.kind is OpKind.STORE]
    for i in stores:
        s = body[i]
        param, value = s.operands
        index = s.attr("index")
        if not isinstance(value, KOp) or lw.uses.get(id(value), 0) != 1:
            continue
        if index is not None and any(isinstance(it, int) for it in index):
            continue
        shape = param.type.shape if index is None else index_shape(index)
        involved = _in_place_ops(lw, value, param, index, shape)
        if not involved:
            continue
        first = min(lw.position[id(x)] for x in involved)
        if any(first < j < i for j in stores):
            continue
        lw.into_store[id(s)] = value
        lw.deferred |= {id(x) for x in involved if x.kind is not OpKind.LOAD}


def _accumulates_exactly(op: KOp, param: Param) -> bool:
    assert op.type is not None
    return op.type.dtype == param.type.dtype and _work_dtype(op) == op.type.dtype


def _in_place_ops(
    lw: KernelLowering, value: KOp, param: Param, index: Index | None, shape: tuple[int, ...]
) -> list[KOp]:
    """The ops a store of ``value`` would compute in place, or [] when it cannot.

    In place means accumulating in the destination (its dtype is the work dtype), or, for a 2-d
    matmul whose result has the destination's dtype but rounds (bf16), a block of rows at a time
    through a small f32 temporary (:func:`_rounded_rows`).
    """
    if value.type is None or value.type.shape != shape or value.type.dtype != param.type.dtype:
        return []
    if value.kind is OpKind.MATMUL:
        return [value] if _accumulates_exactly(value, param) or len(shape) == 2 else []
    if value.kind in REDUCE and shape:
        return [value] if _accumulates_exactly(value, param) else []
    if value.kind is not OpKind.ADD:
        return []
    for mm, other in (value.operands, value.operands[::-1]):
        if (
            isinstance(mm, KOp)
            and mm.kind is OpKind.MATMUL
            and lw.uses.get(id(mm), 0) == 1
            and isinstance(other, KOp)
            and other.kind is OpKind.LOAD
            and other.operands[0] is param
            and other.attr("index") == index
            and mm.type is not None
            and mm.type.dtype == param.type.dtype
            and (_accumulates_exactly(mm, param) or len(shape) == 2)
        ):
            return [value, mm, other]
    return []


def store_in_place(lw: KernelLowering, store: KOp, region: Index) -> None:
    """Emit a store planned by :func:`plan_stores_in_place`."""
    m = mlir()
    param: Param = store.operands[0]
    value = lw.into_store[id(store)]
    dest = destination(lw, param.name, store.attr("index"))
    if value.kind in REDUCE:
        slot = lw.operand(value.operands[0])
        reads = [slot] if isinstance(slot.value, View) else leaves(slot.value)
        lw.protect(param.name, region, reads, elementwise=False)
        _reduce_into(lw, value, dest)
        return
    mm = value if value.kind is OpKind.MATMUL else next(x for x in value.operands if x.kind is OpKind.MATMUL)
    a, b = lw.readable(mm.operands[0]), lw.readable(mm.operands[1])
    lw.protect(param.name, region, [lw.operand(mm.operands[0]), lw.operand(mm.operands[1])], elementwise=False)
    a, b = lw.operand(mm.operands[0]).value, lw.operand(mm.operands[1]).value
    if _work_dtype(mm) != param.type.dtype:
        _rounded_rows(a, b, dest, accumulate=value.kind is not OpKind.MATMUL)
        return
    if value.kind is OpKind.MATMUL:
        work = _work_dtype(mm)
        m.linalg.fill(scalar_rules.const(work, 0.0 if work.is_float else 0), outs=[dest.memref])
    m.linalg.matmul(a.memref, b.memref, outs=[dest.memref])


def _rounded_rows(a: View, b: View, dest: View, accumulate: bool) -> None:
    """``dest = round(a @ b)`` or ``dest = round(dest + round(a @ b))``, a block of rows at a time.

    Each block's product accumulates in one f32 temporary (f32 zero, ``linalg.matmul``), is rounded
    to ``dest``'s dtype and stored, or widened again, added to the block of ``dest`` in f32 and
    rounded (the IR's bf16 add): per element the same as the whole product at once.
    """
    m = mlir()
    rows, cols = dest.type.shape
    k = a.type.shape[1]
    dt, work = dest.type.dtype, f32
    fits = [r for r in range(1, rows + 1) if rows % r == 0 and r * cols * work.bytes <= ROUND_CHUNK_BYTES]
    r = max(fits, default=1)
    tmp = temporary(TileType((r, cols), work))

    def stored(args: list) -> object:
        return scalar_rules.narrow(args[0], dt)

    def added(args: list) -> object:
        product = scalar_rules.narrow(args[1], dt)
        return scalar_rules.binary(OpKind.ADD, args[0], product, dt)

    for i in range(0, rows, r):
        block = ((i, i + r, 1), (0, cols, 1))
        a_i = subview(a, ((i, i + r, 1), (0, k, 1)))
        c_i = subview(dest, block)
        m.linalg.fill(scalar_rules.const(work, 0.0), outs=[tmp.memref])
        m.linalg.matmul(a_i.memref, b.memref, outs=[tmp.memref])
        if accumulate:
            expr = Expr(added, (Slot(c_i), Slot(tmp)), TileType((r, cols), dt))
        else:
            expr = Expr(stored, (Slot(tmp),), TileType((r, cols), dt))
        generic(expr, c_i)
