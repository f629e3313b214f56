"""Exact minimum Steiner arborescences for broadcasts with few destinations (Dreyfus-Wagner).

A broadcast's route is a tree rooted at its source reaching every
destination. For k destinations the Dreyfus-Wagner dynamic programme finds
the cheapest such tree exactly in O(3^k n + 2^k n log n) on a graph of n
tiles: ``g[S][v]`` is the cheapest tree rooted at v reaching the
destinations in S, built from a split of S at v or an edge v -> w followed
by a tree at w. The router prices broadcast columns with it, which makes
its Lagrangian lower bound exact (a heuristic tree only bounds from above).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from functools import lru_cache

from tilelang.plan.fabric import Coord, Fabric

#: Destinations up to which the exact programme is used (3^k growth beyond).
EXACT_LIMIT = 6

_INF = float("inf")
#: A reduced cost at most this is paid for (dual ascent).
_ZERO = 1e-9


@lru_cache(maxsize=16)
def _incoming(fab: Fabric) -> dict[Coord, tuple[tuple[int, Coord], ...]]:
    inn: dict[Coord, list[tuple[int, Coord]]] = {t: [] for t in fab.out}
    for e, (a, b) in enumerate(fab.links):
        inn[b].append((e, a))
    return {t: tuple(v) for t, v in inn.items()}


def _from_source(fab: Fabric, source: Coord, cost: Sequence[float], upper: float) -> dict[Coord, float]:
    """Distances from the source, up to ``upper``."""
    dist = {source: 0.0}
    heap = [(0.0, source)]
    while heap:
        d, t = heapq.heappop(heap)
        if d > dist[t]:
            continue
        for e, n in fab.out[t]:
            nd = d + cost[e]
            if nd <= upper + 1e-9 and nd < dist.get(n, _INF) - 1e-12:
                dist[n] = nd
                heapq.heappush(heap, (nd, n))
    return dist


def _relax(
    fab: Fabric,
    label: dict[Coord, float],
    back: dict[Coord, tuple],
    cost: Sequence[float],
    reach: dict[Coord, float],
    upper: float,
) -> None:
    """Dijkstra on reversed edges: label[v] = min(label[v], cost(v->w) + label[w]).

    A tile v matters only if reach[v] + label[v] <= upper: a tree through it costs at
    least that, more than a tree already known.
    """
    inn = _incoming(fab)
    heap = [(d, t) for t, d in label.items() if d < _INF]
    heapq.heapify(heap)
    done: set[Coord] = set()
    while heap:
        d, w = heapq.heappop(heap)
        if w in done or d > label[w]:
            continue
        done.add(w)
        for e, v in inn[w]:
            nd = d + cost[e]
            if v not in reach or reach[v] + nd > upper + 1e-9:
                continue
            if nd < label.get(v, _INF) - 1e-12:
                label[v] = nd
                back[v] = ("edge", e, w)
                heapq.heappush(heap, (nd, v))


def steiner_exact(
    fab: Fabric, source: Coord, dests: Sequence[Coord], cost: Sequence[float], upper: float = _INF
) -> tuple[tuple[int, ...] | None, float]:
    """The cheapest arborescence from ``source`` reaching all ``dests``.

    Args:
        fab: the fabric.
        source: the root.
        dests: destinations (at most :data:`EXACT_LIMIT` distinct ones besides the source).
        cost: non-negative edge costs.
        upper: the cost of a known tree (prunes the search; the result is still exact
            when the optimum is at most ``upper``).

    Returns:
        (sorted edge numbers, cost); (None, inf) if some destination is unreachable.
    """
    terms = sorted({d for d in dests if d != source})
    k = len(terms)
    if k == 0:
        return (), 0.0
    if k > EXACT_LIMIT:
        raise ValueError(f"steiner_exact handles at most {EXACT_LIMIT} destinations, got {k}")
    full = (1 << k) - 1
    reach = _from_source(fab, source, cost, upper)
    if any(t not in reach for t in terms):
        return None, _INF
    g: list[dict[Coord, float]] = [{} for _ in range(full + 1)]
    back: list[dict[Coord, tuple]] = [{} for _ in range(full + 1)]
    for i, t in enumerate(terms):
        s = 1 << i
        g[s][t] = 0.0
        back[s][t] = ("leaf",)
        _relax(fab, g[s], back[s], cost, reach, upper)
    for s in range(1, full + 1):
        if s & (s - 1) == 0:
            continue
        label: dict[Coord, float] = {}
        low = s & -s
        sub = (s - 1) & s
        while sub:
            if sub & low:  # each split once: the part holding the lowest destination
                rest = s ^ sub
                for v, a in g[sub].items():
                    b = g[rest].get(v)
                    if b is not None and a + b < label.get(v, _INF) - 1e-12 and reach[v] + a + b <= upper + 1e-9:
                        label[v] = a + b
                        back[s][v] = ("split", sub)
            sub = (sub - 1) & s
        g[s] = label
        _relax(fab, g[s], back[s], cost, reach, upper)
    best = g[full].get(source, _INF)
    if best == _INF:
        return None, _INF
    edges: set[int] = set()
    _build(back, full, source, edges)
    return tuple(sorted(edges)), best


def _build(back: list[dict[Coord, tuple]], s: int, v: Coord, edges: set[int]) -> None:
    stack = [(s, v)]
    while stack:
        s, v = stack.pop()
        step = back[s][v]
        if step[0] == "edge":
            edges.add(step[1])
            stack.append((s, step[2]))
        elif step[0] == "split":
            stack.append((step[1], v))
            stack.append((s ^ step[1], v))


def steiner_lower_bound(
    fab: Fabric, source: Coord, dests: Sequence[Coord], cost: Sequence[float], enough: float = _INF
) -> float:
    """A proven lower bound on the cheapest arborescence from ``source`` reaching all ``dests``.

    Wong's dual ascent (Wong, "A dual ascent approach for Steiner tree problems on a directed
    graph", Math. Programming 28, 1984): every set of tiles holding a destination but not the
    source is a cut that any arborescence enters, so raising the cut's dual by the cheapest
    entering edge's reduced cost, and lowering those edges' reduced costs by as much, keeps a
    feasible dual of the cut LP whose value bounds every tree from below. The cut grown is, for
    the destination with the fewest entering edges, the tiles that reach it over edges already
    paid for (reduced cost zero); a destination they connect to the source is done. Any number
    of destinations, unlike :func:`steiner_exact`; exact on paths and on a broadcast along a row
    entered from its middle, where the shortest-path bound sees only the farther side.

    Args:
        fab: the fabric.
        source: the root.
        dests: destinations.
        cost: non-negative edge costs.
        enough: stop once the bound reaches this (a caller that needs no more).

    Returns:
        The bound; inf if some destination is unreachable from the source.
    """
    terms = sorted({d for d in dests if d != source})
    inn = _incoming(fab)
    out = fab.out
    red = list(cost)
    cuts: dict[Coord, set[Coord]] = {}
    enter: dict[Coord, set[int]] = {}

    def grow(t: Coord, start: Coord) -> None:
        """Add ``start`` and every tile reaching it over paid edges to ``t``'s cut, keeping its entering edges."""
        cut, ent = cuts[t], enter[t]
        cut.add(start)
        stack = [start]
        while stack:
            w = stack.pop()
            for e, x in out[w]:  # edges from a tile now inside no longer enter
                if x in cut:
                    ent.discard(e)
            for e, v in inn[w]:
                if v in cut:
                    continue
                if red[e] <= _ZERO:
                    cut.add(v)
                    stack.append(v)
                else:
                    ent.add(e)

    active = []
    for t in terms:
        cuts[t], enter[t] = set(), set()
        grow(t, t)
        if source not in cuts[t]:
            active.append(t)
    bound = 0.0
    while active and bound < enough:
        pick = min(active, key=lambda t: len(enter[t]))  # the first of the fewest entering edges
        entering = enter[pick]
        if not entering:
            return _INF  # nothing enters the cut: the source cannot reach that destination
        delta = min(red[e] for e in entering)
        bound += delta
        paid = []
        for e in entering:
            red[e] -= delta
            if red[e] <= _ZERO:
                paid.append(e)
        for t in active:  # a newly paid edge into a cut pulls its tail (and what reaches it) in
            cut, ent = cuts[t], enter[t]
            for e in paid:
                if e in ent:
                    tail = fab.links[e][0]
                    if tail not in cut:
                        grow(t, tail)
        active = [t for t in active if source not in cuts[t]]
    return bound
