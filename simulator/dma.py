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

A flow records each transfer's start and end; the busy time of channels and
links and the trace spans are derived from those records after the run
(``run.py``), so a transfer costs a few appends rather than one call per
resource.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Generator
from functools import partial
from heapq import heappush
from typing import TYPE_CHECKING

import numpy as np

from simulator.contention import Contention
from simulator.cost import transfer_cycles
from simulator.engine import _TIME_SHIFT, _TIMEOUT_BITS, Engine, Process, Signal, Waiting
from simulator.memory import Ddr, ReaderSide, WriterSide
from simulator.network import Busy, FlowRoute

if TYPE_CHECKING:
    from simulator.host import HostQueue


class Channel(Waiting):
    """One DMA channel of one tile in one direction.

    Attributes:
        name: "(c,r) mm2s 0" style label (the trace track and stats key).
        busy: whether a transfer holds it.
        freed: signalled when it is released.
        user: the flow holding it (for deadlock reports).
        flows: the flows that use it (their records make its statistics).
        stats: bytes and busy cycles (filled after the run).
    """

    __slots__ = ("busy", "flows", "freed", "name", "stats", "tile", "user")

    def __init__(self, engine: Engine, tile: tuple[int, int], direction: str, index: int, kind: str) -> None:
        self.name = f"{kind} ({tile[0]},{tile[1]}) {direction} {index}"
        self.tile = tile
        self.busy = False
        self.user = ""
        self.freed = Signal(engine, f"DMA channel {self.name}", self)
        self.flows: list[Flow] = []
        self.stats = Busy()

    def text(self) -> str:
        return f"waits for DMA channel {self.name}, busy with fifo {self.user!r}"


# -- sources -------------------------------------------------------------------------


class RingSource(Waiting):
    """Elements read from a ring on the producing tile (a core's or a link's buffers).

    ``offset``/``numel`` select a split's part of each element; ``indices`` re-lay
    out a forwarded element (a memtile access pattern within the element).
    """

    __slots__ = ("agent", "indices", "numel", "offset", "side", "signal")

    def __init__(self, side: ReaderSide, offset: int, numel: int, indices: np.ndarray | None) -> None:
        self.side = side
        self.signal = side.ring.data
        self.offset = offset
        self.numel = numel
        self.indices = indices
        self.agent = side.ring.writers[0].agent if side.ring.writers else ""

    def ready(self) -> bool:
        """Hold the next element if it is there (``try_acquire(1)``, inlined: it runs per transfer)."""
        side = self.side
        if side.held:
            return True
        if side.ring.n_published - side.consumed <= 0:
            return False
        side.held = 1
        return True

    def text(self) -> str:
        r = self.side.ring
        return f"waits for data in fifo {r.fifo!r} at {r.name.split('@')[1]} ({r.state()})"

    def take(self) -> np.ndarray:
        """The element (or part): a view, valid until the source buffer is written again."""
        row = self.side.ring.flat[self.side.slot(0)]
        if self.indices is not None:
            return row[self.indices]
        return row[self.offset : self.offset + self.numel]

    def done(self) -> None:
        self.side.release(1)


class HostSource(Waiting):
    """Elements gathered from host tensors by the moves on one fifo, in program order."""

    __slots__ = ("agent", "queue", "signal")

    def __init__(self, queue: HostQueue) -> None:
        self.queue = queue
        self.signal = queue.issued
        self.agent = "host"

    def ready(self) -> bool:
        return self.queue.current() is not None

    def text(self) -> str:
        return self.queue.why()

    def take(self) -> np.ndarray:
        return self.queue.gather()

    def done(self) -> None:
        self.queue.advance()


# -- sinks -----------------------------------------------------------------------------


class RingSink(Waiting):
    """A consumer's (or a link's) buffers, written by this flow (one part for a join)."""

    __slots__ = ("side", "signal", "tile")

    def __init__(self, side: WriterSide, tile: tuple[int, int]) -> None:
        self.side = side
        self.tile = tile
        self.signal = side.ring.space

    def ready(self) -> bool:
        """Whether a buffer is free (``free() > 0``, inlined: it runs per transfer)."""
        s = self.side
        r = s.ring
        return r.depth - (s.produced + s.held - r.n_freed) > 0

    def text(self) -> str:
        r = self.side.ring
        return f"waits for a free buffer of fifo {r.fifo!r} at {r.name.split('@')[1]} ({r.state()})"

    def reserve(self) -> int:
        s = self.side
        slot = (s.produced + s.held) % s.ring.depth
        s.held += 1
        return slot

    def put(self, slot: int, data: np.ndarray) -> None:
        s = self.side
        dst = s.ring.flat[slot, s.offset : s.offset + s.numel]
        if data.ndim == 1:
            dst[...] = data
        else:
            dst.reshape(data.shape)[...] = data

    def publish(self) -> None:
        self.side.release(1)


class HostSink(Waiting):
    """Host tensors written by the moves out of one fifo, in program order."""

    __slots__ = ("queue", "signal", "tile")

    def __init__(self, queue: HostQueue, tile: tuple[int, int]) -> None:
        self.queue = queue
        self.tile = tile
        self.signal = queue.issued

    def ready(self) -> bool:
        return self.queue.current() is not None

    def text(self) -> str:
        return self.queue.why()

    def reserve(self) -> int:
        return self.queue.reserve()

    def put(self, slot: int, data: np.ndarray) -> None:
        self.queue.scatter(slot, data)

    def publish(self) -> None:
        self.queue.landed()


class _Moving(Waiting):
    """A flow in the middle of a transfer (never blocked there, but named in reports)."""

    __slots__ = ("fifo",)

    def __init__(self, fifo: str) -> None:
        self.fifo = fifo

    def text(self) -> str:
        return f"moving an element of fifo {self.fifo!r}"


# -- the flow ----------------------------------------------------------------------------


class Flow:
    """The stream of one fifo: source, sinks, channels and route.

    Attributes:
        fifo: the fifo carried.
        nbytes: bytes per transfer (one element, or one part of it).
        channels: DMA channels every transfer holds.
        route: rate share, latencies and links.
        shim: whether a shim end moves the data to or from DDR.
        starts / ends: start and end cycle of every transfer, in order.
        stats: bytes and busy cycles of the flow itself (filled after the run).
        link_stats: busy records of the memtile links it feeds or drains, if any.
        tracks: trace tracks its transfers appear on.
    """

    def __init__(self, fifo: str, source: RingSource | HostSource, sinks: list[RingSink | HostSink],
                 nbytes: int, channels: list[Channel], route: FlowRoute, bytes_per_cycle: float,
                 ddr: Ddr | None, to_device: bool, link_stats: list[Busy], trace_tracks: list[int],
                 contention: Contention | None = None) -> None:
        self.fifo = fifo
        self.contention = contention
        self.source = source
        self.sinks = sinks
        self.nbytes = nbytes
        self.channels = channels
        for c in channels:
            c.flows.append(self)
        self.route = route
        self.ddr = ddr
        self.to_device = to_device
        self.rate = bytes_per_cycle * route.share
        self.duration = transfer_cycles(nbytes, self.rate)
        # the host end's queue (shim flows): its current move's pattern sets the DDR bursts
        self.host_queue = source.queue if isinstance(source, HostSource) else next(
            (s.queue for s in sinks if isinstance(s, HostSink)), None)
        self._shim_costs: dict[int, tuple[int, float]] = {}
        self.latency = [route.latency.get(s.tile, 0) for s in sinks]
        self.link_stats = link_stats
        self.tracks = trace_tracks
        self.starts = array("q")
        self.ends = array("q")
        self.stats = Busy()
        self.holding = False

    def run(self, proc: Process, engine: Engine, timed: bool, data: bool = True) -> Generator[object, None, None]:
        """The flow's process body: one transfer per element, forever (it ends blocked).

        With ``data`` False (timing mode) a transfer takes its time and hands over its
        buffers but copies nothing. Ring ends (most flows' ends) are handled inline: the
        tests of ``RingSource.ready``/``RingSink.ready``, ``reserve`` and the source's
        release, each per transfer, with no call.
        """
        src, sinks, chans = self.source, self.sinks, self.channels
        ddr, nbytes, to_device, fifo = self.ddr, self.nbytes, self.to_device, self.fifo
        moving = _Moving(fifo)
        starts_append, ends_append = self.starts.append, self.ends.append
        duration = self.duration if timed else 0
        now_group, later = self._publish_groups(timed)
        heap, seq = engine.heap, engine.seq
        banks_of = self._banks_of() if timed and self.contention is not None else None
        transfer_started = self.contention.transfer_on if banks_of is not None else None  # type: ignore[union-attr]
        shim_cost = self._shim_cost if ddr is not None and timed else None
        src_signal = src.signal
        # a ring source: its reader side (None: a host source, asked through its methods)
        src_side = src.side if isinstance(src, RingSource) else None
        src_ring = src_side.ring if src_side is not None else None
        sole_reader = src_ring is not None and len(src_ring.readers) == 1
        src_indices = src.indices if src_side is not None else None
        src_offset = src.offset if src_side is not None else 0
        src_end = src_offset + src.numel if src_side is not None else 0
        # the source's part is its buffers' whole row: the element is the row itself
        src_whole = src_ring is not None and src_indices is None and src_offset == 0 and src_end == src_ring.flat.shape[1]
        # ring sinks: (sink, its writer side, its ring); None when some sink is the host's
        ring_sinks = [(s, s.side, s.side.ring) for s in sinks] if all(isinstance(s, RingSink) for s in sinks) else None
        # per sink, its ring when its part is a whole row of the ring's buffers (one row assignment), else None
        whole = [s.side.ring if isinstance(s, RingSink) and s.side.offset == 0
                 and s.side.numel == s.side.ring.flat.shape[1] else None for s in sinks]
        while True:
            if src_side is not None:  # RingSource.ready, inlined
                if not src_side.held:
                    if src_ring.n_published - src_side.consumed <= 0:  # type: ignore[union-attr]
                        proc.why = src
                        while src_ring.n_published - src_side.consumed <= 0:  # type: ignore[union-attr]
                            yield src_signal
                    src_side.held = 1
            elif not src.ready():
                proc.why = src
                while not src.ready():
                    yield src_signal
            self.holding = True
            if ring_sinks is not None:  # RingSink.ready, inlined
                for s, w, r in ring_sinks:
                    if r.depth - (w.produced + w.held - r.n_freed) <= 0:
                        proc.why = s
                        while r.depth - (w.produced + w.held - r.n_freed) <= 0:
                            yield s.signal
            else:
                for s in sinks:
                    if not s.ready():
                        proc.why = s
                        while not s.ready():
                            yield s.signal
            while True:  # every channel free (the first busy one waited for, then all checked again)
                for c in chans:
                    if c.busy:
                        proc.why = c
                        yield c.freed
                        break
                else:
                    break
            shim = shim_cost() if shim_cost is not None else None
            if ring_sinks is not None:  # RingSink.reserve, inlined
                slots = []
                for _, w, r in ring_sinks:
                    h = w.held
                    slots.append((w.produced + h) % r.depth)
                    w.held = h + 1
            else:
                slots = [s.reserve() for s in sinks]
            for c in chans:
                c.busy = True
                c.user = fifo
            start = engine.now
            dur = duration
            if shim is not None:
                dur, charged = shim
                dur = max(dur, math.ceil(ddr.reserve(start, nbytes, to_device, charged)) - start)  # type: ignore[union-attr]
            if dur:
                if transfer_started is not None:
                    banks = banks_of(slots)  # type: ignore[misc]
                    if banks:
                        transfer_started(banks, start, start + dur, nbytes / dur)
                proc.why = moving
                yield dur
            if data:
                if src_side is not None:  # RingSource.take, inlined
                    row = src_ring.rows[src_side.consumed % src_ring.depth]  # type: ignore[union-attr]
                    element = row if src_whole else row[src_indices] if src_indices is not None else (
                        row[src_offset:src_end])
                else:
                    element = src.take()
                flat = element.ndim == 1
                for s, slot, ring in zip(sinks, slots, whole, strict=False):  # (one slot per sink)
                    if ring is None:
                        s.put(slot, element)
                    elif flat:
                        ring.rows[slot][...] = element
                    elif element.shape == ring.buf.shape[1:]:  # a host tile (RingSink.put's reshape: the same order)
                        ring.bufs[slot][...] = element
                    else:
                        s.put(slot, element)
            if src_side is not None:  # ReaderSide.release(1), inlined
                src_side.held -= 1
                k = src_side.consumed = src_side.consumed + 1
                freed = k if sole_reader else min(r.consumed for r in src_ring.readers)  # type: ignore[union-attr]
                if freed != src_ring.n_freed:  # type: ignore[union-attr]
                    src_ring.n_freed = freed  # type: ignore[union-attr]
                    if src_ring.space._waiters:  # type: ignore[union-attr]
                        src_ring.space.notify()  # type: ignore[union-attr]
            else:
                src.done()
            self.holding = False
            for c in chans:
                c.busy = False
                if c.freed._waiters:
                    c.freed.notify()
            now = engine.now
            if timed:
                starts_append(start)
                ends_append(now)
            for s in now_group:
                s.publish()
            for lat, publish in later:  # engine.schedule(lat, publish), inlined: a timeout's key
                heappush(heap, ((now + lat) << _TIME_SHIFT | _TIMEOUT_BITS | next(seq), publish))

    def _shim_cost(self) -> tuple[int, float]:
        """(channel cycles, DDR bytes charged) of the next transfer of a shim flow: the bursts of
        the current host move's contiguous runs, and the channel's rate under its in-flight limit."""
        q = self.host_queue
        move = q.moves[q.head] if q is not None and q.head < len(q.moves) else None
        run = move.run_bytes if move is not None else self.nbytes
        got = self._shim_costs.get(run)
        if got is None:
            charged, limit = self.ddr.cost(self.nbytes, run)  # type: ignore[union-attr]
            got = self._shim_costs[run] = (transfer_cycles(self.nbytes, min(self.rate, limit)), charged)
        return got

    def _publish_groups(self, timed: bool) -> tuple[list[RingSink | HostSink], list[tuple[int, Callable[[], None]]]]:
        """Sinks that see a transfer at once, and (latency, publish) for the others: one
        event publishes every sink of one latency."""
        groups: dict[int, list[RingSink | HostSink]] = {}
        for s, lat in zip(self.sinks, self.latency, strict=True):
            groups.setdefault(lat if timed else 0, []).append(s)
        now_group = groups.pop(0, [])
        return now_group, [(lat, _publisher(g)) for lat, g in sorted(groups.items())]

    def _banks_of(self) -> Callable[[list[int]], tuple] | None:
        """The watched compute-tile banks a transfer touches, given the sink slots it reserved (None: never
        any). Called when the flow starts, once every bank a call can touch is watched: a transfer's banks
        nobody watches charge nothing (``Contention.transfer_started``), so they are left out."""
        src = self.source
        src_banks = src.side.ring.banks if isinstance(src, RingSource) else None
        sink_banks = [s.side.ring.banks if isinstance(s, RingSink) else None for s in self.sinks]
        if src_banks is None and not any(sink_banks):
            return None
        watched = self.contention.watched  # type: ignore[union-attr]
        records = self.contention.records  # type: ignore[union-attr]

        def banks(slots: list[int], src_slot: int) -> tuple:
            out = [b[slot] for b, slot in zip(sink_banks, slots, strict=True) if b is not None]
            if src_banks is not None:
                out.append(src_banks[src_slot])
            return records(b for b in out if b is not None and b in watched)

        src_side = src.side if isinstance(src, RingSource) else None
        if len(sink_banks) != 1 and any(b is None for b in sink_banks):  # (a host sink's "slot" is an index)
            return lambda slots: banks(slots, src_side.slot(0) if src_side is not None else 0)  # type: ignore[union-attr]
        if len(sink_banks) != 1:  # a broadcast: the banks of each (sink slots, source slot) seen, kept
            seen: dict[tuple[int, ...], tuple] = {}

            def banks_of(slots: list[int]) -> tuple:
                key = (*slots, src_side.slot(0) if src_side is not None else 0)
                got = seen.get(key)
                if got is None:
                    got = seen[key] = banks(slots, key[-1])
                return got

            return banks_of
        # One sink (the common case): every (sink slot, source slot) pair's banks, listed once. A sink
        # without banks (a host sink's "slot" is an element index) has one row.
        sink_depth = self.sinks[0].side.ring.depth if sink_banks[0] is not None else 1  # type: ignore[union-attr]
        src_depth = src_side.ring.depth if src_side is not None else 1
        table = [[banks([i], j) for j in range(src_depth)] for i in range(sink_depth)]
        if src_side is None:
            return lambda slots: table[slots[0]][0]
        if sink_banks[0] is None:
            row = table[0]
            return lambda slots: row[src_side.consumed % src_depth]  # src_side.slot(0)
        return lambda slots: table[slots[0]][src_side.consumed % src_depth]

def _publisher(group: list[RingSink | HostSink]) -> Callable[[], None]:
    if len(group) == 1:
        g = group[0]
        return partial(g.side.release, 1) if isinstance(g, RingSink) else g.publish

    def publish() -> None:
        for s in group:
            s.publish()

    return publish
