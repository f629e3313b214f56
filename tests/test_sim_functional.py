"""Outputs of simulated designs equal numpy, in timed and functional mode."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sim_support import copy_kernel, hand_plan

import simulator
import tilelang as tl
from tilelang.plan import plan as make_plan

ROOT = Path(__file__).resolve().parents[1]


def _examples():
    spec = importlib.util.spec_from_file_location("example_designs", ROOT / "examples" / "designs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["example_designs"] = mod
    spec.loader.exec_module(mod)
    return mod


def _both(plan, **arrays):
    timed = simulator.simulate(plan, **arrays)
    func = simulator.simulate(plan, mode="functional", **arrays)
    for k in timed.outputs:
        assert np.array_equal(timed.outputs[k], func.outputs[k]), k
    assert func.cycles == 0 and timed.cycles > 0
    return timed


# -- the example designs, planned by the planner -----------------------------------------


def test_example_vector_scalar_mul():
    d = _examples().vector_scalar_mul()
    a = np.arange(4096, dtype=np.int32) - 2000
    res = _both(make_plan(d, strategy="greedy"), A=a)
    assert np.array_equal(res.outputs["C"], a * 3)


def test_example_gemm_single_core():
    d = _examples().gemm_single_core(64, 64, 64, 32)
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (64, 64)).astype(np.float32)
    b = rng.integers(-4, 5, (64, 64)).astype(np.float32)
    res = _both(make_plan(d, strategy="greedy"), A=a, B=b)
    assert np.array_equal(res.outputs["C"], a @ b)  # small integers: exact in bf16 and f32


def test_example_broadcast_scale():
    d = _examples().broadcast_scale(cores=4, n=256)
    rng = np.random.default_rng(2)
    x = rng.integers(-1000, 1000, 4 * 256).astype(np.int32)
    w = rng.integers(-50, 50, 256).astype(np.int32)
    res = _both(make_plan(d, strategy="greedy"), X=x, W=w)
    assert np.array_equal(res.outputs["Y"], (x.reshape(4, 256) * w).reshape(-1))


def test_whole_array_matmul_library_design():
    d = tl.library.matmul(128, 128, 128, tiling={"m": 32, "k": 32, "n": 32})
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 128)).astype(np.float32)
    res = _both(make_plan(d, strategy="greedy"), A=a, B=b)
    ref = a.astype(ml_dtypes.bfloat16).astype(np.float64) @ b.astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(res.outputs["C"], ref, rtol=1e-5, atol=1e-4)


# -- data movement features ---------------------------------------------------------------


def test_split_and_join_through_memtiles():
    n, parts = 1024, 4

    @tl.kernel
    def add_k(a: tl.Tile[(n // parts,), tl.i32], c: tl.Tile[(n // parts,), tl.i32], k: tl.i32):
        c[...] = a + k

    @tl.design(device="npu1")
    def sj(A: tl.Tensor[(2 * n,), tl.i32], C: tl.Tensor[(2 * n,), tl.i32]):
        big_in = tl.fifo(tl.Tile[(n,), tl.i32], name="big_in")
        big_out = tl.fifo(tl.Tile[(n,), tl.i32], name="big_out")
        ins = [tl.fifo(tl.Tile[(n // parts,), tl.i32], name=f"in{i}") for i in range(parts)]
        outs = [tl.fifo(tl.Tile[(n // parts,), tl.i32], name=f"out{i}") for i in range(parts)]
        tl.split(big_in, ins, name="sp")
        tl.join(outs, big_out, name="jn")
        for i in range(parts):
            @tl.core(name=f"c{i}")
            def body(i=i):
                for _ in tl.range(2):
                    x, y = ins[i].acquire(), outs[i].acquire()
                    add_k(x, y, i * 10)
                    ins[i].release()
                    outs[i].release()

        tl.dma(A, big_in)
        tl.dma(big_out, C)

    a = np.arange(2 * n, dtype=np.int32)
    expect = a + (np.arange(2 * n) % n // (n // parts)) * 10
    hand = hand_plan(sj, {f"c{i}": (i, 2) for i in range(parts)}, link_tiles={"sp": (0, 1), "jn": (1, 1)})
    res = _both(hand, A=a)
    assert np.array_equal(res.outputs["C"], expect)
    assert res.stats.links["sp"].bytes == 2 * (2 * n * 4)  # in and out of the memtile
    planned = _both(make_plan(sj, strategy="greedy"), A=a)
    assert np.array_equal(planned.outputs["C"], expect)


def test_strided_pattern_repeat_and_forward_relayout():
    copy = copy_kernel((4, 4))

    @tl.design(device="npu1")
    def tr(A: tl.Tensor[(8, 4), tl.i32], C: tl.Tensor[(4, 4, 4), tl.i32]):
        f1 = tl.fifo(tl.Tile[(4, 4), tl.i32], name="f1")
        f2 = tl.fifo(tl.Tile[(4, 4), tl.i32], name="f2")
        out = tl.fifo(tl.Tile[(4, 4), tl.i32], name="out")
        # the memtile transposes each 4x4 element on its way out
        tl.dma(f1, f2, pattern=tl.pattern(0, [4, 4], [1, 4]), name="fw")

        @tl.core(name="w")
        def w():
            for _ in tl.range(4):
                x, y = f2.acquire(), out.acquire()
                copy(x, y)
                f2.release()
                out.release()

        # rows 0-3 then 4-7 of A, read twice over
        tl.dma(A, f1, pattern=tl.pattern(0, [8, 4], [4, 1]).repeat(2))
        tl.dma(out, C)

    a = np.arange(32, dtype=np.int32).reshape(8, 4)
    plan = hand_plan(tr, {"w": (0, 2)}, link_tiles={"fw": (0, 1)})
    res = _both(plan, A=a)
    blocks = [a[0:4].T, a[4:8].T, a[0:4].T, a[4:8].T]
    assert np.array_equal(res.outputs["C"], np.stack(blocks))


def test_dma_broadcast_to_two_fifos_and_loop_variables():
    @tl.kernel
    def addi(a: tl.Tile[(8,), tl.i32], c: tl.Tile[(8,), tl.i32], i: tl.i32):
        c[...] = a + i

    @tl.design(device="npu1")
    def bc(A: tl.Tensor[(24,), tl.i32], C1: tl.Tensor[(24,), tl.i32], C2: tl.Tensor[(24,), tl.i32]):
        fa = tl.fifo(tl.Tile[(8,), tl.i32], name="fa")
        fb = tl.fifo(tl.Tile[(8,), tl.i32], name="fb")
        o1 = tl.fifo(tl.Tile[(8,), tl.i32], name="o1")
        o2 = tl.fifo(tl.Tile[(8,), tl.i32], name="o2")
        for nm, src, dst in (("p", fa, o1), ("q", fb, o2)):
            @tl.core(name=nm)
            def body(src=src, dst=dst):
                for i in tl.range(3):
                    x, y = src.acquire(), dst.acquire()
                    addi(x, y, i)
                    src.release()
                    dst.release()

        tl.dma(A, [fa, fb])
        tl.dma(o1, C1)
        tl.dma(o2, C2)

    a = np.arange(24, dtype=np.int32)
    res = _both(make_plan(bc, strategy="greedy"), A=a)
    want = a + np.repeat(np.arange(3), 8)
    assert np.array_equal(res.outputs["C1"], want) and np.array_equal(res.outputs["C2"], want)


def test_sliding_window_acquire_of_two():
    @tl.kernel
    def pair(a: tl.Tile[(4,), tl.i32], b: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
        c[...] = a * 10 + b

    @tl.design(device="npu1")
    def slide(A: tl.Tensor[(20,), tl.i32], C: tl.Tensor[(16,), tl.i32]):
        a = tl.fifo(tl.Tile[(4,), tl.i32], depth=3, name="a")
        c = tl.fifo(tl.Tile[(4,), tl.i32], name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(4):
                win = a.acquire(2)  # holds the previous element and a new one
                y = c.acquire()
                pair(win[0], win[1], y)
                a.release(1)
                c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    x = np.arange(20, dtype=np.int32)
    res = _both(hand_plan(slide, {"w": (0, 3)}), A=x)
    blocks = x.reshape(5, 4)
    assert np.array_equal(res.outputs["C"], (blocks[:-1] * 10 + blocks[1:]).reshape(-1))


# -- inputs and outputs -------------------------------------------------------------------


def test_inputs_are_required_and_bf16_inputs_are_rounded():
    copy = copy_kernel((16,), tl.bf16)

    @tl.design(device="npu1")
    def cp(A: tl.Tensor[(16,), tl.bf16], C: tl.Tensor[(16,), tl.bf16]):
        a = tl.fifo(tl.Tile[(16,), tl.bf16], name="a")
        c = tl.fifo(tl.Tile[(16,), tl.bf16], name="c")

        @tl.core(name="w")
        def w():
            x, y = a.acquire(), c.acquire()
            copy(x, y)
            a.release()
            c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    plan = hand_plan(cp, {"w": (0, 2)})
    with pytest.raises(tl.SimulationError, match=r"reads tensor\(s\) \['A'\] but no array was given"):
        simulator.simulate(plan)
    x = np.linspace(-3, 3, 16).astype(np.float32) + np.float32(1e-3)
    out = simulator.simulate(plan, A=x).outputs["C"]
    assert out.dtype == ml_dtypes.bfloat16
    assert np.array_equal(out, x.astype(ml_dtypes.bfloat16))
    with pytest.raises(tl.SimulationError, match="no tensor"):
        simulator.simulate(plan, B=x)
    with pytest.raises(tl.SimulationError, match="shape"):
        simulator.simulate(plan, A=np.zeros(3, np.float32))
    with pytest.raises(tl.SimulationError, match="mode"):
        simulator.simulate(plan, mode="fast")


def test_simulate_accepts_a_design_and_returns_fresh_outputs():
    d = _examples().vector_scalar_mul(n=2048, tile=512)
    a = np.arange(2048, dtype=np.int32)
    res = tl.simulate(d, A=a)
    assert np.array_equal(res.outputs["C"], a * 3)
    assert res.outputs["C"] is not a
    again = tl.simulate(d, A=a)
    assert again.cycles == res.cycles  # deterministic
    assert again.outputs["C"] is not res.outputs["C"]


# -- properties -------------------------------------------------------------------------


def _chain(depth_in: int, depth_mid: int, tiles: tuple):
    @tl.kernel
    def f(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
        c[...] = a * 3 - 1

    @tl.kernel
    def g(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
        c[...] = tl.maximum(a, 7)

    @tl.design(device="npu1")
    def chain(A: tl.Tensor[(512,), tl.i32], C: tl.Tensor[(512,), tl.i32]):
        a = tl.fifo(tl.Tile[(64,), tl.i32], depth=depth_in, name="a")
        m = tl.fifo(tl.Tile[(64,), tl.i32], depth=depth_mid, name="m")
        c = tl.fifo(tl.Tile[(64,), tl.i32], depth=depth_in, name="c")

        @tl.core(name="s1", tile=tiles[0])
        def s1():
            for _ in tl.range(8):
                x, y = a.acquire(), m.acquire()
                f(x, y)
                a.release()
                m.release()

        @tl.core(name="s2", tile=tiles[1])
        def s2():
            for _ in tl.range(8):
                x, y = m.acquire(), c.acquire()
                g(x, y)
                m.release()
                c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    return chain


_COMPUTE = tl.device("npu1").tiles("compute")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3), st.integers(1, 3),
       st.lists(st.sampled_from(_COMPUTE), min_size=2, max_size=2, unique=True),
       st.lists(st.integers(-1000, 1000), min_size=512, max_size=512))
def test_outputs_do_not_depend_on_depth_or_placement(d_in, d_mid, tiles, values):
    a = np.array(values, dtype=np.int32)
    res = simulator.simulate(make_plan(_chain(d_in, d_mid, tuple(tiles)), strategy="greedy"), A=a)
    assert np.array_equal(res.outputs["C"], np.maximum(a * 3 - 1, 7))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 5), st.integers(1, 3), st.data())
def test_element_walk_matches_the_materialised_pattern(sizes, offset, repeat, data):
    from simulator.host import ElementWalk

    strides = data.draw(st.lists(st.integers(0, 9), min_size=len(sizes), max_size=len(sizes)))
    p = tl.pattern(offset, sizes, strides).repeat(repeat)
    full = np.tile(p.indices(), repeat)
    divisors = [d for d in range(1, len(full) + 1) if len(full) % d == 0]
    n = data.draw(st.sampled_from(divisors))
    tensor = np.arange(p.extent()[1] + 1, dtype=np.int32) * 7
    walk = ElementWalk(p, n, tensor)
    written = np.zeros_like(tensor)
    expect = np.zeros_like(tensor)
    out = ElementWalk(p, n, written)
    for k in range(len(full) // n):
        offsets = full[k * n : (k + 1) * n]
        assert np.array_equal(walk.element(k), offsets)
        # Reading gathers the same values as the offsets (a strided view or a gather).
        assert np.array_equal(walk.read(k).reshape(-1), tensor[offsets])
        # Writing scatters in walk order (later elements win where a walk revisits an offset).
        values = np.arange(k * n, (k + 1) * n, dtype=np.int32) + 1
        out.write(k, values)
        expect[offsets] = values
    assert np.array_equal(written, expect)
