"""Property tests: kernel numpy semantics against direct numpy, over random shapes and dtypes."""

import ml_dtypes
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tilelang as tl

DTYPES = [tl.i8, tl.i16, tl.i32, tl.bf16, tl.f32]
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "max": (tl.maximum, np.maximum),
    "min": (tl.minimum, np.minimum),
}
UNARY = {
    "neg": (lambda a: -a, lambda a: -a),
    "abs": (abs, np.abs),
    "relu": (tl.relu, lambda a: np.maximum(a, 0)),
}
#: The float functions (float tiles only), against numpy's own.
FUNCTIONS = {
    "exp": (tl.exp, np.exp),
    "sqrt": (tl.sqrt, np.sqrt),
    "rsqrt": (tl.rsqrt, lambda a: np.float32(1) / np.sqrt(a)),
    "tanh": (tl.tanh, np.tanh),
}


def wrap(x: np.ndarray, dt) -> np.ndarray:
    """Two's complement wrap of exact integers into ``dt``."""
    bits = dt.bits
    x = np.asarray(x, dtype=object)
    return np.asarray(((x + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))).astype(dt.numpy)


def reference(fn, dt, *xs):
    """Apply ``fn`` the way the IR defines it: exact ints then wrap; floats in f32, bf16 rounded once."""
    if dt.is_int:
        return wrap(fn(*[x.astype(object) for x in xs]), dt)
    with np.errstate(all="ignore"):
        out = fn(*[x.astype(np.float32) for x in xs])
    return np.asarray(out, np.float32).astype(dt.numpy)


def random_array(rng, shape, dt):
    if dt.is_int:
        info = np.iinfo(dt.numpy)
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dt.numpy)
    return (rng.standard_normal(shape) * 8).astype(np.float32).astype(dt.numpy)


def same(got, want, dt):
    if dt.name == "bf16":
        np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    else:
        np.testing.assert_array_equal(got, want)


shapes = st.sampled_from([(1,), (7,), (16,), (3, 5), (4, 8), (2, 3, 4)])


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(sorted(BINARY)), dt=st.sampled_from(DTYPES), shape=shapes,
       bcast=st.sampled_from(["none", "row", "scalar_const"]), seed=st.integers(0, 2**32 - 1))
def test_binary_ops_match_numpy(op, dt, shape, bcast, seed):
    rng = np.random.default_rng(seed)
    traced, direct = BINARY[op]
    b_shape = {"none": shape, "row": shape[-1:], "scalar_const": None}[bcast]
    const = 3 if dt.is_int else 1.5

    if b_shape is None:
        def fn(a: tl.Tile[shape, dt], c: tl.Tile[shape, dt]):
            c[...] = traced(a, const)
        a = random_array(rng, shape, dt)
        c = np.zeros(shape, dt.numpy)
        tl.kernel(fn)(a, c)
        want = reference(lambda x: direct(x, np.asarray(const, object if dt.is_int else np.float32)), dt, a)
    else:
        def fn(a: tl.Tile[shape, dt], b: tl.Tile[b_shape, dt], c: tl.Tile[shape, dt]):
            c[...] = traced(a, b)
        a, b = random_array(rng, shape, dt), random_array(rng, b_shape, dt)
        c = np.zeros(shape, dt.numpy)
        tl.kernel(fn)(a, b, c)
        want = reference(direct, dt, a, b)
    same(c, np.broadcast_to(want, shape), dt)


#: (op, dtype) pairs: the unary ops on every dtype, the float functions on float dtypes.
UNARY_CASES = [(op, dt) for op in sorted(UNARY) for dt in DTYPES] + [
    (op, dt) for op in sorted(FUNCTIONS) for dt in (tl.bf16, tl.f32)]


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(UNARY_CASES), shape=shapes, seed=st.integers(0, 2**32 - 1))
def test_unary_ops_and_float_functions_match_numpy(case, shape, seed):
    op, dt = case
    rng = np.random.default_rng(seed)
    traced, direct = {**UNARY, **FUNCTIONS}[op]

    def fn(a: tl.Tile[shape, dt], c: tl.Tile[shape, dt]):
        c[...] = traced(a)

    a = random_array(rng, shape, dt)
    c = np.zeros(shape, dt.numpy)
    tl.kernel(fn)(a, c)
    same(c, reference(direct, dt, a), dt)


@settings(max_examples=30, deadline=None)
@given(dt=st.sampled_from([tl.i8, tl.i16, tl.bf16]), m=st.integers(1, 9), k=st.integers(1, 9), n=st.integers(1, 9),
       seed=st.integers(0, 2**32 - 1))
def test_matmul_accumulates_in_the_default_accumulator(dt, m, k, n, seed):
    rng = np.random.default_rng(seed)
    acc = tl.i32 if dt.is_int else tl.f32

    def fn(a: tl.Tile[(m, k), dt], b: tl.Tile[(k, n), dt], c: tl.Tile[(m, n), acc]):
        c[...] = a @ b

    a, b = random_array(rng, (m, k), dt), random_array(rng, (k, n), dt)
    c = np.zeros((m, n), acc.numpy)
    tl.kernel(fn)(a, b, c)
    if dt.is_int:
        want = wrap(a.astype(object) @ b.astype(object), acc)
        np.testing.assert_array_equal(c, want)
    else:
        # bf16 products are exact in f32; the sum is exact in f64 for these magnitudes
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(c, want)


@settings(max_examples=30, deadline=None)
@given(dt=st.sampled_from(DTYPES), shape=st.sampled_from([(5,), (4, 6), (2, 3, 4)]), data=st.data(),
       seed=st.integers(0, 2**32 - 1))
def test_reductions_match_numpy(dt, shape, data, seed):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.sampled_from([None, *range(len(shape))]))
    out_shape = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis)
    out_shape = out_shape or (1,)

    def fn(a: tl.Tile[shape, dt], s: tl.Tile[out_shape, dt], m: tl.Tile[out_shape, dt],
           n: tl.Tile[out_shape, dt]):
        s[...] = tl.sum(a, axis=axis)
        m[...] = tl.max(a, axis=axis)
        n[...] = tl.min(a, axis=axis)

    a = random_array(rng, shape, dt)
    s, m, n = (np.zeros(out_shape, dt.numpy) for _ in range(3))
    tl.kernel(fn)(a, s, m, n)
    if dt.is_int:
        want_s = wrap(np.sum(a.astype(object), axis=axis), dt)
    else:
        want_s = np.asarray(np.sum(a.astype(np.float64), axis=axis)).astype(dt.numpy)
    same(s, np.broadcast_to(want_s, out_shape), dt)
    same(m, np.broadcast_to(np.max(a, axis=axis), out_shape), dt)
    same(n, np.broadcast_to(np.min(a, axis=axis), out_shape), dt)


@settings(max_examples=30, deadline=None)
@given(src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_casts(src, dst, seed):
    rng = np.random.default_rng(seed)

    def fn(a: tl.Tile[(32,), src], c: tl.Tile[(32,), dst]):
        c[...] = a.astype(dst)

    a = random_array(rng, (32,), src)
    c = np.zeros(32, dst.numpy)
    tl.kernel(fn)(a, c)
    if src.is_float and dst.is_int:
        info = np.iinfo(dst.numpy)
        want = np.clip(np.trunc(a.astype(np.float64)), info.min, info.max).astype(dst.numpy)
    elif src.is_int and dst.is_int:
        want = wrap(a.astype(object), dst)
    else:
        want = a.astype(np.float32).astype(dst.numpy) if dst.name == "bf16" else a.astype(dst.numpy)
    same(c, want, dst)


def test_bf16_arrays_are_ml_dtypes():
    assert tl.bf16.numpy == np.dtype(ml_dtypes.bfloat16)
    assert tl.i8.numpy == np.int8 and tl.f32.numpy == np.float32
