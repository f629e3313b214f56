"""The text form of a Plan (docs/ir.md "Plans"): exact round trips, located errors, same simulation.

Designs are written with the frontend: the API.md example, a two-core
pipeline whose middle fifo is shared memory, a whole-array
``tl.library.matmul`` (memtile forwards and joins) and a broadcast on
xcvc1902 (an AIE1 array without memtiles).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from test_plan import two_stage

import simulator
import tilelang as tl
from tilelang.errors import ParseError
from tilelang.ir.plan import Plan

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import designs  # noqa: E402

vector_scalar_mul = designs.vector_scalar_mul()


@tl.kernel
def add_bias(x: tl.Tile[(256,), tl.i32], b: tl.Tile[(256,), tl.i32], y: tl.Tile[(256,), tl.i32]):
    y[...] = x + b


def broadcast(cores: int = 4):
    """xcvc1902: the host broadcasts a bias to ``cores`` cores, each adding it to its own input."""

    def body(A, B, C):
        bias = tl.fifo(tl.Tile[(256,), tl.i32], name="bias")
        for k in range(cores):
            x = tl.fifo(tl.Tile[(256,), tl.i32], name=f"x{k}")
            y = tl.fifo(tl.Tile[(256,), tl.i32], name=f"y{k}")

            def work(x=x, y=y):
                for _ in tl.range(2):
                    xa, ba, ya = x.acquire(), bias.acquire(), y.acquire()
                    add_bias(xa, ba, ya)
                    x.release()
                    bias.release()
                    y.release()

            tl.core(name=f"w{k}")(work)
            tl.dma(A, x, pattern=tl.pattern(k * 512, [512], [1]))
            tl.dma(y, C, pattern=tl.pattern(k * 512, [512], [1]))
        tl.dma(B, bias, pattern=tl.pattern(0, [512], [1]))

    body.__name__ = "bias_broadcast"
    body.__annotations__ = {
        "A": tl.Tensor[(512 * cores,), tl.i32],
        "B": tl.Tensor[(512,), tl.i32],
        "C": tl.Tensor[(512 * cores,), tl.i32],
    }
    return tl.design(device="xcvc1902")(body)


def round_trip(p: Plan) -> Plan:
    """Print, parse, print: the same text, and the parsed plan holds every decision of the original."""
    text = tl.ir.print(p)
    back = tl.ir.parse(text)
    assert isinstance(back, Plan)
    assert tl.ir.print(back) == text
    assert back.placement == p.placement and back.link_tiles == p.link_tiles
    assert back.fifos == p.fifos and back.buffers == p.buffers and back.routes == p.routes
    assert back.solves == p.solves  # the planner records 0.0 seconds; the text leaves seconds out
    assert back.to_json() == p.to_json()
    return back


@pytest.fixture(scope="module")
def vmul_plan() -> Plan:
    return tl.plan(vector_scalar_mul)


def test_golden_plan_of_the_api_example(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    design_text = tl.ir.print(vector_scalar_mul)
    assert text.startswith(design_text + "\nplan @vector_scalar_mul {\n  core @worker at (0, 2)\n")
    assert "  fifo @a_in : host at (0, 0) ch 0 -> core @worker at (0, 2) ch 0\n" in text
    assert "  fifo @c_out : core @worker at (0, 2) ch 0 -> host at (0, 0) ch 0\n" in text
    assert "  route @a_in from (0, 0) to [(0, 2)] links [(0, 0) -> (0, 1), (0, 1) -> (0, 2)]\n" in text
    assert '  solve placement {method = "ilp", status = "optimal", objective = ' in text
    assert "seconds" not in text
    # Buffers are listed as each tile's memory map: by tile, then address.
    lines = [ln for ln in text.splitlines() if ln.startswith("  buffer ")]
    assert len(lines) == 4 and all(" at (0, 2) {bank = " in ln for ln in lines)
    offsets = [int(ln.split("offset = ")[1].split(",")[0]) for ln in lines]
    assert offsets == sorted(offsets) and offsets[0] >= 1024
    assert text.endswith("}\n")
    round_trip(vmul_plan)


@pytest.mark.parametrize("strategy", ["greedy", "ilp"])
def test_shared_memory_fifo_round_trips(strategy: str) -> None:
    p = tl.plan(two_stage(pins=((1, 2), (1, 3))), strategy=strategy)
    assert p.fifos["mid"].shared
    text = tl.ir.print(p)
    tile = p.fifos["mid"].shared_tile
    assert f"  fifo @mid shared at ({tile[0]}, {tile[1]}) : core @first at (1, 2) -> core @second at (1, 3)\n" in text
    assert "route @mid" not in text
    round_trip(p)


def test_whole_array_matmul_plan_round_trips() -> None:
    d = tl.library.matmul(256, 256, 256, tiling={"m": 32, "k": 32, "n": 32})
    p = tl.plan(d, strategy="greedy")
    block = tl.ir.print(p).split("\nplan @")[1]
    assert block.count("\n  link @") == len(d.links) > 0
    assert block.count("\n  core @") == len(d.cores) == 16
    round_trip(p)


@pytest.mark.slow
def test_broadcast_on_xcvc1902_round_trips_and_simulates_the_same() -> None:
    d = broadcast()
    p = tl.plan(d)
    bias = p.fifos["bias"]
    assert len(bias.consumers) == 4
    text = tl.ir.print(p)
    assert text.count("core @w", text.index("fifo @bias")) >= 4
    back = round_trip(p)
    rng = np.random.default_rng(1)
    a = rng.integers(-1000, 1000, 2048, dtype=np.int32)
    b = rng.integers(-1000, 1000, 512, dtype=np.int32)
    want = simulator.simulate(p, A=a, B=b, C=np.zeros(2048, np.int32))
    got = simulator.simulate(back, A=a, B=b, C=np.zeros(2048, np.int32))
    assert got.cycles == want.cycles
    np.testing.assert_array_equal(got.outputs["C"], want.outputs["C"])
    np.testing.assert_array_equal(want.outputs["C"], a + np.tile(b, 4))


def test_parsed_plan_simulates_like_the_original(vmul_plan: Plan) -> None:
    back = tl.ir.parse(tl.ir.print(vmul_plan))
    a = np.arange(4096, dtype=np.int32)
    want = simulator.simulate(vmul_plan, A=a, C=np.zeros(4096, np.int32))
    got = simulator.simulate(back, A=a, C=np.zeros(4096, np.int32))
    assert got.cycles == want.cycles > 0
    assert got.stats == want.stats
    np.testing.assert_array_equal(got.outputs["C"], a * 3)
    np.testing.assert_array_equal(got.outputs["C"], want.outputs["C"])


def test_a_parsed_plan_emits_the_same_mlir(vmul_plan: Plan) -> None:
    back = tl.ir.parse(tl.ir.print(vmul_plan))
    assert tl.emit_mlir(back, level="physical") == tl.emit_mlir(vmul_plan, level="physical")


def test_none_values_and_hand_made_plans_round_trip(vmul_plan: Plan) -> None:
    from dataclasses import replace

    from tilelang.ir.plan import SolveInfo

    solves = {"placement": SolveInfo("greedy", "feasible", 0.0), "extra": SolveInfo("x", "y", 0.0, 3, None)}
    p = replace(vmul_plan, solves=solves)
    text = tl.ir.print(p)
    assert '  solve placement {method = "greedy", status = "feasible"}\n' in text
    assert '  solve extra {method = "x", status = "y", objective = 3}\n' in text
    back = tl.ir.parse(text)
    assert back.solves == solves and isinstance(back.solves["extra"].objective, int)


# -- errors -------------------------------------------------------------------------------


def _plan_line(text: str, prefix: str) -> int:
    """1-based line number of the first line of the plan block starting with ``prefix``."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("plan @"))
    return next(i for i, ln in enumerate(lines[start:], start + 1) if ln.startswith(prefix))


@pytest.mark.parametrize(
    ("old", "new", "prefix", "column", "message"),
    [
        ("core @worker at (0, 2)", "core @boss at (0, 2)", "  core @boss", 8, "undefined core @boss"),
        ("core @worker at (0, 2)", "core @worker at (9, 2)", "  core @worker at", 19,
         r"tile \(9, 2\) is outside npu1's 4x6 array"),
        ("core @worker at (0, 2)", "core @worker at (0 2)", "  core @worker at", 22, r"unexpected '2'; expected ','"),
        ("-> host at (0, 0) ch 0", "-> host at (0, 0) ch", "  fifo @c_out", 43, "unexpected 'buffer'; expected a number"),
        ("fifo @a_in : host", "fifo @b_in : host", "  fifo @b_in", 8, "undefined fifo @b_in"),
        ("fifo @a_in : host at (0, 0) ch 0 -> core @worker", "fifo @a_in : core @worker at (0, 0) ch 0 -> host",
         "  fifo @a_in", 8, "fifo @a_in runs from host to core:worker in the design; the plan gives ends core:worker, host"),
        ("{bank = ", "{bunk = ", "  buffer", 0, "unknown attribute bunk"),
        (": @a_in[0] at", ": @a_in[2] at", "  buffer @a_in_worker_0", 0, "fifo @a_in has 2 buffers, no index 2"),
        ("route @a_in from", "route @q from", "  route @q", 9, "undefined fifo @q"),
        ('solve routing {method', 'solve routing {status = "x", method', "  solve routing", 0, "duplicate attribute status"),
        ("plan @vector_scalar_mul {", "plan @other {", "plan @other", 6, "plan @other follows design @vector_scalar_mul"),
    ],
)
def test_plan_parse_errors(vmul_plan: Plan, old: str, new: str, prefix: str, column: int, message: str) -> None:
    text = tl.ir.print(vmul_plan)
    assert old in text
    bad = text.replace(old, new, 1)
    with pytest.raises(ParseError, match=message) as info:
        tl.ir.parse(bad)
    line = _plan_line(bad, prefix)
    if "expected a number" in message:
        line += 1  # the parser meets the next line's first token
        column = 3
    assert info.value.line == line
    if column:
        assert info.value.column == column


def test_missing_and_duplicate_decisions_are_located(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    no_core = text.replace("  core @worker at (0, 2)\n", "", 1)
    with pytest.raises(ParseError, match="plan @vector_scalar_mul does not place core @worker") as info:
        tl.ir.parse(no_core)
    assert (info.value.line, info.value.column) == (_plan_line(no_core, "plan @"), 6)
    twice = text.replace("  core @worker at (0, 2)\n", "  core @worker at (0, 2)\n  core @worker at (0, 3)\n", 1)
    with pytest.raises(ParseError, match="the tile of core @worker is given twice") as info:
        tl.ir.parse(twice)
    assert info.value.line == _plan_line(twice, "  core @worker at (0, 3)")
    route = next(ln for ln in text.splitlines() if ln.startswith("  route @a_in"))
    again = text.replace(route, route + "\n" + route, 1)
    with pytest.raises(ParseError, match="the route of @a_in is given twice"):
        tl.ir.parse(again)


def test_a_plan_needs_its_design_first(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    plan_part = text[text.index("plan @"):]
    with pytest.raises(ParseError, match="a plan follows the design it plans") as info:
        tl.ir.parse(plan_part)
    assert (info.value.line, info.value.column) == (1, 1)
    with pytest.raises(ParseError, match="at most one plan"):
        tl.ir.parse(text + "\n" + plan_part)
