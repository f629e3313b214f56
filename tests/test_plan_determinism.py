"""Plans depend on the design and options only, never on the machine's speed; fallbacks are reported.

Every solve is bounded by work (branch-and-bound nodes, pricing rounds,
negotiation passes); the time limit is a safety net. ``slowed_clock(k)``
makes the planner's clock run k times fast, which is what a machine k times
slower looks like to every deadline. A safety net that fires, a solver that
fails and an ILP result that does not fit are PlanWarnings and show in
``plan.solves`` and ``plan.report()``.
"""

from __future__ import annotations

import warnings

import pytest
from test_plan import two_stage
from test_plan_checks import check_plan

import tilelang as tl
from tilelang.errors import PlanError, PlanWarning
from tilelang.plan import driver, solve
from tilelang.plan.solve import slowed_clock


def _plan_without_warnings(design, **kw) -> tl.Plan:
    with warnings.catch_warnings():
        warnings.simplefilter("error", PlanWarning)
        return tl.plan(design, **kw)


@pytest.mark.slow
def test_matmul_plan_is_byte_identical_on_a_ten_times_slower_machine():
    # npu1's 2x4 matmul: 8 movable cores, so the whole placement model is solved (a solve that
    # took longer than a fixed 2 s used to be thrown away), then banks and routes by ILP.
    d = tl.library.matmul(256, 256, 256, cores=(2, 4))
    # the limit is generous so that no safety net fires even at a tenth of the speed
    normal = _plan_without_warnings(d, time_limit=3000)
    with slowed_clock(10.0):
        slow = _plan_without_warnings(d, time_limit=3000)
    assert slow.to_json() == normal.to_json()
    assert normal.solves["placement"].status in ("optimal", "feasible")


@pytest.mark.slow
def test_neighbourhood_search_is_the_same_on_a_slow_machine():
    # 16 cores: the neighbourhood search, window by window
    d = tl.library.matmul(256, 256, 256)
    normal = _plan_without_warnings(d, time_limit=3000)
    assert normal.solves["placement"].method == "ilp-neighbourhood"
    with slowed_clock(10.0):
        slow = _plan_without_warnings(d, time_limit=3000)
    assert slow.to_json() == normal.to_json()


def test_a_safety_net_that_fires_is_a_warning_and_a_status():
    d = two_stage()
    with slowed_clock(1e6), pytest.warns(PlanWarning, match="safety net"):
        p = tl.plan(d, time_limit=60)
    check_plan(p)  # still a legal plan: the greedy/first-fit/negotiated answers stand in
    limited = {k for k, s in p.solves.items() if s.status == "time-limited"}
    assert "placement" in limited
    assert "safety net fired" in p.solves["placement"].message
    assert "safety net fired" in p.report()


def test_a_crashing_solver_is_an_error_not_a_time_limit(monkeypatch):
    def crash(*args, **kwargs):
        raise RuntimeError("the solver binary crashed")

    # the solve runs in a forked child, which sees the patched function
    monkeypatch.setattr(solve, "solve_in_process", crash)
    with pytest.warns(PlanWarning, match="failed .*the solver binary crashed"):
        p = tl.plan(tl.library.matmul(256, 256, 256, cores=(2, 4)), time_limit=60)
    check_plan(p)
    info = p.solves["placement"]
    assert info.status == "error" and "RuntimeError: the solver binary crashed" in info.message
    assert "placement (error): " in p.report() and "the solver binary crashed" in p.report()
    # and the message survives the plan's text and JSON forms
    assert tl.Plan.from_json(p.to_json()).solves["placement"].message == info.message
    assert tl.ir.parse(tl.ir.print(p)).solves["placement"].message == info.message


def test_an_ilp_placement_that_does_not_fit_falls_back_with_a_warning(monkeypatch):
    real = driver.check_tiles
    calls = []

    def first_fails(device, carriage, shared_at):
        calls.append(1)
        if len(calls) == 1:
            raise PlanError("tile (0,2) needs 70000 B of data memory, has 65536 B")
        return real(device, carriage, shared_at)

    monkeypatch.setattr(driver, "check_tiles", first_fails)
    with pytest.warns(PlanWarning, match=r"ILP placement does not fit \(tile \(0,2\) needs 70000 B"):
        p = tl.plan(two_stage(), time_limit=60)
    check_plan(p)
    info = p.solves["placement"]
    assert info.method == "ilp->greedy" and "greedy placement is used" in info.message
    assert "greedy placement is used" in p.report()


@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_a_node_limit_stops_a_solve_the_same_way_every_time(solver):
    import pulp

    def knapsack() -> pulp.LpProblem:
        # weights and values chosen so that the root LP is fractional and branching is needed
        prob = pulp.LpProblem("knap", pulp.LpMinimize)
        xs = [prob.add_variable(f"x{i}", 0, 1, cat="Binary") for i in range(40)]
        prob += -pulp.lpSum((37 * i % 23 + 5) * x for i, x in enumerate(xs))
        prob += pulp.lpSum((29 * i % 31 + 7) * x for i, x in enumerate(xs)) <= 301, "cap"
        return prob

    a = solve.solve_model(knapsack(), solver, 60, nodes=0)
    b = solve.solve_model(knapsack(), solver, 60, nodes=0)
    full = solve.solve_model(knapsack(), solver, 60)
    assert not a.clocked and a.status in ("feasible", "none", "optimal")
    assert (a.status, a.objective, a.values) == (b.status, b.objective, b.values)
    assert full.status == "optimal" and (a.objective is None or a.objective >= full.objective - 1e-6)
