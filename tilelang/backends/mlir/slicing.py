"""Static slices as views: ``memref.subview``s of what is already in memory, and slices pushed into expressions.

A slice copies nothing. A slice of a tile in memory (a parameter, a region
of one, a temporary) is a strided ``memref.subview`` of it; a slice of an
elementwise expression not yet computed is the same expression over slices
of its operands (numpy broadcasting taken into account), so it stays fused
into whatever consumes it. Where a consumer needs a memref of exactly the
tile's shape (``linalg.matmul``, a dimension picked by an int index) a
rank-reducing subview drops the unit dimensions: still a view, no copy.

Each view of a parameter carries the region of the parameter it reads (a
normalised index, composed through slices of slices), which is what a later
store checks before overwriting memory a pending value still reads
(``KernelLowering.protect``).
"""

from __future__ import annotations

from collections import Counter

from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.types import memref_type
from tilelang.backends.mlir.values import Expr, Scalar, Slot, Value, View, from_storage
from tilelang.ir.index import Index, IndexItem
from tilelang.ir.types import TileType

# -- regions of a parameter -----------------------------------------------------------------------


def region_of(index: Index | None, shape: tuple[int, ...]) -> Index:
    """A normalised index with None spelled out as the full region."""
    return tuple((0, n, 1) for n in shape) if index is None else index


def may_overlap(a: Index | None, b: Index, shape: tuple[int, ...]) -> bool:
    """Whether two regions of one parameter may share an element (False only when some dimension's ranges are disjoint)."""
    for x, y in zip(region_of(a, shape), b, strict=True):  # type: ignore[arg-type]
        x0, x1 = (x, x + 1) if isinstance(x, int) else (x[0], x[1])
        y0, y1 = (y, y + 1) if isinstance(y, int) else (y[0], y[1])
        if x1 <= y0 or y1 <= x0:
            return False
    return True


def _tight(item: IndexItem) -> IndexItem:
    """A range with its stop right after its last element (``0:6:2`` and ``0:5:2`` are the same elements)."""
    if isinstance(item, int):
        return item
    start, stop, step = item
    n = len(range(start, stop, step))
    return (start, start + (n - 1) * step + 1, step if n > 1 else 1)


def same_region(a: Index | None, b: Index, shape: tuple[int, ...]) -> bool:
    """Whether ``a`` selects exactly the elements of ``b``, dimension by dimension, in the same layout."""
    return tuple(map(_tight, region_of(a, shape))) == tuple(map(_tight, b))  # type: ignore[arg-type]


def compose(region: Index, index: Index) -> Index:
    """The region of a parameter that ``index`` of a view reading ``region`` of it selects.

    Args:
        region: what the view reads, a normalised index of the parameter.
        index: one entry per dimension of the view's tile, i.e. per range of ``region``.
    """
    items = iter(index)
    out: list[IndexItem] = []
    for base in region:
        if isinstance(base, int):
            out.append(base)
            continue
        start, _, step = base
        it = next(items)
        if isinstance(it, int):
            out.append(start + it * step)
        else:
            n = len(range(*it))
            first, stride = start + it[0] * step, step * it[2]
            out.append((first, first + (n - 1) * stride + 1, stride))
    return tuple(out)


# -- views ----------------------------------------------------------------------------------------


def subview(view: View, index: Index) -> View:
    """The region ``index`` (one entry per tile dimension, at least one a range) of ``view``, a strided view of the same rank.

    Raises:
        ValueError: every entry is an int (use :func:`load_element`).
    """
    m = mlir()
    offsets = [0] * len(view.strides)
    sizes = list(view.memref_shape)
    steps = [1] * len(view.strides)
    kept, shape = [], []
    for md, it in zip(view.kept, index, strict=True):  # type: ignore[arg-type]
        if isinstance(it, tuple):
            start, stop, step = it
            n = len(range(start, stop, step))
            offsets[md], sizes[md], steps[md] = start, n, step
            kept.append(md)
            shape.append(n)
        else:
            offsets[md], sizes[md] = it, 1
    if not shape:
        raise ValueError("a subview of one element; use load_element")
    strides = tuple(s * k for s, k in zip(view.strides, steps, strict=True))
    offset = view.offset + sum(o * s for o, s in zip(offsets, view.strides, strict=True))
    rtype = memref_type(tuple(sizes), view.type.dtype, strides, offset)
    ref = m.memref.SubViewOp(rtype, view.memref, [], [], [], offsets, sizes, steps).result
    region = None if view.param is None else compose(view.region, index)  # type: ignore[arg-type]
    return View(ref, TileType(tuple(shape), view.type.dtype), strides, offset, tuple(kept), view.param, region)


def exact(view: View) -> View:
    """``view`` as a memref of exactly its tile's shape, still a view of the same memory (no copy).

    A rank-reducing ``memref.subview`` drops the unit dimensions an int index
    left. Which unit dimensions it drops MLIR infers from the result's strides
    (``computeMemRefRankReductionMask``: among unit dimensions of equal stride,
    the first ones), so the result is typed as MLIR infers it; a unit
    dimension's stride moves no address. Where that inference would keep the
    unit dimensions in another place among the tile's dimensions (a unit
    dimension's stride repeated around a kept dimension, after strided slices
    of slices), ``memref.reinterpret_cast`` states the view outright.
    """
    if view.exact:
        return view
    m = mlir()
    strides = [view.strides[d] for d in view.kept]  # type: ignore[union-attr]
    sizes = list(view.memref_shape)
    kept = _mlir_kept(sizes, list(view.strides), strides)
    if kept is not None and [sizes[d] for d in kept] == list(view.type.shape):
        strides = [view.strides[d] for d in kept]
        rank = len(sizes)
        rtype = memref_type(view.type.shape, view.type.dtype, tuple(strides), view.offset)
        ref = m.memref.SubViewOp(rtype, view.memref, [], [], [], [0] * rank, sizes, [1] * rank).result
    else:
        rtype = memref_type(view.type.shape, view.type.dtype, tuple(strides), view.offset)
        shape = list(view.type.shape)
        ref = m.memref.ReinterpretCastOp(rtype, view.memref, [], [], [], [view.offset], shape, strides).result
    return View(ref, view.type, tuple(strides), view.offset, None, view.param, view.region)


def _mlir_kept(sizes: list[int], strides: list[int], kept_strides: list[int]) -> list[int] | None:
    """The dimensions a rank-reducing subview to ``kept_strides`` keeps, by MLIR's rule (None: it rejects them).

    Upstream ``computeMemRefRankReductionMask`` (mlir/lib/Dialect/MemRef/IR/MemRefOps.cpp):
    every unit dimension is dropped when that accounts for the rank; otherwise,
    per stride value, unit dimensions are dropped in order until as many of
    that stride remain as the result has.
    """
    unused = [n == 1 for n in sizes]
    if sum(unused) + len(kept_strides) != len(sizes):
        remaining, wanted = Counter(strides), Counter(kept_strides)
        for d, s in enumerate(strides):
            if not unused[d]:
                continue
            if remaining[s] > wanted[s]:
                remaining[s] -= 1
            elif remaining[s] == wanted[s]:
                unused[d] = False
            else:
                return None
        if sum(unused) + len(kept_strides) != len(sizes):
            return None
    return [d for d in range(len(sizes)) if not unused[d]]


def load_element(view: View, index: Index) -> Scalar:
    """The one element ``index`` (all ints, one per tile dimension) of ``view`` as a Scalar."""
    m = mlir()
    at = [0] * len(view.strides)
    for md, i in zip(view.kept, index, strict=True):  # type: ignore[arg-type]
        at[md] = int(i)  # type: ignore[arg-type]
    idx = [m.arith.constant(m.ir.IndexType.get(), i) for i in at]
    return Scalar(from_storage(m.memref.load(view.memref, idx), view.type.dtype), view.type.dtype)


# -- slicing any value ------------------------------------------------------------------------------


def slice_value(value: Value, index: Index) -> Value:
    """``value[index]`` (one entry per dimension of the value's tile), computing nothing.

    Views become subviews (or one loaded element); an expression becomes the
    same expression over slices of its operands, each operand's slice following
    numpy broadcasting (a broadcast dimension keeps its single element);
    with every entry an int, the expression is evaluated for that one element.
    """
    if isinstance(value, Scalar):
        return value
    if all(isinstance(it, int) for it in index):
        if isinstance(value, View):
            return load_element(value, index)
        return Scalar(
            value.rule([_scalar(slice_value(s.value, _operand_index(s.value, value, index))) for s in value.args]),
            value.type.dtype,
        )
    if isinstance(value, View):
        return subview(value, index)
    memo: dict[int, Slot] = {}

    def arg(s: Slot) -> Slot:
        if id(s) not in memo:
            memo[id(s)] = Slot(slice_value(s.value, _operand_index(s.value, value, index)))
        return memo[id(s)]

    shape = tuple(len(range(*it)) for it in index if isinstance(it, tuple))
    return Expr(value.rule, tuple(arg(s) for s in value.args), TileType(shape, value.type.dtype))


def _scalar(v: Value) -> object:
    assert isinstance(v, Scalar)
    return v.value


def _operand_index(operand: Value, expr: Expr, index: Index) -> Index:
    """The part of ``index`` (over ``expr``'s shape) an operand broadcast into ``expr`` reads."""
    if isinstance(operand, Scalar):
        return ()
    own = operand.type.shape
    lead = len(expr.type.shape) - len(own)
    out: list[IndexItem] = []
    for j, n in enumerate(own):
        it = index[lead + j]
        if n == 1 and expr.type.shape[lead + j] != 1:  # broadcast: every position reads element 0
            it = 0 if isinstance(it, int) else (0, 1, 1)
        out.append(it)
    return tuple(out)


__all__ = [
    "compose",
    "exact",
    "load_element",
    "may_overlap",
    "region_of",
    "same_region",
    "slice_value",
    "subview",
]
