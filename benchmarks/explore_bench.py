"""``tl.explore`` against an exhaustive sweep and random sampling, and transfer from npu1 to npu2.

The space: ``tl.library.matmul(1024, 1024, 1024, bf16 -> f32, npu1)`` with the kernel tile m, k, n each in
{16, 32, 64, 128} and every core grid (rows x cols) dividing the 4 x 4 array: 576 points, the infeasible
ones included (tiles that do not fit a core's memory; the factory has no C-depth argument: it double-
buffers C when that fits). Plans are greedy (``plan={"strategy": "greedy"}``): the ILP planner takes
5-12 s per point here, which would make the sweep hours long.

1. The exhaustive sweep evaluates every point exactly as a trial does (factory, plan, timing simulation).
   It takes long on a 2-core machine, so it runs once (``--sweep``) and its results are cached in
   ``benchmarks/explore_sweep_matmul1024_npu1.json`` with the command that made them; later runs read
   the cache (``--sweep`` again re-runs the missing points only, or all of them when the commit changed).
   The cache records the commit it ran at: evaluations of later code may differ (``--live`` shows it).
2. ``tl.explore`` with a budget of 10% of the space (57 points), for seeds 0-4. Its evaluations are
   served from the sweep's records (a ``backend`` object whose ``map`` looks the point up): the search
   sees exactly what simulating would give (evaluation is deterministic), at no simulation cost.
   ``--live`` also runs seed 0 with real simulations and checks the trials match.
3. The same search without the prior (``prior=False``: TPE alone), and random sampling of the same
   number of distinct points, for the same seeds.

4. The same on the GEMM space at 1024^3 on npu2 (npu2's 4 x 8 array: 12 grids, 768 points), at 512^3 on
   npu1 and npu2, and on a second space, ``tl.library.softmax`` 1024 x 512 (rows per call 1-16, fifo depth 1-4, bf16 or f32, every
   grid: 360 points on npu1, 480 on npu2; softmax's prior is tilelang.explore.prior.softmax_estimate).
   These sweeps ran in a clean checkout of the commit their cache records (``git worktree add --detach``),
   so each is of one version of the code.
5. Transfer (item 5): the npu2 search with and without ``warm_start=[the npu1 search of the same seed]``,
   counting the trials to reach within 2% of the npu2 optimum.
6. The bounded sweep (``strategy="bound"``, budget the whole space) per space: the evaluations it needs
   (served from the sweep's records) against the exhaustive sweep's, how many of them got past the factory
   (``planned``: the others are points whose design fails, a factory call each), whether its best is the sweep's
   optimum and it says so (``proven``), the minutes of evaluation its trials took when swept (``eval min``,
   from the records) against the whole sweep's (``all min``), the seconds its bounds took (computed live:
   each a factory call, in ``--workers`` child processes), and the skipped points whose recorded cycles are
   below their bound (a bound that is not one; must be 0).
7. The same with ``front="cores"``: the sweep proves the Pareto front of cycles and cores. ``front`` is the
   exhaustive sweep's front (its size), ``= sweep front`` whether the bounded sweep's front is the same pairs,
   ``lost`` the skipped points whose recorded pair is on that front and on no trial (must be 0).

Prints per space the table: best cycles found, the gap to the sweep's optimum, seeds within 2%, simulations
used; then the transfer tables. Spaces whose sweep is not cached are skipped with a note.
``--throughput`` adds trials per minute of the local and Ray backends on a small space (256^3).
Run: ``.venv/bin/python benchmarks/explore_bench.py [--sweep [SPACE ...]] [--workers 1] [--live] [--throughput]``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tilelang as tl  # noqa: E402
from tilelang.explore.evaluate import run_children  # noqa: E402

SIZES = (16, 32, 64, 128)
SEEDS = (0, 1, 2, 3, 4)
SHARE = 0.10


def grids(device: str) -> list[tuple[int, int]]:
    """Every core grid (rows x cols) dividing the device's array of compute tiles."""
    rows, cols = {"npu1": (4, 4), "npu2": (4, 8)}[device]
    return [(r, c) for r in (1, 2, 4) if rows % r == 0 for c in (1, 2, 4, 8) if cols % c == 0]


GRIDS = grids("npu1")


def space(n: int = 1024, device: str = "npu1") -> tl.Space:
    return tl.Space(
        tl.library.matmul,
        fixed={"M": n, "K": n, "N": n, "in_dtype": tl.bf16, "device": device, "plan": {"strategy": "greedy"}},
        params={"tiling.m": list(SIZES), "tiling.k": list(SIZES), "tiling.n": list(SIZES), "cores": grids(device)},
    )


def softmax_space(device: str = "npu1") -> tl.Space:
    return tl.Space(
        tl.library.softmax,
        fixed={"rows": 1024, "cols": 512, "device": device, "plan": {"strategy": "greedy"}},
        params={"rows_per_tile": [1, 2, 4, 8, 16], "depth": [1, 2, 3, 4], "dtype": [tl.bf16, tl.f32],
                "cores": grids(device)},
    )


def task_id(kwargs: dict[str, Any]) -> str:
    """The cache's name of a point: its tile and grid (matmul), or its explored arguments (softmax)."""
    r, c = kwargs["cores"]
    if "tiling" in kwargs:
        t = kwargs["tiling"]
        return f"m{t['m']}k{t['k']}n{t['n']}-{r}x{c}"
    return f"r{kwargs['rows_per_tile']}d{kwargs['depth']}{kwargs['dtype']}-{r}x{c}"


class Bench:
    """One benchmarked space: how to build it, its title and the file caching its exhaustive sweep."""

    def __init__(self, name: str, build: Any, title: str) -> None:
        self.name = name
        self.build = build
        self.title = title
        self.cache = ROOT / "benchmarks" / f"explore_sweep_{name}.json"


BENCHES = {
    "matmul1024_npu1": Bench("matmul1024_npu1", lambda: space(1024, "npu1"),
                             "tl.library.matmul 1024^3 bf16->f32 on npu1, tiles m,k,n in {SIZES}, grids {GRIDS}"),
    "matmul1024_npu2": Bench("matmul1024_npu2", lambda: space(1024, "npu2"),
                             "tl.library.matmul 1024^3 bf16->f32 on npu2, tiles m,k,n in {SIZES}, grids {GRIDS2}"),
    "matmul512_npu1": Bench("matmul512_npu1", lambda: space(512, "npu1"),
                            "tl.library.matmul 512^3 bf16->f32 on npu1, tiles m,k,n in {SIZES}, grids {GRIDS}"),
    "matmul512_npu2": Bench("matmul512_npu2", lambda: space(512, "npu2"),
                            "tl.library.matmul 512^3 bf16->f32 on npu2, tiles m,k,n in {SIZES}, grids {GRIDS2}"),
    "softmax1024x512_npu1": Bench("softmax1024x512_npu1", lambda: softmax_space("npu1"),
                                  "tl.library.softmax 1024x512 on npu1, rows per tile, depth, dtype, grids"),
    "softmax1024x512_npu2": Bench("softmax1024x512_npu2", lambda: softmax_space("npu2"),
                                  "tl.library.softmax 1024x512 on npu2, rows per tile, depth, dtype, grids"),
}
CACHE = BENCHES["matmul1024_npu1"].cache


def load_cache(path: Path = CACHE) -> dict[str, Any]:
    if path.is_file():
        return json.loads(path.read_text())
    return {"command": "", "results": {}}


def sweep(bench: Bench, workers: int, time_limit: float) -> dict[str, Any]:
    """Evaluate every point of ``bench``'s space not yet cached (saving after each batch); return the cache."""
    sp, path = bench.build(), bench.cache
    cache = load_cache(path)
    if cache["results"] and cache.get("code") != _code_version():
        print(f"sweep: the cache was made at {cache.get('code')}; starting over at {_code_version()}", file=sys.stderr)
        cache["results"] = {}
    cache["command"] = f".venv/bin/python benchmarks/explore_bench.py --sweep {bench.name} --workers {workers}"
    cache["code"] = _code_version()
    todo = [k for k in sp.keys() if not _recorded(cache["results"].get(task_id(sp.arguments(k)[0])))]
    print(f"sweep {bench.name}: {len(todo)} of {len(sp)} points to evaluate", file=sys.stderr)
    t0 = time.perf_counter()
    for at in range(0, len(todo), max(1, workers) * 2):
        keys = todo[at: at + max(1, workers) * 2]
        tasks = [(sp.factory, *sp.arguments(k)) for k in keys]
        for (_, kw, _), res in zip(tasks, run_children(tasks, workers, time_limit), strict=True):
            cache["results"][task_id(kw)] = res
        path.write_text(json.dumps(cache, indent=0, sort_keys=True))
        done = at + len(keys)
        print(f"  {done}/{len(todo)} in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return cache


def _recorded(result: dict[str, Any] | None) -> bool:
    """Whether a point's record is its outcome: a failure to import tilelang (the checkout was broken
    while the sweep ran) says nothing about the point, so the point is evaluated again."""
    if result is None:
        return False
    return not (result["status"] == "sim_error" and (result["error"] or "").startswith(("ImportError",
                                                                                         "ModuleNotFoundError")))


def _code_version() -> str:
    """The commit the sweep ran at (and whether the working tree had changes beyond it)."""
    import subprocess

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "tilelang", "simulator")
    return git("rev-parse", "--short", "HEAD") + (" with local changes" if dirty else "")


class Replay:
    """A backend serving evaluations from the sweep's records (what simulating the point gives)."""

    def __init__(self, results: dict[str, Any]) -> None:
        self.results = results
        self.calls = 0

    def map(self, tasks: list) -> list[dict]:
        self.calls += len(tasks)
        return [json.loads(json.dumps(self.results[task_id(kw)])) for _, kw, _ in tasks]


def best_of(results: list[dict]) -> float:
    ok = [r["metrics"]["cycles"] for r in results if r["status"] == "ok"]
    return min(ok) if ok else math.inf


def prior_quality(sp: tl.Space, results: dict[str, Any]) -> str:
    """How the analytic prior ranks the points against the simulator (Spearman correlation)."""
    from tilelang.explore.prior import prior_for

    estimate = prior_for(sp.factory)
    est, sim, infeasible_estimated, ok_unestimated = [], [], 0, 0
    for k in sp.keys():
        kw = sp.arguments(k)[0]
        e, r = estimate(kw), results[task_id(kw)]
        if r["status"] == "ok" and e is not None:
            est.append(e)
            sim.append(r["metrics"]["cycles"])
        infeasible_estimated += r["status"] != "ok" and e is not None
        ok_unestimated += r["status"] == "ok" and e is None
    rho = np.corrcoef(np.argsort(np.argsort(est)), np.argsort(np.argsort(sim)))[0, 1]
    return (f"prior: Spearman rank correlation {rho:.3f} with simulated cycles over {len(est)} feasible points; "
            f"{infeasible_estimated} infeasible points estimated, {ok_unestimated} feasible points not")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", nargs="*", choices=sorted(BENCHES), default=None, metavar="SPACE",
                    help=f"evaluate the points missing from these spaces' caches (none named: all): {sorted(BENCHES)}")
    ap.add_argument("--workers", type=int, default=1, help="sweep processes")
    ap.add_argument("--time-limit", type=float, default=900.0, help="seconds per sweep point (a safety net)")
    ap.add_argument("--live", action="store_true", help="also run seed 0 with real simulations and compare")
    ap.add_argument("--throughput", action="store_true", help="trials per minute, local and Ray, on 256^3")
    args = ap.parse_args(argv)
    if args.sweep is not None:
        for name in args.sweep or sorted(BENCHES):
            sweep(BENCHES[name], args.workers, args.time_limit)
    swept = {}
    for name, bench in BENCHES.items():
        results = complete(bench)
        if results is None:
            continue
        swept[name] = results
        compare(bench, results)
    for source, target in (("matmul1024_npu1", "matmul1024_npu2"), ("matmul512_npu1", "matmul512_npu2"),
                           ("softmax1024x512_npu1", "softmax1024x512_npu2")):
        if source in swept and target in swept:
            transfer(BENCHES[source], swept[source], BENCHES[target], swept[target])
    common = f"{'space':<22} {'points':>6} {'evaluations':>11} {'planned':>7} {'skipped':>7}"
    for title, columns, row in (
            ("the bounded sweep (strategy=\"bound\", budget: the whole space) against the exhaustive sweep",
             f"{'best':>11} {'optimum':>8} {'proven':>6} {'eval min':>7} {'all min':>7} {'bound s':>8} "
             f"{'bound > cycles':>7}", bounded),
            ("the bounded sweep of the front of cycles and cores (front=\"cores\") against the exhaustive sweep's "
             "front", f"{'front':>5} {'= sweep front':>13} {'proven':>6} {'eval min':>7} {'all min':>7} "
             f"{'bound s':>8} {'lost':>5}", bounded_front)):
        print(title)
        print(f"{common} {columns}")
        for name, results in swept.items():
            print(row(BENCHES[name], results, args.workers), flush=True)
        print()
    if "matmul1024_npu1" not in swept:
        return 1
    if args.live:
        sp, results = space(), swept["matmul1024_npu1"]
        budget = int(len(sp) * SHARE)
        live = tl.explore(sp, budget=budget, seed=0, workers=args.workers, time_limit=args.time_limit)
        replay = tl.explore(sp, budget=budget, seed=0, backend=Replay(results))
        same = [(t.params, t.status, t.cycles) for t in live.trials] == \
               [(t.params, t.status, t.cycles) for t in replay.trials]
        print(f"\nlive seed 0: best {live.best.cycles if live.best else '-'} cycles, {live.seconds:.0f} s; "
              f"same trials as the replay: {same}")
    if args.throughput:
        throughput(args.workers)
    return 0


def complete(bench: Bench) -> dict[str, Any] | None:
    """The sweep's results of every point of ``bench``'s space, or None (printing why) when some are missing."""
    cache = load_cache(bench.cache)
    sp = bench.build()
    missing = [k for k in sp.keys() if task_id(sp.arguments(k)[0]) not in cache["results"]]
    if missing:
        print(f"{bench.name}: the sweep cache lacks {len(missing)} of {len(sp)} points; run with --sweep {bench.name}\n")
        return None
    return cache["results"]


def compare(bench: Bench, results: dict[str, Any]) -> None:
    """tl.explore (with the prior, and TPE alone) against random sampling at 10% of the space, per seed."""
    sp = bench.build()
    cache = load_cache(bench.cache)
    ids = [task_id(sp.arguments(k)[0]) for k in sp.keys()]
    everything = [results[i] for i in ids]
    optimum = best_of(everything)
    best_id = min((i for i in ids if results[i]["status"] == "ok"), key=lambda i: results[i]["metrics"]["cycles"])
    statuses: dict[str, int] = {}
    for r in everything:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    sweep_secs = sum(r["metrics"].get("wall_seconds", 0.0) for r in everything)
    budget = int(len(sp) * SHARE)
    title = bench.title.format(SIZES=SIZES, GRIDS=GRIDS, GRIDS2=grids("npu2"))
    print(f"== {bench.name}\nspace: {title}: {len(sp)} points "
          f"({', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))})")
    print(f"exhaustive sweep: {len(sp)} simulations, {sweep_secs / 60:.1f} min of evaluation "
          f"(cached: {bench.cache.relative_to(ROOT)}; made by: {cache['command']} at {cache.get('code', '?')})")
    print(f"optimum: {optimum:.0f} cycles at {best_id}")
    print(prior_quality(sp, results))
    print()
    rows = []
    for seed in SEEDS:
        replay = Replay(results)
        ex = tl.explore(sp, budget=budget, seed=seed, backend=replay)
        got = ex.best.cycles if ex.best is not None else math.inf
        alone = tl.explore(sp, budget=budget, seed=seed, backend=Replay(results), prior=False)
        tpe = alone.best.cycles if alone.best is not None else math.inf
        rng = np.random.default_rng(seed)
        pick = rng.choice(len(ids), size=budget, replace=False)
        rand = best_of([everything[i] for i in pick])
        rows.append((seed, got, first_within(ex, optimum), rand, replay.calls,
                     sum(t.source == "prior" for t in ex.trials), tpe))
    print(f"{'seed':>4} {'explore best':>13} {'gap':>7} {'trials to <=2%':>15} {'TPE alone':>10} {'gap':>7} "
          f"{'random best':>12} {'gap':>7} {'simulations':>12} {'from prior':>10}")
    for seed, got, first, rand, calls, prior, tpe in rows:
        print(f"{seed:>4} {got:>13.0f} {got / optimum - 1:>7.2%} {first if first else '-':>15} {tpe:>10.0f} "
              f"{tpe / optimum - 1:>7.2%} {rand:>12.0f} {rand / optimum - 1:>7.2%} {calls:>12} {prior:>10}")
    ge = np.mean([r[1] / optimum - 1 for r in rows])
    gr = np.mean([r[3] / optimum - 1 for r in rows])
    gt = np.mean([r[6] / optimum - 1 for r in rows])
    within = sum(r[1] <= optimum * 1.02 for r in rows)
    rwithin = sum(r[3] <= optimum * 1.02 for r in rows)
    twithin = sum(r[6] <= optimum * 1.02 for r in rows)
    print(f"mean gap: explore {ge:.2%}, TPE alone {gt:.2%}, random {gr:.2%}; within 2% of the optimum: explore "
          f"{within}/{len(rows)} seeds, TPE alone {twithin}/{len(rows)}, random {rwithin}/{len(rows)}; "
          f"budget {budget} = {budget / len(sp):.1%} of the sweep's simulations\n")


def bounded(bench: Bench, results: dict[str, Any], workers: int) -> str:
    """One row: the bounded sweep of ``bench``'s space against its exhaustive sweep."""
    sp = bench.build()
    ids = [task_id(sp.arguments(k)[0]) for k in sp.keys()]
    optimum = best_of([results[i] for i in ids])
    replay = Replay(results)
    ex = tl.explore(sp, budget=len(sp), strategy="bound", backend=replay, workers=workers)
    wrong = 0
    for s in ex.skipped:
        r = results[task_id({**sp.fixed, **_nested(s["params"])})]
        wrong += r["status"] == "ok" and r["metrics"]["cycles"] < s["bound"]
    got = ex.best.cycles if ex.best is not None else math.inf
    spent = sum(t.metrics.get("wall_seconds", 0.0) for t in ex.trials) / 60
    everything = sum(results[i]["metrics"].get("wall_seconds", 0.0) for i in ids) / 60
    planned = sum(t.status != "design_error" for t in ex.trials)  # past the factory: planned, and simulated if ok
    return (f"{bench.name:<22} {len(sp):>6} {replay.calls:>11} {planned:>7} {len(ex.skipped):>7} "
            f"{got:>11.0f} {str(got == optimum):>8} {str(ex.proven):>6} {spent:>7.1f} {everything:>7.1f} "
            f"{ex.bound_seconds:>8.0f} {wrong:>7}")


def _front(values: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """The non-dominated (cycles, cores) pairs, by brute force."""
    return sorted({v for v in values if not any(w[0] <= v[0] and w[1] <= v[1] and w != v for w in values)})


def bounded_front(bench: Bench, results: dict[str, Any], workers: int) -> str:
    """One row: the bounded sweep of ``bench``'s front of cycles and cores against the exhaustive sweep's."""
    sp = bench.build()
    ids = [task_id(sp.arguments(k)[0]) for k in sp.keys()]
    truth = _front([(results[i]["metrics"]["cycles"], results[i]["metrics"]["cores"]) for i in ids
                    if results[i]["status"] == "ok"])
    replay = Replay(results)
    ex = tl.explore(sp, budget=len(sp), strategy="bound", front="cores", backend=replay, workers=workers)
    got = sorted({(t.cycles, t.metrics["cores"]) for t in ex.pareto(["cycles", "cores"])})  # (equal trials: one pair)
    lost = 0  # skipped points whose recorded (cycles, cores) is on the sweep's front and on no trial's
    found = {(t.cycles, t.metrics["cores"]) for t in ex.ok_trials}
    for s in ex.skipped:
        r = results[task_id({**sp.fixed, **_nested(s["params"])})]
        value = (r["metrics"]["cycles"], r["metrics"]["cores"]) if r["status"] == "ok" else None
        lost += value in truth and value not in found
    spent = sum(t.metrics.get("wall_seconds", 0.0) for t in ex.trials) / 60
    everything = sum(results[i]["metrics"].get("wall_seconds", 0.0) for i in ids) / 60
    planned = sum(t.status != "design_error" for t in ex.trials)
    return (f"{bench.name:<22} {len(sp):>6} {replay.calls:>11} {planned:>7} {len(ex.skipped):>7} {len(truth):>5} "
            f"{str(got == truth):>13} {str(ex.proven):>6} {spent:>7.1f} {everything:>7.1f} "
            f"{ex.bound_seconds:>8.0f} {lost:>5}")


def _nested(params: dict[str, Any]) -> dict[str, Any]:
    """Explored parameters as the factory's arguments (``tiling.m`` into ``tiling``), for :func:`task_id`."""
    out: dict[str, Any] = {}
    for name, v in params.items():
        if "." in name:
            outer, inner = name.split(".", 1)
            out.setdefault(outer, {})[inner] = v
        else:
            out[name] = v
    return out


def first_within(ex: Any, optimum: float, tol: float = 0.02) -> int | None:
    """Trials the search took to find a point within ``tol`` of the optimum (None: it did not)."""
    return next((t.number + 1 for t in ex.trials if t.ok and t.cycles <= optimum * (1 + tol)), None)


def transfer(src: Bench, src_results: dict[str, Any], dst: Bench, dst_results: dict[str, Any]) -> None:
    """A search on the target device with and without the source device's search as warm start, per seed.

    The warm start is what a user has after searching the source device: ``tl.explore``'s trials there at
    10% of its space (same seed), not the source's exhaustive sweep. For a factory with an analytic prior
    the pair is also run without it (``prior=False`` on both devices), which isolates what transfer adds.
    """
    ssp, dsp = src.build(), dst.build()
    optimum = best_of([dst_results[task_id(dsp.arguments(k)[0])] for k in dsp.keys()])
    budget, sbudget = int(len(dsp) * SHARE), int(len(ssp) * SHARE)
    priors = (True, False)
    print(f"== transfer {src.name} -> {dst.name}: budget {budget} on the target; warm start = the source's "
          f"tl.explore trials ({sbudget}, same seed); 'to 2%' / 'to opt' = trials to reach within 2% of the "
          f"target's optimum ({optimum:.0f} cycles) / the optimum itself, '-' = not within the budget")
    for prior in priors:
        print(f"{'with' if prior else 'without'} the analytic prior:")
        print(f"{'seed':>4} {'cold best':>10} {'gap':>7} {'to 2%':>6} {'to opt':>6} "
              f"{'warm best':>10} {'gap':>7} {'to 2%':>6} {'to opt':>6}")
        colds, warms, cold0, warm0 = [], [], [], []
        for seed in SEEDS:
            source = tl.explore(ssp, budget=sbudget, seed=seed, backend=Replay(src_results), prior=prior)
            cold = tl.explore(dsp, budget=budget, seed=seed, backend=Replay(dst_results), prior=prior)
            warm = tl.explore(dsp, budget=budget, seed=seed, backend=Replay(dst_results), prior=prior,
                              warm_start=[source])
            c, w = (ex.best.cycles if ex.best is not None else math.inf for ex in (cold, warm))
            fc, fw = first_within(cold, optimum), first_within(warm, optimum)
            oc, ow = first_within(cold, optimum, 0.0), first_within(warm, optimum, 0.0)
            colds.append(fc)
            warms.append(fw)
            cold0.append(oc)
            warm0.append(ow)
            print(f"{seed:>4} {c:>10.0f} {c / optimum - 1:>7.2%} {fc or '-':>6} {oc or '-':>6} "
                  f"{w:>10.0f} {w / optimum - 1:>7.2%} {fw or '-':>6} {ow or '-':>6}")
        print(f"within 2%: cold {_reached(colds)}; warm {_reached(warms)}")
        print(f"optimum:   cold {_reached(cold0)}; warm {_reached(warm0)}")
    print()


def _reached(xs: list[int | None]) -> str:
    got = [x for x in xs if x is not None]
    mean = f"mean {np.mean(got):.1f} trials over those" if got else "none"
    return f"{len(got)}/{len(xs)} seeds ({mean})"


def throughput(workers: int) -> None:
    """Trials per minute of the local and Ray backends on a small space (256^3), and whether they agree."""
    sp = space(256)
    out = {}
    for backend in ("local", "ray"):
        ex = tl.explore(sp, budget=12, seed=0, backend=backend, workers=workers, time_limit=300)
        out[backend] = ex
        print(f"\n{backend:>5}: {len(ex.trials)} trials in {ex.seconds:.1f} s = {60 * len(ex.trials) / ex.seconds:.0f} "
              f"trials/min ({workers} worker(s); Ray's time includes starting it)")
    a, b = ([(t.params, t.status, t.cycles) for t in out[x].trials] for x in ("local", "ray"))
    print(f"same trials on both: {a == b}")


if __name__ == "__main__":
    raise SystemExit(main())
