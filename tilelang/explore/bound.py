"""A lower bound on a design's simulated cycles, from its cores' programs and the kernel cost model alone.

A core runs its kernel calls one after another, and the simulator never gives a call fewer cycles than
the cost model prices it alone (``tilelang.ir.kernel_cost.kernel_cycles``, ``CallTiming.alone``): its
parameters' banks can only raise the call's bound, the DMA's bank accesses can only extend a running call
(``simulator/contention.py``), a cascade call ends no earlier than its own compute, and an extern kernel
takes its declared cycles. So no run of the design ends before the busiest core's sum of those cycles,
whatever the plan: the bound needs no plan and no simulation, only the design (a factory call). An extern
kernel whose cycles are a function of its arguments counts as 0 (still a bound).

The host moves bound it too. Every fifo with a host end is one flow through a shim (``simulator/build.py``),
whose transfers, one per element, run one after another, each at least ``transfer_cycles`` at the fastest
rate the simulator can give it: the stream width, the PL I/O rate of a PLIO move, and for a move from or to
DDR the rate its bursts in flight allow for the move's contiguous runs (``Ddr.cost``); routes shared with
other flows only slow it. And every DDR transfer reserves the one DDR's time for its charged bytes in turn
(``Ddr.reserve``), so the run lasts at least all of them. Likewise every streamed fifo a core reads (from a
memtile link, or broadcast): its flow delivers at least the elements the core releases, one transfer after
another at the stream width. The simulator's own functions price each term.

``tl.explore(..., strategy="bound")`` skips the points whose bound is no better than the best simulated so
far (docs/explore.md "The bounded sweep").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from tilelang.errors import TileLangError


def cycles_lower_bound(design: Any) -> int:
    """The least cycles any simulation of ``design`` can take: the busiest core's calls at their cost alone.

    Args:
        design: a :class:`~tilelang.ir.design.Design`.

    Returns:
        The bound (0 for a design without calls).
    """
    from tilelang.ir.design import Call, Loop
    from tilelang.ir.kernel import Kernel
    from tilelang.ir.kernel_cost import kernel_cycles

    dev = design.device
    kernels = {k.name: k for k in design.kernels}
    per_call: dict[str, int] = {}

    def call_cycles(name: str) -> int:
        got = per_call.get(name)
        if got is None:
            k = kernels[name]
            if isinstance(k, Kernel):
                got = kernel_cycles(k, dev)
            else:  # an extern kernel: its declared cycles when they do not depend on the arguments
                got = k.cycles if isinstance(k.cycles, int) else 0
            per_call[name] = got
        return got

    def walk(body: Sequence[Any]) -> int:
        total = 0
        for s in body:
            if isinstance(s, Call):
                total += call_cycles(s.kernel)
            elif isinstance(s, Loop):
                total += s.trip_count * walk(s.body)
        return total

    return max((walk(c.body) for c in design.cores), default=0)


def transfer_lower_bound(design: Any) -> int:
    """The least cycles the design's host moves take: the busiest host fifo's transfers, and DDR's time.

    Args:
        design: a :class:`~tilelang.ir.design.Design`.

    Returns:
        The bound (0 for a design without host moves).
    """
    from simulator.cost import stream_bytes_per_cycle, transfer_cycles
    from simulator.host import contiguous_run
    from simulator.memory import Ddr

    dev = design.device
    ddr = Ddr.for_device(dev)
    stream = stream_bytes_per_cycle(dev)
    busy: dict[str, int] = {}
    charged = 0.0
    for d in design.dmas:
        for name in d.fifos:
            elem = design.fifo(name).elem
            n = d.pattern.numel // elem.numel
            plio = design.plio_of(name)
            if plio:
                rate = min(stream, dev.plio_bytes_per_cycle(plio))
            else:
                run = contiguous_run(d.pattern) * (elem.nbytes // elem.numel)
                per_transfer, limit = ddr.cost(elem.nbytes, run)
                rate = min(stream, dev.shim_bandwidth_bytes_per_cycle(), limit)
                charged += n * per_transfer
            busy[name] = busy.get(name, 0) + n * transfer_cycles(elem.nbytes, rate)
    return max(max(busy.values(), default=0), math.ceil(charged / ddr.bytes_per_cycle))


def stream_lower_bound(design: Any) -> int:
    """The least cycles the streams into the cores take: the busiest streamed fifo a core reads.

    A fifo is carried in shared memory only from one core to one other core (``tilelang/plan/carriage.py``);
    every other fifo a core reads is one flow whose transfers, one per element, run one after another at
    most at the stream width. It delivers at least every element a reading core releases.

    Args:
        design: a :class:`~tilelang.ir.design.Design`.

    Returns:
        The bound (0 when no core reads a streamed fifo).
    """
    from simulator.cost import stream_bytes_per_cycle, transfer_cycles
    from tilelang.ir.design import Loop, Port, Release
    from tilelang.ir.verify import fifo_ends

    released: dict[tuple[str, str], int] = {}

    def walk(body: Sequence[Any], times: int, core: str) -> None:
        for s in body:
            if isinstance(s, Loop):
                walk(s.body, times * s.trip_count, core)
            elif isinstance(s, Release) and s.port is Port.CONSUME:
                released[(core, s.fifo)] = released.get((core, s.fifo), 0) + times * s.n

    for c in design.cores:
        walk(c.body, 1, f"core:{c.name}")
    rate = stream_bytes_per_cycle(design.device)
    busiest = 0
    for name, ends in fifo_ends(design).items():
        core_to_core = (len(ends.producers) == 1 and ends.producers[0].startswith("core:")
                        and len(ends.consumers) == 1 and ends.consumers[0].startswith("core:"))
        if core_to_core:  # may be carried in shared memory: no transfer at all
            continue
        n = max((released.get((c, name), 0) for c in ends.consumers if c.startswith("core:")), default=0)
        if n:
            busiest = max(busiest, n * transfer_cycles(design.fifo(name).elem.nbytes, rate))
    return busiest


def lower_bound(design: Any) -> int:
    """The largest of :func:`cycles_lower_bound` (the cores' calls), :func:`transfer_lower_bound` (the host
    moves) and :func:`stream_lower_bound` (the streams the cores read): no simulation of ``design`` takes
    fewer cycles."""
    return max(cycles_lower_bound(design), transfer_lower_bound(design), stream_lower_bound(design))


def point_bound(factory: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The bound of one point: ``{"bound": int or None, "error": str or None, "seconds"}``.

    Never raises: a factory that fails (or returns something else than a Design) gives ``bound`` None, and
    the point is then evaluated like any other (its trial records the failure).
    """
    from tilelang.explore.evaluate import quiet
    from tilelang.ir.design import Design

    t0 = time.perf_counter()
    try:
        with quiet():
            design = factory(**kwargs)
            if not isinstance(design, Design):
                raise TileLangError(f"the factory returned {type(design).__name__}, not a Design")
            bound: int | None = lower_bound(design)
        error = None
    except Exception as e:  # noqa: BLE001 - a user's factory may raise anything; the search must go on
        bound, error = None, f"{type(e).__name__}: {e}"
    return {"bound": bound, "error": error, "seconds": time.perf_counter() - t0}


def points_bounds(points: Sequence[tuple[Callable[..., Any], dict[str, Any]]]) -> dict[str, Any]:
    """:func:`point_bound` of several points in one worker: ``{"bounds": [int or None, ...]}`` in order."""
    return {"bounds": [point_bound(factory, kwargs)["bound"] for factory, kwargs in points]}


__all__ = ["cycles_lower_bound", "lower_bound", "point_bound", "points_bounds", "stream_lower_bound",
           "transfer_lower_bound"]
