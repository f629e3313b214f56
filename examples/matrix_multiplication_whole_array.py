"""matrix_multiplication whole_array: C = A @ B on every core of npu1
(mlir-aie programming_examples/basic/matrix_multiplication/whole_array).

``tl.library.matmul``: a 4 x 4 core grid; A tiles reach each core row from
its own shim through a memtile and are broadcast along the row, B tiles
likewise down each column, and each column's C tiles are joined in its
memtile on the way back. docs/iron_side_by_side.md compares this design with
IRON's source line by line.

Run: python examples/matrix_multiplication_whole_array.py [--small]
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
    size, tiling = (256, {"m": 32, "k": 32, "n": 32}) if args.small else (512, {"m": 64, "k": 64, "n": 32})
    design = tl.library.matmul(size, size, size, in_dtype=tl.bf16, out_dtype=tl.f32, tiling=tiling)
    rng = np.random.default_rng(4)
    a = rng.integers(-4, 5, (size, size)).astype(np.float32)
    b = rng.integers(-4, 5, (size, size)).astype(np.float32)
    return harness.run("matrix_multiplication_whole_array", design, {"A": a, "B": b}, {"C": a @ b}, args,
                       macs=size**3)


if __name__ == "__main__":
    raise SystemExit(main())
