"""Placement: cores onto compute tiles, links onto memtiles, host ends onto shim channels, by ILP.

The model is in ``placement_model.py``. This module decides how to solve it
so that the result is both good and deterministic: every solve is bounded by
work (branch-and-bound nodes), never by a clock, so the same design gives the
same placement on any machine.

1. designs with few movable cores: the whole model, solved within
   ``EXACT_NODES`` nodes; a proven optimum is the answer, an incumbent that
   beats the greedy placement is the start of step 2;
2. otherwise (or if that was not proven optimal): a large-neighbourhood search
   from the best placement so far. Windows of a few cores, taken in
   breadth-first order over the fifo graph, are re-placed within ``RADIUS``
   tiles of where they are, every other core held fixed; each window's ILP is
   small and bounded by ``WINDOW_NODES`` nodes, and a window's answer is kept
   only if it lowers the objective. Passes repeat until one improves nothing
   (at most ``PASSES``).
   The gap is against the LP relaxation of the whole model (a proven bound)
   when that model is small enough to build.

Designs whose cores spell a logical grid (``core_<i>_<j>``) get a tie-break
term of bounded weight (``placement_grid.py``): it never changes the primary
objective's optimum, and among tied placements prefers the one keeping the
grid; the neighbourhood search also starts from the grid when that scores
better than the greedy start.

When the placement does not route, the planner's routing feedback (``driver._feedback``) calls
``keep_free``: the host ends and links placed again, cores held, with channels kept free on the
boundaries whose links negotiated congestion left over capacity.

The time limit is only a safety net against a model too large to finish:
when it fires (or a solver fails) the placement says so in its status
("time-limited", "error", with a message) and a PlanWarning is issued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilelang.ir.plan import SolveInfo
from tilelang.ir.verify import HOST
from tilelang.plan.carriage import Placement
from tilelang.plan.greedy import core_fifos, greedy_placement, order_cores
from tilelang.plan.placement_grid import deviation, grid_of, grid_start, tie_weight
from tilelang.plan.placement_model import PlacementModel, build, crowded_shims, objective_of
from tilelang.plan.problem import Problem
from tilelang.plan.route_cuts import Boundary
from tilelang.plan.solve import Solution, SolveLog, clock, solve_model

#: Movable cores up to which the whole model is solved outright.
EXACT_CORES = 8
#: Branch-and-bound nodes for the whole model (npu1's 2x4 matmul proves its optimum in under 100).
EXACT_NODES = 1000
#: Share of the placement's time after which the whole-model solve's safety net fires.
EXACT_SHARE = 0.6
#: Cores re-placed together in one neighbourhood window.
WINDOW = 7
#: Tiles (Manhattan) a window's cores may move from where they are.
RADIUS = 3
#: Improvement passes of the neighbourhood search at most (work, not time, bounds it: deterministic).
PASSES = 3
#: Branch-and-bound nodes of one window's solve; its best incumbent is used when it stops there.
WINDOW_NODES = 500
#: Largest (core, tile) candidate count for which the whole model's LP bound is computed.
BOUND_LIMIT = 1200
#: Largest whole model (variables) whose LP relaxation is solved for the bound: the LP only reports the gap, and
#: npu2's 32-core whole-array GEMM (27,840 variables) spent 2.3 s of a 4.5 s plan on it for a 27% gap.
BOUND_VARIABLES = 10_000


def _windows(problem: Problem, shift: int) -> list[frozenset[str]]:
    pins = problem.pin_map
    order = [c for c in order_cores(problem, core_fifos(problem)) if c not in pins]
    if shift and len(order) > WINDOW:
        order = order[shift:] + order[:shift]
    return [frozenset(order[i : i + WINDOW]) for i in range(0, len(order), WINDOW)]


Tie = tuple[dict, float] | None


@dataclass
class _Links:
    """Whether the models carry the shims' array-link bound (``PlacementModel.shim_links``): off until a
    solve's answer puts more host ends on a shim than its links to the array carry, then on for that solve
    (solved again) and every later one of the same placement, so a search pays for the second solve once.
    Designs whose answers never crowd a shim are solved with the model they always had."""

    on: bool = False


def _solve(problem: Problem, make: Callable[[bool], PlacementModel], solver: str, deadline: float, nodes: int,
           log: SolveLog, step: str, links: _Links) -> tuple[PlacementModel, Solution]:
    """Build and solve one model (``make(links.on)``), again with the shims' array-link bound if the answer
    breaks it; each solve bounded by ``nodes``, ``deadline`` the safety net."""
    model = make(links.on)
    sol = solve_model(model.prob, solver, max(0.2, deadline - clock()), nodes=nodes)
    log.note(step, sol)
    if links.on or not sol.values or sol.clocked or not crowded_shims(problem, model.result(sol.values)):
        return model, sol
    links.on = True
    model = make(True)
    sol = solve_model(model.prob, solver, max(0.2, deadline - clock()), nodes=nodes)
    log.note(f"{step} (with the shims' link bound)", sol)
    return model, sol


def _score(problem: Problem, placement: Placement, tie: Tie) -> float:
    """The objective the solves minimise: the primary one plus the grid tie-break, if any."""
    primary = objective_of(problem, placement)
    return primary if tie is None else primary + tie[1] * deviation(tie[0], placement.cores)


def _exact(problem: Problem, start: Placement, solver: str, seconds: float, log: SolveLog,
           tie: Tie, links: _Links) -> tuple[Placement, Solution]:
    """The whole model within ``EXACT_NODES``: (its best placement, or ``start`` without one; the solution)."""
    model, sol = _solve(problem, lambda on: build(problem, start, tie=tie, links=on), solver, clock() + seconds,
                        EXACT_NODES, log, "whole-model ILP", links)
    if sol.values and not sol.clocked and sol.objective is not None:
        return model.result(sol.values), sol
    return start, sol


def _lower_bound(problem: Problem, start: Placement, solver: str, seconds: float, log: SolveLog) -> float | None:
    if len(problem.cores) * len(problem.device.tiles("compute")) > BOUND_LIMIT:
        return None
    model = build(problem, start)
    if len(model.prob.variables()) > BOUND_VARIABLES:
        return None
    sol = solve_model(model.prob, solver, seconds, mip=False)
    log.note("LP bound", sol)
    return sol.objective if sol.status == "optimal" else None


def neighbourhood_search(
    problem: Problem, start: Placement, solver: str, deadline: float, log: SolveLog | None = None, tie: Tie = None,
    links: _Links | None = None,
) -> tuple[Placement, float, bool]:
    """Improve ``start`` window by window (see the module docstring).

    Args:
        problem: the planning problem.
        start: the placement to improve.
        solver: "cbc" or "highs".
        deadline: the safety net, on :func:`~tilelang.plan.solve.clock`.
        log: collects safety nets that fired and solver errors.
        tie: (logical grid, weight) of the grid tie-break, or None.
        links: whether the shims' array-link bound is on (``_Links``; None: off until an answer breaks it).

    Returns:
        (placement, its primary objective, whether the search ran to its end without a safety net or error).
    """
    log = SolveLog("placement") if log is None else log
    links = _Links() if links is None else links
    current, best = start, _score(problem, start, tie)
    for p in range(PASSES):
        improved = False
        for window in _windows(problem, (WINDOW // 2) * (p % 2)):
            left = deadline - clock()
            if left <= 0.2:
                log.fired("neighbourhood search")
                return current, objective_of(problem, current), False
            model, sol = _solve(problem, lambda on, w=window, c=current: build(problem, c, w, RADIUS, tie, on, hold_hosts=True), solver,
                                deadline, WINDOW_NODES, log, f"window ILP of {', '.join(sorted(window))}", links)
            if sol.clocked or not sol.values or sol.objective is None:
                continue
            if sol.objective < best - 1e-6:
                current, best, improved = model.result(sol.values), sol.objective, True
        if not improved:
            break
    return current, objective_of(problem, current), not (log.clocked or log.errors)


def _grid_placement(problem: Problem, tie: Tie, near: Placement, solver: str, seconds: float,
                    log: SolveLog, links: _Links) -> Placement | None:
    """The cores on their logical grid, links and host ends placed for them by the model; None if it does not fit."""
    if tie is None:
        return None
    cores = grid_start(problem, tie[0], near.cores)
    if cores is None:
        return None
    return _ends_placed(problem, Placement(cores, near.links, near.hosts), tie, solver, seconds, log, links,
                        "grid start ILP")


def _ends_placed(problem: Problem, held: Placement, tie: Tie, solver: str, seconds: float, log: SolveLog,
                 links: _Links, step: str) -> Placement | None:
    """``held``'s cores on their tiles, every link and host end placed for them by the model within
    ``EXACT_NODES``; None if that does not fit."""
    model, sol = _solve(problem, lambda on: build(problem, held, frozenset(), None, tie, on), solver,
                        clock() + seconds, EXACT_NODES, log, step, links)
    if not sol.values or sol.clocked or sol.objective is None:
        return None
    placed = model.result(sol.values)
    # held cores' channels and memory are constants there, so check them in the whole model
    whole = build(problem, placed, links=links.on)
    return placed if all(c.valid(1e-6) for c in whole.prob.constraints()) else None


def place_ilp(problem: Problem, solver: str, time_limit: float, tie_break: bool = True) -> tuple[Placement, SolveInfo]:
    """Place cores, links and host ends by ILP (exact, or neighbourhood search on larger designs).

    Args:
        problem: the planning problem.
        solver: "cbc" or "highs".
        time_limit: seconds, a safety net only: solves run in child processes killed at the deadline.
        tie_break: prefer, among placements the objective ties, one keeping the cores' logical grid
            (``placement_grid.py``; it cannot change the objective's optimum).

    Returns:
        (placement, how it was solved); the greedy placement when nothing better was found.
        A safety net that fired or a solver that failed is a PlanWarning and shows in the status.
    """
    deadline = clock() + time_limit
    greedy = greedy_placement(problem)
    if not problem.cores and not problem.links and not any(HOST in f.agents for f in problem.fifos):
        return greedy, SolveInfo("ilp", "optimal", 0.0, 0.0, 0.0)
    log = SolveLog("placement")
    grid = grid_of(problem) if tie_break else None
    eps = None if grid is None else tie_weight(problem, grid)
    tie: Tie = None if grid is None or eps is None else (grid, eps)
    start = greedy
    links = _Links()
    movable = [c for c in problem.cores if c not in problem.pin_map]
    if len(movable) <= EXACT_CORES:
        placed, sol = _exact(problem, greedy, solver, EXACT_SHARE * time_limit, log, tie, links)
        if sol.status == "optimal" and not sol.clocked:
            return placed, SolveInfo("ilp", "optimal", 0.0, objective_of(problem, placed), 0.0)
        if placed is not greedy and _score(problem, placed, tie) < _score(problem, greedy, tie) - 1e-6:
            start = placed
    on_grid = _grid_placement(problem, tie, start, solver, max(0.2, deadline - clock()), log, links)
    if on_grid is not None and _score(problem, on_grid, tie) < _score(problem, start, tie) - 1e-6:
        start = on_grid
    if any(HOST in f.agents and not any(a.startswith("link:") for a in f.agents) for f in problem.fifos):
        # the windows move only their own cores' host ends: first every end placed for the start's cores
        ends = _ends_placed(problem, start, tie, solver, max(0.2, deadline - clock()), log, links, "host ends ILP")
        if ends is not None and _score(problem, ends, tie) < _score(problem, start, tie) - 1e-6:
            start = ends
    placed, obj, _ = neighbourhood_search(problem, start, solver, deadline, log, tie, links)
    bound = _lower_bound(problem, greedy, solver, max(0.2, deadline - clock()), log)
    gap = None if bound is None else max(0.0, (obj - bound) / max(obj, 1e-9))
    return placed, log.info("ilp-neighbourhood", "feasible", obj, gap)


def keep_free(problem: Problem, start: Placement, reserve: dict[Boundary, int], solver: str, seconds: float,
              log: SolveLog) -> Placement | None:
    """The routing feedback's re-solve: ``start``'s cores held, its host ends and links placed again by the model
    with ``reserve`` channels kept free on those column and row boundaries (``PlacementModel.boundaries``),
    warm started at ``start`` and bounded by ``EXACT_NODES`` like the other whole-array solves.

    Args:
        problem: the planning problem.
        start: the placement that did not route.
        reserve: channels to keep free per boundary (axis, outward, bound).
        solver: "cbc" or "highs".
        seconds: the safety net.
        log: collects a safety net that fired or a solver that failed.

    Returns:
        The new placement, or None when the model has no answer (or its safety net fired).
    """
    model, sol = _solve(problem, lambda on: build(problem, start, frozenset(), None, None, on, reserve), solver,
                        clock() + seconds, EXACT_NODES, log, "routing feedback ILP", _Links())
    if not sol.values or sol.clocked or sol.objective is None:
        return None
    return model.result(sol.values)
