"""Facts of the vendor flow's core ABI that the planner, the verifier and the emitter all budget for."""

from __future__ import annotations

#: Bytes at the bottom of a core tile's data memory reserved for the core's stack:
#: mlir-aie's aie.core default ``stack_size`` 1024 (AIE_FACTS "aie.core"), placed
#: at address 0 by its allocator (test/assign-buffer-addresses: "(stack) : 0x0-0x3FF").
STACK_BYTES = 1024

#: Buffer address alignment: mlir-aie's sequential allocator tests place a 16-byte
#: buffer at 1024 and the next at 1040 (iree-amd-aie / mlir-aie
#: test/assign-buffer-addresses/basic_alloc_simple.mlir), i.e. 16-byte steps; the
#: DMA itself needs only 32-bit alignment (AIE_FACTS "DMA address granularity").
BUFFER_ALIGN = 16


def align(n: int) -> int:
    """``n`` bytes rounded up to :data:`BUFFER_ALIGN`."""
    return (n + BUFFER_ALIGN - 1) // BUFFER_ALIGN * BUFFER_ALIGN
