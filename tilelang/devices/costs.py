"""Cited cost constants shared by the simulator's timing model and the planner's tiler.

The simulator (``simulator/cost.py``) charges kernel calls with these; the
tiler (``tilelang/plan/tiling_model.py``) estimates the same per-call costs
from them, so that the tiles it picks are the ones that simulate fastest. A
data module only: neither side imports the other.

Sources (short names used in the comments):
  [F]      docs/aie_facts.md, the section named.
  [PG4c]   mlir-aie programming guide, section 4c (vector_scalar_mul: 72 cycles
           measured, 32 ideal, for 1024 int16 elements on npu1).
  [I2735]  mlir-aie issue 2735 (whole-array GEMM; "kernels alone at most about 80%").
  [UG1079] AI Engine kernel guide.
  [UG1603] AI Engine-ML kernel and graph programming guide.
  [AM020]  AIE-ML architecture manual.
Constants marked "fitted" are set from the figure named and are therefore not
validated by it (docs/simulator.md, accuracy table, says which figures test).
"""

from __future__ import annotations

#: Bytes the load units move per cycle: [F] "Loads/stores: 2 x 256-bit loads and
#: 1 x 256-bit store per cycle (AIE-ML)"; [UG1079] the same for AIE1.
LOAD_BYTES_PER_CYCLE = 2 * 256 // 8
#: Bytes the store unit moves per cycle (same sources).
STORE_BYTES_PER_CYCLE = 256 // 8
#: Fixed cycles of one kernel call (call, loop prologue/epilogue, lock hand-off).
#: Fitted: [PG4c] measures 72 cycles for vector_scalar_mul (1024 x int16), whose
#: store-bound body is 2048 B / 32 B = 64 cycles in this model: 72 - 64 = 8.
CALL_OVERHEAD = 8
#: Unoverlapped cycles per output register block of a matmul (one inner-k loop's
#: pipeline fill and drain, accumulator moves). Fitted: [I2735] kernels alone reach
#: at most about 80% of peak, over its i16 and bf16 profiles; a 64^3 bf16 tile has 64
#: blocks of 8x8 over 2048 MAC cycles: 2048 / (2048 + 8 + 64 * 8) = 0.80 without loads.
#: With the operand re-reads the bf16 tile is load-bound and the model gives 72.5%,
#: the MAC-bound i16 tile 88.7% (benchmarks/accuracy.py): one constant cannot give both
#: 80%, and 8 leaves them on either side of it.
MATMUL_BLOCK_OVERHEAD = 8
#: Output register blocking of a matmul kernel: 2 x 2 intrinsic tiles, as the
#: mlir-aie matmul kernels (``mm.cc``) unroll; it sets how often A and B are re-read.
#: Its four accumulators also hide the two-cycle latency of a floating-point MAC
#: ([UG1603] "Floating-Point Operations"; [AM020] "Floating-Point Vector Unit": several
#: accumulator registers allow back-to-back MACs), so bf16 MACs issue every cycle.
MATMUL_REG_BLOCK = 2
#: Bytes one data-memory bank serves per cycle: one 256-bit access ([AM020] "Memory
#: Arbitration": one request per bank per cycle; the programmer-view bank is two
#: interleaved 128-bit banks, [AM020] "AIE-ML Tile Architecture").
BANK_BYTES_PER_CYCLE = 32
#: Bytes a tile DMA channel moves per data-memory access. Derived: [AM020] gives the
#: memory tile DMA 128-bit memory interfaces and calls it "similar to the AI Engine
#: tile DMA"; no figure for the compute-tile DMA itself was found.
DMA_ACCESS_BYTES = 16
#: Cycles a DMA channel spends starting a buffer descriptor (lock acquire, BD fetch)
#: before its first word moves. Estimate, unconfirmed: no public figure found; a lock
#: request and a BD read each take a few cycles.
BD_SETUP_CYCLES = 4

#: Kernel intrinsic shapes (m, k, n) per architecture and input dtype: mlir-aie
#: programming_examples/basic/matrix_multiplication (``microkernel_mac_dim_map``):
#: npu bf16 (4,8,4), i8 (4,8,8), i16 (4,4,4); npu2 bf16 (4,8,8) native, i8 (8,8,8),
#: i16 (4,4,8). AIE1 entries and the i32/f32 fallbacks are assumptions (unconfirmed).
MICROKERNEL: dict[str, dict[str, tuple[int, int, int]]] = {
    "aie2": {"bf16": (4, 8, 4), "i8": (4, 8, 8), "i16": (4, 4, 4)},
    "aie2p": {"bf16": (4, 8, 8), "i8": (8, 8, 8), "i16": (4, 4, 8)},
    "aie1": {"i8": (4, 16, 8), "i16": (4, 4, 4), "f32": (4, 8, 4)},
}
#: The intrinsic shape assumed for a dtype the table lacks (npu bf16's).
DEFAULT_SHAPE = (4, 8, 4)


def intrinsic_shape(macs: float) -> tuple[int, int, int]:
    """(m0, k0, n0) of the matmul intrinsic doing ``macs`` MACs per cycle.

    AIE2's shapes ([F] compute rates are "derived from the matmul intrinsic
    shapes"): int8 4x8x8 = 256, int16 4x4x4 = 64, bf16 4x8x4 = 128. Other rates
    keep m0 = n0 = 4 and scale k0 (at least 1).

    Args:
        macs: MACs per cycle of the core for the operand dtype.

    Returns:
        The intrinsic's (m0, k0, n0).
    """
    known = {256: (4, 8, 8), 64: (4, 4, 4), 128: (4, 8, 4), 512: (8, 8, 8)}
    if int(macs) in known and float(int(macs)) == macs:
        return known[int(macs)]
    return 4, max(1, round(macs / 16)), 4
