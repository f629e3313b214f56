"""Kernel IR: typed SSA ops over tiles.

A :class:`Kernel` is a list of parameters and a body of :class:`KOp` in
program order. Each op names its operands directly (earlier ops or scalar
parameters); SSA names are given out only by the printer. Every op checks its
own type in ``__post_init__`` against the rule for its kind, so an ill-typed
op cannot be built.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from tilelang.errors import KernelError
from tilelang.ir.dtypes import DType, accumulator, i1
from tilelang.ir.index import Index, broadcast_shapes, index_shape, normalize_index
from tilelang.ir.ops import BINARY, COMPARE, ELEMENTARY, REDUCE, UNARY, OpKind
from tilelang.ir.types import TileType


@dataclass(frozen=True, eq=False)
class Param:
    """A kernel parameter: a tile (``TileType``) or a scalar (``DType``)."""

    name: str
    type: TileType | DType

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise KernelError(f"parameter name {self.name!r} is not an identifier")
        if not isinstance(self.type, TileType | DType):
            raise KernelError(f"parameter {self.name!r}: type must be tl.Tile[...] or a dtype, got {self.type!r}")
        if isinstance(self.type, TileType) and self.type.shape == ():
            raise KernelError(f"parameter {self.name!r}: a tile needs a shape")

    @property
    def is_tile(self) -> bool:
        return isinstance(self.type, TileType)

    @property
    def value_type(self) -> TileType:
        """Type of the parameter when used as a value (scalars only)."""
        if isinstance(self.type, DType):
            return TileType((), self.type)
        return self.type


Operand = "KOp | Param"


def _type_of(x: object) -> TileType:
    if isinstance(x, KOp):
        if x.type is None:
            raise KernelError(f"{x.kind.value} has no result")
        return x.type
    if isinstance(x, Param):
        if x.is_tile:
            raise KernelError(f"tile parameter {x.name!r} must be loaded before use")
        return x.value_type
    raise KernelError(f"bad operand {x!r}")


def _same_dtype(kind: OpKind, types: list[TileType]) -> DType:
    dts = {t.dtype for t in types}
    if len(dts) != 1:
        names = ", ".join(str(t.dtype) for t in types)
        raise KernelError(f"{kind.value}: operand dtypes differ ({names}); convert one with .astype(...)")
    return types[0].dtype


def _broadcast(kind: OpKind, types: list[TileType]) -> tuple[int, ...]:
    shape: tuple[int, ...] = ()
    for t in types:
        b = broadcast_shapes(shape, t.shape)
        if b is None:
            shapes = " and ".join(str(u.shape) for u in types)
            raise KernelError(f"{kind.value}: shapes {shapes} do not broadcast")
        shape = b
    return shape


def _attr(attrs: dict, key: str, kind: OpKind) -> object:
    if key not in attrs:
        raise KernelError(f"{kind.value}: missing attribute {key!r}")
    return attrs[key]


def infer_type(kind: OpKind, operands: tuple, attrs: dict) -> TileType | None:
    """The result type of an op, or None for ops with no result.

    Raises:
        KernelError: when the operands or attributes do not fit the op.
    """
    arity = {OpKind.CONST: 0, OpKind.LOAD: 1, OpKind.STORE: 2, OpKind.WHERE: 3, OpKind.MATMUL: 2}
    want = arity.get(kind, 2 if kind in BINARY | COMPARE else 1)
    if len(operands) != want:
        raise KernelError(f"{kind.value} takes {want} operands, got {len(operands)}")
    if kind is OpKind.CONST:
        return _infer_const(attrs)
    if kind is OpKind.LOAD:
        return _infer_load(operands[0], attrs)
    if kind is OpKind.STORE:
        _infer_store(operands, attrs)
        return None
    types = [_type_of(x) for x in operands]
    if kind in UNARY:
        if kind in ELEMENTARY and not types[0].dtype.is_float:
            raise KernelError(f"{kind.value} needs a float tile, got {types[0].dtype}; use .astype(tl.f32) first")
        if types[0].dtype.kind == "bool":
            raise KernelError(f"{kind.value} does not apply to booleans")
        return types[0]
    if kind is OpKind.CAST:
        to = _attr(attrs, "dtype", kind)
        if not isinstance(to, DType) or to.kind == "bool":
            raise KernelError(f"cast: bad target dtype {to!r}")
        return TileType(types[0].shape, to)
    if kind in BINARY:
        dt = _same_dtype(kind, types)
        if dt.kind == "bool":
            raise KernelError(f"{kind.value} does not apply to booleans")
        return TileType(_broadcast(kind, types), dt)
    if kind in COMPARE:
        _same_dtype(kind, types)
        return TileType(_broadcast(kind, types), i1)
    if kind is OpKind.WHERE:
        if types[0].dtype is not i1:
            raise KernelError(f"where: the condition must be a comparison result, got {types[0].dtype}")
        dt = _same_dtype(kind, types[1:])
        return TileType(_broadcast(kind, types), dt)
    if kind is OpKind.MATMUL:
        return _infer_matmul(types, attrs)
    if kind in REDUCE:
        return _infer_reduce(kind, types[0], attrs)
    if kind is OpKind.SLICE:
        index = _attr(attrs, "index", kind)
        _check_index(index, types[0].shape, kind)
        return TileType(index_shape(index), types[0].dtype)
    raise KernelError(f"unknown op kind {kind}")


def _infer_const(attrs: dict) -> TileType:
    value, dt = attrs.get("value"), attrs.get("dtype")
    if not isinstance(dt, DType):
        raise KernelError("const needs a dtype")
    if dt.is_int and (not isinstance(value, int) or isinstance(value, bool)):
        raise KernelError(f"constant {value!r} is not an integer, as {dt} needs")
    if dt.is_int:
        lo, hi = -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
        if not lo <= value <= hi:
            raise KernelError(f"constant {value} does not fit in {dt} ([{lo}, {hi}])")
    if dt.is_float and not isinstance(value, float):
        raise KernelError(f"constant {value!r} must be a float for {dt}")
    if dt.kind == "bool":
        raise KernelError("boolean constants are not supported")
    return TileType((), dt)


def _check_index(index: object, shape: tuple[int, ...], kind: OpKind) -> None:
    if not isinstance(index, tuple) or len(index) != len(shape):
        raise KernelError(f"{kind.value}: index must have one entry per dimension of {shape}")
    for dim, (it, n) in enumerate(zip(index, shape, strict=True)):
        if isinstance(it, tuple):
            start, stop, step = it
            if not (0 <= start < stop <= n and step > 0):
                raise KernelError(f"{kind.value}: slice {start}:{stop}:{step} out of range in dimension {dim} (size {n})")
        elif not (isinstance(it, int) and 0 <= it < n):
            raise KernelError(f"{kind.value}: index {it!r} out of range in dimension {dim} (size {n})")


def _infer_load(param: object, attrs: dict) -> TileType:
    if not isinstance(param, Param) or not param.is_tile:
        raise KernelError("load reads a tile parameter")
    assert isinstance(param.type, TileType)
    index = attrs.get("index")
    if index is None:
        return param.type
    _check_index(index, param.type.shape, OpKind.LOAD)
    return TileType(index_shape(index), param.type.dtype)


def _infer_store(operands: tuple, attrs: dict) -> None:
    param, value = operands
    if not isinstance(param, Param) or not param.is_tile:
        raise KernelError("store writes a tile parameter")
    assert isinstance(param.type, TileType)
    vt = _type_of(value)
    index = attrs.get("index")
    region = param.type.shape
    if index is not None:
        _check_index(index, param.type.shape, OpKind.STORE)
        region = index_shape(index)
    if vt.dtype != param.type.dtype:
        raise KernelError(
            f"store to {param.name!r}: value has dtype {vt.dtype}, parameter has {param.type.dtype}; "
            f"use .astype(tl.{param.type.dtype})"
        )
    if broadcast_shapes(vt.shape, region) != region:
        raise KernelError(f"store to {param.name!r}: value of shape {vt.shape} does not fit region of shape {region}")


def can_accumulate(acc: object, operand: DType) -> bool:
    """Whether ``acc`` can hold products of ``operand`` values: the same kind (integer or float), at least as wide."""
    return isinstance(acc, DType) and acc.kind == operand.kind and acc.bits >= operand.bits


def _infer_matmul(types: list[TileType], attrs: dict) -> TileType:
    a, b = types
    if a.rank != 2 or b.rank != 2:
        raise KernelError(f"matmul needs 2-D tiles, got shapes {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise KernelError(f"matmul: inner dimensions differ ({a.shape} @ {b.shape})")
    if a.dtype != b.dtype:
        raise KernelError(f"matmul: operand dtypes differ ({a.dtype}, {b.dtype})")
    acc = _attr(attrs, "acc", OpKind.MATMUL)
    if not can_accumulate(acc, a.dtype):
        raise KernelError(f"matmul: accumulator {acc} cannot hold products of {a.dtype}")
    return TileType((a.shape[0], b.shape[1]), acc)


def _infer_reduce(kind: OpKind, t: TileType, attrs: dict) -> TileType:
    axes = _attr(attrs, "axes", kind)
    if not isinstance(axes, tuple) or not all(isinstance(x, int) and 0 <= x < t.rank for x in axes):
        raise KernelError(f"{kind.value}: axes {axes!r} out of range for a tile of rank {t.rank}")
    if len(set(axes)) != len(axes) or list(axes) != sorted(axes):
        raise KernelError(f"{kind.value}: axes must be sorted and distinct, got {axes!r}")
    if t.dtype.kind == "bool":
        raise KernelError(f"{kind.value} does not apply to booleans")
    return TileType(tuple(n for d, n in enumerate(t.shape) if d not in axes), t.dtype)


@dataclass(frozen=True, eq=False)
class KOp:
    """One kernel op. ``attrs`` is a tuple of (name, value) pairs sorted by name."""

    kind: OpKind
    operands: tuple = ()
    attrs: tuple[tuple[str, object], ...] = ()
    type: TileType | None = None

    def __post_init__(self) -> None:
        if list(self.attrs) != sorted(self.attrs, key=lambda kv: kv[0]):
            object.__setattr__(self, "attrs", tuple(sorted(self.attrs, key=lambda kv: kv[0])))
        inferred = infer_type(self.kind, self.operands, dict(self.attrs))
        if self.type is None:
            object.__setattr__(self, "type", inferred)
        elif self.type != inferred:
            raise KernelError(f"{self.kind.value}: declared type {self.type} but operands give {inferred}")

    @staticmethod
    def make(kind: OpKind, *operands: object, **attrs: object) -> KOp:
        """Build an op, inferring its type; attributes set to None are left out."""
        return KOp(kind, tuple(operands), tuple(sorted((k, v) for k, v in attrs.items() if v is not None)))

    def attr(self, key: str, default: object = None) -> object:
        for k, v in self.attrs:
            if k == key:
                return v
        return default


def default_accumulator(dt: DType) -> DType:
    """Accumulator a matmul of ``dt`` tiles uses unless told otherwise."""
    return accumulator(dt)


@dataclass(frozen=True, eq=False)
class Kernel:
    """A traced kernel: parameters and a body of ops in program order."""

    name: str
    params: tuple[Param, ...]
    body: tuple[KOp, ...]
    source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise KernelError(f"kernel name {self.name!r} is not an identifier")
        names = [p.name for p in self.params]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise KernelError(f"kernel {self.name!r}: duplicate parameter names {sorted(dup)}")
        defined: set[int] = {id(p) for p in self.params}
        for op in self.body:
            for x in op.operands:
                if id(x) not in defined:
                    what = x.name if isinstance(x, Param) else x.kind.value
                    raise KernelError(f"kernel {self.name!r}: {op.kind.value} uses {what} before it is defined here")
            defined.add(id(op))

    @property
    def written(self) -> frozenset[str]:
        """Names of the tile parameters the kernel stores to."""
        return frozenset(op.operands[0].name for op in self.body if op.kind is OpKind.STORE)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def __call__(self, *args: object, **kwargs: object) -> None:
        from tilelang.ir.calls import call_kernel  # calls imports this module

        return call_kernel(self, args, kwargs)


CyclesFn = Callable[..., int]
#: What an extern kernel's cycle function parses back as: known to exist, not carried by the text.
DYNAMIC = "dynamic"


#: Most cycles an extern kernel's cycle function may give one call (about 15 minutes at 1.25 GHz).
CYCLES_LIMIT = 2**40


@dataclass(frozen=True, eq=False)
class ExternKernel:
    """A precompiled vendor kernel: declared signature, numpy reference and cost.

    Attributes:
        name: the symbol the vendor object file defines.
        params: its parameters.
        writes: names of the tile parameters it writes.
        cycles: cycles per call, an int or a function of the call's arguments.
        reference: numpy semantics ``fn(*arrays_and_scalars)`` writing outputs in place.
        object_file: the object the vendor flow links (``link_with``).
    """

    name: str
    params: tuple[Param, ...]
    writes: frozenset[str]
    cycles: int | CyclesFn | str | None = None
    reference: Callable[..., object] | None = None
    object_file: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise KernelError(f"extern kernel name {self.name!r} is not an identifier")
        names = {p.name for p in self.params}
        bad = set(self.writes) - {p.name for p in self.params if p.is_tile}
        if bad:
            raise KernelError(f"extern kernel {self.name!r}: writes names unknown tile parameters {sorted(bad)}")
        if len(names) != len(self.params):
            raise KernelError(f"extern kernel {self.name!r}: duplicate parameter names")
        if isinstance(self.cycles, int) and self.cycles < 0:
            raise KernelError(f"extern kernel {self.name!r}: cycles must be >= 0")

    @property
    def written(self) -> frozenset[str]:
        return frozenset(self.writes)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def cycles_for(self, args: tuple) -> int | None:
        """Cycles of one call with these arguments, or None when undeclared."""
        if self.cycles is None or isinstance(self.cycles, int):
            return self.cycles
        if self.cycles == DYNAMIC:
            raise KernelError(
                f"extern kernel {self.name!r} has a cycle function, which IR text cannot carry; "
                f"pass the kernel to tl.ir.parse(..., externs={{{self.name!r}: kernel}})"
            )
        try:
            got = self.cycles(*args)
        except Exception as e:  # noqa: BLE001 - the user's cycle function: say whose and what
            raise KernelError(f"extern kernel {self.name!r}: its cycle function raised {type(e).__name__}: {e}") from None
        if isinstance(got, bool) or not isinstance(got, int | float) or not 0 <= got <= CYCLES_LIMIT:
            raise KernelError(f"extern kernel {self.name!r}: its cycle function returned {got!r}; a call takes a "
                              f"whole number of cycles from 0 to {CYCLES_LIMIT}")
        return int(got)

    def __call__(self, *args: object, **kwargs: object) -> None:
        from tilelang.ir.calls import call_kernel  # calls imports this module

        return call_kernel(self, args, kwargs)


AnyKernel = Kernel | ExternKernel


def numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


__all__ = [
    "AnyKernel",
    "ExternKernel",
    "Index",
    "Kernel",
    "KOp",
    "OpKind",
    "Param",
    "broadcast_shapes",
    "default_accumulator",
    "index_shape",
    "normalize_index",
]
