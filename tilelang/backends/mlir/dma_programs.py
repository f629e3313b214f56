"""The physical level's DMA programs: ``aie.mem`` / ``aie.memtile_dma`` BD chains, one per planned channel.

Every streamed fifo end on a core or memtile runs one DMA channel (the plan's
``FifoEnd.channel``) around a cyclic chain of buffer descriptors, one per
buffer (or, on a link's whole-fifo side, one per buffer and part, each part
with its own locks). Each BD acquires its lock, moves its buffer (``aie.dma_bd``
with offset, length and, for a re-laying forward, dimensions) and releases the
other lock; ``aie.next_bd`` closes the cycle.

BD ids are numbered per tile from the pool each channel may use ([F] "48 per
memtile (even channels BDs 0-23, odd 24-47)"; 16 elsewhere); lengths and
dimensions are fitted to the tile's BD fields (bd.py: a dimension longer
than the wrap field is split in two where the BD has one to spare), running
out raises PlanError.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.bd import Walk, check_length, fit_walk, walk_of, words
from tilelang.backends.mlir.device import DeviceModule
from tilelang.backends.mlir.enums import DMA_CHANNEL_DIR, LOCK_ACTION
from tilelang.backends.mlir.resources import BufferSet, Resources, link_parts, whole_fifo
from tilelang.errors import PlanError
from tilelang.ir.design import LinkKind
from tilelang.ir.plan import FifoEnd, agent_name
from tilelang.ir.verify import HOST

Coord = tuple[int, int]
Lock = tuple[object, str, int]  # (lock, action, value)


@dataclass(frozen=True)
class BdSpec:
    """One buffer descriptor of a chain."""

    buffer: object
    offset: int
    length: int
    acquire: Lock
    release: Lock
    walk: Walk | None = None


@dataclass(frozen=True)
class ChannelProgram:
    """A DMA channel and its BD chain (cyclic: it runs forever; else it stops after the last BD)."""

    tile: Coord
    direction: str
    channel: int
    bds: tuple[BdSpec, ...]
    what: str
    cyclic: bool = True


def _locks(bs: BufferSet, part: str | None, i: int, writer: bool) -> tuple[Lock, Lock]:
    """(acquire, release) of a DMA writing (S2MM) or reading (MM2S) buffer ``i`` / part ``part``."""
    if bs.binary:
        lock = bs.binary[i]
        return (lock, "Acquire", 0 if writer else 1), (lock, "Release", 1 if writer else 0)
    prod, cons = bs.pairs[part]
    if writer:
        return (prod, "AcquireGreaterEqual", 1), (cons, "Release", 1)
    return (cons, "AcquireGreaterEqual", 1), (prod, "Release", 1)


def channel_programs(dm: DeviceModule, res: Resources) -> list[ChannelProgram]:
    """The BD chain of every DMA channel the plan uses on a core or memtile.

    Raises:
        PlanError: a streamed end without a channel.
    """
    plan, design = dm.plan, dm.design
    out = []
    for f in design.fifos:
        fp = plan.fifos[f.name]
        if fp.shared:
            continue
        for end in (fp.producer, *fp.consumers):
            if end.agent == HOST:
                continue
            if end.channel is None:
                raise PlanError(f"the plan streams fifo {f.name!r} but gives {end.agent} no DMA channel")
            mm2s = end is fp.producer
            out.append(_program(dm, res, f.name, end, mm2s))
    return out


def _program(dm: DeviceModule, res: Resources, fifo: str, end: FifoEnd, mm2s: bool) -> ChannelProgram:
    writer = not mm2s  # an S2MM channel fills buffers, an MM2S channel drains them
    what = f"{'MM2S' if mm2s else 'S2MM'} channel {end.channel} of {end.tile} ({end.agent}, fifo {fifo!r})"
    elem = dm.design.fifo(fifo).elem
    bds: list[BdSpec] = []
    if end.agent.startswith("core:"):
        bs = res.core_side(fifo, end.agent)
        for i, buf in enumerate(bs.buffers):
            acq, rel = _locks(bs, None, i, writer)
            bds.append(BdSpec(buf, 0, elem.numel, acq, rel))
    else:
        bs, part, offset = res.link_side(fifo, end.agent)
        ln = next(x for x in dm.design.links if x.name == agent_name(end.agent))
        parts = link_parts(ln) if part is None else [(part, offset)]
        walk = None
        if ln.kind is LinkKind.FORWARD and ln.pattern is not None and fifo != whole_fifo(ln):
            walk = walk_of(ln.pattern, with_repeat=False)
        if ln.kind is LinkKind.JOIN and ln.pattern is not None and fifo == whole_fifo(ln):
            walk = walk_of(ln.pattern, with_repeat=False)  # each part's BD walks its part (mlir-aie's join layout)
        for i, buf in enumerate(bs.buffers):
            for p, off in parts:
                n = elem.numel if part is not None or ln.kind is LinkKind.FORWARD else dm.design.fifo(p).elem.numel
                acq, rel = _locks(bs, p, i, writer)
                bds.append(BdSpec(buf, off, n, acq, rel, walk))
    return ChannelProgram(end.tile, "mm2s" if mm2s else "s2mm", end.channel, tuple(bds), what)  # type: ignore[arg-type]


# -- emission --------------------------------------------------------------------------------


class BdIds:
    """Hands out BD ids per tile from the pool a channel may use."""

    def __init__(self, dm: DeviceModule) -> None:
        self.dm = dm
        self.used: dict[tuple[Coord, int], int] = {}

    def pool(self, tile: Coord, channel: int) -> tuple[int, int]:
        """(first id, count) usable by ``channel`` on ``tile``."""
        return self.dm.plan.device.bd_pool(tile, channel)

    def take(self, tile: Coord, channel: int, count: int, what: str) -> list[int]:
        first, size = self.pool(tile, channel)
        key = (tile, first)
        used = self.used.get(key, 0)
        if used + count > size:
            raise PlanError(
                f"{what}: tile {tile} has {size} buffer descriptors for this channel, the plan's DMA programs there need "
                f"{used + count}"
            )
        self.used[key] = used + count
        return list(range(first + used, first + used + count))


def emit_dma_programs(dm: DeviceModule, programs: list[ChannelProgram], ids: BdIds) -> None:
    """One ``aie.mem`` / ``aie.memtile_dma`` / ``aie.shim_dma`` per tile holding its channels' chains."""
    by_tile: dict[Coord, list[ChannelProgram]] = {}
    for p in programs:
        by_tile.setdefault(p.tile, []).append(p)
    kinds = {"compute": "aie.mem", "mem": "aie.memtile_dma", "shim": "aie.shim_dma"}
    for tile in sorted(by_tile):
        progs = sorted(by_tile[tile], key=lambda p: (DMA_CHANNEL_DIR[p.direction], p.channel))
        kind = kinds[dm.plan.device.tile_kind(tile)]
        op = aie_ops.create(kind, [dm.tile(tile)], results=[aie_ops.index_type()], regions=1)
        _fill(dm, op.regions[0], progs, ids)


def _fill(dm: DeviceModule, region: object, progs: list[ChannelProgram], ids: BdIds) -> None:
    m = mlir()
    starts, chains = [], []
    for p in progs:
        starts.append(region.blocks.append())
        chains.append([region.blocks.append() for _ in p.bds])
    end = region.blocks.append()
    for j, p in enumerate(progs):
        bd_ids = ids.take(p.tile, p.channel, len(p.bds), p.what)
        nxt = starts[j + 1] if j + 1 < len(progs) else end
        with m.ir.InsertionPoint(starts[j]):
            attrs = {
                "channel_dir": aie_ops.i32(DMA_CHANNEL_DIR[p.direction]),
                "channel_index": aie_ops.i32(p.channel),
                "repeat_count": aie_ops.i32(0),
            }
            aie_ops.create(
                "aie.dma_start", attrs=attrs, results=[m.ir.IntegerType.get_signless(1)], successors=[chains[j][0], nxt]
            )
        for i, bd in enumerate(p.bds):
            k = (i + 1) % len(p.bds)
            last = k == 0 and not p.cyclic
            with m.ir.InsertionPoint(chains[j][i]):
                _bd(dm, p, bd, bd_ids[i], None if last else bd_ids[k])
                aie_ops.create("aie.next_bd", successors=[end if last else chains[j][k]])
    with m.ir.InsertionPoint(end):
        aie_ops.end()


def _bd(dm: DeviceModule, p: ChannelProgram, bd: BdSpec, bd_id: int, next_id: int | None) -> None:
    dev = dm.plan.device
    bits = dev.bd_field_bits(p.tile)
    elem_bytes = mlir_elem_bytes(bd.buffer)
    what = f"{p.what}, BD {bd_id}"
    words(bd.offset, elem_bytes, f"{what} (offset)")
    check_length(words(bd.length, elem_bytes, what), bits, what)
    walk = None if bd.walk is None else fit_walk(bd.walk, elem_bytes, bits, dev.dma_dims(p.tile), what, iteration=False)
    lock, action, value = bd.acquire
    _use_lock(lock, action, value)
    attrs = {"bd_id": aie_ops.i32(bd_id), "offset": aie_ops.i32(bd.offset), "len": aie_ops.i32(bd.length)}
    if next_id is not None:
        attrs["next_bd_id"] = aie_ops.i32(next_id)
    if walk is not None and not walk.linear:
        attrs["dimensions"] = aie_ops.bd_dims(walk.dims)
    aie_ops.create("aie.dma_bd", [bd.buffer], attrs)
    lock, action, value = bd.release
    _use_lock(lock, action, value)


def _use_lock(lock: object, action: str, value: int) -> None:
    attrs = {"acq_en": aie_ops.boolean(True), "action": aie_ops.i32(LOCK_ACTION[action]), "value": aie_ops.i32(value)}
    aie_ops.create("aie.use_lock", [lock], attrs)


def mlir_elem_bytes(memref_value: object) -> int:
    """Bytes per element of a memref value."""
    m = mlir()
    et = m.ir.MemRefType(memref_value.type).element_type
    if isinstance(et, m.ir.IntegerType):
        return max(1, et.width // 8)
    return 2 if isinstance(et, m.ir.BF16Type) else 4
