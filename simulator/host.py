"""The host runtime sequence: DMA moves between DDR tensors and fifos.

The moves are issued in program order. A move waits for every earlier move
that shares a fifo with it to complete (moves on one fifo complete one after
another); moves on different fifos run concurrently. A to-device move walks
its tensor with its access pattern and pushes ``pattern.numel // elem.numel``
elements into each of its fifos; a from-device move pops that many elements
and scatters them into the tensor along the pattern.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from simulator.engine import Engine, Signal
from tilelang.ir.design import Dma
from tilelang.ir.pattern import AccessPattern


class HostMove:
    """One ``tl.dma`` between a host tensor and fifos.

    Attributes:
        dma: the move.
        total: elements it moves per fifo.
        issued_at / completed_at: cycles (None until then).
        sent: elements sent per fifo (to-device).
        reserved / landed: elements started / written into the tensor (from-device).
    """

    def __init__(self, dma: Dma, tensor: np.ndarray, elem_numel: int, elem_bytes: int) -> None:
        self.dma = dma
        self.flat = tensor.reshape(-1)
        self.n = elem_numel
        self.walk = _ElementWalk(dma.pattern, elem_numel)
        self.total = dma.pattern.numel // elem_numel
        self.nbytes = self.total * elem_bytes * len(dma.fifos)
        self.sent = {f: 0 for f in dma.fifos}
        self.reserved = 0
        self.landed = 0
        self.issued_at: int | None = None
        self.completed_at: int | None = None
        self.waiting_on: list[HostMove] = []
        self.dependents: list[HostMove] = []

    @property
    def complete(self) -> bool:
        return self.completed_at is not None

    def gather(self, fifo: str) -> np.ndarray:
        return self.flat[self.walk.element(self.sent[fifo])]

    def scatter(self, k: int, data: np.ndarray) -> None:
        self.flat[self.walk.element(k)] = data


class _ElementWalk:
    """Tensor offsets of the k-th fifo element a pattern walks, without materialising the walk.

    When an element is exactly the pattern's innermost dimensions (a tile walk),
    its offsets are a fixed template shifted by the outer indices; otherwise the
    whole walk is computed once, on first use.
    """

    def __init__(self, pattern: AccessPattern, n: int) -> None:
        self.pattern = pattern
        self.n = n
        self.per_walk = math.prod(pattern.sizes)
        self.template: np.ndarray | None = None
        self.full: np.ndarray | None = None
        inner = 1
        for j in range(pattern.rank - 1, -1, -1):
            inner *= pattern.sizes[j]
            if inner == n:
                self.outer = pattern.sizes[:j]
                self.outer_strides = pattern.strides[:j]
                self.template = AccessPattern(0, pattern.sizes[j:], pattern.strides[j:]).indices()
                break
            if inner > n:
                break

    def element(self, k: int) -> np.ndarray:
        p = self.pattern
        if self.template is not None:
            k %= self.per_walk // self.n
            base = p.offset
            for size, stride in zip(reversed(self.outer), reversed(self.outer_strides), strict=True):
                k, i = divmod(k, size)
                base += i * stride
            return self.template + base
        if self.full is None:
            idx = p.indices()
            self.full = np.tile(idx, p.repeat_count) if p.repeat_count > 1 else idx
        return self.full[k * self.n : (k + 1) * self.n]


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
            if m.issued_at is None:
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
        if m.issued_at is None:
            before = ", ".join(p.dma.name for p in m.waiting_on if not p.complete)
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
        if all(v == m.total for v in m.sent.values()):
            self.host.complete(m)

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

    Attributes:
        moves: every move, in program order.
        queues: (fifo, to_device) -> queue.
    """

    def __init__(self, engine: Engine, on_complete: Callable[[HostMove], None]) -> None:
        self.engine = engine
        self.moves: list[HostMove] = []
        self.queues: dict[tuple[str, bool], HostQueue] = {}
        self.on_complete = on_complete

    def queue(self, fifo: str, to_device: bool) -> HostQueue:
        key = (fifo, to_device)
        if key not in self.queues:
            self.queues[key] = HostQueue(self.engine, self, fifo, to_device)
        return self.queues[key]

    def add(self, move: HostMove) -> None:
        """Append a move; it depends on the last earlier move on each of its fifos."""
        for f in move.dma.fifos:
            for prev in reversed(self.moves):
                if f in prev.dma.fifos:
                    if prev not in move.waiting_on:
                        move.waiting_on.append(prev)
                        prev.dependents.append(move)
                    break
            self.queue(f, move.dma.to_device).moves.append(move)
        self.moves.append(move)

    def start(self) -> None:
        """Issue every move with no predecessor (call at the start of the run)."""
        for m in self.moves:
            if not m.waiting_on:
                self._issue(m)

    def _issue(self, m: HostMove) -> None:
        m.issued_at = self.engine.now
        for f in m.dma.fifos:
            self.queues[(f, m.dma.to_device)].issued.notify()
        if m.total == 0:
            self.complete(m)

    def complete(self, m: HostMove) -> None:
        m.completed_at = self.engine.now
        self.on_complete(m)
        for d in m.dependents:
            if all(p.complete for p in d.waiting_on) and d.issued_at is None:
                self._issue(d)
        for f in m.dma.fifos:
            self.queues[(f, m.dma.to_device)].issued.notify()
