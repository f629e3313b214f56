"""matrix_multiplication on AIE1: C = A @ B on 16 cores of the VCK190's xcvc1902

``tl.library.matmul`` with ``layout="streams"``: AIE1 has no memory tiles and
its shim DMA walks linear runs only, so each host tensor is kept in the order
its fifo carries it (A as each core row's tiles, B as each core column's, C as
each core's) and every host fifo moves one contiguous run. The host reorders
the data with ``tl.library.pack_streams`` and ``unpack_streams``, the job a PL
data mover does in a VCK190 design. Each core row's A tiles are broadcast
along the row from one shim channel, each column's B tiles down the column,
and every core drains its own C tiles to a shim.

Run: python examples/matrix_multiplication_aie1.py [--small]
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
    size, tiling = (128, {"m": 32, "k": 16, "n": 32}) if args.small else (512, "auto")
    design = tl.library.matmul(size, size, size, in_dtype=tl.i16, out_dtype=tl.i32, device="xcvc1902",
                               tiling=tiling, layout="streams")
    rng = np.random.default_rng(5)
    a = rng.integers(-100, 100, (size, size)).astype(np.int16)
    b = rng.integers(-100, 100, (size, size)).astype(np.int16)
    streams = tl.library.pack_streams(design, a, b, C=a.astype(np.int32) @ b.astype(np.int32))
    return harness.run("matrix_multiplication_aie1", design, {"A": streams["A"], "B": streams["B"]},
                       {"C": streams["C"]}, args, macs=size**3)


if __name__ == "__main__":
    raise SystemExit(main())
