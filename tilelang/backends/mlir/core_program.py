"""A core program as MLIR: loops, kernel calls and fifo synchronisation.

The walk is shared by both levels; what an acquire, a release or a fifo element
becomes is the level's :class:`SyncLowering` (``aie.objectfifo.*`` ops, or
locks and buffers).

Fifo windows follow IRON: ``acquire(n)`` makes n elements held, acquiring only
the difference. How many elements are held at each statement is therefore
static once every loop is entered in its steady state, so a loop whose first
iterations hold different counts than the later ones (say, a sliding window
primed inside the loop) has those iterations peeled off and emitted straight;
the rest is one ``scf.for`` whose every iteration is alike. Counts of elements
acquired and released so far are affine in the loops' iteration numbers
(:class:`Count`), which is all a level needs to find the buffer an element
lives in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from tilelang.backends.mlir import scalar_rules
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.cascade import get_tile, put_tile
from tilelang.backends.mlir.types import scalar_type
from tilelang.errors import DesignError
from tilelang.ir.design import (
    Acquire,
    AffineArg,
    BufArg,
    Call,
    CascadeArg,
    ConstArg,
    Core,
    Design,
    ElemArg,
    Loop,
    LoopVarArg,
    Port,
    Release,
    Stmt,
    staging_name,
)
from tilelang.ir.kernel import ExternKernel
from tilelang.ir.verify import core_ports

Held = dict[str, int]


@dataclass(frozen=True)
class Count:
    """``const + sum(coef * k)`` over the iteration numbers ``k`` of enclosing ``scf.for`` loops."""

    const: int = 0
    terms: tuple[tuple[int, int], ...] = ()

    def plus(self, n: int) -> Count:
        return Count(self.const + n, self.terms)

    def with_term(self, loop: int, coef: int, shift: int) -> Count:
        """This count plus ``coef * (k_loop - shift)``."""
        if coef == 0:
            return self
        return Count(self.const - coef * shift, (*self.terms, (loop, coef)))

    def modulo(self, m: int) -> Count:
        """The same count reduced modulo ``m`` (terms with a coefficient divisible by m vanish)."""
        return Count(self.const % m, tuple((lp, c % m) for lp, c in self.terms if c % m))

    @property
    def static(self) -> bool:
        return not self.terms


class SyncLowering(Protocol):
    """What a level makes of a core's fifo operations."""

    def acquire(self, fifo: str, port: Port, n: int, new: int, acquired: Count) -> None:
        """``n`` elements become held; ``new`` of them are fresh, the first being number ``acquired``."""

    def release(self, fifo: str, port: Port, n: int, released: Count) -> None:
        """The ``n`` oldest held elements, the first being number ``released``, are given back."""

    def element(self, fifo: str, port: Port, index: int, released: Count, held: int) -> object:
        """The memref of held element ``index`` (the oldest held is number ``released``)."""

    def enter_loop(self, touched: set[str]) -> None:
        """An ``scf.for`` body begins; ``touched`` fifos are acquired or released inside it."""

    def exit_loop(self, touched: set[str]) -> None:
        """The body ends."""

    def unroll_factor(self, released_per_iteration: dict[str, int]) -> int:
        """How many iterations one ``scf.for`` step should hold (1: none unrolled)."""


@dataclass
class FifoState:
    """Where one fifo stands at a point of the program."""

    held: int = 0
    acquired: Count = field(default_factory=Count)
    released: Count = field(default_factory=Count)


# -- static simulation of held counts -------------------------------------------------------


def simulate(body: tuple[Stmt, ...], held: Held) -> tuple[Held, dict[str, int], dict[str, int]]:
    """Held counts after ``body`` and the elements it acquires and releases, per fifo."""
    held = dict(held)
    acq: dict[str, int] = {}
    rel: dict[str, int] = {}
    for s in body:
        if isinstance(s, Acquire):
            new = max(0, s.n - held.get(s.fifo, 0))
            held[s.fifo] = max(held.get(s.fifo, 0), s.n)
            acq[s.fifo] = acq.get(s.fifo, 0) + new
        elif isinstance(s, Release):
            held[s.fifo] = held.get(s.fifo, 0) - s.n
            rel[s.fifo] = rel.get(s.fifo, 0) + s.n
        elif isinstance(s, Loop):
            held, a, r = simulate_loop(s, held)
            for f, v in a.items():
                acq[f] = acq.get(f, 0) + v
            for f, v in r.items():
                rel[f] = rel.get(f, 0) + v
    return held, acq, rel


def steady_peel(loop: Loop, held: Held) -> int:
    """Iterations to run before every later iteration starts and ends with the same held counts."""
    peel, h = 0, dict(held)
    while peel < loop.trip_count:
        after = simulate(loop.body, h)[0]
        if all(after.get(f, 0) == h.get(f, 0) for f in set(after) | set(h)):
            return peel
        h, peel = after, peel + 1
    return peel


def simulate_loop(loop: Loop, held: Held) -> tuple[Held, dict[str, int], dict[str, int]]:
    acq: dict[str, int] = {}
    rel: dict[str, int] = {}
    h = dict(held)
    peel = steady_peel(loop, h)
    for _ in range(peel):
        h, a, r = simulate(loop.body, h)
        for f, v in a.items():
            acq[f] = acq.get(f, 0) + v
        for f, v in r.items():
            rel[f] = rel.get(f, 0) + v
    rest = loop.trip_count - peel
    if rest:
        h, a, r = simulate(loop.body, h)
        for f, v in a.items():
            acq[f] = acq.get(f, 0) + v * rest
        for f, v in r.items():
            rel[f] = rel.get(f, 0) + v * rest
    return h, acq, rel


def touched(body: tuple[Stmt, ...]) -> set[str]:
    """Fifos acquired or released anywhere in ``body``."""
    out: set[str] = set()
    for s in body:
        if isinstance(s, Acquire | Release):
            out.add(s.fifo)
        elif isinstance(s, Loop):
            out |= touched(s.body)
    return out


# -- emission -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoopFrame:
    """One enclosing ``tl.range``: its statement and its iteration number ``k``.

    ``k`` is an int for an iteration emitted straight, else ``(j, a, b)``:
    ``k = a * j + b`` with ``j`` the ``scf.for`` induction variable.
    """

    loop: Loop
    k: int | tuple[object, int, int]
    ident: int


class CoreEmitter:
    """Emits one core's program at the current insertion point."""

    def __init__(self, design: Design, core: Core, sync: SyncLowering, callee_names: dict[str, str]) -> None:
        self.design = design
        self.core = core
        self.sync = sync
        self.callees = callee_names
        self.ports = core_ports(core)
        self.frames: list[LoopFrame] = []
        self.loop_ids = 0
        self.ivs: dict[int, object] = {}
        self.local: dict[str, object] = {}  # the core's local buffers (memref values), set by emit_core

    def run(self) -> None:
        self.block(self.core.body, {f: FifoState() for f in self.ports})

    def block(self, body: tuple[Stmt, ...], state: dict[str, FifoState]) -> None:
        for s in body:
            if isinstance(s, Acquire):
                st = state[s.fifo]
                new = max(0, s.n - st.held)
                self.sync.acquire(s.fifo, s.port, s.n, new, st.acquired)
                st.held = max(st.held, s.n)
                st.acquired = st.acquired.plus(new)
            elif isinstance(s, Release):
                st = state[s.fifo]
                self.sync.release(s.fifo, s.port, s.n, st.released)
                st.held -= s.n
                st.released = st.released.plus(s.n)
            elif isinstance(s, Call):
                self.call(s, state)
            elif isinstance(s, Loop):
                self.loop(s, state)

    def loop(self, loop: Loop, state: dict[str, FifoState]) -> None:
        held = {f: st.held for f, st in state.items()}
        peel = steady_peel(loop, held)
        ident = self.loop_ids
        self.loop_ids += 1
        for k in range(peel):
            self.frames.append(LoopFrame(loop, k, ident))
            self.block(loop.body, state)
            self.frames.pop()
        rest = loop.trip_count - peel
        if rest <= 0:
            return
        _, acq, rel = simulate(loop.body, {f: st.held for f, st in state.items()})
        unroll = max(1, self.sync.unroll_factor(rel))
        if unroll > rest:
            unroll = 1
        steps = rest // unroll
        if steps <= 1:
            steps = 0  # one step of a loop is no loop: emit it straight with the rest
        else:
            self.steady_loop(loop, state, ident, peel, steps, unroll, acq, rel)
        # Iterations left over by the unrolling run straight, like the peeled ones.
        for k in range(peel + steps * unroll, loop.trip_count):
            self.frames.append(LoopFrame(loop, k, ident))
            self.block(loop.body, state)
            self.frames.pop()

    def steady_loop(
        self,
        loop: Loop,
        state: dict[str, FifoState],
        ident: int,
        peel: int,
        steps: int,
        unroll: int,
        acq: dict[str, int],
        rel: dict[str, int],
    ) -> None:
        """``scf.for %j = 0 to steps``, each step running ``unroll`` iterations (k = peel + unroll*j + t)."""
        m = mlir()
        index = m.ir.IndexType.get()
        lb, ub, one = (m.arith.constant(index, v) for v in (0, steps, 1))
        for_op = m.scf.ForOp(lb, ub, one)
        names = touched(loop.body)
        entry = {f: FifoState(st.held, st.acquired, st.released) for f, st in state.items()}
        with m.ir.InsertionPoint(for_op.body):
            j = for_op.induction_variable
            self.ivs[ident] = j
            self.sync.enter_loop(names)
            inner = {
                f: FifoState(
                    st.held,
                    st.acquired.with_term(ident, acq.get(f, 0) * unroll, 0),
                    st.released.with_term(ident, rel.get(f, 0) * unroll, 0),
                )
                for f, st in entry.items()
            }
            for t in range(unroll):
                self.frames.append(LoopFrame(loop, (j, unroll, peel + t), ident))
                self.block(loop.body, inner)
                self.frames.pop()
            self.sync.exit_loop(names)
            m.scf.YieldOp([])
        for f, st in state.items():
            st.acquired = st.acquired.plus(acq.get(f, 0) * steps * unroll)
            st.released = st.released.plus(rel.get(f, 0) * steps * unroll)

    def call(self, call: Call, state: dict[str, FifoState]) -> None:
        m = mlir()
        kernel = self.design.kernel(call.kernel)
        args = []
        sends = []
        for p, a in zip(kernel.params, call.args, strict=True):
            if isinstance(a, CascadeArg):
                if isinstance(kernel, ExternKernel):
                    continue  # the vendor kernel puts or gets the words itself (cascade.py)
                port = Port.PRODUCE if p.name in kernel.written else Port.CONSUME
                staging = self.local[staging_name(a.cascade, port)]
                elem = self.design.cascade(a.cascade).elem
                if port is Port.PRODUCE:
                    sends.append((staging, elem))
                else:
                    get_tile(staging, elem, self.design.device)
                args.append(staging)
            elif isinstance(a, ElemArg):
                st = state[a.fifo]
                args.append(self.sync.element(a.fifo, self.ports[a.fifo], a.index, st.released, st.held))
            elif isinstance(a, ConstArg):
                args.append(scalar_rules.const(a.dtype, a.value))
            elif isinstance(a, LoopVarArg):
                args.append(self.loop_var(a))
            elif isinstance(a, AffineArg):
                args.append(self.affine(a))
            elif isinstance(a, BufArg) and a.buffer in self.local:
                args.append(self.local[a.buffer])
            else:
                raise DesignError(f"core {self.core.name!r}: unsupported argument {a!r} to {kernel.name!r}")
        m.func.CallOp([], self.callees[kernel.name], args)
        for staging, elem in sends:
            put_tile(staging, elem, self.design.device)

    def loop_var(self, a: LoopVarArg) -> object:
        """The user's induction variable ``start + k * step`` of loop ``a.depth``, as ``a.dtype``."""
        return self.affine(AffineArg(((a.depth, 1),), 0, a.dtype))

    def affine(self, a: AffineArg) -> object:
        """``offset + sum(coeff * induction variable)`` as ``a.dtype``: index arithmetic, then a truncating cast.

        Each induction variable is ``start + (mult * j + add) * step`` of its loop's counter ``j``
        (a constant in an unrolled loop), so the sum is ``const + sum(scale_j * j)``. The argument is
        that sum wrapped to ``a.dtype``, so ``const`` and every ``scale_j`` are wrapped to it as well
        (``DType.wrap``; an index constant could not hold any integer): the truncating cast gives the same value.
        """
        m = mlir()
        const, scaled = a.offset, []
        for depth, coeff in a.terms:
            frame = self.frames[depth]
            lp = frame.loop
            if isinstance(frame.k, int):
                const += coeff * (lp.start + frame.k * lp.step)
                continue
            j, mult, add = frame.k
            const += coeff * (lp.start + add * lp.step)
            scaled.append((j, coeff * mult * lp.step))
        index = m.ir.IndexType.get()
        v = None
        for j, scale in scaled:
            scale = a.dtype.wrap(scale)
            if scale == 0:
                continue
            t = j if scale == 1 else m.arith.muli(j, m.arith.constant(index, scale))
            v = t if v is None else m.arith.addi(v, t)
        const = a.dtype.wrap(const)
        if v is None:  # (no loop counter, or every scale a multiple of 2**bits: the argument is the constant)
            return scalar_rules.const(a.dtype, const)
        if const != 0:
            v = m.arith.addi(v, m.arith.constant(index, const))
        return m.arith.index_cast(scalar_type(a.dtype), v)

    def count_value(self, c: Count, modulo: int) -> int | object:
        """``c mod modulo`` as an int when static, else as an SSA index."""
        c = c.modulo(modulo)
        if c.static:
            return c.const
        m = mlir()
        index = m.ir.IndexType.get()
        acc = m.arith.constant(index, c.const)
        for loop, coef in c.terms:
            acc = m.arith.addi(acc, m.arith.muli(self.ivs[loop], m.arith.constant(index, coef)))
        return m.arith.remui(acc, m.arith.constant(index, modulo))
