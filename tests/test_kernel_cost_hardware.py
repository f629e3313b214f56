"""The kernel cost model's memory ports against calls traced on hardware.

mlir-aie's nightly kernel checks trace one call of each of IRON's kernels on a Phoenix (npu1) and
a Krackan (npu2) in turbo mode (``kernel-checks/npu1/latest.json`` and ``npu2/latest.json``, one CI
run; benchmarks/accuracy.py, [KC]). A copy or a zeroing does nothing but load and store, so its
cycles test the core's load and store widths (``tilelang.devices.costs.CorePorts``), which come from
architecture sources, not from these figures: 256-bit accesses on AIE-ML, 512-bit on AIE2P.
"""

from __future__ import annotations

import pytest

import tilelang as tl
from simulator import cost

#: (kernel, elements, dtype, npu1 cycles, npu2 cycles) as the two files give them ("cycles": "value").
TRACED = [
    ("passthrough/1024x16/int16", 1024, tl.i16, 72, 42),
    ("passthrough/2048x16/int32", 2048, tl.i32, 264, 138),
    ("passthrough/4096x16/int16", 4096, tl.i16, 264, 138),
    ("mm/64x32x64x16/int8_int32 init[2] (zero C)", 4096, tl.i32, 518, 262),
]


def _copy(n: int, dt, zero: bool):  # noqa: ANN001 - a tilelang dtype
    t = tl.Tile[(n,), dt]
    if zero:
        def k(c: t):
            c[...] = 0
    else:
        def k(a: t, c: t):
            c[...] = a
    k.__name__ = "zero" if zero else "copy"
    return tl.kernel(k)


@pytest.mark.parametrize(("row", "n", "dt", "npu1", "npu2"), TRACED, ids=[r[0] for r in TRACED])
def test_load_and_store_bound_calls_match_their_traced_cycles(row, n, dt, npu1, npu2) -> None:
    kern = _copy(n, dt, zero="zero" in row)
    for device, traced in (("npu1", npu1), ("npu2", npu2)):
        priced = cost.kernel_cycles(kern, tl.device(device))
        assert abs(priced - traced) <= 0.1 * traced, f"{row} on {device}: priced {priced}, traced {traced}"
