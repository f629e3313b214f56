"""The per-call term of the tiling estimate: what each core spends calling its kernel.

The roofline terms of ``tiling_model.py`` count MACs and bytes in aggregate;
they cannot tell a 64x8x64 tile from a 64x64x64 one although the first runs
its MAC unit a quarter of the time. This term charges every kernel call the
way the simulator's timing model does (the constants are shared, with their
sources, in ``tilelang.devices.costs``):

- a call costs ``CALL_OVERHEAD`` + its loop's pipeline fill (``kernel_cost.contraction_fill``) + its
  unoverlapped matmul loop overhead
  (``MATMUL_BLOCK_OVERHEAD`` per ``MATMUL_REG_BLOCK``-blocked output register
  block of intrinsic tiles) + its busiest VLIW slot: the loads (each input
  re-read once per register block along the output indices it lacks, plus the
  accumulator C in every call after an output tile's first), the stores (C)
  or the MACs;
- a call cannot start before its input tiles have streamed in: with double
  buffering, each step takes the longer of the call and the slowest input
  tile's transfer (BD setup plus bytes over the stream width);
- an output tile accumulated over several calls is written by its first call
  (which does not read it: ``tl.library.matmul``'s ``matmul_first``) and
  accumulated by the rest; it leaves over the stream while the next one is
  computed when the output is double-buffered; single-buffered (``depth`` 1, a large output tile
  that fits only once), the core waits for its drain (BD setup plus bytes over
  the stream width) before it can start the next output tile;
- nothing overlaps the pipeline's fill and drain: the first input tiles cross
  every DMA hop (shim to memtile to core: two hops with memtiles, one
  without) before the first call, and the last output tile crosses them back
  after the last. Large output tiles on few output tiles per core (a small
  problem) pay this most.

With ``work = max(first, feed) + (steps - 1) x max(call, feed)`` (``first``
the call without the read of C), the term is ``out_tiles x max(work, drain) +
hops x (feed + drain)`` per core with a double-buffered output, and
``out_tiles x (work + drain) + hops x feed + (hops - 1) x drain`` with a
single-buffered one (the last tile's first drain
hop is already in its step), a number per candidate: the choice over
candidates stays one binary each and exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tilelang.devices import Device
from tilelang.devices.costs import (
    BD_SETUP_CYCLES,
    CALL_OVERHEAD,
    MATMUL_BLOCK_OVERHEAD,
    MATMUL_REG_BLOCK,
    core_ports,
    intrinsic_shape,
)
from tilelang.ir.kernel_cost import contraction_fill

if TYPE_CHECKING:
    from tilelang.plan.tiling_model import Contraction


def _prod(xs: list) -> np.ndarray | float:
    out: np.ndarray | float = 1.0
    for x in xs:
        out = out * x
    return out


def call_cycles(c: Contraction, device: Device, t: dict[str, np.ndarray], accumulate: bool) -> np.ndarray:
    """Cycles of one kernel call on core tiles ``t`` (the simulator's matmul rule, vectorised).

    Args:
        c: the :class:`~tilelang.plan.tiling_model.Contraction`.
        device: the device.
        t: core tile of every index (arrays broadcasting over the candidates).
        accumulate: the call reads the output tile and adds to it (every call after a tile's first).

    Returns:
        Cycles of one call: overhead + loop overhead + the busiest of its VLIW slots and of the memory
        banks its operands sit in, each operand in a bank of its own (``kernel_cost.call_timing``: a
        bank serves ``core_ports(arch).bank_bytes`` per cycle, so an operand re-read more often than the load
        units can take it binds the call by itself).
    """
    macs = device.macs_per_cycle(c.in_dtypes[0])
    ports = core_ports(device.arch.name)
    m0, _, n0 = intrinsic_shape(macs)
    reg = dict(zip(c.output, (m0, n0), strict=False))
    matmul = len(c.inputs) == 2
    # output register blocks along each output index: MATMUL_REG_BLOCK intrinsic tiles each
    blocks = {j: np.ceil(t[j] / (MATMUL_REG_BLOCK * reg.get(j, 1))) if matmul else 1.0 for j in c.output}
    load = 0.0
    bank = 0.0
    for x, dt in zip(c.inputs, c.in_dtypes, strict=True):
        reads = _prod([blocks[j] for j in c.output if j not in x])
        moved = _prod([t[i] for i in x]) * dt.bytes * reads
        load = load + moved
        bank = np.maximum(bank, moved / ports.bank_bytes)
    out_bytes = _prod([t[i] for i in c.output]) * c.out_dtype.bytes
    bank = np.maximum(bank, out_bytes * (2 if accumulate else 1) / ports.bank_bytes)
    load = (load + (out_bytes if accumulate else 0.0)) / ports.load_bytes
    store = out_bytes / ports.store_bytes
    mac = _prod([t[i] for i in c.indices]) / macs
    fixed = _prod(list(blocks.values())) * MATMUL_BLOCK_OVERHEAD if matmul else 0.0
    fixed = fixed + contraction_fill(c.in_dtypes[0], device)
    busiest = np.maximum(np.maximum(np.maximum(load, store), mac), bank)
    return CALL_OVERHEAD + np.ceil(fixed + busiest)


def _steps(c: Contraction, t: dict[str, np.ndarray]) -> np.ndarray | float:
    """Calls accumulating one output tile: the reduction's tiles."""
    return _prod([c.sizes[r] / t[r] for r in c.reduction])


def kernel_term(c: Contraction, device: Device, t: dict[str, np.ndarray], s: dict[str, np.ndarray],
                hops: int, depth: np.ndarray | int = 2) -> np.ndarray:
    """Cycles each core spends on its kernel calls, fed and drained over the streams.

    Args:
        c: the :class:`~tilelang.plan.tiling_model.Contraction`.
        device: the device.
        t: core tile of every index (arrays broadcasting over the candidates).
        s: cores along every index (same shapes).
        hops: DMA transfers between DDR and a core (2 through a memtile, 1 from a shim).
        depth: buffers of the output tile per candidate (2: drains overlap the next tile; 1: they do not).

    Returns:
        The per-core cycles of all calls (see the module docstring).
    """
    bw = device.stream_bits / 8
    steps = _steps(c, t)
    feed = 0.0
    for x, dt in zip(c.inputs, c.in_dtypes, strict=True):
        feed = np.maximum(feed, BD_SETUP_CYCLES + _prod([t[i] for i in x]) * dt.bytes / bw)
    out_bytes = _prod([t[i] for i in c.output]) * c.out_dtype.bytes
    drain = BD_SETUP_CYCLES + out_bytes / bw
    first = np.maximum(call_cycles(c, device, t, accumulate=False), feed)
    work = first + (steps - 1) * np.maximum(call_cycles(c, device, t, accumulate=True), feed)
    single = np.asarray(depth) == 1
    per_tile = np.where(single, work + drain, np.maximum(work, drain))
    out_tiles = _prod([c.sizes[i] / (s[i] * t[i]) for i in c.output])
    return out_tiles * per_tile + hops * feed + np.where(single, hops - 1, hops) * drain
