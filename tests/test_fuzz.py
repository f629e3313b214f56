"""Fuzzing: generated designs against numpy, and mutated IR text of every zoo design.

Outputs must not depend on the simulation mode, fifo depths or placement; mutated text must end
in success or a tilelang error, never a raw Python exception or a hang. A longer run with counts
by outcome is benchmarks/fuzz_bench.py.
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np
import pytest
from fuzz_support import (
    bounded,
    build,
    compute_tiles,
    inputs_for,
    mutate,
    reference,
    specs,
    through_pipeline,
)
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from zoo_support import CASES, zoo

import simulator
import tilelang as tl

#: Seconds one mutant may take through parse, plan, both simulations and both emissions (in a child).
CASE_SECONDS = 60


def _outputs(design, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """C from timed and functional simulation of ``design``'s greedy plan, both printed and parsed back."""
    design = tl.ir.parse(tl.ir.print(design))
    plan = tl.ir.parse(tl.ir.print(tl.plan(design, strategy="greedy")))
    timed = simulator.simulate(plan, A=a, trace=False).outputs["C"]
    functional = simulator.simulate(plan, A=a, mode="functional").outputs["C"]
    return timed, functional


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(), st.integers(0, 2**32 - 1))
def test_outputs_do_not_depend_on_mode_depth_or_placement(spec, seed):
    rng = random.Random(seed)
    a = inputs_for(spec, seed)
    want = reference(spec, a)
    tiles = compute_tiles(spec.device)
    variants = [
        ("depths", [rng.randint(1, 4) for _ in range(spec.fifos())], None),
        ("other depths", [rng.randint(1, 4) for _ in range(spec.fifos())], None),
        ("pinned", [rng.randint(1, 4) for _ in range(spec.fifos())], rng.sample(tiles, spec.cores())),
    ]
    checked = 0
    for what, depths, pins in variants:
        try:
            timed, functional = _outputs(build(spec, depths, pins), a)
        except tl.PlanError:
            continue  # a pinned placement or a depth the device cannot carry: a tilelang error, nothing to compare
        np.testing.assert_array_equal(functional, want, err_msg=f"functional, {what}: {spec}")
        np.testing.assert_array_equal(timed, want, err_msg=f"timed, {what}: {spec}")
        checked += 1
    if not checked:
        reject()


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


@cache
def _printed(name: str, device: str) -> str:
    return tl.ir.print(zoo.ZOO[name][0](device=device))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CASES), st.integers(0, 2**32 - 1))
def test_mutated_ir_text_ends_in_success_or_a_tilelang_error(case, seed):
    text = mutate(_printed(*case), random.Random(seed))
    outcome = bounded(through_pipeline, (text,), CASE_SECONDS)
    assert outcome[0] in ("ok", "error"), f"{outcome[0]} on a mutant of {case}:\n{outcome[-1]}\n--- text ---\n{text}"
    if outcome[0] == "ok":
        assert outcome[1] == "ok", f"timed and functional outputs differ on a mutant of {case}:\n{text}"
