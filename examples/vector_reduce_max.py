"""vector_reduce_max: the maximum of a vector over two core columns
(mlir-aie programming_examples/basic/vector_reduce_max/multi_column_designs).

``tl.library.reduction("max", ...)``: each core reduces its share of the
input to a partial maximum held in its output fifo's element, then the
partials are folded along a chain of cores that crosses the columns; the
last core sends the one result to the host.

Run: python examples/vector_reduce_max.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    cores, tile, rounds = (8, 256, 2) if args.small else (16, 1024, 8)
    n = cores * tile * rounds
    design = tl.library.reduction("max", n, dtype=tl.i32, cores=cores, tile=tile)
    a = np.random.default_rng(2).integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    return harness.run("vector_reduce_max", design, {"A": a}, {"C": np.array([a.max()], np.int32)}, args)


if __name__ == "__main__":
    raise SystemExit(main())
