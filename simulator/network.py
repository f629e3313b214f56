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

from simulator.cost import flow_latency
from tilelang.devices import Device
from tilelang.errors import SimulationError
from tilelang.ir.plan import Coord, LinkKey, Plan, Route


class Busy:
    """Bytes and busy cycles of one resource, busy time merged online.

    Transfers are recorded when they start, and the simulated clock never goes
    back, so the union of busy intervals is kept in O(1) per transfer.
    """

    __slots__ = ("bytes", "cycles", "transfers", "until")

    def __init__(self) -> None:
        self.bytes = 0
        self.cycles = 0
        self.transfers = 0
        self.until = 0

    def record(self, start: int, end: int, nbytes: int) -> None:
        """Add one transfer over ``[start, end)`` moving ``nbytes``."""
        self.bytes += nbytes
        self.transfers += 1
        if start >= self.until:
            self.cycles += end - start
            self.until = end
        elif end > self.until:
            self.cycles += end - self.until
            self.until = end


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

    def capacity(self, link: LinkKey) -> int:
        return self.device.link_capacity(link[0], link[1])

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
