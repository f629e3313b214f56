"""Tracing a kernel body over symbolic tiles into kernel IR.

The user's function runs once over proxies (:class:`TileValue` for values,
:class:`TileParam` for tile parameters); each operator appends an op to the
current :class:`KernelBuilder`. Python control flow runs at trace time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from tilelang.errors import KernelError
from tilelang.frontend.source import located, user_location
from tilelang.ir.dtypes import DType
from tilelang.ir.index import is_full_index, normalize_index
from tilelang.ir.kernel import KOp, OpKind, Param, default_accumulator
from tilelang.ir.ops import COMPARE
from tilelang.ir.types import TileType

_state = threading.local()


class KernelBuilder:
    """Collects the ops of one kernel while its function is traced."""

    def __init__(self, name: str, params: list[Param]) -> None:
        self.name = name
        self.params = params
        self.ops: list[KOp] = []
        self._full_loads: dict[str, KOp] = {}

    def emit(self, kind: OpKind, *operands: object, **attrs: object) -> KOp:
        """Append one op; a type error becomes a KernelError at the user's line."""
        try:
            op = KOp.make(kind, *operands, **attrs)
        except KernelError as e:
            raise KernelError(located(f"in kernel {self.name!r}: {e}", user_location())) from None
        self.ops.append(op)
        return op

    def load(self, param: Param, index: object = None) -> KOp:
        if index is None:
            cached = self._full_loads.get(param.name)
            if cached is None:
                cached = self.emit(OpKind.LOAD, param)
                self._full_loads[param.name] = cached
            return cached
        return self.emit(OpKind.LOAD, param, index=index)

    def store(self, param: Param, value: object, index: object = None) -> None:
        self.emit(OpKind.STORE, param, value, index=index)
        self._full_loads.pop(param.name, None)

    def fail(self, message: str) -> KernelError:
        return KernelError(located(f"in kernel {self.name!r}: {message}", user_location()))


def current_builder() -> KernelBuilder | None:
    stack = getattr(_state, "stack", [])
    return stack[-1] if stack else None


class building:
    """Context manager making ``builder`` the current kernel builder."""

    def __init__(self, builder: KernelBuilder) -> None:
        self.builder = builder

    def __enter__(self) -> KernelBuilder:
        if not hasattr(_state, "stack"):
            _state.stack = []
        _state.stack.append(self.builder)
        return self.builder

    def __exit__(self, *exc: object) -> None:
        _state.stack.pop()


def _builder() -> KernelBuilder:
    b = current_builder()
    if b is None:
        raise KernelError("tile operations are only valid while a @tl.kernel function is traced")
    return b


def _number(x: object) -> bool:
    import numpy as np

    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool | np.bool_)


def lift(x: object, like: DType) -> KOp | Param:
    """An operand for ``x``: proxies unwrap, Python numbers become constants of ``like``."""
    if isinstance(x, TileValue):
        return x.node
    if isinstance(x, TileParam):
        return _builder().load(x.param)
    if _number(x):
        b = _builder()
        if like.is_int:
            if float(x) != int(x):
                raise b.fail(f"constant {x!r} is not an integer but the other operand is {like}")
            return b.emit(OpKind.CONST, value=int(x), dtype=like)
        return b.emit(OpKind.CONST, value=float(x), dtype=like)
    if isinstance(x, bool):
        raise _builder().fail("boolean constants are not supported; compare tiles instead")
    raise _builder().fail(f"cannot use {type(x).__name__} {x!r} in a kernel expression")


def _dtype_of(x: object) -> DType | None:
    if isinstance(x, TileValue | TileParam):
        return x.dtype
    return None


def binary(kind: OpKind, a: object, b: object) -> TileValue:
    like = _dtype_of(a) or _dtype_of(b)
    if like is None:
        raise _builder().fail(f"{kind.value} needs at least one tile operand")
    return TileValue(_builder().emit(kind, lift(a, like), lift(b, like)))


def unary(kind: OpKind, x: object, **attrs: object) -> TileValue:
    like = _dtype_of(x)
    if like is None:
        raise _builder().fail(f"{kind.value} needs a tile operand, got {x!r}")
    return TileValue(_builder().emit(kind, lift(x, like), **attrs))


#: numpy methods and attributes users reach for, and what a kernel writes instead.
_NUMPY_HABITS = {
    "sum": "use tl.sum(x, axis=...)",
    "max": "use tl.max(x, axis=...)",
    "min": "use -tl.max(-x, axis=...)",
    "mean": "use tl.sum(x, axis=...) / n",
    "T": "a kernel cannot transpose; lay the data out as needed in the access pattern of its tl.dma",
    "transpose": "a kernel cannot transpose; lay the data out as needed in the access pattern of its tl.dma",
    "reshape": "tiles keep their declared shape; declare the parameter (and fifo element) in the shape you need",
    "flatten": "tiles keep their declared shape; declare the parameter (and fifo element) in the shape you need",
    "ravel": "tiles keep their declared shape; declare the parameter (and fifo element) in the shape you need",
    "clip": "use tl.minimum(tl.maximum(x, lo), hi)",
    "dot": "use x @ y",
    "exp": "use tl.exp(x)",
    "copy": "use the value itself (kernel values are immutable)",
}

#: Python operators numpy supports that kernels do not, and what to write instead.
_OPERATOR_HABITS = {
    "**": "multiply explicitly (x * x), or use tl.exp for powers of e",
    "%": "write the truncating remainder x - (x / y) * y (/ on integer tiles truncates toward zero)",
    "//": "use / (on integer tiles it divides truncating toward zero, as C does)",
    "&": "bitwise ops are not kernel ops; combine conditions with nested tl.where",
    "|": "bitwise ops are not kernel ops; combine conditions with nested tl.where",
    "^": "bitwise ops are not kernel ops; combine conditions with nested tl.where",
    "~": "bitwise ops are not kernel ops; combine conditions with nested tl.where",
    "<<": "multiply by a power of two instead (x * 2**k with k a Python int)",
    ">>": "divide by a power of two instead (x / 2**k with k a Python int; it truncates toward zero)",
}


def _unsupported(op: str) -> TileValue:
    raise _builder().fail(f"operator {op} is not supported on tiles: {_OPERATOR_HABITS[op]}")


class _Operators:
    """Arithmetic shared by values and tile parameters."""

    dtype: DType
    shape: tuple[int, ...]

    def __add__(self, o: object) -> TileValue:
        return binary(OpKind.ADD, self, o)

    def __radd__(self, o: object) -> TileValue:
        return binary(OpKind.ADD, o, self)

    def __sub__(self, o: object) -> TileValue:
        return binary(OpKind.SUB, self, o)

    def __rsub__(self, o: object) -> TileValue:
        return binary(OpKind.SUB, o, self)

    def __mul__(self, o: object) -> TileValue:
        return binary(OpKind.MUL, self, o)

    def __rmul__(self, o: object) -> TileValue:
        return binary(OpKind.MUL, o, self)

    def __truediv__(self, o: object) -> TileValue:
        return binary(OpKind.DIV, self, o)

    def __rtruediv__(self, o: object) -> TileValue:
        return binary(OpKind.DIV, o, self)

    def __matmul__(self, o: object) -> TileValue:
        return matmul(self, o)

    def __rmatmul__(self, o: object) -> TileValue:
        return matmul(o, self)

    def __neg__(self) -> TileValue:
        return unary(OpKind.NEG, self)

    def __abs__(self) -> TileValue:
        return unary(OpKind.ABS, self)

    def __lt__(self, o: object) -> TileValue:
        return binary(OpKind.LT, self, o)

    def __le__(self, o: object) -> TileValue:
        return binary(OpKind.LE, self, o)

    def __gt__(self, o: object) -> TileValue:
        return binary(OpKind.GT, self, o)

    def __ge__(self, o: object) -> TileValue:
        return binary(OpKind.GE, self, o)

    def __eq__(self, o: object) -> TileValue:  # type: ignore[override]
        return binary(OpKind.EQ, self, o)

    def __ne__(self, o: object) -> TileValue:  # type: ignore[override]
        return binary(OpKind.NE, self, o)

    __hash__ = None  # type: ignore[assignment]

    # numpy operators kernels do not have: a KernelError saying what to write instead
    def __pow__(self, o: object) -> TileValue:
        return _unsupported("**")

    __rpow__ = __pow__

    def __mod__(self, o: object) -> TileValue:
        return _unsupported("%")

    __rmod__ = __mod__

    def __floordiv__(self, o: object) -> TileValue:
        return _unsupported("//")

    __rfloordiv__ = __floordiv__

    def __and__(self, o: object) -> TileValue:
        return _unsupported("&")

    __rand__ = __and__

    def __or__(self, o: object) -> TileValue:
        return _unsupported("|")

    __ror__ = __or__

    def __xor__(self, o: object) -> TileValue:
        return _unsupported("^")

    __rxor__ = __xor__

    def __invert__(self) -> TileValue:
        return _unsupported("~")

    def __lshift__(self, o: object) -> TileValue:
        return _unsupported("<<")

    __rlshift__ = __lshift__

    def __rshift__(self, o: object) -> TileValue:
        return _unsupported(">>")

    __rrshift__ = __rshift__

    def __getattr__(self, name: str) -> object:
        # Only reached when normal lookup fails: a numpy method or attribute a tile does not have.
        if name.startswith("__") or current_builder() is None:
            raise AttributeError(name)
        advice = _NUMPY_HABITS.get(name)
        if advice is not None:
            raise _builder().fail(f"a tile has no .{name} (it is not a numpy array): {advice}")
        raise _builder().fail(
            f"a tile has no attribute .{name}; tiles support .shape, .dtype, .ndim, .astype(dtype), indexing, "
            f"arithmetic and the tl.* functions"
        )

    def astype(self, dtype: DType) -> TileValue:
        if not isinstance(dtype, DType):
            raise _builder().fail(f"astype takes a tilelang dtype such as tl.f32, got {dtype!r}")
        return unary(OpKind.CAST, self, dtype=dtype)

    def __bool__(self) -> bool:
        raise _builder().fail(
            "a tile value has no truth value at trace time: Python 'if'/'while' on tiles cannot be traced; "
            "use tl.where(cond, a, b)"
        )

    def __iter__(self) -> Iterator:
        raise _builder().fail("tiles cannot be iterated at trace time; slice them with static indices instead")

    def __array__(self, *a: object, **k: object) -> None:
        raise _builder().fail("a traced tile is not a numpy array; use tl.* functions inside a kernel")

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def ndim(self) -> int:
        return len(self.shape)


class TileValue(_Operators):
    """A value computed inside a traced kernel."""

    def __init__(self, node: KOp | Param) -> None:
        self.node = node

    @property
    def type(self) -> TileType:
        return self.node.type if isinstance(self.node, KOp) else self.node.value_type

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    def __getitem__(self, index: object) -> TileValue:
        b = _builder()
        try:
            norm = normalize_index(index, self.shape)
        except KernelError as e:
            raise b.fail(str(e)) from None
        if is_full_index(norm, self.shape):
            return self
        return TileValue(b.emit(OpKind.SLICE, self.node, index=norm))

    def __repr__(self) -> str:
        return f"<traced {self.type}>"


class TileParam(_Operators):
    """A tile parameter of a traced kernel: indexing loads, item assignment stores."""

    def __init__(self, param: Param) -> None:
        assert isinstance(param.type, TileType)
        self.param = param
        self.shape = param.type.shape
        self.dtype = param.type.dtype

    def _index(self, index: object) -> object:
        b = _builder()
        try:
            norm = normalize_index(index, self.shape)
        except KernelError as e:
            raise b.fail(f"parameter {self.param.name!r}: {e}") from None
        return None if is_full_index(norm, self.shape) else norm

    def __getitem__(self, index: object) -> TileValue:
        return TileValue(_builder().load(self.param, self._index(index)))

    def __setitem__(self, index: object, value: object) -> None:
        b = _builder()
        norm = self._index(index)
        b.store(self.param, lift(value, self.dtype), index=norm)

    def __repr__(self) -> str:
        return f"<tile parameter {self.param.name}: {self.param.type}>"


def matmul(a: object, b: object, acc: DType | None = None) -> TileValue:
    """``a @ b`` for 2-D tiles, accumulating in ``acc`` (default: i32 for ints, f32 for floats)."""
    dt = _dtype_of(a) or _dtype_of(b)
    if dt is None:
        raise _builder().fail("matmul needs tile operands")
    acc = acc or default_accumulator(dt)
    return TileValue(_builder().emit(OpKind.MATMUL, lift(a, dt), lift(b, dt), acc=acc))


def reduce(kind: OpKind, x: object, axis: object) -> TileValue:
    dt = _dtype_of(x)
    b = _builder()
    if dt is None:
        raise b.fail(f"{kind.value} needs a tile operand")
    node = lift(x, dt)
    rank = len(node.type.shape) if isinstance(node, KOp) else 0
    if axis is None:
        axes = tuple(range(rank))
    else:
        items = axis if isinstance(axis, tuple) else (axis,)
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in items):
            raise b.fail(f"{kind.value}: axis must be an int, a tuple of ints or None, got {axis!r}")
        if not all(-rank <= a < rank for a in items):
            raise b.fail(f"{kind.value}: axis {axis!r} out of range for a tile of rank {rank}")
        axes = tuple(sorted({a % rank for a in items}))
    return TileValue(b.emit(kind, node, axes=axes))


def where(cond: object, a: object, b: object) -> TileValue:
    """Select; when both branches are Python numbers they take the dtype the condition compared."""
    bld = _builder()
    if not isinstance(cond, TileValue | TileParam):
        raise bld.fail("where: the condition must be a tile comparison such as x > 0")
    c = lift(cond, cond.dtype)
    like = _dtype_of(a) or _dtype_of(b) or _compared_dtype(c)
    if like is None:
        raise bld.fail("where needs a tile among its branches, or a condition that compares tiles")
    return TileValue(bld.emit(OpKind.WHERE, c, lift(a, like), lift(b, like)))


def _compared_dtype(cond: KOp | Param) -> DType | None:
    """The dtype of the values a comparison compared (None if ``cond`` is not a comparison)."""
    if isinstance(cond, KOp) and cond.kind in COMPARE:
        x = cond.operands[0]
        return x.type.dtype if isinstance(x, KOp) else x.value_type.dtype
    return None
