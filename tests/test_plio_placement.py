"""The placement ILP and PL shims: host ends kept within each shim's links to the array (docs/plio.md
"Placing the PL shim ends").

The shim switch's port counts are the published ones (AIE_FACTS "Stream switch": a shim sends 6 streams
north and takes 4 from the north; a VC1902 PL shim takes 8 PLIO streams in and sends 6 out, UG1079),
restated here rather than read from tilelang's device data.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np

import tilelang as tl

DEV = "xcvc1902"
N = 64
ROWS = 8  # cores stacked in one column: more than a shim's 6 north channels

model = importlib.import_module("tilelang.plan.placement_model")


@tl.kernel
def triple(a: tl.Tile[(N,), tl.i32], c: tl.Tile[(N,), tl.i32]):
    c[...] = a * 3


def _column_design(free: int = 0):
    """ROWS cores pinned in column 0 (all but the first ``free``, which the placement places), each with its own
    PLIO stream in and out: by distance alone every host end wants the PL shim (0,0) below them."""

    def body(X: tl.Tensor[(ROWS * N,), tl.i32], C: tl.Tensor[(ROWS * N,), tl.i32]):
        for i in range(ROWS):
            a = tl.fifo(tl.Tile[(N,), tl.i32], name=f"a{i}")
            c = tl.fifo(tl.Tile[(N,), tl.i32], name=f"c{i}")

            def core(a=a, c=c):
                x, y = a.acquire(), c.acquire()
                triple(x, y)
                a.release()
                c.release()

            tl.core(name=f"w{i}", tile=None if i < free else (0, i + 1))(core)
            part = tl.pattern(offset=i * N, sizes=[N], strides=[1])
            tl.dma(X, a, pattern=part, plio=True)
            tl.dma(c, C, pattern=part, plio=True)

    return tl.design(device=DEV)(body)


def _ends_per_shim(plan):
    count: dict = {}
    for fp in plan.fifos.values():
        for end in (fp.producer, *fp.consumers):
            if end.agent == "host":
                key = (tuple(end.tile), "in" if end is fp.producer else "out")
                count[key] = count.get(key, 0) + 1
    return count


def test_array_channels_are_the_shim_switch_ports():
    dev = tl.device(DEV)
    for shim in ((0, 0), (2, 0), (49, 0)):  # a PL shim, a NoC shim, the last column
        assert model.array_channels(dev, shim, "mm2s") == 6
        assert model.array_channels(dev, shim, "s2mm") == 4


def test_ilp_keeps_host_ends_within_the_shim_links():
    """Unbounded, the model puts all 8 streams in (and 6 out) on shim (0,0); the lazy bound moves the
    surplus to the neighbours, and the plan routes and computes."""
    d = _column_design()
    with warnings.catch_warnings():
        warnings.simplefilter("error", tl.PlanWarning)
        p = tl.plan(d)
    assert p.solves["placement"].method == "ilp"
    count = _ends_per_shim(p)
    assert all(n <= (6 if way == "in" else 4) for (_, way), n in count.items()), count
    assert count[((0, 0), "in")] == 6 and count[((0, 0), "out")] == 4  # as many as the links carry stay below
    x = np.arange(ROWS * N, dtype=np.int32)
    np.testing.assert_array_equal(tl.simulate(p, X=x).outputs["C"], x * 3)


def test_without_the_bound_the_model_crowds_the_shim():
    """The same model without the bound (what the placement solved before it) crowds (0,0): the case the
    lazy bound exists for."""
    problem_mod = importlib.import_module("tilelang.plan.problem")
    greedy = importlib.import_module("tilelang.plan.greedy")
    solve = importlib.import_module("tilelang.plan.solve")
    problem = problem_mod.build_problem(_column_design(), ())
    m = model.build(problem, greedy.greedy_placement(problem))
    sol = solve.solve_model(m.prob, "cbc", 60, nodes=1000)
    assert sol.status == "optimal"
    placed = m.result(sol.values)
    assert model.crowded_shims(problem, placed)[:2] == [((0, 0), "mm2s", 8), ((0, 0), "s2mm", 6)]


def test_a_window_moves_its_own_host_ends_and_never_crowds_a_shim_more():
    """A neighbourhood window holds the host ends of fifos none of its cores touch, as it holds those cores;
    its own cores' ends stay free. Held ends that already overfill a shim's links (here 7 streams in where 6
    fit) are the start's doing: the window may not add to them, and the start stays a solution."""
    problem_mod = importlib.import_module("tilelang.plan.problem")
    carriage = importlib.import_module("tilelang.plan.carriage")
    solve = importlib.import_module("tilelang.plan.solve")

    problem = problem_mod.build_problem(_column_design(free=1), ())
    cores = {f"w{i}": (0, i + 1) for i in range(ROWS)}
    start = carriage.Placement(cores, {}, {f"{k}{i}": (0, 0) for i in range(ROWS) for k in "ac"})
    m = model.build(problem, start, frozenset({"w0"}), 3, links=True, hold_hosts=True)
    assert not m.fixed("host@a0") and not m.fixed("host@c0")
    assert all(m.fixed(f"host@{k}{i}") for i in range(1, ROWS) for k in "ac")
    assert all(c.valid(1e-6) for c in m.prob.constraints.values())  # the crowded start is a solution
    sol = solve.solve_model(m.prob, "cbc", 60, nodes=1000)
    assert sol.status == "optimal"
    placed = m.result(sol.values)
    assert all(placed.hosts[f"{k}{i}"] == (0, 0) for i in range(1, ROWS) for k in "ac")
    assert model.objective_of(problem, placed) <= model.objective_of(problem, start)
