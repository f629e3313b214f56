"""Speed of ``tl.simulate(mode="timing")`` against ``mode="timed"`` on 1024^3 whole-array bf16 GEMMs (npu1).

Prints, per design: CPU seconds of this process (best of ``--repeat`` rounds, each round running the three
modes one after another, so that a slow spell of a shared machine slows every mode alike rather than one;
the simulation is one thread, and CPU time does not count the time other processes take) of timed mode with a trace
(the default), timed mode without one, and timing mode (no trace, no data), the speedups, and whether
cycles and statistics agree. Designs: benchmarks/sim_bench.py's IRON-layout GEMM (64^3 kernel tiles, 4 x 4
cores) and ``tl.library.matmul`` with a few tilings, all planned greedily (the plan is not timed).
The ``moves`` column counts the host moves (each completion changes the host's state); ``plan s`` is the wall
time of ``tl.plan(design)`` with its default options (the placement ILP; its solver runs in a child process),
which ``tl.explore`` pays for every point before the timing simulation. Last, the
engine's own cost per event (processes that only sleep: a generator step and one heap push and
pop each) and what it implies: ``floor s`` is the events times that cost, the least any run of
those events can take.
Run: ``.venv/bin/python benchmarks/timing_bench.py [--size 1024] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sim_bench import whole_array_gemm  # noqa: E402

import tilelang as tl  # noqa: E402


def best(fn, repeat: int) -> tuple[float, object]:  # noqa: ANN001 - a thunk
    out, secs = None, float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        secs = min(secs, time.process_time() - t0)
    return secs, out


def interleaved(fns: list, repeat: int) -> list[tuple[float, object]]:  # noqa: ANN001 - thunks
    """(best CPU seconds, last result) of each thunk, over ``repeat`` rounds of all of them in turn."""
    secs, outs = [float("inf")] * len(fns), [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.process_time()
            outs[i] = fn()
            secs[i] = min(secs[i], time.process_time() - t0)
    return list(zip(secs, outs, strict=True))


def engine_floor(repeat: int, processes: int = 11, sleeps: int = 20000) -> tuple[float, int]:
    """CPU seconds per event of the bare engine (``processes`` generators that sleep ``sleeps`` times each),
    best of ``repeat``, and the events run."""
    from simulator.engine import Engine, Process

    def body(_: Process):  # noqa: ANN202 - a process body
        for _ in range(sleeps):
            yield 3

    def run() -> Engine:
        eng = Engine()
        for _ in range(processes):
            Process(eng, "sleeper", "core", body)
        eng.run()
        return eng

    secs, eng = best(run, repeat)
    return secs / eng.events, eng.events  # type: ignore[attr-defined]


def designs(size: int) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = [("sim_bench whole_array 64^3", whole_array_gemm(size, size, size))]
    for m, k, n in ((64, 64, 64), (32, 32, 32), (64, 32, 64)):
        d = tl.library.matmul(size, size, size, in_dtype=tl.bf16, device="npu1", tiling={"m": m, "k": k, "n": n})
        out.append((f"library matmul {m}x{k}x{n}", d))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    n = args.size
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    per_event, floor_events = engine_floor(args.repeat)
    print(f"{'design':<30} {'events':>8} {'moves':>6} {'timed+trace s':>14} {'timed s':>8} {'timing s':>9} "
          f"{'floor s':>8} {'x vs default':>12} {'x vs no trace':>13} {'same':>5} {'plan s':>7}")
    for name, d in designs(n):
        t0 = time.perf_counter()
        tl.plan(d)
        plan_wall = time.perf_counter() - t0
        plan = tl.plan(d, strategy="greedy")
        (t_trace, _), (t_timed, timed), (t_timing, timing) = interleaved([
            lambda p=plan: tl.simulate(p, mode="timed", A=a, B=b),
            lambda p=plan: tl.simulate(p, mode="timed", trace=False, A=a, B=b),
            lambda p=plan: tl.simulate(p, mode="timing", trace=False)], args.repeat)
        same = timing.cycles == timed.cycles and timing.stats == timed.stats  # type: ignore[attr-defined]
        events = timed.stats.events  # type: ignore[attr-defined]
        print(f"{name:<30} {events:>8} {len(timed.stats.moves):>6} {t_trace:>14.3f} {t_timed:>8.3f} "  # type: ignore[attr-defined]
              f"{t_timing:>9.3f} {events * per_event:>8.3f} {t_trace / t_timing:>12.1f} {t_timed / t_timing:>13.1f} "
              f"{'yes' if same else 'NO':>5} {plan_wall:>7.2f}")
    print(f"engine alone: {per_event * 1e6:.2f} us per event (11 processes that only sleep, {floor_events} events)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
