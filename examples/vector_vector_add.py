"""vector_vector_add: C = A + B on one core (mlir-aie programming_examples/basic/vector_vector_add).

Written out by hand: two input fifos and one output fifo between the shim
and one core, which adds one tile of each per iteration. (The same design on
many cores is one call: ``tl.library.elementwise("add", n, cores=8)``.)

Run: python examples/vector_vector_add.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402


def vector_vector_add(n: int = 16384, tile: int = 1024, device: str = "npu1"):
    """C = A + B in ``tile``-element chunks on one core."""

    @tl.kernel
    def add(a: tl.Tile[(tile,), tl.i32], b: tl.Tile[(tile,), tl.i32], c: tl.Tile[(tile,), tl.i32]):
        c[...] = a + b

    @tl.design(device=device)
    def vector_vector_add(A: tl.Tensor[(n,), tl.i32], B: tl.Tensor[(n,), tl.i32], C: tl.Tensor[(n,), tl.i32]):
        in_a = tl.fifo(tl.Tile[(tile,), tl.i32], name="in_a")
        in_b = tl.fifo(tl.Tile[(tile,), tl.i32], name="in_b")
        out_c = tl.fifo(tl.Tile[(tile,), tl.i32], name="out_c")

        @tl.core(name="adder")
        def adder():
            for _ in tl.range(n // tile):
                a, b, c = in_a.acquire(), in_b.acquire(), out_c.acquire()
                add(a, b, c)
                in_a.release()
                in_b.release()
                out_c.release()

        tl.dma(A, in_a, pattern=tl.tiles((tile,)))
        tl.dma(B, in_b, pattern=tl.tiles((tile,)))
        tl.dma(out_c, C, pattern=tl.tiles((tile,)))

    return vector_vector_add


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    n = 4096 if args.small else 65536
    rng = np.random.default_rng(1)
    a = rng.integers(-(2**30), 2**30, n).astype(np.int32)
    b = rng.integers(-(2**30), 2**30, n).astype(np.int32)
    return harness.run("vector_vector_add", vector_vector_add(n), {"A": a, "B": b}, {"C": a + b}, args)


if __name__ == "__main__":
    raise SystemExit(main())
