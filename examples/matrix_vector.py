"""matrix_vector: C = A @ B for a matrix A and a vector B, int16 in, int32 out
(mlir-aie programming_examples/basic/matrix_multiplication/matrix_vector).

``tl.library.matvec``: 32-row blocks of A are dealt to the cores (staged per
column in a memtile and split there), B is broadcast to every core, and each
core's 32 results per block are joined per column on the way out.

Run: python examples/matrix_vector.py [--small]
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
    # IRON's example size is 288 x 288 in 32 x 32 tiles: 9 row blocks, here on a 3 x 3 grid
    (M, K), cores = ((288, 288), 9) if args.small else ((2048, 1024), 16)
    design = tl.library.matvec(M, K, in_dtype=tl.i16, out_dtype=tl.i32, cores=cores, tiling={"m": 32, "k": 32})
    rng = np.random.default_rng(5)
    a = rng.integers(-1000, 1000, (M, K)).astype(np.int16)
    b = rng.integers(-1000, 1000, K).astype(np.int16)
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    return harness.run("matrix_vector", design, {"A": a, "B": b}, {"C": want}, args, macs=M * K)


if __name__ == "__main__":
    raise SystemExit(main())
