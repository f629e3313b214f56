"""AIE1 (xcvc1902) GEMMs with cascade chains (``tl.library.matmul(..., cascade=L)``) against the plain
whole-array one, in simulation.

Run: ``.venv/bin/python benchmarks/cascade_gemm_bench.py [--sizes 256,512]``. The PLIO rows take the PL side
as always ready at the PLIO rate (docs/plio.md): what the array allows, not a measured PL design.

Each row: plan (greedy placement: the ILP hits its safety net on chains of 8 cores already), simulate
with random i16 data, check C against numpy, and print the cores, cycles, MACs per cycle as a share of
the used cores' and the whole device's i16 peak (``Device.macs_per_cycle``, ``peak_macs_per_second``),
and ``res.explain()``'s verdict (what bounds the run).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tilelang as tl  # noqa: E402

DEV = "xcvc1902"
# (label, cores, cascade, plio): the plain design on its default 16 and its 32-core maximum (one C stream
# per core), 4 x 4 chains of 4 (64 cores: the 32 shim MM2S channels feed (4 + 4) x 4 A and B fifos), and
# chains fed by PLIO streams (docs/plio.md), which the NoC shims' channels no longer bound (4 x 8 x 4: 128;
# 8 x 8 x 4: 256; 10 x 8 x 4: 320, M a multiple of 10 m; 12 x 8 x 4: 384 of the 400 cores, M a multiple of 12 m)
ROWS = (("plain 16", None, 1, False), ("plain 4x8", (4, 8), 1, False), ("cascade 2x2x4", (2, 2), 4, False),
        ("cascade 4x4x2", (4, 4), 2, False), ("cascade 4x4x4", (4, 4), 4, False),
        ("plio 4x4x4", (4, 4), 4, True), ("plio 4x8x4", (4, 8), 4, True), ("plio 8x8x4", (8, 8), 4, True),
        ("plio 10x8x4", (10, 8), 4, True), ("plio 12x8x4", (12, 8), 4, True))


def row(size: int, label: str, cores: object, chain: int, plio: bool, rng: np.random.Generator) -> str:
    """One measured row as text."""
    t0 = time.perf_counter()
    d = tl.library.matmul(size, size, size, in_dtype=tl.i16, out_dtype=tl.i32, device=DEV, cores=cores,
                          layout="streams", cascade=chain, plio=plio)
    p = tl.plan(d, strategy="greedy")
    a, b = (rng.integers(-50, 50, (size, size)).astype(np.int16) for _ in range(2))
    res = tl.simulate(p, **tl.library.pack_streams(d, a, b))
    ok = np.array_equal(tl.library.unpack_streams(d, res.outputs["C"]), a.astype(np.int32) @ b.astype(np.int32))
    dev = p.device
    per_cycle = size**3 / res.cycles
    used = per_cycle / (len(d.cores) * dev.macs_per_cycle(tl.i16))
    whole = per_cycle * dev.clock_hz / dev.peak_macs_per_second(tl.i16)
    return (f"{size:>5} {label:<15} {len(d.cores):>5} {res.cycles:>9} {per_cycle:>8.0f} {used:>8.1%} {whole:>8.1%} "
            f"{'yes' if ok else 'NO':>3} {time.perf_counter() - t0:>6.1f}  {res.explain().verdict}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,512", help="comma-separated M = K = N")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print("i16 x i16 -> i32 on xcvc1902; % cores / % device = MACs per cycle over the used cores' / all 400 cores' "
          "i16 peak")
    print(f"{'size':>5} {'design':<15} {'cores':>5} {'cycles':>9} {'MAC/c':>8} {'% cores':>8} {'% device':>8} "
          f"{'ok':>3} {'s':>6}  verdict")
    failed = 0
    for size in (int(x) for x in args.sizes.split(",") if x):
        for label, cores, chain, plio in ROWS:
            try:
                line = row(size, label, cores, chain, plio, rng)
            except tl.TileLangError as e:
                print(f"{size:>5} {label:<15} n/a: {type(e).__name__}: {str(e)[:150]}")
                continue
            failed += " NO " in line
            print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
