"""What both levels share: the ``aie.device`` op, its tiles, the kernel functions and the cores.

Everything placed comes from the Plan: the tile of every core, link and host
end; nothing here chooses a location.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.cascade import extern_cascade_params
from tilelang.backends.mlir.core_program import CoreEmitter, SyncLowering
from tilelang.backends.mlir.enums import device_id
from tilelang.backends.mlir.kernels import declare_extern, lower_kernel, stack_bytes
from tilelang.backends.mlir.types import tile_memref_type
from tilelang.devices.abi import STACK_BYTES
from tilelang.errors import PlanError, TileLangError
from tilelang.ir.design import Call, Core, walk
from tilelang.ir.kernel import ExternKernel, Kernel
from tilelang.ir.plan import Plan, byte_groups

Coord = tuple[int, int]


@dataclass
class DeviceModule:
    """An ``aie.device`` under construction.

    Attributes:
        plan: the plan being emitted.
        block: the device's body block.
        names: symbol names in use.
        tiles: SSA value of every ``aie.tile``.
        kernel_stack: bytes of stack temporaries each emitted kernel needs.
    """

    plan: Plan
    block: object
    names: aie_ops.Names
    tiles: dict[Coord, object] = field(default_factory=dict)
    kernel_stack: dict[str, int] = field(default_factory=dict)

    @property
    def design(self):  # noqa: ANN201 - a Design
        return self.plan.design

    def tile(self, t: Coord) -> object:
        return self.tiles[t]


def open_device(plan: Plan, module: object) -> DeviceModule:
    """Create ``aie.device`` in ``module`` (its body left open for the level to fill).

    Raises:
        TileLangError: mlir-aie has no device of that name.
    """
    m = mlir()
    design = plan.design
    try:
        dev = device_id(design.device.name)
    except KeyError:
        raise TileLangError(
            f"mlir-aie has no device {design.device.name!r}; the MLIR backend cannot target it"
        ) from None
    with m.ir.InsertionPoint(module.body):
        op = aie_ops.create(
            "aie.device", attrs={"device": aie_ops.i32(dev), "sym_name": aie_ops.string("main")}, regions=1
        )
    block = op.regions[0].blocks.append()
    taken = {
        x.name for x in (*design.params, *design.fifos, *design.cores, *design.links, *design.dmas, *design.kernels)
    }
    return DeviceModule(plan, block, aie_ops.Names(taken | {"main", "sequence"}))


def plan_tiles(plan: Plan) -> set[Coord]:
    """Every tile the plan puts something on: cores, links, fifo ends and shared buffers."""
    out = set(plan.placement.values()) | set(plan.link_tiles.values())
    for fp in plan.fifos.values():
        out.add(fp.producer.tile)
        out.update(c.tile for c in fp.consumers)
        if fp.shared_tile is not None:
            out.add(fp.shared_tile)
    return out


def emit_tiles(dm: DeviceModule, tiles: set[Coord]) -> None:
    """``aie.tile`` for each tile, in (col, row) order."""
    for c, r in sorted(tiles):
        op = aie_ops.create(
            "aie.tile", attrs={"col": aie_ops.i32(c), "row": aie_ops.i32(r)}, results=[aie_ops.index_type()]
        )
        dm.tiles[(c, r)] = op.result


def emit_kernels(dm: DeviceModule) -> None:
    """One ``func.func`` per kernel the cores call: a body in upstream dialects, or a private declaration for an extern kernel."""
    cascaded = extern_cascade_params(dm.design)
    for k in dm.design.kernels:
        if isinstance(k, ExternKernel):
            params = tuple(p for p in k.params if p.name not in cascaded.get(k.name, set()))
            declare_extern(k.name, params, k.object_file)
        elif isinstance(k, Kernel):
            dm.kernel_stack[k.name] = stack_bytes(lower_kernel(k))


def core_kernels(core: Core) -> list[str]:
    """Names of the kernels a core calls, first use first."""
    seen: list[str] = []
    for s in walk(core.body):
        if isinstance(s, Call) and s.kernel not in seen:
            seen.append(s.kernel)
    return seen


def core_attrs(dm: DeviceModule, core: Core) -> dict[str, object]:
    """``stack_size`` as the plan reserved it (extern kernels' objects are linked per function: ``link_with``).

    Raises:
        PlanError: the core's kernels need more stack than the plan reserved.
    """
    called = core_kernels(core)
    need = max((dm.kernel_stack.get(k, 0) for k in called), default=0)
    if need > STACK_BYTES:
        worst = max(called, key=lambda k: dm.kernel_stack.get(k, 0))
        raise PlanError(
            f"core {core.name!r}: kernel {worst!r} needs {need} B of stack temporaries, the plan reserves a "
            f"{STACK_BYTES} B stack per core; write results straight into tile parameters "
            "(c[...] = a @ b, c[...] += a @ b, y[...] = tl.sum(x, axis=...)) or split the kernel"
        )
    return {"stack_size": aie_ops.i32(STACK_BYTES)}


def _local_buffers(dm: DeviceModule, core: Core, addresses: bool) -> tuple[dict[str, object], list]:
    """``aie.buffer`` ops for ``core``'s local buffers on its tile: one per buffer, except that buffers the
    plan packs into shared bytes (aie.buffers may not overlap) become one byte buffer per group of
    overlapping ones, which the core views them in.

    Returns:
        ({buffer: its aie.buffer value} for buffers alone, [(byte buffer value, base offset, [buffers])]).

    Raises:
        PlanError: the plan places a buffer off the core's tile.
    """
    if not core.buffers:
        return {}, []
    m = mlir()
    tile = dm.plan.placement[core.name]
    placed = {b.name: dm.plan.buffers[b.name] for b in core.buffers}
    for name, bp in placed.items():
        if bp.tile != tile:
            raise PlanError(f"buffer {name!r} of core {core.name!r} is placed on {bp.tile}, the core on {tile}")
    local = {b.name: b for b in core.buffers}
    spans = {b.name: (placed[b.name].offset, b.nbytes) for b in core.buffers}
    groups = [[local[n] for n in g] for g in byte_groups(spans)]

    def buffer(name: str, memref: object, offset: int, bank: int) -> object:
        attrs = {"sym_name": aie_ops.string(dm.names.fresh(name))}
        if addresses:
            attrs |= {"address": aie_ops.i32(offset), "mem_bank": aie_ops.i32(bank)}
        return aie_ops.create("aie.buffer", [dm.tile(tile)], attrs, [memref]).result

    alone: dict[str, object] = {}
    shared: list = []
    i8 = m.ir.IntegerType.get_signless(8)
    for g in groups:
        first = placed[g[0].name]
        if len(g) == 1:
            alone[g[0].name] = buffer(g[0].name, tile_memref_type(g[0].elem), first.offset, first.bank)
            continue
        size = max(placed[b.name].offset + b.nbytes for b in g) - first.offset
        name = "_".join(b.name for b in g)
        shared.append((buffer(name, m.ir.MemRefType.get([size], i8), first.offset, first.bank), first.offset, g))
    return alone, shared


def emit_core(dm: DeviceModule, core: Core, sync: SyncLowering, addresses: bool = False) -> object:
    """``aie.core`` on the core's planned tile, its body emitted through ``sync``; its local buffers
    before it (``addresses``: at the plan's addresses and banks, as the physical level places buffers)."""
    m = mlir()
    local, shared = _local_buffers(dm, core, addresses)
    tile = dm.tile(dm.plan.placement[core.name])
    op = aie_ops.create("aie.core", [tile], core_attrs(dm, core), [aie_ops.index_type()], regions=1)
    block = op.regions[0].blocks.append()
    emitter = CoreEmitter(dm.design, core, sync, {k.name: k.name for k in dm.design.kernels})
    bind = getattr(sync, "bind", None)
    if bind is not None:
        bind(emitter)
    with m.ir.InsertionPoint(block):
        index = m.ir.IndexType.get()
        for value, base, group in shared:
            for b in group:
                shift = m.arith.constant(index, dm.plan.buffers[b.name].offset - base)
                local[b.name] = m.memref.view(tile_memref_type(b.elem), value, shift, [])
        emitter.local = local
        emitter.run()
        aie_ops.end()
    return op
