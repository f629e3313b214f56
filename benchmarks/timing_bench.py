"""Speed of ``tl.simulate(mode="timing")`` against ``mode="timed"`` on 1024^3 whole-array bf16 GEMMs (npu1).

Prints, per design: CPU seconds of this process (best of ``--repeat``; the simulation is one thread, and
CPU time does not count the time other processes on a shared machine take) of timed mode with a trace
(the default), timed mode without one, and timing mode (no trace, no data), the speedups, and whether
cycles and statistics agree. Designs: benchmarks/sim_bench.py's IRON-layout GEMM (64^3 kernel tiles, 4 x 4
cores) and ``tl.library.matmul`` with a few tilings, all planned greedily (the plan is not timed).
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
    print(f"{'design':<30} {'events':>8} {'timed+trace s':>14} {'timed s':>8} {'timing s':>9} "
          f"{'x vs default':>12} {'x vs no trace':>13} {'same':>5}")
    for name, d in designs(n):
        plan = tl.plan(d, strategy="greedy")
        t_trace, _ = best(lambda p=plan: tl.simulate(p, mode="timed", A=a, B=b), args.repeat)
        t_timed, timed = best(lambda p=plan: tl.simulate(p, mode="timed", trace=False, A=a, B=b), args.repeat)
        t_timing, timing = best(lambda p=plan: tl.simulate(p, mode="timing", trace=False), args.repeat)
        same = timing.cycles == timed.cycles and timing.stats == timed.stats  # type: ignore[attr-defined]
        print(f"{name:<30} {timed.stats.events:>8} {t_trace:>14.3f} {t_timed:>8.3f} {t_timing:>9.3f} "  # type: ignore[attr-defined]
              f"{t_trace / t_timing:>12.1f} {t_timed / t_timing:>13.1f} {'yes' if same else 'NO':>5}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
