"""``tl.passes.double_buffer``: deeper fifos where memory allows and the cost model predicts a gain.

A fifo of depth ``d`` lets its producer run ``d - w`` elements ahead of a
consumer that holds a window of ``w`` elements (``acquire(w)``). At depth
``w`` every element is filled, then used, then given back, one after
another: per element the fifo costs its producer's time plus its consumer's.
From depth ``w + 1`` on the two overlap and an element costs the larger of
the two. The predicted gain of deepening a fifo is therefore

    gain = elements x min(producer cycles per element, consumer cycles per element) x cores at its ends

(the stall holds up every core at the fifo's ends: a B broadcast down a
column of four cores costs each of them), where a core's cycles per element are its kernel calls' cycles (the shared
kernel cost model, ``tilelang.ir.kernel_cost``) over the elements it moves
through the fifo, and a DMA end's are the element's bytes over the stream
width (``Device.stream_bits``, the shim's and tile DMAs' rate).

The choice is an ILP (docs/passes.md, "double_buffer"): one binary per fifo
and candidate depth (from the written depth to ``max_depth``), exactly one
per fifo; per tile, the bytes the deeper fifos add stay within what the
plan of the design leaves free on that tile (buffers live where the planner
put them: on the producer's, consumers' or a shared tile, or a link's
memtile); maximise the predicted gain, and among equal gains use fewer
bytes. The byte bound is necessary, not sufficient (banks, placement may
move): the result is planned, and while it does not plan the deepened fifo
with the smallest gain goes back to its written depth. Depths never go
below what was written, so no deadlock appears that the design did not
have, and the computation is unchanged (depth only decides how far a
producer may run ahead).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import pulp

from tilelang.devices.abi import STACK_BYTES
from tilelang.errors import DesignError, PlanError
from tilelang.ir.design import Acquire, Call, Design, Loop, Port, Release, Stmt
from tilelang.ir.kernel import ExternKernel, Kernel
from tilelang.ir.kernel_cost import kernel_cycles
from tilelang.ir.plan import Plan
from tilelang.passes.trial import plan_quietly, why_not
from tilelang.plan.buffers import align
from tilelang.plan.solve import solve_model

#: The depth the pass goes to at most unless told otherwise (API.md: depths 1 to 4).
MAX_DEPTH = 4
#: Bytes weigh this much against a cycle of gain: only ties in gain are broken by memory.
BYTE_WEIGHT = 1e-6


@dataclass(frozen=True)
class CoreUse:
    """How one core uses one fifo: elements it gives back over the run, and the most it holds at once."""

    port: Port
    elements: int
    window: int


@dataclass(frozen=True)
class FifoGain:
    """The cost model's view of one fifo.

    Attributes:
        fifo: its name.
        elements: elements that pass through it over the run.
        window: the most elements one core holds at once (1 for DMA ends).
        producer: producer cycles per element.
        consumer: the slowest consumer's cycles per element.
        cores: cores at its ends (a broadcast to four cores stalls four cores).
        gain: cycles the model predicts overlap saves once the depth exceeds the window, summed over those cores.
    """

    fifo: str
    elements: int
    window: int
    producer: float
    consumer: float
    cores: int = 1

    @property
    def gain(self) -> float:
        """Cycles saved summed over the cores at the fifo's ends: a fifo's stall holds up each of them."""
        return self.elements * min(self.producer, self.consumer) * max(1, self.cores)


# -- the cost model's view of a design ----------------------------------------------------------


def _counted(body: tuple[Stmt, ...], times: int = 1) -> Iterator[tuple[Stmt, int]]:
    """Every statement with how often it runs."""
    for s in body:
        yield s, times
        if isinstance(s, Loop):
            yield from _counted(s.body, times * s.trip_count)


def _windows(body: tuple[Stmt, ...], held: dict[str, int], top: dict[str, int]) -> None:
    """Track elements held per fifo through ``body`` (loops walked twice: the steady state shows by then)."""
    for s in body:
        if isinstance(s, Acquire):
            held[s.fifo] = max(held.get(s.fifo, 0), s.n)
            top[s.fifo] = max(top.get(s.fifo, 0), held[s.fifo])
        elif isinstance(s, Release):
            held[s.fifo] = max(0, held.get(s.fifo, 0) - s.n)
        elif isinstance(s, Loop):
            for _ in range(min(2, s.trip_count)):
                _windows(s.body, held, top)


def _call_cycles(design: Design, call: Call) -> int:
    k = design.kernel(call.kernel)
    if isinstance(k, Kernel):
        return kernel_cycles(k, design.device)
    if isinstance(k, ExternKernel) and isinstance(k.cycles, int):
        return k.cycles
    return 0  # an extern kernel whose cycles depend on its arguments: no compute is predicted for it


def core_profile(design: Design, core: str) -> tuple[int, dict[str, CoreUse]]:
    """A core's predicted kernel cycles over the run and how it uses each fifo.

    Args:
        design: the design.
        core: the core's name.

    Returns:
        (cycles, {fifo: CoreUse}).
    """
    c = design.core(core)
    cycles, released, ports = 0, {}, {}
    for s, times in _counted(c.body):
        if isinstance(s, Call):
            cycles += times * _call_cycles(design, s)
        elif isinstance(s, Release):
            released[s.fifo] = released.get(s.fifo, 0) + times * s.n
        if isinstance(s, Acquire | Release):
            ports[s.fifo] = s.port
    top: dict[str, int] = {}
    _windows(c.body, {}, top)
    uses = {f: CoreUse(ports[f], released.get(f, 0), max(1, top.get(f, 1))) for f in sorted(ports)}
    return cycles, uses


def _host_elements(design: Design, fifo: str) -> int:
    numel = design.fifo(fifo).elem.numel
    return sum(m.pattern.numel for m in design.dmas if fifo in m.fifos) // max(1, numel)


def fifo_gains(design: Design) -> dict[str, FifoGain]:
    """The cost model's elements, windows, per-element times and predicted overlap gain of every fifo."""
    dma_rate = design.device.stream_bits / 8  # bytes per cycle of one DMA channel's stream
    profiles = {c.name: core_profile(design, c.name) for c in design.cores}
    out = {}
    for f in design.fifos:
        dma_cycles = f.elem.numel * f.elem.dtype.bytes / dma_rate
        prod, cons, window, elements, cores = [], [], 1, 0, 0
        for cycles, uses in profiles.values():
            u = uses.get(f.name)
            if u is None or u.elements == 0:
                continue
            window, elements, cores = max(window, u.window), max(elements, u.elements), cores + 1
            (prod if u.port is Port.PRODUCE else cons).append(cycles / u.elements)
        if not elements:
            elements = _host_elements(design, f.name)
        out[f.name] = FifoGain(f.name, elements, window, max(prod) if prod else dma_cycles,
                               max(cons) if cons else dma_cycles, cores)
    return out


def min_depths(design: Design) -> dict[str, int]:
    """The depth each fifo needs so that no core waits for a buffer it holds itself: its largest window."""
    return {name: g.window for name, g in fifo_gains(design).items()}


def depth_one(design: Design) -> Design:
    """``design`` with every fifo as shallow as its cores' windows allow (depth 1 unless a core holds more).

    Args:
        design: a design.

    Returns:
        The variant (the baseline double_buffer starts from in tests and benchmarks).
    """
    need = min_depths(design)
    return dataclasses.replace(design, fifos=tuple(dataclasses.replace(f, depth=need[f.name]) for f in design.fifos))


# -- memory on each tile, from a plan -------------------------------------------------------------


@dataclass(frozen=True)
class _Room:
    """Per tile: bytes free in the plan; per fifo: buffer sets on each tile and one buffer's aligned bytes."""

    free: dict[tuple[int, int], int]
    sets: dict[str, dict[tuple[int, int], int]]
    size: dict[str, int]


def _room(plan: Plan) -> _Room:
    design = plan.design
    used: dict[tuple[int, int], int] = {}
    count: dict[str, dict[tuple[int, int], int]] = {}
    size: dict[str, int] = {}
    for b in plan.buffers.values():
        used[b.tile] = used.get(b.tile, 0) + align(b.size)
        if b.fifo:
            count.setdefault(b.fifo, {})
            count[b.fifo][b.tile] = count[b.fifo].get(b.tile, 0) + 1
            size[b.fifo] = align(b.size)
    cores = set(plan.placement.values())
    free = {t: design.device.memory_bytes(t) - (STACK_BYTES if t in cores else 0) - n for t, n in used.items()}
    sets: dict[str, dict[tuple[int, int], int]] = {}
    for f in design.fifos:
        by_tile = count.get(f.name, {})
        if all(n % f.depth == 0 for n in by_tile.values()):
            sets[f.name] = {t: n // f.depth for t, n in sorted(by_tile.items())}
    return _Room(free, sets, size)


# -- the ILP ------------------------------------------------------------------------------------------


def _candidates(design: Design, gains: dict[str, FifoGain], room: _Room, max_depth: int) -> dict[str, list[int]]:
    """Depths worth considering per fifo: the written one and those up to ``max_depth`` when deepening can gain."""
    out = {}
    for f in design.fifos:
        g = gains[f.name]
        if f.name in room.sets and g.gain > 0 and f.depth <= g.window < max_depth:
            out[f.name] = list(range(f.depth, max_depth + 1))
    return out


def _gain_at(g: FifoGain, depth: int) -> float:
    return g.gain if depth > g.window else 0.0


def build_model(design: Design, gains: dict[str, FifoGain], room: _Room, cands: dict[str, list[int]],
                fixed: frozenset[str] = frozenset()) -> tuple[pulp.LpProblem, dict[str, dict[int, pulp.LpVariable]]]:
    """The depth ILP: one binary per (fifo, depth), one depth per fifo, bytes within each tile's free room.

    ``fixed`` fifos keep their written depth.
    """
    prob = pulp.LpProblem("double_buffer", pulp.LpMinimize)
    x = {f: {d: prob.add_variable(f"x_{f}_{d}", 0, 1, cat="Binary") for d in ds} for f, ds in sorted(cands.items())}
    for f, xs in x.items():
        prob += pulp.lpSum(xs.values()) == 1, f"one_{f}"
        if f in fixed:
            prob += xs[design.fifo(f).depth] == 1, f"fixed_{f}"
    extra: dict[tuple[int, int], list] = {}
    for f, xs in x.items():
        depth = design.fifo(f).depth
        for t, n in room.sets[f].items():
            extra.setdefault(t, []).extend((d - depth) * n * room.size[f] * v for d, v in xs.items())
    for t, terms in sorted(extra.items()):
        prob += pulp.lpSum(terms) <= max(0, room.free.get(t, 0)), f"mem_{t[0]}_{t[1]}"
    bytes_of = {f: sum(room.sets[f].values()) * room.size.get(f, 0) for f in x}
    prob += pulp.lpSum(v * (-_gain_at(gains[f], d) + BYTE_WEIGHT * d * bytes_of[f])
                       for f, xs in x.items() for d, v in xs.items())
    return prob, x


def _chosen(x: dict[str, dict[int, pulp.LpVariable]], values: dict[str, float]) -> dict[str, int]:
    return {f: max(xs, key=lambda d: (values.get(xs[d].name, 0.0), -d)) for f, xs in x.items()}


def _with_depths(design: Design, depths: dict[str, int]) -> Design:
    return dataclasses.replace(
        design, fifos=tuple(dataclasses.replace(f, depth=depths.get(f.name, f.depth)) for f in design.fifos))


def _check_args(design: object, max_depth: object, time_limit: object) -> None:
    if not isinstance(design, Design):
        raise DesignError(f"double_buffer takes a Design, got {type(design).__name__}")
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 1:
        raise DesignError(f"double_buffer: max_depth must be a positive int, got {max_depth!r}")
    if not isinstance(time_limit, int | float) or isinstance(time_limit, bool) or not time_limit > 0:
        raise DesignError(f"double_buffer: time_limit must be a positive number of seconds, got {time_limit!r}")


def double_buffer(design: Design, *, max_depth: int = MAX_DEPTH, time_limit: float = 30.0) -> Design:
    """Deeper fifos where memory allows and the cost model predicts a gain (API.md "Passes (v1)").

    Args:
        design: the design.
        max_depth: the deepest a fifo may become (fifos written deeper keep their depth).
        time_limit: seconds for the depth ILP (a safety net; the solve is bounded by nodes).

    Returns:
        A new Design whose fifos are as deep as chosen; the same design when nothing gains.

    Raises:
        DesignError: bad arguments, or a design that does not verify.
        PlanError: the design itself does not plan (the pass needs its plan to know the memory).
    """
    _check_args(design, max_depth, time_limit)
    try:
        room = _room(plan_quietly(design, "greedy"))
    except PlanError:  # the heuristics are not the planner of record: ask the ILPs before giving up
        room = _room(plan_quietly(design))
    gains = fifo_gains(design)
    cands = _candidates(design, gains, room, max_depth)
    if not cands:
        return design
    prob, x = build_model(design, gains, room, cands)
    sol = solve_model(prob, "cbc", float(time_limit))
    if not sol.values:
        return design
    depths = {f: d for f, d in _chosen(x, sol.values).items() if d != design.fifo(f).depth}
    # tried with the greedy planner first (fast, the same resource checks), then with tl.plan's default
    for strategy in ("greedy", "ilp"):
        while depths and why_not(_with_depths(design, depths), strategy) is not None:
            # the byte bound held but banks or placement did not: give back the deepening that gains least
            del depths[min(depths, key=lambda f: (gains[f].gain, f))]
    return _with_depths(design, depths) if depths else design


__all__ = ["CoreUse", "FifoGain", "core_profile", "depth_one", "double_buffer", "fifo_gains", "min_depths"]
