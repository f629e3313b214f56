"""Kernel bodies in MLIR: run_kernel (ExecutionEngine) equals the kernel's numpy semantics.

Random kernels are built directly as IR (every op kind, shapes with
broadcasting, slices, partial stores, stores over memory still being read).
Integers and exact float ops must agree bit for bit; float sums, matmuls and
exp within docs/ir.md's tolerance (1e-5 relative for f32, 1e-2 for bf16),
relative to the magnitude of the terms summed.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilelang as tl
from tilelang.backends.mlir import kernel_mlir, run_kernel
from tilelang.ir.dtypes import i1
from tilelang.ir.index import broadcast_shapes
from tilelang.ir.kernel import Kernel, KOp, Param
from tilelang.ir.ops import OpKind
from tilelang.ir.types import TileType

INTS = [tl.i8, tl.i16, tl.i32]
FLOATS = [tl.bf16, tl.f32]
ALL = INTS + FLOATS


# -- helpers ---------------------------------------------------------------------------------


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dt) -> np.ndarray:
    if dt.is_int:
        info = np.iinfo(dt.numpy)
        # Mostly small values (so products and quotients are interesting), some extremes.
        small = rng.integers(-9, 10, size=shape)
        big = rng.integers(info.min, info.max, size=shape, endpoint=True)
        pick = rng.random(shape) < 0.25
        return np.where(pick, big, small).astype(dt.numpy)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -3e9], np.float32)
    pick = rng.random(shape) < 0.1
    x = np.where(pick, rng.choice(specials, size=shape), x).astype(np.float32)
    return x.astype(dt.numpy)


def run_both(kernel: Kernel, inputs: dict[str, np.ndarray | int | float]) -> tuple[dict, dict]:
    """The written parameters after run_kernel and after the numpy semantics, from equal inputs."""
    got = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    want = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    run_kernel(kernel, **got)
    kernel(**want)
    return {k: got[k] for k in kernel.written}, {k: want[k] for k in kernel.written}


def assert_exact(got: np.ndarray, want: np.ndarray) -> None:
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:  # equal values, NaN where NaN; +0.0 == -0.0
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


def test_a_bf16_scalar_runs_beside_a_bf16_loop_on_the_host() -> None:
    """A bf16 scalar stored beside a bf16 loop (the shrunk example hypothesis found): passed by value as
    bf16, LLVM's x86 back end called __truncsfbf2, which the JIT could not resolve ("Unknown function")."""
    t = tl.Tile[(3, 4), tl.bf16]

    @tl.kernel
    def neg_then_scalar(a: t, c: t, s: tl.bf16):
        c[...] = -a
        c[0:1, 0:1] = s

    a = np.arange(12, dtype=np.float32).reshape(3, 4).astype(ml_dtypes.bfloat16)
    got, want = run_both(neg_then_scalar, {"a": a, "c": np.zeros((3, 4), ml_dtypes.bfloat16), "s": 2.5})
    assert_exact(got["c"], want["c"])
    assert float(got["c"][0, 0]) == 2.5


def test_a_bf16_where_of_bf16_values_runs_on_the_host() -> None:
    """tl.where choosing between bf16 values, then their maximum (the shrunk example hypothesis found:
    max(where(s <= s, a, b[0]))): the select of two bf16 registers made x86 code call __truncsfbf2, which
    the JIT does not have."""
    t = tl.Tile[(5,), tl.bf16]

    @tl.kernel
    def pick(a: t, b: t, c: t, s: tl.bf16):
        c[...] = tl.where(s <= s, a, b[0])
        c[0:1] = tl.max(tl.where(s <= s, a, b[0]))

    a = np.array([1.5, -2.0, np.nan, 0.0, 3e30], np.float32).astype(ml_dtypes.bfloat16)
    b = np.array([-7.25, 1, 2, 3, 4], np.float32).astype(ml_dtypes.bfloat16)
    for s in (2.5, float("nan")):  # NaN <= NaN is false: c is b[0] everywhere
        got, want = run_both(pick, {"a": a, "b": b, "c": np.zeros(5, ml_dtypes.bfloat16), "s": s})
        assert_exact(got["c"], want["c"])
    assert_exact(got["c"], np.full(5, -7.25, np.float32).astype(ml_dtypes.bfloat16))


# -- random kernels over the exact ops ----------------------------------------------------------


EXACT_INT_KINDS = [
    OpKind.ADD,
    OpKind.SUB,
    OpKind.MUL,
    OpKind.DIV,
    OpKind.MAX,
    OpKind.MIN,
    OpKind.NEG,
    OpKind.ABS,
    OpKind.RELU,
]
# Float division is left out of random chains: numpy's maximum picks the sign of
# a zero differently in its SIMD and scalar loops, and 1/±0 would expose it.
EXACT_FLOAT_KINDS = [OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.MAX, OpKind.MIN, OpKind.NEG, OpKind.ABS, OpKind.RELU]
COMPARES = [OpKind.LT, OpKind.LE, OpKind.GT, OpKind.GE, OpKind.EQ, OpKind.NE]


class Builder:
    """Draws a random well-typed kernel body."""

    def __init__(self, data: st.DataObject, dt, shape: tuple[int, ...], integer: bool) -> None:
        self.data, self.dt, self.shape, self.integer = data, dt, shape, integer
        bshape = data.draw(st.sampled_from([shape, shape[1:] or (1,), tuple(1 for _ in shape)]), label="b shape")
        self.a = Param("a", TileType(shape, dt))
        self.b = Param("b", TileType(bshape, dt))
        self.s = Param("s", dt)
        self.c = Param("c", TileType(shape, dt))
        self.d = Param("d", TileType(shape, tl.i32 if integer else tl.f32))
        self.ops: list[KOp] = []
        self.pool: list[KOp | Param] = []

    def emit(self, kind: OpKind, *operands: object, **attrs: object) -> KOp:
        op = KOp.make(kind, *operands, **attrs)
        self.ops.append(op)
        self.pool.append(op)
        return op

    def pick(self, dt=None, rank_min: int = 0, like: tuple[int, ...] | None = None) -> KOp | Param | None:
        """A pool value (of ``dt``, rank >= rank_min, broadcasting with shape ``like``); a constant if none."""
        cands = [
            v
            for v in self.pool
            if self.dtype(v) == (dt or self.dtype(v))
            and len(self.shape_of(v)) >= rank_min
            and (like is None or broadcast_shapes(like, self.shape_of(v)) is not None)
        ]
        if not cands:
            return self.constant(dt) if dt is not None else None
        return self.data.draw(st.sampled_from(cands))

    def constant(self, dt) -> KOp:
        if dt.is_int:
            info = np.iinfo(dt.numpy)
            v = self.data.draw(st.sampled_from([0, 1, -1, 2, 7, int(info.min), int(info.max)]))
            return self.emit(OpKind.CONST, value=v, dtype=dt)
        v = self.data.draw(st.sampled_from([0.0, -0.0, 1.5, -2.0, 1e30, float("inf"), float("nan")]))
        return self.emit(OpKind.CONST, value=v, dtype=dt)

    @staticmethod
    def dtype(v: KOp | Param):
        t = v.type if isinstance(v, KOp) else v.value_type
        return t.dtype

    @staticmethod
    def shape_of(v: KOp | Param) -> tuple[int, ...]:
        t = v.type if isinstance(v, KOp) else v.value_type
        return t.shape

    def step(self) -> None:
        d = self.data
        kinds = EXACT_INT_KINDS if self.integer else EXACT_FLOAT_KINDS
        choice = d.draw(
            st.sampled_from(
                [
                    "unary",
                    "binary",
                    "binary",
                    "where",
                    "cast",
                    "slice",
                    "reduce",
                    "load",
                    "store",
                    "matmul",
                    "accumulate",
                ]
            )
        )
        if choice == "load":
            p = d.draw(st.sampled_from([self.a, self.b, self.c]))
            self.load(p)
        elif choice == "binary":
            x = self.pick(rank_min=0)
            dt = self.dtype(x)
            if dt == i1:
                return
            kind = d.draw(st.sampled_from([k for k in kinds if k not in (OpKind.NEG, OpKind.ABS, OpKind.RELU)]))
            if not dt.is_int and kind is OpKind.DIV:
                return
            y = self.pick(dt, like=self.shape_of(x))
            self.emit(kind, *d.draw(st.permutations([x, y])))
        elif choice == "unary":
            x = self.pick()
            if self.dtype(x) == i1:
                return
            self.emit(d.draw(st.sampled_from([OpKind.NEG, OpKind.ABS, OpKind.RELU])), x)
        elif choice == "where":
            x = self.pick()
            dt = self.dtype(x)
            if dt == i1:
                return
            cond = self.emit(d.draw(st.sampled_from(COMPARES)), x, self.pick(dt, like=self.shape_of(x)))
            yes = self.pick(dt, like=self.shape_of(cond))
            no = self.pick(dt, like=broadcast_shapes(self.shape_of(cond), self.shape_of(yes)))
            self.emit(OpKind.WHERE, cond, yes, no)
        elif choice == "cast":
            x = self.pick()
            if self.dtype(x) == i1:
                return
            to = d.draw(st.sampled_from(ALL))
            self.emit(OpKind.CAST, x, dtype=to)
        elif choice == "slice":
            x = self.pick(rank_min=1)
            if not isinstance(x, KOp):
                return
            index = tuple(self.index_item(n) for n in self.shape_of(x))
            if all(isinstance(i, int) for i in index):
                return
            self.emit(OpKind.SLICE, x, index=index)
        elif choice == "reduce":
            x = self.pick(rank_min=1)
            if x is None or self.dtype(x) == i1:
                return
            rank = len(self.shape_of(x))
            axes = tuple(sorted(d.draw(st.sets(st.integers(0, rank - 1), max_size=rank))))
            # float sums round in loop order (checked against a tolerance below); a cast
            # can bring floats into an integer kernel too
            exact_sum = self.integer and self.dtype(x).is_int
            kind = d.draw(st.sampled_from([OpKind.SUM, OpKind.RMAX, OpKind.RMIN] if exact_sum else [OpKind.RMAX, OpKind.RMIN]))
            self.emit(kind, x, axes=axes)
        elif choice in ("matmul", "accumulate"):
            if self.integer:  # float matmuls are checked against a tolerance below
                self.matmul(accumulate=choice == "accumulate")
        else:
            self.partial_store()

    def matmul(self, accumulate: bool) -> None:
        """``x @ y`` (any accumulator that holds the operands), or ``c[...] += x @ y`` in c's dtype."""
        d = self.data
        x = self.pick(rank_min=2)
        # integer operands only: a float matmul (say of a cast) rounds in loop order
        if x is None or len(self.shape_of(x)) != 2 or not self.dtype(x).is_int:
            return
        dt, (_, k) = self.dtype(x), self.shape_of(x)
        ys = [v for v in self.pool if self.dtype(v) == dt and len(self.shape_of(v)) == 2 and self.shape_of(v)[0] == k]
        if not ys:
            return
        y = d.draw(st.sampled_from(ys))
        if accumulate:
            if not (self.dtype(self.c) == dt and (self.shape_of(x)[0], self.shape_of(y)[1]) == self.shape):
                return
            mm = self.emit(OpKind.MATMUL, x, y, acc=dt if dt.is_int or dt.name == "f32" else tl.f32)
            if self.dtype(mm) != dt:
                return
            old = self.emit(OpKind.LOAD, self.c)
            total = self.emit(OpKind.ADD, *d.draw(st.permutations([old, mm])))
            self.ops.append(KOp.make(OpKind.STORE, self.c, total))
            return
        accs = [a for a in ALL if a.kind == dt.kind and a.bits >= dt.bits]
        self.emit(OpKind.MATMUL, x, y, acc=d.draw(st.sampled_from(accs)))

    def index_item(self, n: int) -> object:
        d = self.data
        if d.draw(st.booleans()):
            return d.draw(st.integers(0, n - 1))
        start = d.draw(st.integers(0, n - 1))
        stop = d.draw(st.integers(start + 1, n))
        return (start, stop, d.draw(st.integers(1, 2)))

    def load(self, p: Param) -> KOp:
        if self.data.draw(st.booleans()):
            return self.emit(OpKind.LOAD, p)
        index = tuple(self.index_item(n) for n in p.type.shape)
        return self.emit(OpKind.LOAD, p, index=index)

    def partial_store(self) -> None:
        """Store into a region of c a value of c's dtype that fits it."""
        index = tuple(self.index_item(n) for n in self.shape)
        region = tuple(len(range(*i)) for i in index if isinstance(i, tuple))
        fits = [v for v in self.pool if self.dtype(v) == self.dt and _fits(self.shape_of(v), region)]
        if not fits:
            return
        value = self.data.draw(st.sampled_from(fits))
        self.ops.append(KOp.make(OpKind.STORE, self.c, value, index=index))

    def finish(self) -> Kernel:
        last = next(
            (v for v in reversed(self.pool) if self.shape_of(v) == self.shape or _fits(self.shape_of(v), self.shape)),
            None,
        )
        for target in (self.c, self.d):
            v = self.data.draw(st.sampled_from([x for x in self.pool if _fits(self.shape_of(x), self.shape)] or [last]))
            if v is None:
                continue
            if self.dtype(v) != target.type.dtype:
                v = self.emit(OpKind.CAST, v, dtype=target.type.dtype)
            self.ops.append(KOp.make(OpKind.STORE, target, v))
        return Kernel("random_kernel", (self.a, self.b, self.s, self.c, self.d), tuple(self.ops))


def _fits(shape: tuple[int, ...], region: tuple[int, ...]) -> bool:
    return broadcast_shapes(shape, region) == region


def random_kernel(data: st.DataObject, integer: bool) -> Kernel:
    dt = data.draw(st.sampled_from(INTS if integer else FLOATS), label="dtype")
    shape = data.draw(st.sampled_from([(1,), (5,), (3, 4), (3, 3), (2, 1, 3)]), label="shape")
    b = Builder(data, dt, shape, integer)
    b.pool.append(b.s)
    b.load(b.a)
    b.load(b.b)
    for _ in range(data.draw(st.integers(1, 8), label="ops")):
        b.step()
    return b.finish()


def inputs_for(kernel: Kernel, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out: dict = {}
    for p in kernel.params:
        if isinstance(p.type, TileType):
            out[p.name] = random_array(rng, p.type.shape, p.type.dtype)
        else:
            v = random_array(rng, (), p.type)
            out[p.name] = int(v) if p.type.is_int else float(v)
    return out


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_random_integer_kernels_are_bit_exact(data: st.DataObject, seed: int) -> None:
    kernel = random_kernel(data, integer=True)
    got, want = run_both(kernel, inputs_for(kernel, seed))
    for name in kernel.written:
        assert_exact(got[name], want[name])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_random_float_kernels_of_exact_ops_are_bit_exact(data: st.DataObject, seed: int) -> None:
    kernel = random_kernel(data, integer=False)
    got, want = run_both(kernel, inputs_for(kernel, seed))
    for name in kernel.written:
        assert_exact(got[name], want[name])


# -- ops with a documented tolerance ---------------------------------------------------------------

TOL = {"f32": 1e-5, "bf16": 1e-2}


@settings(max_examples=25, deadline=None)
@given(
    dt=st.sampled_from(FLOATS),
    m=st.integers(1, 6),
    k=st.integers(1, 40),
    n=st.integers(1, 6),
    acc=st.sampled_from(["f32", "same"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_float_matmul_within_tolerance(dt, m: int, k: int, n: int, acc: str, seed: int) -> None:
    acc_dt = tl.f32 if acc == "f32" else dt

    @tl.kernel
    def mm(a: tl.Tile[(m, k), dt], b: tl.Tile[(k, n), dt], c: tl.Tile[(m, n), acc_dt]):
        c[...] += tl.matmul(a, b, acc=acc_dt)

    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((m, k)) * 3).astype(np.float32).astype(dt.numpy)
    b = (rng.standard_normal((k, n)) * 3).astype(np.float32).astype(dt.numpy)
    c = rng.standard_normal((m, n)).astype(np.float32).astype(acc_dt.numpy)
    got, want = run_both(mm, {"a": a, "b": b, "c": c})
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + np.abs(c.astype(np.float64))
    err = np.abs(got["c"].astype(np.float64) - want["c"].astype(np.float64))
    assert (err <= TOL[acc_dt.name] * scale + 1e-30).all()


@settings(max_examples=25, deadline=None)
@given(
    dt=st.sampled_from(FLOATS),
    shape=st.sampled_from([(7,), (3, 9), (4, 2, 5), (1, 64)]),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
)
def test_float_sum_within_tolerance(dt, shape: tuple[int, ...], data: st.DataObject, seed: int) -> None:
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    out_shape = tuple(n for i, n in enumerate(shape) if i not in axes) or (1,)

    @tl.kernel
    def red(x: tl.Tile[shape, dt], y: tl.Tile[out_shape, dt]):
        y[...] = tl.sum(x * 2.0, axis=axes)

    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 5).astype(np.float32).astype(dt.numpy)
    got, want = run_both(red, {"x": x, "y": np.zeros(out_shape, dt.numpy)})
    scale = np.sum(np.abs(x.astype(np.float64)) * 2, axis=axes).reshape(out_shape)
    err = np.abs(got["y"].astype(np.float64) - want["y"].astype(np.float64))
    assert (err <= TOL[dt.name] * scale + 1e-30).all()


@pytest.mark.parametrize("dt", FLOATS)
def test_exp_within_tolerance(dt) -> None:
    @tl.kernel
    def e(x: tl.Tile[(64,), dt], y: tl.Tile[(64,), dt]):
        y[...] = tl.exp(x) - 1.0

    x = np.linspace(-20, 20, 64).astype(np.float32).astype(dt.numpy)
    got, want = run_both(e, {"x": x, "y": np.zeros(64, dt.numpy)})
    np.testing.assert_allclose(
        got["y"].astype(np.float64), want["y"].astype(np.float64), rtol=TOL[dt.name], atol=TOL[dt.name]
    )


@pytest.mark.parametrize("dt", FLOATS)
def test_sqrt_and_rsqrt_are_exact_including_zeros_negatives_and_infinities(dt) -> None:
    """IEEE square roots round correctly on both sides, so MLIR's equals numpy's bit for bit; rsqrt is the
    root then its reciprocal (1/+0 = inf, 1/-0 = -inf, sqrt(-1) = NaN)."""

    @tl.kernel
    def roots(x: tl.Tile[(64,), dt], y: tl.Tile[(64,), dt], z: tl.Tile[(64,), dt]):
        y[...] = tl.sqrt(x)
        z[...] = tl.rsqrt(x) * 2.0

    rng = np.random.default_rng(3)
    x = random_array(rng, (64,), dt)
    x[:6] = np.array([0.0, -0.0, -1.0, np.inf, 2.0, 1e-30], np.float32).astype(dt.numpy)
    got, want = run_both(roots, {"x": x, "y": np.zeros(64, dt.numpy), "z": np.zeros(64, dt.numpy)})
    assert_exact(got["y"], want["y"])
    assert_exact(got["z"], want["z"])
    assert_exact(want["y"][:5], np.array([0.0, -0.0, np.nan, np.inf, np.sqrt(2.0)]).astype(dt.numpy))
    assert_exact(want["z"][:4], np.array([np.inf, -np.inf, np.nan, 0.0]).astype(dt.numpy))


@pytest.mark.parametrize("dt", FLOATS)
def test_tanh_within_tolerance(dt) -> None:
    @tl.kernel
    def t(x: tl.Tile[(64,), dt], y: tl.Tile[(64,), dt]):
        y[...] = tl.tanh(x) * 0.5 + 0.5  # the sigmoid of 2x

    x = np.linspace(-12, 12, 64).astype(np.float32).astype(dt.numpy)
    got, want = run_both(t, {"x": x, "y": np.zeros(64, dt.numpy)})
    np.testing.assert_allclose(
        got["y"].astype(np.float64), want["y"].astype(np.float64), rtol=TOL[dt.name], atol=TOL[dt.name]
    )
    np.testing.assert_allclose(want["y"].astype(np.float64), 1 / (1 + np.exp(-2 * x.astype(np.float64))),
                               rtol=TOL[dt.name], atol=TOL[dt.name])


@pytest.mark.parametrize("fn", [tl.sqrt, tl.rsqrt, tl.tanh])
def test_the_float_functions_refuse_integer_tiles(fn) -> None:
    with pytest.raises(tl.KernelError, match=f"{fn.__name__} needs a float tile"):
        @tl.kernel
        def bad(x: tl.Tile[(8,), tl.i32], y: tl.Tile[(8,), tl.i32]):
            y[...] = fn(x)


def test_float_division_including_zeros_is_exact() -> None:
    @tl.kernel
    def dv(a: tl.Tile[(8,), tl.f32], b: tl.Tile[(8,), tl.f32], c: tl.Tile[(8,), tl.f32], d: tl.Tile[(8,), tl.bf16]):
        c[...] = a / b
        d[...] = (a / b).astype(tl.bf16) / 3.0

    a = np.array([1, -1, 0, 0, np.inf, np.nan, 7, -7], np.float32)
    b = np.array([0, 0, 0, -0.0, np.inf, 1, 3, 0.1], np.float32)
    got, want = run_both(dv, {"a": a, "b": b, "c": np.zeros(8, np.float32), "d": np.zeros(8, ml_dtypes.bfloat16)})
    assert_exact(got["c"], want["c"])
    assert_exact(got["d"], want["d"])


# -- specific semantics, worked out by hand ----------------------------------------------------------


def test_integer_division_truncates_and_zero_divisor_gives_zero() -> None:
    @tl.kernel
    def dv(a: tl.Tile[(8,), tl.i8], b: tl.Tile[(8,), tl.i8], c: tl.Tile[(8,), tl.i8]):
        c[...] = a / b

    a = np.array([7, -7, 7, -7, -128, 5, 0, -128], np.int8)
    b = np.array([2, 2, -2, -2, -1, 0, 0, 1], np.int8)
    c = np.zeros(8, np.int8)
    run_kernel(dv, a, b, c)
    np.testing.assert_array_equal(c, [3, -3, -3, 3, -128, 0, 0, -128])


def test_float_to_int_cast_saturates_and_nan_gives_zero() -> None:
    @tl.kernel
    def cv(a: tl.Tile[(7,), tl.f32], c: tl.Tile[(7,), tl.i8], d: tl.Tile[(7,), tl.i32]):
        c[...] = a.astype(tl.i8)
        d[...] = a.astype(tl.i32)

    a = np.array([1e10, -1e10, np.nan, 127.9, -128.9, -0.5, 2147483520.0], np.float32)
    c, d = np.zeros(7, np.int8), np.zeros(7, np.int32)
    run_kernel(cv, a, c, d)
    np.testing.assert_array_equal(c, [127, -128, 0, 127, -128, 0, 127])
    np.testing.assert_array_equal(d, [2**31 - 1, -(2**31), 0, 127, -128, 0, 2147483520])


def test_bf16_is_computed_in_f32_and_rounded_once() -> None:
    @tl.kernel
    def k(a: tl.Tile[(4,), tl.bf16], c: tl.Tile[(4,), tl.bf16], s: tl.bf16):
        c[...] = a * s + a

    a = np.array([1.0, 3.0, 1 / 3, -250.0], np.float32).astype(ml_dtypes.bfloat16)
    c = np.zeros(4, ml_dtypes.bfloat16)
    run_kernel(k, a, c, 1.0078125)
    want = (a.astype(np.float32) * np.float32(1.0078125)).astype(ml_dtypes.bfloat16).astype(np.float32) + a.astype(
        np.float32
    )
    np.testing.assert_array_equal(c.view(np.uint16), want.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_integer_matmul_accumulates_and_wraps_in_the_result_dtype() -> None:
    @tl.kernel
    def mm(a: tl.Tile[(2, 3), tl.i8], b: tl.Tile[(3, 2), tl.i8], c: tl.Tile[(2, 2), tl.i16]):
        c[...] = tl.matmul(a, b, acc=tl.i16)

    a = np.full((2, 3), 127, np.int8)
    b = np.full((3, 2), 127, np.int8)
    c = np.zeros((2, 2), np.int16)
    run_kernel(mm, a, b, c)
    assert (c == np.int16(((3 * 127 * 127 + 2**15) % 2**16) - 2**15)).all()


def test_store_over_memory_still_read_sees_the_old_values() -> None:
    # x is computed from c[0:4] before the store moves c[0:4] up by one: the module must keep x's values
    # (a copy, as numpy's c[0:4] + 0 is), not read c again after the store
    @tl.kernel
    def shift(c: tl.Tile[(8,), tl.i32]):
        x = c[0:4] + 0
        c[1:5] = c[0:4]
        c[4:8] = x + c[0:4]

    c = np.arange(8, dtype=np.int32)
    run_kernel(shift, c)
    np.testing.assert_array_equal(c, [0, 0, 1, 2, 0 + 0, 1 + 0, 2 + 1, 3 + 2])
    ref = np.arange(8, dtype=np.int32)
    x = ref[0:4] + 0
    ref[1:5] = ref[0:4]
    ref[4:8] = x + ref[0:4]
    np.testing.assert_array_equal(c, ref)  # numpy's own answer


def test_elementwise_chain_is_one_fused_loop_nest() -> None:
    @tl.kernel
    def chain(a: tl.Tile[(64,), tl.f32], b: tl.Tile[(64,), tl.f32], c: tl.Tile[(64,), tl.f32]):
        c[...] += tl.relu(a * b - 1.0) / 2.0

    text = kernel_mlir(chain)
    assert text.count("linalg.generic") == 1
    assert "memref.alloca" not in text


def test_run_kernel_rejects_extern_kernels_and_bad_arguments() -> None:
    ext = tl.extern_kernel("vendor_scale", [tl.Tile[(16,), tl.i32], tl.Tile[(16,), tl.i32]])
    with pytest.raises(tl.KernelError, match="no MLIR body"):
        run_kernel(ext, np.zeros(16, np.int32), np.zeros(16, np.int32))

    @tl.kernel
    def k(a: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
        c[...] = a

    with pytest.raises(tl.KernelError, match="must have dtype"):
        run_kernel(k, np.zeros(4, np.int32), np.zeros(4, np.int64))
    with pytest.raises(tl.KernelError, match="shape"):
        run_kernel(k, np.zeros(5, np.int32), np.zeros(4, np.int32))


def test_run_kernel_writes_non_contiguous_outputs() -> None:
    @tl.kernel
    def k(a: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
        c[...] = a + 1

    big = np.zeros(8, np.int32)
    run_kernel(k, np.arange(4, dtype=np.int32), big[::2])
    np.testing.assert_array_equal(big, [1, 0, 2, 0, 3, 0, 4, 0])


# -- slices are views, not copies ----------------------------------------------------------------------


def random_args(kernel: Kernel, seed: int = 0) -> dict:
    return inputs_for(kernel, seed)


def test_conv_row_kernel_reads_shifted_slices_in_place() -> None:
    """conv2d's row kernel: nine matmuls of w[:, dy, dx, :] (two dimensions picked by ints) and shifted rows.

    With 16 x 16 channels its weight slices alone are 9 x 512 B: copied, they
    overflowed the 1 KiB core stack; as rank-reducing subviews they cost nothing.
    """
    from tilelang.backends.mlir import emit_mlir

    design = tl.library.conv2d(6, 34, 16, 16, kernel_size=3, dtype=tl.i16, out_dtype=tl.i32, cores=1)
    row = design.kernels[0]
    text = kernel_mlir(row)
    assert "memref.alloca" not in text
    assert text.count("linalg.matmul") == 9
    assert "memref<16x16xi16, strided<[144, 1], offset: 16>>" in text  # w[:, 0, 1, :], read in place
    got, want = run_both(row, inputs_for(row, 3))
    assert_exact(got["y"], want["y"])
    assert '"aie.core"' in emit_mlir(tl.plan(design, strategy="greedy"), level="physical")


def test_stencil_of_shifted_parameter_slices_is_one_loop_without_temporaries() -> None:
    @tl.kernel
    def fir3(x: tl.Tile[(66,), tl.i32], y: tl.Tile[(64,), tl.i32]):
        y[...] = x[0:64] * 3 + x[1:65] * -2 + x[2:66] * 5

    text = kernel_mlir(fir3)
    assert "memref.alloca" not in text and text.count("linalg.generic") == 1
    assert text.count("memref.subview") == 3
    got, want = run_both(fir3, inputs_for(fir3, 4))
    assert_exact(got["y"], want["y"])


def test_halves_of_a_parameter_are_subviews() -> None:
    @tl.kernel
    def halves(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(32,), tl.i32]):
        c[...] = a[0:32] + a[32:64]

    text = kernel_mlir(halves)
    assert "memref.subview %arg0[0] [32] [1] : memref<64xi32> to memref<32xi32>" in text
    assert "memref.subview %arg0[32] [32] [1] : memref<64xi32> to memref<32xi32, strided<[1], offset: 32>>" in text
    assert "memref.alloca" not in text
    a = np.arange(64, dtype=np.int32)
    c = np.zeros(32, np.int32)
    run_kernel(halves, a, c)
    np.testing.assert_array_equal(c, a[:32] + a[32:])


def test_disjoint_slices_of_an_intermediate_stay_fused() -> None:
    @tl.kernel
    def parts(a: tl.Tile[(4, 16), tl.f32], b: tl.Tile[(16,), tl.f32], c: tl.Tile[(2, 16), tl.f32]):
        t = a * 3.0 + b
        c[...] = t[0:2, :] - t[2:4, :]

    text = kernel_mlir(parts)
    assert "memref.alloca" not in text and text.count("linalg.generic") == 1
    got, want = run_both(parts, inputs_for(parts, 5))
    assert_exact(got["c"], want["c"])


def test_overlapping_slices_of_an_intermediate_compute_it_once() -> None:
    @tl.kernel
    def overlap(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(8,), tl.i32]):
        t = a * a - 7
        c[...] = t[0:8] + t[4:12]

    text = kernel_mlir(overlap)
    assert text.count("memref.alloca() : memref<16xi32>") == 1  # t's elements 4..7 are read twice
    got, want = run_both(overlap, inputs_for(overlap, 6))
    assert_exact(got["c"], want["c"])


def test_slice_of_a_slice_tracks_the_parameter_region_it_reads() -> None:
    """y reads c[4], c[7], c[10], c[13]: the store into c[0:4] leaves it alone, the one into c[12:16] does not."""

    @tl.kernel
    def strided(c: tl.Tile[(16,), tl.i32]):
        y = c[4:16][::3]
        c[0:4] = 1
        c[12:16] = y

    text = kernel_mlir(strided)
    assert text.count("memref.alloca") == 1 and "memref.alloca() : memref<4xi32>" in text
    assert text.index("linalg.fill") < text.index("memref.alloca")  # copied only before the store it overlaps
    c = np.arange(16, dtype=np.int32)
    want = c.copy()
    strided(want)
    run_kernel(strided, c)
    np.testing.assert_array_equal(c, want)


def test_int_indexed_unit_dimensions_are_dropped_by_a_view_as_mlir_infers_it() -> None:
    """b[0:1, 0:1:2, 0] has three unit dimensions, two of stride 1: the rank-reducing subview is typed the way
    MLIR infers which of them it drops (the first), an equally valid view of the one element."""

    @tl.kernel
    def unit(b: tl.Tile[(1, 1, 1), tl.i8], c: tl.Tile[(1, 1), tl.i8]):
        x = b[0:1, 0:1:2, 0]
        c[...] = tl.matmul(x, x, acc=tl.i8)

    text = kernel_mlir(unit)
    assert "to memref<1x1xi8, strided<[2, 1]>>" in text and "memref.alloca" not in text
    got, want = run_both(unit, inputs_for(unit, 7))
    assert_exact(got["c"], want["c"])


def test_a_view_mlir_cannot_rank_reduce_is_a_reinterpret_cast() -> None:
    """t[:, :, 0] keeps the first of two unit dimensions of stride 4, MLIR's subview would keep the last
    (putting the unit dimension after the 4): the view is stated with memref.reinterpret_cast instead."""

    @tl.kernel
    def odd(p: tl.Tile[(1, 4, 1), tl.i32], q: tl.Tile[(4, 3), tl.i32], c: tl.Tile[(1, 3), tl.i32]):
        t = p[0:1, :, 0:1:4]
        c[...] = t[:, :, 0] @ q

    text = kernel_mlir(odd)
    assert "memref.reinterpret_cast" in text and "memref.alloca" not in text
    got, want = run_both(odd, inputs_for(odd, 8))
    assert_exact(got["c"], want["c"])


@pytest.mark.parametrize("name", ["matmul_first", "matmul_acc"])
def test_bf16_matmul_into_a_bf16_tile_rounds_a_block_of_rows_at_a_time(name: str) -> None:
    """A 64 x 64 bf16 C (the library's bf16-out GEMM): the product rounds to bf16 before it is stored or
    added, so it cannot accumulate in C; a whole f32 temporary would be 16 KiB of a 1 KiB stack. It is
    computed two rows (512 B of f32) at a time instead, with the same values."""
    from tilelang.backends.mlir import emit_mlir

    design = tl.library.matmul(256, 256, 256, in_dtype=tl.bf16, out_dtype=tl.bf16,
                               tiling={"m": 64, "k": 64, "n": 64})
    (kernel,) = [k for k in design.kernels if k.name == name]
    text = kernel_mlir(kernel)
    assert text.count("memref.alloca") == 1 and "memref<2x64xf32>" in text
    assert text.count("linalg.matmul") == 32
    rng = np.random.default_rng(5)
    small = {p: rng.integers(-4, 5, (64, 64)).astype(ml_dtypes.bfloat16) for p in "abc"}
    got, want = run_both(kernel, small)
    assert_exact(got["c"], want["c"])  # small integers: every rounding is exact
    normal = {p: rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16) for p in "abc"}
    got, want = run_both(kernel, normal)
    np.testing.assert_allclose(got["c"].astype(np.float64), want["c"].astype(np.float64), rtol=2**-7, atol=2**-7)
    assert '"aie.core"' in emit_mlir(tl.plan(design), level="physical")
