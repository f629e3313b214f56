"""Core-local buffers (``tl.buffer``): errors, IR text, lifetimes, packing, simulation and both MLIR levels.

Checked against what the code under test does not compute itself: numpy (the
designs' outputs), an unrolled execution of the core program (lifetimes),
brute force over placement orders (packing) and mlir-aie's own tools (MLIR).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tilelang as tl
from tilelang.backends.mlir import vendor
from tilelang.ir.design import BufArg, Call, Core, LocalBuffer, Loop
from tilelang.ir.liveness import liveness
from tilelang.ir.verify import check_locals
from tilelang.plan.packing import pack_offsets

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import local_buffers as lb  # noqa: E402

N = 16
TILE = tl.Tile[(N,), tl.f32]


@tl.kernel
def init(y: TILE):
    y[...] = 0.0


@tl.kernel
def copy(x: TILE, y: TILE):
    y[...] = x + 1.0


@tl.kernel
def accumulate(x: TILE, y: TILE):
    y[...] += x


KERNELS = {k.name: k for k in (init, copy, accumulate)}


def one_core_design(body):
    """A design whose core runs ``body(x_in, y_out)`` inside its function (so tl.buffer is traced)."""

    @tl.design(device="npu1")
    def d(X: tl.Tensor[(N,), tl.f32], Y: tl.Tensor[(N,), tl.f32]):
        x_in = tl.fifo(TILE, name="x_in")
        y_out = tl.fifo(TILE, name="y_out")

        @tl.core(name="w")
        def w():
            body(x_in, y_out)

        tl.dma(X, x_in)
        tl.dma(y_out, Y)

    return d


# -- errors -----------------------------------------------------------------------------------


def test_buffer_outside_a_core_is_a_design_error():
    with pytest.raises(tl.DesignError, match="only valid inside a @tl.core"):

        @tl.design(device="npu1")
        def d(X: tl.Tensor[(N,), tl.f32]):
            tl.buffer(TILE)


def test_reading_a_buffer_before_any_write_names_it():
    def body(x_in, y_out):
        acc = tl.buffer(TILE, name="acc")
        x = x_in.acquire()
        accumulate(x, acc)  # reads acc, never written
        x_in.release()
        y = y_out.acquire()
        copy(acc, y)
        y_out.release()

    with pytest.raises(tl.DesignError, match=r"reads buffer 'acc' .* before any call writes it"):
        one_core_design(body)


def test_a_buffer_of_the_wrong_type_names_the_parameter():
    def body(x_in, y_out):
        b = tl.buffer(tl.Tile[(N,), tl.i32], name="b")
        init(b)

    with pytest.raises(tl.DesignError, match=r"parameter 'y' expects tile<16xf32>, buffer 'b' is tile<16xi32>"):
        one_core_design(body)


def test_an_unused_buffer_and_a_duplicate_name_are_errors():
    def unused(x_in, y_out):
        tl.buffer(TILE, name="idle")
        x, y = x_in.acquire(), y_out.acquire()
        copy(x, y)
        x_in.release()
        y_out.release()

    with pytest.raises(tl.DesignError, match="buffer 'idle'.* is never passed to a kernel"):
        one_core_design(unused)

    def clash(x_in, y_out):
        tl.buffer(TILE, name="x_in")

    with pytest.raises(tl.DesignError, match="'x_in' is already used"):
        one_core_design(clash)


def pipeline_body(x_in, y_out):
    t1 = tl.buffer(TILE, name="t1")
    t2 = tl.buffer(TILE, name="t2")
    t3 = tl.buffer(TILE, name="t3")
    for _ in tl.range(3):
        x = x_in.acquire()
        copy(x, t1)
        x_in.release()
        copy(t1, t2)
        copy(t2, t3)
        y = y_out.acquire()
        copy(t3, y)
        y_out.release()


def test_ir_text_round_trips_and_names_undefined_buffers():
    d = one_core_design(pipeline_body)
    text = tl.ir.print(d)
    assert "buffer @t1 : tile<16xf32>" in text and "call @copy(@t1, @t2)" in text
    assert str(d) == text
    assert tl.ir.print(tl.ir.parse(text)) == text
    with pytest.raises(tl.ParseError, match="undefined buffer @t9"):
        tl.ir.parse(text.replace("call @copy(@t1, @t2)", "call @copy(@t9, @t2)"))


# -- lifetimes against an unrolled execution ---------------------------------------------------

#: what each test kernel does to its tile parameters: (reads, kills) by parameter position
EFFECT = {"init": ((), (0,)), "copy": ((0,), (1,)), "accumulate": ((0, 1), ())}


def unrolled_resident(core: Core) -> list[set[str]]:
    """Per static call, the buffers resident in any of its executions, from the executed trace."""
    trace: list[tuple[int, set[str], set[str], set[str]]] = []  # (static call, reads, kills, touched)
    counter = itertools.count()
    numbers: dict[int, int] = {}

    def number(body):
        for s in body:
            if isinstance(s, Call):
                numbers[id(s)] = next(counter)
            elif isinstance(s, Loop):
                number(s.body)

    def run(body):
        for s in body:
            if isinstance(s, Call):
                reads, kills = EFFECT[s.kernel]
                names = [a.buffer for a in s.args]
                r = {names[i] for i in reads}
                k = {names[i] for i in kills} - r
                trace.append((numbers[id(s)], r, k, set(names)))
            elif isinstance(s, Loop):
                for _ in range(s.trip_count):
                    run(s.body)

    number(core.body)
    run(core.body)
    out = [set() for _ in range(next(counter))]
    for i, (n, _, _, touched) in enumerate(trace):
        live_after = set()
        for b in {x for *_, t in trace for x in t}:
            for _, r, k, _ in trace[i + 1 :]:
                if b in r:
                    live_after.add(b)
                    break
                if b in k:
                    break
        out[n] |= live_after | touched
    return out


@st.composite
def programs(draw):
    names = [f"b{i}" for i in range(draw(st.integers(2, 4)))]

    def call():
        kernel = draw(st.sampled_from(sorted(EFFECT)))
        arity = 1 if kernel == "init" else 2
        args = draw(st.lists(st.sampled_from(names), min_size=arity, max_size=arity, unique=True))
        return Call(kernel, tuple(BufArg(a) for a in args))

    def body(depth):
        out = []
        for _ in range(draw(st.integers(1, 4))):
            if depth < 2 and draw(st.integers(0, 3)) == 0:
                out.append(Loop(0, draw(st.integers(0, 3)), 1, body(depth + 1)))
            else:
                out.append(call())
        return tuple(out)

    return Core("w", body(0), buffers=tuple(LocalBuffer(n, TILE) for n in names))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(programs())
def test_lifetimes_equal_those_of_the_unrolled_program(core):
    try:
        check_locals(core, KERNELS)
    except tl.DesignError:
        assume(False)
    live = liveness(core, KERNELS)
    assert [set(s) for s in live.resident] == unrolled_resident(core)


def test_the_pipeline_lets_t1_and_t3_share_but_not_t1_and_t2():
    d = one_core_design(pipeline_body)
    live = liveness(d.cores[0], KERNELS)
    assert live.interference() == {("t1", "t2"), ("t2", "t3")}


# -- packing against brute force ---------------------------------------------------------------


def brute_force_extent(sizes: dict[str, int], meet: set[tuple[str, str]]) -> int:
    """Least extent over every order of lowest-fit placement (an optimal layout is one of them: placed in the
    order of its offsets, lowest fit puts each buffer no higher than the layout does)."""
    best = None
    for order in itertools.permutations(sizes):
        placed: dict[str, int] = {}
        for n in order:
            busy = sorted((placed[o], placed[o] + sizes[o]) for o in placed if (min(o, n), max(o, n)) in meet)
            at = 0
            for lo, hi in busy:
                if lo - at >= sizes[n]:
                    break
                at = max(at, hi)
            placed[n] = at
        extent = max(placed[n] + sizes[n] for n in placed)
        best = extent if best is None else min(best, extent)
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 8), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2))))
def test_packing_reaches_the_brute_force_optimum(case):
    units, edges = case
    sizes = {f"b{i}": 16 * u for i, u in enumerate(units)}
    names = sorted(sizes)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    meet = {p for p, e in zip(pairs, edges, strict=True) if e}
    offsets, info = pack_offsets(sizes, meet)
    for a, b in meet:
        assert offsets[a] + sizes[a] <= offsets[b] or offsets[b] + sizes[b] <= offsets[a], (a, b, offsets)
    assert all(o % 16 == 0 for o in offsets.values())
    assert max(offsets[n] + sizes[n] for n in names) == brute_force_extent(sizes, meet), info


# -- planning, verifying, simulating -----------------------------------------------------------


def test_the_pipeline_plans_only_with_packing_and_matches_numpy():
    d = lb.kernel_pipeline()
    with pytest.raises(tl.PlanError, match=r"needs \d+ B of data memory, has 65536 B"):
        tl.plan(d, pack=False, strategy="greedy")
    plan = tl.plan(d, strategy="greedy")
    t1, t3 = plan.buffers["t1"], plan.buffers["t3"]
    assert t1.offset == t3.offset  # the two f32 buffers share bytes
    assert "packing_pipeline" in plan.solves
    x = lb.inputs(d)
    res = tl.simulate(plan, **x)
    assert np.array_equal(res.outputs["C"].view(np.uint16), lb.pipeline_reference(x["A"]).view(np.uint16))


def overlap_body(x_in, y_out):
    t1 = tl.buffer(TILE, name="t1")
    t2 = tl.buffer(TILE, name="t2")
    x = x_in.acquire()
    copy(x, t1)  # t1 = x + 1
    x_in.release()
    copy(t1, t2)  # t2 = x + 2
    accumulate(t1, t2)  # t2 = 2x + 3, needing t1 intact after t2 was written
    y = y_out.acquire()
    copy(t2, y)  # y = 2x + 4
    y_out.release()


def test_the_simulator_shows_a_wrong_packing():
    """Buffers the plan packs share bytes in the simulation too: t1 over t2 (which meet) gives wrong numbers."""
    d = one_core_design(overlap_body)
    plan = tl.plan(d, strategy="greedy")
    x = np.arange(N, dtype=np.float32)
    assert np.array_equal(tl.simulate(plan, mode="functional", X=x).outputs["Y"], 2 * x + 4)
    bad = dict(plan.buffers)
    bad["t2"] = dataclasses.replace(bad["t2"], offset=bad["t1"].offset, bank=bad["t1"].bank)
    wrong = dataclasses.replace(plan, buffers=bad)
    assert not np.array_equal(tl.simulate(wrong, mode="functional", X=x).outputs["Y"], 2 * x + 4)
    with pytest.raises(tl.ParseError, match="'t1' .* and 't2' .* whose lifetimes meet overlap"):
        tl.ir.parse(tl.ir.print(wrong))


@pytest.mark.parametrize("factory", [lb.fused_matmul_relu, lb.attention_step, lb.kernel_pipeline])
def test_designs_with_local_buffers_plan_and_report(factory):
    d = factory()
    plan = tl.plan(d)
    report = plan.report()
    for c in d.cores:
        for b in c.buffers:
            assert plan.buffers[b.name].tile == plan.placement[c.name]
            assert b.name in report


# -- mlir-aie accepts both levels ---------------------------------------------------------------


@pytest.mark.skipif(bool(vendor.missing_tools_reason()), reason=vendor.missing_tools_reason())
@pytest.mark.parametrize("level", ["objectfifo", "physical"])
def test_mlir_aie_lowers_local_buffers_packed_and_apart(level):
    small = {"fused": lb.fused_matmul_relu(64, 64, 64), "pipeline": lb.kernel_pipeline(2048, 512)}
    for name, d in small.items():
        plan = tl.plan(d, strategy="greedy")
        text = tl.emit_mlir(plan, level=level)
        if name == "pipeline":
            assert "t1_t3" in text and "memref.view" in text  # the packed pair: one byte buffer, two views
        result = vendor.compile_text(text, level=level)
        if level == "physical":
            assert vendor.check_preserved(text, result) == []
