"""Routing feedback into the placement (plan/driver.py ``_feedback``, docs/planner.md "Routing feedback").

When negotiated congestion leaves a link of the ILP's placement over capacity, the boundary that link
crosses keeps that many more channels free and the host ends are placed again (``placement.keep_free``).
The boundary loads are recounted here from the placed flows with ``route_cuts.BoundaryLoad``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tilelang as tl
from tilelang.ir.verify import HOST
from tilelang.plan import driver
from tilelang.plan.driver import _packings
from tilelang.plan.fabric import fabric
from tilelang.plan.greedy import greedy_placement
from tilelang.plan.negotiated import RouteResult
from tilelang.plan.placement import keep_free
from tilelang.plan.placement_model import objective_of
from tilelang.plan.problem import build_problem
from tilelang.plan.route_cuts import BoundaryLoad, boundary_of, describe_boundary, worst_cut
from tilelang.plan.solve import SolveLog, clock

DEV = "xcvc1902"


def _design():
    """2 x 2 PLIO-fed cascade chains of 4: 16 cores, 20 host streams, every flow a host end's."""
    return tl.library.matmul(128, 128, 128, in_dtype=tl.i16, out_dtype=tl.i32, device=DEV, cores=(2, 2),
                             layout="streams", cascade=4, plio=True)


def _flows(problem, placement):
    out = []
    for f in problem.fifos:
        tiles = [placement.hosts[f.name] if a == HOST else placement.cores[a.split(":", 1)[1]] for a in f.agents]
        out.append((tiles[0], tuple(tiles[1:])))
    return out


def _load(problem, placement) -> BoundaryLoad:
    load = BoundaryLoad(fabric(problem.device))
    for flow in _flows(problem, placement):
        load.add(flow)
    return load


def test_boundary_of_a_link_and_its_name():
    assert boundary_of((23, 3), (24, 3)) == (0, True, 23)
    assert boundary_of((24, 3), (23, 3)) == (0, False, 23)
    assert boundary_of((3, 0), (3, 1)) == (1, True, 0)
    assert boundary_of((3, 2), (3, 1)) == (1, False, 1)
    assert describe_boundary((0, True, 23)) == "the boundary between columns 23 and 24, eastward"
    assert describe_boundary((1, False, 1)) == "the boundary between rows 1 and 2, southward"
    # the name is the one the router's cut proof uses
    fab = fabric(tl.device(DEV))
    flows = [((1, r), ((2, r),)) for r in range(1, 9) for _ in range(5)]  # 40 across 36 channels
    assert describe_boundary((0, True, 1)) in worst_cut(fab, flows, [f"#{i}" for i in range(len(flows))])


def test_kept_channels_move_host_ends_off_the_boundary():
    d = _design()
    problem = build_problem(d, _packings(d, "cbc", True, clock() + 60))
    start = greedy_placement(problem)
    before = _load(problem, start)
    # the busiest boundary host flows cross: keep free all but one channel fewer than it uses now
    b = max(sorted(k for k, n in before.load.items() if n and k[0] == 0), key=lambda k: before.load[k])
    want = before.load[b] - 1
    reserve = {b: before.cap[b] - want}
    placed = keep_free(problem, start, reserve, "cbc", 60, SolveLog("placement"))
    assert placed is not None
    assert placed.cores == start.cores  # the cores are held
    after = _load(problem, placed)
    assert after.load[b] <= want < before.load[b]
    assert not after.overfull()


@pytest.mark.slow
def test_a_link_left_over_capacity_is_fed_back_and_the_new_placement_routes(monkeypatch):
    """The negotiated routing is made to report one link over capacity on the ILP's placement only, by
    more channels than its boundary has free: one round keeps them free; the new placement is routed."""
    d = _design()
    with warnings.catch_warnings():
        warnings.simplefilter("error", tl.PlanWarning)
        plain = tl.plan(d)
    problem = build_problem(d, ())
    load = _load(problem, plain_placement(plain))
    fab = fabric(problem.device)
    # a link on the fullest column boundary that host flows cross
    b = max(sorted(k for k, n in load.load.items() if n and k[0] == 0), key=lambda k: load.load[k])
    e = next(i for i, (a, c) in enumerate(fab.links) if boundary_of(a, c) == b)
    short = load.cap[b] - load.load[b] + 1  # so many channels over: the boundary must lose one flow
    real = driver.first_pass
    calls, first = [], []

    def first_pass(fab, flows, names, time_limit=60, method="ilp"):
        res = real(fab, flows, names, time_limit, method)
        calls.append(res.legal)
        first.extend([] if first else [list(flows)])
        if list(flows) != first[0]:
            return res
        return RouteResult(res.trees, False, {e: short}, res.iterations, res.seconds)

    monkeypatch.setattr(driver, "first_pass", first_pass)
    with warnings.catch_warnings():
        warnings.simplefilter("error", tl.PlanWarning)
        p = tl.plan(d)
        again = tl.plan(d)
    assert calls == [True, True, True, True]  # a round, then the new placement's routing; twice
    place = p.solves["placement"]
    assert place.message.startswith("routing feedback, 1 round(s): round 1:"), place.message
    assert describe_boundary(b) in place.message
    assert place.objective == objective_of(problem, plain_placement(p))
    assert p.placement == plain.placement  # cores held
    after = _load(problem, plain_placement(p))
    assert after.load[b] <= load.load[b] - 1
    _check_routes(p)
    assert p.to_json() == again.to_json()


def _check_routes(p: tl.Plan) -> None:
    """Every route reaches its tiles; no link carries more routes than the device's channels."""
    dev, use = p.device, {}
    for r in p.routes.values():
        assert set(map(tuple, r.dests)) <= set(map(tuple, r.reaches()))
        for link in r.links:
            use[link] = use.get(link, 0) + 1
    assert all(n <= dev.link_capacity(*link) for link, n in use.items())


def plain_placement(p: tl.Plan):
    """The Placement (cores, links, host ends) of a plan."""
    from tilelang.plan.carriage import Placement

    hosts = {n: tuple(e.tile) for n, fp in p.fifos.items() for e in (fp.producer, *fp.consumers) if e.agent == HOST}
    return Placement({c: tuple(t) for c, t in p.placement.items()}, {n: tuple(t) for n, t in p.link_tiles.items()},
                     hosts)


@pytest.mark.slow
def test_plio_400_cores_plan_with_the_default_strategy():
    """10 x 10 PLIO-fed cascade chains of 4 (400 cores) at 640^3 (benchmarks/plio_place_bench.py's row): the
    ILP's own placement leaves one link a channel short after negotiated congestion ((43,7) to (44,7) east); a
    round of routing feedback places the host ends so that it routes (no greedy fallback), with no PlanWarning
    (every solve ends by its work bound, in 35 to 46 s here: within tl.plan's default 60 s, and the 300 s given
    keep a slower machine's safety nets away too), and C equals numpy. (The 320-core grid's placement now
    routes at once.)"""
    M = K = N = 640  # noqa: N806
    d = tl.library.matmul(M, K, N, in_dtype=tl.i16, out_dtype=tl.i32, device=DEV, cores=(10, 10),
                          layout="streams", cascade=4, plio=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", tl.PlanWarning)
        p = tl.plan(d, time_limit=300)
    place = p.solves["placement"]
    assert place.method == "ilp-neighbourhood" and place.status == "feasible", place
    assert place.message.startswith("routing feedback, 1 round(s)"), place.message
    _check_routes(p)
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, (M, K)).astype(np.int16)
    b = rng.integers(-50, 50, (K, N)).astype(np.int16)
    res = tl.simulate(p, **tl.library.pack_streams(d, a, b))
    c = tl.library.unpack_streams(d, res.outputs["C"])
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))
