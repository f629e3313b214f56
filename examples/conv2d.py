"""conv2d: a 3 x 3 convolution, int16 in, int32 out, over row bands and channel groups
(mlir-aie programming_examples/ml/conv2d, with the 3-line window of the vision filter2d kernels).

``tl.library.conv2d``: tensors in YCX layout (rows of all channels). Each
core slides a window of 3 input rows (acquire 3, release 1), computing one
output row per step as nine small matmuls; core columns take bands of rows,
the cores of a column split the output channels and their rows are joined in
the column's memtile.

Run: python examples/conv2d.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402


def reference(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Valid convolution: C[y, o, x] = sum_{dy, dx, i} W[o, dy, dx, i] A[y + dy, i, x + dx] (int64)."""
    k = w.shape[1]
    ho, wo = a.shape[0] - k + 1, a.shape[2] - k + 1
    out = np.zeros((ho, w.shape[0], wo), np.int64)
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("oi,yix->yox", w[:, dy, dx, :].astype(np.int64),
                             a[dy:dy + ho, :, dx:dx + wo].astype(np.int64))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    (h, w, cin, cout), cores = ((10, 18, 8, 8), (2, 2)) if args.small else ((34, 34, 8, 16), (4, 4))
    design = tl.library.conv2d(h, w, cin, cout, kernel_size=3, dtype=tl.i16, out_dtype=tl.i32, cores=cores)
    rng = np.random.default_rng(8)
    a = rng.integers(-100, 100, (h, cin, w)).astype(np.int16)
    wt = rng.integers(-20, 20, (cout, 3, 3, cin)).astype(np.int16)
    want = reference(a, wt).astype(np.int32)
    macs = want.size * 9 * cin
    return harness.run("conv2d", design, {"A": a, "W": wt}, {"C": want}, args, macs=macs)


if __name__ == "__main__":
    raise SystemExit(main())
