"""Lowering rules for one element: the meaning of every elementwise op in arith/math.

Each rule builds the scalar code of one op kind at the current insertion point
(inside a ``linalg.generic`` body, or at function level for rank-0 values). The
rules follow ``tilelang/ir/semantics.py`` exactly:

- integers wrap (``arith.addi``/``subi``/``muli`` have no overflow flags);
- integer ``div`` truncates toward zero, a zero divisor gives 0 and
  ``MIN / -1`` wraps to ``MIN`` (``arith.divsi`` alone is undefined there);
- bf16 is computed in f32 and rounded once per op (``arith.extf`` ... ``arith.truncf``,
  round to nearest even);
- float -> int casts truncate toward zero, saturate and send NaN to 0 (a plain
  ``arith.fptosi`` is poison out of range, so the input is clamped first);
- float max/min propagate NaN as numpy's ``maximum``/``minimum`` do (``arith.maximumf``).

Registration follows JAX Pallas' ``register_lowering_rule``: ``RULES[kind]``.
"""

from __future__ import annotations

from collections.abc import Callable

from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.types import compute_type, scalar_type
from tilelang.ir.dtypes import DType, f32
from tilelang.ir.ops import OpKind

#: (operand values, operand dtypes, result dtype, the op's attributes) -> result value.
ScalarRule = Callable[[list, list[DType], DType, dict], object]
RULES: dict[OpKind, ScalarRule] = {}


def register(*kinds: OpKind) -> Callable[[ScalarRule], ScalarRule]:
    """Register ``fn`` as the scalar lowering of ``kinds``."""

    def deco(fn: ScalarRule) -> ScalarRule:
        for k in kinds:
            RULES[k] = fn
        return fn

    return deco


# -- helpers -------------------------------------------------------------------------


def const(dt: DType, value: int | float) -> object:
    """An ``arith.constant`` of ``dt`` (bool as i1)."""
    m = mlir()
    t = scalar_type(dt)
    if dt.is_float:
        return m.arith.constant(t, float(value))
    return m.arith.constant(t, int(value))


def const_compute(dt: DType, value: float) -> object:
    """A constant in ``dt``'s compute type (f32 for bf16)."""
    return const(f32 if dt.name == "bf16" else dt, value)


def widen(x: object, dt: DType) -> object:
    """``x`` of dtype ``dt`` in its compute type (bf16 -> f32, exactly)."""
    if dt.name == "bf16":
        return mlir().arith.extf(compute_type(dt), x)
    return x


def narrow(x: object, dt: DType) -> object:
    """A compute-type value rounded back to ``dt`` (f32 -> bf16, nearest even)."""
    if dt.name == "bf16":
        return mlir().arith.truncf(scalar_type(dt), x)
    return x


# -- binary arithmetic -----------------------------------------------------------------


def _int_div(x: object, y: object, dt: DType) -> object:
    """Truncating division; 0 for a zero divisor; MIN / -1 wraps to MIN (as numpy's int64 then astype)."""
    a = mlir().arith
    zero, one, minus_one = const(dt, 0), const(dt, 1), const(dt, -1)
    is_zero = a.cmpi(a.CmpIPredicate.eq, y, zero)
    is_minus_one = a.cmpi(a.CmpIPredicate.eq, y, minus_one)
    safe = a.select(a.ori(is_zero, is_minus_one), one, y)
    q = a.divsi(x, safe)
    q = a.select(is_minus_one, a.subi(zero, x), q)
    return a.select(is_zero, zero, q)


_INT_BINARY = {
    OpKind.ADD: "addi",
    OpKind.SUB: "subi",
    OpKind.MUL: "muli",
    OpKind.MAX: "maxsi",
    OpKind.MIN: "minsi",
}
_FLOAT_BINARY = {
    OpKind.ADD: "addf",
    OpKind.SUB: "subf",
    OpKind.MUL: "mulf",
    OpKind.DIV: "divf",
    OpKind.MAX: "maximumf",
    OpKind.MIN: "minimumf",
}


def binary(kind: OpKind, x: object, y: object, dt: DType) -> object:
    """``x kind y`` in ``dt`` by the IR's rules."""
    a = mlir().arith
    if dt.is_int:
        if kind is OpKind.DIV:
            return _int_div(x, y, dt)
        return getattr(a, _INT_BINARY[kind])(x, y)
    r = getattr(a, _FLOAT_BINARY[kind])(widen(x, dt), widen(y, dt))
    return narrow(r, dt)


def _binary_rule(kind: OpKind) -> ScalarRule:
    def rule(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
        return binary(kind, args[0], args[1], out)

    return rule


for _k in _FLOAT_BINARY:
    RULES[_k] = _binary_rule(_k)


# -- unary -------------------------------------------------------------------------------


@register(OpKind.NEG)
def _neg(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    a = mlir().arith
    if out.is_int:
        return a.subi(const(out, 0), args[0])
    return narrow(a.negf(widen(args[0], out)), out)


@register(OpKind.ABS)
def _abs(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    m = mlir()
    if out.is_int:
        return m.math.absi(args[0])  # |MIN| wraps to MIN, as numpy's abs does
    return narrow(m.math.absf(widen(args[0], out)), out)


@register(OpKind.EXP)
def _exp(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    return narrow(mlir().math.exp(widen(args[0], out)), out)


@register(OpKind.SQRT)
def _sqrt(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    return narrow(mlir().math.sqrt(widen(args[0], out)), out)


@register(OpKind.RSQRT)
def _rsqrt(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    # the square root, then its reciprocal, each rounded (numpy's 1 / np.sqrt(x); math.rsqrt lowers the same)
    return narrow(mlir().arith.divf(const_compute(out, 1.0), mlir().math.sqrt(widen(args[0], out))), out)


@register(OpKind.TANH)
def _tanh(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    return narrow(mlir().math.tanh(widen(args[0], out)), out)


@register(OpKind.RELU)
def _relu(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    a = mlir().arith
    if out.is_int:
        return a.maxsi(args[0], const(out, 0))
    return narrow(a.maximumf(widen(args[0], out), const_compute(out, 0.0)), out)


# -- casts ---------------------------------------------------------------------------------


def _float_to_int(x: object, src: DType, dst: DType) -> object:
    """Truncate toward zero, saturate at ``dst``'s range, NaN -> 0 (semantics.cast)."""
    a = mlir().arith
    x = widen(x, src)  # bf16 -> f32 is exact
    lo, hi = -(1 << (dst.bits - 1)), (1 << (dst.bits - 1)) - 1
    limit = const(f32, float(1 << (dst.bits - 1)))  # 2**(bits-1): exact in f32
    is_nan = a.cmpf(a.CmpFPredicate.UNO, x, x)
    too_big = a.cmpf(a.CmpFPredicate.OGE, x, limit)
    # Clamp below at -2**(bits-1) (exact) and give fptosi only in-range input,
    # so no lane is ever poison.
    low = a.maximumf(x, const(f32, float(lo)))
    safe = a.select(a.ori(is_nan, too_big), const(f32, 0.0), low)
    r = a.fptosi(scalar_type(dst), safe)
    r = a.select(too_big, const(dst, hi), r)
    return a.select(is_nan, const(dst, 0), r)


def cast(x: object, src: DType, dst: DType) -> object:
    """``x`` converted from ``src`` to ``dst`` by ``semantics.cast``."""
    a = mlir().arith
    if src == dst:
        return x
    if src.kind == "bool":
        if dst.is_int:
            return a.extui(scalar_type(dst), x)
        return narrow(a.uitofp(compute_type(dst), x), dst)
    if src.is_int and dst.is_int:
        if dst.bits > src.bits:
            return a.extsi(scalar_type(dst), x)
        return a.trunci(scalar_type(dst), x)
    if src.is_int:
        # int -> bf16 goes through f32 (numpy: astype(float32).astype(bfloat16)).
        return narrow(a.sitofp(compute_type(dst), x), dst)
    if dst.is_int:
        return _float_to_int(x, src, dst)
    if dst.name == "bf16":
        return a.truncf(scalar_type(dst), x)
    return a.extf(scalar_type(dst), x)


@register(OpKind.CAST)
def _cast(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    return cast(args[0], dts[0], out)


# -- comparisons and select -------------------------------------------------------------------

_INT_PRED = {OpKind.LT: "slt", OpKind.LE: "sle", OpKind.GT: "sgt", OpKind.GE: "sge", OpKind.EQ: "eq", OpKind.NE: "ne"}
_BOOL_PRED = {OpKind.LT: "ult", OpKind.LE: "ule", OpKind.GT: "ugt", OpKind.GE: "uge", OpKind.EQ: "eq", OpKind.NE: "ne"}
# Ordered predicates are false on NaN, ``une`` is true on NaN: numpy's less/equal/not_equal.
_FLOAT_PRED = {
    OpKind.LT: "OLT",
    OpKind.LE: "OLE",
    OpKind.GT: "OGT",
    OpKind.GE: "OGE",
    OpKind.EQ: "OEQ",
    OpKind.NE: "UNE",
}


def compare(kind: OpKind, x: object, y: object, dt: DType) -> object:
    """``x kind y`` as an i1."""
    a = mlir().arith
    if dt.is_float:
        pred = getattr(a.CmpFPredicate, _FLOAT_PRED[kind])
        return a.cmpf(pred, widen(x, dt), widen(y, dt))
    table = _BOOL_PRED if dt.kind == "bool" else _INT_PRED
    return a.cmpi(getattr(a.CmpIPredicate, table[kind]), x, y)


def _compare_rule(kind: OpKind) -> ScalarRule:
    def rule(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
        return compare(kind, args[0], args[1], dts[0])

    return rule


for _k in _INT_PRED:
    RULES[_k] = _compare_rule(_k)


@register(OpKind.WHERE)
def _where(args: list, dts: list[DType], out: DType, attrs: dict) -> object:
    return mlir().arith.select(args[0], args[1], args[2])


# -- reductions: combining one element into an accumulator --------------------------------------


def accumulator_dtype(kind: OpKind, dt: DType) -> DType:
    """The dtype a reduction of ``dt`` accumulates in: floats in f32 (bf16 rounds once at the end), ints wrap in ``dt``."""
    return f32 if dt.is_float else dt


def reduce_init(kind: OpKind, dt: DType) -> object:
    """The identity of a reduction: 0 for sum, -inf / MIN for max, +inf / MAX for min."""
    acc = accumulator_dtype(kind, dt)
    if kind is OpKind.SUM:
        return const(acc, 0.0 if acc.is_float else 0)
    if kind is OpKind.RMIN:
        return const(acc, float("inf")) if acc.is_float else const(acc, (1 << (acc.bits - 1)) - 1)
    if acc.is_float:
        return const(acc, float("-inf"))
    return const(acc, -(1 << (acc.bits - 1)))


def reduce_step(kind: OpKind, acc: object, x: object, dt: DType) -> object:
    """``acc (+|max|min) x`` with ``x`` of dtype ``dt`` widened to the accumulator."""
    a = mlir().arith
    x = widen(x, dt)
    if kind is OpKind.SUM:
        return a.addf(acc, x) if dt.is_float else a.addi(acc, x)
    if kind is OpKind.RMIN:
        return a.minimumf(acc, x) if dt.is_float else a.minsi(acc, x)
    return a.maximumf(acc, x) if dt.is_float else a.maxsi(acc, x)


__all__ = [
    "RULES",
    "accumulator_dtype",
    "binary",
    "cast",
    "compare",
    "const",
    "narrow",
    "reduce_init",
    "reduce_step",
    "widen",
]
