"""The simulator's compiled kernel calls equal the reference semantics bit for bit, op kind by op kind."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilelang as tl
from simulator.kernels import CompiledKernel
from tilelang.ir import semantics
from tilelang.ir.kernel import OpKind

N = 16


def _binary(op: str, dt):
    ops = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b,
        "max": tl.maximum,
        "min": tl.minimum,
    }
    fn = ops[op]

    @tl.kernel
    def k(a: tl.Tile[(N,), dt], b: tl.Tile[(N,), dt], c: tl.Tile[(N,), dt]):
        c[...] = fn(a, b)

    return k


def _arrays(rng: np.random.Generator, dt, *shapes):
    out = []
    for shape in shapes:
        if dt.is_int:
            info = np.iinfo(dt.numpy)
            out.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(dt.numpy))
        else:
            out.append((rng.standard_normal(shape) * 1e3).astype(np.float32).astype(dt.numpy))
    return out


def _same(kernel, arrays: list[np.ndarray]) -> None:
    """Run the reference and the compiled kernel on copies; every parameter must end identical."""
    ref = [a.copy() for a in arrays]
    semantics.run(kernel, {p.name: v for p, v in zip(kernel.params, ref, strict=True)})
    got = [a.copy() for a in arrays]
    CompiledKernel(kernel).run(got)
    for p, r, g in zip(kernel.params, ref, got, strict=True):
        assert r.dtype == g.dtype, p.name
        assert np.array_equal(r.reshape(-1).view(np.uint8), g.reshape(-1).view(np.uint8)), p.name  # bit for bit


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["add", "sub", "mul", "div", "max", "min"]),
       st.sampled_from([tl.i8, tl.i16, tl.i32, tl.bf16, tl.f32]), st.integers(0, 2**32 - 1))
def test_elementwise_binary_ops(op, dt, seed):
    rng = np.random.default_rng(seed)
    _same(_binary(op, dt), _arrays(rng, dt, (N,), (N,), (N,)))


@pytest.mark.parametrize(("src", "acc"), [(tl.bf16, tl.f32), (tl.f32, tl.f32), (tl.i16, tl.i32), (tl.i8, tl.i32),
                                          (tl.i32, tl.i32)])
def test_matmul_accumulate(src, acc):
    @tl.kernel
    def mac(a: tl.Tile[(8, 32), src], b: tl.Tile[(32, 4), src], c: tl.Tile[(8, 4), acc]):
        c[...] += a @ b

    rng = np.random.default_rng(7)
    a, b = _arrays(rng, src, (8, 32), (32, 4))
    (c,) = _arrays(rng, acc, (8, 4))
    _same(mac, [a, b, c])


@pytest.mark.parametrize(("src", "acc"), [(tl.bf16, tl.f32), (tl.f32, tl.f32), (tl.i16, tl.i32), (tl.i8, tl.i32)])
def test_gemm_kernels_run_as_one_step_and_equal_the_reference(src, acc):
    """``c = a @ b`` and ``c += a @ b`` are one fused step (kernels._fused_matmul), equal to the reference
    bit for bit, also when one buffer is passed as every operand."""

    @tl.kernel
    def first(a: tl.Tile[(16, 16), src], b: tl.Tile[(16, 16), src], c: tl.Tile[(16, 16), acc]):
        c[...] = a @ b

    @tl.kernel
    def mac(a: tl.Tile[(16, 16), src], b: tl.Tile[(16, 16), src], c: tl.Tile[(16, 16), acc]):
        c[...] += a @ b

    @tl.kernel
    def same(a: tl.Tile[(16, 16), acc], b: tl.Tile[(16, 16), acc], c: tl.Tile[(16, 16), acc]):
        c[...] += a @ b

    rng = np.random.default_rng(3)
    for k in (first, mac):
        assert len(CompiledKernel(k)._steps) == 1, k.name
        a, b = _arrays(rng, src, (16, 16), (16, 16))
        (c,) = _arrays(rng, acc, (16, 16))
        _same(k, [a, b, c])
    if acc.is_float:  # one array as a, b and c: the product is taken before c is written
        (x,) = _arrays(rng, acc, (16, 16))
        ref = x.copy()
        semantics.run(same, {"a": ref, "b": ref, "c": ref})
        got = x.copy()
        CompiledKernel(same).run([got, got, got])
        assert np.array_equal(ref.view(np.uint8), got.view(np.uint8))


def test_integer_matmul_wraps_like_the_reference():
    @tl.kernel
    def mm(a: tl.Tile[(4, 64), tl.i16], b: tl.Tile[(64, 4), tl.i16], c: tl.Tile[(4, 4), tl.i32]):
        c[...] = a @ b  # 64 products of about 2**30: past int32, so it wraps

    a = np.full((4, 64), 32767, np.int16)
    b = np.full((64, 4), -32768, np.int16)
    b[0, 0] = 12345
    _same(mm, [a, b, np.zeros((4, 4), np.int32)])
    assert any(op.kind is OpKind.MATMUL for op in mm.body)


def test_unary_reductions_casts_compares_and_slices():
    @tl.kernel
    def mix(a: tl.Tile[(4, N), tl.f32], b: tl.Tile[(4, N), tl.bf16], s: tl.Tile[(4,), tl.f32],
            m: tl.Tile[(N,), tl.f32], i: tl.Tile[(4, N), tl.i32], k: tl.f32):
        x = tl.exp(-abs(a) * 0.01) + tl.relu(a) * k
        s[...] = tl.sum(x, axis=1)
        m[...] = tl.max(tl.where(a > 0.5, a, b.astype(tl.f32)), axis=0)
        i[0:2, :] = (a[2:4, :] * 3.0).astype(tl.i32)
        i[2:4, 0:8] = i[0:2, 8:16] + 1

    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, N)).astype(np.float32) * 100
    b = rng.standard_normal((4, N)).astype(ml_dtypes.bfloat16)
    arrays = [a, b, np.zeros(4, np.float32), np.zeros(N, np.float32), np.zeros((4, N), np.int32),
              np.asarray(2.5, np.float32)]
    _same(mix, arrays)


def test_a_store_after_a_load_of_an_aliased_buffer():
    # The same buffer passed twice: the second load must see the value before the store.
    @tl.kernel
    def swap(a: tl.Tile[(N,), tl.i32], b: tl.Tile[(N,), tl.i32]):
        x = a + 0
        b[...] = a * 2
        a[...] = x + b

    buf = np.arange(N, dtype=np.int32)
    ref = buf.copy()
    semantics.run(swap, {"a": ref, "b": ref})
    got = buf.copy()
    CompiledKernel(swap).run([got, got])
    assert np.array_equal(ref, got)
