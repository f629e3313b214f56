"""The congestion-aware routing ILP: negotiated start, column generation, price and branch, exact edge model.

Objective: wirelength + ``weight`` x (channels on the most used link). The
default weight is below 1 / (largest link capacity), which makes the
objective lexicographic: the fewest links first, then the least crowded
busiest link. Since the negotiated routing is a warm start, the result is
never longer than the baseline.

Steps, each bounded by work (pricing rounds, branch-and-bound nodes) and run
in a child process killed at its deadline (a safety net: when it fires, the
status is "time-limited" and a PlanWarning says so):

1. column generation (``route_cg``) from the negotiated and shortest trees,
   which also proves a lower bound, at most ``CG_WORK`` / flows pricing rounds
   (the routing's message says when that bound stopped it);
2. the master IP over the generated trees (PuLP, CBC or HiGHS), warm started
   with the negotiated routing;
3. if a gap remains and the edge model (``route_edge``) is small enough, the
   exact edge ILP, warm started with the best routing so far; its proven bound
   tightens the gap.

The best legal routing found is returned with its proven gap (against the
best of the column generation's bound, the edge ILP's, and the sum of each
flow's distance to its farthest destination); with none,
PlanError names the link that ran out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pulp

from tilelang.errors import PlanError
from tilelang.ir.plan import SolveInfo
from tilelang.plan.fabric import Fabric, describe, shortest_path, steiner_tree, tree_reaches
from tilelang.plan.negotiated import Flow, RouteResult, overflow_of, usage
from tilelang.plan.route_cg import MAX_ROUNDS, CGState, column_generation
from tilelang.plan.route_edge import build_edge_model, model_size
from tilelang.plan.routing import Routing, no_routing_message, to_routes
from tilelang.plan.solve import Solution, SolveLog, clock, run_with_deadline, solve_model

#: Largest edge model (variables) worth handing to a MIP solver for a proof.
EDGE_MODEL_LIMIT = 40_000
#: Branch-and-bound nodes of the master IP over the generated trees (the deterministic work bound).
MASTER_NODES = 2000
#: Trees (columns) above which a fractional master is not solved as an IP: on the 400-core PLIO-fed cascade
#: GEMM (module CG_WORK) 2,652 trees of a fractional LP took CBC 90 s to find no incumbent in 100 nodes.
MASTER_TREES = 1500
#: Branch-and-bound nodes of the exact edge ILP.
EDGE_NODES = 200
#: Flows the column generation prices over all its rounds at most (rounds = CG_WORK / flows, at least
#: CG_MIN_ROUNDS, at most route_cg.MAX_ROUNDS): the work bound. npu1's and npu2's whole-array GEMMs (40 and 72
#: flows) may price 125 and 69 rounds and prove their routes optimal in a few; a 400-core PLIO-fed cascade
#: GEMM on xcvc1902 (180 flows, 80 of them broadcasts, on 1,682 links) prices for about 0.8 s a round, and
#: its LP turns fractional after 28 rounds, past which its master IP took 90 to 180 s: it stops at 27.
CG_WORK = 5000
CG_MIN_ROUNDS = 10


def default_weight(fab: Fabric) -> float:
    """A most-used-link weight small enough that wirelength always comes first."""
    return 1.0 / (max(fab.cap, default=1) + 1)


def objective(fab: Fabric, trees: Sequence[Sequence[int]], weight: float) -> float:
    occ = usage(len(fab.links), trees)
    return sum(len(t) for t in trees) + weight * max(occ, default=0)


def _legal(fab: Fabric, flows: Sequence[Flow], trees: Sequence[Sequence[int] | None] | None) -> bool:
    if trees is None or any(t is None for t in trees):
        return False
    if overflow_of(fab, trees):
        return False
    return all(tree_reaches(fab, f[0], f[1], t) for f, t in zip(flows, trees, strict=True))  # type: ignore[arg-type]


def _distance_bound(fab: Fabric, flows: Sequence[Flow]) -> float:
    """A proven lower bound on the objective: every tree is at least as long as its flow's shortest path to its
    farthest destination. Where the column generation's Lagrangian bound is weaker (its master still pays for
    capacity slack, whose duals swamp the bound), this is the gap's floor."""
    unit = [1.0] * len(fab.links)
    total = 0.0
    for src, dests in flows:
        paths = [shortest_path(fab, [src], d, unit) for d in dests]
        total += max((len(p) for p in paths if p is not None), default=0)
    return total


def _initial_columns(fab: Fabric, flows: Sequence[Flow], base: RouteResult) -> list[list[tuple[int, ...]]]:
    unit = [1.0] * len(fab.links)
    cols = []
    for i, (src, dests) in enumerate(flows):
        mine = []
        if base.trees[i] is not None:
            mine.append(tuple(sorted(base.trees[i])))  # type: ignore[arg-type]
        short = steiner_tree(fab, src, dests, unit)
        if short is not None and tuple(short) not in mine:
            mine.append(tuple(short))
        cols.append(mine)
    return cols


def _master_ip(
    fab: Fabric, state: CGState, warm: Sequence[Sequence[int]] | None, weight: float
) -> tuple[pulp.LpProblem, list[list[pulp.LpVariable]]]:
    prob = pulp.LpProblem("routing_master", pulp.LpMinimize)
    lam: list[list[pulp.LpVariable]] = []
    load: dict[int, list] = {}
    cost = []
    for i, cols in enumerate(state.columns):
        row = []
        for k, t in enumerate(cols):
            v = prob.add_variable(f"t_{i}_{k}", 0, 1, cat="Binary")
            if warm is not None:
                v.setInitialValue(1 if tuple(sorted(warm[i])) == t else 0)
            row.append(v)
            cost.append(len(t) * v)
            for e in t:
                load.setdefault(e, []).append(v)
        prob += pulp.lpSum(row) == 1, f"one_{i}"
        lam.append(row)
    most = prob.add_variable("most_used", 0)
    for e in sorted(load):
        prob += pulp.lpSum(load[e]) <= fab.cap[e], f"cap_{e}"
        prob += pulp.lpSum(load[e]) <= most, f"max_{e}"
    prob += pulp.lpSum(cost) + weight * most
    return prob, lam


def _picked(state: CGState, lam: list[list[pulp.LpVariable]], sol: Solution) -> list[tuple[int, ...]] | None:
    if not sol.values:
        return None
    out = []
    for i, row in enumerate(lam):
        k = max(range(len(row)), key=lambda k: (sol.values.get(row[k].name, 0.0), -k))
        out.append(state.columns[i][k])
    return out


def _edge_trees(x: list[dict], sol: Solution) -> list[tuple[int, ...]] | None:
    if not sol.values:
        return None
    return [tuple(sorted(e for e, v in xi.items() if sol.values.get(v.name, 0.0) > 0.5)) for xi in x]


def _failure(fab: Fabric, flows: Sequence[Flow], names: Sequence[str], base: RouteResult, state: CGState | None) -> str:
    """Why no legal routing came out: proven by the LP bound, or none found in time."""
    if state is not None and state.infeasible and state.slack:
        e, over = max(state.slack, key=lambda kv: (kv[1], -kv[0]))
        cap = fab.cap[e]
        return (
            f"no routing: link {describe(fab.links[e])} needs {cap + int(over - 1e-6) + 1} channels, has {cap} "
            f"(proven: even a fractional routing overflows the links by {sum(x for _, x in state.slack):.3g} "
            f"channels; spread the flows' endpoints or use fewer flows)"
        )
    return no_routing_message(fab, flows, base, names) + " (no legal routing found within the time limit)"


def ilp_route(
    fab: Fabric,
    flows: list[Flow],
    names: Sequence[str],
    base: RouteResult,
    solver: str,
    time_limit: float,
    weight: float | None = None,
) -> Routing:
    """Route ``flows`` with the ILPs under ``time_limit`` seconds (see the module docstring).

    Args:
        fab: the fabric.
        flows: validated flows.
        names: flow names for messages.
        base: the negotiated-congestion routing (warm start, fallback, baseline).
        solver: "cbc" or "highs".
        time_limit: seconds for all steps together.
        weight: objective weight of the most used link (default: lexicographic).

    Returns:
        The best legal :class:`Routing` found, with its proven gap.

    Raises:
        PlanError: no legal routing was found.
    """
    start = clock()
    w = default_weight(fab) if weight is None else weight
    if not flows:
        return Routing(fab.device, (), 0.0, SolveInfo("ilp", "optimal", 0.0, 0.0, 0.0), 0.0)

    def left() -> float:
        return time_limit - (clock() - start)

    log = SolveLog("routing")
    if base.clocked:
        log.fired("negotiated congestion")
    best = list(base.trees) if base.legal else None
    rounds = max(CG_MIN_ROUNDS, min(MAX_ROUNDS, CG_WORK // len(flows)))
    cg = run_with_deadline(column_generation, (fab, flows, _initial_columns(fab, flows, base), w, 0.6 * left(), rounds),
                           0.7 * left())
    state: CGState | None = cg.result
    if cg.status == "error":
        log.failed("column generation", cg.message)
    elif cg.status != "done" or (state is not None and state.clocked):
        log.fired("column generation")
    lower = max(_distance_bound(fab, flows), state.lower_bound if state is not None and state.lower_bound is not None
                else 0.0)
    method = "ilp-cg"
    skipped = ""
    if state is not None:
        trees = sum(len(c) for c in state.columns)
        if state.integral or trees > MASTER_TREES:
            # An integral LP solution is the master IP's optimum over its columns; above MASTER_TREES a fractional
            # one's IP is not solved (its root alone can outlast any time limit) and the LP's rounding stands in.
            picked = list(state.rounded) if state.rounded is not None else None
            if not state.integral:
                skipped = (f"master IP not solved ({trees} trees, above route_ilp.MASTER_TREES); the LP's rounding was "
                           f"tried in its place")
        elif left() > 0.2:
            prob, lam = _master_ip(fab, state, best, w)
            sol = solve_model(prob, solver, 0.6 * left(), nodes=MASTER_NODES)
            log.note("master IP", sol)
            picked = None if sol.clocked else _picked(state, lam, sol)
        else:
            picked = None
            log.fired("master IP")
        if _legal(fab, flows, picked) and (best is None or objective(fab, picked, w) < objective(fab, best, w) - 1e-9):
            best = picked
    if best is not None and lower is not None and objective(fab, best, w) - lower > 1e-6:
        size = model_size(fab, flows, best, 1)
        if size <= EDGE_MODEL_LIMIT and left() <= 0.5:
            log.fired("edge ILP")
        elif size <= EDGE_MODEL_LIMIT:
            prob, x = build_edge_model(fab, flows, best, w)
            sol = solve_model(prob, solver, left() - 0.1, nodes=EDGE_NODES)
            log.note("edge ILP", sol)
            trees = None if sol.clocked else _edge_trees(x, sol)
            if _legal(fab, flows, trees) and objective(fab, trees, w) < objective(fab, best, w) - 1e-9:
                best, method = trees, "ilp-edge"
            if sol.bound is not None and not sol.clocked:
                lower = max(lower, sol.bound)
    if best is None:
        raise PlanError(_failure(fab, flows, names, base, state))
    obj = objective(fab, best, w)
    gap = None if lower is None else max(0.0, (obj - lower) / max(obj, 1e-9))
    if gap is not None and gap < 1e-7:
        gap = 0.0
    info = log.info(method, "optimal" if gap == 0.0 else "feasible", obj, gap)
    notes = [skipped] if skipped else []
    if gap != 0.0 and state is not None and not state.converged and not state.clocked and state.rounds >= rounds:
        notes.insert(0, f"column generation stopped at its work bound: {rounds} pricing rounds of {len(flows)} flows "
                        f"(route_ilp.CG_WORK)")
    if notes and not info.message:
        info = replace(info, message="; ".join(notes))
    return Routing(fab.device, to_routes(fab, flows, best), gap, info, obj)
