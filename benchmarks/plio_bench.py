"""AIE1 host moves by NoC shim DMA against PL I/O (PLIO) streams (docs/plio.md).

A design of ``k`` cores on the xcvc1902, each scaling its own stream of 1 KiB tiles (its own input and
output fifo), is planned (greedy) and simulated with every host move through a NoC shim's DMA from DDR
or as a PLIO stream of 32, 64 or 128 bits. The table gives the cycles, the bytes each core's input
moves per cycle, and DDR bytes; a plan that cannot be made gives its PlanError's start. The NoC shims
have 2 MM2S channels each (32 on the device), the PL shims 8 PLIO inputs each (272).

Run: ``.venv/bin/python benchmarks/plio_bench.py [--cores 8 32 48]``
"""

from __future__ import annotations

import argparse

import numpy as np

import tilelang as tl

N = 256  # i32 elements a tile: 1 KiB
REPS = 8


@tl.kernel
def triple(a: tl.Tile[(N,), tl.i32], c: tl.Tile[(N,), tl.i32]):
    c[...] = a * 3


def streams(k: int, plio: object):
    """``k`` cores, each taking REPS tiles of X and writing REPS tiles of C, moves by ``plio``."""

    def body(X: tl.Tensor[(k * REPS * N,), tl.i32], C: tl.Tensor[(k * REPS * N,), tl.i32]):
        for i in range(k):
            a = tl.fifo(tl.Tile[(N,), tl.i32], name=f"a{i}")
            c = tl.fifo(tl.Tile[(N,), tl.i32], name=f"c{i}")

            def core(a=a, c=c):
                for _ in tl.range(REPS):
                    x, y = a.acquire(), c.acquire()
                    triple(x, y)
                    a.release()
                    c.release()

            tl.core(name=f"w{i}")(core)
            part = tl.pattern(offset=i * REPS * N, sizes=[REPS * N], strides=[1])
            tl.dma(X, a, pattern=part, plio=plio)
            tl.dma(c, C, pattern=part, plio=plio)

    body.__name__ = f"streams{k}"
    return tl.design(device="xcvc1902")(body)


def row(k: int, label: str, plio: object) -> str:
    x = np.arange(k * REPS * N, dtype=np.int32)
    try:
        p = tl.plan(streams(k, plio), strategy="greedy")
    except tl.PlanError as e:
        return f"| {k} | {label} | PlanError: {str(e)[:70]}... | | |"
    res = tl.simulate(p, X=x)
    assert np.array_equal(res.outputs["C"], x * 3)
    rate = REPS * N * 4 / res.cycles
    ddr = res.stats.ddr_bytes_read + res.stats.ddr_bytes_written
    return f"| {k} | {label} | {res.cycles} | {rate:.2f} | {ddr} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, nargs="+", default=[8, 32, 48])
    args = ap.parse_args()
    print("| cores | host moves | cycles | input B/cycle per core | DDR bytes |")
    print("|---|---|---|---|---|")
    for k in args.cores:
        for label, plio in (("NoC shim DMA", False), ("PLIO 32", 32), ("PLIO 64", 64), ("PLIO 128", 128)):
            print(row(k, label, plio), flush=True)


if __name__ == "__main__":
    main()
