"""Run every benchmark of the project, each in its own process, and print their tables.

Run: ``.venv/bin/python benchmarks/run_all.py [--only sim_bench,library_bench] [--timeout 1800] [-- ARGS]``

The benchmarks, in order (a missing script is skipped with a note, so this
runs while some are still being written):

- ``plan_bench.py``: planner speed and quality (placement, routing, tiling);
- ``sim_bench.py``: simulator speed and memory on growing GEMMs;
- ``timing_bench.py``: ``mode="timing"`` against ``mode="timed"`` on 1024^3 GEMMs;
- ``explore_bench.py``: ``tl.explore`` against an exhaustive sweep and random sampling;
- ``accuracy.py``: simulated cycles against published measurements;
- ``emit_bench.py``: MLIR emission speed and size;
- ``library_bench.py``: each library design's efficiency against the device's peak.
- ``library_grids_bench.py``: each library factory's default grid (``cores=None``) on every registered device,
  planned, simulated and compared with numpy (docs/library.md "Default grids").
- ``cascade_gemm_bench.py``: AIE1 GEMMs over cascade chains (up to 64 cores) against the plain whole-array one.
- ``vendor_bench.py``: each library design through mlir-aie's own flow at both levels (mlir-aie's buffers and
  routes against tilelang's);
- ``fuzz_bench.py``: counts by outcome over mutated IR text, generated designs and mutated mlir-aie modules
  read by ``tl.read_mlir`` (hangs, raw exceptions, mode-dependent outputs, accepted invalid plans);
- ``tenancy_bench.py``: co-location on column partitions, serving policies, horizontal fusion;
- ``passes_bench.py``: the passes of ``tl.passes`` (packing, scheduling, double buffering, redundant transfers).
- ``plio_bench.py``: AIE1 host moves by NoC shim DMA against PLIO streams (docs/plio.md).
- ``plio_place_bench.py``: the placement ILP against the greedy placement on 256- to 400-core PLIO-fed cascade
  GEMMs (docs/plio.md "Placing the PL shim ends").

Each runs with this interpreter, from the repository root, its output shown
as it arrives; arguments after ``--`` go to every script. The exit status is
non-zero when any benchmark failed or timed out.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BENCHMARKS = ("plan_bench", "sim_bench", "timing_bench", "explore_bench", "accuracy", "emit_bench", "library_bench", "library_grids_bench", "cascade_gemm_bench", "fuzz_bench", "vendor_bench",
              "tenancy_bench", "passes_bench", "plio_bench",
              "plio_place_bench")


def run_one(name: str, extra: Sequence[str], timeout: float) -> tuple[str, float]:
    """Run ``benchmarks/<name>.py``; return its outcome ("ok", "failed (exit N)", "timed out", "missing")."""
    script = HERE / f"{name}.py"
    if not script.is_file():
        print(f"(skipped: {script.relative_to(ROOT)} does not exist yet)\n", flush=True)
        return "missing", 0.0
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(script), *extra], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # stream the table as it is printed
            print(line, end="", flush=True)
        code = proc.wait(timeout=max(1.0, timeout - (time.perf_counter() - t0)))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "timed out", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    return ("ok" if code == 0 else f"failed (exit {code})"), seconds


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args_in:
        at = args_in.index("--")
        args_in, extra = args_in[:at], args_in[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help=f"comma-separated subset of {', '.join(BENCHMARKS)}")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed per benchmark")
    args = ap.parse_args(args_in)
    chosen = [b.removesuffix(".py") for b in args.only.split(",") if b] or list(BENCHMARKS)
    unknown = [b for b in chosen if b not in BENCHMARKS]
    if unknown:
        ap.error(f"unknown benchmarks {unknown}; choose from {list(BENCHMARKS)}")
    outcomes = []
    for name in chosen:
        print(f"=== {name} " + "=" * max(0, 70 - len(name)), flush=True)
        outcome, seconds = run_one(name, extra, args.timeout)
        outcomes.append((name, outcome, seconds))
        print()
    print("=== summary " + "=" * 62)
    for name, outcome, seconds in outcomes:
        print(f"{name:<16} {outcome:<20} {seconds:>8.1f} s")
    return 1 if any(o not in ("ok", "missing") for _, o, _ in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
