"""The core program interpreter: loops, lock-guarded acquires and releases, kernel calls.

A core runs its statements in order. ``acquire`` blocks (the core stalls)
until the fifo side can grant it; ``release`` hands buffers back at once; a
kernel call computes its numpy semantics on the held buffers in place and
takes the cost model's cycles as one event. Lock operations and loop control
take no cycles of their own: the per-call overhead covers them (cost.py).

The body is flattened once into a list of instructions with explicit loop
jumps, so the process is one generator frame (no generator per loop level).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from simulator.cascade import cascade_call
from simulator.contention import Contention
from simulator.cost import CallTiming, extern_cycles
from simulator.engine import Engine, Process, Waiting
from simulator.kernels import CompiledKernel
from simulator.memory import ReaderSide, WriterSide
from simulator.result import Trace
from tilelang.errors import SimulationError
from tilelang.ir.calls import run_extern
from tilelang.ir.design import (
    Acquire,
    AffineArg,
    BufArg,
    Call,
    CascadeArg,
    ConstArg,
    Core,
    ElemArg,
    Loop,
    LoopVarArg,
    Port,
    Release,
    Stmt,
    staging_name,
)
from tilelang.ir.kernel import AnyKernel, ExternKernel, Kernel

Side = WriterSide | ReaderSide
#: Timing of one call given the buffer slot each element argument refers to.
CostFn = Callable[[tuple[int, ...]], CallTiming]
#: Makes a call's CostFn from its kernel, its element arguments' (parameter name, side, index) and the
#: memory bank of each local-buffer argument ({parameter name: (tile, bank)}).
CostFactory = Callable[[Kernel, list[tuple[str, "WriterSide | ReaderSide", int]], dict], CostFn]


class LocalStore:
    """A core's local buffer (``tl.buffer``) in the simulation: its array and its memory bank.

    The arrays of one core are views into one byte array at the offsets the plan
    gives, so buffers the plan packs into shared bytes share them here too.
    """

    __slots__ = ("array", "bank")

    def __init__(self, array: np.ndarray, bank: tuple[tuple[int, int], int] | None) -> None:
        self.array = array
        self.bank = bank

# Instruction opcodes of a flattened core body.
_ACQUIRE, _RELEASE, _CALL, _LOOP, _NEXT = range(5)


@dataclass
class CoreStats:
    """Where one core's time went.

    Attributes:
        busy: cycles spent in kernel calls.
        banks: of ``busy``, the cycles calls took beyond their length with no memory-bank limit
            (operands sharing a bank, a DMA using a bank a call reads, or one operand re-read
            faster than its bank serves).
        stall: cycles spent blocked in acquires.
        stalls: stall cycles per fifo.
        fill: of ``stalls``, the cycles per fifo before the core's first input arrived (the pipeline
            filling; for a core without inputs, before its first call).
        calls: kernel calls made.
        finished_at: the cycle its program ended (None if it never did).
    """

    busy: int = 0
    banks: int = 0
    stall: int = 0
    stalls: dict[str, int] = field(default_factory=dict)
    fill: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    finished_at: int | None = None

    def utilisation(self, total: int) -> float:
        return self.busy / total if total else 0.0


class AcquireWait(Waiting):
    """A core blocked in ``acquire``: the sentence for a deadlock report."""

    __slots__ = ("side", "stmt")

    def __init__(self, side: Side, stmt: Acquire) -> None:
        self.side = side
        self.stmt = stmt

    def text(self) -> str:
        s, ring = self.stmt, self.side.ring
        what = "data" if isinstance(self.side, ReaderSide) else "a free buffer"
        return f"acquire({s.n}) of fifo {s.fifo!r} ({s.port.value}) waits for {what}: {ring.state()}"


class CallPlan:
    """A call with its arguments resolved against the core's fifo sides.

    Attributes:
        name: the kernel's name (the trace span's label).
        elems: the (parameter name, side, index) of every element argument, in order.
    """

    __slots__ = ("_affine", "_args", "_compiled", "_cost", "_costs", "_direct", "_elem_pos", "cascades", "elems",
                 "entries", "kernel", "name", "slotters", "traced", "user_errors")

    def __init__(self, call: Call, kernel: AnyKernel, sides: dict[str, Side], cost: CostFactory | None,
                 local: dict[str, LocalStore] | None = None) -> None:
        self.kernel = kernel
        self.name = kernel.name
        self._compiled = CompiledKernel(kernel) if isinstance(kernel, Kernel) else None
        self._costs: dict[tuple[int, ...], CallTiming] = {}
        # The simulation runs with numpy's floating-point warnings off (the IR's kernels
        # ignore them); a user's extern reference runs with the settings the user had.
        self.user_errors = np.geterr()
        # Argument template: arrays fixed once (constants), filled per call otherwise.
        self._args: list[np.ndarray | None] = []
        self._elem_pos: list[tuple[int, object, int]] = []  # (arg position, side, index) or loop vars
        self._affine: list[tuple[int, AffineArg]] = []  # (arg position, expression of loop vars)
        self.elems: list[tuple[str, Side, int]] = []
        local_banks: dict[str, tuple[tuple[int, int], int]] = {}
        self.cascades: list[tuple[str, bool, np.ndarray]] = []  # (cascade, sends, staging array)
        for i, (p, a) in enumerate(zip(kernel.params, call.args, strict=True)):
            if isinstance(a, CascadeArg):  # through the core's staging buffer of that side
                sends = p.name in kernel.written
                a = BufArg(staging_name(a.cascade, Port.PRODUCE if sends else Port.CONSUME))
                store = (local or {}).get(a.buffer)
                if store is not None:
                    self.cascades.append((call.args[i].cascade, sends, store.array))  # type: ignore[union-attr]
            if isinstance(a, BufArg):
                store = (local or {}).get(a.buffer)
                if store is None:
                    raise SimulationError(f"call of {kernel.name!r}: the plan places no buffer {a.buffer!r}")
                self._args.append(store.array)
                if store.bank is not None:
                    local_banks[p.name] = store.bank
            elif isinstance(a, ElemArg):
                self._args.append(None)
                self._elem_pos.append((i, sides[a.fifo], a.index))
                self.elems.append((p.name, sides[a.fifo], a.index))
            elif isinstance(a, ConstArg):
                self._args.append(np.asarray(a.value, dtype=a.dtype.numpy))
            elif isinstance(a, LoopVarArg):
                self._args.append(None)
                self._elem_pos.append((i, a.dtype.numpy, -1 - a.depth))
            elif isinstance(a, AffineArg):
                self._args.append(None)
                self._affine.append((i, a))
            else:  # pragma: no cover - the IR has no other argument kind
                raise SimulationError(f"unknown argument {a!r} of parameter {p.name!r}")
        self._cost = cost(kernel, self.elems, local_banks) if cost is not None and isinstance(kernel, Kernel) else None
        #: a compiled kernel with a cost model (timed and timing modes): the core runs it through
        #: ``slotters``, ``entries`` and :meth:`compute` rather than :meth:`execute`
        self.traced = self._compiled is not None and self._cost is not None
        #: per element argument: (side, index, whether the side writes, ring), to find its slot with no call
        self.slotters = [(side, idx, isinstance(side, WriterSide), side.ring) for _, side, idx in self.elems]
        #: (cycles, timing, the banks of the call some DMA transfer can touch, the fused step on those
        #: slots' buffers) per tuple of slots
        self.entries: dict[tuple[int, ...], tuple[int, CallTiming, tuple, Callable[[], None] | None]] = {}
        #: the compiled kernel's fused GEMM step when every argument is an element (no loop variable,
        #: affine expression, constant or local buffer): :meth:`compute` calls it with the buffers directly
        fused = self._compiled.fused if self._compiled is not None else None
        self._direct = fused if len(self._elem_pos) == len(self._args) and all(
            idx >= 0 for _, _, idx in self._elem_pos) and not self._affine else None

    def execute(self, loopvars: list[int], timed: bool, data: bool = True) -> tuple[int, CallTiming | None]:
        """Compute the call in place; return its cycles (0 when not timed) and, for a
        traced kernel, its timing (banks included).

        Call it with numpy's floating-point warnings silenced (``simulate`` does).
        With ``data`` False (timing mode) nothing is computed: a traced kernel's cycles
        depend only on the buffer slots, an extern kernel's cycle function gets the
        arguments as they are (buffers never written).
        """
        if not data and self._compiled is not None:  # (_timing inlined: timing mode runs little else per call)
            key = tuple([side.slot(idx) for _, side, idx in self.elems])
            t = self._costs.get(key)
            if t is None:
                t = self._costs[key] = self._cost(key)  # type: ignore[misc]
            return t.cycles, t
        args = list(self._args)
        slots = []
        for i, src, idx in self._elem_pos:
            if idx >= 0:
                side: Side = src  # type: ignore[assignment]
                s = side.slot(idx)
                slots.append(s)
                args[i] = side.ring.buf[s]
            else:
                args[i] = np.asarray(loopvars[-1 - idx], dtype=src)  # type: ignore[call-overload]
        for i, a in self._affine:
            args[i] = np.asarray(a.wrapped(loopvars), dtype=a.dtype.numpy)
        if self._compiled is not None:
            self._compiled.run_quiet(args)  # type: ignore[arg-type]
            if not timed:
                return 0, None
            return self._timing(tuple(slots))
        k: ExternKernel = self.kernel  # type: ignore[assignment]
        if data:
            with np.errstate(**self.user_errors):
                run_extern(k, args)
        if not timed:
            return 0, None
        return extern_cycles(k, tuple(v if v.ndim else v[()] for v in args)), None  # type: ignore[union-attr]

    def entry(self, key: tuple[int, ...],
              contention: Contention | None) -> tuple[int, CallTiming, tuple, Callable[[], None] | None]:
        """(cycles, timing, banks, direct) of a traced kernel's call on the buffer slots ``key``, kept in
        ``entries``: ``banks`` are the call's banks some DMA transfer can touch (``Contention.dma_banks``;
        the call is charged on no other, so only these are registered); ``direct`` the kernel's fused step
        bound to the slots' buffers (the same arrays on every call) when it has one, else None."""
        t = self._costs.get(key)
        if t is None:
            t = self._costs[key] = self._cost(key)  # type: ignore[misc]
        banks = contention.records(b for b in t.banks if b in contention.dma_banks) if contention is not None else ()
        direct = None
        if self._direct is not None:
            buffers = [src.ring.bufs[s] for (_, src, _), s in zip(self._elem_pos, key, strict=True)]  # type: ignore[union-attr]
            direct = partial(self._direct, None, buffers)
        got = self.entries[key] = (t.cycles, t, banks, direct)
        return got

    def compute(self, loopvars: list[int], key: tuple[int, ...]) -> None:
        """Compute a compiled kernel's call in place, its element arguments in the buffer slots ``key``
        (:meth:`execute`'s data part; numpy's floating-point warnings silenced by the caller). A kernel
        with a fused step runs through its entry's ``direct`` instead."""
        args = list(self._args)
        j = 0
        for i, src, idx in self._elem_pos:
            if idx >= 0:
                args[i] = src.ring.buf[key[j]]  # type: ignore[union-attr]
                j += 1
            else:
                args[i] = np.asarray(loopvars[-1 - idx], dtype=src)  # type: ignore[call-overload]
        for i, a in self._affine:
            args[i] = np.asarray(a.wrapped(loopvars), dtype=a.dtype.numpy)
        self._compiled.run_quiet(args)  # type: ignore[union-attr, arg-type]

    def _timing(self, key: tuple[int, ...]) -> tuple[int, CallTiming]:
        """Cycles and timing of a traced kernel's call on these buffer slots (cached per slots)."""
        t = self._costs.get(key)
        if t is None:
            t = self._costs[key] = self._cost(key)  # type: ignore[misc]
        return t.cycles, t


class CoreRunner:
    """Runs one core's program as a process.

    Attributes:
        core: the core.
        data: whether calls compute (False in timing mode: cycles only).
        stats: its busy and stall cycles.
        program: the flattened body.
        calls: every call of the body, in order.
    """

    def __init__(self, core: Core, sides: dict[str, Side], kernels: dict[str, AnyKernel],
                 cost: CostFactory | None, timed: bool, trace: Trace | None, track: int,
                 contention: Contention | None = None, data: bool = True,
                 local: dict[str, LocalStore] | None = None) -> None:
        self.core = core
        self.local = local or {}
        self.data = data
        self.contention = contention
        self.sides = sides
        self.timed = timed
        self.trace = trace
        self.track = track
        self.stats = CoreStats()
        self._filled = False
        self._stall_names: dict[str, int] = {}
        self.calls: list[CallPlan] = []
        self.cascades: dict = {}  # name -> simulator.cascade.Cascade, set by the builder
        self.program: list[tuple] = []
        self.depth = 0
        self._flatten(core.body, kernels, cost, 0)

    def _flatten(self, body: tuple[Stmt, ...], kernels: dict[str, AnyKernel], cost: CostFactory | None,
                 depth: int) -> None:
        prog = self.program
        for s in body:
            if isinstance(s, Acquire):
                side = self.sides[s.fifo]
                prog.append((_ACQUIRE, side, s.n, AcquireWait(side, s), s.fifo, isinstance(side, ReaderSide), side.ring))
            elif isinstance(s, Release):
                side = self.sides[s.fifo]
                ring = side.ring
                reader = isinstance(side, ReaderSide)
                sole = len(ring.readers if reader else ring.writers) == 1  # (the ring's sides are fixed once built)
                prog.append((_RELEASE, side, s.n, reader, ring, sole))
            elif isinstance(s, Call):
                plan = CallPlan(s, kernels[s.kernel], self.sides, cost if self.timed else None, self.local)
                self.calls.append(plan)
                name_id = self.trace.name_id(plan.name) if self.trace is not None else 0
                prog.append((_CALL, plan, name_id))
            else:
                loop: Loop = s  # type: ignore[assignment]
                self.depth = max(self.depth, depth + 1)
                head = len(prog)
                prog.append([_LOOP, depth, loop.start, loop.stop, loop.step, 0])
                self._flatten(loop.body, kernels, cost, depth + 1)
                prog.append((_NEXT, depth, head))
                prog[head][5] = len(prog)  # where an empty or finished loop continues
                prog[head] = tuple(prog[head])

    def run(self, proc: Process, engine: Engine) -> Generator[object, None, None]:
        """The process body: the flattened program, one instruction at a time."""
        prog, n = self.program, len(self.program)
        loopvars = [0] * self.depth
        stats, timed, trace, track, data = self.stats, self.timed, self.trace, self.track, self.data
        contention = self.contention
        span = trace.span_writer() if trace is not None else None
        pc = 0
        while pc < n:
            ins = prog[pc]
            op = ins[0]
            pc += 1
            if op == _ACQUIRE:
                side, k = ins[1], ins[2]
                need = k - side.held
                if need > 0:  # try_acquire, inlined (a reader needs published elements, a writer free slots)
                    r = ins[6]
                    if (r.n_published - side.consumed - side.held if ins[5]
                            else r.depth - (side.produced + side.held - r.n_freed)) >= need:
                        side.held = k
                    else:  # blocked: wait for the side's signal until the same test passes (try_acquire, inlined)
                        t0 = engine.now
                        filling = not self._filled and self._filling()
                        signal = side.wait_signal
                        proc.why = ins[3]
                        reader = ins[5]
                        while True:  # (held is the core's own: need stays what it was while it waits)
                            yield signal
                            if (r.n_published - side.consumed - side.held if reader
                                    else r.depth - (side.produced + side.held - r.n_freed)) >= need:
                                side.held = k
                                break
                        if engine.now != t0:
                            self._stalled(ins[4], t0, engine.now, filling)
            elif op == _RELEASE:
                side, k = ins[1], ins[2]
                if ins[3]:  # ReaderSide.release, inlined: a core frees its inputs most often (once per call)
                    r = ins[4]
                    side.held -= k
                    c = side.consumed = side.consumed + k
                    c = c if ins[5] else min(x.consumed for x in r.readers)
                    if c != r.n_freed:
                        r.n_freed = c
                        if r.space._waiters:
                            r.space.notify()
                else:
                    side.release(k)
            elif op == _CALL and ins[1].cascades:
                yield from cascade_call(self, ins[1], ins[2], loopvars, proc, engine)
            elif op == _CALL:
                plan = ins[1]
                if plan.traced:  # a compiled kernel: its timing per buffer slots, cached
                    slots = []  # (a loop, not a comprehension: no frame per call)
                    for s, i, w, r in plan.slotters:
                        slots.append(((s.produced if w else s.consumed) + i) % r.depth)
                    key = tuple(slots)
                    got = plan.entries.get(key)
                    if got is None:
                        got = plan.entry(key, contention)
                    cycles, timing, banks, direct = got
                    if data:
                        if direct is not None:  # every argument an element, the kernel one step (a GEMM's call)
                            direct()
                        else:
                            plan.compute(loopvars, key)
                else:
                    cycles, timing = plan.execute(loopvars, timed, data)
                    banks = ()
                stats.calls += 1
                if cycles:
                    start = engine.now
                    proc.why = "running kernel"
                    if banks:
                        running = contention.call_started(start, timing, banks)  # type: ignore[union-attr]
                        yield cycles
                        while running.end > engine.now:  # the DMA took bank cycles meanwhile
                            yield running.end - engine.now
                        cycles = engine.now - start
                    else:
                        yield cycles
                    stats.busy += cycles
                    if timing is not None and timing.alone:
                        stats.banks += cycles - timing.alone
                    if span is not None:
                        span((track, ins[2], start, cycles))
            elif op == _LOOP:
                _, d, start, stop, step, end = ins
                if (step > 0 and start < stop) or (step < 0 and start > stop):
                    loopvars[d] = start
                else:
                    pc = end
            else:
                _, d, head = ins
                _, _, _, stop, step, _ = prog[head]
                i = loopvars[d] + step
                if (step > 0 and i < stop) or (step < 0 and i > stop):
                    loopvars[d] = i
                    pc = head + 1

    def _filling(self) -> bool:
        """Whether the core has had no data yet: none of its inputs ever acquired (a core without
        inputs: no call made yet). Asked only when an acquire blocks, never per instruction."""
        if self._filled:  # once data arrived it stays arrived (consumed and calls only grow)
            return False
        readers = [s for s in self.sides.values() if isinstance(s, ReaderSide)]
        filling = not self.stats.calls if not readers else not any(s.consumed or s.held for s in readers)
        self._filled = not filling
        return filling

    def _stalled(self, fifo: str, t0: int, t1: int, filling: bool = False) -> None:
        waited = t1 - t0
        if waited:
            st = self.stats
            st.stall += waited
            st.stalls[fifo] = st.stalls.get(fifo, 0) + waited
            if filling:
                st.fill[fifo] = st.fill.get(fifo, 0) + waited
            if self.trace is not None:
                name = self._stall_names.get(fifo)
                if name is None:  # (the label's id taken at its first use, as Trace.add would)
                    name = self._stall_names[fifo] = self.trace.name_id(f"stall {fifo}")
                self.trace.add_span(self.track, name, t0, waited)
