"""Tests of the deadline-bounded solving (tilelang/plan/solve.py) and the exact Steiner trees."""

from __future__ import annotations

import time

import pulp
import pytest

import tilelang as tl
from tilelang.errors import PlanError
from tilelang.plan.fabric import fabric, prune_tree, steiner_tree, tree_reaches
from tilelang.plan.solve import run_with_deadline, solve_model
from tilelang.plan.steiner import steiner_exact, steiner_lower_bound


def _sleeper(report, steps):
    for i in range(steps):
        report(i)
        time.sleep(0.05)
    time.sleep(60)
    return "never"


def _raiser(report):
    raise PlanError("tile (1,2) ran out")


def _crasher(report):
    raise ZeroDivisionError("boom")


def test_a_job_past_its_deadline_is_killed_keeping_its_last_report():
    start = time.monotonic()
    out = run_with_deadline(_sleeper, (3,), 0.8)
    assert time.monotonic() - start < 3.0
    assert out.status == "timeout" and out.result == 2


def _file_writer(report):
    # what a CBC solve leaves while it runs: PuLP's model and solution files and the log
    import tempfile

    cmd = pulp.PULP_CBC_CMD(msg=False)
    for path in cmd.create_tmp_files("model", "mps", "sol"):
        open(path, "w").write("*")
    tempfile.NamedTemporaryFile("w", suffix=".log", delete=False).write("log")
    report("written")
    time.sleep(60)


@pytest.fixture
def own_tmp(tmp_path, monkeypatch):
    """A temporary directory of the test's own, as Python's and PuLP's temporary files find it."""
    import tempfile

    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setenv("TMPDIR", str(root))
    monkeypatch.setenv("TMP", str(root))
    return root


def test_a_killed_solve_leaves_no_file_behind(own_tmp):
    # A child killed at its deadline never returns to PuLP's clean-up: before, each such solve left its
    # .mps/.mst/.sol files and its CBC log in the temporary directory (hundreds of MB over a day of plans).
    out = run_with_deadline(_file_writer, (), 1.5)
    assert out.status == "timeout" and out.result == "written"
    assert list(own_tmp.iterdir()) == []


def test_a_plan_whose_solver_hits_its_safety_net_leaves_no_file_behind(own_tmp):
    # a machine 400 times slower: the placement ILP of a 16-core GEMM meets its net (0.15 s of wall time)
    from tilelang.plan.solve import slowed_clock

    d = tl.library.matmul(1024, 1024, 1024, in_dtype=tl.bf16, device="npu1", tiling={"m": 32, "k": 32, "n": 32})
    with slowed_clock(400), pytest.warns(tl.PlanWarning, match="safety net"):
        tl.plan(d)
    assert list(own_tmp.iterdir()) == []


def test_plan_errors_cross_the_process_boundary():
    with pytest.raises(PlanError, match=r"tile \(1,2\) ran out"):
        run_with_deadline(_raiser, (), 5)


def test_other_failures_are_reported_not_raised():
    out = run_with_deadline(_crasher, (), 5)
    assert out.status == "error" and "ZeroDivisionError: boom" in out.message


@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_solve_model_optimal_with_bound_and_duals(solver):
    prob = pulp.LpProblem("k", pulp.LpMinimize)
    x = prob.add_variable("x", 0, 10, cat="Integer")
    y = prob.add_variable("y", 0, 10, cat="Integer")
    prob += 3 * x + 2 * y
    prob += x + y >= 3.5, "cover"
    sol = solve_model(prob, solver, 10)
    assert sol.status == "optimal" and sol.objective == pytest.approx(8.0) and sol.gap == 0.0
    assert sol.values["y"] == pytest.approx(4.0)
    lp = solve_model(prob, solver, 10, mip=False)
    assert lp.objective == pytest.approx(7.0)
    assert lp.duals["cover"] == pytest.approx(2.0)


def test_infeasible_model():
    prob = pulp.LpProblem("k", pulp.LpMinimize)
    x = prob.add_variable("x", 0, 1, cat="Binary")
    prob += x
    prob += x >= 2, "impossible"
    assert solve_model(prob, "cbc", 10).status == "infeasible"


def test_exact_steiner_beats_or_matches_the_heuristic_and_is_a_tree():
    fab = fabric(tl.device("npu2"))
    unit = [1.0] * len(fab.links)
    cases = [((0, 2), [(7, 5), (7, 2), (3, 5)]), ((4, 1), [(0, 5), (7, 5), (4, 3), (2, 2)])]
    for src, dests in cases:
        exact, cost = steiner_exact(fab, src, dests, unit)
        heur = steiner_tree(fab, src, dests, unit)
        assert exact is not None and tree_reaches(fab, src, dests, exact)
        assert len(prune_tree(fab, src, dests, exact)) == cost <= len(heur)


def test_exact_steiner_on_a_known_instance():
    # a source under the middle of three cores on one row: 1 link up... then 1 west and 1 east
    fab = fabric(tl.device("npu1"))
    unit = [1.0] * len(fab.links)
    _, cost = steiner_exact(fab, (1, 2), [(0, 3), (1, 3), (2, 3)], unit)
    assert cost == 3.0


def test_dual_ascent_bounds_every_tree_from_below():
    # Wong's dual ascent against the exact (Dreyfus-Wagner) optimum, on random prices: never above
    # it, and never below the dearest shortest path the router used to bound broadcasts with.
    import random

    rng = random.Random(7)
    tight = total = 0
    for dev in ("npu1", "npu2", "xcvc1902"):
        fab = fabric(tl.device(dev))
        tiles = sorted(fab.out)
        for _ in range(40):
            cost = [rng.choice([1.0, 1.0, 1.25, 2.0, 3.5]) for _ in fab.links]
            src = rng.choice(tiles)
            dests = rng.sample([t for t in tiles if t != src], rng.randint(2, 5))
            _, exact = steiner_exact(fab, src, dests, cost)
            lb = steiner_lower_bound(fab, src, dests, cost)
            assert lb <= exact + 1e-9
            tight += lb >= exact - 1e-9
            total += 1
    assert tight >= total // 2  # a bound, and a useful one (315 of 450 exact on a larger draw)


def test_dual_ascent_pays_both_sides_of_a_row():
    # npu2: a memtile broadcast to the eight cores of row 2, entered at column 2: one link up, two
    # west and five east (8), where the farthest core alone is 1 + 5 = 6 links away.
    fab = fabric(tl.device("npu2"))
    unit = [1.0] * len(fab.links)
    dests = [(c, 2) for c in range(8)]
    assert steiner_lower_bound(fab, (2, 1), dests, unit) == 8.0
    assert steiner_exact(fab, (2, 1), dests[:6], unit)[1] == steiner_lower_bound(fab, (2, 1), dests[:6], unit) == 6.0
    assert steiner_lower_bound(fab, (2, 1), dests, unit, enough=3.0) >= 3.0  # stops once it has enough


def test_a_destination_no_finite_link_enters_has_no_finite_bound():
    fab = fabric(tl.device("npu1"))
    cost = [float("inf") if b == (3, 4) else 1.0 for _, b in fab.links]
    assert steiner_lower_bound(fab, (0, 1), [(1, 2), (3, 4)], cost) == float("inf")
    assert steiner_lower_bound(fab, (0, 1), [(1, 2)], cost) == 2.0


def _plan_json(_: int) -> str:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from local_buffers import kernel_pipeline

    return tl.plan(kernel_pipeline(n=4096, tile=512)).to_json()


def test_planning_inside_a_pool_worker():
    """A multiprocessing.Pool worker is a daemonic process, and Process.start refuses to make children there.
    The solvers' children are made anyway (each is killed before its solve returns): the default plan of a
    design with local buffers (the packing MIP, the placement ILP) made in a worker is the one made here.
    Before, it was a raw AssertionError ("daemonic processes are not allowed to have children")."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        (inside,) = pool.map(_plan_json, [0])
    assert inside == _plan_json(0)


def test_a_solver_child_whose_parent_is_killed_ends_too(tmp_path):
    # tl.explore kills a timed-out evaluation's process group; the solver child leads its own group, so
    # that kill misses it: it must notice its parent is gone and end itself (and its solver binary).
    import os
    import signal
    import subprocess
    import sys

    pid_file = tmp_path / "child.pid"
    scratch = tmp_path / "tmp"  # the temporary directory of the killed parent and its child
    scratch.mkdir()
    script = f"""
import os, tempfile, time
from tilelang.plan.solve import run_with_deadline
def job(report):
    tempfile.NamedTemporaryFile("w", suffix=".mps", delete=False).write("*")
    open({str(pid_file)!r}, "w").write(str(os.getpid()))
    time.sleep(120)
run_with_deadline(job, (), 200)
"""
    parent = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(scratch)})
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the solver child never started"
            time.sleep(0.05)
        child = int(pid_file.read_text())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while True:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break  # gone
            # a zombie of init's counts as gone: it runs nothing
            with open(f"/proc/{child}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    break
            assert time.monotonic() < deadline, "the orphaned solver child is still running"
            time.sleep(0.1)
        # and it removed its scratch directory (its files among them) before it ended
        assert list(scratch.iterdir()) == []
    finally:
        parent.kill()
