"""Tests of tl.route: the contract, exactness against brute force, capacity, errors, the baseline.

The brute force enumerates every combination of candidate trees (unions of
one simple path per destination, pruned to a tree) on tiny instances and
takes the least objective (links used + weight x the most used link) among
those within capacity. npu1 link capacities (docs/devices.md): 6 channels
north, 4 south, 4 east/west on compute rows, none east/west on memtiles.
"""

from __future__ import annotations

import importlib
import itertools
import random
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_plan_checks import check_routes_legal

import tilelang as tl
from tilelang.errors import PlanError
from tilelang.plan import route
from tilelang.plan.fabric import fabric
from tilelang.plan.negotiated import negotiate
from tilelang.plan.route_ilp import default_weight
from tilelang.plan.routing import check_flows

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import plan_bench  # noqa: E402 - the benchmark's flow sets, generated in one place


def simple_paths(device, a, b, limit):
    """Every simple path a -> b of at most ``limit`` links, as link tuples."""
    out = []

    def walk(t, seen, path):
        if t == b:
            out.append(tuple(path))
            return
        if len(path) >= limit:
            return
        for n in device.neighbours(t):
            if n not in seen and device.link_capacity(t, n) > 0:
                walk(n, seen | {n}, [*path, (t, n)])

    walk(a, {a}, [])
    return out


def candidate_trees(device, src, dests, slack):
    per_dest = []
    for d in dests:
        limit = abs(src[0] - d[0]) + abs(src[1] - d[1]) + slack
        per_dest.append(simple_paths(device, src, d, limit))
    trees = set()
    for combo in itertools.product(*per_dest):
        links = set().union(*map(set, combo))
        # keep it only if it is a tree (each tile entered once)
        heads = [b for _, b in links]
        if len(heads) == len(set(heads)):
            trees.add(frozenset(links))
    return list(trees)


def brute_force(device, flows, slack=2):
    w = 1.0 / (max(fabric(device).cap) + 1)
    cands = [candidate_trees(device, s, ds, slack) for s, ds in flows]
    best = None
    for combo in itertools.product(*cands):
        use: dict = {}
        for t in combo:
            for link in t:
                use[link] = use.get(link, 0) + 1
        if any(n > device.link_capacity(*link) for link, n in use.items()):
            continue
        obj = sum(len(t) for t in combo) + w * max(use.values(), default=0)
        best = obj if best is None else min(best, obj)
    return best


# -- the contract --------------------------------------------------------------------------------


def test_routes_in_input_order_with_usage_and_metrics():
    dev = tl.device("npu1")
    flows = [((0, 0), [(0, 2)]), ((1, 0), [(1, 5), (3, 4)]), ((0, 2), [(0, 0)])]
    r = route(dev, flows)
    assert [x.source for x in r.routes] == [(0, 0), (1, 0), (0, 2)]
    assert r.routes[1].dests == ((1, 5), (3, 4))
    check_routes_legal(dev, r.routes)
    # the broadcast shares (1,0)..(1,4), then one link up and two east: 4 + 1 + 2
    assert r.wirelength == sum(len(x.links) for x in r.routes) == 2 + (4 + 1 + 2) + 2
    usage = r.link_usage()
    assert sum(usage.values()) == r.wirelength
    assert r.max_utilisation == max(n / dev.link_capacity(a, b) for (a, b), n in usage.items())
    assert r.gap == 0.0


def test_broadcast_is_one_tree():
    dev = tl.device("npu1")
    r = route(dev, [((2, 1), [(2, 2), (2, 3), (2, 4), (2, 5)])])
    (t,) = r.routes
    assert sorted(t.links) == [((2, 1), (2, 2)), ((2, 2), (2, 3)), ((2, 3), (2, 4)), ((2, 4), (2, 5))]


def test_column_generation_alone_proves_a_row_broadcast_optimal(monkeypatch):
    # npu2: memtile broadcasts to the eight cores of rows 2 and 3, entered at columns 2 and 5. The
    # farthest core's path bounds each tree at 6; dual ascent proves the 8 and 9 the trees take
    # (docs/planner.md "Routing"), so no edge ILP is needed for the proof.
    import importlib

    route_ilp = importlib.import_module("tilelang.plan.route_ilp")

    def no_edge_model(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("the edge ILP ran: column generation left a gap")

    monkeypatch.setattr(route_ilp, "build_edge_model", no_edge_model)
    r = route("npu2", [((2, 1), [(c, 2) for c in range(8)]), ((5, 1), [(c, 3) for c in range(8)])])
    assert r.gap == 0.0
    assert [len(x.links) for x in r.routes] == [8, 2 + 5 + 2]


def test_destination_on_the_source_needs_no_link():
    r = route("npu1", [((1, 1), [(1, 1)])])
    assert r.routes[0].links == () and r.wirelength == 0


@pytest.mark.parametrize("solver", ["cbc", "highs"])
@pytest.mark.parametrize(
    "flows",
    [
        [((0, 5), [(0, 3)])] * 5,  # 4 channels south: the fifth flow detours through column 1
        [((0, 2), [(1, 5)]), ((1, 2), [(0, 5)]), ((0, 4), [(1, 2)])],
        [((0, 1), [(0, 3), (1, 4)]), ((1, 5), [(0, 2)])],
        [((1, 0), [(0, 5)]), ((0, 0), [(1, 5)]), ((0, 3), [(1, 3), (0, 5)])],
    ],
)
def test_exact_optimum_matches_brute_force(flows, solver):
    dev = tl.device("npu1_2col")
    r = route(dev, flows, solver=solver, time_limit=20)
    check_routes_legal(dev, r.routes)
    assert r.gap == 0.0
    assert r.objective == pytest.approx(brute_force(dev, flows), abs=1e-9)


def test_crowded_link_is_named():
    # one column: seven flows north over (0,2)->(0,3), which has 6 channels, and no detour
    with pytest.raises(PlanError, match=r"no routing: link \(0,2\)->\(0,3\) north needs 7 channels, has 6"):
        route("npu1_1col", [((0, 2), [(0, 3)])] * 7, time_limit=10)


def test_crowded_but_feasible_fills_links_to_capacity():
    r = route("npu1_1col", [((0, 2), [(0, 3)])] * 6)
    assert r.link_usage()[((0, 2), (0, 3))] == 6 and r.max_utilisation == 1.0


@pytest.mark.parametrize(
    "flows, message",
    [
        ("nope", "flows must be a list"),
        ([((0, 0), [])], "has no destination"),
        ([((0, 0), [(9, 9)])], r"flow 0 destination: \(9, 9\) is not a tile of npu1"),
        ([((0, 0),)], "expected \\(source, \\[dests\\]\\)"),
    ],
)
def test_bad_flows(flows, message):
    with pytest.raises(PlanError, match=message):
        route("npu1", flows)


def test_bad_solver_and_time_limit():
    with pytest.raises(PlanError, match="unknown solver"):
        route("npu1", [((0, 0), [(0, 2)])], solver="glpk")
    with pytest.raises(PlanError, match="time_limit"):
        route("npu1", [((0, 0), [(0, 2)])], time_limit=-1)


# -- the baseline and the fallback ---------------------------------------------------------------


def random_flows(device, n, span, seed):
    rng = random.Random(seed)
    tiles = device.tiles("compute")
    flows = []
    for _ in range(n):
        s = rng.choice(tiles)
        k = 1 if rng.random() < 0.7 else rng.randint(2, 3)
        dests = []
        while len(dests) < k:
            d = rng.choice(tiles)
            if d != s and abs(d[0] - s[0]) <= span and d not in dests:
                dests.append(d)
        flows.append((s, dests))
    return flows


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["npu1", "npu2", "xcve2302"]), st.integers(1, 60), st.integers(0, 10_000))
def test_ilp_is_legal_and_no_longer_than_negotiated(name, n, seed):
    dev = tl.device(name)
    flows = random_flows(dev, n, 3, seed)
    base = negotiate(fabric(dev), check_flows(fabric(dev), flows))
    try:
        r = route(dev, flows, time_limit=20)
    except PlanError as e:
        assert not base.legal and str(e).startswith("no routing")
        return
    check_routes_legal(dev, r.routes)
    if base.legal:
        assert r.wirelength <= base.wirelength
    assert r.gap is not None and r.gap >= 0.0


def test_large_instance_under_a_short_deadline_still_routes():
    dev = tl.device("xcvc1902")
    flows = random_flows(dev, 200, 6, 7)
    r = route(dev, flows, time_limit=1.0)
    check_routes_legal(dev, r.routes)
    assert len(r.routes) == 200


def test_default_weight_keeps_wirelength_first():
    fab = fabric(tl.device("npu1"))
    assert default_weight(fab) * max(fab.cap) < 1.0


# -- cut bounds: infeasibility proved before any LP ---------------------------------------------


def _bench_flows(device, n, span, seed):
    """benchmarks/plan_bench.py's flow sets: compute tiles, memtiles and NoC shims as endpoints."""
    return plan_bench.random_flows(device, n, span, seed)


def test_an_infeasible_set_is_rejected_by_its_worst_cut_the_same_way_twice(monkeypatch):
    from tilelang.plan import routing

    dev = tl.device("xcvc1902")
    flows = _bench_flows(dev, 400, 10, 4)

    def no_heuristic(*args, **kwargs):
        raise AssertionError("the cut bound should have rejected the set before any routing")

    monkeypatch.setattr(routing, "_heuristic", no_heuristic)
    messages = []
    for _ in range(2):
        with pytest.raises(PlanError, match="no routing: .* flows must cross the boundary between columns") as e:
            route(dev, flows)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    # the named cut, counted here from the flows and the device's link capacities
    m = re.search(r"(\d+) flows must cross the boundary between columns (\d+) and \d+, (\w+)ward, which has (\d+)",
                  messages[0])
    n, c, way, cap = int(m[1]), int(m[2]), m[3], int(m[4])

    def side(t):  # 0: columns up to c, 1: the rest; the flow goes from side a to side b
        return int(t[0] > c)

    a, b = (0, 1) if way == "east" else (1, 0)
    crossing = sum(1 for s, ds in flows if side(s) == a and any(side(d) == b for d in ds))
    channels = sum(dev.link_capacity(x, y) for x, y in dev.links() if side(x) == a and side(y) == b)
    assert (n, cap) == (crossing, channels) and n > cap


def test_a_run_of_shim_row_columns_is_a_cut(monkeypatch):
    """17 streams from the cores of columns 0-2 to the shim tiles below them pass every whole column, row
    and tile cut, yet the links into the shim row's columns 0-2 carry 16 (3 from the north, 1 from the east,
    4 channels each, from the device's link capacities): proven short before any routing. 16 of them route."""
    from tilelang.plan import routing

    dev = tl.device("xcvc1902")
    srcs = [(c, r) for c in range(3) for r in range(1, 9)][:17]
    dests = [(0, 0)] * 6 + [(1, 0)] * 6 + [(2, 0)] * 5
    flows = [(s, [d]) for s, d in zip(srcs, dests, strict=True)]
    inside = {(0, 0), (1, 0), (2, 0)}
    into = sum(dev.link_capacity(x, y) for x, y in dev.links() if y in inside and x not in inside)
    assert into == 16
    monkeypatch.setattr(routing, "_heuristic", lambda *a, **k: pytest.fail("the cut should have rejected it"))
    with pytest.raises(PlanError, match=r"no routing: 17 flows end in the shim row's columns 0-2, whose links "
                                        r"into them have 16 channels \(proven by a cut"):
        route(dev, flows)
    monkeypatch.undo()
    check_routes_legal(dev, route(dev, flows[:16]).routes)


@pytest.mark.slow
def test_full_array_chains_of_2_are_refused_by_the_shim_row_cut():
    """All 400 VC1902 cores as 20 x 10 PLIO-fed cascade chains of 2: their 200 C streams need every channel
    down into the shim row, more than the PL shims of a run of its columns can take. Refused by the cut
    at once (the router needed its negotiated-congestion passes, 18 s, to name one link short)."""
    d = tl.library.matmul(640, 640, 640, in_dtype=tl.i16, out_dtype=tl.i32, device="xcvc1902", cores=(20, 10),
                          layout="streams", cascade=2, plio=True)
    with pytest.raises(PlanError, match=r"no routing: \d+ flows end in the shim row's columns \d+-\d+, whose links into "
                                        r"them have \d+ channels \(proven by a cut"):
        tl.plan(d, strategy="greedy")


@pytest.mark.parametrize(
    "device, n, span, seed",
    [("npu1", 45, 3, 127), ("xcvc1902", 100, 8, 1), ("xcvc1902", 200, 8, 2), ("xcvc1902", 360, 8, 0)],
)
def test_the_benchmarks_feasible_sets_pass_every_cut(device, n, span, seed):
    from tilelang.plan.route_cuts import worst_cut

    dev = tl.device(device)
    flows = check_flows(fabric(dev), _bench_flows(dev, n, span, seed))
    assert worst_cut(fabric(dev), flows, [f"#{i}" for i in range(n)]) is None


def test_a_feasible_benchmark_set_still_routes():
    dev = tl.device("npu1")
    r = route(dev, _bench_flows(dev, 45, 3, 127))
    check_routes_legal(dev, r.routes)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["npu1", "npu2", "xcvc1902"]), st.integers(1, 80), st.integers(0, 10_000))
def test_cut_counts_match_their_definition(name, n, seed):
    from tilelang.plan.route_cuts import _capacity, _demand

    dev = tl.device(name)
    fab = fabric(dev)
    flows = check_flows(fab, _bench_flows(dev, n, 4, seed))
    cuts, room = _capacity(fab)
    demand = _demand(fab, flows, cuts)
    for cut, need, (cap, links) in zip(cuts, demand, room, strict=True):
        assert need == sum(1 for f in flows if cut.needs(f)), cut.what
        assert sorted(links) == [e for e, (a, b) in enumerate(fab.links) if cut.crosses(a, b)], cut.what
        assert cap == sum(dev.link_capacity(*fab.links[e]) for e in links)


def test_column_generation_stops_at_its_work_bound_and_says_so(monkeypatch):
    """Pricing rounds are bounded by work (flows priced over all rounds), never by the clock: with the bound
    at two rounds the routing is still legal, no longer than negotiated congestion's, and says where it stopped;
    its gap is against the farthest-destination bound, below 1."""
    route_ilp = importlib.import_module("tilelang.plan.route_ilp")
    monkeypatch.setattr(route_ilp, "CG_MIN_ROUNDS", 1)
    dev = tl.device("xcvc1902")
    flows = random_flows(dev, 80, 12, 2)
    base = negotiate(fabric(dev), check_flows(fabric(dev), flows))
    monkeypatch.setattr(route_ilp, "CG_WORK", 2 * len(flows))
    r = route(dev, flows, time_limit=600)
    check_routes_legal(dev, r.routes)
    assert r.wirelength <= base.wirelength
    assert r.solve.status == "feasible"
    assert "work bound: 2 pricing rounds of 80 flows" in r.solve.message
    assert 0.0 < r.gap < 1.0
