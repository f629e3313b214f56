"""Which buffers contend for a memory bank, and how much: the weights of the bank objective.

A data-memory bank serves one access per cycle and the other requesters wait
([AM020] "Memory Arbitration", as docs/simulator.md models it). Two buffers in
one bank slow a kernel call when

- *together*: the call uses both at once (its loads and stores to them
  serialise on the bank), or
- *beside*: a DMA moves one while the call uses the other. A double-buffered
  fifo's DMA fills (or drains) the slot the core released last while the core
  works on the next one, so slot 1 of an input fifo is *beside* slot 0 of the
  other fifos the same call reads, not *together* with it.

Each core's body is executed abstractly (acquire/release counters only, no
data): every call records the slots its element arguments name (ElemArg ``i``
is the i-th oldest held element) and the slots released on streamed fifos since
the previous call, whose DMA transfer is taken to overlap that call. Loops are
executed until the counters repeat (the slot pattern is periodic) and the rest
of the trips multiplied out, within a step budget.

Two measures come out of the walk. *Phases* are exact under the kernel cost
model the simulator charges (``tilelang/ir/kernel_cost.py``): every call
records the bank cycles each buffer costs it (its loads and stores of each
parameter at 32 bytes per bank cycle, a DMA moving a buffer during it at
``DMA_ACCESS_BYTES`` per cycle) and the cycles of its busiest slot; a bank
assignment costs the call the amount by which its busiest bank exceeds that.
Equal phases are counted, so a GEMM core yields a handful of phases with
their call counts, and the bank ILP minimises the cycles they lose.
*Pairs* rank the rest (contention below a call's bound, which the model does
not charge but a real round-robin arbiter does); their weights are bytes per
run of the design, scaled by how hard each kind contends: *beside*, the bytes
the DMA moves through the other buffer, doubled because a DMA access moves
128 bits where a core access moves 256 ([AM020] "AIE-ML Memory Module":
256-bit core loads and stores; the DMA's 128-bit memory interface, derived
from the memory tile's, as ``costs.DMA_ACCESS_BYTES`` says), so it holds
the bank twice as many cycles per byte; *together*, the bytes of both buffers
each time a call uses the pair, times ``TOGETHER_WEIGHT`` (a core asks for a
bank four times as often as a DMA). Shared-memory fifos are accessed by the
neighbour's core, not a DMA; that contention is not modelled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from tilelang.devices.costs import DMA_ACCESS_BYTES, core_ports
from tilelang.errors import TileLangError
from tilelang.ir.design import Acquire, BufArg, Call, Design, ElemArg, Loop, Release, Stmt
from tilelang.ir.kernel import Kernel
from tilelang.ir.kernel_cost import kernel_slots

Pair = tuple[str, str]
#: Bank cycles per byte of a DMA access relative to a core access (128- vs 256-bit accesses, see above).
DMA_BYTE_WEIGHT = 2.0
#: How much harder a call's own two buffers contend than a DMA beside it, per byte: a core load or
#: store unit asks for the bank every cycle (AIE_FACTS "Loads/stores: 2 x 256-bit loads and 1 x
#: 256-bit store per cycle"), a DMA channel once per 4 cycles (a 32-bit stream, AIE_FACTS "Stream
#: width", written 128 bits at a time). Kernels also re-read tiles (a matmul its operands), which
#: only makes this larger; 4 is the rate ratio alone.
TOGETHER_WEIGHT = 4.0
#: Statement executions the abstract run of one core may take before it stops (the weights
#: gathered so far are kept: they rank pairs, they need not be exact counts).
STEP_BUDGET = 200_000
#: Loop iterations watched for the counters to repeat (the period is at most the lcm of the depths).
MAX_PERIOD = 64


@dataclass(frozen=True)
class _FifoSide:
    """A fifo as one core sees it: its depth, buffer names per slot, element bytes, DMA end."""

    depth: int
    names: tuple[str, ...]
    nbytes: int
    streamed: bool


@dataclass(frozen=True)
class Phase:
    """Calls of one kernel at one point of the fifo rotation: what sharing a bank costs each of them.

    Attributes:
        floor: the call's cycles-bound with every buffer in a bank of its own: its busiest
            slot, or its busiest single buffer if that is more.
        demand: (buffer, bank cycles) of every buffer the call loads or stores and every
            buffer a DMA moves during it, sorted by name.
    """

    floor: float
    demand: tuple[tuple[str, float], ...]

    def lost(self, bank_of: Mapping[str, int]) -> float:
        """Cycles the call loses when buffers sit in the banks ``bank_of`` names (others: nowhere)."""
        per: dict[int, float] = {}
        for name, d in self.demand:
            k = bank_of.get(name)
            if k is not None:
                per[k] = per.get(k, 0.0) + d
        return max(0.0, max(per.values(), default=0.0) - self.floor)

    def worst(self) -> float:
        """Cycles lost with every buffer in one bank (the most any assignment can cost)."""
        return max(0.0, sum(d for _, d in self.demand) - self.floor)


@dataclass(frozen=True)
class _KernelUse:
    """What the walk needs of a traced kernel: its busiest slot and the bank cycles its accesses take per parameter."""

    busiest: float
    access: tuple[float, ...]  # per parameter, in order: bytes moved / the bank's bytes per cycle


def _kernel_uses(design: Design) -> dict[str, _KernelUse]:
    """The cost-model view of every traced kernel of ``design`` (extern kernels have none)."""
    out = {}
    bank_bytes = core_ports(design.device.arch.name).bank_bytes
    for k in design.kernels:
        if not isinstance(k, Kernel):
            continue
        try:
            slots = kernel_slots(k, design.device)
        except TileLangError:
            continue
        out[k.name] = _KernelUse(slots.busiest(),
                                 tuple(slots.access.get(p.name, 0.0) / bank_bytes for p in k.params))
    return out


class _OutOfSteps(Exception):
    pass


class _Walker:
    """Abstract execution of one core body, accumulating pair weights."""

    def __init__(self, sides: dict[str, _FifoSide], kernels: dict[str, _KernelUse],
                 local: Mapping[str, tuple[str, int]] | None = None) -> None:
        self.sides = sides
        self.kernels = kernels
        self.local = local or {}  # local buffer -> (placed name, bytes)
        self.acq = dict.fromkeys(sides, 0)
        self.rel = dict.fromkeys(sides, 0)
        self.flight: set[tuple[str, int]] = set()
        self.weights: Counter[Pair] = Counter()
        self.phases: Counter[Phase] = Counter()
        self.steps = 0

    def key(self) -> tuple:
        slots = tuple((self.rel[f] % s.depth, self.acq[f] - self.rel[f]) for f, s in self.sides.items())
        return slots, tuple(sorted(self.flight))

    def run(self, body: tuple[Stmt, ...]) -> None:
        for s in body:
            self.steps += 1
            if self.steps > STEP_BUDGET:
                raise _OutOfSteps
            if isinstance(s, Acquire):
                self.acq[s.fifo] = max(self.acq[s.fifo], self.rel[s.fifo] + s.n)
            elif isinstance(s, Release):
                self._release(s.fifo, s.n)
            elif isinstance(s, Call):
                self._call(s)
            elif isinstance(s, Loop):
                self._loop(s)

    def _release(self, fifo: str, n: int) -> None:
        side = self.sides[fifo]
        if side.streamed:
            self.flight.update((fifo, (self.rel[fifo] + j) % side.depth) for j in range(n))
        self.rel[fifo] += n

    def _call(self, call: Call) -> None:
        used: dict[str, int] = {}
        use = self.kernels.get(call.kernel)
        demand: dict[str, float] = {}
        for i, a in enumerate(call.args):
            if isinstance(a, ElemArg):
                side = self.sides[a.fifo]
                name = side.names[(self.rel[a.fifo] + a.index) % side.depth]
                used[name] = side.nbytes
            elif isinstance(a, BufArg) and a.buffer in self.local:
                name, nbytes = self.local[a.buffer]
                used[name] = used.get(name, 0) + nbytes
            else:
                continue
            if use is not None and i < len(use.access):
                demand[name] = demand.get(name, 0.0) + use.access[i]
        if use is not None and demand:
            for fifo, slot in sorted(self.flight):
                side = self.sides[fifo]
                name = side.names[slot]
                demand[name] = demand.get(name, 0.0) + side.nbytes / DMA_ACCESS_BYTES
            floor = max(use.busiest, *demand.values())
            self.phases[Phase(round(floor, 3), tuple(sorted((n, round(d, 3)) for n, d in demand.items())))] += 1
        names = sorted(used)
        for i, x in enumerate(names):
            for y in names[i + 1 :]:
                self.weights[(x, y)] += TOGETHER_WEIGHT * (used[x] + used[y])
        for fifo, slot in self.flight:
            side = self.sides[fifo]
            y = side.names[slot]
            for x in names:
                if x != y:
                    self.weights[(min(x, y), max(x, y))] += DMA_BYTE_WEIGHT * side.nbytes
        self.flight.clear()

    def _loop(self, loop: Loop) -> None:
        trips = loop.trip_count
        seen: dict[tuple, tuple[int, Counter[Pair], Counter[Phase]]] | None = {
            self.key(): (0, self.weights.copy(), self.phases.copy())
        }
        i = 0
        while i < trips:
            self.run(loop.body)
            i += 1
            if seen is None:
                continue
            key = self.key()
            if key in seen:
                # The counters repeat: every further period adds what the last one did.
                j, before, phases_before = seen[key]
                period = i - j
                reps = (trips - i) // period
                for pair, w in (self.weights - before).items():
                    self.weights[pair] += w * reps
                for phase, n in (self.phases - phases_before).items():
                    self.phases[phase] += n * reps
                i += reps * period
                seen = None  # the remainder (less than a period) runs plainly
            elif len(seen) < MAX_PERIOD:
                seen[key] = (i, self.weights.copy(), self.phases.copy())


def contention(design: Design, shared: set[str] | frozenset[str], local: Mapping[str, str] | None = None
               ) -> tuple[dict[Pair, float], dict[Phase, int]]:
    """The pair weights and the phases (with their call counts) of every core of ``design``.

    Args:
        design: the design.
        shared: the fifos carried in shared memory (buffers ``<fifo>_<i>``; the
            others are streamed, with the core's copy ``<fifo>_<core>_<i>``).
        local: the name each local buffer (``tl.buffer``) is placed under (its group of
            packed buffers, ``packing.Packing.clusters``); buffers not named are left out.

    Returns:
        ({(buffer, buffer): weight} for pairs with a positive weight, names sorted within
        a pair; {phase: calls} for phases some assignment can make lose cycles).
    """
    pairs: Counter[Pair] = Counter()
    phases: Counter[Phase] = Counter()
    kernels = _kernel_uses(design)
    for core in design.cores:
        sides = {}
        for f in design.fifos:
            if not _uses(core.body, f.name):
                continue
            prefix = f"{f.name}_" if f.name in shared else f"{f.name}_{core.name}_"
            names = tuple(f"{prefix}{i}" for i in range(f.depth))
            sides[f.name] = _FifoSide(f.depth, names, f.elem.nbytes, f.name not in shared)
        mine = {b.name: ((local or {})[b.name], b.nbytes) for b in core.buffers if b.name in (local or {})}
        walker = _Walker(sides, kernels, mine)
        try:
            walker.run(core.body)
        except _OutOfSteps:
            pass
        pairs.update(walker.weights)
        phases.update(walker.phases)
    return (
        {pair: float(w) for pair, w in sorted(pairs.items()) if w > 0},
        {p: n for p, n in sorted(phases.items(), key=lambda kv: (kv[0].demand, kv[0].floor)) if p.worst() > 0},
    )


def contention_weights(design: Design, shared: set[str] | frozenset[str]) -> dict[Pair, float]:
    """Bank-contention weight of every pair of core-side buffers (names sorted within a pair).

    Args:
        design: the design.
        shared: the fifos carried in shared memory (buffers ``<fifo>_<i>``; the
            others are streamed, with the core's copy ``<fifo>_<core>_<i>``).

    Returns:
        {(buffer, buffer): weight}, pairs with a positive weight only.
    """
    return contention(design, shared)[0]


def _uses(body: tuple[Stmt, ...], fifo: str) -> bool:
    for s in body:
        if isinstance(s, Acquire | Release) and s.fifo == fifo:
            return True
        if isinstance(s, Loop) and _uses(s.body, fifo):
            return True
    return False
