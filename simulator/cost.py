"""The timing model: what a kernel call, a DMA transfer and a dispatch cost.

Kernel calls are costed by the kernel cost model in
:mod:`tilelang.ir.kernel_cost` (re-exported here: the planner's bank
chooser uses the same model); this module adds the data movement: streams,
DMA transfers, DDR and the host dispatch.

Sources (short names used in the comments):
  [F]      docs/aie_facts.md, the section named.
  [I3793]  mlir-aie issue 3793 (host dispatch about 450 us per invocation).
  [PR2559] mlir-aie PR 2559, "Update AxCache bits for ShimDMA BD generation":
           programming_examples/basic/memcpy, "Effective Bandwidth: 55.5307 GB/s"
           before, "66.5763 GB/s" after shim BDs set AxCache = 2 ("to enable
           upsizing in the NoC for performance"), which mlir-aie's lowering of
           the runtime sequence's DMAs has emitted since.
  [AM020]  AIE-ML architecture manual, "Stream Switch Buffering and Latency":
           4-deep FIFO and 2-cycle latency per port, 4 cycles per stream switch.
  [UG1079] AI Engine kernel guide: streams 32 bits per cycle; multicast sends
           only when every destination is ready.
Constants marked "fitted" are set from the figure named and are therefore not
validated by it (docs/simulator.md, accuracy table, says which figures test).
"""

from __future__ import annotations

import math

from tilelang.devices import Device
from tilelang.devices.costs import (  # the shared, cited constants; re-exported under their old names
    BD_SETUP_CYCLES,
    CALL_OVERHEAD,
    DMA_ACCESS_BYTES,
    MATMUL_BLOCK_OVERHEAD,
    MATMUL_REG_BLOCK,
    CorePorts,
    core_ports,
    intrinsic_shape,
)
from tilelang.errors import SimulationError
from tilelang.ir.kernel import AnyKernel, ExternKernel
from tilelang.ir.kernel_cost import (  # the kernel cost model, shared with the planner's bank chooser
    IDIV_SCALAR_CYCLES,
    CallTiming,
    OpContext,
    Slots,
    call_timing,
    impl,
    kernel_cycles,
    kernel_slots,
)

__all__ = [
    "BD_SETUP_CYCLES", "CALL_OVERHEAD", "DDR_BYTES_PER_SECOND", "DISPATCH_SECONDS",
    "DMA_ACCESS_BYTES", "IDIV_SCALAR_CYCLES", "CorePorts",
    "MATMUL_BLOCK_OVERHEAD", "MATMUL_REG_BLOCK", "SWITCH_LATENCY", "CallTiming", "core_ports",
    "OpContext", "Slots", "call_timing", "ddr_bytes_per_cycle", "describe", "dispatch_cycles", "host_sequence_cycles",
    "extern_cycles", "flow_latency", "impl", "intrinsic_shape", "kernel_cycles", "kernel_slots",
    "stream_bytes_per_cycle", "transfer_cycles",
]

# -- data movement --------------------------------------------------------------------

#: Cycles per stream switch traversed by a flow: [AM020] "Combined total of ...
#: 4-cycle latency per stream switch".
SWITCH_LATENCY = 4
#: Host DDR bandwidth shared by all shim DMAs, bytes per second, for a device without
#: ``host_memory`` data: [PR2559] the memcpy example's 66.6 GB/s with the AxCache = 2 shim
#: BDs that mlir-aie emits (55.5 GB/s before). Each device's own figure (and its bursts,
#: latency and task queue) is its ``host_memory`` in tilelang/devices.
DDR_BYTES_PER_SECOND = 66.5763e9
#: Host dispatch per invocation, seconds: [I3793] "about 450 us" on npu1.
DISPATCH_SECONDS = 450e-6


def stream_bytes_per_cycle(device: Device) -> float:
    """Bytes one stream channel carries per cycle ([F] stream width, via the device)."""
    return device.stream_bits / 8


def ddr_bytes_per_cycle(device: Device) -> float:
    """The shared DDR limit in bytes per AIE cycle (the device's ``host_memory``)."""
    hm = device.host_memory
    return (hm.bytes_per_second if hm is not None else DDR_BYTES_PER_SECOND) / device.clock_hz


def host_sequence_cycles(device: Device) -> tuple[int, int, int]:
    """(cycles to issue one host move, task-queue depth per channel (0: none), first-data
    latency of a to-device move) from the device's ``host_memory``; zeros without one."""
    hm = device.host_memory
    if hm is None:
        return 0, 0, 0
    issue = round(hm.task_issue_ns * 1e-9 * device.clock_hz) if device.host_sequence else 0
    queue = hm.task_queue if device.host_sequence else 0
    return issue, queue, round(hm.latency_ns * 1e-9 * device.clock_hz)


def dispatch_cycles(device: Device) -> int:
    """Cycles of one host dispatch ([I3793])."""
    return round(DISPATCH_SECONDS * device.clock_hz)


def transfer_cycles(nbytes: int, bytes_per_cycle: float) -> int:
    """Cycles a DMA channel is busy moving ``nbytes``: BD setup plus the words."""
    return BD_SETUP_CYCLES + math.ceil(nbytes / bytes_per_cycle)


def flow_latency(hops: int) -> int:
    """Cycles from a word leaving a DMA to it arriving ``hops`` neighbour links away."""
    return SWITCH_LATENCY * (hops + 1)



def extern_cycles(kernel: ExternKernel, args: tuple) -> int:
    """Declared cycles of one extern call.

    Raises:
        SimulationError: the kernel declares no cycles (timing needs them).
    """
    c = kernel.cycles_for(args)
    if c is None:
        raise SimulationError(
            f"extern kernel {kernel.name!r} declares no cycles; pass cycles= to tl.extern_kernel or "
            f"kernel_cycles={{{kernel.name!r}: ...}} to tl.simulate (tilelang simulate --kernel-cycles "
            f"{kernel.name}=CYCLES), or simulate with mode='functional'"
        )
    if c < 0:
        raise SimulationError(f"extern kernel {kernel.name!r}: its cycles function returned {c}")
    return int(c)


def describe(kernel: AnyKernel, device: Device) -> str:
    """One line on where a kernel's cycles go (for reports)."""
    if isinstance(kernel, ExternKernel):
        return f"{kernel.name}: extern, declared cycles"
    s = kernel_slots(kernel, device)
    if s.loops:
        return (f"{kernel.name}: {CALL_OVERHEAD + s.cycles()} cycles = overhead {CALL_OVERHEAD} + fixed {s.fixed:.0f} + "
                f"{len(s.loops)} loop nests, one after another ("
                + " + ".join(f"{b:.0f}" for b in s.loops) + ")")
    scalar = f", scalar {s.scalar:.0f}" if s.scalar else ""  # only float division uses the scalar unit
    return (f"{kernel.name}: {CALL_OVERHEAD + s.cycles()} cycles = overhead {CALL_OVERHEAD} + fixed {s.fixed:.0f} + "
            f"max(load {s.load:.0f}, store {s.store:.0f}, vector {s.vector:.0f}, mac {s.mac:.0f}{scalar})")
