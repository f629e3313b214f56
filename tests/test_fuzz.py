"""Fuzzing: generated designs against numpy, and mutated IR text of every zoo design.

Outputs must not depend on the simulation mode, fifo depths or placement; mutated text must end
in success or a tilelang error, never a raw Python exception or a hang. A longer run with counts
by outcome is benchmarks/fuzz_bench.py.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import fuzz_support
import numpy as np
import pytest
from fuzz_support import (
    bounded,
    check_design,
    example_designs,
    module_sources,
    mutate,
    specs,
    through_pipeline,
    through_reader,
)
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from hypothesis_support import quick_and_slow
from zoo_support import CASES, planned, zoo

import tilelang as tl

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: Seconds one mutant may take through parse, plan, both simulations and both emissions (in a child).
CASE_SECONDS = 60


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(), st.integers(0, 2**32 - 1))
def test_outputs_do_not_depend_on_mode_depth_or_placement(spec, seed):
    checked, problems = check_design(spec, seed)
    assert not problems, "\n".join(problems)
    if not checked:
        reject()  # every variant was a PlanError: nothing to compare


def _default_plan_of_a_pipeline_emits_a_module_that_runs_to_numpy(spec, seed):
    """The default (ILP) plan of a generated pipeline, emitted at the physical level and run by the interpreter,
    computes numpy's result; the objectfifo level emits it or names what mlir-aie cannot take."""
    from test_mlir_physical import load_interp

    rng = random.Random(seed)
    a = fuzz_support.inputs_for(spec, seed)
    design = fuzz_support.build(spec, [rng.randint(1, 3) for _ in range(spec.fifos())])
    try:
        plan = tl.plan(design)
    except tl.PlanError:
        reject()
    got = load_interp().run_physical(tl.emit_mlir(plan, level="physical", as_module=True), design, {"A": a}, seed=0)
    assert np.array_equal(got["C"], fuzz_support.reference(spec, a)), spec
    try:
        tl.emit_mlir(plan, level="objectfifo")
    except tl.PlanError as e:
        # the two refusals docs/mlir_backend.md "Limits" names: a fifo in two links, or a memtile whose BDs
        # fit no channel numbering from 0 (the plan's own numbering fits: the physical level above ran it)
        assert "leaves link" in str(e) or "numbers its DMA channels from 0" in str(e), str(e)


test_the_default_plan_of_a_pipeline_emits_a_module_that_runs_to_numpy, \
    test_more_default_plans_of_pipelines_emit_modules_that_run_to_numpy = \
    quick_and_slow(2, 12, given(specs(devices=("npu1", "npu2", "xcve2802")), st.integers(0, 2**32 - 1)),
                   _default_plan_of_a_pipeline_emits_a_module_that_runs_to_numpy)


def test_a_tensor_read_and_written_by_host_moves_is_rejected():
    """In place through the array (read A, write A transposed): whether a read sees the old or the new
    value depended on fifo depths (timed and functional disagreed at depth 4); now the verifier refuses it."""

    @tl.kernel
    def inc(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32]):
        c[...] = a + 1

    def inplace(A: tl.Tensor[(128,), tl.i32]):
        x = tl.fifo(tl.Tile[(16,), tl.i32], depth=4, name="x")
        y = tl.fifo(tl.Tile[(16,), tl.i32], depth=4, name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(8):
                a = x.acquire()
                c = y.acquire()
                inc(a, c)
                x.release()
                y.release()

        tl.dma(A, x, pattern=tl.pattern(0, (128,), (1,)), name="load")
        tl.dma(y, A, pattern=tl.pattern(0, (8, 16), (1, 8)), name="store")

    with pytest.raises(tl.DesignError, match=r"dma 'store'.* writes tensor 'A' where dma 'load'.* reads it"):
        tl.design(device="npu1")(inplace)


def test_disjoint_read_and_write_of_one_tensor_is_accepted():
    """Reading one half of a tensor and writing the other is no race."""

    @tl.kernel
    def inc(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32]):
        c[...] = a + 1

    @tl.design(device="npu1")
    def halves(A: tl.Tensor[(128,), tl.i32]):
        x = tl.fifo(tl.Tile[(16,), tl.i32], name="x")
        y = tl.fifo(tl.Tile[(16,), tl.i32], name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(4):
                a = x.acquire()
                c = y.acquire()
                inc(a, c)
                x.release()
                y.release()

        tl.dma(A, x, pattern=tl.pattern(0, (64,), (1,)))
        tl.dma(y, A, pattern=tl.pattern(64, (64,), (1,)))

    a = np.arange(128, dtype=np.int32)
    out = tl.simulate(halves, A=a).outputs["A"]
    np.testing.assert_array_equal(out[64:], a[:64] + 1)


#: Every zoo case (name, device) and every example script (stem, "small").
SOURCES = CASES + [(p.stem, "small") for p in sorted(EXAMPLES.glob("*.py")) if p.stem not in ("designs", "harness", "vmul")]


@cache
def _examples() -> dict:
    return example_designs()


@cache
def _printed(name: str, device: str, plan: bool) -> str:
    design = _examples()[name] if device == "small" else zoo.ZOO[name][0](device=device)
    if not plan:
        return tl.ir.print(design)
    return tl.ir.print(tl.plan(design, strategy="greedy") if device == "small" else planned(name, device))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), st.booleans(), st.integers(0, 2**32 - 1))
def test_mutated_ir_text_ends_in_success_or_a_tilelang_error(case, plan, seed):
    """Design text is parsed, planned, simulated and emitted; plan text is checked against the device data
    (tests/fuzz_support.plan_violations) when it parses, then simulated and emitted as it is."""
    text = mutate(_printed(*case, plan), random.Random(seed))
    outcome = bounded(through_pipeline, (text,), CASE_SECONDS)
    assert outcome[0] in ("ok", "error"), f"{outcome[0]} on a mutant of {case}:\n{outcome[-1]}\n--- text ---\n{text}"
    if outcome[0] == "ok":
        assert outcome[1] == "ok", f"{outcome[1]} on a mutant of {case}:\n{text}"


@cache
def _modules() -> list:
    return module_sources()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_mutated_mlir_modules_end_in_success_or_a_tilelang_error(seed):
    """Emitted and hand-written mlir-aie modules, edited at random, read by tl.read_mlir, planned and simulated."""
    rng = random.Random(seed)
    label, text, kernels = rng.choice(_modules())
    mutant = mutate(text, rng)
    outcome = bounded(through_reader, (mutant, kernels), CASE_SECONDS)
    assert outcome[0] in ("ok", "error"), f"{outcome[0]} on a mutant of {label}:\n{outcome[-1]}\n--- text ---\n{mutant}"
