"""The physical level's memory and locks: ``aie.buffer`` where the plan put each buffer, ``aie.lock`` beside them.

A *buffer set* is one fifo end's ``depth`` buffers (or a shared fifo's). Lock
model, as IRON lowers object fifos:

- AIE2 / AIE-ML locks are counting semaphores ([F] "semaphores, max value
  63"): a set has a producer lock (initially ``depth``: free slots) and a
  consumer lock (initially 0: filled slots) per *part*. A link's whole-fifo set
  has one pair per part fifo moved to or from it, so parts are released
  independently; any other set has one part.
- AIE1 locks are binary ([F] "16 per tile, binary"): one lock per buffer,
  0 = empty, 1 = full.

Lock ids are numbered per tile in emission order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir.device import DeviceModule
from tilelang.backends.mlir.types import tile_memref_type
from tilelang.errors import PlanError
from tilelang.ir.descriptors import set_locks, whole_fifo
from tilelang.ir.design import Link, LinkKind
from tilelang.ir.plan import agent_name
from tilelang.ir.types import TileType
from tilelang.ir.verify import HOST

Coord = tuple[int, int]


@dataclass
class BufferSet:
    """One fifo end's buffers and locks.

    Attributes:
        fifo: the fifo whose elements the buffers hold.
        agent: the end (None: a shared fifo's buffers).
        tile: the tile whose memory holds them.
        elem: the element type.
        buffers: ``aie.buffer`` values, index order.
        pairs: AIE2: part -> (producer lock, consumer lock); the part is a
            fifo name (a link's part) or None (the set's own fifo).
        binary: AIE1: one lock per buffer.
    """

    fifo: str
    agent: str | None
    tile: Coord
    elem: TileType
    buffers: list[object]
    pairs: dict[str | None, tuple[object, object]] = field(default_factory=dict)
    binary: list[object] = field(default_factory=list)

    @property
    def depth(self) -> int:
        return len(self.buffers)


def link_parts(link: Link) -> list[tuple[str, int]]:
    """(part fifo, element offset in the whole buffer) a link moves separately; a forward has one, covering all."""
    if link.kind is LinkKind.FORWARD:
        return [(link.dsts[0], 0)]
    parts = link.dsts if link.kind is LinkKind.SPLIT else link.srcs
    return list(zip(parts, link.offsets, strict=True))


class Resources:
    """Creates buffers and locks and finds the set each fifo end uses."""

    def __init__(self, dm: DeviceModule) -> None:
        self.dm = dm
        self.sets: dict[tuple[str, str | None], BufferSet] = {}
        self.lock_ids: dict[Coord, int] = {}
        self.binary_locks = dm.plan.device.lock_max == 1

    def build(self) -> None:
        """``aie.buffer`` and ``aie.lock`` ops for every buffer set of the plan.

        Raises:
            PlanError: a set's buffers disagree with its fifo, or a tile runs out of locks.
        """
        plan = self.dm.plan
        for f in self.dm.design.fifos:
            fp = plan.fifos[f.name]
            if fp.shared:
                self._make(f.name, None, [None])
                continue
            for end in (fp.producer, *fp.consumers):
                if end.agent == HOST:
                    continue
                if end.agent.startswith("link:"):
                    ln = self._link(end.agent)
                    if whole_fifo(ln) != f.name:
                        continue  # moved from or to the whole fifo's buffers
                    self._make(f.name, end.agent, [p for p, _ in link_parts(ln)])
                else:
                    self._make(f.name, end.agent, [None])

    def _link(self, agent: str) -> Link:
        name = agent_name(agent)
        return next(ln for ln in self.dm.design.links if ln.name == name)

    def _make(self, fifo: str, agent: str | None, parts: list[str | None]) -> None:
        plan, dm = self.dm.plan, self.dm
        f = dm.design.fifo(fifo)
        prefix = f"{fifo}_" if agent is None else f"{fifo}_{agent_name(agent)}_"
        named = sorted(
            ((n, b) for n, b in plan.buffers.items() if b.fifo == fifo and n == f"{prefix}{b.index}"),
            key=lambda nb: nb[1].index,
        )
        if [b.index for _, b in named] != list(range(f.depth)):
            raise PlanError(
                f"the plan gives fifo {fifo!r} ({agent or 'shared'}) buffers {[n for n, _ in named]}, not {f.depth}"
            )
        tiles = {b.tile for _, b in named}
        if len(tiles) != 1:
            raise PlanError(
                f"the plan spreads the buffers of fifo {fifo!r} ({agent or 'shared'}) over tiles {sorted(tiles)}"
            )
        tile = tiles.pop()
        memref = tile_memref_type(f.elem)
        bufs = []
        for name, b in named:
            if b.size < f.elem.nbytes:
                raise PlanError(f"buffer {name!r} has {b.size} B, fifo {fifo!r}'s element needs {f.elem.nbytes} B")
            attrs = {
                "sym_name": aie_ops.string(dm.names.fresh(name)),
                "address": aie_ops.i32(b.offset),
                "mem_bank": aie_ops.i32(b.bank),
            }
            bufs.append(aie_ops.create("aie.buffer", [dm.tile(tile)], attrs, [memref]).result)
        bs = BufferSet(fifo, agent, tile, f.elem, bufs)
        base = prefix.rstrip("_")
        if self.binary_locks:
            bs.binary = [self._lock(tile, f"{base}_lock_{i}", 0) for i in range(f.depth)]
        else:
            set_locks(self.dm.plan.device, f.depth, len(parts))  # raises when the depth exceeds a lock's count
            for p in parts:
                tag = base if p is None or p == fifo else f"{base}_{p}"
                bs.pairs[p] = (self._lock(tile, f"{tag}_prod_lock", f.depth), self._lock(tile, f"{tag}_cons_lock", 0))
        self.sets[(fifo, agent)] = bs

    def _lock(self, tile: Coord, name: str, init: int) -> object:
        n = self.lock_ids.get(tile, 0)
        have = self.dm.plan.device.locks(tile)
        if n >= have:
            raise PlanError(f"tile {tile} has {have} locks; the plan's buffers there need more (at {name})")
        self.lock_ids[tile] = n + 1
        attrs = {
            "lockID": aie_ops.i32(n),
            "init": aie_ops.i32(init),
            "sym_name": aie_ops.string(self.dm.names.fresh(name)),
        }
        return aie_ops.create("aie.lock", [self.dm.tile(tile)], attrs, [aie_ops.index_type()]).result

    # -- lookups ------------------------------------------------------------------------------

    def core_side(self, fifo: str, agent: str) -> BufferSet:
        """The set a core uses for ``fifo``: the shared one, or its own."""
        return self.sets.get((fifo, None)) or self.sets[(fifo, agent)]

    def link_side(self, fifo: str, agent: str) -> tuple[BufferSet, str | None, int]:
        """(set, part, element offset) a link's DMA uses for ``fifo``."""
        ln = self._link(agent)
        whole = whole_fifo(ln)
        bs = self.sets[(whole, agent)]
        if fifo == whole:
            return bs, None, 0
        offset = dict(link_parts(ln))[fifo]
        return bs, fifo, offset
