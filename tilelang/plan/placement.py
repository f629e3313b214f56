"""Placement: cores onto compute tiles, links onto memtiles, host ends onto shim channels, by ILP.

The model is in ``placement_model.py``. This module decides how to solve it
so that the result is both good and deterministic (a solver stopped by a
clock returns whatever incumbent it had, which differs run to run):

1. designs with few movable cores: the whole model, solved to proven
   optimality (within ``EXACT_SECONDS``; an unfinished solve is discarded);
2. otherwise (or if that did not finish): a large-neighbourhood search from
   the greedy placement. Windows of a few cores, taken in breadth-first
   order over the fifo graph, are re-placed within ``RADIUS`` tiles of where
   they are, every other core held fixed; each window's ILP is small and
   solved to optimality, and a window's answer is kept only if it lowers the
   objective. Passes repeat until one improves nothing (at most ``PASSES``);
   the amount of work, not a clock, bounds it, so the result is reproducible
   (the time limit is only a safety net; hitting it is reported as
   "time-limited").
   The gap is against the LP relaxation of the whole model (a proven bound)
   when that model is small enough to build.
"""

from __future__ import annotations

import time

from tilelang.ir.plan import SolveInfo
from tilelang.ir.verify import HOST
from tilelang.plan.carriage import Placement
from tilelang.plan.greedy import core_fifos, greedy_placement, order_cores
from tilelang.plan.placement_model import build, objective_of
from tilelang.plan.problem import Problem
from tilelang.plan.solve import solve_model

#: Movable cores up to which the whole model is solved outright.
EXACT_CORES = 8
#: Seconds the whole model may take before the neighbourhood search is used instead.
EXACT_SECONDS = 2.0
#: Cores re-placed together in one neighbourhood window.
WINDOW = 7
#: Tiles (Manhattan) a window's cores may move from where they are.
RADIUS = 3
#: Improvement passes of the neighbourhood search at most (work, not time, bounds it: deterministic).
PASSES = 3
#: Seconds one window may take; a window that does not finish is skipped (and reported).
WINDOW_SECONDS = 3.0
#: Largest (core, tile) candidate count for which the whole model's LP bound is computed.
BOUND_LIMIT = 1200


def _windows(problem: Problem, shift: int) -> list[frozenset[str]]:
    pins = problem.pin_map
    order = [c for c in order_cores(problem, core_fifos(problem)) if c not in pins]
    if shift and len(order) > WINDOW:
        order = order[shift:] + order[:shift]
    return [frozenset(order[i : i + WINDOW]) for i in range(0, len(order), WINDOW)]


def _exact(problem: Problem, start: Placement, solver: str, seconds: float) -> tuple[Placement, SolveInfo] | None:
    model = build(problem, start)
    sol = solve_model(model.prob, solver, seconds)
    if sol.status != "optimal":
        return None
    return model.result(sol.values), SolveInfo("ilp", "optimal", 0.0, sol.objective, 0.0)


def _lower_bound(problem: Problem, start: Placement, solver: str, seconds: float) -> float | None:
    if len(problem.cores) * len(problem.device.tiles("compute")) > BOUND_LIMIT:
        return None
    model = build(problem, start)
    sol = solve_model(model.prob, solver, seconds, mip=False)
    return sol.objective if sol.status == "optimal" else None


def neighbourhood_search(problem: Problem, start: Placement, solver: str, deadline: float) -> tuple[Placement, float, bool]:
    """Improve ``start`` window by window (see the module docstring).

    Returns:
        (placement, its objective, whether every window solve finished before the deadline).
    """
    current, best = start, objective_of(problem, start)
    complete = True
    for p in range(PASSES):
        improved = False
        for window in _windows(problem, (WINDOW // 2) * (p % 2)):
            left = deadline - time.monotonic()
            if left <= 0.2:
                return current, best, False
            model = build(problem, current, window, RADIUS)
            sol = solve_model(model.prob, solver, min(left, WINDOW_SECONDS))
            if sol.status != "optimal":
                complete = False
                continue
            if sol.objective is not None and sol.objective < best - 1e-6:
                current, best, improved = model.result(sol.values), sol.objective, True
        if not improved:
            break
    return current, best, complete


def place_ilp(problem: Problem, solver: str, time_limit: float) -> tuple[Placement, SolveInfo]:
    """Place cores, links and host ends by ILP (exact, or neighbourhood search on larger designs).

    Args:
        problem: the planning problem.
        solver: "cbc" or "highs".
        time_limit: seconds; solves run in child processes killed at the deadline.

    Returns:
        (placement, how it was solved); the greedy placement when nothing better was found.
    """
    start = time.monotonic()
    deadline = start + time_limit
    greedy = greedy_placement(problem)
    if not problem.cores and not problem.links and not any(HOST in f.agents for f in problem.fifos):
        return greedy, SolveInfo("ilp", "optimal", 0.0, 0.0, 0.0)
    movable = [c for c in problem.cores if c not in problem.pin_map]
    if len(movable) <= EXACT_CORES:
        exact = _exact(problem, greedy, solver, min(EXACT_SECONDS, time_limit / 2))
        if exact is not None:
            return exact
    placed, obj, complete = neighbourhood_search(problem, greedy, solver, deadline)
    bound = _lower_bound(problem, greedy, solver, max(0.2, deadline - time.monotonic()))
    gap = None if bound is None else max(0.0, (obj - bound) / max(obj, 1e-9))
    status = "feasible" if complete else "time-limited"
    return placed, SolveInfo("ilp-neighbourhood", status, 0.0, obj, gap)
