"""softmax: row-wise softmax in bf16 (mlir-aie programming_examples/ml/softmax).

``tl.library.softmax``: each kernel call takes whole rows and computes
``exp(x - max) / sum`` for each. Every bf16 op rounds (each computes in f32
and rounds once), so the result is compared with the exact softmax within
the bound docs/library.md derives: relative error at most
``(2 * max|x - max(x)| + 4) * 2**-8`` (bf16's unit roundoff).

Run: python examples/softmax.py [--small]
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
    (rows, cols), cores, per_tile = ((32, 64), 4, 2) if args.small else ((256, 1024), 16, 2)
    design = tl.library.softmax(rows, cols, dtype=tl.bf16, cores=cores, rows_per_tile=per_tile)
    x = np.random.default_rng(7).uniform(-4, 4, (rows, cols)).astype(ml_dtypes.bfloat16)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    spread = float((x64.max(axis=1, keepdims=True) - x64).max())
    tol = harness.Tolerance(rtol=(2 * spread + 4) * 2.0**-8)
    return harness.run("softmax", design, {"A": x}, {"C": want}, args, tolerance=tol)


if __name__ == "__main__":
    raise SystemExit(main())
