"""Designs from edited IR text with absurd sizes are refused up front, never hang.

Each case changes one number in a printed design (a loop bound, a fifo depth, a
repeat count) and checks that the design verifier names the limit, or, for the
stages that used to run in time proportional to a declared size (the emitter's
factoring of a BD dimension, the link BD-pool advice), that they answer at once.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang as tl
from tilelang.errors import DesignError, ParseError, PlanError
from tilelang.ir.design import Loop
from tilelang.ir.verify_sizes import LOOP_LIMIT, MAX_CORE_STEPS, MAX_MOVE_ELEMENTS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import designs  # noqa: E402


def _vsm_text() -> str:
    return tl.ir.print(designs.vector_scalar_mul(4096, 1024))


def _mutate(text: str, pattern: str, new: str) -> str:
    out, n = re.subn(pattern, new, text, count=1)
    assert n == 1, pattern
    return out


@pytest.mark.parametrize("bound", [10**30, 2**31, -(2**31) - 1])
def test_a_loop_bound_past_32_bits_is_refused(bound):
    text = _mutate(_vsm_text(), r"to 4 step", f"to {bound} step")
    with pytest.raises(DesignError, match=rf"loop stop {bound} is outside the 32-bit range \[-2147483648, 2147483647\]"):
        tl.ir.parse(text)


def test_trip_count_is_exact_for_any_bounds():
    assert Loop(0, 10**30, 1, ()).trip_count == 10**30
    assert Loop(0, 10, 3, ()).trip_count == len(range(0, 10, 3))
    assert Loop(10, -3, -4, ()).trip_count == len(range(10, -3, -4))
    assert Loop(5, 0, 1, ()).trip_count == 0


def test_a_loop_past_the_simulation_limit_is_refused():
    text = _mutate(_vsm_text(), r"to 4 step", "to 100000000 step")
    with pytest.raises(DesignError, match=rf"core 'worker': its loops execute \d+ statements .* limit of {MAX_CORE_STEPS}"):
        tl.ir.parse(text)
    assert LOOP_LIMIT > MAX_CORE_STEPS  # so the step limit, not the bound, is what this case meets


@pytest.mark.parametrize("repeat", [2**32, 2**63, 10**6])
def test_a_huge_repeat_is_refused(repeat):
    text = _mutate(_vsm_text(), r"repeat = 1>", f"repeat = {repeat}>")
    with pytest.raises(DesignError, match=rf"dma 'dma0': moves \d+ elements .* limit of {MAX_MOVE_ELEMENTS}"):
        tl.ir.parse(text)


@pytest.mark.parametrize("depth", [0, -1])
def test_a_depth_below_one_is_a_parse_error(depth):
    text = _mutate(_vsm_text(), r"depth = 2", f"depth = {depth}")
    with pytest.raises(ParseError, match=f"depth must be a positive int, got {depth}"):
        tl.ir.parse(text)


@pytest.mark.parametrize("depth", [300_000, 10**18])
def test_a_depth_no_tile_memory_holds_is_refused(depth):
    text = _mutate(_vsm_text(), r"depth = 2", f"depth = {depth}")
    with pytest.raises(DesignError, match=r"fifo 'a_in': depth \d+ x 4096 B = \d+ B, more than the largest data memory "
                                          r"of any tile of npu1 \(524288 B\)"):
        tl.ir.parse(text)


def test_zero_trip_loops_are_legal_print_back_and_run_as_written():
    # an extra loop that runs no trip (0 to 0, and 5 to 0) inside the worker's body changes nothing
    text = _vsm_text()
    extra = ("      for %i1 = 0 to 0 step 1 {\n        acquire @a_in consume 1\n        release @a_in consume 1\n      }\n"
             "      for %i1 = 5 to 0 step 1 {\n        acquire @a_in consume 1\n        release @a_in consume 1\n      }\n")
    text = text.replace("      acquire @a_in consume 1\n", extra + "      acquire @a_in consume 1\n", 1)
    d = tl.ir.parse(text)
    assert tl.ir.print(d) == text
    a = np.arange(4096, dtype=np.int32)
    res = tl.simulate(tl.plan(d, strategy="greedy"), mode="timed", A=a)
    np.testing.assert_array_equal(res.outputs["C"], 3 * a)


def test_a_loop_that_releases_more_than_it_ever_holds_is_refused_whatever_its_trips():
    # two elements held before the loop, one released per trip: the third trip releases what is not held
    text = _vsm_text()
    body = text[text.index("  core @worker {"): text.index("  dma @dma0")]
    new = ("  core @worker {\n    acquire @a_in consume 2\n    acquire @c_out produce 2\n"
           "    call @scale(@a_in[0], @c_out[0], 3 : i32)\n    for %i0 = 0 to 1000000 step 1 {\n"
           "      release @a_in consume 1\n      release @c_out produce 1\n    }\n  }\n")
    with pytest.raises(DesignError, match="releases 1 elements of fifo 'a_in' while holding 0"):
        tl.ir.parse(text.replace(body, new))


def test_the_emitter_refuses_an_unfittable_huge_dimension_without_factoring_it():
    from tilelang.backends.mlir.bd import Walk, fit_walk

    bits = tl.device("npu1").bd_field_bits((0, 0))
    for n in (2**32, 2**63, 2**61 - 1):  # a power of two, and a prime: neither has a divisor under the wrap limit
        with pytest.raises(PlanError):
            fit_walk(Walk(0, ((n, 0), (16, 1))), 4, bits, 3, "a move", True)


def test_a_repeat_is_checked_against_the_repeat_field_it_is_emitted_in():
    """An outermost stride-0 dimension goes to dma_memcpy_nd's repeat slot (runtime_sequence.static_fields),
    whose field holds 1..64, even when the walk would fit the wrap fields (up to 1023): 66 repeats used to
    pass the check and then be refused by mlir-aie."""
    from tilelang.backends.mlir.bd import Walk, fit_walk

    bits = tl.device("npu1").bd_field_bits((0, 0))
    assert fit_walk(Walk(0, ((64, 0), (16, 1))), 4, bits, 3, "a move", True).dims == ((64, 0), (16, 1))
    with pytest.raises(PlanError, match="iteration field"):
        fit_walk(Walk(0, ((66, 0), (16, 1))), 4, bits, 3, "a move", True)
    with pytest.raises(PlanError, match="a DMA repeats only in its outermost dimension"):
        fit_walk(Walk(0, ((2, 64), (3, 0), (16, 1))), 4, bits, 3, "a move", True)


def _join_design(depth: int) -> str:
    @tl.kernel
    def inc(a: tl.Tile[(1,), tl.i32], c: tl.Tile[(1,), tl.i32]):
        c[...] = a + 1

    @tl.design(device="npu1")
    def joined(A: tl.Tensor[(4,), tl.i32], C: tl.Tensor[(4,), tl.i32]):
        ins = [tl.fifo(tl.Tile[(1,), tl.i32], name=f"in{i}") for i in range(2)]
        outs = [tl.fifo(tl.Tile[(1,), tl.i32], name=f"out{i}") for i in range(2)]
        whole = tl.fifo(tl.Tile[(2,), tl.i32], name="whole")
        for i in range(2):

            @tl.core(name=f"w{i}")
            def w(i=i):
                for _ in tl.range(2):
                    x, y = ins[i].acquire(), outs[i].acquire()
                    inc(x, y)
                    ins[i].release()
                    outs[i].release()

            tl.dma(A, ins[i], tl.pattern(offset=i, sizes=[2], strides=[2]))
        tl.join(outs, whole, offsets=[0, 1])
        tl.dma(whole, C)

    return _mutate(tl.ir.print(joined), r"fifo @whole : tile<2xi32> \{depth = 2\}",
                   f"fifo @whole : tile<2xi32> {{depth = {depth}}}")


def test_a_deep_join_fifo_gets_its_advice_at_once():
    # 63 buffers of 8 B fit a memtile and its locks, but not its BD pools; the advice is found by bisection
    with pytest.raises(PlanError, match=r"link 'join_whole' needs \d+ buffer descriptors .* give 'whole' depth \d+ or less"):
        tl.plan(tl.ir.parse(_join_design(63)), strategy="greedy")
    # 60,000 would fit the memtile's memory, but no lock of npu1 counts that far
    with pytest.raises(DesignError, match=r"fifo 'whole': depth 60000 is more than npu1 allows, at most 63"):
        tl.ir.parse(_join_design(60_000))
