"""Tracing a kernel body over symbolic tiles into kernel IR.

The user's function runs once over proxies (:class:`TileValue` for values,
:class:`TileParam` for tile parameters); each operator appends an op to the
current :class:`KernelBuilder`. Python control flow runs at trace time.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from typing import NoReturn

import numpy as np

from tilelang.errors import KernelError
from tilelang.frontend.builder import current_core
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
        # numpy's views: a tile read from a parameter (``x = c[0:4]``) is a view of it in numpy, so a later
        # write to the region it reads changes it there; the traced value keeps what was read. Such a use is
        # refused. Per parameter, the elements (flat positions) each store wrote, in order; per read value (and
        # slices of it), its parameter, the stores before it and the positions it reads.
        self._stores: dict[str, list[np.ndarray]] = {}
        self._views: dict[int, tuple[Param, int, np.ndarray, object]] = {}

    def emit(self, kind: OpKind, *operands: object, **attrs: object) -> KOp:
        """Append one op; a type error becomes a KernelError at the user's line."""
        for x in operands:
            if isinstance(x, KOp) and id(x) in self._views:
                self._check_fresh(x)
        try:
            op = KOp.make(kind, *operands, **attrs)
        except KernelError as e:
            raise KernelError(located(f"in kernel {self.name!r}: {e}", user_location())) from None
        self.ops.append(op)
        if kind is OpKind.SLICE and isinstance(operands[0], KOp) and id(operands[0]) in self._views:
            param, n, ids, _ = self._views[id(operands[0])]
            self._views[id(op)] = (param, n, ids[_np_index(attrs["index"])], "slice")
        return op

    def load(self, param: Param, index: object = None) -> KOp:
        if index is None:
            cached = self._full_loads.get(param.name)
            if cached is None:
                cached = self.emit(OpKind.LOAD, param)
                self._full_loads[param.name] = cached
                self._view(cached, param, None)
            return cached
        op = self.emit(OpKind.LOAD, param, index=index)
        self._view(op, param, index)
        return op

    def store(self, param: Param, value: object, index: object = None) -> None:
        self.emit(OpKind.STORE, param, value, index=index)
        self._full_loads.pop(param.name, None)
        if isinstance(param.type, TileType):
            self._stores.setdefault(param.name, []).append(_positions(param, index).ravel())

    def view_of(self, op: KOp) -> tuple[Param, object] | str | None:
        """(parameter, index) when ``op`` reads a parameter's region (a numpy view), "slice" when it is a slice
        of such a read, else None."""
        got = self._views.get(id(op))
        return None if got is None else "slice" if got[3] == "slice" else (got[0], got[3])

    def _view(self, op: KOp, param: Param, index: object) -> None:
        if isinstance(param.type, TileType):
            self._views[id(op)] = (param, len(self._stores.get(param.name, [])), _positions(param, index), index)

    def _check_fresh(self, op: KOp) -> None:
        param, n, ids, _ = self._views[id(op)]
        later = self._stores.get(param.name, [])[n:]
        if any(np.intersect1d(ids.ravel(), w).size for w in later):
            raise self.fail(
                f"a tile read from parameter {param.name!r} is used after {param.name!r} was written where it reads; "
                f"in numpy the read is a view and would see the new values, here it keeps the old ones: use it "
                f"before the write, or read {param.name!r} again after it"
            )

    def fail(self, message: str) -> KernelError:
        return KernelError(located(f"in kernel {self.name!r}: {message}", user_location()))


def _np_index(index: object) -> tuple:
    """A normalized kernel index (``ir.index``) as a numpy index."""
    return tuple(slice(*it) if isinstance(it, tuple) else it for it in index)  # type: ignore[union-attr]


def _positions(param: Param, index: object) -> np.ndarray:
    """The flat positions of a parameter's elements an index reads or writes, in the region's shape."""
    shape = param.type.shape  # type: ignore[union-attr]
    ids = np.arange(math.prod(shape)).reshape(shape)
    return ids if index is None else ids[_np_index(index)]


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
        core = current_core()
        where = f" (here core {core.name!r} is traced: call a kernel that does it)" if core is not None else ""
        raise KernelError(located(
            f"tile operations (tile arithmetic and tl.exp, tl.sum, tl.where, ...) are only valid while a "
            f"@tl.kernel function is traced{where}", user_location()))
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
        if not math.isfinite(float(x)):
            if like.is_int:
                raise b.fail(f"constant {x!r} is not a finite number but the other operand is {like}")
            return b.emit(OpKind.CONST, value=float(x), dtype=like)
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
    "min": "use tl.min(x, axis=...)",
    "mean": "use tl.sum(x, axis=...) / n",
    "T": "a kernel cannot transpose; lay the data out as needed in the access pattern of its tl.dma",
    "transpose": "a kernel cannot transpose; lay the data out as needed in the access pattern of its tl.dma",
    "reshape": "tiles keep their declared shape; declare the parameter (and fifo element) in the shape you need",
    "flatten": "tiles keep their declared shape; declare the parameter (and fifo element) in the shape you need",
    "ravel": "tiles keep their declared shape; declare the parameter (and fifo element) in the shape you need",
    "clip": "use tl.minimum(tl.maximum(x, lo), hi)",
    "dot": "use x @ y",
    "exp": "use tl.exp(x)",
    "sqrt": "use tl.sqrt(x)",
    "tanh": "use tl.tanh(x)",
    "copy": "use the value itself (kernel values are immutable)",
}

#: numpy functions users call on tiles (``np.sum(x)``) that the habits above do not name, and what to write.
_NUMPY_FUNCTIONS = {
    "amax": "use tl.max(x, axis=...)",
    "maximum": "use tl.maximum(a, b)",
    "minimum": "use tl.minimum(a, b)",
    "where": "use tl.where(cond, a, b)",
    "abs": "use abs(x)",
    "absolute": "use abs(x)",
    "matmul": "use x @ y",
    "negative": "use -x",
}

#: numpy ufuncs that are a tile operator: ``np.float32(2) + x`` reaches the tile as ``np.add`` and traces as ``+``.
_UFUNC_OPERATORS = {
    "add": OpKind.ADD,
    "subtract": OpKind.SUB,
    "multiply": OpKind.MUL,
    "divide": OpKind.DIV,
    "less": OpKind.LT,
    "less_equal": OpKind.LE,
    "greater": OpKind.GT,
    "greater_equal": OpKind.GE,
    "equal": OpKind.EQ,
    "not_equal": OpKind.NE,
}


def _numpy_function(name: str) -> KernelError:
    """The error for numpy's ``np.<name>`` given a traced tile, saying what a kernel writes instead."""
    advice = _NUMPY_FUNCTIONS.get(name) or _NUMPY_HABITS.get(name) or (
        "use tile arithmetic and the tl.* functions (tl.sum, tl.max, tl.exp, tl.maximum, tl.where, ...)")
    return _builder().fail(f"numpy's np.{name} cannot take a traced tile (a kernel body is traced over symbolic "
                           f"tiles, not run on arrays): {advice}")

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

    def __array_function__(self, func: object, types: object, args: object, kwargs: object) -> NoReturn:
        raise _numpy_function(getattr(func, "__name__", repr(func)))

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: object, **kwargs: object) -> TileValue:
        kind = _UFUNC_OPERATORS.get(ufunc.__name__)
        if kind is not None and method == "__call__" and not kwargs and len(inputs) == 2:
            return binary(kind, *inputs)
        raise _numpy_function(ufunc.__name__)

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

    # In place, as numpy: the Python object takes the new value (every name bound to it sees it), and a tile
    # read from a parameter (a numpy view) writes the parameter's region too.
    def _inplace(self, kind: OpKind, o: object, symbol: str) -> TileValue:
        b = _builder()
        new = binary(kind, self, o)
        view = b.view_of(self.node) if isinstance(self.node, KOp) else None
        if view is not None:
            if view == "slice":
                raise b.fail(f"'{symbol}=' on a slice of a tile read from a parameter: numpy would write the "
                             f"parameter through the view; write the parameter's region instead (c[i:j] = ...)")
            param, index = view
            b.store(param, lift(new, param.type.dtype), index=index)  # type: ignore[union-attr]
        self.node = new.node
        return self

    def __iadd__(self, o: object) -> TileValue:
        return self._inplace(OpKind.ADD, o, "+")

    def __isub__(self, o: object) -> TileValue:
        return self._inplace(OpKind.SUB, o, "-")

    def __imul__(self, o: object) -> TileValue:
        return self._inplace(OpKind.MUL, o, "*")

    def __itruediv__(self, o: object) -> TileValue:
        return self._inplace(OpKind.DIV, o, "/")

    def __imatmul__(self, o: object) -> TileValue:
        raise _builder().fail("'@=' has no in-place form (numpy refuses it too); write c[...] = c @ x")


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
        node = lift(value, self.dtype)
        last = b.ops[-1] if b.ops else None
        if (last is not None and last.kind is OpKind.STORE and last.operands[0] is self.param
                and last.operands[1] is node and last.attr("index") == norm):
            return  # ``c[i] += x``: the in-place add on the view stored it already
        b.store(self.param, node, index=norm)

    def __repr__(self) -> str:
        return f"<tile parameter {self.param.name}: {self.param.type}>"

    # In place, as numpy: ``c += x`` writes the parameter (without these, Python would rebind the name ``c``
    # to the sum and the kernel would store nothing).
    def _inplace(self, kind: OpKind, o: object) -> TileParam:
        _builder().store(self.param, lift(binary(kind, self, o), self.dtype))
        return self

    def __iadd__(self, o: object) -> TileParam:
        return self._inplace(OpKind.ADD, o)

    def __isub__(self, o: object) -> TileParam:
        return self._inplace(OpKind.SUB, o)

    def __imul__(self, o: object) -> TileParam:
        return self._inplace(OpKind.MUL, o)

    def __itruediv__(self, o: object) -> TileParam:
        return self._inplace(OpKind.DIV, o)

    def __imatmul__(self, o: object) -> TileParam:
        raise _builder().fail("'@=' has no in-place form (numpy refuses it too); write c[...] = c @ x")


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
        if len({a % rank for a in items}) != len(items):
            raise b.fail(f"{kind.value}: duplicate value in 'axis' {axis!r} (as numpy refuses it); name each axis once")
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
