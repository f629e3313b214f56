"""Every number the emitted aie/aiex IR borrows from mlir-aie, in one table.

mlir-aie's enum attributes are ``I32EnumAttr``s, printed as plain integers in
generic form; their values have changed between mlir-aie versions, so they are
kept here, once, with the version they follow.

Source: /work/shared/AIE_FACTS.md, section "mlir-aie dialect: what an emitter
must produce", which records mlir-aie main of March 2026 (built against LLVM
22.1.8); the two reference modules in /work/shared/reference were checked with
that aie-opt. The shim-mux port mapping is hardware (aie-rt), cited below.
"""

from __future__ import annotations

from tilelang.devices.model import DMA_WORD_BYTES as _DMA_WORD_BYTES

#: The mlir-aie version the emitted IR follows (see docs/mlir_backend.md).
MLIR_AIE_VERSION = "mlir-aie main, March 2026 (LLVM 22.1.8)"

#: AIEDevice: [F] "AIEDevice xcvc1902=1, xcve2302=2, xcve2802=3, npu1=4,
#: npu1_1col..3col=5..7, npu2=8, npu2_1col..7col=9..15".
AIE_DEVICE: dict[str, int] = {
    "xcvc1902": 1,
    "xcve2302": 2,
    "xcve2802": 3,
    "npu1": 4,
    "npu1_1col": 5,
    "npu1_2col": 6,
    "npu1_3col": 7,
    "npu2": 8,
    **{f"npu2_{n}col": 8 + n for n in range(1, 8)},
}

#: WireBundle: [F] "Core=0, DMA=1, FIFO=2, South=3, West=4, North=5, East=6,
#: PLIO=7, NOC=8, Trace=9, TileControl=10".
WIRE_BUNDLE: dict[str, int] = {
    "Core": 0,
    "DMA": 1,
    "FIFO": 2,
    "South": 3,
    "West": 4,
    "North": 5,
    "East": 6,
    "PLIO": 7,
    "NOC": 8,
    "Trace": 9,
    "TileControl": 10,
}

#: DMAChannelDir: [F] "S2MM=0, MM2S=1".
DMA_CHANNEL_DIR: dict[str, int] = {"s2mm": 0, "mm2s": 1}

#: LockAction: [F] "Acquire=0, Release=1, AcquireGreaterEqual=2".
LOCK_ACTION: dict[str, int] = {"Acquire": 0, "Release": 1, "AcquireGreaterEqual": 2}

#: ObjectFifoPort: [F] "Produce=0, Consume=1"; reference/README.md confirms it.
OBJECTFIFO_PORT: dict[str, int] = {"produce": 0, "consume": 1}

#: Which shim-mux port a shim DMA channel is wired to, (direction, channel) ->
#: the North port of the mux (= the South port of the shim switchbox).
#: aie-rt's fixed mapping as mlir-aie and iree-amd-aie use it
#: (iree-amd-aie AMDAIEDeviceModel::mm2sDmaNocToSpecialShimPortMap /
#: s2mmDmaNocToSpecialShimPortMap: MM2S 0 -> 3, MM2S 1 -> 7, S2MM 0 -> 2,
#: S2MM 1 -> 3); reference/vector_scalar_mul.physical.mlir shows MM2S 0 -> 3
#: and S2MM 0 -> 2.
SHIM_MUX_PORT: dict[tuple[str, int], int] = {
    ("mm2s", 0): 3,
    ("mm2s", 1): 7,
    ("s2mm", 0): 2,
    ("s2mm", 1): 3,
}

#: Bytes a DMA moves per address step: the device model's rule ([F] "DMA address granularity 32 bits").
DMA_WORD_BYTES = _DMA_WORD_BYTES


def device_id(name: str) -> int:
    """mlir-aie's AIEDevice integer for a device name.

    Raises:
        KeyError: a device mlir-aie does not know.
    """
    return AIE_DEVICE[name]
