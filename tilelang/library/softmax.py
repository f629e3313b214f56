"""``tl.library.softmax``: row-wise softmax over a matrix, rows dealt to the cores.

mlir-aie's ``ml/softmax`` example computes ``exp(x - max) / sum`` per row on
each core. Here each kernel call takes ``rows_per_tile`` rows and, for every
row, finds its maximum, exponentiates the shifted row, sums it and divides:
the four steps of the numerically safe softmax. The rows move as in
:func:`~tilelang.library.elementwise` (memtile split/join per core column).
"""

from __future__ import annotations

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.kernel import exp
from tilelang.frontend.kernel import max as tl_max
from tilelang.frontend.kernel import sum as tl_sum
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, bf16
from tilelang.ir.kernel import Kernel
from tilelang.ir.types import Tile
from tilelang.library._common import build_kernel, check_args, resolve_device
from tilelang.library.elementwise import chunked_design


def softmax_kernel(rows: int, cols: int, dtype: DType) -> Kernel:
    """``y[i] = exp(x[i] - max(x[i])) / sum(exp(x[i] - max(x[i])))`` for each of ``rows`` rows.

    Raises:
        DesignError: for an integer dtype.
    """
    if not dtype.is_float:
        raise DesignError(f"softmax needs a float dtype (bf16 or f32), got {dtype}")
    t = Tile[(rows, cols), dtype]

    def body(x: object, y: object) -> None:
        # each step is stored into the output row and read back: no row-sized temporaries, which
        # would not fit a core's 1 KiB stack (docs/planner.md "Resource model")
        for i in range(rows):
            y[i] = x[i] - tl_max(x[i])  # type: ignore[index]
            y[i] = exp(y[i])  # type: ignore[index]
            y[i] = y[i] / tl_sum(y[i])  # type: ignore[index]

    return build_kernel(f"softmax_{rows}x{cols}_{dtype}", {"x": t, "y": t}, body)


def softmax(rows: int, cols: int, dtype: DType = bf16, device: str | Device = "npu1",
            cores: int | tuple[int, int] | None = 1, rows_per_tile: int = 1, depth: int = 2) -> Design:
    """A design computing C = softmax(A) along each row of A (rows x cols).

    Args:
        rows, cols: shape of A and C.
        dtype: bf16 or f32. Every op rounds to it (bf16 ops compute in f32 and
            round once), so bf16 results are within about 1e-2 relative of the
            exact softmax for inputs of moderate range; f32 within 1e-5.
        device: device name or model.
        cores: None (the grid with the most cores, then rows, the shims feed and ``rows`` splits over:
            :func:`~tilelang.library.elementwise.chunk_grid`), a count, or (rows, cols).
        rows_per_tile: rows per kernel call (one fifo element).
        depth: buffers per fifo.

    Returns:
        The traced design.

    Raises:
        DesignError: an integer dtype, or rows not a multiple of cores x rows_per_tile.
    """
    check_args("softmax", {"rows": rows, "cols": cols, "rows_per_tile": rows_per_tile, "depth": depth},
               {"dtype": dtype})
    dev = resolve_device(device)
    kern = softmax_kernel(rows_per_tile, cols, dtype)
    return chunked_design(f"softmax_{rows}x{cols}", kern, {"x": "A", "y": "C"}, rows, dev, cores, {}, depth)


__all__ = ["softmax", "softmax_kernel"]
