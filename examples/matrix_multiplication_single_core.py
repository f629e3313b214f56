"""matrix_multiplication single_core: C = A @ B on one core, bf16 in, f32 out
(mlir-aie programming_examples/basic/matrix_multiplication/single_core).

``tl.library.matmul(..., cores=1)``: A and B are staged through a memtile
and fed to the core in m x k and k x n tiles; the core accumulates each
m x n tile of C over K and sends it back through the memtile.

Run: python examples/matrix_multiplication_single_core.py [--small]
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
    size, t = (128, 32) if args.small else (256, 64)
    design = tl.library.matmul(size, size, size, cores=1, tiling={"m": t, "k": t, "n": t})
    # small integers are exact in bf16, and their products' sums exact in f32: a bit-exact check
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (size, size)).astype(np.float32)
    b = rng.integers(-4, 5, (size, size)).astype(np.float32)
    return harness.run("matrix_multiplication_single_core", design, {"A": a, "B": b}, {"C": a @ b}, args,
                       macs=size**3)


if __name__ == "__main__":
    raise SystemExit(main())
