"""Lifetimes of a core's local buffers (``tl.buffer``) and the memory its program holds.

A core program is structured and static: straight-line calls, acquires and
releases, and loops with known trip counts. Liveness is the textbook backward
dataflow over that program (Appel, *Modern Compiler Implementation*, ch. 10),
solved structurally: a loop that runs twice or more feeds the live set at the
start of its body back to its end until the sets stop growing.

Per call, the buffers that must hold their own bytes while it runs are the
*resident* set: those live after it, those it reads and those it writes. Two
buffers interfere (may not share memory) when some call has both resident;
buffers that never do can be packed at one address.

What a call does to a buffer comes from the kernel:

- a traced kernel *reads* a parameter when it loads it before storing the
  whole tile, and *kills* it (defines every byte without reading) when its
  first access is a whole-tile store; a partial store is a read and a write;
- an extern kernel is opaque: a written parameter counts as read and written
  (never killed), so lifetimes are never cut short on a guess.

Fifo elements are not packed (a DMA fills free slots whenever it likes), but
the slots a core holds between acquire and release count towards its live
bytes, which is what :func:`Liveness.peak` reports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from tilelang.ir.design import Acquire, BufArg, Call, CascadeArg, Core, Fifo, Loop, Port, Release, Stmt, staging_name
from tilelang.ir.kernel import AnyKernel, Kernel, OpKind


def _first_accesses(k: Kernel, name: str) -> tuple[bool, bool]:
    """(reads before a whole store, first access is a whole store) of parameter ``name``."""
    for op in k.body:
        if op.kind is OpKind.LOAD and op.operands[0].name == name:
            return True, False
        if op.kind is OpKind.STORE and op.operands[0].name == name:
            whole = op.attr("index") is None
            if whole:
                # the stored value was computed before the store: loads in it were seen above
                return False, True
    return False, False


def must_read(k: AnyKernel, name: str) -> bool:
    """True when every call of ``k`` reads tile parameter ``name``'s previous content.

    An extern kernel's declared inputs (tile parameters it does not write) are read;
    its outputs are assumed written before read (the user declared them outputs).
    """
    if isinstance(k, Kernel):
        return _first_accesses(k, name)[0]
    return name not in k.written


def may_read(k: AnyKernel, name: str) -> bool:
    """True unless ``k`` certainly defines ``name`` whole before reading it (liveness' conservative side)."""
    return not kills(k, name)


def kills(k: AnyKernel, name: str) -> bool:
    """True when ``k`` writes every byte of tile parameter ``name`` before reading any."""
    return isinstance(k, Kernel) and _first_accesses(k, name)[1]


@dataclass(frozen=True)
class CallAccess:
    """The local buffers one call reads (``uses``: previous content needed), writes and kills."""

    uses: frozenset[str]
    writes: frozenset[str]
    kills: frozenset[str]


def call_access(call: Call, kernel: AnyKernel) -> CallAccess:
    """What ``call`` does to its core's local buffers."""
    uses, writes, killed = set(), set(), set()
    for p, a in zip(kernel.params, call.args, strict=True):
        if isinstance(a, CascadeArg):
            # the staging buffer: the get before the call defines it whole, a call sending writes it whole
            # (verify_cascades) and the put right after it reads it; live only around this call
            sends = p.name in kernel.written
            name = staging_name(a.cascade, Port.PRODUCE if sends else Port.CONSUME)
            killed.add(name)
            if sends:
                writes.add(name)
            continue
        if not isinstance(a, BufArg):
            continue
        if kills(kernel, p.name):
            killed.add(a.buffer)
        elif may_read(kernel, p.name):
            uses.add(a.buffer)
        if p.name in kernel.written:
            writes.add(a.buffer)
    # a buffer passed twice, once killed and once read, is read
    return CallAccess(frozenset(uses), frozenset(writes), frozenset(killed - uses))


@dataclass(frozen=True)
class Liveness:
    """Lifetimes of one core's local buffers.

    Attributes:
        core: the core.
        calls: every call of the program in pre-order (loops once).
        resident: per call, the local buffers that hold their bytes while it runs.
        after: per call, the local buffers live after it (some later call reads them).
        held: per call, the bytes of fifo elements the core holds while it runs.
        sizes: bytes of each local buffer.
    """

    core: str
    calls: tuple[Call, ...]
    resident: tuple[frozenset[str], ...]
    after: tuple[frozenset[str], ...]
    held: tuple[int, ...]
    sizes: Mapping[str, int]

    def interferes(self, a: str, b: str) -> bool:
        """True when buffers ``a`` and ``b`` are both resident during some call."""
        return any(a in s and b in s for s in self.resident)

    def interference(self) -> set[tuple[str, str]]:
        """Every interfering pair, each as (smaller name, larger name)."""
        out: set[tuple[str, str]] = set()
        for s in self.resident:
            names = sorted(s)
            out.update((x, y) for i, x in enumerate(names) for y in names[i + 1 :])
        return out

    def peak_local(self) -> int:
        """Most bytes of local buffers resident during one call."""
        return max((sum(self.sizes[b] for b in s) for s in self.resident), default=0)

    def peak(self) -> int:
        """Most bytes of local buffers and held fifo elements during one call."""
        return max((sum(self.sizes[b] for b in s) + h for s, h in zip(self.resident, self.held, strict=True)),
                   default=0)


def _number(body: tuple[Stmt, ...], out: list[Call]) -> None:
    for s in body:
        if isinstance(s, Call):
            out.append(s)
        elif isinstance(s, Loop):
            _number(s.body, out)


class _Solver:
    def __init__(self, kernels: Mapping[str, AnyKernel]) -> None:
        self.kernels = kernels
        self.resident: dict[int, set[str]] = defaultdict(set)
        self.after: dict[int, set[str]] = defaultdict(set)
        self.pos: dict[int, int] = {}

    def before(self, body: tuple[Stmt, ...], start: int, after: frozenset[str]) -> frozenset[str]:
        """Live set before ``body`` given the live set after it; ``start``: the first call's number."""
        numbered: list[tuple[Stmt, int]] = []
        at = start
        for s in body:
            numbered.append((s, at))
            at += 1 if isinstance(s, Call) else _count(s) if isinstance(s, Loop) else 0
        live = after
        for s, n in reversed(numbered):
            if isinstance(s, Call):
                acc = call_access(s, self.kernels[s.kernel])
                self.resident[n] |= live | acc.uses | acc.writes | acc.kills
                self.after[n] |= live
                live = (live - acc.kills) | acc.uses
            elif isinstance(s, Loop):
                live = self.loop(s, n, live)
        return live

    def loop(self, s: Loop, start: int, after: frozenset[str]) -> frozenset[str]:
        if s.trip_count == 0:
            return after
        live = self.before(s.body, start, after)
        if s.trip_count == 1:
            return live
        while True:  # monotone over a finite set of buffers: terminates
            again = self.before(s.body, start, after | live)
            if again == live:
                return live
            live = again


def _count(s: Loop) -> int:
    out: list[Call] = []
    _number(s.body, out)
    return len(out)


def _held_bytes(core: Core, fifos: Mapping[str, Fifo], n_calls: int) -> list[int]:
    """Bytes of fifo elements held at each call (most over the iterations walked, as ``check_sync`` walks)."""
    held: dict[str, int] = defaultdict(int)
    out = [0] * n_calls

    def run(body: tuple[Stmt, ...], at: int) -> int:
        for s in body:
            if isinstance(s, Acquire):
                held[s.fifo] = max(held[s.fifo], s.n)
            elif isinstance(s, Release):
                held[s.fifo] = max(0, held[s.fifo] - s.n)
            elif isinstance(s, Call):
                out[at] = max(out[at], sum(n * fifos[f].elem.nbytes for f, n in held.items() if f in fifos))
                at += 1
            elif isinstance(s, Loop):
                end = at + _count(s)
                for _ in range(min(s.trip_count, 1 + max((f.depth for f in fifos.values()), default=1))):
                    before = dict(held)
                    run(s.body, at)
                    if all(held[f] == before.get(f, 0) for f in held):
                        break
                at = end
        return at

    run(core.body, 0)
    return out


def liveness(core: Core, kernels: Mapping[str, AnyKernel], fifos: Mapping[str, Fifo] | None = None) -> Liveness:
    """The lifetimes of ``core``'s local buffers (and the fifo bytes it holds, given ``fifos``).

    Args:
        core: a verified core program.
        kernels: the design's kernels by name.
        fifos: the design's fifos by name (None: held fifo bytes count as 0).

    Returns:
        The :class:`Liveness`; nothing is live before the program (a buffer's
        first use is a write, ``verify.check_locals``).
    """
    calls: list[Call] = []
    _number(core.body, calls)
    solver = _Solver(kernels)
    solver.before(core.body, 0, frozenset())
    resident = tuple(frozenset(solver.resident.get(i, set())) for i in range(len(calls)))
    after = tuple(frozenset(solver.after.get(i, set())) for i in range(len(calls)))
    held = _held_bytes(core, fifos or {}, len(calls)) if fifos else [0] * len(calls)
    return Liveness(core.name, tuple(calls), resident, after, tuple(held), {b.name: b.nbytes for b in core.buffers})


__all__ = ["CallAccess", "Liveness", "call_access", "kills", "liveness", "may_read", "must_read"]
