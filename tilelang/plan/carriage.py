"""How each fifo is carried once its agents are placed: shared memory or streamed.

Given a :class:`Placement` (cores, links, host ends), this module decides, with
no freedom left to any later stage:

- which fifos are *shared*: a producer core and its single consumer core
  whose tiles can both load and store one memory (``Device.shared_memory_tiles``);
  that is how IRON lowers an object fifo between neighbours;
- which DMA ends every streamed fifo has (tile, direction), how many BDs
  each channel's chain needs (``descriptors.py``) and their channel indices
  (``channels.py``);
- which buffer sets exist and on which tile(s) they may live.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.devices import Device
from tilelang.ir.descriptors import end_bds, part_count, set_locks
from tilelang.ir.plan import agent_name
from tilelang.ir.verify import HOST
from tilelang.plan.channels import assign_channels
from tilelang.plan.problem import Coord, FifoSpec, Problem, whole_fifo

MM2S = "mm2s"
S2MM = "s2mm"


@dataclass(frozen=True)
class Placement:
    """Where every agent runs.

    Attributes:
        cores: compute tile of each core.
        links: memtile of each link.
        hosts: shim tile of the host end of each fifo the host feeds or drains.
    """

    cores: dict[str, Coord]
    links: dict[str, Coord]
    hosts: dict[str, Coord]

    def tile_of(self, agent: str, fifo: str) -> Coord:
        """The tile of ``agent``'s end of ``fifo``."""
        if agent == HOST:
            return self.hosts[fifo]
        kind, _, name = agent.partition(":")
        return self.cores[name] if kind == "core" else self.links[name]


@dataclass(frozen=True)
class DmaEnd:
    """One streamed end of a fifo: a DMA channel in ``direction`` on ``tile``."""

    fifo: str
    agent: str
    tile: Coord
    direction: str
    bds: int


@dataclass(frozen=True)
class BufferSet:
    """``count`` buffers of ``size`` bytes of one fifo end (or of a shared fifo).

    Attributes:
        prefix: buffer names are ``prefix + str(i)``.
        fifo: the fifo.
        tiles: memories the set may live in (one tile unless shared).
        count: buffers in the set (the fifo's depth).
        size: bytes of each buffer.
        locks: hardware locks the set needs on its tile.
        core: for a group of a core's local buffers that share bytes, or one local buffer
            (``fifo`` empty, ``packing.Packing.clusters``): the core; its one buffer is named ``prefix``.
    """

    prefix: str
    fifo: str
    tiles: tuple[Coord, ...]
    count: int
    size: int
    locks: int
    core: str = ""

    def names(self) -> list[str]:
        if self.core:
            return [self.prefix]
        return [f"{self.prefix}{i}" for i in range(self.count)]

    @property
    def label(self) -> str:
        """How an error message names the set: ``a_in[2]``, or ``local buffers of core w (512 B)``."""
        if self.core:
            return f"local buffers of core {self.core} ({self.size} B)"
        return f"{self.fifo}[{self.count}]"


@dataclass(frozen=True)
class Carriage:
    """Every carriage decision that follows from a placement.

    Attributes:
        shared: fifo -> memories both its cores reach (shared fifos only).
        ends: every streamed DMA end, in a deterministic order.
        buffer_sets: every buffer set, in a deterministic order.
        channels: (fifo, agent) -> DMA channel index of that end.
    """

    shared: dict[str, tuple[Coord, ...]]
    ends: tuple[DmaEnd, ...]
    buffer_sets: tuple[BufferSet, ...]
    channels: dict[tuple[str, str], int]


# -- the decision -------------------------------------------------------------------------


def host_shims(device: Device, plio: int) -> list[Coord]:
    """The shims a fifo's host end may take: NoC shims (a shim DMA from DDR), or PL shims for a fifo
    whose host moves are PLIO streams (``plio`` bits; docs/plio.md)."""
    shims = device.tiles("shim")
    return [t for t in shims if device.is_pl_shim(t)] if plio else [t for t in shims if device.is_noc_shim(t)]


def common_memories(device: Device, a: Coord, b: Coord) -> tuple[Coord, ...]:
    """Memories both cores at ``a`` and ``b`` reach; producer's own first, then the consumer's, then others."""
    sets = device.shared_memory_sets()
    sa, sb = (sets.get(a), sets.get(b)) if a.__class__ is tuple and b.__class__ is tuple else (None, None)
    if sa is None or sb is None:  # not both compute tiles: the checked lookup names the bad one
        sa, sb = frozenset(device.shared_memory_tiles(a)), frozenset(device.shared_memory_tiles(b))
    both = sa & sb
    if not both:  # (most pairs a placement model asks about are far apart)
        return ()
    order = [t for t in (a, b) if t in both] + sorted(both - {a, b})
    return tuple(order)


def _shared_tiles(problem: Problem, f: FifoSpec, placement: Placement) -> tuple[Coord, ...]:
    if not f.shareable:
        return ()
    a = placement.tile_of(f.producer, f.name)
    b = placement.tile_of(f.consumers[0], f.name)
    return common_memories(problem.device, a, b)


def _whole_at(problem: Problem, agent: str) -> str | None:
    """The fifo whose buffers a link agent holds (None for cores)."""
    if not agent.startswith("link:"):
        return None
    return whole_fifo(problem.link(agent_name(agent)))


def link_parts(problem: Problem, name: str) -> int:
    """Fifos a link moves to or from offsets of its whole fifo's buffers (each synchronised apart)."""
    return part_count(problem.link(name))


#: Stream channels a link's fifos take on its memtile's vertical links: in from and out to the
#: compute tile above (fifos of cores) and the shim below (fifos of the host).
LINK_PORTS = ("from_above", "to_above", "from_below", "to_below")


def link_needs(problem: Problem, name: str) -> dict[str, int]:
    """What a link asks of its memtile: DMA channels per direction, bytes, BDs, locks and vertical links.

    One S2MM channel per source fifo and one MM2S per destination; the whole
    fifo's buffers; BDs and locks as the emitter builds them
    (``descriptors.end_bds``, ``descriptors.set_locks``: the whole fifo's
    channel has one BD per buffer and part, each part channel one per buffer,
    and each part its own lock pair); and per vertical link of the memtile
    (``LINK_PORTS``) the fifos that cross it: a source fifo a core produces
    comes in from above, one the host produces from below; a destination fifo
    leaves upwards when a core consumes it (one channel for a broadcast) and
    downwards when the host does.
    """
    ln = problem.link(name)
    whole = problem.fifo(whole_fifo(ln))
    agent = f"link:{name}"
    ports = dict.fromkeys(LINK_PORTS, 0)
    for f in ln.srcs:
        producer = problem.fifo(f).producer
        if producer.startswith("core:"):
            ports["from_above"] += 1
        elif producer == HOST:
            ports["from_below"] += 1
    for f in ln.dsts:
        consumers = problem.fifo(f).consumers
        ports["to_above"] += any(c.startswith("core:") for c in consumers)
        ports["to_below"] += HOST in consumers
    return {
        S2MM: len(ln.srcs),
        MM2S: len(ln.dsts),
        "bytes": whole.elem_bytes * whole.depth,
        "bds": sum(end_bds(problem.design, f, agent) for f in ln.fifos),
        "locks": set_locks(problem.device, whole.depth, part_count(ln)),
        **ports,
    }


#: Vertical-link capacity that stands for "no limit": a memtile whose row has east/west links can be
#: entered around its own vertical links.
_UNLIMITED = 1 << 20


def memtile_ports(device: Device, m: Coord) -> dict[str, int]:
    """Channels of the memtile's links to the tile above and the shim below (``LINK_PORTS``).

    Flows between a memtile and cores or the host can only use these when the
    memtile has no east/west links (AIE-ML's: AIE_FACTS "Stream switch", "none
    east/west at memtiles"), short of a detour through another column's
    memtile and the shim row; otherwise the ports do not bound the links placed
    there.
    """
    c, r = m
    links = set(device.links())
    if ((m, (c + 1, r)) in links) or ((m, (c - 1, r)) in links):
        return dict.fromkeys(LINK_PORTS, _UNLIMITED)

    def cap(a: Coord, b: Coord) -> int:
        return device.link_capacity(a, b) if (a, b) in links else 0

    above, below = (c, r + 1), (c, r - 1)
    return {"from_above": cap(above, m), "to_above": cap(m, above), "from_below": cap(below, m),
            "to_below": cap(m, below)}


def _buffer_sets(problem: Problem, f: FifoSpec, placement: Placement, shared: tuple[Coord, ...]) -> list[BufferSet]:
    dev = problem.device
    if shared:
        return [BufferSet(f"{f.name}_", f.name, shared, f.depth, f.elem_bytes, set_locks(dev, f.depth))]
    out = []
    for agent in f.agents:
        if agent == HOST:
            continue
        locks = set_locks(dev, f.depth)
        if agent.startswith("link:"):
            if _whole_at(problem, agent) != f.name:
                continue  # a link's part fifos are moved from or to offsets in the whole fifo's buffers
            locks = link_needs(problem, agent_name(agent))["locks"]
        tile = placement.tile_of(agent, f.name)
        prefix = f"{f.name}_{agent_name(agent)}_"
        out.append(BufferSet(prefix, f.name, (tile,), f.depth, f.elem_bytes, locks))
    return out


def _dma_ends(problem: Problem, f: FifoSpec, placement: Placement) -> list[DmaEnd]:
    out = []
    for agent in f.agents:
        direction = MM2S if agent == f.producer else S2MM
        tile = placement.tile_of(agent, f.name)
        out.append(DmaEnd(f.name, agent, tile, direction, end_bds(problem.design, f.name, agent)))
    return out


def carry(problem: Problem, placement: Placement) -> Carriage:
    """Decide shared vs streamed for every fifo, its DMA ends, channels and buffer sets.

    Args:
        problem: the planning problem.
        placement: where every agent runs.

    Returns:
        The :class:`Carriage`; channel counts are not checked here (see resources).
    """
    shared: dict[str, tuple[Coord, ...]] = {}
    ends: list[DmaEnd] = []
    sets: list[BufferSet] = []
    for f in problem.fifos:
        common = _shared_tiles(problem, f, placement)
        if common:
            shared[f.name] = common
        else:
            ends += _dma_ends(problem, f, placement)
        sets += _buffer_sets(problem, f, placement, common)
    for p in problem.packings:
        for name, size, _ in p.clusters():
            sets.append(BufferSet(name, "", (placement.cores[p.core],), 1, size, 0, p.core))
    return Carriage(shared, tuple(ends), tuple(sets), assign_channels(problem.device, ends))
