"""AIE1 numbers (Versal AI Core, VC1902 / VCK190) and the xcvc1902 device.

Sources, cited on each number:
  [F]   docs/aie_facts.md (section named in the comment).
  [TMh] mlir-aie include/aie/Dialect/AIE/IR/AIETargetModel.h, AIE1TargetModel and
        VC1902TargetModel.
  [TMc] mlir-aie lib/Dialect/AIE/IR/AIETargetModel.cpp,
        AIE1TargetModel::getNumDestSwitchboxConnections (master = "out") and
        getNumSourceSwitchboxConnections (slave = "in").
  [UG1079] AI Engine kernel and graph programming guide ("AI Engine Tile
        Interface", "Memory and DMA Programming", "AI Engine to PL Interface Performance").
  [UG1483] Vitis Model Composer user guide ("PLIO Attributes", "Specifying PLIO Frequency").
AIE1 has no memory tiles: row 0 is the shim row, every other row holds cores.
"""

from __future__ import annotations

from tilelang.devices.aie2 import BURST_LATENCY_NS, DDR_ACCESS_BYTES, OUTSTANDING_BURSTS
from tilelang.devices.model import Device
from tilelang.devices.spec import ArchSpec, HostMemory, PlioSpec, TileSpec
from tilelang.devices.switch_rules import AIE1_RULES

AIE1_COMPUTE = TileSpec(
    kind="compute",
    memory_bytes=32768,  # [TMh] AIE1 getLocalMemorySize 0x8000; [F] "32 KiB"
    banks=4,  # [TMh] AIE1 getNumBanks 4; [F] "4 banks"
    locks=16,  # [TMh] AIE1 getNumLocks 16 (binary: getMaxLockValue 1); [F] locks row
    bds=16,  # [TMh] AIE1 getNumBDs 16; [F] buffer descriptors row
    dma_s2mm=2,  # [F] "core 2+2"
    dma_mm2s=2,
    dma_dims=2,  # [F] "2-d (core)"; [UG1079] DMA features table: tile DMA "2D"
    bd_bits=(
        # Unconfirmed: 13 bits is what a 32 KiB memory needs in 32-bit words
        # (8192 words); the register field width was not seen in a primary source.
        ("len", 13),
        # unconfirmed: AIE1 2-D X/Y wrap width, not seen in a primary source
        ("wrap", 8),
        # unconfirmed: AIE1 2-D X/Y increment width, likewise
        ("stride", 8),
        # AIE1 BDs have no iteration dimension (an AIE2 addition)
        ("iteration", 0),
    ),
    # [TMc] AIE1 core Dest: Core, DMA, FIFO 2 each; North 6, South 4, East/West 4.
    ports_out=(
        ("Core", 2),
        ("DMA", 2),
        ("FIFO", 2),
        ("North", 6),
        ("South", 4),
        ("East", 4),
        ("West", 4),
    ),
    # [TMc] AIE1 core Source: Core, DMA, FIFO 2 each; North 4, South 6,
    # East/West 4, Trace 2.
    ports_in=(
        ("Core", 2),
        ("DMA", 2),
        ("FIFO", 2),
        ("North", 4),
        ("South", 6),
        ("East", 4),
        ("West", 4),
        ("Trace", 2),
    ),
    switch=AIE1_RULES,  # [TMc] isLegalTileConnection; see switch_rules.py
)

# Shim switch ports, [TMc] AIE1 shim cases (the same for NoC and PL shims there).
# The shim DMA reaches the switch through the shim mux and the South ports.
_SHIM_OUT = (("FIFO", 2), ("North", 6), ("South", 6), ("East", 4), ("West", 4))
_SHIM_IN = (
    ("FIFO", 2),
    ("North", 4),
    ("South", 8),
    ("East", 4),
    ("West", 4),
    ("Trace", 1),
)

AIE1_SHIM_NOC = TileSpec(
    kind="shim",
    memory_bytes=0,  # [TMh] shim tiles "do not contain any memory"
    banks=0,
    locks=16,  # [TMh] AIE1 getNumLocks 16
    bds=16,  # [TMh] AIE1 getNumBDs 16; [F] "16"
    dma_s2mm=2,  # [F] "shim 2+2"; mlir-aie getNum*ShimMuxConnections DMA 2
    dma_mm2s=2,
    dma_dims=1,  # unconfirmed: the AIE1 shim DMA is taken as linear only
    bd_bits=(
        ("len", 32),  # unconfirmed for AIE1 ([F] gives 32 bits for the AIE2 shim)
        ("wrap", 0),
        ("stride", 0),
        ("iteration", 0),
    ),
    ports_out=_SHIM_OUT,
    ports_in=_SHIM_IN,
    switch=AIE1_RULES,  # [TMc] isLegalTileConnection; see switch_rules.py
)

# PL shims have no shim DMA ([TMh] isShimPLTile: "do not include a ShimDMA").
AIE1_SHIM_PL = TileSpec(
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
    switch=AIE1_RULES,  # [TMc] isLegalTileConnection; see switch_rules.py
)

AIE1_MACS: tuple[tuple[str, float], ...] = (
    ("i8", 128.0),  # [F] "Compute rates": AIE1 int8 128 (UG1079)
    ("i16", 32.0),  # [F] AIE1 int16 32 (int16 x int8 would be 64)
    # unconfirmed here: UG1079's precision table (32 x 32 real: 8), not in [F]
    ("i32", 8.0),
    ("f32", 8.0),  # [F] AIE1 f32 8; [F] peak 6.4 TFLOPS = 400 cores x 8 x 2 x 1 GHz
    # no bf16 entry: [F] lists "-" for AIE1 bf16 (no bf16 datapath)
)

AIE1 = ArchSpec(
    name="aie1",
    compute=AIE1_COMPUTE,
    mem=None,  # AIE1 has no memory tiles ([TMh] AIE1 isMemTile false)
    shim_noc=AIE1_SHIM_NOC,
    shim_pl=AIE1_SHIM_PL,
    macs=AIE1_MACS,
    # [TMc] AIE1TargetModel::isLegalMemAffinity: own, north, south, and east on
    # even rows / west on odd rows (the memory module sits on alternating sides).
    affinity="checkerboard",
    lock_max=1,  # [TMh] AIE1 getMaxLockValue 1: binary locks; [F] "16 per tile, binary"
    host_sequence=False,  # shim DMAs as static BD chains with locks (mlir-aie's AIE1 tests: aie.shim_dma)
)

# Host memory as the VC1902's shim DMAs see it (aie2.py gives the shared estimates' sources).
# Bandwidth: estimate, unconfirmed: one 64-bit DDR4-3200 channel (25.6 GB/s), the VCK190's
# DDR4 DIMM as recalled; no measured figure for the shim DMAs was found. Bursts: mlir-aie
# AIE1TargetModel::getShimBurstEncodingsAndLengths {(0,64), (1,128), (2,256)}. No runtime
# task queue: AIE1 shim BDs are chained statically and guarded by locks (ArchSpec
# host_sequence False), so a move costs no issue time.
AIE1_HOST_MEMORY = HostMemory(
    bytes_per_second=25.6e9,
    burst_bytes=(64, 128, 256),
    access_bytes=DDR_ACCESS_BYTES,  # estimate (aie2.py): the smallest burst encoding
    latency_ns=BURST_LATENCY_NS,  # estimate (aie2.py)
    outstanding=OUTSTANDING_BURSTS,  # fitted on npu2 (aie2.py); no AIE1 figure
    task_queue=0,
    task_issue_ns=0.0,
)

# PLIO of the VC1902's PL shims (every shim column not in noc_columns; mlir-aie isShimPLTile).
# Widths: ADF's PLIO widths plio_32_bits / plio_64_bits / plio_128_bits ([UG1079] "adf::PLIO"); 64 bits
# is the default ([UG1483] "PLIO Attributes": "between the AI Engine interface tile and PL interface,
# it is 64-bit by default"). PL clock: 500 MHz, the rate [UG1483] "Specifying PLIO Frequency" pairs with
# 64 bits ("1 GHz 32 bit / 500 MHz 64 bit / 250 MHz 128 bit"); [UG1079] "AI Engine to PL Interface
# Performance": the PL clock is at most half the AIE clock (--pl-freq, default a quarter), so 500 MHz is
# within that bound at 1.25 GHz. Wider data "is sequentialized automatically into 32-bit streams within
# the AI Engine interface tile" ([UG1483]), so a stream carries at most stream_bits a cycle. Channels:
# [UG1079] "AI Engine to PL Interface Performance": a PL column has "Eight 64-bit slave channels for
# streaming data into the AI Engine" and "Six 64-bit master channels for streaming data to the PL".
AIE1_PLIO = PlioSpec(
    widths_bits=(32, 64, 128),
    default_bits=64,
    pl_clock_hz=500e6,
    channels_in=8,
    channels_out=6,
)

XCVC1902 = Device(
    name="xcvc1902",
    family="aie1",
    arch=AIE1,
    cols=50,  # [TMh] VC1902TargetModel::columns 50; [F] "50 x 9"
    rows=9,  # [TMh] rows 9: "One Shim row and 8 Core rows"
    aie_device_id=1,  # [F] AIEDevice xcvc1902=1
    # 1.25 GHz on the VCK190 board's VC1902: XRT PR 6460 "Clock frequency of AIE partition(1)
    # is: 1250.00 MHz" (xbutil on a vck190); MaxEVA (FPT 2023) "400 processor cores, operating
    # at 1.25 GHz"; Vitis Tutorials (XD100) "Calculating the Kernel Latency": the AIE simulation
    # summary's "AI Engine Frequency as 1250 MHz". [F] peaks are quoted at 1 GHz (1 to 1.25 GHz
    # by speed grade).
    clock_hz=1.25e9,
    stream_bits=32,  # [F] "32 bits per cycle per channel on AIE1"; [UG1079] 32-bit AXI4-Stream
    vector_bits=256,  # [UG1079] "two 256-bit wide load units and one 256-bit wide store unit"
    mem_rows=(),
    # [TMh] VC1902TargetModel nocColumns; [F] devices table
    noc_columns=(2, 3, 6, 7, 10, 11, 18, 19, 26, 27, 34, 35, 42, 43, 46, 47),
    host_memory=AIE1_HOST_MEMORY,
    plio=AIE1_PLIO,
)

#: Every AIE1 device this module defines.
DEVICES: tuple[Device, ...] = (XCVC1902,)
