"""Placement tie-break: among placements the objective ties, prefer one that keeps the cores' logical grid.

A design whose cores are named ``<prefix>_<i>_<j>`` over a whole rectangle (``tilelang/ir/core_grid.py``)
gets a secondary term in the placement objective: over every pair of grid neighbours, how far their
tile offset is from the kept grid's (``|dc - 1| + |dr|`` to the right, ``|dc| + |dr - 1|`` upward),
times a weight ``eps`` small enough that it can never outweigh the primary objective:

- the primary objective is ``sum over fifo pairs of weight(f) x distance``, with ``weight(f) = 100 x
  traffic(f) / top`` and integer distances, so any two placements' primary values differ by a
  multiple of ``delta = 100 x g / top``, ``g`` the gcd of the fifos' traffic in bytes;
- the secondary term of any placement is at most ``s_max = pairs x (cols + rows)`` (each offset
  component is off by at most the array's width or height);
- with ``eps = delta / (s_max + 1)``, ``eps x secondary < delta``: a placement with a lower primary
  value always has a lower total, so every minimiser of the total minimises the primary objective,
  and among those the secondary term picks the layout closest to the grid.

When ``eps`` would be below ``MIN_EPS`` (traffic sizes with a tiny common divisor) the solver's
tolerances could blur it, so no tie-break is added.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pulp

from tilelang.ir.core_grid import grid_deviation, logical_grid, neighbours
from tilelang.plan.problem import Coord, Problem

#: Smallest tie-break weight used; below it (in objective units) solver tolerances could swamp the term.
MIN_EPS = 1e-3


def grid_of(problem: Problem) -> dict[str, Coord] | None:
    """The cores' logical grid (see ``tilelang/ir/core_grid.py``), or None."""
    return logical_grid(problem.cores)


def tie_weight(problem: Problem, grid: Mapping[str, Coord]) -> float | None:
    """``eps`` of the module docstring, or None when it would be too small to trust."""
    traffic = [int(f.traffic) for f in problem.fifos]
    if not traffic or not neighbours(grid):
        return None
    delta = 100.0 * math.gcd(*traffic) / max(traffic)
    s_max = len(neighbours(grid)) * (problem.device.cols + problem.device.rows)
    eps = delta / (s_max + 1)
    return eps if eps >= MIN_EPS else None


def grid_term(model: object, grid: Mapping[str, Coord]) -> pulp.LpAffineExpression:
    """The secondary term on a placement model: one ``|.|`` per offset component of each neighbour pair.

    Args:
        model: a ``PlacementModel`` (its ``assign`` choices and ``prob``).
        grid: core -> (row, column).

    Returns:
        The sum of the absolute deviations (variables bounded below by both signs).
    """
    parts = []
    for k, (a, b, want) in enumerate(neighbours(grid)):
        ta, tb = model.assign[f"core:{a}"], model.assign[f"core:{b}"]  # type: ignore[attr-defined]
        home_a, home_b = model.home(f"core:{a}"), model.home(f"core:{b}")  # type: ignore[attr-defined]
        for axis in (0, 1):
            off = pulp.lpSum(t[axis] * v for t, v in tb.items()) - pulp.lpSum(t[axis] * v for t, v in ta.items())
            warm = abs(home_b[axis] - home_a[axis] - want[axis])
            v = model.variable(f"grid{axis}_{k}", warm, "Continuous")  # type: ignore[attr-defined]
            model.prob += v >= off - want[axis], f"gridp{axis}_{k}"  # type: ignore[attr-defined]
            model.prob += v >= want[axis] - off, f"gridn{axis}_{k}"  # type: ignore[attr-defined]
            parts.append(v)
    return pulp.lpSum(parts)


def grid_start(problem: Problem, grid: Mapping[str, Coord], near: Mapping[str, Coord]) -> dict[str, Coord] | None:
    """Core tiles keeping the grid, at the origin closest to ``near`` (a placement's core tiles); None if none fits.

    Pinned cores must already sit on the grid's tiles for the origin to count.
    """
    dev, pins = problem.device, problem.pin_map
    compute = set(dev.tiles("compute"))
    i0 = min(i for i, _ in grid.values())
    j0 = min(j for _, j in grid.values())
    best: tuple[int, dict[str, Coord]] | None = None
    for c0 in range(dev.cols):
        for r0 in range(dev.rows):
            tiles = {c: (c0 + j - j0, r0 + i - i0) for c, (i, j) in grid.items()}
            if not set(tiles.values()) <= compute or any(tiles[c] != t for c, t in pins.items() if c in tiles):
                continue
            cost = sum(abs(t[0] - near[c][0]) + abs(t[1] - near[c][1]) for c, t in tiles.items())
            if best is None or cost < best[0]:
                best = (cost, tiles)
    return None if best is None else best[1]


def deviation(grid: Mapping[str, Coord] | None, cores: Mapping[str, Coord]) -> int:
    """The secondary term's value for a placement's core tiles (0 without a grid)."""
    return 0 if grid is None else grid_deviation(grid, cores)
