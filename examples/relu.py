"""relu: C = max(A, 0) in bf16 on several cores (mlir-aie programming_examples/ml/relu).

``tl.library.elementwise("relu", ...)``: the vector is cut into 1024-element
chunks dealt round-robin to the cores, each column's chunks split from and
joined into one memtile buffer.

Run: python examples/relu.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    cores, tile, rounds = (4, 256, 2) if args.small else (8, 1024, 8)
    n = cores * tile * rounds
    design = tl.library.elementwise("relu", n, dtype=tl.bf16, cores=cores, tile=tile)
    a = np.random.default_rng(6).standard_normal(n).astype(ml_dtypes.bfloat16)
    return harness.run("relu", design, {"A": a}, {"C": np.maximum(a, 0)}, args)


if __name__ == "__main__":
    raise SystemExit(main())
