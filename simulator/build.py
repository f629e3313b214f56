"""Turn a Plan into simulation components: rings, flows, channels, cores, host moves.

Nothing is decided here: placement, shared vs streamed, channels, buffer
counts and routes are read from the Plan as they are.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simulator.cascade import build_cascades
from simulator.contention import Contention
from simulator.core import CoreRunner, CostFn, LocalStore
from simulator.cost import CallTiming, call_timing, host_sequence_cycles, stream_bytes_per_cycle
from simulator.dma import Channel, Flow, HostSink, HostSource, RingSink, RingSource
from simulator.engine import Engine
from simulator.host import Host, HostMove
from simulator.memory import Ddr, ReaderSide, Ring, WriterSide
from simulator.network import Busy, Network
from simulator.result import Trace
from tilelang.errors import PlanError, SimulationError
from tilelang.ir.design import Core, Design, Fifo, Link, LinkKind
from tilelang.ir.kernel import ExternKernel, Kernel
from tilelang.ir.plan import Coord, FifoEnd, Plan
from tilelang.ir.sequence import host_sequence
from tilelang.ir.verify import core_ports

Side = WriterSide | ReaderSide


class World:
    """Every simulated component of one plan, wired together.

    Attributes:
        plan / design: what is simulated.
        tensors: host tensors by name (the simulation's own copies; none in timing mode).
        data: whether data moves and kernels compute (False: timing mode, cycles only).
        rings: every fifo copy, by "<fifo>@<agent>".
        core_sides: per core, its side of each fifo it uses.
        flows: one per streamed fifo.
        channels: every DMA channel some flow uses.
        link_busy: per memtile link, its transfers.
        host: the runtime sequence.
    """

    def __init__(self, plan: Plan, tensors: dict[str, np.ndarray], timed: bool, trace: Trace | None,
                 data: bool = True, kernel_cycles: dict[str, int] | None = None) -> None:
        self.plan = plan
        #: cycles per call given for kernels by name (measured ones), used instead of the cost model's
        self.kernel_cycles = dict(kernel_cycles or {})
        self.design: Design = plan.design
        self.device = plan.device
        self.timed = timed
        self.data = data
        self.trace = trace
        self.engine = Engine()
        self.tensors = tensors
        self.ddr = Ddr.for_device(self.device)
        self.network = Network(plan)
        self.fifo_decl: dict[str, Fifo] = {f.name: f for f in self.design.fifos}
        self.rings: dict[str, Ring] = {}
        self.core_sides: dict[str, dict[str, Side]] = {c.name: {} for c in self.design.cores}
        self.link_readers: dict[tuple[str, str], RingSource] = {}
        self.link_writers: dict[tuple[str, str], WriterSide] = {}
        self.link_busy: dict[str, Busy] = {ln.name: Busy() for ln in self.design.links}
        self.link_labels: dict[str, str] = {}
        self.link_tracks: dict[tuple[str, str], int] = {}
        self.channels: dict[tuple[Coord, str, int], Channel] = {}
        self.channel_tracks: dict[str, int] = {}
        self.flows: list[Flow] = []
        self.host = Host(self.engine, lambda m: None, *host_sequence_cycles(self.device))
        self.host_track = -1
        self.contention = Contention(set())
        self._check_plan()
        for ln in self.design.links:
            self._link(ln)
        for f in self.design.fifos:
            fp = plan.fifos[f.name]
            if fp.shared:
                self._shared(f)
            else:
                self._streamed(f)
        self.contention.dma_banks = self._dma_banks()
        self.cores = self._cores()
        self.cascades = build_cascades(self.engine, self.design, self.device, self.cores)
        self._moves()

    # -- checks ------------------------------------------------------------------------

    def _check_plan(self) -> None:
        p, d = self.plan, self.design
        missing = [c.name for c in d.cores if c.name not in p.placement]
        missing += [f.name for f in d.fifos if f.name not in p.fifos]
        missing += [ln.name for ln in d.links if ln.name not in p.link_tiles]
        if missing:
            raise SimulationError(f"the plan does not cover {missing}; plan the design again")

    def _ring(self, fifo: Fifo, agent: str | None, tile: Coord | None) -> Ring:
        where = agent if agent is not None else "shared"
        placed = self.plan.buffers_of(fifo.name, agent)
        ring = Ring(self.engine, fifo.name, where, fifo.elem, len(placed) or fifo.depth, tile)
        if placed:
            # Memory banks per slot, for bank conflicts (compute tiles only: memtile banks
            # are 16 and interleaved, [AM020] "AIE-ML Memory Tile Memory"; not modelled).
            ring.banks = [(b.tile, b.bank) if self.device.tile_kind(b.tile) == "compute" else None for b in placed]
            self.contention.watched.update(k for k in ring.banks if k is not None)
        self.rings[ring.name] = ring
        return ring

    # -- links -------------------------------------------------------------------------

    def _link(self, ln: Link) -> None:
        agent = f"link:{ln.name}"
        tile = self.plan.link_tiles[ln.name]
        self.link_labels[ln.name] = f"{ln.kind.value} {ln.name} ({tile[0]},{tile[1]})"
        if ln.kind is LinkKind.JOIN:
            whole = self.fifo_decl[ln.dsts[0]]
            ring = self._ring(whole, agent, tile)
            for src, off in zip(ln.srcs, ln.offsets, strict=True):
                part = self.fifo_decl[src].elem.numel
                self.link_writers[(src, ln.name)] = ring.writer(f"dma:{src}", off, part)
            idx = ln.join_indices() if ln.pattern is not None else None  # (each part re-laid out)
            self.link_readers[(whole.name, ln.name)] = RingSource(ring.reader(f"dma:{whole.name}"), 0,
                                                                  whole.elem.numel, idx)
            return
        whole = self.fifo_decl[ln.srcs[0]]
        ring = self._ring(whole, agent, tile)
        self.link_writers[(whole.name, ln.name)] = ring.writer(f"dma:{whole.name}")
        offsets = ln.offsets if ln.kind is LinkKind.SPLIT else (0,)
        for dst, off in zip(ln.dsts, offsets, strict=True):
            n = self.fifo_decl[dst].elem.numel
            idx = ln.pattern.indices() if ln.pattern is not None else None
            self.link_readers[(dst, ln.name)] = RingSource(ring.reader(f"dma:{dst}"), off, n, idx)

    # -- fifos -------------------------------------------------------------------------

    def _shared(self, f: Fifo) -> None:
        fp = self.plan.fifos[f.name]
        ends = [fp.producer, *fp.consumers]
        if any(not e.agent.startswith("core:") for e in ends) or len(fp.consumers) != 1:
            raise SimulationError(
                f"fifo {f.name!r} is planned in shared memory but its ends are {[e.agent for e in ends]}; "
                f"only a core-to-core fifo with one consumer can share a buffer"
            )
        ring = self._ring(f, None, fp.shared_tile)
        self.core_sides[fp.producer.agent[5:]][f.name] = ring.writer(fp.producer.agent)
        self.core_sides[fp.consumers[0].agent[5:]][f.name] = ring.reader(fp.consumers[0].agent)

    def _channel(self, end: FifoEnd, direction: str, fifo: str) -> Channel:
        if end.channel is None:
            raise SimulationError(f"the plan gives {end.agent}'s end of streamed fifo {fifo!r} no DMA channel")
        key = (end.tile, direction, end.channel)
        ch = self.channels.get(key)
        if ch is None:
            # a PL shim's channels are PLIO streams, named so (docs/plio.md)
            kind = "plio" if self.device.is_pl_shim(end.tile) else self.device.tile_kind(end.tile)
            ch = self.channels[key] = Channel(self.engine, end.tile, direction, end.channel, kind)
            if self.trace is not None:
                self.channel_tracks[ch.name] = self.trace.track("DMA channels", ch.name)
        return ch

    def _source(self, f: Fifo, end: FifoEnd) -> RingSource | HostSource:
        agent = end.agent
        if agent == "host":
            return HostSource(self.host.queue(f.name, True))
        if agent.startswith("link:"):
            return self.link_readers[(f.name, agent[5:])]
        ring = self._ring(f, agent, end.tile)
        self.core_sides[agent[5:]][f.name] = ring.writer(agent)
        return RingSource(ring.reader(f"dma:{f.name}"), 0, f.elem.numel, None)

    def _sink(self, f: Fifo, end: FifoEnd) -> RingSink | HostSink:
        agent = end.agent
        if agent == "host":
            return HostSink(self.host.queue(f.name, False), end.tile)
        if agent.startswith("link:"):
            return RingSink(self.link_writers[(f.name, agent[5:])], end.tile)
        ring = self._ring(f, agent, end.tile)
        self.core_sides[agent[5:]][f.name] = ring.reader(agent)
        return RingSink(ring.writer(f"dma:{f.name}"), end.tile)

    def _streamed(self, f: Fifo) -> None:
        fp = self.plan.fifos[f.name]
        source = self._source(f, fp.producer)
        sinks = [self._sink(f, c) for c in fp.consumers]
        channels = [self._channel(fp.producer, "mm2s", f.name)]
        channels += [self._channel(c, "s2mm", f.name) for c in fp.consumers]
        route = self.network.flow(f.name, fp.producer.tile, [c.tile for c in fp.consumers])
        rate = stream_bytes_per_cycle(self.device)
        ends = [fp.producer, *fp.consumers]
        shim = any(e.agent == "host" for e in ends)
        plio = self.plan.design.plio_of(f.name) if shim else 0
        if plio:  # a PL shim's PLIO stream: the PL side's rate, no DDR bursts (docs/plio.md)
            rate = min(rate, self.device.plio_bytes_per_cycle(plio))
            shim = False
        elif shim:
            rate = min(rate, self.device.shim_bandwidth_bytes_per_cycle())
        links = sorted({e.agent[5:] for e in ends if e.agent.startswith("link:")})
        tracks = [self.channel_tracks[c.name] for c in channels] if self.trace is not None else []
        tracks += [self._link_track(ln, f.name, fp.producer.agent == f"link:{ln}") for ln in links
                   if self.trace is not None]
        flow = Flow(f.name, source, sinks, f.elem.nbytes, channels, route, rate,
                    self.ddr if shim else None, fp.producer.agent == "host",
                    [self.link_busy[ln] for ln in links], tracks, self.contention)
        self.flows.append(flow)

    def _link_track(self, link: str, fifo: str, out: bool) -> int:
        """The trace track of one fifo's transfers into or out of a memtile link: one per
        (link, fifo), so the spans of one track never overlap (a link's sides, and the
        parts of a join or split, move at once)."""
        key = (link, fifo)
        if key not in self.link_tracks:
            side = "out" if out else "in"
            self.link_tracks[key] = self.trace.track("memtile links", f"{self.link_labels[link]}: {fifo} {side}")  # type: ignore[union-attr]
        return self.link_tracks[key]

    def _dma_banks(self) -> set:
        """The compute-tile banks of every buffer a flow reads or writes: the only banks a transfer charges."""
        rings = [f.source.side.ring for f in self.flows if isinstance(f.source, RingSource)]
        rings += [s.side.ring for f in self.flows for s in f.sinks if isinstance(s, RingSink)]
        return {b for r in rings for b in (r.banks or ()) if b is not None}

    # -- cores and host ----------------------------------------------------------------

    def _cores(self) -> list[CoreRunner]:
        kernels = {k.name: k for k in self.design.kernels}
        for name, c in self.kernel_cycles.items():  # an extern kernel's given cycles replace its declared ones
            if isinstance(kernels[name], ExternKernel):
                kernels[name] = replace(kernels[name], cycles=c)  # type: ignore[arg-type]
        out = []
        for c in self.design.cores:
            sides = self.core_sides[c.name]
            for fifo in core_ports(c):
                if fifo not in sides:
                    raise SimulationError(f"core {c.name!r} uses fifo {fifo!r} but the plan gives it no end there")
            track = -1
            if self.trace is not None:
                track = self.trace.track("cores", f"{c.name} {self.plan.placement[c.name]}")
            local = self._local(c)
            out.append(CoreRunner(c, sides, kernels, self._call_cost, self.timed, self.trace, track,
                                  self.contention if self.contention.watched else None, self.data, local))
        return out

    def _local(self, c: Core) -> dict[str, LocalStore]:
        """The core's local buffers: views into one zeroed byte array at the plan's offsets (packed
        buffers alias, as on the tile)."""
        if not c.buffers:
            return {}
        placed = {}
        for b in c.buffers:
            bp = self.plan.buffers.get(b.name)
            if bp is None:
                raise SimulationError(f"the plan places no buffer {b.name!r} of core {c.name!r}; plan the design again")
            placed[b.name] = bp
        base = min(bp.offset for bp in placed.values())
        arena = np.zeros(max(bp.offset + b.nbytes for b, bp in zip(c.buffers, placed.values(), strict=True)) - base,
                         dtype=np.uint8)
        out = {}
        for b in c.buffers:
            bp = placed[b.name]
            view = arena[bp.offset - base : bp.offset - base + b.nbytes].view(b.elem.dtype.numpy).reshape(b.elem.shape)
            bank = (bp.tile, bp.bank) if self.device.tile_kind(bp.tile) == "compute" else None
            if bank is not None:
                self.contention.watched.add(bank)
            out[b.name] = LocalStore(view, bank)
        return out

    def _call_cost(self, kernel: Kernel, elems: list[tuple[str, Side, int]], local_banks: dict) -> CostFn:
        """The timing of a call of ``kernel`` on these element arguments (given their buffer slots) and
        local buffers (banks ``local_banks``)."""
        device = self.device
        given = self.kernel_cycles.get(kernel.name)
        if given is not None:  # a measured call: its cycles whatever the banks (they are in the measurement)
            timing = CallTiming(given, float(given), {}, given)
            return lambda slots: timing

        def cost(slots: tuple[int, ...]) -> CallTiming:
            bank_of = dict(local_banks)
            for (name, side, _), slot in zip(elems, slots, strict=True):
                banks = side.ring.banks
                if banks is not None and banks[slot] is not None:
                    bank_of[name] = banks[slot]
            return call_timing(kernel, device, bank_of)

        return cost

    def _moves(self) -> None:
        for d in self.design.dmas:
            fifo = self.fifo_decl[d.fifos[0]]
            move = HostMove(d, self.tensors[d.tensor] if self.data else None, fifo.elem.numel, fifo.elem.nbytes)
            self.host.add(move)
        if self.device.host_sequence:
            try:
                self.host.follow(host_sequence(self.plan))
            except PlanError as e:
                raise SimulationError(f"the plan's runtime sequence: {e}") from None
