"""``@tl.kernel``, ``tl.extern_kernel`` and the tile functions used inside kernels."""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Sequence

from tilelang.errors import KernelError
from tilelang.frontend import tracing
from tilelang.frontend.source import annotations_of, definition_location, located
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import ExternKernel, Kernel, OpKind, Param
from tilelang.ir.types import TileType


def _params_of(fn: Callable, where: str) -> list[Param]:
    try:
        hints = annotations_of(fn)
    except Exception as e:  # noqa: BLE001 - any failure evaluating user annotations
        raise KernelError(located(f"kernel {fn.__name__!r}: cannot evaluate annotations: {e}", where)) from None
    params = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise KernelError(located(f"kernel {fn.__name__!r}: parameter {p.name!r} must be a plain positional parameter", where))
        if p.default is not p.empty:
            raise KernelError(located(
                f"kernel {fn.__name__!r}: parameter {p.name!r} has a default value ({p.default!r}); kernel parameters "
                f"take none, every call passes each one: remove '= {p.default!r}' and pass it at each call (or call "
                f"the kernel from a Python helper that supplies it)", where))
        t = hints.get(p.name)
        if not isinstance(t, TileType | DType):
            raise KernelError(
                located(
                    f"kernel {fn.__name__!r}: parameter {p.name!r} needs an annotation tl.Tile[shape, dtype] "
                    f"or a dtype such as tl.i32, got {t!r}",
                    where,
                )
            )
        params.append(Param(p.name, t))
    return params


def kernel(fn: Callable) -> Kernel:
    """Trace ``fn`` over symbolic tiles into a :class:`~tilelang.ir.kernel.Kernel`.

    Args:
        fn: a function whose parameters are annotated ``tl.Tile[shape, dtype]``
            (tiles in core memory) or a dtype (scalars). It writes its results
            into tile parameters and returns nothing.

    Returns:
        The kernel; callable on numpy arrays (reference semantics) and inside
        ``@tl.core`` bodies (a kernel invocation).

    Raises:
        KernelError: for wrong shapes or dtypes, naming the op and the line.
    """
    import inspect

    if not inspect.isfunction(fn):
        what = "a kernel already (tl.kernel applied twice?)" if isinstance(fn, Kernel) else type(fn).__name__
        raise KernelError(f"tl.kernel decorates a Python function (def ...), got {what}")
    where = definition_location(fn)
    params = _params_of(fn, where)
    builder = tracing.KernelBuilder(fn.__name__, params)
    args = [tracing.TileParam(p) if p.is_tile else tracing.TileValue(p) for p in params]
    with tracing.building(builder):
        try:
            result = fn(*args)
        except RecursionError:
            raise KernelError(located(
                f"kernel {fn.__name__!r}: tracing recursed past Python's limit (a helper that calls itself without "
                f"end?); the body runs once over symbolic tiles, so recursion must stop on Python values such as "
                f"sizes, never on tile values", where)) from None
    if result is not None:
        raise KernelError(located(f"kernel {fn.__name__!r} returns a value; write results into a tile parameter instead", where))
    k = Kernel(fn.__name__, tuple(params), tuple(builder.ops), source=where)
    if not k.written:
        raise KernelError(located(f"kernel {fn.__name__!r} writes none of its tile parameters (assign with c[...] = ...)", where))
    return k


def extern_kernel(
    name: str,
    params: Sequence[object],
    reference: Callable[..., object] | None = None,
    cycles: int | Callable[..., int] | None = None,
    object_file: str | None = None,
    writes: Sequence[str | int] | None = None,
) -> ExternKernel:
    """Declare a precompiled vendor kernel (C++ AIE API, linked by the vendor flow).

    Args:
        name: the kernel's symbol.
        params: its parameters, each a type (``tl.Tile[...]`` or a dtype,
            named p0, p1, ...) or a ``(name, type)`` pair.
        reference: numpy semantics, called like the kernel, writing outputs in place.
        cycles: cost of one call for the timing model: an int or a function of
            the call's arguments.
        object_file: the object file the vendor flow links.
        writes: which tile parameters it writes (names or positions); by
            default the last tile parameter, IRON's convention.

    Returns:
        An :class:`~tilelang.ir.kernel.ExternKernel`.

    Raises:
        KernelError: for malformed declarations.
    """
    ps: list[Param] = []
    for i, p in enumerate(params):
        if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
            ps.append(Param(p[0], p[1]))
        else:
            ps.append(Param(f"p{i}", p))  # type: ignore[arg-type]
    tiles = [p.name for p in ps if p.is_tile]
    if not tiles:
        raise KernelError(f"extern kernel {name!r} has no tile parameter")
    if writes is None:
        written = frozenset({tiles[-1]})
    else:
        names = []
        for w in writes:
            if isinstance(w, int) and not isinstance(w, bool):
                if not 0 <= w < len(ps):
                    raise KernelError(f"extern kernel {name!r}: writes position {w} out of range")
                names.append(ps[w].name)
            else:
                names.append(str(w))
        written = frozenset(names)
    if cycles is not None and not (isinstance(cycles, int) or callable(cycles)):
        raise KernelError(f"extern kernel {name!r}: cycles must be an int or a function, got {cycles!r}")
    return ExternKernel(name, tuple(ps), written, cycles, reference, object_file)


# -- functions usable inside kernels ------------------------------------------------


def maximum(a: object, b: object) -> tracing.TileValue:
    """Elementwise maximum."""
    return tracing.binary(OpKind.MAX, a, b)


def minimum(a: object, b: object) -> tracing.TileValue:
    """Elementwise minimum."""
    return tracing.binary(OpKind.MIN, a, b)


def exp(x: object) -> tracing.TileValue:
    """Elementwise e**x (float tiles)."""
    return tracing.unary(OpKind.EXP, x)


def sqrt(x: object) -> tracing.TileValue:
    """Elementwise square root (float tiles; NaN below zero, as numpy)."""
    return tracing.unary(OpKind.SQRT, x)


def rsqrt(x: object) -> tracing.TileValue:
    """Elementwise 1 / sqrt(x) (float tiles): the square root, then its reciprocal, each rounded."""
    return tracing.unary(OpKind.RSQRT, x)


def tanh(x: object) -> tracing.TileValue:
    """Elementwise hyperbolic tangent (float tiles)."""
    return tracing.unary(OpKind.TANH, x)


def relu(x: object) -> tracing.TileValue:
    """Elementwise max(x, 0)."""
    return tracing.unary(OpKind.RELU, x)


def abs(x: object) -> tracing.TileValue:  # noqa: A001 - mirrors numpy's name
    """Elementwise absolute value."""
    if isinstance(x, tracing.TileValue | tracing.TileParam):
        return tracing.unary(OpKind.ABS, x)
    return builtins.abs(x)  # type: ignore[arg-type, return-value]


def sum(x: object, axis: int | tuple[int, ...] | None = None) -> tracing.TileValue:  # noqa: A001
    """Sum over ``axis`` (all axes when None); ints wrap, floats accumulate exactly then round."""
    return tracing.reduce(OpKind.SUM, x, axis)


def max(x: object, axis: int | tuple[int, ...] | None = None) -> tracing.TileValue:  # noqa: A001
    """Maximum over ``axis`` (all axes when None)."""
    return tracing.reduce(OpKind.RMAX, x, axis)


def min(x: object, axis: int | tuple[int, ...] | None = None) -> tracing.TileValue:  # noqa: A001
    """Minimum over ``axis`` (all axes when None)."""
    return tracing.reduce(OpKind.RMIN, x, axis)


def where(cond: object, a: object, b: object) -> tracing.TileValue:
    """Elementwise ``a`` where ``cond`` holds, else ``b``."""
    return tracing.where(cond, a, b)


def matmul(a: object, b: object, acc: DType | None = None) -> tracing.TileValue:
    """2-D matmul accumulating in ``acc`` (i32 for integer tiles, f32 for float tiles by default)."""
    return tracing.matmul(a, b, acc)
