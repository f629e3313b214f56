"""Stream routes from the Plan: rate, latency and per-link accounting.

A circuit-switched flow owns one channel on every neighbour link of its route
(a tree for a broadcast), so flows within a link's capacity never slow each
other: each moves ``stream_bits`` per cycle ([UG1079], [F] stream width). A
link carrying more flows than it has channels (possible only in a hand-made
plan: the planner never does it) is time-shared, as packet-switched flows
share a channel: each of its flows gets ``capacity / flows`` of the width for
the whole run. Latency is 4 cycles per stream switch traversed ([AM020]).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simulator.cost import flow_latency
from tilelang.devices import Device
from tilelang.errors import SimulationError
from tilelang.ir.plan import Coord, LinkKey, Plan, Route


class Busy:
    """Bytes and busy cycles of one resource (a DMA channel, a link, a memtile link).

    Flows add the records of their transfers (start and end cycles, bytes per
    transfer) once the run is over; :meth:`close` then merges them: busy
    cycles are the length of the union of the transfers' intervals (two flows
    time-sharing a resource overlap), bytes and transfers are summed.
    """

    __slots__ = ("_parts", "bytes", "cycles", "transfers")

    def __init__(self) -> None:
        self.bytes = 0
        self.cycles = 0
        self.transfers = 0
        self._parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, starts: np.ndarray, ends: np.ndarray, nbytes: int) -> None:
        """Add transfers over ``[starts[i], ends[i])`` moving ``nbytes`` each."""
        if len(starts):
            self._parts.append((starts, ends))
            self.bytes += nbytes * len(starts)
            self.transfers += len(starts)

    def close(self) -> Busy:
        """Merge the records into :attr:`cycles`; returns self."""
        if not self._parts:
            return self
        if len(self._parts) == 1:  # one flow's records: in order and disjoint, the union is the sum of lengths
            starts, ends = self._parts[0]
            if len(starts) < 2 or bool(np.all(starts[1:] >= ends[:-1])):
                self.cycles = int((ends - starts).sum())
                self._parts = []
                return self
        starts = np.concatenate([p[0] for p in self._parts])
        ends = np.concatenate([p[1] for p in self._parts])
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        reach = np.maximum.accumulate(ends)
        before = np.concatenate(([np.iinfo(np.int64).min], reach[:-1]))
        self.cycles = int(np.maximum(0, ends - np.maximum(starts, before)).sum())
        self._parts = []
        return self


@dataclass
class FlowRoute:
    """What the network means for one fifo's stream.

    Attributes:
        fifo: the fifo the flow carries.
        share: fraction of the stream width the flow gets (1.0 within capacity).
        latency: cycles to each destination tile.
        links: busy records of the links the route uses.
    """

    fifo: str
    share: float
    latency: dict[Coord, int]
    links: list[Busy] = field(default_factory=list)


class Network:
    """Every route of a plan, with the usage of each directed link.

    Attributes:
        links: busy record per directed neighbour link that some route uses.
        usage: flows per directed link.
    """

    def __init__(self, plan: Plan) -> None:
        self.device: Device = plan.device
        self.usage: dict[LinkKey, int] = plan.link_usage()
        self.links: dict[LinkKey, Busy] = {k: Busy() for k in self.usage}
        self.routes = plan.routes
        self._capacity: dict[LinkKey, int] = {}

    def capacity(self, link: LinkKey) -> int:
        """Stream channels of ``link`` (the device's, asked once per link: routes share links)."""
        cap = self._capacity.get(link)
        if cap is None:
            cap = self._capacity[link] = self.device.link_capacity(link[0], link[1])
        return cap

    def flow(self, fifo: str, source: Coord, dests: list[Coord]) -> FlowRoute:
        """The route of ``fifo`` from ``source`` to every tile of ``dests``.

        Raises:
            SimulationError: the plan has no route for a streamed fifo, or the
                route misses a destination.
        """
        needed = [d for d in dests if d != source]
        route: Route | None = self.routes.get(fifo)
        if route is None:
            if needed:
                raise SimulationError(f"the plan has no route for streamed fifo {fifo!r} ({source} -> {needed})")
            return FlowRoute(fifo, 1.0, {d: flow_latency(0) for d in dests})
        reach = route.reaches()
        missing = [d for d in needed if d not in reach]
        if missing:
            raise SimulationError(f"the route of fifo {fifo!r} from {route.source} does not reach {missing}")
        share = 1.0
        for link in route.links:
            cap = self.capacity(link)
            if cap <= 0:
                raise SimulationError(f"the route of fifo {fifo!r} uses link {link[0]}->{link[1]}, which has no channels")
            share = min(share, cap / self.usage[link])
        latency = {d: flow_latency(route.hops_to(d) if d != route.source else 0) for d in dests}
        return FlowRoute(fifo, share, latency, [self.links[k] for k in route.links])
