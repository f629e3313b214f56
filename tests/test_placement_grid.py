"""Placement keeps the cores' logical grid where the objective ties, and the tie-break never changes the
primary objective's optimum (tilelang/plan/placement_grid.py has the bound on its weight)."""

from __future__ import annotations

import itertools
import random

import pytest

import tilelang as tl
from tilelang.ir.core_grid import grid_deviation, grid_note, logical_grid
from tilelang.plan.carriage import Placement
from tilelang.plan.greedy import greedy_placement
from tilelang.plan.placement import place_ilp
from tilelang.plan.placement_grid import grid_of, tie_weight
from tilelang.plan.placement_model import objective_of
from tilelang.plan.problem import build_problem


def gemm(n: int, cores: tuple[int, int]):
    return tl.library.matmul(n, n, n, in_dtype=tl.bf16, out_dtype=tl.f32, device="npu1", cores=cores)


def test_grids_are_read_from_names():
    assert logical_grid(["core_0_0", "core_0_1", "core_1_0", "core_1_1"]) == {
        "core_0_0": (0, 0), "core_0_1": (0, 1), "core_1_0": (1, 0), "core_1_1": (1, 1)}
    assert logical_grid(["core_0_0", "core_0_1", "core_1_0"]) is None  # ragged
    assert logical_grid(["core_0_0", "w_0_1"]) is None  # two prefixes
    assert logical_grid(["worker"]) is None and logical_grid(["core_0_0", "core_0_2"]) is None


def test_deviation_is_zero_exactly_on_the_grid():
    grid = logical_grid([f"core_{i}_{j}" for i in range(2) for j in range(3)])
    kept = {c: (5 + j, 2 + i) for c, (i, j) in grid.items()}
    assert grid_deviation(grid, kept) == 0 and "kept" in grid_note(kept) and "not kept" not in grid_note(kept)
    swapped = dict(kept, core_0_0=kept["core_0_1"], core_0_1=kept["core_0_0"])
    assert grid_deviation(grid, swapped) > 0 and "not kept" in grid_note(swapped)
    transposed = {c: (5 + i, 2 + j) for c, (i, j) in grid.items()}
    assert grid_deviation(grid, transposed) > 0


def test_primary_values_differ_by_multiples_of_the_bound():
    """The weight's proof rests on the primary objective moving in steps of delta: check it on placements."""
    problem = build_problem(gemm(256, (2, 2)))
    grid = grid_of(problem)
    eps = tie_weight(problem, grid)
    base = greedy_placement(problem)
    tiles = problem.device.tiles("compute")
    rng = random.Random(0)
    values = {objective_of(problem, base)}
    for _ in range(12):
        cores = dict(zip(problem.cores, rng.sample(tiles, len(problem.cores)), strict=True))
        values.add(objective_of(problem, Placement(cores, base.links, base.hosts)))
    s_max = 4 * (problem.device.cols + problem.device.rows)  # 4 neighbour pairs in a 2 x 2 grid
    delta = eps * (s_max + 1)
    assert len(values) > 3
    for a, b in itertools.combinations(sorted(values), 2):
        steps = (b - a) / delta
        assert abs(steps - round(steps)) < 1e-6 and round(steps) >= 1
    assert eps * s_max < delta


@pytest.mark.slow
def test_the_tie_break_keeps_the_optimum_of_the_2x2_gemm():
    problem = build_problem(gemm(256, (2, 2)))
    off, info_off = place_ilp(problem, "cbc", 60, tie_break=False)
    on, info_on = place_ilp(problem, "cbc", 60, tie_break=True)
    assert info_off.status == info_on.status == "optimal"
    assert info_on.objective == pytest.approx(info_off.objective)
    assert objective_of(problem, on) == pytest.approx(objective_of(problem, off))
    # npu1's four memtile columns make one core per column cheaper than a 2 x 2 block: not a tie
    assert grid_deviation(grid_of(problem), on.cores) > 0


@pytest.mark.slow
def test_the_4x4_gemm_lands_on_its_grid_without_losing_objective():
    design = gemm(1024, (4, 4))
    problem = build_problem(design)
    _, info_off = place_ilp(problem, "cbc", 120, tie_break=False)
    on, info_on = place_ilp(problem, "cbc", 120, tie_break=True)
    assert grid_deviation(grid_of(problem), on.cores) == 0
    assert {on.cores[f"core_{i}_{j}"] for i in range(4) for j in range(4)} == set(problem.device.tiles("compute"))
    assert on.cores["core_0_0"] == (0, 2) and on.cores["core_3_2"] == (2, 5)
    assert info_on.objective <= info_off.objective + 1e-6
    report = tl.plan(design).report()
    assert "logical grid 4x4 kept" in report


def test_the_report_says_when_the_grid_is_not_kept():
    report = tl.plan(gemm(256, (2, 2))).report()
    assert "logical grid 2x2 not kept" in report
