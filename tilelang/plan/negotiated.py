"""Negotiated-congestion routing (PathFinder, McMurchie and Ebeling 1995) and sequential routing.

PathFinder is what mlir-aie's router does (AIE_FACTS "Routing in mlir-aie"):
route every flow on costs that grow with the present over-use of a channel
and with its history of over-use, rip up and repeat until no link carries
more flows than it has channels. Here only flows that touch an over-used
link are ripped up after the first pass, and trees of broadcasts grow from
the partial tree (links already in a flow's tree are free to it).

It is the planner's fallback when an ILP cannot finish, its warm start and
upper bound, and the baseline the benchmark compares against.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from tilelang.plan.fabric import Coord, Fabric, steiner_tree
from tilelang.plan.solve import clock

Flow = tuple[Coord, tuple[Coord, ...]]


@dataclass(frozen=True)
class RouteResult:
    """Trees for a list of flows.

    Attributes:
        trees: edge numbers of each flow's tree, in flow order (None: unrouted).
        legal: every flow routed and no link over capacity.
        overflow: edge -> flows beyond its capacity (empty when legal).
        iterations: routing passes made.
        seconds: wall time.
        clocked: stopped by the time limit (a safety net) before its pass limit.
    """

    trees: tuple[tuple[int, ...] | None, ...]
    legal: bool
    overflow: dict[int, int]
    iterations: int
    seconds: float
    clocked: bool = False

    @property
    def wirelength(self) -> int:
        return sum(len(t) for t in self.trees if t is not None)


def usage(n_edges: int, trees: Sequence[Sequence[int] | None]) -> list[int]:
    """Flows on each edge."""
    occ = [0] * n_edges
    for t in trees:
        for e in t or ():
            occ[e] += 1
    return occ


def overflow_of(fab: Fabric, trees: Sequence[Sequence[int] | None]) -> dict[int, int]:
    occ = usage(len(fab.links), trees)
    return {e: occ[e] - fab.cap[e] for e in range(len(occ)) if occ[e] > fab.cap[e]}


def negotiate(
    fab: Fabric,
    flows: Sequence[Flow],
    max_iters: int = 300,
    time_limit: float | None = None,
    growth: float = 1.4,
    history: float = 1.0,
) -> RouteResult:
    """Route ``flows`` by negotiated congestion.

    Args:
        fab: the fabric.
        flows: (source, dests) per flow.
        max_iters: passes before giving up (mlir-aie allows 1000 on its whole design).
        time_limit: seconds before giving up (None: no limit); a safety net only, since
            ``max_iters`` bounds the work (``clocked`` says when it fired).
        growth: factor on the present-congestion weight per pass.
        history: history cost added per channel of over-use per pass.

    Returns:
        The :class:`RouteResult`; ``legal`` is False if over-use remains.
    """
    start = clock()
    n = len(fab.links)
    hist = [0.0] * n
    occ = [0] * n
    trees: list[tuple[int, ...] | None] = [None] * len(flows)
    pres = 0.5
    todo = list(range(len(flows)))
    it = 0
    for it in range(1, max_iters + 1):
        for i in todo:
            for e in trees[i] or ():
                occ[e] -= 1
            cost = [(1.0 + hist[e]) * (1.0 + pres * max(0, occ[e] + 1 - fab.cap[e])) for e in range(n)]
            src, dests = flows[i]
            tree = steiner_tree(fab, src, dests, cost)
            trees[i] = tuple(tree) if tree is not None else None
            for e in trees[i] or ():
                occ[e] += 1
        over = {e: occ[e] - fab.cap[e] for e in range(n) if occ[e] > fab.cap[e]}
        unrouted = any(t is None for t in trees)
        if not over and not unrouted:
            return RouteResult(tuple(trees), True, {}, it, clock() - start)
        if time_limit is not None and clock() - start > time_limit and it < max_iters:
            return RouteResult(tuple(trees), False, overflow_of(fab, trees), it, clock() - start, True)
        for e, x in over.items():
            hist[e] += history * x
        pres *= growth
        bad = set(over)
        todo = [i for i, t in enumerate(trees) if t is None or bad.intersection(t)]
    return RouteResult(tuple(trees), False, overflow_of(fab, trees), it, clock() - start)


def sequential(fab: Fabric, flows: Sequence[Flow]) -> RouteResult:
    """Route flows one by one on shortest trees over links with a free channel (greedy).

    Returns:
        The :class:`RouteResult`; a flow with no path over free channels is None.
    """
    start = time.monotonic()
    free = list(fab.cap)
    cost = [1.0] * len(free)
    trees: list[tuple[int, ...] | None] = []
    for src, dests in flows:
        allowed = [c > 0 for c in free]
        tree = steiner_tree(fab, src, dests, cost, allowed)
        trees.append(tuple(tree) if tree is not None else None)
        for e in tree or ():
            free[e] -= 1
    legal = all(t is not None for t in trees)
    return RouteResult(tuple(trees), legal, {}, 1, time.monotonic() - start)


def tidy(fab: Fabric, flows: Sequence[Flow], trees: Sequence[Sequence[int]], passes: int = 2) -> list[tuple[int, ...]]:
    """Shorten a legal routing: re-route each flow on the fewest links with a free channel.

    Never makes a flow longer or a link over-used, so the result stays legal.
    """
    out = [tuple(t) for t in trees]
    occ = usage(len(fab.links), out)
    cost = [1.0] * len(occ)
    for _ in range(passes):
        changed = False
        for i, (src, dests) in enumerate(flows):
            for e in out[i]:
                occ[e] -= 1
            allowed = [occ[e] < fab.cap[e] for e in range(len(occ))]
            tree = steiner_tree(fab, src, dests, cost, allowed)
            if tree is not None and len(tree) < len(out[i]):
                out[i] = tuple(tree)
                changed = True
            for e in out[i]:
                occ[e] += 1
        if not changed:
            break
    return out
