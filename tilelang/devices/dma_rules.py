"""Access-pattern rules every AIE DMA shares, as data and one check.

A BD walks its wrap dimensions with a positive step: the step fields encode ``stride - 1``
([AM025] AIE-ML DMA_BD "D0_Stepsize ... range [1:...]"), and mlir-aie's verifier of NPU
transfers and BDs (``verifyStridesWraps`` in ``lib/Dialect/AIEX/IR/AIEXDialect.cpp``, March 2026
main) rejects a stride below 1 in any dimension of size above 1 ("Stride k must be a positive
integer"), except the outermost, iteration dimension, where stride 0 repeats the walk. So a
pattern may repeat (stride 0) only in its outermost dimension.
"""

from __future__ import annotations

#: Which dimension (outermost first) may have stride 0 with a size above 1: only index 0.
ZERO_STRIDE_DIMS = (0,)


def zero_stride_problem(sizes: tuple[int, ...], strides: tuple[int, ...]) -> str | None:
    """What is wrong with the pattern's stride-0 dimensions, or None.

    Args:
        sizes: dimension sizes, outermost first, with size-1 dimensions already dropped.
        strides: their strides in elements.
    """
    for k, (n, s) in enumerate(zip(sizes, strides, strict=True)):
        if n > 1 and s == 0 and k not in ZERO_STRIDE_DIMS:
            return (
                f"dimension {k} (size {n}) has stride 0, but a DMA repeats only in its outermost dimension "
                "(every other dimension of size > 1 needs a positive stride); make the repeated dimension "
                "the outermost one, or use .repeat(n)"
            )
    return None
