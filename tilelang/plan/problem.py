"""The planning problem: what a design asks of the hardware, independent of where it goes.

Every planning module reads a :class:`Problem` instead of walking the design
itself: the fifos with their producer and consumer agents (``host``,
``core:<name>``, ``link:<name>``), element sizes, depths and an estimate of
the bytes each fifo carries over a run (the weight of the placement
objective). Nothing here depends on a placement.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.devices import Device
from tilelang.errors import PlanError
from tilelang.ir.design import Design, Link, LinkKind, released
from tilelang.ir.verify import HOST, fifo_ends
from tilelang.plan.packing import Packing

Coord = tuple[int, int]


@dataclass(frozen=True)
class FifoSpec:
    """One fifo as the planner sees it.

    Attributes:
        name: the fifo's name.
        producer: the producing agent.
        consumers: the consuming agents, in a stable order.
        elem_bytes: bytes of one element (one buffer).
        depth: buffers of the fifo.
        traffic: estimated bytes carried over one run (at least one element).
    """

    name: str
    producer: str
    consumers: tuple[str, ...]
    elem_bytes: int
    depth: int
    traffic: int

    @property
    def agents(self) -> tuple[str, ...]:
        return (self.producer, *self.consumers)

    @property
    def shareable(self) -> bool:
        """A producer core and a single consumer core may share one memory (no DMA, no route)."""
        return len(self.consumers) == 1 and self.producer.startswith("core:") and self.consumers[0].startswith("core:")

    @property
    def host_fed(self) -> bool:
        return self.producer == HOST

    @property
    def host_drained(self) -> bool:
        return HOST in self.consumers


@dataclass(frozen=True)
class Problem:
    """A design's demands on the device.

    Attributes:
        design: the design being planned.
        device: its device.
        fifos: every fifo, in design order.
        cores: core names, in design order.
        pins: (core, tile) for every pinned core.
        links: the design's links, in design order.
        packings: the arena of local buffers of each core that has any (``packing.py``).
    """

    design: Design
    device: Device
    fifos: tuple[FifoSpec, ...]
    cores: tuple[str, ...]
    pins: tuple[tuple[str, Coord], ...]
    links: tuple[Link, ...]
    packings: tuple[Packing, ...] = ()

    def arena_bytes(self, core: str) -> int:
        """Bytes of ``core``'s local buffers as packed (0 without any)."""
        return next((p.size for p in self.packings if p.core == core), 0)

    def fifo(self, name: str) -> FifoSpec:
        for f in self.fifos:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def pin_map(self) -> dict[str, Coord]:
        return dict(self.pins)

    @property
    def link_names(self) -> tuple[str, ...]:
        return tuple(ln.name for ln in self.links)

    def link(self, name: str) -> Link:
        for ln in self.links:
            if ln.name == name:
                return ln
        raise KeyError(name)


def whole_fifo(link: Link) -> str:
    """The fifo whose buffers a link's memtile holds (split/forward: the source; join: the destination)."""
    return link.dsts[0] if link.kind is LinkKind.JOIN else link.srcs[0]


def build_problem(design: Design, packings: tuple[Packing, ...] = ()) -> Problem:
    """Extract the planning problem from a verified design.

    Args:
        design: a design that passed ``verify_design``.
        packings: the packed local buffers of its cores (``packing.pack_core``).

    Returns:
        The :class:`Problem`.

    Raises:
        PlanError: a fifo lacks a producer or a consumer (the design was not verified).
    """
    ends = fifo_ends(design)
    traffic = _traffic(design, ends)
    fifos = []
    for f in design.fifos:
        e = ends[f.name]
        if len(e.producers) != 1 or not e.consumers:
            raise PlanError(f"fifo {f.name!r} needs one producer and a consumer; verify the design first")
        fifos.append(
            FifoSpec(
                name=f.name,
                producer=e.producers[0],
                consumers=tuple(e.consumers),
                elem_bytes=f.elem.nbytes,
                depth=f.depth,
                traffic=max(traffic.get(f.name, 0), f.elem.nbytes),
            )
        )
    pins = tuple((c.name, c.tile) for c in design.cores if c.tile is not None)
    return Problem(
        design=design,
        device=design.device,
        fifos=tuple(fifos),
        cores=tuple(c.name for c in design.cores),
        pins=pins,  # type: ignore[arg-type]
        links=design.links,
        packings=tuple(packings),
    )


# -- traffic estimate -----------------------------------------------------------------


def _traffic(design: Design, ends: dict) -> dict[str, int]:
    """Bytes each fifo carries: from host moves, core releases, then through links."""
    elems: dict[str, int] = {}
    for d in design.dmas:
        for f in d.fifos:
            fifo = design.fifo(f)
            elems[f] = elems.get(f, 0) + d.pattern.numel // fifo.elem.numel
    for c in design.cores:
        for f in design.fifos:
            n = released(c.body, f.name)
            if n:
                elems[f.name] = max(elems.get(f.name, 0), n)
    # Links pass data on: a part fifo carries what its whole fifo carries, scaled by size.
    for _ in range(len(design.links) + 1):
        for ln in design.links:
            whole = design.fifo(whole_fifo(ln))
            parts = ln.dsts if ln.kind is not LinkKind.JOIN else ln.srcs
            if ln.kind is LinkKind.JOIN:
                n = max((elems.get(p, 0) for p in parts), default=0)
                elems[whole.name] = max(elems.get(whole.name, 0), n)
            else:
                n = elems.get(whole.name, 0)
                for p in parts:
                    elems[p] = max(elems.get(p, 0), n)
    return {f.name: elems.get(f.name, 1) * f.elem.nbytes for f in design.fifos}
