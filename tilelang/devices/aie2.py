"""AIE2 / AIE-ML numbers (Versal AI Edge xcve*, Ryzen AI npu1) and their devices.

Sources, cited on each number:
  [F]   docs/aie_facts.md (section named in the comment).
  [TMh] mlir-aie include/aie/Dialect/AIE/IR/AIETargetModel.h, class AIE2TargetModel
        and the per-device classes (VE2302/VE2802/BaseNPU1/VirtualizedNPU1).
  [TMc] mlir-aie lib/Dialect/AIE/IR/AIETargetModel.cpp,
        AIE2TargetModel::getNumDestSwitchboxConnections (master = "out") and
        getNumSourceSwitchboxConnections (slave = "in").
  [AM025] AIE-ML register reference (DMA_BD* fields of MEMORY_MODULE / MEMORY_TILE_MODULE).
  [UG1603] AI Engine-ML kernel and graph programming guide, "Memory and DMA Programming".
  [PG4c] mlir-aie programming guide, section 4c (vector_scalar_mul, matmul figures).
  [AM020] Versal AIE-ML architecture manual, "AIE-ML to Programmable Logic Interface".
AIE-ML (xcve*) and AIE2 (npu1) share one architecture in mlir-aie: both use
AIE2TargetModel, so one ArchSpec serves family "aieml" and family "aie2".
"""

from __future__ import annotations

from tilelang.devices.model import Device
from tilelang.devices.spec import ArchSpec, HostMemory, PlioSpec, TileSpec
from tilelang.devices.switch_rules import AIE2_COMPUTE_RULES, AIE2_MEM_RULES, AIE2_SHIM_RULES

# Stream-switch ports of a compute tile; [F] "Stream switch (AIE2 compute tile)" and
# [TMc] core-tile cases. North/East/West drop to 0 at the array edge (model.py).
# [TMc] core Dest: Core 1, DMA 2, FIFO 1, North 6, South 4, East/West 4.
_COMPUTE_OUT = (
    ("Core", 1),
    ("DMA", 2),
    ("FIFO", 1),
    ("North", 6),
    ("South", 4),
    ("East", 4),
    ("West", 4),
)
# [TMc] core Source: Core 1, DMA 2, FIFO 1, North 4, South 6, East/West 4,
# Trace 2 (core trace and memory trace).
_COMPUTE_IN = (
    ("Core", 1),
    ("DMA", 2),
    ("FIFO", 1),
    ("North", 4),
    ("South", 6),
    ("East", 4),
    ("West", 4),
    ("Trace", 2),
)

AIE2_COMPUTE = TileSpec(
    kind="compute",
    memory_bytes=65536,  # [TMh] getLocalMemorySize 0x10000; [F] "64 KiB"
    banks=4,  # [TMh] getNumBanks 4 for non-memtiles; [F] "modelled as 4 banks (physically 8)"
    locks=16,  # [TMh] getNumLocks 16 outside memtiles; [F] locks row
    bds=16,  # [TMh] getNumBDs 16; [F] buffer descriptors row
    dma_s2mm=2,  # [F] "core 2+2"; [UG1603] tile DMA 2 S2MM / 2 MM2S
    dma_mm2s=2,
    dma_dims=3,  # [UG1603] AIE-ML tile DMA "3D"; mlir-aie rejects a 4th dim on a core BD
    bd_bits=(
        ("len", 14),  # [AM025] DMA_BD*_0 Buffer_Length bits 13:0; [F] "14 bits core"
        ("wrap", 8),  # [AM025] D0_Wrap 20:13, D1_Wrap 28:21; [F] "wrap 8"
        ("stride", 13),  # [AM025] D0/D1 Stepsize 12:0, range [1:8k]; [F] "stride 13"
        # [AM025] Iteration_Wrap 18:13, range [1:64]; [F] "iteration 6 bits"
        ("iteration", 6),
    ),
    ports_out=_COMPUTE_OUT,
    ports_in=_COMPUTE_IN,
    switch=AIE2_COMPUTE_RULES,  # [TMc] isLegalTileConnection; see switch_rules.py
)

AIE2_MEM = TileSpec(
    kind="mem",
    memory_bytes=524288,  # [TMh] getMemTileSize 0x80000; [F] "512 KiB"
    banks=8,  # [TMh] getNumBanks 8 for memtiles; [F] "8 banks"
    locks=64,  # [TMh] getNumLocks 64 for memtiles; [F] "64 per memtile"
    bds=48,  # [TMh] getNumBDs 48 (even channels BDs 0-23, odd 24-47, isBdChannelAccessible)
    bd_pools=2,  # [TMh] isBdChannelAccessible: even channels BDs 0-23, odd 24-47
    dma_s2mm=6,  # [F] "memtile 6+6"; [UG1603] memory tile 6/6
    dma_mm2s=6,
    dma_dims=4,  # [UG1603] memory tile DMA "4D"; [F] "memtile 4-d"
    bd_bits=(
        # [AM025] MEMORY_TILE DMA_BD*_0 Buffer_Length 16:0; [F] "17 bits memtile"
        ("len", 17),
        # [AM025] MEMORY_TILE D2_Wrap 26:17; [F] "wrap 10"
        ("wrap", 10),
        # [AM025] MEMORY_TILE D2_Stepsize 16:0, range [1:128k]; [F] "stride 17"
        ("stride", 17),
        # [F] "iteration 6 bits"; aie-rt memtile IterCurrMax (1 << 6) - 1
        ("iteration", 6),
    ),
    # [TMc] memtile Dest: DMA 6, North 6, South 4; no Core/FIFO/East/West ([F] "no East/West").
    ports_out=(("DMA", 6), ("North", 6), ("South", 4)),
    # [TMc] memtile Source: DMA 6, North 4, South 6, Trace 1.
    ports_in=(("DMA", 6), ("North", 4), ("South", 6), ("Trace", 1)),
    switch=AIE2_MEM_RULES,  # [TMc] isLegalTileConnection; see switch_rules.py
)

# Shim switch ports, [TMc] shim cases (identical for NoC and PL shims there);
# [F] "Shim: North 6 out / 4 in, South 6 out / 8 in, East/West 4". The shim DMA
# is not a switch bundle: it reaches the switch through the shim mux and the
# South ports (mlir-aie getNumDest/SourceShimMuxConnections DMA 2).
_SHIM_OUT = (("FIFO", 1), ("North", 6), ("South", 6), ("East", 4), ("West", 4))
_SHIM_IN = (
    ("FIFO", 1),
    ("North", 4),
    ("South", 8),
    ("East", 4),
    ("West", 4),
    ("Trace", 1),
)

AIE2_SHIM_NOC = TileSpec(
    kind="shim",
    memory_bytes=0,  # [TMh] shim tiles "do not contain any memory"
    banks=0,
    locks=16,  # [TMh] getNumLocks 16 outside memtiles; [F] "16 per core/shim tile"
    bds=16,  # [TMh] getNumBDs 16; [F] "16 per core/shim tile"
    dma_s2mm=2,  # [F] "shim 2+2"; [UG1603] interface tile DMA 2/2
    dma_mm2s=2,
    dma_dims=3,  # [UG1603] interface tile DMA "3D" plus the repeat; [F] "shim 3-d + repeat"
    bd_bits=(
        ("len", 32),  # [F] "32 bits shim"
        # mlir-aie NpuDmaMemcpyNdOp::verify: sizes <= 0x3FF; [F] "wrap 10"
        ("wrap", 10),
        # same verifier: strides <= 0x100000, "[1:1M]"; [F] "stride 20"
        ("stride", 20),
        # same verifier: "Size 3 exceeds the [1:64] range"; [F] "6 bits"
        ("iteration", 6),
    ),
    ports_out=_SHIM_OUT,
    ports_in=_SHIM_IN,
    switch=AIE2_SHIM_RULES,  # [TMc] isLegalTileConnection; see switch_rules.py
)

# A PL-only shim (xcve* columns outside the NoC list) has no shim DMA ([TMh]
# isShimPLTile: "do not include a ShimDMA"), so no channels, BDs or DMA locks.
AIE2_SHIM_PL = TileSpec(
    kind="shim",
    memory_bytes=0,
    banks=0,
    locks=0,  # derived: locks of a shim tile serve its DMA, which a PL shim lacks
    bds=0,
    dma_s2mm=0,
    dma_mm2s=0,
    dma_dims=0,
    bd_bits=(("len", 0), ("wrap", 0), ("stride", 0), ("iteration", 0)),
    ports_out=_SHIM_OUT,
    ports_in=_SHIM_IN,
    switch=AIE2_SHIM_RULES,  # [TMc] isLegalTileConnection; see switch_rules.py
)

AIE2_MACS: tuple[tuple[str, float], ...] = (
    # [F] "Compute rates": AIE2 int8 256 (derived from the matmul intrinsic shapes)
    ("i8", 256.0),
    # [F] int16 64 (programming guide); [PG4c] 64^3 int16 matmul ideal 2048 cycles
    ("i16", 64.0),
    ("bf16", 128.0),  # [F] bf16 128
    # Estimate, unconfirmed: no 32x32-bit multiplier in the vector unit; a 32-bit
    # product is built from 32x16-bit halves, taken here as a quarter of int16.
    ("i32", 16.0),
    # No native f32 MAC ([F] "emulated"; AM020 / UG1603 "Floating-Point Operations": f32 emulated
    # with bf16, "fast" the default accuracy). Six bf16 partial products per f32 product in that mode:
    # mlir-aie AIEVecToLLVM.cpp convertToEmulatedFP32MulElem, "float a*b would require 6 mac
    # operations", "the default option to the aiecompiler" (its elementwise lowering; the matmul
    # emulation's count taken to be the same, estimate): bf16 / 6.
    ("f32", 128.0 / 6.0),
)

AIE2 = ArchSpec(
    name="aie2",
    compute=AIE2_COMPUTE,
    mem=AIE2_MEM,
    shim_noc=AIE2_SHIM_NOC,
    shim_pl=AIE2_SHIM_PL,
    macs=AIE2_MACS,
    # [TMc] AIE2TargetModel::isLegalMemAffinity: own (isMemEast = internal), west,
    # north, south unless the south tile is a memtile; [UG1603] "north, south and west".
    affinity="west",
    lock_max=63,  # [F] "locks: semaphores, max value 63" (AIE2TargetModel getMaxLockValue 0x3F)
    host_sequence=True,  # [F] "mlir-aie dialect": aiex.runtime_sequence, npu.dma_memcpy_nd / dma_wait
)

# Versal AIE-ML clock: AM020's nominal AIE-ML clock for -1L parts (PL interface
# bandwidth section); no figure per part was found, so VE2302/VE2802 keep 1 GHz.
_CLOCK_HZ = 1.0e9
# npu1 AIE clock: 1.6 GHz, the top DPM level of the amdxdna driver's npu1 clock table
# (xdna-driver src/driver/amdxdna/npu1_regs.c: npu1_dpm_clk_table {npuclk, hclk} pairs
# from {400, 800} to {847, 1600}, NPU1_HCLK_FREQ_MAX 1600). hclk is the array clock:
# mlir-aie issue 2017 answers "the clock frequency of the NPU" with this table, and the
# driver's npu4_get_tops computes TOPS as hclk x ops per column. Lower power modes run
# lower levels (0.8 to 1.31 GHz); cycles do not depend on it, seconds do. The default power
# mode runs the level the contexts ask for, and a context with no QoS asks for the top one
# (xdna-driver src/driver/amdxdna/aie2_pm.c, aie2_pm_calc_dpm_level: no valid QoS or no
# requested GOPS -> max_dpm_level).
_NPU1_CLOCK_HZ = 1.6e9
# [F] "Stream width: 32 bits per cycle per channel on AIE1/AIE2 (npu1)".
_STREAM_BITS = 32
# Vector width for elementwise throughput: [PG4c] 1024 int16 elements in an ideal
# 32 cycles = 32 lanes x 16 bits = 512 bits per cycle (derived).
_VECTOR_BITS = 512

# -- host memory as the shim DMA sees it (simulator/memory.py Ddr; docs/simulator.md) --
# Burst lengths: mlir-aie AIE2TargetModel::getShimBurstEncodingsAndLengths {(0,64), (1,128),
# (2,256)}; getShimBurstLength uses the largest when a BD names none (the default).
AIE2_SHIM_BURSTS = (64, 128, 256)
# The smallest DDR access a burst costs. Estimate, unconfirmed: the smallest shim burst
# encoding above (64 B); a run shorter than it is taken to cost a whole 64 B access. No
# published figure tests it alone (in the 16-byte-run figure below the in-flight limit binds).
DDR_ACCESS_BYTES = 64
# First-data latency of one shim burst through the NoC to DDR. Estimate, unconfirmed: no
# public figure found; a DRAM round trip from a non-CPU agent of a few hundred ns.
BURST_LATENCY_NS = 500.0
# Bursts one shim channel keeps in flight. Fitted (no public figure for the limit itself;
# AM020 "Array Interface DMA Memory Mapped AXI4 Master Interface" gives the 128-bit AXI4 read
# interface two MM2S channels share, not its outstanding transactions) to the published figure
# the model finds most bound by one shim channel: mlir-aie's whole_array GEMM at 2048^3 i8 ->
# i32 with 32^3 tiles on npu2's 8 columns, "| 2048³ | i8→i32 | 32³ | 8.73 ms | 1.97 TOPS |"
# (Jonas-Augustinus-Linus/ryzen-npu-linux docs/MLIR-AIE.md, Strix Point, "NPU time ...
# excluding host launch overhead"): every tile row is a 32-byte run, and the model spends 73%
# of that run waiting on one B channel. 15 bursts in flight at BURST_LATENCY_NS simulate 8.76 ms.
# A calibration row of benchmarks/accuracy.py. (It was 27, fitted to amd/IRON's flm/gemm README
# 16-byte-run figure, 0.7 x 10 GB/s / 8 = 0.875 GB/s per channel, itself derived; that row is now
# a validation row, and 27 made every GEMM with 32- to 128-byte runs 1.4x to 2.3x too fast.)
OUTSTANDING_BURSTS = 15
# Tasks one shim channel can hold queued: AM020 "Array Interface DMA Memory Mapped AXI4
# Master Interface": "queue depth is four tasks per channel".
SHIM_TASK_QUEUE = 4
# Time the runtime sequence takes to issue one move: derived estimate. mlir-aie lowers a
# move (npu.dma_memcpy_nd; lib/Dialect/AIEX/Transforms/AIEDmaToNpu.cpp) to three sequence
# instructions: npu.writebd (the shim BD),
# npu.address_patch (its host address) and npu.push_queue (the task). amd/IRON
# iron/operators/flm/gemm/README.md measures one instruction writing a word into a core's
# memory at "~66 ns per core" ("every word is ~2 us of dispatch latency" for 32 cores);
# taken as the cost of each of the three: 3 x 66 ns.
TASK_ISSUE_NS = 3 * 66.0
# DDR bandwidth for npu1: mlir-aie PR 2559, programming_examples/basic/memcpy "Effective
# Bandwidth: 66.5763 GB/s" with the AxCache = 2 shim BDs mlir-aie emits (55.5307 before);
# the PR does not state the device (mlir-aie's CI NPUs are Phoenix npu1 parts).
NPU1_DDR_BYTES_PER_SECOND = 66.5763e9
NPU1_HOST_MEMORY = HostMemory(
    bytes_per_second=NPU1_DDR_BYTES_PER_SECOND,
    burst_bytes=AIE2_SHIM_BURSTS,
    access_bytes=DDR_ACCESS_BYTES,
    latency_ns=BURST_LATENCY_NS,
    outstanding=OUTSTANDING_BURSTS,
    task_queue=SHIM_TASK_QUEUE,
    task_issue_ns=TASK_ISSUE_NS,
)
# Versal AI Edge parts (VEK280 and the like): no public figure for what the shim DMAs reach;
# estimate, unconfirmed: npu1's measured figure. Their BDs may be static (no runtime sequence)
# but mlir-aie drives them with one, so the npu1 task model is kept.
XCVE_HOST_MEMORY = NPU1_HOST_MEMORY

# mlir-aie AIEDevice enum values, [F] "Enum attributes": npu1=4, npu1_1col..3col=5..7.
_NPU1_IDS = {1: 5, 2: 6, 3: 7, 4: 4}


def _npu1(cols: int) -> Device:
    """npu1 with ``cols`` columns: [F] "4 x 6 ... row 0 shim (all NoC), row 1 memtile"."""
    return Device(
        name="npu1" if cols == 4 else f"npu1_{cols}col",
        family="aie2",
        arch=AIE2,
        cols=cols,
        rows=6,  # [TMh] BaseNPU1TargetModel::rows 6
        aie_device_id=_NPU1_IDS[cols],
        clock_hz=_NPU1_CLOCK_HZ,
        stream_bits=_STREAM_BITS,
        vector_bits=_VECTOR_BITS,
        mem_rows=(1,),  # [TMh] BaseNPU1TargetModel::isMemTile row == 1
        # [TMh] VirtualizedNPU1TargetModel::isShimNOCTile: row == 0
        noc_columns=tuple(range(cols)),
        host_memory=NPU1_HOST_MEMORY,
    )


NPU1_DEVICES: tuple[Device, ...] = tuple(_npu1(c) for c in (4, 1, 2, 3))

# PLIO of the Versal AIE-ML parts' PL shims (every shim column not in noc_columns; mlir-aie isShimPLTile).
# Channels: [AM020] "There are six streams from AIE-ML to PL and eight streams from PL to each AIE-ML
# column", with "32 GB/s from PL to each AIE-ML column" and "24 GB/s from each AIE-ML column to PL" at
# the nominal 1 GHz: 4 GB/s a stream, one 32-bit word per AIE-ML cycle. Widths: [UG1603] "input_plio/
# output_plio": "a single 32-bit, 64-bit, or 128-bit input or output AXI4-Stream port at the AI Engine-ML
# array interface". Width and PL clock by default: 64 bits at 500 MHz, the pair that gives [AM020]'s
# 4 GB/s a stream (and AIE1's default, aie1.py); [UG1603] lets a graph give each PLIO its own frequency.
AIEML_PLIO = PlioSpec(
    widths_bits=(32, 64, 128),
    default_bits=64,
    pl_clock_hz=500e6,
    channels_in=8,
    channels_out=6,
)

XCVE2302 = Device(
    name="xcve2302",
    family="aieml",
    arch=AIE2,
    cols=17,  # [TMh] VE2302TargetModel::columns 17; [F] "17 x 4"
    rows=4,  # [TMh] rows 4: one shim row, one memtile row, two core rows
    aie_device_id=2,  # [F] AIEDevice xcve2302=2
    clock_hz=_CLOCK_HZ,
    stream_bits=_STREAM_BITS,
    vector_bits=_VECTOR_BITS,
    mem_rows=(1,),  # [TMh] VE2302 isMemTile row == 1
    noc_columns=(2, 3, 6, 7, 10, 11),  # [TMh] VE2302TargetModel nocColumns
    host_memory=XCVE_HOST_MEMORY,
    plio=AIEML_PLIO,
)

XCVE2802 = Device(
    name="xcve2802",
    family="aieml",
    arch=AIE2,
    cols=38,  # [TMh] VE2802TargetModel::columns 38; [F] "38 x 11"
    rows=11,  # [TMh] rows 11: one shim row, two memtile rows, eight core rows
    aie_device_id=3,  # [F] AIEDevice xcve2802=3
    clock_hz=_CLOCK_HZ,
    stream_bits=_STREAM_BITS,
    vector_bits=_VECTOR_BITS,
    mem_rows=(1, 2),  # [TMh] VE2802 isMemTile row == 1 || row == 2
    noc_columns=(2, 3, 6, 7, 14, 15, 22, 23, 30, 31, 34, 35),  # [TMh] VE2802 nocColumns
    host_memory=XCVE_HOST_MEMORY,
    plio=AIEML_PLIO,
)

#: Every AIE2 / AIE-ML device this module defines.
DEVICES: tuple[Device, ...] = (*NPU1_DEVICES, XCVE2302, XCVE2802)
