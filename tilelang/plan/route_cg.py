"""Column generation for routing: candidate trees priced by the LP duals of link capacity.

The master problem chooses one tree per flow (a column) so that no link
carries more flows than it has channels, minimising wirelength plus
``weight`` times the most used link. Its LP relaxation is solved with HiGHS
(highspy, directly: the master is re-solved after each round of new columns,
warm from the last basis). Pricing a flow is a shortest path (unicast: exact)
or a shortest-path Steiner tree (broadcast: heuristic) on edge costs
``1 - dual(capacity) - dual(max use)`` >= 1.

The Lagrangian (Lasdon) bound ``z_LP + sum_f min(0, lb_f - sigma_f)`` is a
proven lower bound on the optimum over all trees, where ``lb_f`` is the exact
cheapest path for a unicast flow and, for a broadcast, the dearest of the
shortest paths to its destinations (no tree can cost less), raised by Wong's dual
ascent where that leaves room (``steiner.steiner_lower_bound``: a broadcast along a
row entered from its middle pays both sides). It makes the gap reported by the
router a real one.

Artificial slack on every capacity row (cost ``BIG``) keeps the master
feasible from the first round; a solution still using it means the columns
found cannot route the flows legally.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import highspy

from tilelang.plan.fabric import Fabric, prune_tree, shortest_path, steiner_tree
from tilelang.plan.negotiated import Flow
from tilelang.plan.quiet import new_highs
from tilelang.plan.solve import clock
from tilelang.plan.steiner import EXACT_LIMIT, steiner_exact, steiner_lower_bound

#: Pricing rounds at most (the routing ILP may ask for fewer: ``route_ilp.CG_WORK``).
MAX_ROUNDS = 200
#: Cost of one channel of capacity violation in the master (far above any wirelength).
BIG = 1.0e4
_EPS = 1e-6
_INF = float("inf")


@dataclass(frozen=True)
class CGState:
    """Columns found so far and the bounds they give.

    Attributes:
        columns: per flow, candidate trees (sorted edge tuples), first = warm start.
        lower_bound: proven lower bound on the routing objective (None before the first round).
        lp: the restricted master's LP optimum.
        rounds: pricing rounds done.
        converged: no column with negative reduced cost remained.
        slack: (edge, channels over capacity) in the last LP solution, where any.
        clocked: stopped by the time budget rather than by convergence or the round limit.
        rounded: per flow, the tree the last LP solution weighs most (None before the first round): the LP's
            rounding, legal or not.
        integral: the last LP solution picks one whole tree per flow and no slack: ``rounded`` is then the
            master IP's optimum over the columns it had.
    """

    columns: tuple[tuple[tuple[int, ...], ...], ...]
    lower_bound: float | None
    lp: float | None
    rounds: int
    converged: bool
    slack: tuple[tuple[int, float], ...] = ()
    clocked: bool = False
    rounded: tuple[tuple[int, ...], ...] | None = None
    integral: bool = False

    @property
    def infeasible(self) -> bool:
        """Proven: even the LP relaxation over all trees needs more channels than exist."""
        return self.lower_bound is not None and self.lower_bound >= BIG / 2


class _Master:
    """The restricted master LP in highspy: rows = convexity per flow, capacity and max-use per edge."""

    def __init__(self, fab: Fabric, n_flows: int, weight: float) -> None:
        self.n_flows, self.n_edges = n_flows, len(fab.links)
        h = new_highs()
        h.setOptionValue("threads", 1)
        h.setOptionValue("random_seed", 0)
        inf = highspy.kHighsInf
        for _ in range(n_flows):
            h.addRow(1.0, 1.0, 0, [], [])
        for e in range(self.n_edges):
            h.addRow(-inf, float(fab.cap[e]), 0, [], [])
        for _ in range(self.n_edges):
            h.addRow(-inf, 0.0, 0, [], [])
        # M: the most used link, -1 in every max-use row.
        max_rows = [n_flows + self.n_edges + e for e in range(self.n_edges)]
        h.addCol(weight, 0.0, inf, len(max_rows), max_rows, [-1.0] * len(max_rows))
        # Slack per capacity row: legal routing when all are zero.
        for e in range(self.n_edges):
            h.addCol(BIG, 0.0, inf, 1, [n_flows + e], [-1.0])
        self.h = h
        self.cols: list[tuple[int, tuple[int, ...]]] = []
        self.slack: tuple[tuple[int, float], ...] = ()
        self.rounded: tuple[tuple[int, ...], ...] | None = None
        self.integral = False

    def add(self, flow: int, edges: tuple[int, ...]) -> None:
        rows = [flow] + [self.n_flows + e for e in edges] + [self.n_flows + self.n_edges + e for e in edges]
        self.h.addCol(float(len(edges)), 0.0, highspy.kHighsInf, len(rows), rows, [1.0] * len(rows))
        self.cols.append((flow, edges))

    def solve(self) -> tuple[float, list[float], list[float]]:
        """LP optimum, per-flow convexity duals and per-edge price (1 - cap dual - max dual)."""
        self.h.run()
        sol = self.h.getSolution()
        values = list(sol.col_value)
        self.slack = tuple((e, values[1 + e]) for e in range(self.n_edges) if values[1 + e] > 1e-6)
        # per flow, the tree the LP weighs most (the first added on ties): the LP's rounding
        weights: list[tuple[float, int, tuple[int, ...]] | None] = [None] * self.n_flows
        for k, (flow, edges) in enumerate(self.cols):
            v = values[1 + self.n_edges + k]
            if weights[flow] is None or v > weights[flow][0] + 1e-9:  # type: ignore[index]
                weights[flow] = (v, k, edges)
        self.rounded = tuple(w[2] for w in weights if w is not None) if all(weights) else None
        self.integral = not self.slack and all(min(v, 1.0 - v) < 1e-6 for v in values[1 + self.n_edges:])
        dual = list(sol.row_dual)
        obj = float(self.h.getInfo().objective_function_value)
        sigma = dual[: self.n_flows]
        cap = dual[self.n_flows : self.n_flows + self.n_edges]
        mx = dual[self.n_flows + self.n_edges :]
        price = [max(1.0, 1.0 - cap[e] - mx[e]) for e in range(self.n_edges)]
        return obj, sigma, price


def _price(
    fab: Fabric, flow: Flow, price: Sequence[float], sigma: float, exact: bool
) -> tuple[tuple[int, ...] | None, float, float]:
    """The cheapest tree found for ``flow``, its cost, and a proven lower bound on any tree's cost.

    Unicast: a shortest path (exact). Broadcast: the shortest-path heuristic, bounded
    below by the dearest destination and, where that bound leaves room for a negative
    reduced cost, by dual ascent (:func:`steiner_lower_bound`). With ``exact``, a
    broadcast whose bound still leaves room (bound < ``sigma``) is priced by Dreyfus-Wagner
    when its destinations are few enough; the others cannot improve the master.
    """
    src, dests = flow
    if len(dests) == 1:
        path = shortest_path(fab, [src], dests[0], price)
        if path is None:
            return None, _INF, _INF
        c = sum(price[e] for e in path)
        return tuple(sorted(path)), c, c
    tree = steiner_tree(fab, src, dests, price)
    if tree is None:
        return None, _INF, _INF
    cost = sum(price[e] for e in tree)
    lb = 0.0
    for d in dests:
        p = shortest_path(fab, [src], d, price)
        lb = max(lb, sum(price[e] for e in p) if p is not None else _INF)
    # The bound matters only where no tree prices out: a flow with one keeps the round's bound below the LP
    # however tight its own bound, so the round cannot prove anything through it.
    if cost >= sigma - _EPS and lb < sigma - _EPS and cost > lb + _EPS:  # tighten it by dual ascent
        lb = max(lb, steiner_lower_bound(fab, src, dests, price, enough=sigma))
    if exact and lb < sigma - _EPS and cost > lb + _EPS and len(dests) <= EXACT_LIMIT:
        best, lb = steiner_exact(fab, src, dests, price, cost)
        if best is not None:
            best = tuple(prune_tree(fab, src, dests, best))
            if sum(price[e] for e in best) < cost:
                tree, cost = list(best), sum(price[e] for e in best)
    return tuple(tree), cost, lb


def column_generation(
    report: Callable[[CGState], None],
    fab: Fabric,
    flows: Sequence[Flow],
    initial: Sequence[Sequence[tuple[int, ...]]],
    weight: float,
    budget: float,
    max_rounds: int = MAX_ROUNDS,
) -> CGState:
    """Generate columns until none prices out or ``budget`` seconds pass.

    Args:
        report: called with the state after every round (the parent keeps the last).
        fab: the fabric.
        flows: the flows.
        initial: starting columns per flow (e.g. the negotiated tree and a shortest tree).
        weight: objective weight of the most used link.
        budget: seconds to spend.
        max_rounds: pricing rounds at most.

    Returns:
        The final :class:`CGState`.
    """
    start = clock()
    master = _Master(fab, len(flows), weight)
    columns: list[list[tuple[int, ...]]] = [[] for _ in flows]
    for i, cols in enumerate(initial):
        for c in cols:
            if c not in columns[i]:
                columns[i].append(c)
                master.add(i, c)
    state = CGState(tuple(tuple(c) for c in columns), None, None, 0, False)
    best_lb: float | None = None
    exact = False
    for rnd in range(1, max_rounds + 1):
        lp, sigma, price = master.solve()
        lag, added = lp, 0
        for i, flow in enumerate(flows):
            tree, cost, lb = _price(fab, flow, price, sigma[i], exact)
            lag += min(0.0, lb - sigma[i])
            if tree is not None and cost - sigma[i] < -_EPS and tree not in columns[i]:
                columns[i].append(tree)
                master.add(i, tree)
                added += 1
        best_lb = lag if best_lb is None else max(best_lb, lag)
        proven = best_lb >= lp - _EPS  # the bound meets the LP: no column can improve it
        done = proven or (added == 0 and (exact or not any(len(f[1]) > 1 for f in flows)))
        clocked = not done and clock() - start > budget
        state = CGState(tuple(tuple(c) for c in columns), best_lb, lp, rnd, done, master.slack, clocked, master.rounded,
                        master.integral)
        report(state)
        if done or clocked:
            break
        # Heuristic pricing ran dry: price broadcasts exactly from now on (to prove the bound).
        exact = exact or added == 0
    return state
