"""Tile memory (fifo buffers guarded by locks) and host DDR.

A :class:`Ring` is the ``depth`` buffers of one copy of a fifo on one tile.
Agents reach it through sides: a :class:`WriterSide` (the producer core, or
the DMA filling the buffers) and one :class:`ReaderSide` per consumer (a core,
or the DMA draining them). This is the IRON object-fifo protocol on locks:

- a writer's ``acquire(n)`` makes n free slots held, acquiring only the
  difference to what it already holds; a slot is free once every reader has
  released it (a broadcast frees a slot when its last reader is done);
- ``release(k)`` publishes the k oldest held slots in order;
- a reader's ``acquire(n)`` holds n published elements; ``release(k)`` frees
  the k oldest.

A join writes one part of each element from several DMAs: the ring then has
one writer side per part, and an element is published when every part is.
"""

from __future__ import annotations

import numpy as np

from simulator.engine import Engine, Signal
from tilelang.devices import Device
from tilelang.devices.aie2 import NPU1_HOST_MEMORY
from tilelang.devices.spec import in_flight_rate
from tilelang.ir.types import TileType


class Ring:
    """The buffers of one fifo copy on one tile.

    Attributes:
        name: "<fifo>@<agent>" (for reports).
        fifo: the fifo's name.
        tile: where the buffers live (None for none, in functional tests).
        depth: number of buffers.
        buf: the buffers, shape ``(depth, *elem.shape)``.
        flat: the same memory as ``(depth, elem.numel)``.
        writers: writer sides (one per part).
        readers: reader sides.
        data: signalled when an element is published.
        space: signalled when a slot is freed.
        n_published: elements every writer part has published (kept as sides release).
        n_freed: elements every reader has released (kept as sides release).
        banks: the memory bank of each buffer ((tile, bank), or None when the plan
            does not place it or it is not a compute tile's), or None for no plan.
    """

    def __init__(self, engine: Engine, fifo: str, where: str, elem: TileType, depth: int,
                 tile: tuple[int, int] | None = None) -> None:
        self.name = f"{fifo}@{where}"
        self.fifo = fifo
        self.tile = tile
        self.elem = elem
        self.depth = depth
        self.buf = np.zeros((depth, *elem.shape), dtype=elem.dtype.numpy)
        self.flat = self.buf.reshape(depth, -1)
        #: views of each buffer (``buf[i]``) and of its flat row (``flat[i]``), made once: taken per call and transfer
        self.bufs = list(self.buf)
        self.rows = list(self.flat)
        self.writers: list[WriterSide] = []
        self.readers: list[ReaderSide] = []
        self.data = Signal(engine, f"data of {self.name}", self)
        self.space = Signal(engine, f"space in {self.name}", self)
        self.n_published = 0
        self.n_freed = 0
        self.banks: list[tuple[tuple[int, int], int] | None] | None = None

    def writer(self, agent: str, offset: int = 0, numel: int | None = None) -> WriterSide:
        """A new writer side for ``agent`` (a part ``[offset, offset + numel)`` of each element)."""
        w = WriterSide(self, agent, offset, self.elem.numel if numel is None else numel)
        self.writers.append(w)
        return w

    def reader(self, agent: str) -> ReaderSide:
        """A new reader side for ``agent``."""
        r = ReaderSide(self, agent)
        self.readers.append(r)
        return r

    def published(self) -> int:
        """Elements every writer part has published."""
        return self.n_published

    def freed(self) -> int:
        """Elements every reader has released."""
        return self.n_freed

    def state(self) -> str:
        """Counts for a deadlock report: published, freed and held per side."""
        ws = ", ".join(f"{w.agent} wrote {w.produced} holds {w.held}" for w in self.writers)
        rs = ", ".join(f"{r.agent} read {r.consumed} holds {r.held}" for r in self.readers)
        return f"{self.depth} buffers; {ws}; {rs}"


class WriterSide:
    """The producer's view of a ring (one part of each element for a join).

    Attributes:
        wait_signal: what a blocked acquire of this side waits on (the ring's space).
    """

    __slots__ = ("agent", "held", "numel", "offset", "produced", "ring", "wait_signal")

    def __init__(self, ring: Ring, agent: str, offset: int, numel: int) -> None:
        self.ring = ring
        self.agent = agent
        self.offset = offset
        self.numel = numel
        self.produced = 0
        self.held = 0
        self.wait_signal = ring.space

    def free(self) -> int:
        """Slots this writer could newly acquire now."""
        r = self.ring
        return r.depth - (self.produced + self.held - r.n_freed)

    def try_acquire(self, n: int) -> bool:
        """Hold ``n`` slots (acquiring the difference); False if not enough are free."""
        need = n - self.held
        if need <= 0:
            return True
        r = self.ring
        if r.depth - (self.produced + self.held - r.n_freed) < need:  # free(), inlined
            return False
        self.held += need
        return True

    def release(self, k: int) -> None:
        """Publish the ``k`` oldest held slots."""
        ring = self.ring
        self.held -= k
        self.produced += k
        ws = ring.writers
        now = self.produced if len(ws) == 1 else min(w.produced for w in ws)
        if now != ring.n_published:
            ring.n_published = now
            if ring.data._waiters:  # (notify's own test, without the call: this runs per element)
                ring.data.notify()

    def slot(self, i: int) -> int:
        """Buffer index of the ``i``-th held slot."""
        return (self.produced + i) % self.ring.depth

    def store(self, i: int, flat: np.ndarray) -> None:
        """Write a part's data (flat) into the ``i``-th held slot."""
        self.ring.flat[self.slot(i), self.offset : self.offset + self.numel] = flat


class ReaderSide:
    """One consumer's view of a ring.

    Attributes:
        wait_signal: what a blocked acquire of this side waits on (the ring's data).
    """

    __slots__ = ("agent", "consumed", "held", "ring", "wait_signal")

    def __init__(self, ring: Ring, agent: str) -> None:
        self.ring = ring
        self.agent = agent
        self.consumed = 0
        self.held = 0
        self.wait_signal = ring.data

    def available(self) -> int:
        """Published elements this reader could newly acquire now."""
        return self.ring.n_published - self.consumed - self.held

    def try_acquire(self, n: int) -> bool:
        """Hold ``n`` elements (acquiring the difference); False if not enough are published."""
        need = n - self.held
        if need <= 0:
            return True
        if self.ring.n_published - self.consumed - self.held < need:  # available(), inlined
            return False
        self.held += need
        return True

    def release(self, k: int) -> None:
        """Free the ``k`` oldest held elements."""
        ring = self.ring
        self.held -= k
        self.consumed += k
        rs = ring.readers
        now = self.consumed if len(rs) == 1 else min(r.consumed for r in rs)
        if now != ring.n_freed:
            ring.n_freed = now
            if ring.space._waiters:  # (notify's own test, without the call)
                ring.space.notify()

    def slot(self, i: int) -> int:
        """Buffer index of the ``i``-th held element."""
        return (self.consumed + i) % self.ring.depth


class Ddr:
    """Host memory shared by every shim DMA: one bandwidth limit for all, paid per burst.

    Transfers reserve DDR time in the order they start (a single server of
    ``bytes_per_cycle``); a shim transfer ends when both its own channel and
    its DDR share are done. A transfer is bursts: each contiguous run of the
    host tensor it reads or writes is split into bursts of at most
    ``max_burst`` bytes, and a burst shorter than ``access_bytes`` still takes a
    whole access of DDR time (a row-major tile read is one run per row). A
    channel keeps at most ``outstanding`` bursts in flight, each ``latency``
    cycles to its first data, so its rate is at most ``outstanding x burst /
    latency``. The numbers are the device's ``host_memory`` (tilelang/devices).

    Attributes:
        bytes_per_cycle: the shared limit.
        access_bytes / max_burst: the smallest DDR access and the burst length, bytes.
        latency: first-data latency of a burst, cycles.
        outstanding: bursts one channel keeps in flight.
        busy_until: the cycle the DDR's reserved work ends.
        bytes_read: bytes read by to-device moves.
        bytes_written: bytes written by from-device moves.
    """

    def __init__(self, bytes_per_cycle: float, access_bytes: int = 1, max_burst: int = 1 << 30,
                 latency: int = 0, outstanding: int = 1 << 30) -> None:
        self.bytes_per_cycle = bytes_per_cycle
        self.access_bytes = access_bytes
        self.max_burst = max_burst
        self.latency = latency
        self.outstanding = outstanding
        self.busy_until = 0.0
        self.bytes_read = 0
        self.bytes_written = 0
        self._costs: dict[tuple[int, int], tuple[float, float]] = {}

    @classmethod
    def for_device(cls, device: Device) -> Ddr:
        """The DDR of ``device`` (its ``host_memory``; the npu1 figures where it has none)."""
        hm = device.host_memory or NPU1_HOST_MEMORY
        return cls(hm.bytes_per_second / device.clock_hz, hm.access_bytes, hm.max_burst,
                   round(hm.latency_ns * 1e-9 * device.clock_hz), hm.outstanding)

    def run_cost(self, run: int) -> int:
        """Bytes of DDR time one contiguous run of ``run`` bytes costs (its bursts, each at least an access)."""
        full, rest = divmod(run, self.max_burst)
        return full * max(self.max_burst, self.access_bytes) + (max(rest, self.access_bytes) if rest else 0)

    def cost(self, nbytes: int, run: int) -> tuple[float, float]:
        """(DDR bytes charged, the channel's rate limit in bytes per cycle) of moving ``nbytes``
        in contiguous runs of ``run`` bytes (a run longer than the transfer counts as the transfer).
        """
        key = (nbytes, run)
        got = self._costs.get(key)
        if got is None:
            run = max(1, min(run, nbytes))
            charged = nbytes / run * self.run_cost(run)
            limit = in_flight_rate(run, self.max_burst, self.outstanding, self.latency)
            got = self._costs[key] = (charged, limit)
        return got

    def reserve(self, now: int, nbytes: int, to_device: bool, charged: float | None = None) -> float:
        """Reserve DDR time for ``nbytes`` (``charged`` bytes of DDR time, default ``nbytes``)
        starting no earlier than ``now``; returns when it ends."""
        start = max(float(now), self.busy_until)
        self.busy_until = start + (nbytes if charged is None else charged) / self.bytes_per_cycle
        if to_device:
            self.bytes_read += nbytes
        else:
            self.bytes_written += nbytes
        return self.busy_until
