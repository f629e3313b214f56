"""tl.passes.double_buffer: deeper fifos where memory allows, the same outputs, never slower.

Outputs are compared bit for bit with the original design's under the simulator (and numpy where the design
has a closed form); the depth ILP is compared with brute force over every depth assignment; memory limits are
checked by tl.plan (the pass's result must plan), and cycles before and after by the simulator.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_support import quick_and_slow
from test_sim_support import small_int_inputs

import tilelang as tl
from tilelang.errors import DesignError
from tilelang.passes.double_buffer import (
    _candidates,
    _gain_at,
    _room,
    build_model,
    depth_one,
    double_buffer,
    fifo_gains,
    min_depths,
)
from tilelang.passes.trial import plan_quietly
from tilelang.plan.solve import solve_model

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

import designs  # noqa: E402


def _run(design: tl.Design, inputs: dict[str, np.ndarray]):  # noqa: ANN202 - a SimResult
    return tl.simulate(tl.plan(design), **inputs)


def _same_and_not_slower(before: tl.Design, after: tl.Design, inputs: dict[str, np.ndarray],
                         results: list | None = None) -> tuple[int, int]:
    """Outputs equal and cycles not worse; ``results``, if given, receives the two runs (before, after)."""
    rb, ra = _run(before, inputs), _run(after, inputs)
    if results is not None:
        results += [rb, ra]
    assert set(rb.outputs) == set(ra.outputs)
    for name in rb.outputs:
        assert rb.outputs[name].dtype == ra.outputs[name].dtype
        assert np.array_equal(rb.outputs[name], ra.outputs[name]), name
    assert ra.cycles <= rb.cycles, (rb.cycles, ra.cycles)
    return rb.cycles, ra.cycles


def test_depth_one_keeps_the_windows_cores_hold():
    d = tl.library.conv2d(10, 18, 8, 16, device="npu1", cores=1)
    base = depth_one(d)
    depths = {f.name: f.depth for f in base.fifos}
    assert depths["rows_0"] == 3  # the 3x3 stencil holds three rows at once
    assert all(v == 1 for k, v in depths.items() if k != "rows_0")
    assert min_depths(d) == depths


def test_single_core_gemm_deepens_and_gets_faster_with_the_same_numbers():
    d = depth_one(designs.gemm_single_core(64, 64, 64, 32))
    out = double_buffer(d)
    assert [f.depth for f in d.fifos] == [1, 1, 1]
    assert [f.depth for f in out.fifos] == [2, 2, 2]
    x = small_int_inputs(d)
    before, after = _same_and_not_slower(d, out, x)
    assert after < before
    got = _run(out, x).outputs["C"]
    assert np.array_equal(got, x["A"].astype(np.float32) @ x["B"].astype(np.float32))


def test_memory_bounds_the_depths():
    """64^3 bf16 tiles with an f32 C on one npu1 core: A, B (8 KiB each) and C (16 KiB) cannot all be doubled
    (64 KiB + the 1 KiB stack > 64 KiB), so the pass deepens what fits and the result plans."""
    d = depth_one(tl.library.matmul(64, 128, 64, device="npu1", cores=1, tiling={"m": 64, "k": 64, "n": 64}))
    out = double_buffer(d)
    deeper = [f.name for f, g in zip(d.fifos, out.fifos, strict=True) if g.depth > f.depth]
    shallow = [f.name for f, g in zip(d.fifos, out.fifos, strict=True) if g.depth == 1]
    assert deeper and shallow
    plan = tl.plan(out)
    for tile in {b.tile for b in plan.buffers.values()}:
        used = sum(b.size for b in plan.buffers.values() if b.tile == tile)
        assert used <= out.device.memory_bytes(tile)
    _same_and_not_slower(d, out, small_int_inputs(d))


def test_the_depth_ilp_equals_brute_force():
    d = depth_one(tl.library.matmul(64, 128, 64, device="npu1", cores=1, tiling={"m": 64, "k": 64, "n": 64}))
    gains = fifo_gains(d)
    room = _room(plan_quietly(d, "greedy"))
    cands = _candidates(d, gains, room, 4)
    assert len(cands) >= 3
    prob, _x = build_model(d, gains, room, cands)
    sol = solve_model(prob, "cbc", 30)
    best = None
    names = sorted(cands)
    for combo in itertools.product(*(cands[f] for f in names)):
        extra: dict = {}
        for f, depth in zip(names, combo, strict=True):
            for t, n in room.sets[f].items():
                extra[t] = extra.get(t, 0) + (depth - d.fifo(f).depth) * n * room.size[f]
        if any(v > max(0, room.free.get(t, 0)) for t, v in extra.items()):
            continue
        gain = sum(_gain_at(gains[f], depth) for f, depth in zip(names, combo, strict=True))
        best = gain if best is None else max(best, gain)
    assert best is not None and best > 0
    # the objective is -gain + a tie-break in bytes smaller than one cycle of gain
    assert -sol.objective == pytest.approx(best, abs=1.0)


def test_the_pass_is_deterministic():
    d = depth_one(designs.vector_scalar_mul(2048, 256))
    assert tl.ir.print(double_buffer(d)) == tl.ir.print(double_buffer(d))


def test_nothing_to_gain_returns_the_design():
    d = designs.vector_scalar_mul(2048, 256)  # already double-buffered
    assert double_buffer(d) is d


@pytest.mark.parametrize("bad", [{"max_depth": 0}, {"max_depth": True}, {"time_limit": -1}])
def test_bad_arguments(bad):
    with pytest.raises(DesignError, match="double_buffer"):
        double_buffer(designs.vector_scalar_mul(2048, 256), **bad)


def test_not_a_design():
    with pytest.raises(DesignError, match="takes a Design"):
        double_buffer("vector_scalar_mul")  # type: ignore[arg-type]


def _small_pipeline_keeps_its_outputs_bit_for_bit(chains, stages, iters, n, device, seed):
    d = depth_one(designs.chains(chains, stages, n, iters, device=device))
    out = double_buffer(d)
    x = small_int_inputs(d, seed)
    runs: list = []
    _same_and_not_slower(d, out, x, runs)
    want = x["X"].astype(np.int64)
    for _ in range(stages):  # every stage on iteration i: 3 x + i
        want = want * 3 + np.repeat(np.arange(iters), n)[None, :]
    assert np.array_equal(runs[1].outputs["Y"], want.astype(np.int32))


test_small_pipelines_keep_their_outputs_bit_for_bit, test_more_small_pipelines_keep_their_outputs_bit_for_bit = \
    quick_and_slow(2, 8, given(chains=st.integers(1, 2), stages=st.integers(1, 3), iters=st.integers(1, 4),
                               n=st.sampled_from([16, 64]), device=st.sampled_from(["npu1", "xcvc1902"]),
                               seed=st.integers(0, 3)),
                   _small_pipeline_keeps_its_outputs_bit_for_bit)


def test_library_designs_written_shallow_are_not_slower():
    cases = [
        tl.library.matvec(128, 64, device="npu1", cores=1),
        tl.library.conv2d(10, 18, 8, 16, device="npu1", cores=1),
        tl.library.elementwise("add", 4096, dtype=tl.i32, device="npu2", cores=2, tile=512),
    ]
    for d in cases:
        base = depth_one(d)
        _same_and_not_slower(base, double_buffer(base), small_int_inputs(base))


def test_the_deepened_design_goes_through_mlir_aies_flow():
    from tilelang.backends.mlir import vendor

    pytest.importorskip("mlir.ir")
    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    out = double_buffer(depth_one(designs.vector_scalar_mul(2048, 256)))
    assert [f.depth for f in out.fifos] == [2, 2]
    plan = tl.plan(out)
    for level in ("objectfifo", "physical"):
        vendor.compile_text(tl.emit_mlir(plan, level=level), level)


#: Examples the pass makes slower, with why (docs/passes.md "double_buffer"); each has its strict xfail below.
KNOWN_SLOWER = {
    "example decode_attention": "deeper K^T and V fifos start more shim reads at once, which share the DDR; the "
                                "pass's per-fifo gains do not see the shared DDR (11 430 -> 11 499 cycles)",
}


def _example_rows(labels: set[str] | None = None) -> list:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import passes_bench

    return [r for r in passes_bench.example_rows() if labels is None or r[0] in labels]


@pytest.mark.slow
def test_every_example_written_shallow_is_not_slower():
    """benchmarks/passes_bench.py's double_buffer rows for the examples, as assertions (a few minutes)."""
    for label, design, inputs, check in _example_rows():
        if label in KNOWN_SLOWER:
            continue
        base = depth_one(design)
        out = double_buffer(base)
        _same_and_not_slower(base, out, inputs)
        assert check(_run(out, inputs).outputs), label


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=KNOWN_SLOWER["example decode_attention"])
def test_decode_attention_written_shallow_is_not_slower():
    (label, design, inputs, check), = _example_rows({"example decode_attention"})
    base = depth_one(design)
    _same_and_not_slower(base, double_buffer(base), inputs)
