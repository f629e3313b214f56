"""Kernel IR -> one ``func.func`` in upstream dialects (linalg, arith, math, memref).

The lowering is a table of rules keyed by op kind (as JAX Pallas'
``register_lowering_rule``): ``RULES[kind](lowering, op) -> value``. Elementwise
kinds share one rule that builds a fused :class:`~values.Expr` from the scalar
rules in ``scalar_rules.py``; memory, contraction and reduction kinds have
their own. Tile parameters are ``memref``s with the identity layout; scalar
parameters are plain values. The function returns nothing and writes its
results into its tile parameters, as the kernel does.

Where MLIR cannot match ``semantics.py`` bit for bit (documented in
docs/mlir_backend.md): float matmuls and sums accumulate in f32 in loop order
(numpy sums in f64 and rounds once), and ``math.exp`` is the host libm's
``expf``; results agree within docs/ir.md's tolerance (1e-5 relative for f32,
1e-2 for bf16). Everything else, integers included, is exact.
"""

from __future__ import annotations

from collections.abc import Callable

from tilelang.backends.mlir import scalar_rules
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.types import contiguous_strides, memref_type, scalar_type, tile_memref_type
from tilelang.backends.mlir.values import (
    UNKNOWN,
    Expr,
    Scalar,
    Slot,
    Value,
    View,
    generic,
    leaves,
    load_element,
    materialize,
    subview,
    temporary,
)
from tilelang.errors import KernelError
from tilelang.ir.dtypes import DType, f32
from tilelang.ir.index import Index
from tilelang.ir.kernel import Kernel, KOp, Param
from tilelang.ir.ops import ELEMENTWISE, REDUCE, OpKind
from tilelang.ir.types import TileType

Rule = Callable[["KernelLowering", KOp], Value | None]
RULES: dict[OpKind, Rule] = {}


def register(*kinds: OpKind) -> Callable[[Rule], Rule]:
    """Register ``fn`` as the lowering rule of ``kinds``."""

    def deco(fn: Rule) -> Rule:
        for k in kinds:
            RULES[k] = fn
        return fn

    return deco


def function_type(kernel: Kernel) -> object:
    """``(memref<...>, ..., scalar, ...) -> ()`` for a kernel's parameters."""
    ir = mlir().ir
    return ir.FunctionType.get([param_type(p) for p in kernel.params], [])


def param_type(p: Param) -> object:
    """The MLIR type a parameter is passed as."""
    return tile_memref_type(p.type) if isinstance(p.type, TileType) else scalar_type(p.type)


def lower_kernel(kernel: Kernel, c_interface: bool = False) -> object:
    """Build ``func.func @<kernel.name>`` at the current insertion point.

    Args:
        kernel: a traced kernel.
        c_interface: add ``llvm.emit_c_interface`` (for host execution).

    Returns:
        The ``func.FuncOp``.

    Raises:
        KernelError: for an op kind without a lowering rule.
    """
    m = mlir()
    fn = m.func.FuncOp(kernel.name, function_type(kernel))
    if c_interface:
        fn.attributes["llvm.emit_c_interface"] = m.ir.UnitAttr.get()
    block = fn.add_entry_block()
    with m.ir.InsertionPoint(block):
        KernelLowering(kernel, list(block.arguments)).run()
        m.func.ReturnOp([])
    return fn


def declare_extern(name: str, params: tuple[Param, ...]) -> object:
    """``func.func private @name(...)``: a vendor kernel the toolchain links (no body)."""
    m = mlir()
    ftype = m.ir.FunctionType.get([param_type(p) for p in params], [])
    return m.func.FuncOp(name, ftype, visibility="private")


class KernelLowering:
    """The state of lowering one kernel: where each op's value is and who still needs it."""

    def __init__(self, kernel: Kernel, args: list) -> None:
        self.kernel = kernel
        self.params: dict[str, View] = {}
        self.slots: dict[int, Slot] = {}
        self.uses: dict[int, int] = {}
        self.last_use: dict[int, int] = {}
        self.position: dict[int, int] = {}
        for p, a in zip(kernel.params, args, strict=True):
            if isinstance(p.type, TileType):
                self.params[p.name] = View(a, p.type, contiguous_strides(p.type.shape), param=p.name)
            else:
                self.slots[id(p)] = Slot(Scalar(a, p.type))
        for i, op in enumerate(kernel.body):
            self.position[id(op)] = i
            for x in op.operands:
                self.uses[id(x)] = self.uses.get(id(x), 0) + 1
                self.last_use[id(x)] = i

    def run(self) -> None:
        for i, op in enumerate(self.kernel.body):
            rule = RULES.get(op.kind)
            if rule is None:
                raise KernelError(f"kernel {self.kernel.name!r}: no MLIR lowering for op {op.kind.value}")
            self.index = i
            value = rule(self, op)
            if value is not None:
                self.slots[id(op)] = Slot(value)

    # -- helpers for rules ------------------------------------------------------------

    def operand(self, x: KOp | Param) -> Slot:
        """The slot holding an operand's value."""
        return self.slots[id(x)]

    def readable(self, x: KOp | Param) -> View:
        """An operand in memory with exactly its tile's shape (computed into a temporary if need be)."""
        slot = self.operand(x)
        if not (isinstance(slot.value, View) and slot.value.exact):
            slot.value = materialize(slot.value)
        return slot.value

    def in_memory(self, x: KOp | Param) -> View:
        """An operand in memory, in any layout (an expression is computed into a temporary)."""
        slot = self.operand(x)
        if not isinstance(slot.value, View):
            slot.value = materialize(slot.value)
        return slot.value

    def multi_use(self, op: KOp) -> bool:
        return self.uses.get(id(op), 0) > 1

    def snapshot(self, slot: Slot) -> None:
        """Replace a parameter view by a private copy of it."""
        v = slot.value
        assert isinstance(v, View)
        out = temporary(v.type)
        generic(v, out)
        slot.value = out

    def pending_slots(self) -> list[Slot]:
        """Slots of values defined before the current op and used after it."""
        out = []
        for x, last in self.last_use.items():
            if last > self.index and x in self.slots and self.position.get(x, -1) < self.index:
                out.append(self.slots[x])
        return out


def region_of(index: Index | None, shape: tuple[int, ...]) -> Index:
    """A normalised index with None spelled out as the full region."""
    return tuple((0, n, 1) for n in shape) if index is None else index


# -- rules: leaves and memory -------------------------------------------------------------


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
    return subview(base, index, param.name, index)


@register(OpKind.SLICE)
def _slice(lw: KernelLowering, op: KOp) -> Value:
    src = lw.in_memory(op.operands[0])
    index = op.attr("index")
    if all(isinstance(it, int) for it in index):
        return load_element(src, index)
    # A slice of a parameter view still reads the parameter; its region is not tracked.
    return subview(src, index, src.param, UNKNOWN if src.param else None)


@register(OpKind.STORE)
def _store(lw: KernelLowering, op: KOp) -> None:
    param: Param = op.operands[0]
    index = op.attr("index")
    base = lw.params[param.name]
    region = region_of(index, base.type.shape)
    # Values computed later from this parameter's current contents must not see the store.
    for slot in lw.pending_slots():
        targets = [slot] if isinstance(slot.value, View) else leaves(slot.value)
        for leaf in targets:
            if leaf.value.param == param.name and _may_overlap(leaf.value.region, region, base.type.shape):
                lw.snapshot(leaf)
    value = lw.operand(op.operands[1]).value
    # Reading the very elements being written, in place, is safe; any other overlap is not.
    reads = [lw.operand(op.operands[1])] if isinstance(value, View) else leaves(value)
    for leaf in reads:
        v = leaf.value
        if v.param != param.name:
            continue
        if v.region != UNKNOWN and region_of(v.region, base.type.shape) == region:
            continue
        if _may_overlap(v.region, region, base.type.shape):
            lw.snapshot(leaf)
    value = lw.operand(op.operands[1]).value
    if index is not None and all(isinstance(it, int) for it in index):
        assert isinstance(value, Scalar)  # the typing rule: a one-element region takes a scalar
        m = mlir()
        at = [m.arith.constant(m.ir.IndexType.get(), int(i)) for i in index]
        m.memref.store(value.value, base.memref, at)
        return None
    dest = base if index is None else subview(base, index, base.param, index)
    if isinstance(value, Scalar):
        mlir().linalg.fill(value.value, outs=[dest.memref])
        return None
    generic(value, dest)
    return None


def _may_overlap(a: Index | str | None, b: Index, shape: tuple[int, ...]) -> bool:
    """Whether two regions of one parameter may share an element (False only when some dimension's ranges are disjoint)."""
    if a == UNKNOWN:
        return True
    for x, y in zip(region_of(a, shape), b, strict=True):  # type: ignore[arg-type]
        x0, x1 = (x, x + 1) if isinstance(x, int) else (x[0], x[1])
        y0, y1 = (y, y + 1) if isinstance(y, int) else (y[0], y[1])
        if x1 <= y0 or y1 <= x0:
            return False
    return True


# -- rules: elementwise (fused) ---------------------------------------------------------------


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
    # A value used twice is computed once, not once per consumer.
    return materialize(expr) if lw.multi_use(op) else expr


# -- rules: contraction and reductions -----------------------------------------------------------


@register(OpKind.MATMUL)
def _matmul(lw: KernelLowering, op: KOp) -> Value:
    m = mlir()
    a, b = lw.readable(op.operands[0]), lw.readable(op.operands[1])
    assert op.type is not None
    acc = op.type.dtype
    # Floats accumulate in f32 whatever the result dtype (the AIE bf16 MAC does
    # too); integers in the result dtype, where wrapping equals numpy's wrap.
    work = f32 if acc.is_float else acc
    out = temporary(TileType(op.type.shape, work))
    m.linalg.fill(scalar_rules.const(work, 0.0 if work.is_float else 0), outs=[out.memref])
    m.linalg.matmul(a.memref, b.memref, outs=[out.memref])
    return _rounded(lw, op, out, acc)


@register(*REDUCE)
def _reduce(lw: KernelLowering, op: KOp) -> Value:
    m = mlir()
    x = lw.operand(op.operands[0]).value
    axes: tuple[int, ...] = op.attr("axes")  # type: ignore[assignment]
    assert op.type is not None
    dt = op.type.dtype
    if isinstance(x, Scalar):
        return x  # a rank-0 reduction over no axes is the value itself
    space = x.type.shape
    kept = tuple(d for d in range(len(space)) if d not in axes)
    work = scalar_rules.accumulator_dtype(op.kind, dt)
    out = _reduction_buffer(TileType(tuple(space[d] for d in kept), work))
    m.linalg.fill(scalar_rules.reduce_init(op.kind, dt), outs=[out.memref])

    def combine(acc: object, elem: object) -> object:
        return scalar_rules.reduce_step(op.kind, acc, elem, dt)

    generic(x, out, reduce_space=space, out_dims=kept, combine=combine)
    if not kept:
        loaded = Scalar(m.memref.load(out.memref, []), work)
        return Scalar(scalar_rules.narrow(loaded.value, dt), dt) if work != dt else loaded
    return _rounded(lw, op, out, dt)


def _reduction_buffer(t: TileType) -> View:
    """A temporary accumulator; rank 0 for a reduction over every axis."""
    if t.shape:
        return temporary(t)
    m = mlir()
    ref = m.memref.alloca(memref_type((), t.dtype), [], [])
    return View(ref, t, ())


def _rounded(lw: KernelLowering, op: KOp, acc: View, dt: DType) -> Value:
    """The accumulator rounded to the op's dtype (fused into the consumer when it differs)."""
    if acc.type.dtype == dt:
        return acc

    def element(args: list) -> object:
        return scalar_rules.narrow(args[0], dt)

    expr = Expr(element, (Slot(acc),), TileType(acc.type.shape, dt))
    return materialize(expr) if lw.multi_use(op) else expr
