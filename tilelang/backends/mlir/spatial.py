"""The objectfifo level: the design as IRON writes it, for mlir-aie to lower.

``aie.objectfifo`` per fifo between its planned producer and consumer tiles,
``aie.objectfifo.link`` per memtile link, ``aie.core`` bodies with
``aie.objectfifo.acquire``/``subview.access``/``release`` and ``func.call``s
of the kernels, and the host's moves: the runtime sequence on NPUs, external
buffers registered to each fifo's shim end on AIE1 (host_buffers.py).
Placement is the plan's; buffer addresses, locks, DMA programs and routes are
left to mlir-aie's passes (``level="physical"`` carries the plan's own).
"""

from __future__ import annotations

import itertools

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir.bd import fit_walk, walk_of
from tilelang.backends.mlir.cascade import emit_cascade_flows
from tilelang.backends.mlir.device import DeviceModule, emit_core, emit_kernels, emit_tiles, plan_tiles
from tilelang.backends.mlir.host_buffers import register_host_buffers
from tilelang.backends.mlir.objectfifo_sync import ObjectFifoSync
from tilelang.backends.mlir.runtime_sequence import emit_runtime_sequence
from tilelang.backends.mlir.types import tile_memref_type
from tilelang.errors import PlanError
from tilelang.ir.descriptors import bd_pool, end_bds
from tilelang.ir.design import Design, Fifo, Link, LinkKind
from tilelang.ir.plan import Plan


def build_objectfifo_level(dm: DeviceModule) -> None:
    """Fill the device's body at the current insertion point."""
    plan, design = dm.plan, dm.design
    _check_plio_ends(plan)
    _check_chained_links(design)
    order = _declaration_order(plan)
    emit_tiles(dm, plan_tiles(plan))
    emit_cascade_flows(dm)
    layouts = _stream_layouts(plan)
    for f in order:
        _objectfifo(dm, f, layouts.get(f.name, ()))
    for ln in design.links:
        _link(ln)
    emit_kernels(dm)
    symbols = {f.name: f.name for f in design.fifos}
    for core in design.cores:
        emit_core(dm, core, ObjectFifoSync(design, symbols))
    if not plan.device.host_sequence:
        register_host_buffers(dm)  # no NPU runtime sequence on AIE1 (host_buffers.py)
    else:
        emit_runtime_sequence(plan, lambda mv: symbols[mv.fifo])
    aie_ops.end()


#: PLIO objectfifos one PL shim may end per direction at the objectfifo level: mlir-aie's objectfifo lowering
#: numbers a PLIO end's channel as a shim DMA channel (AIEObjectFifoStatefulTransform, getDMAChannelIndex; the
#: installed aie-opt says "number of output DMA channel exceeded!" at the third), so the AIE1 shim DMA's two
#: channels a direction bound it although a PL shim has 8 PLIO inputs and 6 outputs (docs/plio.md).
OBJECTFIFO_PLIO_PER_SHIM = 2


def _declaration_order(plan: Plan) -> list[Fifo]:
    """The fifos in the order to declare them, so that mlir-aie's channel numbering keeps each memtile's BD pools.

    At this level mlir-aie numbers DMA channels itself: fifo by fifo in declaration order, each end on a tile
    taking the lowest free channel of its direction (AIEObjectFifoStatefulTransform; a split's source fifo
    declared first takes S2MM 0 and its parts MM2S 1, 2, ...). A memtile's channels draw their BDs from their
    parity's pool (even channels BDs 0-23, odd 24-47, ``bd_pool``), so the order decides whether the pools
    hold ("Allocator exhausted available BD IDs" otherwise). The design's order is kept where its numbering
    fits; else each memtile's ends are dealt to even and odd channels so both pools hold (the plan's own
    parities first) and the fifos declared in the order of the channels that gives.

    Raises:
        PlanError: no numbering from 0 fits a memtile's pools, or no one order gives every memtile's.
    """
    dev, design = plan.device, plan.design
    ends: dict[tuple[int, int], dict[str, list[tuple[int, str, int]]]] = {}
    for name, fp in plan.fifos.items():
        for e, d in ((fp.producer, "mm2s"), *((c, "s2mm") for c in fp.consumers)):
            if e.channel is not None and dev.tile_kind(e.tile) == "mem":
                ends.setdefault(e.tile, {"mm2s": [], "s2mm": []})[d].append((e.channel, name, end_bds(design, name, e.agent)))
    order = list(design.fifos)
    if _pools_hold(plan, ends, _numbering(order, ends)):
        return order
    want: dict[tuple[tuple[int, int], str, str], int] = {}
    for tile, by_dir in sorted(ends.items()):
        evens = _parity_split(plan, tile, by_dir)
        if evens is None:
            raise PlanError(
                f"memtile {tile}: mlir-aie's objectfifo lowering numbers its DMA channels from 0, and no such "
                f"numbering keeps its BDs within the {bd_pool(dev, tile, 0)[1]} of each channel parity's pool; "
                f"the plan's own channels fit: emit level='physical', or give its links' fifos less depth"
            )
        for d, listed in by_dir.items():
            for parity in (0, 1):
                mine = [x for x in sorted(listed) if (x[1] in evens[d]) == (parity == 0)]
                for k, x in enumerate(mine):
                    want[(tile, d, x[1])] = 2 * k + parity
    first = {}
    for (_, _, f), ch in want.items():
        first[f] = min(first.get(f, ch), ch)
    order.sort(key=lambda f: first.get(f.name, -1))
    if _numbering(order, ends) != want:
        raise PlanError(
            "mlir-aie's objectfifo lowering numbers DMA channels in the order the fifos are declared, and no one "
            "order gives every memtile a numbering its BD pools hold (a fifo with ends on two memtiles): emit "
            "level='physical'"
        )
    return order


def _numbering(order: list[Fifo], ends: dict) -> dict[tuple[tuple[int, int], str, str], int]:
    """The memtile channels mlir-aie gives the fifos' ends declared in ``order``: the lowest free one each."""
    at: dict[str, list[tuple[tuple[int, int], str]]] = {}
    for tile, by_dir in ends.items():
        for d, listed in by_dir.items():
            for _, f, _ in listed:
                at.setdefault(f, []).append((tile, d))
    used: dict[tuple[tuple[int, int], str], int] = {}
    out = {}
    for f in order:
        for key in at.get(f.name, ()):
            out[(*key, f.name)] = used.get(key, 0)
            used[key] = used.get(key, 0) + 1
    return out


def _pools_hold(plan: Plan, ends: dict, numbering: dict) -> bool:
    """Whether every memtile's BD pools hold the ends numbered so."""
    load: dict[tuple[tuple[int, int], int], int] = {}
    for tile, by_dir in ends.items():
        for d, listed in by_dir.items():
            for _, f, bds in listed:
                key = (tile, numbering[(tile, d, f)] % 2)
                load[key] = load.get(key, 0) + bds
    return all(n <= bd_pool(plan.device, tile, parity)[1] for (tile, parity), n in load.items())


def _parity_split(plan: Plan, tile: tuple[int, int], by_dir: dict) -> dict[str, set[str]] | None:
    """Per direction, the fifos whose ends take even channels when a memtile's ends are numbered from 0 (half of
    them, rounded up), such that both pools hold; the plan's own parities first, then the other splits in order."""
    dev = plan.device
    options = []
    for d in ("mm2s", "s2mm"):
        listed = sorted(by_dir[d])
        k = (len(listed) + 1) // 2
        own = frozenset(f for ch, f, _ in listed if ch % 2 == 0)
        picks = [frozenset(f for _, f, _ in c) for c in itertools.combinations(listed, k)]
        options.append(sorted(set(picks), key=lambda p: (p != own, sorted(p))))
    pools = (bd_pool(dev, tile, 0)[1], bd_pool(dev, tile, 1)[1])
    total = {d: sum(n for _, _, n in by_dir[d]) for d in ("mm2s", "s2mm")}
    for out in options[0]:
        for into in options[1]:
            even = _bds_of(by_dir["mm2s"], out) + _bds_of(by_dir["s2mm"], into)
            if even <= pools[0] and total["mm2s"] + total["s2mm"] - even <= pools[1]:
                return {"mm2s": set(out), "s2mm": set(into)}
    return None


def _bds_of(listed: list[tuple[int, str, int]], fifos: frozenset[str]) -> int:
    """The BDs of the listed ends of ``fifos``."""
    return sum(n for _, f, n in listed if f in fifos)


def _check_chained_links(design: Design) -> None:
    """No fifo both leaves one link and enters another: mlir-aie's objectfifo lowering takes an objectfifo in at
    most one ``aie.objectfifo.link`` (aie-opt: "objectfifo cannot be in more than one ObjectFifoLinkOp").

    Raises:
        PlanError: naming the fifo, its two links and the level that emits it.
    """
    made = {f: ln.name for ln in design.links for f in ln.dsts}
    for ln in design.links:
        for f in ln.srcs:
            if f in made:
                raise PlanError(
                    f"fifo {f!r} leaves link {made[f]!r} and enters link {ln.name!r}: mlir-aie's objectfifo lowering "
                    f"takes a fifo in at most one link (\"objectfifo cannot be in more than one ObjectFifoLinkOp\"): "
                    f"emit level='physical', or let one link do both moves"
                )


def _check_plio_ends(plan: Plan) -> None:
    """PLIO fifos only on AIE1, and at most OBJECTFIFO_PLIO_PER_SHIM PLIO fifo ends per PL shim and direction.

    Raises:
        PlanError: naming the shim, the direction and its fifos.
    """
    plio = [name for name in plan.fifos if plan.design.plio_of(name)]
    if plio and plan.device.family != "aie1":
        raise PlanError(
            f"fifos {', '.join(plio)} are PLIO streams on {plan.device.name}: mlir-aie's flow crashes on an AIE-ML "
            f"module with a PL shim tile at the objectfifo level (its aie-generate-column-control-overlay routes "
            f"each shim's TileControl, and aie-create-pathfinder-flows then fails on the PL shim; docs/plio.md): "
            f"emit level='physical', which connects the planned PLIO channels itself"
        )
    per: dict[tuple[tuple[int, int], str], list[str]] = {}
    for name in plio:
        fp = plan.fifos[name]
        for e, d in ((fp.producer, "MM2S"), *((c, "S2MM") for c in fp.consumers)):
            if e.agent == "host":
                per.setdefault((e.tile, d), []).append(name)
    for (tile, d), fifos in sorted(per.items()):
        if len(fifos) > OBJECTFIFO_PLIO_PER_SHIM:
            raise PlanError(
                f"PL shim {tile} ends {len(fifos)} PLIO fifos in {d} ({', '.join(fifos)}); mlir-aie's objectfifo "
                f"lowering gives a shim at most {OBJECTFIFO_PLIO_PER_SHIM} a direction: emit level='physical', "
                f"which uses the planned PLIO channels"
            )


def _stream_layouts(plan: Plan) -> dict[str, tuple[tuple[int, int], ...]]:
    """``dimensionsToStream`` of each fifo a forward or join link re-lays out (its memtile MM2S reads with the
    pattern).

    The dimensions are those the memtile's BD will walk: fitted to its fields
    as at the physical level (``bd.fit_walk``), so mlir-aie gets a layout its
    BD can hold.

    Raises:
        PlanError: a pattern with an offset or a repeat, which BD dimensions
            cannot express, or one the memtile's BD cannot hold.
    """
    out = {}
    device = plan.device
    for ln in plan.design.links:
        if ln.kind is LinkKind.SPLIT or ln.pattern is None:
            continue
        walk = walk_of(ln.pattern, with_repeat=False)
        kind = ln.kind.value
        if walk.offset or ln.pattern.repeat_count != 1:
            raise PlanError(f"{kind} {ln.name!r}: a re-layout pattern with an offset or a repeat has no BD form")
        tile = plan.link_tiles[ln.name]
        what = f"{kind} {ln.name!r} (dimensionsToStream of fifo {ln.dsts[0]!r}) on memtile {tile}"
        elem_bytes = plan.design.fifo(ln.dsts[0]).elem.dtype.bytes
        walk = fit_walk(walk, elem_bytes, device.bd_field_bits(tile), device.dma_dims(tile), what, iteration=False)
        out[ln.dsts[0]] = walk.dims
    return out


def _shares_memory(plan: Plan, fifo: str) -> bool:
    """Whether mlir-aie would put this fifo in shared memory by itself (two cores that can share a memory)."""
    fp = plan.fifos[fifo]
    if len(fp.consumers) != 1:
        return False
    a, b = fp.producer, fp.consumers[0]
    if not (a.agent.startswith("core:") and b.agent.startswith("core:")):
        return False
    dev = plan.device
    return bool(set(dev.shared_memory_tiles(a.tile)) & set(dev.shared_memory_tiles(b.tile)))


def _objectfifo(dm: DeviceModule, f: Fifo, layout: tuple[tuple[int, int], ...]) -> None:
    fp = dm.plan.fifos[f.name]
    operands = [dm.tile(fp.producer.tile)] + [dm.tile(c.tile) for c in fp.consumers]
    attrs = {
        "sym_name": aie_ops.string(f.name),
        "elemNumber": aie_ops.i32(f.depth),
        "elemType": aie_ops.type_attr(aie_ops.objectfifo_type(tile_memref_type(f.elem))),
        "dimensionsToStream": aie_ops.bd_dims(layout),
        "dimensionsFromStreamPerConsumer": aie_ops.bd_dims_per_consumer(len(fp.consumers)),
    }
    if not fp.shared and _shares_memory(dm.plan, f.name):
        attrs["via_DMA"] = aie_ops.boolean(True)  # the plan streams it; mlir-aie would share it
    if dm.design.plio_of(f.name):
        # mlir-aie's objectfifo lowering turns a PL shim end with plio = true into an aie.flow from or to
        # the shim's PLIO port and an aie.shim_dma_allocation {plio = true} (docs/plio.md)
        attrs["plio"] = aie_ops.boolean(True)
    aie_ops.create("aie.objectfifo", operands, attrs)
    if fp.shared and fp.shared_tile == fp.consumers[0].tile and _shares_memory(dm.plan, f.name):
        # mlir-aie keeps a fifo's buffers (and locks) in its producer's memory when the two cores share one,
        # unless told otherwise; the plan put them in the consumer's, which both tiles' memory budgets assume
        # (aie.objectfifo.allocate: "a delegate tile whose memory holds the objects"). A plan's third tile
        # between two cores is left to mlir-aie, which streams such a fifo.
        aie_ops.create("aie.objectfifo.allocate", [dm.tile(fp.shared_tile)], {"objFifo_name": aie_ops.symbol(f.name)})


def _link(ln: Link) -> None:
    # mlir-aie measures each part from its offset to the next one listed (AIEObjectFifoStatefulTransform's
    # link extents, ``next - offset``): listed out of order, a part gets a negative length. So the parts are
    # listed by offset, with their fifos (the same split or join).
    srcs, dsts, offsets = list(ln.srcs), list(ln.dsts), list(ln.offsets)
    if offsets:
        parts = srcs if ln.kind is LinkKind.JOIN else dsts
        order = sorted(range(len(offsets)), key=lambda k: (offsets[k], k))
        parts[:] = [parts[k] for k in order]
        offsets = [offsets[k] for k in order]
    attrs = {
        "fifoIns": aie_ops.symbols(srcs),
        "fifoOuts": aie_ops.symbols(dsts),
        "src_offsets": aie_ops.i64_list(offsets if ln.kind is LinkKind.JOIN else []),
        "dst_offsets": aie_ops.i64_list(offsets if ln.kind is LinkKind.SPLIT else []),
    }
    aie_ops.create("aie.objectfifo.link", attrs=attrs)
