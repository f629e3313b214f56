"""MLIR emission benchmark: time and size of ``tl.emit_mlir`` at both levels.

Usage::

    .venv/bin/python benchmarks/emit_bench.py            # every case, 400 cores the largest
    .venv/bin/python benchmarks/emit_bench.py --quick    # the small ones only

Each case is planned once (greedy strategy: planning is not what is measured)
and emitted ``--repeat`` times per level; the table gives the best time, the
module's size in bytes and lines, and its operation count. The largest case is
400 cores on xcvc1902 (every core of the VC1902): 25 chains of 16 cores, each
stage handing its tiles to the next through shared memory, each chain fed and
drained by the host. Two cases exercise what earlier versions of the backend
refused: conv2d's row kernel at 16 x 16 channels (its weight slices are
views, not stack copies) and host rows of 1024 words (split over two BD
dimensions). A case the emitter refuses prints its error instead of a row.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

import designs  # noqa: E402

import tilelang as tl  # noqa: E402
from tilelang.backends.mlir import emit_mlir  # noqa: E402
from tilelang.plan import plan as make_plan  # noqa: E402


def wide_rows(rows: int = 16, n: int = 1024, device: str = "npu1"):  # noqa: ANN201
    """Host rows of ``n`` i32 words out of a wider tensor: one 2-d walk whose rows exceed the 10-bit wrap."""

    @tl.kernel
    def inc(a: tl.Tile[(n,), tl.i32], c: tl.Tile[(n,), tl.i32]):
        c[...] = a + 1

    @tl.design(device=device)
    def wide_rows(A: tl.Tensor[(rows, 2 * n), tl.i32], C: tl.Tensor[(rows, n), tl.i32]):
        x = tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name="x")
        y = tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(rows):
                a = x.acquire()
                c = y.acquire()
                inc(a, c)
                x.release()
                y.release()

        tl.dma(A, x, pattern=tl.pattern(0, (rows, n), (2 * n, 1)))
        tl.dma(y, C)

    return wide_rows


def cases(quick: bool) -> list[tuple[str, object]]:
    out = [
        ("vector_scalar_mul npu1", lambda: designs.vector_scalar_mul(device="npu1")),
        ("gemm 128^3 npu1", lambda: designs.gemm_single_core(device="npu1")),
        ("broadcast 16 cores xcvc1902", lambda: designs.broadcast_scale(cores=16)),
        ("chains 4x8 = 32 cores npu2", lambda: designs.chains(4, 8, n=256, iters=8, device="npu2")),
        ("conv2d 3x3 16ch 34x34 npu1", lambda: tl.library.conv2d(34, 34, 16, 16, cores=1)),
        ("rows of 1024 words npu1", wide_rows),
    ]
    if not quick:
        out += [
            ("chains 10x16 = 160 cores xcvc1902", lambda: designs.chains(10, 16, n=256, iters=8)),
            ("chains 25x16 = 400 cores xcvc1902", lambda: designs.chains(25, 16, n=256, iters=8)),
        ]
    return out


def measure(p: object, level: str, repeat: int) -> tuple[float, str, int]:
    best, text = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        text = emit_mlir(p, level=level)
        best = min(best, time.perf_counter() - t0)
    ops = sum(1 for line in text.splitlines() if '"' in line and '"(' in line)
    return best, text, ops


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small cases only")
    ap.add_argument("--repeat", type=int, default=3, help="emissions per case and level (best is kept)")
    args = ap.parse_args()
    header = f"{'design':36} {'cores':>5} {'level':10} {'emit s':>8} {'bytes':>10} {'lines':>7} {'ops':>7}"
    print(header)
    print("-" * len(header))
    for name, factory in cases(args.quick):
        p = make_plan(factory(), strategy="greedy")
        for level in ("objectfifo", "physical"):
            try:
                secs, text, ops = measure(p, level, args.repeat)
            except tl.TileLangError as e:
                print(f"{name:36} {len(p.design.cores):5} {level:10} refused: {type(e).__name__}: {str(e)[:120]}")
                continue
            lines = text.count("\n")
            print(f"{name:36} {len(p.design.cores):5} {level:10} {secs:8.3f} {len(text):10} {lines:7} {ops:7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
