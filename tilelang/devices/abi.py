"""Facts of the vendor flow's core ABI that the planner, the verifier and the emitter all budget for."""

from __future__ import annotations

#: Bytes at the bottom of a core tile's data memory reserved for the core's stack:
#: mlir-aie's aie.core default ``stack_size`` 1024 (AIE_FACTS "aie.core"), placed
#: at address 0 by its allocator (test/assign-buffer-addresses: "(stack) : 0x0-0x3FF").
STACK_BYTES = 1024
