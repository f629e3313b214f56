"""Placing the large PLIO-fed cascade GEMMs on the xcvc1902: the placement ILP against the greedy placement.

Run: ``.venv/bin/python benchmarks/plio_place_bench.py [--grids 8x8:512,10x8:640,12x8:768,10x10:640]
[--strategies ilp,greedy]``.

Each row plans ``tl.library.matmul(S, S, S, cascade=4, plio=True, cores=(R, Q))`` (R x Q chains of 4 cores)
with one strategy (``time_limit=TIME_LIMIT``; a safety net that fires is a PlanWarning, counted in the row),
then simulates the plan in timing mode. Printed: the planning seconds (whole plan, placement, routing), how
the placement was made (``solves["placement"]``: "ilp->greedy" is the greedy fallback), the PlanWarnings
raised, the placement objective (``placement_model.objective_of``: fifo bytes x route distance, the
quantity both placements are judged by), the routes' total links, and the simulated cycles.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tilelang as tl  # noqa: E402

DEV = "xcvc1902"
#: tl.plan's time_limit: its default. Every solve is bounded by work; a safety net that fires anyway (a machine
#: much slower than this one) is a PlanWarning, counted in the row.
TIME_LIMIT = 60


def _objective(design: object, plan: tl.Plan) -> float:
    """The placement objective of a plan's placement (the ILP's primary objective)."""
    model = importlib.import_module("tilelang.plan.placement_model")
    problem_mod = importlib.import_module("tilelang.plan.problem")
    carriage = importlib.import_module("tilelang.plan.carriage")
    problem = problem_mod.build_problem(design, ())
    hosts = {n: tuple(e.tile) for n, fp in plan.fifos.items() for e in (fp.producer, *fp.consumers)
             if e.agent == "host"}
    placement = carriage.Placement({c: tuple(t) for c, t in plan.placement.items()},
                                   {n: tuple(t) for n, t in plan.link_tiles.items()}, hosts)
    return model.objective_of(problem, placement)


def row(rows: int, cols: int, size: int, strategy: str) -> str:
    """One measured row as text."""
    d = tl.library.matmul(size, size, size, in_dtype=tl.i16, out_dtype=tl.i32, device=DEV, cores=(rows, cols),
                          layout="streams", cascade=4, plio=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", tl.PlanWarning)
        p = tl.plan(d, strategy=strategy, time_limit=TIME_LIMIT)
    seconds = time.perf_counter() - t0
    place = p.solves["placement"]
    res = tl.simulate(p, mode="timing")
    links = sum(len(r.links) for r in p.routes.values())
    return (f"{rows}x{cols}x4 {len(d.cores):>5} {size:>5} {strategy:<7} {seconds:>7.1f} {p.timings['placement']:>7.1f} "
            f"{p.timings['routing']:>7.1f}  {place.method + ' ' + place.status:<32} {len(caught):>4} "
            f"{_objective(d, p):>10.0f} {links:>6} {res.cycles:>8}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grids", default="8x8:512,10x8:640,12x8:768,10x10:640", help="RxQ:size, comma-separated")
    ap.add_argument("--strategies", default="greedy,ilp", help="comma-separated tl.plan strategies")
    args = ap.parse_args(argv)
    print(f"{'grid':<7} {'cores':>5} {'size':>5} {'plan':<7} {'s':>7} {'place s':>7} {'route s':>7}  "
          f"{'placement (method, status)':<32} {'warn':>4} {'objective':>10} {'links':>6} {'cycles':>8}")
    for spec in (x for x in args.grids.split(",") if x):
        grid, size = spec.split(":")
        rows, cols = (int(v) for v in grid.split("x"))
        for strategy in (x for x in args.strategies.split(",") if x):
            try:
                print(row(rows, cols, int(size), strategy), flush=True)
            except tl.TileLangError as e:
                print(f"{grid}x4 {strategy}: {type(e).__name__}: {str(e)[:150]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
