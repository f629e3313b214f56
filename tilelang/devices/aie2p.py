"""AIE2P (XDNA2, Ryzen AI "Strix" npu2) numbers and devices.

Sources as in ``aie2.py``: [F] docs/aie_facts.md, [TMh]/[TMc] mlir-aie's
AIETargetModel.h/.cpp. mlir-aie models npu2 with BaseNPU2TargetModel, a subclass of
AIE2TargetModel that overrides only the architecture tag, the shim burst lengths
and block formats: tiles, memories, locks, BDs and stream-switch ports are the
AIE2 ones, so this file reuses them. What differs here is the compute rate.
"""

from __future__ import annotations

from tilelang.devices.aie2 import (
    AIE2_COMPUTE,
    AIE2_MEM,
    AIE2_SHIM_NOC,
    AIE2_SHIM_PL,
    BURST_LATENCY_NS,
    DDR_ACCESS_BYTES,
    OUTSTANDING_BURSTS,
    SHIM_TASK_QUEUE,
    TASK_ISSUE_NS,
)
from tilelang.devices.model import Device
from tilelang.devices.spec import ArchSpec, HostMemory

AIE2P_MACS: tuple[tuple[str, float], ...] = (
    # [F] "Compute rates": AIE2P int8 512 (derived from the intrinsic shapes: mlir-aie's npu2
    # i8 kernel shape 8x8x8); agrees with the amdxdna driver's npu4_get_tops, 4096 ops per
    # column per cycle = 2048 MACs over a column's 4 cores.
    ("i8", 512.0),
    ("i16", 128.0),  # [F] AIE2P int16 128; mlir-aie's npu2 i16 kernel shape 4x4x8
    # bf16 as mlir-aie's npu2 matmul examples and IRON's GEMM build it by default: emulated
    # with bfp16 (AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16, kernel shape 8x8x8). Sources
    # disagree on its rate. 256: amd/IRON iron/operators/flm/gemm/README.md, "8x8x8 mmul lowers
    # to 2 bfp16-emulated macs" on NPU2 (512 MACs in two MAC issues) against "4 native 4x8x4 bf16
    # macs" on NPU1 ("two macs per 8x8x8 shape against four"), and [F] 256. 512: the same README
    # says NPU1 has "a quarter of the per-tile bf16 mac throughput" (4 x 128), and AMD presents
    # Block FP16 as combining "the performance of 8-bit" with 16-bit accuracy (AnandTech, Ryzen
    # AI 300 / XDNA 2). Picked 256: the instruction count is the one statement about the
    # emulated bf16 path itself, while the 512 figures fit bfp16 operands (FLM pre-quantizes B
    # to bfp16; AMD's claim is about the bfp16 format), kept as mode "bfp16" below.
    ("bf16", 256.0),
    ("i32", 32.0),  # estimate, unconfirmed: a quarter of int16, as on AIE2 (aie2.py)
    # estimate: emulated, bf16 / 6 as on AIE2 (aie2.py: six bf16 products in the default accuracy mode)
    ("f32", 256.0 / 6.0),
)

#: Other matmul datapaths of AIE2P (not what the cost model uses; see AIE2P_MACS):
AIE2P_MAC_MODES: tuple[tuple[str, str, float], ...] = (
    # bf16 operands converted to bfp16 on both sides with a bfp16 MAC per 8x8x8 (operands
    # already in bfp16): the int8 rate, as AMD presents Block FP16 ("the performance of 8-bit",
    # AnandTech on XDNA 2) and as the FLM README's "a quarter" implies against NPU1's 128.
    ("bf16", "bfp16", 512.0),
    # Plain bf16 MACs, without the emulation. Estimate, unconfirmed: AIE2's native 4x8x4 bf16
    # rate (128). mlir-aie's non-emulated npu2 kernel uses a 4x8x8 shape, but AIE-API builds
    # AIE2P's larger bf16 mmul from emulated intrinsics (aie_api detail/aie2p
    # emulated_mmul_intrinsics.hpp: mac_8x8_8x4_bf16), so no more than the 4x8x4 rate is assumed.
    ("bf16", "native", 128.0),
)

AIE2P = ArchSpec(
    name="aie2p",
    compute=AIE2_COMPUTE,
    mem=AIE2_MEM,
    shim_noc=AIE2_SHIM_NOC,
    shim_pl=AIE2_SHIM_PL,  # unused: npu2 has no PL shims ([TMh] isShimPLTile false)
    macs=AIE2P_MACS,
    affinity="west",  # [TMc] inherited AIE2TargetModel::isLegalMemAffinity
    lock_max=63,  # [TMc] AIE2PTargetModel inherits AIE2's getMaxLockValue 0x3F
    host_sequence=True,  # as npu1: aiex.runtime_sequence on npu2 (mlir-aie's npu2 programming examples)
    mac_modes=AIE2P_MAC_MODES,
)

# npu2 AIE clock: 1.8 GHz, the top DPM level of the amdxdna driver's Strix clock table
# (xdna-driver src/driver/amdxdna/npu4_regs.c: npu4_dpm_clk_table {npuclk, hclk} pairs from
# {396, 792} to {1267, 1800}; npu4_get_tops: max TOPS = 4096 ops per column per cycle x
# the top level's hclk, so hclk is the array clock). Strix Halo (npu5) shares the table.
# The default power mode runs it for a context with no QoS (aie2.py, _NPU1_CLOCK_HZ).
_CLOCK_HZ = 1.8e9
# Stream width: 64 bits. Sources disagree: AM027 (AIE-ML v2) "a 64-bit AXI4-Stream crossbar" and
# UG1603 "32-bit for AIE-ML and 64-bit for AIE-ML v2", but AIE-ML v2 is mlir-aie's AIE2PS (Versal AI
# Edge Gen 2, xcve3858), a separate architecture from npu2's AIE2P, and mlir-aie gives npu2 AIE2's
# stream-switch ports. A measurement decides: mlir-aie's nightly kernel checks on a Krackan (npu2,
# kernel-checks/npu2/latest.json) run a copy of 2048 int32 per call on one core fed by one shim MM2S
# channel and drained by one S2MM channel, "npu_us" 105.73 for 16 calls and 253.26 for 256, 0.615 us per
# further call: 8 KiB each way, 13.3 GB/s, 7.4 bytes per cycle even at the driver's top 1.8 GHz. A
# 32-bit stream carries 4, so npu2's DMA-to-core path is wider than 32 bits; AM027's 64 is taken
# (benchmarks/accuracy.py: that row and the f32 -> bf16 convert row beside it are calibration rows).
_STREAM_BITS = 64
# Unconfirmed: the AIE2 512-bit vector width (aie2.py) assumed unchanged.
_VECTOR_BITS = 512


# Host memory as npu2's shim DMAs see it (aie2.py gives the shared estimates and sources).
# DDR bandwidth: amd/IRON PR 195 (FLM GEMM, NPU2): "118 MB at 68 GB/s, against a
# memcpy-measured 63-70 GB/s roof for mixed read/write traffic"; 68 GB/s is the figure the
# PR itself prices DDR traffic at. Burst lengths: mlir-aie BaseNPU2TargetModel::
# getShimBurstEncodingsAndLengths {(0,64), (1,128), (2,256), (3,512)}: npu2 adds 512 B.
NPU2_HOST_MEMORY = HostMemory(
    bytes_per_second=68e9,
    burst_bytes=(64, 128, 256, 512),
    access_bytes=DDR_ACCESS_BYTES,
    latency_ns=BURST_LATENCY_NS,
    outstanding=OUTSTANDING_BURSTS,
    task_queue=SHIM_TASK_QUEUE,
    task_issue_ns=TASK_ISSUE_NS,
)


def _npu2(cols: int) -> Device:
    """npu2 with ``cols`` columns: [F] "8 x 6 ... as npu1 (32 cores)"."""
    return Device(
        name="npu2" if cols == 8 else f"npu2_{cols}col",
        family="aie2p",
        arch=AIE2P,
        cols=cols,  # [TMh] NPU2TargetModel::columns 8; Virtualized: the given count
        rows=6,  # [TMh] BaseNPU2TargetModel::rows 6
        # [F] AIEDevice npu2=8, npu2_1col..7col=9..15
        aie_device_id=8 if cols == 8 else 8 + cols,
        clock_hz=_CLOCK_HZ,
        stream_bits=_STREAM_BITS,
        vector_bits=_VECTOR_BITS,
        mem_rows=(1,),  # [TMh] BaseNPU2TargetModel::isMemTile row == 1
        # [TMh] BaseNPU2TargetModel::isShimNOCTile: row == 0
        noc_columns=tuple(range(cols)),
        host_memory=NPU2_HOST_MEMORY,
    )


#: Every AIE2P device this module defines.
DEVICES: tuple[Device, ...] = tuple(_npu2(c) for c in (8, 1, 2, 3, 4, 5, 6, 7))
