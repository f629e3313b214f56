"""How a kernel value is held while its kernel is lowered, and the ``linalg.generic`` that computes it.

A value is one of:

- :class:`Scalar`: a rank-0 value in an SSA register (constants, scalar
  parameters, full reductions);
- :class:`View`: a tile in memory: a parameter (or a region of one) read in
  place, or a private temporary (``memref.alloca``);
- :class:`Expr`: an elementwise computation not yet carried out. It is fused
  into the ``linalg.generic`` of whatever consumes it (a store, a reduction or
  a temporary), so a chain of elementwise ops costs one loop nest and no
  temporaries.

Operands are held through :class:`Slot` cells so that a parameter view can be
replaced by a snapshot (a copy) when a store is about to overwrite memory a
pending value still reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.types import contiguous_strides, memref_type, scalar_type, storage_type
from tilelang.ir.dtypes import DType
from tilelang.ir.index import Index
from tilelang.ir.types import TileType


@dataclass(frozen=True)
class Scalar:
    """A rank-0 value in an SSA register."""

    value: object
    dtype: DType


@dataclass(frozen=True)
class View:
    """A tile held in memory.

    Slicing never reduces a memref's rank (MLIR's rank-reducing subviews are
    ambiguous when unit dimensions are involved): a dimension indexed by an int
    stays in the memref with size 1 and is left out of ``kept``.

    Attributes:
        memref: the SSA memref value.
        type: the tile's shape and dtype.
        strides: element strides of each memref dimension.
        offset: element offset of ``memref``'s layout.
        kept: the memref dimensions that are the tile's dimensions, in order.
        param: the kernel parameter this view reads in place (None: a private temporary).
        region: the region of ``param`` it covers, a normalised index of the
            parameter (the whole parameter spelled out); None for a temporary.
    """

    memref: object
    type: TileType
    strides: tuple[int, ...]
    offset: int = 0
    kept: tuple[int, ...] | None = None
    param: str | None = None
    region: Index | None = None

    def __post_init__(self) -> None:
        if self.kept is None:
            object.__setattr__(self, "kept", tuple(range(len(self.type.shape))))

    @property
    def memref_shape(self) -> tuple[int, ...]:
        shape = [1] * len(self.strides)
        for d, n in zip(self.kept, self.type.shape, strict=True):  # type: ignore[arg-type]
            shape[d] = n
        return tuple(shape)

    @property
    def exact(self) -> bool:
        """Whether the memref has exactly the tile's shape (no dropped unit dimensions)."""
        return len(self.strides) == len(self.type.shape)


@dataclass(frozen=True, eq=False)
class Expr:
    """An elementwise value: ``rule`` builds one element from its operands' elements."""

    rule: Callable[[list], object]
    args: tuple[Slot, ...]
    type: TileType


class Slot:
    """A mutable cell holding a value, so that snapshots replace a view everywhere it is used."""

    __slots__ = ("value",)

    def __init__(self, value: Scalar | View | Expr) -> None:
        self.value = value


Value = Scalar | View | Expr


def leaves(value: Value) -> list[Slot]:
    """The slots of every view an expression reads (with repeats), depth first."""
    out: list[Slot] = []

    def walk(e: Expr) -> None:
        for s in e.args:
            if isinstance(s.value, Expr):
                walk(s.value)
            elif isinstance(s.value, View):
                out.append(s)

    if isinstance(value, Expr):
        walk(value)
    return out


def temporary(t: TileType) -> View:
    """A fresh private tile (``memref.alloca``: stack memory, see docs/mlir_backend.md)."""
    m = mlir()
    ref = m.memref.alloca(memref_type(t.shape, t.dtype), [], [])
    return View(ref, t, contiguous_strides(t.shape))


def leaf_map(view: View, space: tuple[int, ...], loops: tuple[int, ...], n_loops: int) -> object:
    """The indexing map reading ``view`` broadcast (numpy rules) over a tile ``space``.

    Args:
        view: the tile read.
        space: the tile shape being computed.
        loops: the loop dimension of each dimension of ``space``.
        n_loops: loop dimensions of the generic.
    """
    ir = mlir().ir
    lead = len(space) - len(view.type.shape)
    exprs = [ir.AffineConstantExpr.get(0) for _ in view.strides]
    for j, (md, n) in enumerate(zip(view.kept, view.type.shape, strict=True)):  # type: ignore[arg-type]
        d = lead + j
        if not (n == 1 and space[d] != 1):
            exprs[md] = ir.AffineDimExpr.get(loops[d])
    return ir.AffineMap.get(n_loops, 0, exprs)


def generic(
    value: Value,
    out: View,
    reduce_space: tuple[int, ...] | None = None,
    out_dims: tuple[int, ...] = (),
    combine: Callable[[object, object], object] | None = None,
) -> None:
    """One ``linalg.generic`` computing ``value`` into ``out``.

    Without ``combine`` the value (broadcast to ``out``'s shape) is stored: the
    loops are ``out``'s memref dimensions. With ``combine`` it is a reduction:
    the loops are ``reduce_space`` (``value``'s shape), ``out`` (a temporary)
    is indexed by the loops ``out_dims`` and ``combine(acc, element)`` folds
    each element in.
    """
    m = mlir()
    ir = m.ir
    if combine is None:
        space, loops, n_loops = out.type.shape, tuple(out.kept), len(out.strides)  # type: ignore[arg-type]
        out_map = ir.AffineMap.get_identity(n_loops)
    else:
        assert reduce_space is not None
        space, n_loops = reduce_space, len(reduce_space)
        loops = tuple(range(n_loops))
        out_map = ir.AffineMap.get(n_loops, 0, [ir.AffineDimExpr.get(d) for d in out_dims])
    inputs: list[View] = []
    index: dict[int, int] = {}
    candidates = (
        [s.value for s in leaves(value)] if isinstance(value, Expr) else [value] if isinstance(value, View) else []
    )
    for v in candidates:
        if id(v) not in index:
            index[id(v)] = len(inputs)
            inputs.append(v)
    maps = [leaf_map(v, space, loops, n_loops) for v in inputs] + [out_map]
    reduced = set(range(n_loops)) - set(out_dims if combine is not None else range(n_loops))
    kinds = ["reduction" if d in reduced else "parallel" for d in range(n_loops)]
    iters = ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])
    op = m.linalg.GenericOp(
        [], [v.memref for v in inputs], [out.memref], ir.ArrayAttr.get([ir.AffineMapAttr.get(x) for x in maps]), iters
    )
    block = op.regions[0].blocks.append(*[storage_type(v.type.dtype) for v in inputs], storage_type(out.type.dtype))
    with ir.InsertionPoint(block):
        args = [from_storage(block.arguments[i], v.type.dtype) for i, v in enumerate(inputs)]
        elem = _element(value, args, index)
        if combine is not None:
            elem = combine(block.arguments[len(inputs)], elem)
        m.linalg.YieldOp([to_storage(elem, out.type.dtype)])


def from_storage(x: object, dt: DType) -> object:
    """An element read from memory as a value of ``dt`` (i8 -> i1 for booleans)."""
    if dt.kind == "bool":
        return mlir().arith.trunci(scalar_type(dt), x)
    return x


def to_storage(x: object, dt: DType) -> object:
    """A value of ``dt`` as the element stored in memory (i1 -> i8 for booleans)."""
    if dt.kind == "bool":
        return mlir().arith.extui(storage_type(dt), x)
    return x


def _element(value: Value, args: list, index: dict[int, int]) -> object:
    if isinstance(value, Scalar):
        return value.value
    if isinstance(value, View):
        return args[index[id(value)]]
    return value.rule([_element(s.value, args, index) for s in value.args])


def materialize(value: Value, t: TileType | None = None) -> View:
    """``value`` in memory with exactly its tile's shape: an expression (or a
    view with dropped unit dimensions) is computed into a fresh temporary.

    Raises:
        ValueError: for a Scalar (it has no memory form here).
    """
    if isinstance(value, View) and value.exact:
        return value
    if isinstance(value, Scalar):
        raise ValueError("a scalar has no memory form")
    out = temporary(t or value.type)
    generic(value, out)
    return out
