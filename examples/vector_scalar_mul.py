"""API.md's example: C = 3 * A on one npu1 core, double-buffered.

Run: python examples/vector_scalar_mul.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import designs  # noqa: E402

import tilelang as tl  # noqa: E402


def main() -> int:
    design = designs.vector_scalar_mul()
    print(tl.ir.print(design))

    # The kernel's numpy meaning is the reference for everything downstream.
    scale = design.kernel("scale")
    a = np.arange(1024, dtype=np.int32)
    c = np.zeros(1024, np.int32)
    scale(a, c, 3)
    assert np.array_equal(c, a * 3)
    print("kernel 'scale' matches numpy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
