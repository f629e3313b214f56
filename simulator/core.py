"""The core program interpreter: loops, lock-guarded acquires and releases, kernel calls.

A core runs its statements in order. ``acquire`` blocks (the core stalls)
until the fifo side can grant it; ``release`` hands buffers back at once; a
kernel call computes its numpy semantics on the held buffers in place and
takes the cost model's cycles as one event. Lock operations and loop control
take no cycles of their own: the per-call overhead covers them (cost.py).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field

import numpy as np

from simulator.cost import extern_cycles, kernel_cycles
from simulator.engine import Engine, Process
from simulator.memory import ReaderSide, WriterSide
from simulator.result import Trace
from tilelang.devices import Device
from tilelang.errors import SimulationError
from tilelang.frontend.calls import run_extern
from tilelang.ir import semantics
from tilelang.ir.design import Acquire, Call, ConstArg, Core, ElemArg, Loop, LoopVarArg, Release, Stmt
from tilelang.ir.kernel import AnyKernel, ExternKernel, Kernel

Side = WriterSide | ReaderSide

_ELEM, _CONST, _LOOP = 0, 1, 2


@dataclass
class CoreStats:
    """Where one core's time went.

    Attributes:
        busy: cycles spent in kernel calls.
        stall: cycles spent blocked in acquires.
        stalls: stall cycles per fifo.
        calls: kernel calls made.
        finished_at: the cycle its program ended (None if it never did).
    """

    busy: int = 0
    stall: int = 0
    stalls: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    finished_at: int | None = None

    def utilisation(self, total: int) -> float:
        return self.busy / total if total else 0.0


class _CallPlan:
    """A call with its arguments resolved against the core's fifo sides."""

    __slots__ = ("args", "cycles", "kernel", "name")

    def __init__(self, call: Call, kernel: AnyKernel, sides: dict[str, Side], device: Device, timed: bool) -> None:
        self.kernel = kernel
        self.name = kernel.name
        self.args: list[tuple[str, int, object, object]] = []
        for p, a in zip(kernel.params, call.args, strict=True):
            if isinstance(a, ElemArg):
                self.args.append((p.name, _ELEM, sides[a.fifo], a.index))
            elif isinstance(a, ConstArg):
                self.args.append((p.name, _CONST, np.asarray(a.value, dtype=a.dtype.numpy), None))
            elif isinstance(a, LoopVarArg):
                self.args.append((p.name, _LOOP, a.depth, a.dtype.numpy))
            else:  # pragma: no cover - the IR has no other argument kind
                raise SimulationError(f"unknown argument {a!r}")
        self.cycles = kernel_cycles(kernel, device) if timed and isinstance(kernel, Kernel) else None

    def values(self, loopvars: list[int]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for name, kind, a, b in self.args:
            if kind == _ELEM:
                side: Side = a  # type: ignore[assignment]
                out[name] = side.ring.buf[side.slot(b)]  # type: ignore[arg-type]
            elif kind == _CONST:
                out[name] = a  # type: ignore[assignment]
            else:
                out[name] = np.asarray(loopvars[a], dtype=b)  # type: ignore[index]
        return out

    def execute(self, loopvars: list[int], timed: bool) -> int:
        """Compute the call in place; return its cycles."""
        values = self.values(loopvars)
        k = self.kernel
        if isinstance(k, Kernel):
            semantics.run(k, values)
            return self.cycles or 0
        assert isinstance(k, ExternKernel)
        ordered = [values[p.name] for p in k.params]
        run_extern(k, ordered)
        if not timed:
            return 0
        return extern_cycles(k, tuple(v if v.ndim else v[()] for v in ordered))


class CoreRunner:
    """Runs one core's program as a process.

    Attributes:
        core: the core.
        stats: its busy and stall cycles.
    """

    def __init__(self, core: Core, sides: dict[str, Side], kernels: dict[str, AnyKernel], device: Device,
                 timed: bool, trace: Trace | None, track: int) -> None:
        self.core = core
        self.sides = sides
        self.timed = timed
        self.trace = trace
        self.track = track
        self.stats = CoreStats()
        self.plans: dict[int, _CallPlan] = {}
        self._prepare(core.body, kernels, device)

    def _prepare(self, body: tuple[Stmt, ...], kernels: dict[str, AnyKernel], device: Device) -> None:
        for s in body:
            if isinstance(s, Loop):
                self._prepare(s.body, kernels, device)
            elif isinstance(s, Call):
                self.plans[id(s)] = _CallPlan(s, kernels[s.kernel], self.sides, device, self.timed)

    def run(self, proc: Process, engine: Engine) -> Generator[object, None, None]:
        """The process body."""
        yield from self._body(self.core.body, [], proc, engine)

    def _body(self, body: tuple[Stmt, ...], loopvars: list[int], proc: Process,
              engine: Engine) -> Generator[object, None, None]:
        for s in body:
            cls = s.__class__
            if cls is Acquire:
                side = self.sides[s.fifo]  # type: ignore[union-attr]
                if not side.try_acquire(s.n):  # type: ignore[union-attr]
                    yield from self._stall(side, s, proc, engine)  # type: ignore[arg-type]
            elif cls is Release:
                self.sides[s.fifo].release(s.n)  # type: ignore[union-attr]
            elif cls is Call:
                plan = self.plans[id(s)]
                cycles = plan.execute(loopvars, self.timed)
                self.stats.calls += 1
                if cycles:
                    self.stats.busy += cycles
                    if self.trace is not None:
                        self.trace.add(self.track, plan.name, engine.now, cycles)
                    proc.why = f"running kernel {plan.name!r}"
                    yield cycles
            else:
                loop: Loop = s  # type: ignore[assignment]
                loopvars.append(0)
                for i in range(loop.start, loop.stop, loop.step):
                    loopvars[-1] = i
                    yield from self._body(loop.body, loopvars, proc, engine)
                loopvars.pop()

    def _stall(self, side: Side, s: Acquire, proc: Process, engine: Engine) -> Generator[object, None, None]:
        t0 = engine.now
        ring = side.ring
        reading = isinstance(side, ReaderSide)
        signal = ring.data if reading else ring.space
        what = "data" if reading else "a free buffer"
        while not side.try_acquire(s.n):
            proc.why = (f"acquire({s.n}) of fifo {s.fifo!r} ({s.port.value}) waits for {what}: "
                        f"{ring.state()}")
            yield signal
        waited = engine.now - t0
        if waited:
            self.stats.stall += waited
            self.stats.stalls[s.fifo] = self.stats.stalls.get(s.fifo, 0) + waited
            if self.trace is not None:
                self.trace.add(self.track, f"stall {s.fifo}", t0, waited)
