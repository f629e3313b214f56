"""dma_transpose: the shim DMA transposes a matrix on its way in (mlir-aie programming_examples/basic/dma_transpose).

The host move into the core walks A (M x N, row-major) column by column:
``tl.pattern(0, sizes=(N, M), strides=(1, N))``, so each fifo element is one
column of A, i.e. one row of A's transpose. The core only copies; the
transpose is done entirely by the DMA's access pattern.

Run: python examples/dma_transpose.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402


def dma_transpose(m: int = 64, n: int = 32, device: str = "npu1"):
    """C (n x m) = A (m x n) transposed by the input DMA's pattern."""

    @tl.kernel
    def copy(src: tl.Tile[(m,), tl.i32], dst: tl.Tile[(m,), tl.i32]):
        dst[...] = src

    @tl.design(device=device)
    def dma_transpose(A: tl.Tensor[(m, n), tl.i32], C: tl.Tensor[(n, m), tl.i32]):
        columns = tl.fifo(tl.Tile[(m,), tl.i32], name="columns")
        rows = tl.fifo(tl.Tile[(m,), tl.i32], name="rows")

        @tl.core(name="copier")
        def copier():
            for _ in tl.range(n):
                src, dst = columns.acquire(), rows.acquire()
                copy(src, dst)
                columns.release()
                rows.release()

        # column j of A is elements j, j + n, j + 2n, ...: the outer dimension steps
        # along the columns (stride 1), the inner walks down one column (stride n)
        tl.dma(A, columns, pattern=tl.pattern(0, (n, m), (1, n)))
        tl.dma(rows, C, pattern=tl.tiles((1, m)))

    return dma_transpose


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    m, n = (64, 32) if args.small else (512, 256)
    a = np.arange(m * n, dtype=np.int32).reshape(m, n)
    return harness.run("dma_transpose", dma_transpose(m, n), {"A": a}, {"C": np.ascontiguousarray(a.T)}, args)


if __name__ == "__main__":
    raise SystemExit(main())
