"""The floor of a design (simulator.bound) and tl.explore's bounded sweep (strategy="bound").

The bound is checked against the simulator's own runs (no run may end before it), and the bounded sweep's best
against the brute-force best of every point of the space, each evaluated as a trial evaluates it.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

import tilelang as tl
from simulator.bound import floor, lower_bound
from tilelang.explore.evaluate import evaluate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import designs  # noqa: E402


def _designs():
    return [
        ("vector_scalar_mul", lambda: designs.vector_scalar_mul()),
        ("gemm_single_core", lambda: designs.gemm_single_core()),
        ("broadcast_scale xcvc1902", lambda: designs.broadcast_scale()),
        ("chains xcvc1902", lambda: designs.chains()),
        ("matmul 256^3 bf16 whole array", lambda: tl.library.matmul(256, 256, 256, in_dtype=tl.bf16)),
        ("matmul i16 npu2", lambda: tl.library.matmul(128, 128, 128, in_dtype=tl.i16, out_dtype=tl.i32,
                                                      device="npu2")),
        ("cascade matmul xcvc1902", lambda: tl.library.matmul(64, 64, 64, in_dtype=tl.i16, out_dtype=tl.i32,
                                                              device="xcvc1902", layout="streams", cascade=4,
                                                              cores=(1, 1))),
        ("plio matmul xcvc1902", lambda: tl.library.matmul(64, 64, 64, in_dtype=tl.i16, out_dtype=tl.i32,
                                                           device="xcvc1902", layout="streams", cascade=4,
                                                           cores=(1, 1), plio=True)),
        ("softmax", lambda: tl.library.softmax(256, 256)),
        ("conv2d", lambda: tl.library.conv2d(16, 16, 8, 8)),
        ("matvec", lambda: tl.library.matvec(256, 256)),
        ("elementwise add", lambda: tl.library.elementwise("add", 4096)),
        ("reduction max, 4 cores", lambda: tl.library.reduction("max", 4096, cores=4)),
    ]


#: Designs the placement ILP plans in about a second.
QUICK_ILP = {"vector_scalar_mul", "gemm_single_core", "matmul 256^3 bf16 whole array", "softmax", "elementwise add"}


@pytest.mark.parametrize("name,make", _designs(), ids=[n for n, _ in _designs()])
def test_no_simulation_ends_before_the_bound(name: str, make) -> None:  # noqa: ANN001 - a thunk
    d = make()
    f = floor(d)
    bound = lower_bound(d)
    assert bound == f.cycles == max(f.terms.values())
    # every design calls kernels, moves host data and streams into its cores; all but the PLIO one use DDR
    assert f.terms["calls"] > 0 and f.terms["host fifo"] > 0 and f.terms["stream"] > 0, name
    assert (f.terms["ddr"] == 0) == ("plio" in name), name
    # the bound takes no plan: two planners' plans of the same design (the ILP's only where it is quick)
    for strategy in ("greedy", "ilp") if name in QUICK_ILP else ("greedy",):
        cycles = tl.simulate(tl.plan(d, strategy=strategy), mode="timing").cycles
        assert bound <= cycles, (name, strategy, bound, cycles)


def _space() -> tl.Space:
    # 18 points of a small GEMM (the 1x1 and 2x2 grids far slower than the 4x4 ones, some tiles too large)
    return tl.Space(tl.library.matmul,
                    fixed={"M": 128, "K": 128, "N": 128, "in_dtype": tl.bf16, "device": "npu1",
                           "plan": {"strategy": "greedy"}},
                    params={"tiling.m": [16, 32, 128], "tiling.k": [32], "tiling.n": [16, 32],
                            "cores": [(1, 1), (2, 2), (4, 4)]})


@pytest.fixture(scope="module")
def brute_force() -> dict:
    """Every point of the space evaluated as a trial evaluates it: the key's cycles (None: not ok)."""
    sp = _space()
    out = {}
    for k in sp.keys():
        kwargs, plan = sp.arguments(k)
        r = evaluate(sp.factory, kwargs, plan)
        out[k] = r["metrics"]["cycles"] if r["status"] == "ok" else None
    return out


@pytest.fixture(scope="module")
def swept() -> tl.Exploration:
    sp = _space()
    return tl.explore(sp, budget=len(sp), strategy="bound", workers=2)


def test_bounded_sweep_finds_the_brute_force_optimum_with_fewer_evaluations(brute_force: dict,
                                                                            swept: tl.Exploration) -> None:
    optimum = min(c for c in brute_force.values() if c is not None)
    assert swept.best is not None and swept.best.cycles == optimum
    assert swept.proven is True
    assert swept.strategy == "bound"
    assert len(swept.trials) + len(swept.skipped) == len(brute_force)
    assert len(swept.trials) < len(brute_force)  # the bound skipped points
    sp = _space()
    by_params = {json.dumps(sp.point(k), default=str, sort_keys=True): c for k, c in brute_force.items()}
    for s in swept.skipped:
        # a skipped point could not have beaten the best: its bound is at least the optimum and at most its
        # own simulated cycles
        assert s["bound"] >= optimum
        c = by_params[json.dumps(s["params"], default=str, sort_keys=True)]
        assert c is None or s["bound"] <= c
    for t in swept.trials:  # the evaluated points give what the brute force gave
        assert t.cycles == by_params[json.dumps(t.params, default=str, sort_keys=True)]
    assert "the best is the space's optimum" in swept.table()
    assert swept.floor_timeouts == 0 and "time limit stopped" not in swept.table()


def test_bounded_sweep_is_deterministic_over_workers(swept: tl.Exploration) -> None:
    sp = _space()
    again = tl.explore(sp, budget=len(sp), strategy="bound", workers=1)
    assert [(t.params, t.status, t.cycles) for t in again.trials] == \
           [(t.params, t.status, t.cycles) for t in swept.trials]
    assert again.skipped == swept.skipped


def test_a_budget_short_of_the_sweep_is_not_proven(swept: tl.Exploration) -> None:
    sp = _space()
    short = tl.explore(sp, budget=2, strategy="bound", workers=2)
    assert len(short.trials) == 2 and short.proven is False
    assert [t.params for t in short.trials] == [t.params for t in swept.trials[:2]]
    assert "not proven" in short.table()


def test_json_keeps_the_sweep(swept: tl.Exploration) -> None:
    back = tl.Exploration.from_json(swept.to_json())
    assert back.strategy == "bound" and back.proven is True
    assert [s["bound"] for s in back.skipped] == [s["bound"] for s in swept.skipped]


def test_resumed_bounded_sweep_ends_at_the_same_optimum(tmp_path: Path, swept: tl.Exploration) -> None:
    sp = _space()
    db = tmp_path / "study.db"
    first = tl.explore(sp, budget=3, strategy="bound", storage=str(db), workers=2)
    assert len(first.trials) == 3
    rest = tl.explore(sp, budget=len(sp), strategy="bound", storage=str(db), workers=2)
    assert rest.proven is True and rest.best.cycles == swept.best.cycles
    assert [t.params for t in rest.trials[:3]] == [t.params for t in first.trials]


def _factory(n: int, device: str = "npu1") -> object:
    if n == 3:
        raise ValueError("three is not allowed")
    return tl.library.elementwise("add", 1024 * n, device=device)


def test_a_factory_that_fails_is_a_trial_not_a_crash() -> None:
    sp = tl.Space(_factory, params={"n": [1, 2, 3]}, fixed={"plan": {"strategy": "greedy"}})
    ex = tl.explore(sp, budget=3, strategy="bound", workers=1)
    bad = [t for t in ex.trials if t.params["n"] == 3]
    assert len(bad) == 1 and bad[0].status == "design_error" and "three is not allowed" in bad[0].error
    assert ex.best is not None and ex.best.params["n"] == 1
    assert ex.proven is True


@pytest.mark.parametrize("kwargs,words", [
    ({"strategy": "exhaustive"}, "strategy must be one of"),
    ({"strategy": "bound", "objective": "cores"}, "bounds cycles only"),
])
def test_bad_strategy_arguments_are_named(kwargs: dict, words: str) -> None:
    with pytest.raises(tl.TileLangError, match=words):
        tl.explore(_space(), budget=2, **kwargs)


def test_skipped_bounds_are_finite_ints(swept: tl.Exploration) -> None:
    assert all(isinstance(s["bound"], int) and math.isfinite(s["bound"]) for s in swept.skipped)


def test_cli_bounded_sweep(tmp_path: Path, capsys) -> None:  # noqa: ANN001 - pytest's fixture
    from tilelang.cli import main as cli_main

    code = cli_main(["explore", "library:matmul", "--fixed", "M=64", "--fixed", "K=64", "--fixed", "N=64",
                     "--fixed", "in_dtype=bf16", "--fixed", "plan.strategy=greedy", "--param", "tiling.m=16,32",
                     "--param", "tiling.k=32", "--param", "tiling.n=32", "--param", "cores=1x1,2x2",
                     "--budget", "4", "--strategy", "bound", "--workers", "2", "--out", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    record = json.loads(out)
    assert record["strategy"] == "bound" and record["proven"] is True
    assert len(record["trials"]) + len(record["skipped"]) == 4
    code = cli_main(["explore", "library:matmul", "--fixed", "M=64", "--fixed", "K=64", "--fixed", "N=64",
                     "--fixed", "in_dtype=bf16", "--fixed", "plan.strategy=greedy", "--param", "tiling.m=16,32",
                     "--param", "tiling.k=32", "--param", "tiling.n=32", "--param", "cores=1x1,2x2",
                     "--budget", "4", "--strategy", "bound", "--front", "cores", "--workers", "2",
                     "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "the front of cycles and cores is the space's" in out
    assert out.count("front: trial") >= 1


def test_explain_shows_the_run_against_its_floor() -> None:
    d = designs.gemm_single_core()
    res = tl.simulate(tl.plan(d, strategy="greedy"), mode="timing")
    ex = res.explain()
    f = floor(d)
    assert ex.floor == f.cycles and ex.floor_cause == f.cause and 0 < ex.floor <= ex.cycles
    assert f"floor: {f.cycles} cycles ({f.cause})" in ex.text()


def test_simulate_json_carries_the_floor(capsys) -> None:  # noqa: ANN001 - pytest's fixture
    from tilelang.cli import main as cli_main

    assert cli_main(["simulate", str(Path(__file__).resolve().parents[1] / "examples" / "vmul.py"), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert 0 < record["explain"]["floor"] <= record["cycles"] and "host transfers" in record["explain"]["floor_cause"]


def _slow_factory(n: int, device: str = "npu1") -> object:
    if n == 2:
        import time

        time.sleep(60)
    return tl.library.elementwise("add", 1024 * n, device=device)


def test_a_factory_that_hangs_is_stopped_by_the_time_limit() -> None:
    sp = tl.Space(_slow_factory, params={"n": [1, 2]}, fixed={"plan": {"strategy": "greedy"}})
    ex = tl.explore(sp, budget=2, strategy="bound", workers=2, time_limit=3)
    hung = [t for t in ex.trials if t.params["n"] == 2]
    # its floor timed out (no floor: the point is evaluated), then its evaluation did
    assert len(hung) == 1 and hung[0].status == "timeout"
    assert ex.best is not None and ex.best.params["n"] == 1
    assert ex.proven is False  # a point stopped by the time limit proves nothing
    assert ex.floor_timeouts == 1 and "the time limit stopped 1 floor computations" in ex.table()
    assert tl.Exploration.from_json(ex.to_json()).floor_timeouts == 1


def _front(values: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The non-dominated (cycles, cores) pairs of ``values``, by brute force."""
    return sorted({v for v in values if not any(w[0] <= v[0] and w[1] <= v[1] and w != v for w in values)})


def test_bounded_sweep_proves_the_brute_force_front_of_cycles_and_cores(brute_force: dict) -> None:
    sp = _space()
    cores = {k: math.prod(sp.point(k)["cores"]) for k in sp.keys()}
    truth = _front([(c, cores[k]) for k, c in brute_force.items() if c is not None])
    assert len(truth) >= 2  # the space trades cores for cycles: more than one point is on its front
    ex = tl.explore(sp, budget=len(sp), strategy="bound", front="cores", workers=2)
    assert ex.proven is True and ex.front == "cores"
    assert sorted({(t.cycles, t.metrics["cores"]) for t in ex.pareto(["cycles", "cores"])}) == truth
    assert len(ex.trials) + len(ex.skipped) == len(sp)
    assert len(ex.trials) < len(sp)  # points were skipped
    by_params = {json.dumps(sp.point(k), default=str, sort_keys=True): k for k in sp.keys()}
    for s in ex.skipped:
        # a skipped point is no better than some evaluated one with no more cores: its true cycles are at
        # least its bound, which is at least that trial's cycles
        k = by_params[json.dumps(s["params"], default=str, sort_keys=True)]
        assert s["cores"] == cores[k]
        assert brute_force[k] is None or s["bound"] <= brute_force[k]
        assert any(t.ok and t.metrics["cores"] <= s["cores"] and t.cycles <= s["bound"] for t in ex.trials)
    assert "the front of cycles and cores is the space's" in ex.table()
    back = tl.Exploration.from_json(ex.to_json())
    assert back.front == "cores" and [s["cores"] for s in back.skipped] == [s["cores"] for s in ex.skipped]


def test_a_front_needs_the_bounded_sweep_and_a_known_metric() -> None:
    sp = _space()
    with pytest.raises(tl.TileLangError, match='needs strategy="bound"'):
        tl.explore(sp, budget=2, front="cores")
    with pytest.raises(tl.TileLangError, match="front must be one of"):
        tl.explore(sp, budget=2, strategy="bound", front="onchip_bytes")
