"""passthrough_dmas: host -> memtile -> host with no core (mlir-aie programming_examples/basic/passthrough_dmas).

The input fifo ends in a memtile and is forwarded there into the output fifo
(IRON: ``of_in.cons().forward()``); the data never reach a compute tile. It
measures what the shim and memtile DMAs alone sustain.

Run: python examples/passthrough_dmas.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402


def passthrough_dmas(n: int = 16384, tile: int = 1024, device: str = "npu1"):
    """C = A, moved through one memtile in ``tile``-element buffers."""

    @tl.design(device=device)
    def passthrough_dmas(A: tl.Tensor[(n,), tl.i32], C: tl.Tensor[(n,), tl.i32]):
        of_in = tl.fifo(tl.Tile[(tile,), tl.i32], depth=2, name="of_in")
        of_out = tl.fifo(tl.Tile[(tile,), tl.i32], depth=2, name="of_out")
        tl.dma(of_in, of_out, name="memtile_forward")  # fifo -> fifo: a memtile link
        tl.dma(A, of_in, pattern=tl.tiles((tile,)))
        tl.dma(of_out, C, pattern=tl.tiles((tile,)))

    return passthrough_dmas


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    n = 4096 if args.small else 65536
    design = passthrough_dmas(n)
    a = np.arange(n, dtype=np.int32) * 7 - 1000
    return harness.run("passthrough_dmas", design, {"A": a}, {"C": a}, args)


if __name__ == "__main__":
    raise SystemExit(main())
