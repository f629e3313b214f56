"""The exact edge-based routing ILP, for designs small enough to prove optimality.

One binary per (flow, link) inside the flow's region, a multicommodity flow
per destination of a broadcast bounded by those binaries (so the chosen
links contain a path to every destination and, minimised, form a tree),
in-degree at most one per tile, channel capacity per link, and a variable
for the most used link. A flow's region is the bounding box of its
terminals and of its warm-start tree, widened by ``margin`` tiles: every
solution of the region model is a solution of the whole-array model, and
the warm start is always inside, so the model is never infeasible when the
warm start is legal.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulp

from tilelang.plan.fabric import Coord, Fabric
from tilelang.plan.negotiated import Flow

Box = tuple[int, int, int, int]


def region(fab: Fabric, flow: Flow, tree: Sequence[int] | None, margin: int) -> Box:
    """Bounding box (col_lo, col_hi, row_lo, row_hi) of a flow's terminals and tree, widened by ``margin``."""
    src, dests = flow
    tiles: list[Coord] = [src, *dests]
    for e in tree or ():
        tiles += list(fab.links[e])
    cols = [t[0] for t in tiles]
    rows = [t[1] for t in tiles]
    dev = fab.device
    return (
        max(0, min(cols) - margin),
        min(dev.cols - 1, max(cols) + margin),
        max(0, min(rows) - margin),
        min(dev.rows - 1, max(rows) + margin),
    )


def region_edges(fab: Fabric, box: Box, source: Coord) -> list[int]:
    """Edges with both ends in ``box``, none entering the source."""
    c0, c1, r0, r1 = box
    out = []
    for e, (a, b) in enumerate(fab.links):
        if b == source:
            continue
        if c0 <= a[0] <= c1 and c0 <= b[0] <= c1 and r0 <= a[1] <= r1 and r0 <= b[1] <= r1:
            out.append(e)
    return out


def model_size(fab: Fabric, flows: Sequence[Flow], trees: Sequence[Sequence[int] | None], margin: int) -> int:
    """Variables the edge model would have."""
    n = 0
    for f, t in zip(flows, trees, strict=True):
        edges = len(region_edges(fab, region(fab, f, t, margin), f[0]))
        n += edges * (1 + (len(f[1]) if len(f[1]) > 1 else 0))
    return n


def _conservation(prob: pulp.LpProblem, name: str, var: dict[int, pulp.LpVariable], fab: Fabric, src: Coord, dst: Coord) -> None:
    bal: dict[Coord, list] = {}
    for e, v in var.items():
        a, b = fab.links[e]
        bal.setdefault(a, []).append(v)
        bal.setdefault(b, []).append(-v)
    for t in sorted(bal):
        rhs = 1 if t == src else (-1 if t == dst else 0)
        prob += pulp.lpSum(bal[t]) == rhs, f"{name}_bal_{t[0]}_{t[1]}"


def build_edge_model(
    fab: Fabric,
    flows: Sequence[Flow],
    trees: Sequence[Sequence[int] | None],
    weight: float,
    margin: int = 1,
) -> tuple[pulp.LpProblem, list[dict[int, pulp.LpVariable]]]:
    """The edge model; variables named ``x_<flow>_<edge>`` carry the warm start as initial values.

    Args:
        fab: the fabric.
        flows: the flows.
        trees: a warm-start tree per flow (None: none).
        weight: objective weight of the most used link.
        margin: tiles added around each flow's region.

    Returns:
        (model, per flow {edge: binary}).
    """
    prob = pulp.LpProblem("routing_edges", pulp.LpMinimize)
    x: list[dict[int, pulp.LpVariable]] = []
    load: dict[int, list] = {}
    for i, (flow, tree) in enumerate(zip(flows, trees, strict=True)):
        src = flow[0]
        dests = tuple(d for d in flow[1] if d != src)  # a destination on the source tile needs no link
        edges = region_edges(fab, region(fab, flow, tree, margin), src) if dests else []
        xi = {e: prob.add_variable(f"x_{i}_{e}", 0, 1, cat="Binary") for e in edges}
        warm = set(tree or ())
        for e, v in xi.items():
            v.setInitialValue(1 if e in warm else 0)
            load.setdefault(e, []).append(v)
        x.append(xi)
        indeg: dict[Coord, list] = {}
        for e, v in xi.items():
            indeg.setdefault(fab.links[e][1], []).append(v)
        for t in sorted(indeg):
            prob += pulp.lpSum(indeg[t]) <= 1, f"f{i}_in_{t[0]}_{t[1]}"
        if not dests:
            continue
        if len(dests) == 1:
            _conservation(prob, f"f{i}", xi, fab, src, dests[0])
            continue
        for k, d in enumerate(dests):
            y = {e: prob.add_variable(f"y_{i}_{k}_{e}", 0, 1) for e in edges}
            _conservation(prob, f"f{i}_d{k}", y, fab, src, d)
            for e in edges:
                prob += y[e] <= xi[e], f"f{i}_d{k}_use_{e}"
    most = prob.add_variable("most_used", 0)
    most.setInitialValue(max((sum(1 for t in trees if t and e in t) for e in load), default=0))
    for e in sorted(load):
        prob += pulp.lpSum(load[e]) <= fab.cap[e], f"cap_{e}"
        prob += pulp.lpSum(load[e]) <= most, f"max_{e}"
    prob += pulp.lpSum(v for xi in x for v in xi.values()) + weight * most
    return prob, x
