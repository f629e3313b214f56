"""DMA channels and the stream flows that move fifo elements between tiles.

Every streamed fifo is one *flow*: a process that takes an element from its
source (the producer's buffers on its tile, a memtile link's buffers, or the
host tensor walked by the move's access pattern) and writes it to every sink
(each consumer's buffers, a link's buffers, or the host tensor). One element
is one transfer, one event with a duration: BD setup plus the bytes at the
stream rate (slower when a shim's DDR share or an oversubscribed link limits
it). A transfer starts only when the source has an element, every sink has a
free buffer (a multicast stream moves only when every destination is ready,
[UG1079]) and every DMA channel it needs is free; a channel shared by several
flows serialises them. Each sink sees its element after the route's latency.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

import numpy as np

from simulator.cost import transfer_cycles
from simulator.engine import Engine, Process, Signal
from simulator.memory import Ddr, ReaderSide, WriterSide
from simulator.network import Busy, FlowRoute
from simulator.result import Trace

if TYPE_CHECKING:
    from simulator.host import HostQueue


class Channel:
    """One DMA channel of one tile in one direction.

    Attributes:
        name: "(c,r) mm2s 0" style label (the trace track and stats key).
        busy: whether a transfer holds it.
        freed: signalled when it is released.
        stats: bytes and busy cycles.
        user: the flow holding it (for deadlock reports).
    """

    def __init__(self, engine: Engine, tile: tuple[int, int], direction: str, index: int, kind: str) -> None:
        self.name = f"{kind} ({tile[0]},{tile[1]}) {direction} {index}"
        self.tile = tile
        self.busy = False
        self.user = ""
        self.freed = Signal(engine, f"DMA channel {self.name}", self)
        self.stats = Busy()


# -- sources -------------------------------------------------------------------------


class RingSource:
    """Elements read from a ring on the producing tile (a core's or a link's buffers).

    ``offset``/``numel`` select a split's part of each element; ``indices`` re-lay
    out a forwarded element (a memtile access pattern within the element).
    """

    def __init__(self, side: ReaderSide, offset: int, numel: int, indices: np.ndarray | None) -> None:
        self.side = side
        self.signal = side.ring.data
        self.offset = offset
        self.numel = numel
        self.indices = indices
        self.agent = side.ring.writers[0].agent if side.ring.writers else ""

    def ready(self) -> bool:
        return self.side.try_acquire(1)

    def why(self) -> str:
        r = self.side.ring
        return f"waits for data in fifo {r.fifo!r} at {r.name.split('@')[1]} ({r.state()})"

    def take(self) -> np.ndarray:
        row = self.side.ring.flat[self.side.slot(0)]
        if self.indices is not None:
            return row[self.indices]
        return row[self.offset : self.offset + self.numel].copy()

    def done(self) -> None:
        self.side.release(1)


class HostSource:
    """Elements gathered from host tensors by the moves on one fifo, in program order."""

    def __init__(self, queue: HostQueue) -> None:
        self.queue = queue
        self.signal = queue.issued
        self.agent = "host"

    def ready(self) -> bool:
        return self.queue.current() is not None

    def why(self) -> str:
        return self.queue.why()

    def take(self) -> np.ndarray:
        return self.queue.gather()

    def done(self) -> None:
        self.queue.advance()


# -- sinks -----------------------------------------------------------------------------


class RingSink:
    """A consumer's (or a link's) buffers, written by this flow (one part for a join)."""

    def __init__(self, side: WriterSide, tile: tuple[int, int]) -> None:
        self.side = side
        self.tile = tile
        self.signal = side.ring.space
        self.pending: list[int] = []

    def ready(self) -> bool:
        return self.side.free() > 0

    def why(self) -> str:
        r = self.side.ring
        return f"waits for a free buffer of fifo {r.fifo!r} at {r.name.split('@')[1]} ({r.state()})"

    def reserve(self) -> int:
        s = self.side
        slot = (s.produced + s.held) % s.ring.depth
        s.held += 1
        return slot

    def put(self, slot: int, data: np.ndarray) -> None:
        s = self.side
        s.ring.flat[slot, s.offset : s.offset + s.numel] = data

    def publish(self) -> None:
        self.side.release(1)


class HostSink:
    """Host tensors written by the moves out of one fifo, in program order."""

    def __init__(self, queue: HostQueue, tile: tuple[int, int]) -> None:
        self.queue = queue
        self.tile = tile
        self.signal = queue.issued

    def ready(self) -> bool:
        return self.queue.current() is not None

    def why(self) -> str:
        return self.queue.why()

    def reserve(self) -> int:
        return self.queue.reserve()

    def put(self, slot: int, data: np.ndarray) -> None:
        self.queue.scatter(slot, data)

    def publish(self) -> None:
        self.queue.landed()


# -- the flow ----------------------------------------------------------------------------


class Flow:
    """The stream of one fifo: source, sinks, channels and route.

    Attributes:
        fifo: the fifo carried.
        nbytes: bytes per transfer (one element, or one part of it).
        channels: DMA channels every transfer holds.
        route: rate share, latencies and links.
        shim: whether a shim end moves the data to or from DDR.
        stats: bytes and busy cycles of the flow itself.
        link_stats: busy record of the memtile link it feeds or drains, if any.
    """

    def __init__(self, fifo: str, source: RingSource | HostSource, sinks: list[RingSink | HostSink],
                 nbytes: int, channels: list[Channel], route: FlowRoute, bytes_per_cycle: float,
                 ddr: Ddr | None, to_device: bool, link_stats: list[Busy], trace_tracks: list[int]) -> None:
        self.fifo = fifo
        self.source = source
        self.sinks = sinks
        self.nbytes = nbytes
        self.channels = channels
        self.route = route
        self.ddr = ddr
        self.to_device = to_device
        self.duration = transfer_cycles(nbytes, bytes_per_cycle * route.share)
        self.latency = [route.latency.get(s.tile, 0) for s in sinks]
        self.link_stats = link_stats
        self.tracks = trace_tracks
        self.stats = Busy()
        self.holding = False

    def run(self, proc: Process, engine: Engine, trace: Trace | None, timed: bool) -> Generator[object, None, None]:
        """The flow's process body: one transfer per element, forever (it ends blocked)."""
        src, sinks, chans = self.source, self.sinks, self.channels
        label = f"{self.fifo} {self.nbytes} B"
        while True:
            while not src.ready():
                proc.why = src.why()
                yield src.signal
            self.holding = True
            for s in sinks:
                while not s.ready():
                    proc.why = s.why()
                    yield s.signal
            for c in chans:
                while c.busy:
                    proc.why = f"waits for DMA channel {c.name}, busy with fifo {c.user!r}"
                    yield c.freed
            slots = [s.reserve() for s in sinks]
            for c in chans:
                c.busy, c.user = True, self.fifo
            start = engine.now
            dur = self.duration if timed else 0
            if self.ddr is not None and timed:
                end = self.ddr.reserve(start, self.nbytes, self.to_device)
                dur = max(dur, int(np.ceil(end)) - start)
            if dur:
                proc.why = f"moving an element of fifo {self.fifo!r}"
                yield dur
            data = src.take()
            src.done()
            self.holding = False
            for s, slot in zip(sinks, slots, strict=True):
                s.put(slot, data)
            for c in chans:
                c.busy = False
                c.freed.notify()
            if timed:
                self._account(start, start + dur, trace, label)
            for s, lat in zip(sinks, self.latency, strict=True):
                if lat and timed:
                    engine.schedule(lat, s.publish)
                else:
                    s.publish()

    def _account(self, start: int, end: int, trace: Trace | None, label: str) -> None:
        n = self.nbytes
        self.stats.record(start, end, n)
        for c in self.channels:
            c.stats.record(start, end, n)
        for b in self.route.links:
            b.record(start, end, n)
        for b in self.link_stats:
            b.record(start, end, n)
        if trace is not None:
            for t in self.tracks:
                trace.add(t, label, start, end - start)

