"""vector_scalar_mul: C = 3 * A on one npu1 core, double-buffered (API.md's example;
mlir-aie programming_examples/basic/vector_scalar_mul).

The design is examples/designs.py's ``vector_scalar_mul``; this script checks
its kernel on numpy, then plans, simulates and emits the whole design.

Run: python examples/vector_scalar_mul.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import designs  # noqa: E402
import harness  # noqa: E402

import tilelang as tl  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    n, tile = (4096, 1024) if args.small else (65536, 1024)
    design = designs.vector_scalar_mul(n, tile)
    if not args.small:
        print(tl.ir.print(design))

    # The kernel's numpy meaning is the reference for everything downstream.
    scale = design.kernel("scale")
    a = np.arange(tile, dtype=np.int32)
    c = np.zeros(tile, np.int32)
    scale(a, c, 3)
    if not np.array_equal(c, a * 3):
        print("vector_scalar_mul: kernel 'scale' does not match numpy")
        return 1
    print("vector_scalar_mul: kernel 'scale' matches numpy")

    a = np.random.default_rng(0).integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    return harness.run("vector_scalar_mul", design, {"A": a}, {"C": a * np.int32(3)}, args)


if __name__ == "__main__":
    raise SystemExit(main())
