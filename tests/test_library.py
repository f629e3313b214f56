"""tl.library design factories: each checked against numpy in simulation.

Integers are compared bit-exactly. Floats: bf16 x bf16 -> f32 products of
small integers are exact; softmax is compared with the exact (f64) softmax of
the rounded inputs within the tolerance docs/library.md documents (f32
1e-5 relative; bf16 (2 max|x - max x| + 4) 2^-8 relative); sums of floats
within 1e-5 relative. Most tests plan with the greedy strategy (instant); a
few use the ILPs, as tl.plan does by default.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilelang as tl
from tilelang.ir.design import Acquire, Loop, walk

RNG = np.random.default_rng(20240601)


def run(design, strategy="greedy", **arrays):
    """Plan and simulate; the timed and functional runs must agree."""
    plan = tl.plan(design, strategy=strategy)
    timed = tl.simulate(plan, **arrays)
    func = tl.simulate(plan, mode="functional", **arrays)
    for name, out in timed.outputs.items():
        assert np.array_equal(out, func.outputs[name], equal_nan=True), name
    assert timed.cycles > 0
    return timed


def ints(shape, dtype, lo=-100, hi=100):
    return RNG.integers(lo, hi, shape).astype(dtype.numpy)


# -- matmul -----------------------------------------------------------------------------


def test_matmul_single_core_is_one_core_fed_through_memtiles():
    d = tl.library.matmul(64, 128, 96, cores=1, tiling={"m": 32, "k": 32, "n": 32})
    assert [c.name for c in d.cores] == ["core_0_0"]
    assert {ln.kind.value for ln in d.links} == {"forward"}
    a, b = ints((64, 128), tl.bf16, -3, 4), ints((128, 96), tl.bf16, -3, 4)
    res = run(d, A=a.astype(np.float32), B=b.astype(np.float32))
    assert res.outputs["C"].dtype == np.float32
    assert np.array_equal(res.outputs["C"], a.astype(np.float64) @ b.astype(np.float64))


def test_matmul_whole_array_npu1_ilp_plan_is_exact():
    d = tl.library.matmul(128, 64, 128, in_dtype=tl.i16, out_dtype=tl.i32, tiling={"m": 16, "k": 32, "n": 16})
    assert len(d.cores) == 16
    # each column's C leaves as two joins of two rows, over both of its shim's S2MM channels
    assert sorted(ln.name for ln in d.links if ln.kind.value == "join") == [f"join_c_{q}_{h}" for q in range(4)
                                                                               for h in range(2)]
    a, b = ints((128, 64), tl.i16, -1000, 1000), ints((64, 128), tl.i16, -1000, 1000)
    res = run(d, strategy="ilp", A=a, B=b)
    assert np.array_equal(res.outputs["C"], (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32))


def test_matmul_npu2_whole_array_i8():
    d = tl.library.matmul(128, 64, 256, in_dtype=tl.i8, out_dtype=tl.i32, device="npu2",
                          tiling={"m": 32, "k": 32, "n": 32})
    assert len(d.cores) == 32
    a, b = ints((128, 64), tl.i8), ints((64, 256), tl.i8)
    res = run(d, A=a, B=b)
    assert np.array_equal(res.outputs["C"], a.astype(np.int32) @ b.astype(np.int32))


def test_matmul_bf16_output_accumulates_in_bf16_within_tolerance():
    d = tl.library.matmul(64, 64, 64, out_dtype=tl.bf16, cores=(2, 2), tiling={"m": 32, "k": 16, "n": 32})
    a = RNG.standard_normal((64, 64)).astype(np.float32)
    b = RNG.standard_normal((64, 64)).astype(np.float32)
    res = run(d, A=a, B=b)
    exact = a.astype(ml_dtypes.bfloat16).astype(np.float64) @ b.astype(ml_dtypes.bfloat16).astype(np.float64)
    # four k-steps, each rounding the running sum to bf16 (unit roundoff 2^-8 relative to the running magnitudes)
    bound = 4 * 2.0**-8 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))) + 1e-6
    assert np.all(np.abs(res.outputs["C"].astype(np.float64) - exact) <= bound)


def test_matmul_double_buffers_c_only_when_it_fits():
    small = tl.library.matmul(256, 256, 256, tiling={"m": 32, "k": 32, "n": 32})
    big = tl.library.matmul(256, 256, 256, tiling={"m": 64, "k": 64, "n": 64})
    assert small.fifo("c_l1_0_0").depth == 2
    # 64x64 f32 C twice (32 KiB) + A and B double-buffered (32 KiB) + the stack exceed 64 KiB
    assert big.fifo("c_l1_0_0").depth == 1
    assert tl.library.matmul(256, 256, 256, out_dtype=tl.bf16,
                             tiling={"m": 64, "k": 64, "n": 64}).fifo("c_l1_0_0").depth == 2


def test_matmul_auto_tiling_uses_the_tiling_ilp():
    d = tl.library.matmul(128, 128, 128, cores=1)
    a, b = ints((128, 128), tl.bf16, -3, 4), ints((128, 128), tl.bf16, -3, 4)
    res = run(d, A=a.astype(np.float32), B=b.astype(np.float32))
    assert np.array_equal(res.outputs["C"], a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tiling": {"m": 32, "k": 32}}, "keys m, k, n"),
        ({"tiling": {"m": 48, "k": 32, "n": 32}}, "M % 192 == 0"),
        ({"tiling": {"m": 64, "k": 128, "n": 64}}, "need .* B of core memory"),
        ({"cores": (5, 4), "tiling": {"m": 16, "k": 16, "n": 16}}, "does not fit npu1"),
        ({"cores": 7, "tiling": {"m": 16, "k": 16, "n": 16}}, "7 cores do not fit"),
        ({"device": "xcvc1902", "in_dtype": tl.i16, "out_dtype": tl.i32, "cores": (2, 2),
          "tiling": {"m": 16, "k": 16, "n": 16}}, "linear runs only"),
    ],
)
def test_matmul_rejects_what_cannot_work(kwargs, message):
    with pytest.raises(tl.DesignError, match=message):
        tl.library.matmul(256, 256, 256, **kwargs)


# -- elementwise ------------------------------------------------------------------------------


def test_elementwise_named_binary_op_one_core():
    d = tl.library.elementwise("add", 4096, dtype=tl.i32, tile=1024)
    assert [t.name for t in d.params] == ["A", "B", "C"] and len(d.cores) == 1
    a, b = ints(4096, tl.i32, -2**31, 2**31 - 1), ints(4096, tl.i32, -2**31, 2**31 - 1)
    res = run(d, A=a, B=b)
    assert np.array_equal(res.outputs["C"], a + b)  # wraps like numpy int32


def test_elementwise_binary_op_on_two_columns_is_staged_through_memtiles():
    d = tl.library.elementwise("max", 8 * 2048, dtype=tl.i16, cores=4, tile=512)
    # two inputs take both shim MM2S channels of a column: one split each; the one output
    # has two S2MM channels, so each core drains straight to the shim
    assert sorted(ln.name for ln in d.links) == ["split_a_0", "split_a_1", "split_b_0", "split_b_1"]
    assert sorted(m.name for m in d.dmas if m.name.startswith("drain")) == [f"drain_c_{i}" for i in range(4)]
    a, b = ints(8 * 2048, tl.i16, -30000, 30000), ints(8 * 2048, tl.i16, -30000, 30000)
    res = run(d, strategy="ilp", A=a, B=b)
    assert np.array_equal(res.outputs["C"], np.maximum(a, b))


def test_elementwise_unary_bf16_on_sixteen_cores():
    d = tl.library.elementwise("relu", 16 * 512, dtype=tl.bf16, cores=16, tile=256)
    assert len(d.cores) == 16
    # one input and one output: each column is two groups of two cores each way, which fills its
    # memtile's 6 + 6 channels exactly (the ILP placement packs that; see the report)
    assert len([ln for ln in d.links if ln.kind.value == "split"]) == 8
    a = RNG.standard_normal(16 * 512).astype(ml_dtypes.bfloat16)
    res = run(d, strategy="ilp", A=a)
    assert np.array_equal(res.outputs["C"], np.maximum(a, 0))


def test_elementwise_function_of_tiles():
    d = tl.library.elementwise(lambda x, y: tl.maximum(x, y) * 2 - y, 2048, dtype=tl.i32, cores=2, tile=256)
    assert [t.name for t in d.params] == ["X", "Y", "C"]
    x, y = ints(2048, tl.i32), ints(2048, tl.i32)
    res = run(d, X=x, Y=y)
    assert np.array_equal(res.outputs["C"], np.maximum(x, y) * 2 - y)


def test_elementwise_user_kernel_with_a_scalar_and_two_dimensional_tiles():
    @tl.kernel
    def axpy(x: tl.Tile[(4, 64), tl.f32], y: tl.Tile[(4, 64), tl.f32], out: tl.Tile[(4, 64), tl.f32], a: tl.f32):
        out[...] = x * a + y

    d = tl.library.elementwise(axpy, 64, cores=(2, 2), scalars={"a": 0.5})
    assert [t.name for t in d.params] == ["X", "Y", "OUT"]
    assert d.tensors["X"].shape == (64, 64)
    x = RNG.standard_normal((64, 64)).astype(np.float32)
    y = RNG.standard_normal((64, 64)).astype(np.float32)
    res = run(d, X=x, Y=y)
    assert np.array_equal(res.outputs["OUT"], x * np.float32(0.5) + y)


def test_elementwise_on_aie1_feeds_every_core_from_the_shims():
    d = tl.library.elementwise("sub", 8 * 1024, dtype=tl.i32, device="xcvc1902", cores=8, tile=256)
    assert not d.links
    a, b = ints(8 * 1024, tl.i32), ints(8 * 1024, tl.i32)
    res = run(d, A=a, B=b)
    assert np.array_equal(res.outputs["C"], a - b)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("erf", 1024), {}, "unknown op 'erf'"),
        (("add", 1000), {"tile": 256}, "multiple of cores x chunk"),
        (("add", 8192), {"cores": (4, 1), "tile": 256}, "4 cores per column is more than"),
        (("add", 4096), {"scalars": {"k": 1}}, "scalars= is for a tl.kernel"),
        ((lambda a, c: a + c, 1024), {}, "none named 'c'"),
    ],
)
def test_elementwise_rejects_what_cannot_work(args, kwargs, message):
    with pytest.raises(tl.DesignError, match=message):
        tl.library.elementwise(*args, **kwargs)


def test_elementwise_kernel_needs_its_scalars_and_one_tile_type():
    @tl.kernel
    def scale(a: tl.Tile[(256,), tl.i32], c: tl.Tile[(256,), tl.i32], factor: tl.i32):
        c[...] = a * factor

    @tl.kernel
    def widen(a: tl.Tile[(256,), tl.i16], c: tl.Tile[(256,), tl.i32]):
        c[...] = a.astype(tl.i32)

    with pytest.raises(tl.DesignError, match=r"scalar parameters \['factor'\]"):
        tl.library.elementwise(scale, 1024)
    with pytest.raises(tl.DesignError, match="tiles of one type"):
        tl.library.elementwise(widen, 1024)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    op=st.sampled_from(["add", "sub", "mul", "max", "min", "neg", "abs", "copy"]),
    dtype=st.sampled_from([tl.i8, tl.i16, tl.i32]),
    cores=st.sampled_from([1, 2, 3, 4]),
    tile=st.sampled_from([16, 64]),
    rounds=st.integers(1, 3),
)
def test_elementwise_equals_numpy_for_any_grid(op, dtype, cores, tile, rounds):
    n = cores * tile * rounds
    d = tl.library.elementwise(op, n, dtype=dtype, cores=cores, tile=tile)
    info = np.iinfo(dtype.numpy)
    a, b = ints(n, dtype, info.min, info.max), ints(n, dtype, info.min, info.max)
    arrays = {"A": a, "B": b} if op in ("add", "sub", "mul", "max", "min") else {"A": a}
    res = tl.simulate(tl.plan(d), mode="functional", **arrays)
    with np.errstate(over="ignore"):
        ref = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "max": lambda: np.maximum(a, b),
               "min": lambda: np.minimum(a, b), "neg": lambda: -a, "abs": lambda: np.abs(a), "copy": lambda: a}[op]()
    assert np.array_equal(res.outputs["C"], ref)


# -- reduction ------------------------------------------------------------------------------


def test_reduction_max_multi_column():
    d = tl.library.reduction("max", 8 * 3 * 256, dtype=tl.i32, cores=8, tile=256)
    # 4 x 2 cores; each column's input is two groups (both shim MM2S channels), each split in two
    assert sorted(ln.name for ln in d.links) == ["split_a_0_0", "split_a_0_1", "split_a_1_0", "split_a_1_1"]
    assert all(len(ln.dsts) == 2 for ln in d.links)
    a = ints(8 * 3 * 256, tl.i32, -2**31, 2**31 - 1)
    res = run(d, strategy="ilp", A=a)
    assert res.outputs["C"].shape == (1,) and res.outputs["C"][0] == a.max()


def test_reduction_sum_sixteen_cores_wraps_in_int32():
    d = tl.library.reduction("sum", 16 * 2 * 128, dtype=tl.i32, cores=16, tile=128)
    a = ints(16 * 2 * 128, tl.i32, 2**28, 2**30)
    res = run(d, A=a)
    assert res.outputs["C"][0] == np.int64(a.astype(np.int64).sum()).astype(np.int32)


def test_reduction_of_bf16_sum_into_f32():
    a = RNG.standard_normal(4 * 512).astype(ml_dtypes.bfloat16)
    res = run(tl.library.reduction("sum", 4 * 512, dtype=tl.bf16, out_dtype=tl.f32, cores=4, tile=256), A=a)
    assert res.outputs["C"].dtype == np.float32
    np.testing.assert_allclose(res.outputs["C"][0], a.astype(np.float64).sum(), rtol=1e-5, atol=1e-5)


def test_reduction_min_of_floats_over_four_cores_on_two_devices():
    a = RNG.standard_normal(4 * 2 * 256).astype(np.float32)
    a[777] = -np.inf
    for device in ("npu1", "xcvc1902"):
        d = tl.library.reduction("min", a.size, dtype=tl.f32, device=device, cores=4, tile=256)
        res = run(d, A=a)
        assert res.outputs["C"][0] == -np.inf
        b = np.abs(a)
        assert run(d, A=b).outputs["C"][0] == b.min() > 0


def test_reduction_single_chunk_per_core_on_aie1():
    d = tl.library.reduction("max", 4 * 256, dtype=tl.i32, device="xcvc1902", cores=4, tile=256)
    a = ints(4 * 256, tl.i32, -30000, 30000)
    assert run(d, A=a).outputs["C"][0] == a.max()


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("prod", 1024), {}, "op must be one of"),
        (("min", 1024), {"out_dtype": tl.i32, "dtype": tl.i16}, "a min keeps its dtype"),
        (("max", 1024), {"out_dtype": tl.i32, "dtype": tl.i16}, "keeps its dtype"),
        (("sum", 1024), {"out_dtype": tl.f32}, "both be integer or both float"),
        (("sum", 1000), {}, "multiple of cores x tile"),
        # one 2-byte result cannot be moved by a DMA, which moves 4-byte words (it failed only at emit)
        (("max", 4096), {"dtype": tl.bf16, "device": "npu2"}, r"C is one bf16 element \(2 B\), but DMAs move whole "
                                                              r"4-byte words .* pass dtype=tl.f32"),
        (("max", 1024), {"dtype": tl.i16, "device": "xcvc1902"}, "pass dtype=tl.i32 and widen A"),
        (("sum", 1024), {"dtype": tl.i16}, "pass out_dtype=tl.i32"),
    ],
)
def test_reduction_rejects_what_cannot_work(args, kwargs, message):
    with pytest.raises(tl.DesignError, match=message):
        tl.library.reduction(*args, **kwargs)


# -- matvec ------------------------------------------------------------------------------------


def test_matvec_one_core_i16():
    d = tl.library.matvec(96, 64)
    a, b = ints((96, 64), tl.i16), ints(64, tl.i16)
    res = run(d, A=a, B=b)
    assert np.array_equal(res.outputs["C"], (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32))


def test_matvec_two_columns_broadcasts_b():
    d = tl.library.matvec(512, 128, cores=8)
    assert len(d.cores) == 8
    from tilelang.ir.verify import fifo_ends

    assert len(fifo_ends(d)["b"].consumers) == 8
    a, b = ints((512, 128), tl.i16), ints(128, tl.i16)
    res = run(d, A=a, B=b)
    assert np.array_equal(res.outputs["C"], (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32))


def test_matvec_bf16_into_f32():
    d = tl.library.matvec(64, 64, in_dtype=tl.bf16, cores=2, tiling={"m": 16, "k": 32})
    a = RNG.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    b = RNG.standard_normal(64).astype(ml_dtypes.bfloat16)
    res = run(d, A=a, B=b)
    np.testing.assert_allclose(res.outputs["C"], a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_matvec_rejects_sizes_the_tiles_do_not_divide():
    with pytest.raises(tl.DesignError, match="M must be a multiple of cores x m"):
        tl.library.matvec(100, 64)
    with pytest.raises(tl.DesignError, match="tiling must be"):
        tl.library.matvec(64, 64, tiling={"m": 32})


# -- conv2d --------------------------------------------------------------------------------------


def conv_reference(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Valid k x k convolution of YCX ``a`` with OHWI ``w``, in int64."""
    h, _, width = a.shape
    k = w.shape[1]
    ho, wo = h - k + 1, width - k + 1
    out = np.zeros((ho, w.shape[0], wo), np.int64)
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("oi,yix->yox", w[:, dy, dx, :].astype(np.int64), a[dy:dy + ho, :, dx:dx + wo].astype(np.int64))
    return out


def test_conv2d_single_core_slides_a_three_row_window():
    d = tl.library.conv2d(10, 18, 8, 16)
    acquires = [s for s in walk(d.core("core_0_0").body) if isinstance(s, Acquire) and s.fifo == "rows_0"]
    assert [s.n for s in acquires] == [3] and d.fifo("rows_0").depth == 4
    assert any(isinstance(s, Loop) and s.trip_count == 8 for s in d.core("core_0_0").body)
    a, w = ints((10, 8, 18), tl.i16, -20, 20), ints((16, 3, 3, 8), tl.i16, -5, 5)
    res = run(d, A=a, W=w)
    assert res.outputs["C"].shape == (8, 16, 16)
    assert np.array_equal(res.outputs["C"], conv_reference(a, w))


def test_conv2d_groups_and_bands_join_in_memtiles():
    d = tl.library.conv2d(18, 16, 8, 16, cores=(2, 4))
    assert sorted(ln.name for ln in d.links) == [f"join_out_{q}" for q in range(4)]
    a, w = ints((18, 8, 16), tl.i16, -20, 20), ints((16, 3, 3, 8), tl.i16, -5, 5)
    res = run(d, strategy="ilp", A=a, W=w)
    assert np.array_equal(res.outputs["C"], conv_reference(a, w))


def test_conv2d_pointwise_i8_and_aie1_bands():
    a, w = ints((8, 16, 8), tl.i8), ints((8, 1, 1, 16), tl.i8)
    res = run(tl.library.conv2d(8, 8, 16, 8, kernel_size=1, dtype=tl.i8, cores=2), A=a, W=w)
    assert np.array_equal(res.outputs["C"], conv_reference(a, w))
    a, w = ints((10, 4, 10), tl.i16, -20, 20), ints((4, 3, 3, 4), tl.i16, -5, 5)
    res = run(tl.library.conv2d(10, 10, 4, 4, device="xcvc1902", cores=2), A=a, W=w)
    assert np.array_equal(res.outputs["C"], conv_reference(a, w))


def test_conv2d_rejects_what_cannot_work():
    with pytest.raises(tl.DesignError, match="split evenly into 3 groups"):
        tl.library.conv2d(10, 10, 4, 8, cores=(3, 1))
    with pytest.raises(tl.DesignError, match="split evenly into 3 bands"):
        tl.library.conv2d(10, 10, 4, 8, cores=(1, 3))
    with pytest.raises(tl.DesignError, match="kernel_size"):
        tl.library.conv2d(4, 4, 4, 4, kernel_size=5)
    with pytest.raises(tl.DesignError, match="more than this design's data movement allows"):
        tl.library.conv2d(10, 10, 4, 8, device="xcvc1902", cores=(2, 1))


# -- softmax --------------------------------------------------------------------------------------


def softmax_reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax_f32_rows_on_eight_cores():
    d = tl.library.softmax(32, 128, dtype=tl.f32, cores=8, rows_per_tile=2)
    x = RNG.uniform(-8, 8, (32, 128)).astype(np.float32)
    res = run(d, A=x)
    np.testing.assert_allclose(res.outputs["C"], softmax_reference(x), rtol=1e-5, atol=0)
    np.testing.assert_allclose(res.outputs["C"].sum(axis=1), 1.0, rtol=1e-5)


def test_softmax_bf16_within_the_documented_bound():
    d = tl.library.softmax(16, 64, cores=4)
    x = RNG.uniform(-2, 2, (16, 64)).astype(ml_dtypes.bfloat16)
    res = run(d, A=x)
    ref = softmax_reference(x)
    spread = (x.astype(np.float64).max(axis=1, keepdims=True) - x.astype(np.float64)).max()
    bound = (2 * spread + 4) * 2.0**-8  # bf16's unit roundoff: 8 significant bits
    assert np.all(np.abs(res.outputs["C"].astype(np.float64) - ref) <= bound * ref)


def test_softmax_needs_floats():
    with pytest.raises(tl.DesignError, match="float dtype"):
        tl.library.softmax(16, 64, dtype=tl.i32)


# -- rms_norm and layer_norm ---------------------------------------------------------------------


def rms_reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5)


def layer_reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    c = x - x.mean(axis=1, keepdims=True)
    return c / np.sqrt((c * c).mean(axis=1, keepdims=True) + 1e-5)


@pytest.mark.parametrize(("factory", "reference"), [(tl.library.rms_norm, rms_reference),
                                                     (tl.library.layer_norm, layer_reference)])
@pytest.mark.parametrize(("device", "dtype", "cores"), [("npu1", tl.bf16, 4), ("npu2", tl.bf16, 8),
                                                        ("npu1", tl.f32, 2), ("xcvc1902", tl.f32, 2)])
def test_norms_equal_numpy_within_the_documented_bound(factory, reference, device, dtype, cores):
    rows, cols = 16, 256
    d = factory(rows, cols, dtype=dtype, device=device, cores=cores, rows_per_tile=2)
    # an offset and a spread per row: layer_norm's centring matters, rms_norm's scale differs by row
    x = (RNG.standard_normal((rows, cols)) * RNG.uniform(0.5, 8, (rows, 1)) + RNG.uniform(-4, 4, (rows, 1)))
    x = x.astype(np.float32).astype(dtype.numpy)
    got = run(d, A=x).outputs["C"].astype(np.float64)
    want = reference(x)
    bound = (2.0**-8 if dtype.name == "bf16" else 1e-6) * np.abs(want).max()
    assert np.abs(got - want).max() <= bound


def test_layer_norm_of_a_row_far_from_zero_keeps_its_digits():
    """The variance of the centred row: E[x^2] - E[x]^2 in f32 would lose every digit of a row 1000 +- 0.01."""
    x = (1000 + RNG.uniform(-0.01, 0.01, (4, 64))).astype(np.float32)
    got = run(tl.library.layer_norm(4, 64, dtype=tl.f32), A=x).outputs["C"].astype(np.float64)
    want = layer_reference(x)
    assert np.abs(got - want).max() <= 1e-2 * np.abs(want).max()


def test_norms_refuse_integers_and_bad_eps():
    with pytest.raises(tl.DesignError, match="rms_norm needs a float dtype"):
        tl.library.rms_norm(4, 64, dtype=tl.i16)
    with pytest.raises(tl.DesignError, match="layer_norm: eps must be a finite number"):
        tl.library.layer_norm(4, 64, eps=-1.0)
    with pytest.raises(tl.DesignError, match="rows must be a multiple|multiple of cores"):
        tl.library.rms_norm(6, 64, cores=4)


# -- the float functions and activations ---------------------------------------------------------

ACTIVATIONS = {
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
}


@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
@pytest.mark.parametrize(("device", "dtype"), [("npu1", tl.bf16), ("npu2", tl.f32), ("xcvc1902", tl.f32)])
def test_named_float_functions_equal_numpy(op, device, dtype):
    d = tl.library.elementwise(op, 2048, dtype=dtype, device=device, cores=2, tile=512)
    lo = 0.25 if op in ("sqrt", "rsqrt") else -6.0
    x = RNG.uniform(lo, 6, 2048).astype(np.float32).astype(dtype.numpy)
    got = run(d, A=x).outputs["C"].astype(np.float64)
    want = ACTIVATIONS[op](x.astype(np.float64))
    tol = 2.0**-6 if dtype.name == "bf16" else 1e-6
    assert np.abs(got - want).max() <= tol * np.abs(want).max()


def test_named_float_functions_refuse_integers():
    for op in ("exp", "gelu"):
        with pytest.raises(tl.DesignError, match=f"elementwise: '{op}' needs a float dtype"):
            tl.library.elementwise(op, 2048)  # the default dtype, i32


# -- every factory's design is plain IR ------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: tl.library.matmul(128, 128, 128, tiling={"m": 32, "k": 32, "n": 32}),
        lambda: tl.library.elementwise("add", 4096, cores=4, tile=512),
        lambda: tl.library.reduction("max", 4096, cores=4, tile=512),
        lambda: tl.library.matvec(256, 64, cores=4),
        lambda: tl.library.conv2d(10, 10, 4, 8, cores=(2, 2)),
        lambda: tl.library.softmax(16, 32, cores=2),
        lambda: tl.library.rms_norm(16, 32, cores=2, rows_per_tile=2),
        lambda: tl.library.layer_norm(16, 32, dtype=tl.f32, cores=2),
        lambda: tl.library.elementwise("gelu", 2048, dtype=tl.bf16, cores=2, tile=256),
        lambda: tl.library.attention(64, 64, 32, block_q=16, block_kv=32, causal=True, heads=2, kv_heads=1),
    ],
)
def test_library_designs_print_and_parse_back(make):
    d = make()
    text = tl.ir.print(d)
    back = tl.ir.parse(text)
    assert tl.ir.print(back) == text
    assert back.cores == d.cores and back.dmas == d.dmas and back.links == d.links


# -- host moves fit the shim's buffer descriptors ---------------------------------------------------


def test_host_moves_are_cut_to_what_one_shim_bd_walks():
    from tilelang.library._movement import ShimLimits

    d = tl.library.matmul(1024, 1024, 1024, tiling={"m": 64, "k": 64, "n": 64})
    limits = ShimLimits.of(d.device)
    # B's K = 1024 rows of one strip exceed the 10-bit wrap: each fill is cut into runs of 512 rows
    fills_b = [m for m in d.dmas if m.name.startswith("fill_b_0_0")]
    assert len(fills_b) == 8 and all(m.pattern.sizes == (512, 64) for m in fills_b)
    for m in d.dmas:
        assert limits.fits(m.pattern, 2 if m.tensor in ("A", "B") else 4), m
    covered = np.concatenate([m.pattern.indices() for m in fills_b])
    want = tl.pattern(0, (4, 16, 64, 64), (256, 65536, 1024, 1)).indices()
    assert np.array_equal(covered, want)  # same elements, same order


def test_aie1_moves_become_linear_runs():
    d = tl.library.elementwise("add", 4 * 3 * 256, device="xcvc1902", cores=4, tile=256)
    fills = [m for m in d.dmas if m.name.startswith("fill_a_0")]
    # core 0 takes chunks 0-2, one run (the blocked deal), not chunks 0, 4, 8 in three moves
    assert [(m.pattern.offset, m.pattern.sizes) for m in fills] == [(0, (768,))]
    assert all(m.pattern.rank == 1 and m.pattern.strides == (1,) for m in d.dmas)


def test_aie1_deals_each_core_one_contiguous_run():
    """AIE1's shim DMA walks linear runs only: a round-robin deal would take a move (and a shim BD) per round
    and overrun the shim's 16 BDs at 8 rounds x 3 tensors; the blocked deal takes one move per core and
    tensor, and the results are unchanged."""
    n, cores = 16 * 1024 * 8, 16
    d = tl.library.elementwise("add", n, dtype=tl.i32, device="xcvc1902", cores=cores, tile=1024)
    assert len(d.dmas) == 3 * cores
    assert all(dm.pattern.sizes == (8 * 1024,) and dm.pattern.strides == (1,) for dm in d.dmas)
    a, b = ints(n, tl.i32), ints(n, tl.i32)
    res = run(d, A=a, B=b)
    assert np.array_equal(res.outputs["C"], a + b)
    r = tl.library.reduction("max", n, dtype=tl.i32, device="xcvc1902", cores=cores, tile=1024)
    assert len(r.dmas) == cores + 1  # a run per core, and the result
    assert run(r, A=a).outputs["C"][0] == a.max()
    # matvec with whole-row tiles: each core one run of row blocks of A, and of C
    mv = tl.library.matvec(2048, 256, device="xcvc1902", cores=cores, tiling={"m": 16, "k": 256})
    fills = [dm for dm in mv.dmas if dm.name.startswith("fill_a")]
    assert len(fills) == cores and all(dm.pattern.sizes == (8 * 16 * 256,) for dm in fills)
    am, bv = ints((2048, 256), tl.i16), ints(256, tl.i16)
    got = run(mv, A=am, B=bv).outputs["C"]
    assert np.array_equal(got, (am.astype(np.int64) @ bv.astype(np.int64)).astype(np.int32))


@pytest.mark.parametrize("device, cores, dt, acc", [("xcvc1902", (2, 2), tl.i16, tl.i32),
                                                     ("npu1", (2, 2), tl.bf16, tl.f32)])
def test_matmul_stream_layout_moves_one_run_per_fifo_and_matches_numpy(device, cores, dt, acc):
    d = tl.library.matmul(128, 64, 128, in_dtype=dt, out_dtype=acc, device=device, cores=cores,
                          tiling={"m": 16, "k": 16, "n": 32}, layout="streams")
    assert all(dm.pattern.rank == 1 and dm.pattern.strides == (1,) for dm in d.dmas)
    # A per core row, B per core column, C per core (AIE1) or per column's join (memtiles)
    assert len(d.dmas) == 2 + 2 + (4 if device == "xcvc1902" else 2)
    np_dt = np.float32 if dt.is_float else dt.numpy
    a, b = ints((128, 64), tl.i16).astype(np_dt), ints((64, 128), tl.i16).astype(np_dt)
    res = run(d, **tl.library.pack_streams(d, a, b))
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.array_equal(tl.library.unpack_streams(d, res.outputs["C"]).astype(np.float64), want)
    # pack_streams(C=...) is unpack_streams' inverse
    c = RNG.integers(-9, 9, (128, 128)).astype(np.int32)
    assert np.array_equal(tl.library.unpack_streams(d, tl.library.pack_streams(d, a, b, C=c)["C"]), c)


def test_matmul_stream_layout_errors():
    with pytest.raises(tl.DesignError, match='linear runs only.*use layout="streams"'):
        tl.library.matmul(256, 256, 256, in_dtype=tl.i16, out_dtype=tl.i32, device="xcvc1902")
    with pytest.raises(tl.DesignError, match='layout must be "row-major" or "streams"'):
        tl.library.matmul(64, 64, 64, cores=1, tiling={"m": 32, "k": 32, "n": 32}, layout="tiled")
    rowmajor = tl.library.matmul(64, 64, 64, cores=1, tiling={"m": 32, "k": 32, "n": 32})
    with pytest.raises(tl.DesignError, match="not a tl.library.matmul design with layout"):
        tl.library.pack_streams(rowmajor, np.zeros((64, 64)), np.zeros((64, 64)))
    d = tl.library.matmul(64, 64, 64, cores=1, tiling={"m": 32, "k": 32, "n": 32}, layout="streams")
    with pytest.raises(tl.DesignError, match=r"takes A \(64, 64\) and B \(64, 64\)"):
        tl.library.pack_streams(d, np.zeros((64, 32)), np.zeros((64, 64)))


@pytest.mark.parametrize("device", ["npu1_1col", "npu1_2col", "npu1_3col", "npu2_3col"])
def test_matmul_default_grid_fits_the_shims_of_a_column_variant(device: str) -> None:
    """A core row takes A, a core column B, each on a shim MM2S channel of its own: the whole 4-row array
    of a one- to three-column device needed more than its NoC shims have, and tl.plan refused it."""
    d = tl.library.matmul(192, 128, 192, in_dtype=tl.bf16, out_dtype=tl.f32, device=device,
                          tiling={"m": 32, "k": 32, "n": 32})
    a, b = RNG.integers(-3, 4, (192, 128)).astype(np.float32), RNG.integers(-3, 4, (128, 192)).astype(np.float32)
    res = run(d, A=a, B=b)
    np.testing.assert_array_equal(res.outputs["C"], a @ b)


def test_matmul_grid_the_shims_cannot_feed_is_named() -> None:
    with pytest.raises(tl.DesignError, match="5 shim MM2S channels; npu1_1col's NoC shims have 2"):
        tl.library.matmul(128, 128, 128, device="npu1_1col", cores=4, tiling={"m": 32, "k": 32, "n": 32})
