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

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir.bd import fit_walk, walk_of
from tilelang.backends.mlir.cascade import emit_cascade_flows
from tilelang.backends.mlir.device import DeviceModule, emit_core, emit_kernels, emit_tiles, plan_tiles
from tilelang.backends.mlir.host_buffers import register_host_buffers
from tilelang.backends.mlir.objectfifo_sync import ObjectFifoSync
from tilelang.backends.mlir.runtime_sequence import emit_runtime_sequence
from tilelang.backends.mlir.types import tile_memref_type
from tilelang.errors import PlanError
from tilelang.ir.descriptors import bd_pool, end_bds, pools_fit
from tilelang.ir.design import Design, Fifo, Link, LinkKind
from tilelang.ir.plan import Plan


def build_objectfifo_level(dm: DeviceModule) -> None:
    """Fill the device's body at the current insertion point."""
    plan, design = dm.plan, dm.design
    _check_plio_ends(plan)
    _check_chained_links(design)
    _check_compact_channels(plan)
    emit_tiles(dm, plan_tiles(plan))
    emit_cascade_flows(dm)
    layouts = _stream_layouts(plan)
    for f in design.fifos:
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


def _check_compact_channels(plan: Plan) -> None:
    """Each memtile's BD pools fit a numbering of its DMA channels from 0 up, per direction.

    At this level mlir-aie numbers a memtile's channels itself, the lowest free one first (its objectfifo
    lowering), and draws each channel's BDs from its parity's pool (even channels BDs 0-23, odd 24-47). The
    planner may skip a number to balance the pools (plan/channels.py); where no numbering from 0 fits
    (``descriptors.pools_fit`` with ``compact``), aie-opt would stop with "Allocator exhausted available BD
    IDs", so the level is refused here instead.

    Raises:
        PlanError: naming the memtile and the level that emits the plan's own channels.
    """
    dev = plan.device
    ends: dict[tuple[int, int], dict[str, list[int]]] = {}
    for name, fp in plan.fifos.items():
        for e, d in ((fp.producer, "mm2s"), *((c, "s2mm") for c in fp.consumers)):
            if e.channel is not None and dev.tile_kind(e.tile) == "mem":
                ends.setdefault(e.tile, {"mm2s": [], "s2mm": []})[d].append(end_bds(plan.design, name, e.agent))
    for tile, by_dir in sorted(ends.items()):
        if not pools_fit(dev, tile, by_dir, compact=True):
            raise PlanError(
                f"memtile {tile}: mlir-aie's objectfifo lowering numbers its DMA channels from 0, and no such "
                f"numbering keeps its BDs within the {bd_pool(dev, tile, 0)[1]} of each channel parity's pool; "
                f"the plan's own channels fit: emit level='physical', or give its links' fifos less depth"
            )


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
    """``dimensionsToStream`` of each fifo a forward link re-lays out (its memtile MM2S reads with the pattern).

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
        if ln.kind is not LinkKind.FORWARD or ln.pattern is None:
            continue
        walk = walk_of(ln.pattern, with_repeat=False)
        if walk.offset or ln.pattern.repeat_count != 1:
            raise PlanError(f"forward {ln.name!r}: a re-layout pattern with an offset or a repeat has no BD form")
        tile = plan.link_tiles[ln.name]
        what = f"forward {ln.name!r} (dimensionsToStream of fifo {ln.dsts[0]!r}) on memtile {tile}"
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
