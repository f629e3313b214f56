"""rms_norm: row-wise RMS normalisation in bf16 (IRON's rms_norm operator, mlir-aie aie_kernels/norm).

``tl.library.rms_norm``: each kernel call takes whole rows; a row's mean square accumulates in f32, its
inverse root is one ``tl.rsqrt``, and the scaled row rounds once to bf16. The result is compared with the
exact normalisation of the bf16 inputs within the bound docs/library.md gives: ``2**-8`` of the largest
output (the one bf16 rounding of the result).

Run: python examples/rms_norm.py [--small]
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
    (rows, cols), cores, per_tile = ((32, 64), 4, 2) if args.small else ((256, 1024), 16, 1)
    design = tl.library.rms_norm(rows, cols, dtype=tl.bf16, cores=cores, rows_per_tile=per_tile)
    x = np.random.default_rng(11).normal(0.5, 3.0, (rows, cols)).astype(ml_dtypes.bfloat16)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + 1e-5)
    tol = harness.Tolerance(atol=2.0**-8 * float(np.abs(want).max()))
    return harness.run("rms_norm", design, {"A": x}, {"C": want}, args, tolerance=tol)


if __name__ == "__main__":
    raise SystemExit(main())
