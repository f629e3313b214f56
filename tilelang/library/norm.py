"""``tl.library.rms_norm`` and ``tl.library.layer_norm``: row-wise normalisations, rows dealt to the cores.

mlir-aie's ``aie_kernels/norm`` kernels (IRON's ``rms_norm`` and ``layer_norm`` operators) normalise one row
per call with ``eps = 1e-5`` and no affine weights (the kernel checks' "gamma=1, beta=0"). Here each call takes
``rows_per_tile`` rows; every row's statistics accumulate in f32 (a bf16 row is widened as it is read), the
inverse root is ``tl.rsqrt`` of one value per row, and the scaled row rounds once to the dtype. The rows move
as in :func:`~tilelang.library.elementwise` (memtile split/join per core column).

- ``rms_norm``: ``y = x * rsqrt(mean(x^2) + eps)``.
- ``layer_norm``: ``y = (x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps)``, the variance of the centred row
  (a pass over it after the mean's, as mlir-aie's ``layer_norm_f32``: no cancellation of ``E[x^2] - E[x]^2``).

On AIE-ML and AIE2P an f32 product is emulated with six bf16 products (docs/simulator.md "Constants"), a
product of two bf16 values is one. So for bf16 rows the kernels multiply in bf16 limbs, as mlir-aie's bf16
norm kernels do: a bf16 row's squares are exact; the f32 scale is split into two bf16 limbs (16 significant
bits, ``_split``), and layer_norm's centred row too, its high limb kept in the output row between passes
(its variance taken from that limb alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.kernel import rsqrt
from tilelang.frontend.kernel import sum as tl_sum
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, bf16, f32
from tilelang.ir.kernel import Kernel
from tilelang.ir.types import Tile
from tilelang.library._common import build_kernel, check_args, resolve_device
from tilelang.library.elementwise import chunked_design

#: IRON's default (mlir-aie kernel-checks catalogue: "eps=1e-5").
EPS = 1e-5


def _check(what: str, dtype: DType, eps: object) -> float:
    if not dtype.is_float:
        raise DesignError(f"{what} needs a float dtype (bf16 or f32), got {dtype}")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 <= eps < float("inf"):
        raise DesignError(f"{what}: eps must be a finite number >= 0, got {eps!r}")
    return float(eps)


def _split(v: object) -> tuple[object, object]:
    """``v`` (f32) as two bf16 limbs widened back to f32, ``v ~ hi + lo`` to 16 significant bits: products
    of limbs are bf16 products into the f32 accumulators, where a product of f32 values is emulated with
    six of them (docs/simulator.md "Constants"; mlir-aie's own norm kernels multiply in limbs too)."""
    hi = v.astype(bf16).astype(f32)  # type: ignore[attr-defined]
    return hi, (v - hi).astype(bf16).astype(f32)  # type: ignore[operator]


def _rms(x: Any, y: Any, i: int, n: int, eps: float, limbs: bool) -> None:
    row = lambda: x[i].astype(f32)  # noqa: E731 - each use reads the row again (no row-sized temporary)
    # a bf16 row's squares are exact f32 products; its scale multiplies in limbs
    r = rsqrt(tl_sum(row() * row()) * (1.0 / n) + eps)
    if limbs:
        r_hi, r_lo = _split(r)
        y[i] = (row() * r_hi + row() * r_lo).astype(bf16)
    else:
        y[i] = row() * r


def _layer(x: Any, y: Any, i: int, n: int, eps: float, limbs: bool) -> None:
    row = lambda: x[i].astype(f32)  # noqa: E731
    m = tl_sum(row()) * (1.0 / n)
    if not limbs:
        centred = lambda: row() - m  # noqa: E731
        y[i] = centred() * rsqrt(tl_sum(centred() * centred()) * (1.0 / n) + eps)
        return
    # the centred row in two limbs, the high one kept in the output row between the passes, the low one
    # recomputed from it; the variance from the high limb alone (each square within 2^-8 of the exact one,
    # so the scale within 2^-9: with the result's rounding, 2^-8 of it), the result from both
    y[i] = (row() - m).astype(bf16)
    hi = lambda: y[i].astype(f32)  # noqa: E731
    lo = lambda: ((row() - m) - hi()).astype(bf16).astype(f32)  # noqa: E731
    s_hi, s_lo = _split(rsqrt(tl_sum(hi() * hi()) * (1.0 / n) + eps))
    y[i] = (hi() * s_hi + hi() * s_lo + lo() * s_hi).astype(bf16)


def _row_kernel(what: str, normalise: Callable[[Any, Any, int, int, float, bool], None], rows: int, cols: int,
                dtype: DType, eps: float) -> Kernel:
    eps = _check(what, dtype, eps)
    t = Tile[(rows, cols), dtype]

    def body(x: object, y: object) -> None:
        for i in range(rows):
            normalise(x, y, i, cols, eps, dtype == bf16)

    return build_kernel(f"{what}_{rows}x{cols}_{dtype}", {"x": t, "y": t}, body)


def rms_norm_kernel(rows: int, cols: int, dtype: DType, eps: float = EPS) -> Kernel:
    """``y[i] = x[i] * rsqrt(mean(x[i]^2) + eps)`` for each of ``rows`` rows (statistics in f32).

    Raises:
        DesignError: an integer dtype or a bad ``eps``.
    """
    return _row_kernel("rms_norm", _rms, rows, cols, dtype, eps)


def layer_norm_kernel(rows: int, cols: int, dtype: DType, eps: float = EPS) -> Kernel:
    """``y[i] = (x[i] - m) * rsqrt(mean((x[i] - m)^2) + eps)``, ``m = mean(x[i])``, for each of ``rows`` rows.

    Raises:
        DesignError: an integer dtype or a bad ``eps``.
    """
    return _row_kernel("layer_norm", _layer, rows, cols, dtype, eps)


def _design(what: str, make: Callable[..., Kernel], rows: int, cols: int, dtype: DType, device: str | Device,
            cores: int | tuple[int, int] | None, rows_per_tile: int, eps: float, depth: int) -> Design:
    check_args(what, {"rows": rows, "cols": cols, "rows_per_tile": rows_per_tile, "depth": depth}, {"dtype": dtype})
    kern = make(rows_per_tile, cols, dtype, eps)
    return chunked_design(f"{what}_{rows}x{cols}", kern, {"x": "A", "y": "C"}, rows, resolve_device(device), cores,
                          {}, depth)


def rms_norm(rows: int, cols: int, dtype: DType = bf16, device: str | Device = "npu1",
             cores: int | tuple[int, int] | None = 1, rows_per_tile: int = 1, eps: float = EPS,
             depth: int = 2) -> Design:
    """A design computing ``C = A * rsqrt(mean(A^2) + eps)`` along each row of A (rows x cols).

    Args:
        rows, cols: shape of A and C.
        dtype: bf16 or f32; the sum of squares and the scaling are computed in f32 and the result rounded
            once to ``dtype``.
        device: device name or model.
        cores: None (the grid with the most cores, then rows, the shims feed and ``rows`` splits over:
            :func:`~tilelang.library.elementwise.chunk_grid`), a count, or (rows, cols).
        rows_per_tile: rows per kernel call (one fifo element).
        eps: added to the mean square before the inverse root.
        depth: buffers per fifo.

    Raises:
        DesignError: an integer dtype, a bad ``eps``, or rows not a multiple of cores x rows_per_tile.
    """
    return _design("rms_norm", rms_norm_kernel, rows, cols, dtype, device, cores, rows_per_tile, eps, depth)


def layer_norm(rows: int, cols: int, dtype: DType = bf16, device: str | Device = "npu1",
               cores: int | tuple[int, int] | None = 1, rows_per_tile: int = 1, eps: float = EPS,
               depth: int = 2) -> Design:
    """A design computing ``C = (A - mean) * rsqrt(var + eps)`` along each row of A (rows x cols), without
    affine weights.

    Args:
        rows, cols: shape of A and C.
        dtype: bf16 or f32; the mean, the variance of the centred row and the scaling are computed in f32,
            the result rounded once to ``dtype``.
        device, cores, rows_per_tile, eps, depth: as :func:`rms_norm`.

    Raises:
        DesignError: an integer dtype, a bad ``eps``, or rows not a multiple of cores x rows_per_tile.
    """
    return _design("layer_norm", layer_norm_kernel, rows, cols, dtype, device, cores, rows_per_tile, eps, depth)


__all__ = ["EPS", "layer_norm", "layer_norm_kernel", "rms_norm", "rms_norm_kernel"]
