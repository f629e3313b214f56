"""The floor of a design: cycles no simulation of it can beat, from the design alone (no plan, no run).

Four terms, each a sum the simulator cannot shorten:

- **calls**: a core runs its kernel calls one after another, and the simulator never gives a call fewer
  cycles than the cost model prices it alone (``kernel_cycles``, ``CallTiming.alone``): its parameters'
  banks can only raise the call's bound, the DMA's bank accesses only extend a running call
  (``contention.py``), a cascade call ends no earlier than its own compute, an extern kernel takes its
  declared cycles (one whose cycles are a function of its arguments counts 0). The busiest core's sum.
- **host fifo**: every fifo with a host end is one flow through a shim (``build.py``), whose transfers, one
  per element, run one after another, each at least ``transfer_cycles`` at the fastest rate the simulator
  can give it: the stream width, a PLIO move's PL rate, and for a move from or to DDR the rate its bursts in
  flight allow for the move's contiguous runs (``Ddr.cost``); a route shared with other flows only slows it.
- **DDR**: every DDR transfer reserves the one DDR's time for its charged bytes in turn (``Ddr.reserve``).
- **stream**: a fifo is carried in shared memory only from one core to one other core
  (``tilelang/plan/carriage.py``); every other fifo a core reads is one flow delivering at least the
  elements the core releases, one transfer after another at the stream width.

The simulator's own functions price each term. ``tl.explore(..., strategy="bound")`` skips points whose
floor is no better than the best simulated (docs/explore.md "The bounded sweep"); ``explain()`` shows a
run against its floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.cost import kernel_cycles, stream_bytes_per_cycle, transfer_cycles
from simulator.host import contiguous_run
from simulator.memory import Ddr
from tilelang.ir.design import Design, call_counts, released
from tilelang.ir.kernel import Kernel
from tilelang.ir.verify import fifo_ends


@dataclass(frozen=True)
class Floor:
    """A design's floor: the largest of the four terms (module docstring).

    Attributes:
        cycles: no simulation of the design takes fewer.
        cause: the term that sets it, in words ("core worker's kernel calls, each at its cost alone", ...).
        terms: every term's cycles: "calls", "host fifo", "ddr", "stream".
    """

    cycles: int
    cause: str
    terms: dict[str, int]


def floor(design: Design, kernel_cycles: dict[str, int] | None = None) -> Floor:
    """The design's floor (see the module docstring).

    Args:
        design: the design.
        kernel_cycles: cycles per call given for kernels by name (``simulate``'s), instead of the model's.

    Returns:
        The :class:`Floor`; a design without calls or moves has a floor of 0 cycles.
    """
    terms = [_calls(design, kernel_cycles or {}), *_host(design), _streams(design)]
    cycles, cause = max(terms, key=lambda t: t[0])  # (the first of equals: calls, host fifo, DDR, stream)
    names = ("calls", "host fifo", "ddr", "stream")
    return Floor(cycles, cause if cycles else "nothing to do", {n: t[0] for n, t in zip(names, terms, strict=True)})


def lower_bound(design: Design) -> int:
    """``floor(design).cycles``: no simulation of ``design`` takes fewer cycles."""
    return floor(design).cycles


def _calls(design: Design, given: dict[str, int]) -> tuple[int, str]:
    dev = design.device
    per_call: dict[str, int] = {}
    for k in design.kernels:
        if k.name in given:  # a call given its cycles takes exactly them
            per_call[k.name] = given[k.name]
        elif isinstance(k, Kernel):
            per_call[k.name] = kernel_cycles(k, dev)
        else:  # an extern kernel: its declared cycles when they do not depend on the arguments
            per_call[k.name] = k.cycles if isinstance(k.cycles, int) else 0
    counts = {c.name: call_counts(c.body) for c in design.cores}
    best = max(((sum(n * per_call[name] for name, n in counts[c].items()), c) for c in counts), default=(0, ""))
    if not given:
        each = "its cost alone"
    else:
        each = "its given cycles" if best[1] and set(counts[best[1]]) <= set(given) else "its cost alone or given cycles"
    return best[0], f"core {best[1]}'s kernel calls, each at {each}"


def _host(design: Design) -> tuple[tuple[int, str], tuple[int, str]]:
    """(the busiest host fifo's transfers, DDR's time for every host burst)."""
    dev = design.device
    ddr = Ddr.for_device(dev)
    stream = stream_bytes_per_cycle(dev)
    shim_rate = min(stream, dev.shim_bandwidth_bytes_per_cycle())
    # (cycles, DDR bytes charged) of one transfer, per fifo and pattern shape: a design's moves repeat a
    # few shapes at many offsets, and the cost depends on the shape only
    per_shape: dict[tuple, tuple[int, float]] = {}
    busy: dict[str, int] = {}
    charged = 0.0
    for d in design.dmas:
        pattern = d.pattern
        for name in d.fifos:
            key = (name, pattern.sizes, pattern.strides)
            got = per_shape.get(key)
            if got is None:
                elem, plio = design.fifo(name).elem, design.plio_of(name)
                if plio:
                    got = (transfer_cycles(elem.nbytes, min(stream, dev.plio_bytes_per_cycle(plio))), 0.0)
                else:
                    run = contiguous_run(pattern) * (elem.nbytes // elem.numel)
                    per_transfer, limit = ddr.cost(elem.nbytes, run)
                    got = (transfer_cycles(elem.nbytes, min(shim_rate, limit)), per_transfer)
                per_shape[key] = got
            n = pattern.numel // design.fifo(name).elem.numel
            charged += n * got[1]
            busy[name] = busy.get(name, 0) + n * got[0]
    fifo = max(busy, key=busy.__getitem__, default="")  # (the first of equals in the design's order)
    return ((busy.get(fifo, 0), f"fifo {fifo}'s host transfers, one after another at their fastest rate"),
            (math.ceil(charged / ddr.bytes_per_cycle), "DDR's time for every host transfer's bursts"))


def _streams(design: Design) -> tuple[int, str]:
    rate = stream_bytes_per_cycle(design.device)
    cores = {f"core:{c.name}": c for c in design.cores}
    best, which = 0, ""
    for name, ends in fifo_ends(design).items():
        core_to_core = (len(ends.producers) == 1 and ends.producers[0] in cores
                        and len(ends.consumers) == 1 and ends.consumers[0] in cores)
        if core_to_core:  # may be carried in shared memory: no transfer at all
            continue
        n = max((released(cores[c].body, name) for c in ends.consumers if c in cores), default=0)
        cycles = n * transfer_cycles(design.fifo(name).elem.nbytes, rate) if n else 0
        if cycles > best:
            best, which = cycles, name
    return best, f"fifo {which}'s transfers into its core(s), one after another at the stream width"


__all__ = ["Floor", "floor", "lower_bound"]
