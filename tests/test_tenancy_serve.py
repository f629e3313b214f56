"""tl.serve: the serving simulator's policies on traces worked out by hand, and on real designs."""

from __future__ import annotations

import pytest

import tilelang as tl
from tilelang.tenancy import traces
from tilelang.tenancy.serve import Costs, Request, ServiceTimes, serve

CLOCK = tl.device("npu1").clock_hz
#: 0 dispatch and a 50-cycle reconfiguration, so that every time below is a small integer.
COSTS = Costs(dispatch=0.0, reconfig=50 / CLOCK)


class Table(ServiceTimes):
    """Service times from a table instead of the planner and simulator (the policies alone under test)."""

    def __init__(self, table: dict[str, dict[int, int]]) -> None:
        self.device = tl.device("npu1")
        self.designs = dict.fromkeys(table)
        self.t = table

    def cycles(self, design: str, width: int) -> int | None:
        return self.t[design].get(width)


TABLE = Table({"x": {1: 400, 2: 200, 4: 100}, "y": {1: 300, 4: 100}})
TRACE = [Request(0, "x", 1000), Request(0, "y", 500), Request(10, "x", 2000)]


def _ends(rep) -> list[tuple[int, int, int, bool]]:  # noqa: ANN001
    return [(s.end, s.first_column, s.width, s.reconfigured) for s in rep.served]


def test_time_share_by_hand() -> None:
    # t=0: y first (earliest deadline), loads the array: 50 + 100; then x, another load: 150 + 50 + 100;
    # then the second x on the array still configured for x: 300 + 100.
    rep = serve(TABLE, TRACE, "time-share", costs=COSTS)
    assert _ends(rep) == [(300, 0, 4, True), (150, 0, 4, True), (400, 0, 4, False)]
    assert rep.misses == 0 and rep.reconfigurations == 2


def test_static_by_hand() -> None:
    # loads per split: (x 2 cols, y 1 col) gives x 2*200, y 300: the smallest maximum (x at 3 cols does not
    # fit; y fits only 1 or 4). x at 0..1, y at 2.
    rep = serve(TABLE, TRACE, "static", costs=COSTS)
    assert rep.partitions == {"x": (0, 2), "y": (2, 1)}
    assert _ends(rep) == [(250, 0, 2, True), (350, 2, 1, True), (450, 0, 2, False)]


def test_fission_by_hand() -> None:
    # y (deadline 500) first: the narrowest width meeting it, leaving a column for x: 1 column, ends 350.
    # x: narrowest meeting 1000 is 1 column at 1, ends 450. The second x at 10: 1 column at 2, 10+50+400.
    rep = serve(TABLE, TRACE, "fission", costs=COSTS)
    assert _ends(rep) == [(450, 1, 1, True), (350, 0, 1, True), (460, 2, 1, True)]
    assert rep.p50 == pytest.approx(450 / CLOCK) and rep.misses == 0  # latencies 450, 350, 450


def test_a_missed_deadline_is_counted() -> None:
    rep = serve(TABLE, [Request(0, "x", 120), Request(0, "x", 10_000)], "time-share", costs=COSTS)
    assert [s.missed for s in rep.served] == [True, False] and rep.misses == 1 and rep.miss_rate == 0.5


def test_bad_policy_and_unknown_design() -> None:
    with pytest.raises(tl.TileLangError, match="unknown policy 'fifo'"):
        serve(TABLE, TRACE, "fifo")
    with pytest.raises(tl.TileLangError, match="unknown design 'z'"):
        serve(TABLE, [Request(0, "z", 5)], "fission")


def test_traces_are_deterministic_and_at_the_asked_load() -> None:
    one = traces.poisson(TABLE, 2000, 0.5, seed=3)
    assert one == traces.poisson(TABLE, 2000, 0.5, seed=3) != traces.poisson(TABLE, 2000, 0.5, seed=4)
    dispatch = round(Costs().dispatch * CLOCK)
    mean_service = (dispatch + 100 + dispatch + 100) / 2
    offered = len(one) * mean_service / one[-1].arrival
    assert 0.45 < offered < 0.55
    b = traces.bursty(TABLE, 2000, 0.5, seed=3)
    assert len(b) == 2000 and all(x.arrival <= y.arrival for x, y in zip(b, b[1:], strict=False))
    assert 0.35 < len(b) * mean_service / b[-1].arrival < 0.7


def test_serving_real_designs_is_deterministic() -> None:
    designs = {"add": lambda dev: tl.library.elementwise("add", 1024 * dev.cols, tl.i32, device=dev, cores=dev.cols),
               "sum": tl.library.reduction("sum", 2048, tl.i32, device="npu1", cores=1)}
    svc = ServiceTimes(designs, "npu1")
    svc_widths = {d: svc.widths(d) for d in designs}
    assert 1 in svc_widths["add"] and 1 in svc_widths["sum"]
    # the cached service time is the simulator's cycles for the design planned on that partition
    part = tl.device("npu1_1col")
    assert svc.cycles("add", 1) == tl.simulate(tl.plan(designs["add"](part)), mode="timing").cycles
    tr = traces.poisson(svc, 200, 0.9, seed=0)
    for policy in ("time-share", "static", "fission"):
        a, b = serve(svc, tr, policy), serve(svc, tr, policy)
        assert a.summary() == b.summary() and a.requests == 200


def test_served_is_in_the_order_the_trace_was_given() -> None:
    late_first = [Request(10, "x", 2000), Request(0, "y", 500), Request(0, "x", 1000)]
    rep = serve(TABLE, late_first, "time-share", costs=COSTS)
    assert [s.request for s in rep.served] == late_first
    by_arrival = serve(TABLE, TRACE, "time-share", costs=COSTS)
    assert {s.request: s.end for s in rep.served} == {s.request: s.end for s in by_arrival.served}


def test_bad_tenants_traces_and_costs_are_named() -> None:
    add = tl.library.elementwise("add", 1024, tl.i32, device="npu1", cores=1)

    def wrong_device(dev):  # noqa: ANN001, ANN202 - ignores the partition it is given
        return tl.library.elementwise("add", 1024, tl.i32, device="npu2", cores=1)

    for policy in ("fission", "time-share", "static"):
        with pytest.raises(tl.DesignError, match="tenant 'a': expected a Design or a function"):
            serve({"a": 3}, [Request(0, "a", 10**7)], policy)
        with pytest.raises(tl.DesignError, match=r"tenant 'a': its factory must return a Design for the device it "
                                                 r"is given \(npu1.*\), got a Design for npu2"):
            serve({"a": wrong_device}, [Request(0, "a", 10**7)], policy)
    with pytest.raises(tl.DesignError, match="expected a dict of tenants"):
        serve([add], [], "fission")
    with pytest.raises(tl.TileLangError, match=r"trace holds \(0, 'a', 10\), not a Request"):
        serve({"a": add}, [(0, "a", 10)], "fission")
    with pytest.raises(tl.TileLangError, match="unknown design"):
        serve({"a": add}, [Request(0, ["a"], 10)], "fission")
    with pytest.raises(tl.TileLangError, match="Costs.dispatch must be a non-negative"):
        Costs(dispatch=-1.0)


def test_a_design_no_width_fits_says_why() -> None:
    # 32 cores on the 16-core npu1: the reason the library gives is part of the refusal
    def too_big(dev):  # noqa: ANN001, ANN202
        return tl.library.matmul(256, 256, 256, cores=(8, 4), device=dev)

    with pytest.raises(tl.TileLangError, match=r"does not fit the whole npu1 \(tenant 'a' does not fit 4 column"):
        serve({"a": too_big}, [Request(0, "a", 10**9)], "time-share")
