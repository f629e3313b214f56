"""The host runtime sequence: DMA moves between DDR tensors and fifos.

The moves are issued in program order. A move waits for every earlier move
that shares a fifo with it to complete (moves on one fifo complete one after
another); moves on different fifos run concurrently. A to-device move walks
its tensor with its access pattern and pushes ``pattern.numel // elem.numel``
elements into each of its fifos; a from-device move pops that many elements
and scatters them into the tensor along the pattern.

Issuing costs time where the device has a runtime sequence (the device's
``host_memory``): the command processor writes one move's BD and pushes its
task in ``issue`` cycles, one move after another in program order, and a
fifo's channel holds at most ``queue`` pushed moves that have not completed;
a move whose channel is full waits for a slot while the processor pushes the
moves after it (mlir-aie's compiler interleaves a full channel's pushes with
other channels' transfers rather than stall the sequence). A pushed move
starts once every earlier move on its fifos has completed; a to-device move
started on idle channels gets its first data ``latency`` cycles later (the
first burst's latency); one queued behind its predecessors streams on. A PLIO
move (``Dma.plio``) streams from the programmable logic, not DDR: it has no such
latency (docs/plio.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import product

import numpy as np
from numpy.lib.stride_tricks import as_strided

from simulator.engine import Engine, Signal
from tilelang.errors import SimulationError
from tilelang.ir.design import Dma
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.sequence import Channel, HostSequence, Push, Transfer, Wait


class HostMove:
    """One ``tl.dma`` between a host tensor and fifos.

    Attributes:
        dma: the move.
        total: elements it moves per fifo.
        fifos / to_device: the move's fifos and direction (the Dma's, read once).
        unsent: elements still to send, over all its fifos (to-device).
        issued_at / completed_at: cycles (None until then).
        sent: elements sent per fifo (to-device).
        reserved / landed: elements started / written into the tensor (from-device).
        ddr: whether its data comes from or goes to DDR through a shim DMA (False: a PLIO stream).
    """

    def __init__(self, dma: Dma, tensor: np.ndarray | None, elem_numel: int, elem_bytes: int) -> None:
        self.dma = dma
        # no tensor: timing mode, where elements are counted but never gathered or scattered
        self.flat = tensor.reshape(-1) if tensor is not None else None
        self.n = elem_numel
        self.walk = ElementWalk(dma.pattern, elem_numel, self.flat) if self.flat is not None else None
        self.total = dma.pattern.numel // elem_numel
        self.nbytes = self.total * elem_bytes * len(dma.fifos)
        self.fifos = dma.fifos  # (a property of the Dma: read once here, it is asked per element)
        self.to_device = dma.to_device
        self.ddr = not dma.plio
        self.sent = {f: 0 for f in self.fifos}
        self.unsent = self.total * len(self.fifos)  # elements still to send over all its fifos (to-device)
        self.reserved = 0
        self.landed = 0
        self.issued_at: int | None = None
        self.completed_at: int | None = None
        self.pushed = False
        self.opening = False
        self.ready = False  # its data may move (issued, predecessors done, first burst's latency past)
        self.issue_start = 0
        itemsize = elem_bytes // elem_numel if elem_numel else 1
        self.run_bytes = contiguous_run(dma.pattern) * itemsize
        self.waiting_on: list[HostMove] = []
        self.dependents: list[HostMove] = []

    @property
    def complete(self) -> bool:
        return self.completed_at is not None

    def gather(self, fifo: str) -> np.ndarray:
        """The next element for ``fifo`` (a view of the tensor when the pattern allows one)."""
        return self.walk.read(self.sent[fifo])

    def scatter(self, k: int, data: np.ndarray) -> None:
        self.walk.write(k, data)


def contiguous_run(pattern: AccessPattern) -> int:
    """Elements of the longest contiguous run the pattern walks (its innermost dimensions
    that step by one element in a row): one DDR burst sequence per run."""
    run = 1
    for size, stride in zip(reversed(pattern.sizes), reversed(pattern.strides), strict=True):
        if size == 1:
            continue
        if stride != run:
            break
        run *= size
    return run


class ElementWalk:
    """The tensor part of the k-th fifo element a pattern walks, without materialising the walk.

    When an element is exactly the pattern's innermost dimensions (a tile walk),
    the whole walk is one strided view of the tensor (``sizes`` by ``strides``)
    and element k is the view indexed by its outer indices: reading it copies
    rows, writing it writes through, with no index arrays. Otherwise the walk's
    offsets are computed once, on first use, and elements are gathered by them.
    An element that visits one offset twice is written through its offsets too
    (numpy may assign a self-overlapping view in any order; the walk's order
    decides which value stays).

    Raises:
        SimulationError: the pattern reaches outside the tensor (the design
            verifier rejects such patterns; a hand-made plan might not).
    """

    def __init__(self, pattern: AccessPattern, n: int, flat: np.ndarray) -> None:
        self.pattern = pattern
        self.n = n
        self.flat = flat
        self.per_walk = math.prod(pattern.sizes)
        self.view: np.ndarray | None = None
        self.writable_view = False
        self.full: np.ndarray | None = None
        self._outers: list[tuple[int, ...]] | None = None
        lo, hi = pattern.extent()
        if hi >= flat.size:
            raise SimulationError(f"pattern {pattern} reaches element {hi} of a tensor of {flat.size}")
        inner = 1
        for j in range(pattern.rank - 1, -1, -1):
            inner *= pattern.sizes[j]
            if inner == n:
                self.outer = pattern.sizes[:j]
                item = flat.itemsize
                self.view = as_strided(flat[pattern.offset :], shape=pattern.sizes,
                                       strides=tuple(st * item for st in pattern.strides), writeable=True)
                self.writable_view = _injective(pattern.sizes[j:], pattern.strides[j:])
                break
            if inner > n:
                break

    def _outer(self, k: int) -> tuple[int, ...]:
        """The outer indices of element ``k`` (the walk repeats past its end), listed once on first use."""
        outers = self._outers
        if outers is None:
            outers = self._outers = list(product(*(range(size) for size in self.outer)))
        return outers[k % len(outers)]

    def _offsets(self, k: int) -> np.ndarray:
        if self.view is not None:
            return self.element(k)
        p = self.pattern
        if self.full is None:
            idx = p.indices()
            self.full = np.tile(idx, p.repeat_count) if p.repeat_count > 1 else idx
        return self.full[k * self.n : (k + 1) * self.n]

    def element(self, k: int) -> np.ndarray:
        """Tensor offsets of element ``k`` (flat, in walk order)."""
        if self.view is not None:
            base = self.pattern.offset + sum(i * s for i, s in zip(self._outer(k), self.pattern.strides, strict=False))
            inner = AccessPattern(0, self.pattern.sizes[len(self.outer):], self.pattern.strides[len(self.outer):])
            return inner.indices() + base
        return self._offsets(k)

    def read(self, k: int) -> np.ndarray:
        """Element ``k`` (its inner shape for a tile walk, flat otherwise)."""
        if self.view is not None:
            return self.view[self._outer(k)]
        return self.flat[self._offsets(k)]

    def write(self, k: int, data: np.ndarray) -> None:
        """Write ``data`` (the element's values in walk order) as element ``k``."""
        if self.writable_view:
            dst = self.view[self._outer(k)]  # type: ignore[index]
            dst[...] = data.reshape(dst.shape)
        else:
            self.flat[self._offsets(k)] = data.reshape(-1)


def _injective(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether a pattern visits no offset twice.

    Quick test first: dimensions by increasing stride, each stride beyond the
    span of the smaller ones; failing that, count the distinct offsets.
    """
    span = 0
    for n, s in sorted((d for d in zip(sizes, strides, strict=True) if d[0] > 1), key=lambda d: d[1]):
        if s <= span:
            idx = AccessPattern(0, sizes, strides).indices()
            return len(np.unique(idx)) == len(idx)
        span += (n - 1) * s
    return True


class HostQueue:
    """The moves touching one fifo in one direction, in program order.

    Attributes:
        fifo: the fifo.
        to_device: True for moves into the fifo.
        issued: signalled when a move of this queue is issued.
    """

    def __init__(self, engine: Engine, host: Host, fifo: str, to_device: bool) -> None:
        self.engine = engine
        self.host = host
        self.fifo = fifo
        self.to_device = to_device
        self.moves: list[HostMove] = []
        self.head = 0
        self.issued = Signal(engine, f"host moves on fifo {fifo}", self)

    def current(self) -> HostMove | None:
        """The move elements go to or come from now, or None."""
        while self.head < len(self.moves):
            m = self.moves[self.head]
            if not m.ready:
                return None
            if self.to_device and m.sent[self.fifo] < m.total:
                return m
            if not self.to_device and m.reserved < m.total:
                return m
            if not m.complete:
                return None
            self.head += 1
        return None

    def why(self) -> str:
        if self.head >= len(self.moves):
            return f"fifo {self.fifo!r} has no further host move"
        m = self.moves[self.head]
        if not m.ready:
            before = ", ".join(p.dma.name for p in m.waiting_on if not p.complete)
            if not before:
                return f"host move {m.dma.name!r} on fifo {self.fifo!r} is being issued"
            return f"host move {m.dma.name!r} on fifo {self.fifo!r} waits for move(s) {before} to complete"
        return f"host move {m.dma.name!r} on fifo {self.fifo!r} waits for its other fifos"

    # to-device
    def gather(self) -> np.ndarray:
        m = self.current()
        assert m is not None
        return m.gather(self.fifo)

    def advance(self) -> None:
        m = self.moves[self.head]
        m.sent[self.fifo] += 1
        m.unsent -= 1
        if not m.unsent:
            self.host.complete(m)
        elif m.sent[self.fifo] == m.total:
            self.host.fifo_sent(m)

    # from-device
    def reserve(self) -> int:
        m = self.moves[self.head]
        m.reserved += 1
        return m.reserved - 1

    def scatter(self, k: int, data: np.ndarray) -> None:
        self.moves[self.head].scatter(k, data)

    def landed(self) -> None:
        m = self.moves[self.head]
        m.landed += 1
        if m.landed == m.total:
            self.host.complete(m)


class Host:
    """Issues and completes the runtime sequence.

    On a device with a runtime sequence the command processor runs the plan's
    commands (``tilelang/ir/sequence.py``, the ones the MLIR backend writes) one
    after another: a push takes ``issue`` cycles, a wait holds every later command
    until its transfer has completed. Without one, every move is pushed at the start.

    Attributes:
        moves: every move, in program order.
        queues: (fifo, to_device) -> queue.
        issue: cycles to write one move's BD and push its task (0: static BDs).
        queue_depth: pushed, uncompleted transfers one shim channel holds (0: no limit).
        latency: cycles from a to-device move's start to its first data.
        waiting: the transfer the command processor waits for, or None.
        log: what the command processor did, as (what, start cycle, cycles): each push and each
            wait that had to wait (the trace's runtime sequence track).
    """

    def __init__(self, engine: Engine, on_complete: Callable[[HostMove], None], issue: int = 0,
                 queue_depth: int = 0, latency: int = 0) -> None:
        self.engine = engine
        self.moves: list[HostMove] = []
        self.queues: dict[tuple[str, bool], HostQueue] = {}
        self.on_complete = on_complete
        self.issue = issue
        self.queue_depth = queue_depth
        self.latency = latency
        self.commands: tuple[Push | Wait, ...] | None = None
        self.rings: dict[Channel, int] = {}
        self.waiting: Transfer | None = None
        self._pc = 0
        self._move_of: dict[int, HostMove] = {}  # id(dma) -> its move
        self._parts: dict[int, list[Transfer]] = {}  # id(move) -> its transfers not yet pushed
        self._open_parts: dict[int, list[Transfer]] = {}  # id(move) -> its pushed, uncompleted transfers
        self._queued: dict[Channel, int] = {}
        self._running = False
        self._wait_began = 0
        self.log: list[tuple[str, int, int]] = []

    def queue(self, fifo: str, to_device: bool) -> HostQueue:
        key = (fifo, to_device)
        if key not in self.queues:
            self.queues[key] = HostQueue(self.engine, self, fifo, to_device)
        return self.queues[key]

    def add(self, move: HostMove) -> None:
        """Append a move; it depends on the last earlier move on each of its fifos."""
        for f in move.fifos:
            for prev in reversed(self.moves):
                if f in prev.fifos:
                    self._depend(move, prev)
                    break
            self.queue(f, move.to_device).moves.append(move)
        self.moves.append(move)
        self._move_of[id(move.dma)] = move

    def _depend(self, move: HostMove, prev: HostMove) -> None:
        if prev is not move and prev not in move.waiting_on:
            move.waiting_on.append(prev)
            prev.dependents.append(move)

    def follow(self, sequence: HostSequence) -> None:
        """Run ``sequence``'s commands (added moves only; a move none of whose transfers the sequence
        holds, a PLIO stream, is pushed at the start). A transfer also waits for the one before it on
        its shim channel, which runs its tasks in order."""
        self.commands = sequence.commands
        self.rings = sequence.ring
        last: dict[Channel, HostMove] = {}
        for t in sequence.transfers:
            m = self._move_of[id(t.dma)]
            self._parts.setdefault(id(m), []).append(t)
            if t.channel in last:
                self._depend(m, last[t.channel])
            last[t.channel] = m

    def start(self) -> None:
        """Start the sequence (call at the start of the run)."""
        for m in self.moves:
            if id(m) not in self._parts:
                m.issue_start = self.engine.now
                self._pushed(m)
        self._run()

    def _run(self) -> None:
        """Run commands from the current one until a push takes time or a wait must wait."""
        if self._running:
            return
        self._running = True
        try:
            self._commands()
        finally:
            self._running = False

    def _commands(self) -> None:
        cmds = self.commands or ()
        while self._pc < len(cmds):
            c = cmds[self._pc]
            if isinstance(c, Wait):
                m = self._move_of[id(c.transfer.dma)]
                if not self._done(m, c.transfer):
                    self.waiting = c.transfer
                    self._wait_began = self.engine.now
                    return
                self._pc += 1
                continue
            self._pc += 1
            m = self._move_of[id(c.transfer.dma)]
            ch = c.transfer.channel
            n = self._queued.get(ch, 0)
            if self.queue_depth and n >= self.queue_depth:
                raise SimulationError(f"the runtime sequence pushes dma {m.dma.name!r} onto shim channel {ch} "
                                      f"holding {n} uncompleted tasks; its queue holds {self.queue_depth}")
            self._queued[ch] = n + 1
            self._open_parts.setdefault(id(m), []).append(c.transfer)
            parts = self._parts[id(m)]
            parts.remove(c.transfer)
            if not parts:
                m.issue_start = self.engine.now
            if not self.issue:
                if not parts:
                    self._pushed(m)
                continue
            last = not parts
            self.log.append((f"push {m.dma.name}", self.engine.now, self.issue))
            self.engine.schedule(self.issue, lambda m=m, last=last: self._after_push(m, last))
            return

    def ring_of(self, channel: Channel) -> int:
        """Moves the sequence keeps pushed on ``channel`` at once (its BD ring)."""
        return self.rings.get(channel, 0)

    def commands_left(self) -> int:
        """Commands of the sequence not yet run to their end (a wait waiting counts)."""
        return len(self.commands or ()) - self._pc

    def _after_push(self, m: HostMove, last: bool) -> None:
        if last:
            self._pushed(m)
        self._run()

    def _done(self, m: HostMove, t: Transfer) -> bool:
        if m.complete:
            return True
        return m.to_device and all(m.sent[f] == m.total for f in t.fifos)

    def _pushed(self, m: HostMove) -> None:
        m.pushed = True
        if all(p.complete for p in m.waiting_on):
            self._open(m, idle=True)

    def _open(self, m: HostMove, idle: bool) -> None:
        """Start a pushed move whose predecessors completed: its span on its fifos begins when
        its issue began or its last predecessor completed. A move started on idle channels (at
        its push) waits for its first burst's latency; one queued behind its predecessors
        streams on: the DMA issued its first reads while the predecessor's last data came in.
        A PLIO move reads no DDR and waits for no burst."""
        if m.opening:
            return
        m.opening = True
        done = [p.completed_at for p in m.waiting_on if p.completed_at is not None]
        m.issued_at = max([m.issue_start, *done])
        if idle and self.latency and m.to_device and m.total and m.ddr:
            self.engine.schedule(self.latency, lambda: self._ready(m))
        else:
            self._ready(m)

    def _ready(self, m: HostMove) -> None:
        m.ready = True
        for f in m.fifos:
            self.queues[(f, m.to_device)].issued.notify()
        if m.total == 0:
            self.complete(m)

    def fifo_sent(self, m: HostMove) -> None:
        """A to-device move has sent its last element into one of its fifos: a transfer of
        it may have completed (its other fifos may still be sending)."""
        self._settle(m)

    def complete(self, m: HostMove) -> None:
        m.completed_at = self.engine.now
        self.on_complete(m)
        self._settle(m)
        for d in m.dependents:
            if d.pushed and all(p.complete for p in d.waiting_on):
                self._open(d, idle=False)
        for f in m.fifos:
            self.queues[(f, m.to_device)].issued.notify()

    def _settle(self, m: HostMove) -> None:
        """Free the queue slots of ``m``'s completed transfers; resume a command processor waiting on one."""
        parts = self._open_parts.get(id(m))
        if not parts:
            return
        resume = False
        for t in [t for t in parts if self._done(m, t)]:
            parts.remove(t)
            self._queued[t.channel] -= 1
            if self.waiting is t:
                self.waiting = None
                self.log.append((f"dma_wait {m.dma.name}", self._wait_began, self.engine.now - self._wait_began))
                self._pc += 1
                resume = True
        if resume and not self._running:  # (a loop already running the commands goes on by itself)
            self._run()
