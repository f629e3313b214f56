"""The host's moves: ``aie.runtime_sequence`` with ``aiex.npu.dma_memcpy_nd`` and ``aiex.npu.dma_wait``.

One ``dma_memcpy_nd`` per move and fifo, its tensor walk as 4-entry static
offsets/sizes/strides (outermost first; the outermost entry is the shim BD's
iteration/repeat). Moves on one fifo keep program order (a shim channel runs
its tasks in order); moves on different fifos are concurrent, so their issue
order is free, and two rules keep a real shim from deadlocking on its 16
buffer descriptors:

- each shim channel gets its own ring of BD ids (the shim's BDs shared out
  among the channels used there); reusing an id first waits
  (``dma_wait`` on that channel, its earlier move issuing a token) for the
  move that held it, which only depends on that channel's own progress;
- the first ring-full of moves *from* the device on each channel are issued
  before everything else, so the host is ready to drain outputs before inputs
  pile up behind them (a core blocked on a full output fifo stops consuming
  its inputs).

At the end the sequence waits for the last move of every channel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.bd import Walk, fit_walk, walk_of
from tilelang.backends.mlir.types import memref_type
from tilelang.errors import PlanError
from tilelang.ir.design import Dma
from tilelang.ir.plan import FifoEnd, Plan
from tilelang.ir.verify import HOST

Coord = tuple[int, int]
Channel = tuple[Coord, str, int]  # (shim tile, "mm2s" | "s2mm", channel index)


@dataclass(frozen=True)
class HostMove:
    """One ``dma_memcpy_nd``: a move's transfer for one fifo."""

    order: int
    dma: Dma
    fifo: str
    channel: Channel
    walk: Walk


def host_end(plan: Plan, fifo: str, to_device: bool) -> FifoEnd:
    """The host's end of ``fifo`` in the plan.

    Raises:
        PlanError: the plan has no host end with a DMA channel for it.
    """
    fp = plan.fifos[fifo]
    ends = [fp.producer] if to_device else list(fp.consumers)
    for e in ends:
        if e.agent == HOST:
            if e.channel is None:
                raise PlanError(f"the plan gives the host end of fifo {fifo!r} no shim DMA channel")
            return e
    raise PlanError(f"the plan has no host end for fifo {fifo!r}")


def host_moves(plan: Plan, per_channel: bool = False) -> list[HostMove]:
    """Every transfer of the runtime sequence, in program order, with its BD walk checked.

    Args:
        plan: the plan.
        per_channel: one transfer per shim channel a move uses (a move into
            several fifos the plan feeds from one channel is sent once, the
            route broadcasts it); else one per fifo (the objectfifo level,
            where mlir-aie gives every objectfifo its own shim channel).

    Each walk is as the shim BD holds it (``bd.fit_walk``: a dimension longer
    than the wrap field split in two where the BD has a dimension to spare).

    Raises:
        PlanError: a walk does not fit the shim DMA's BD fields.
    """
    design, device = plan.design, plan.device
    out: list[HostMove] = []
    for d in design.dmas:
        if d.plio:
            continue  # a PLIO stream: the PL side moves it, no shim BD or runtime transfer (docs/plio.md)
        tensor = design.tensors[d.tensor]
        seen: set[tuple] = set()
        for f in d.fifos:
            end = host_end(plan, f, d.to_device)
            if per_channel and (end.tile, end.channel) in seen:
                continue
            seen.add((end.tile, end.channel))
            direction = "mm2s" if d.to_device else "s2mm"
            what = f"dma {d.name!r} ({'to' if d.to_device else 'from'} fifo {f!r}) on shim {end.tile}"
            walk = fit_walk(
                walk_of(d.pattern),
                tensor.dtype.bytes,
                device.bd_field_bits(end.tile),
                device.dma_dims(end.tile),
                what,
                iteration=True,
            )
            if len(walk.dims) > 4:
                raise PlanError(f"{what}: dma_memcpy_nd takes at most 4 dimensions, the pattern needs {len(walk.dims)}")
            out.append(HostMove(len(out), d, f, (end.tile, direction, end.channel), walk))  # type: ignore[arg-type]
    return out


def static_fields(walk: Walk) -> tuple[list[int], list[int], list[int]]:
    """4-entry offsets, sizes and strides (outermost first) of a walk.

    A repeat (an outermost stride-0 dimension) goes to the first entry, the iteration
    dimension, the only one where mlir-aie accepts stride 0 (``devices.dma_rules``); unit
    dimensions pad the entries between.
    """
    dims = list(walk.dims)
    while len(dims) > 1 and dims[0][0] == 1:
        dims.pop(0)
    repeat = [dims.pop(0)] if len(dims) > 1 and dims[0][1] == 0 else []
    while len(dims) + len(repeat) < 4:
        dims.insert(0, (1, 0))
    dims = repeat + dims
    sizes = [s for s, _ in dims]
    strides = [t for _, t in dims]
    return [0, 0, 0, walk.offset], sizes, strides


def issue_order(moves: list[HostMove], ring: dict[Channel, int]) -> list[HostMove]:
    """Program order, except that each channel's first ring-full of moves from the device go first."""
    seen: dict[Channel, int] = {}
    early, rest = [], []
    for mv in moves:
        k = seen.get(mv.channel, 0)
        seen[mv.channel] = k + 1
        if mv.channel[1] == "s2mm" and k < ring[mv.channel]:
            early.append(mv)
        else:
            rest.append(mv)
    return early + rest


def bd_rings(plan: Plan, moves: list[HostMove]) -> tuple[dict[Channel, int], dict[Channel, int]]:
    """(first BD id, ring size) of every channel: each shim's BDs shared out among its channels.

    Raises:
        PlanError: a shim has more channels in use than BDs.
    """
    by_tile: dict[Coord, list[Channel]] = {}
    for mv in moves:
        chans = by_tile.setdefault(mv.channel[0], [])
        if mv.channel not in chans:
            chans.append(mv.channel)
    base: dict[Channel, int] = {}
    size: dict[Channel, int] = {}
    for tile, chans in by_tile.items():
        bds = plan.device.buffer_descriptors(tile)
        share = bds // len(chans)
        if share < 1:
            raise PlanError(f"shim {tile} has {bds} buffer descriptors for {len(chans)} channels")
        for i, ch in enumerate(sorted(chans, key=lambda c: (c[1], c[2]))):
            base[ch], size[ch] = i * share, share
    return base, size


def emit_runtime_sequence(plan: Plan, metadata: Callable[[HostMove], str], per_channel: bool = False) -> object:
    """Build ``aie.runtime_sequence @sequence`` at the current insertion point.

    Args:
        plan: the plan.
        metadata: the symbol a move's ``dma_memcpy_nd`` and ``dma_wait`` name
            (the objectfifo, or the shim DMA allocation).
        per_channel: see :func:`host_moves`.

    Returns:
        The operation.

    Raises:
        PlanError: a move's walk does not fit the shim's BD fields.
    """
    m = mlir()
    design = plan.design
    moves = host_moves(plan, per_channel)
    base, ring = bd_rings(plan, moves)
    arg_types = [memref_type(t.shape, t.dtype) for t in design.params]
    seq = aie_ops.create("aie.runtime_sequence", attrs={"sym_name": aie_ops.string("sequence")}, regions=1)
    block = seq.regions[0].blocks.append(*arg_types)
    args = {t.name: block.arguments[i] for i, t in enumerate(design.params)}
    issued: dict[Channel, list[tuple[HostMove, object]]] = {}
    waited: dict[Channel, int] = {}  # moves of the channel known complete
    with m.ir.InsertionPoint(block):
        for mv in issue_order(moves, ring):
            history = issued.setdefault(mv.channel, [])
            n = len(history)
            if n >= ring[mv.channel] and waited.get(mv.channel, 0) <= n - ring[mv.channel]:
                _wait(history, n - ring[mv.channel], metadata)
                waited[mv.channel] = n - ring[mv.channel] + 1
            op = _memcpy(mv, args[mv.dma.tensor], base[mv.channel] + n % ring[mv.channel], metadata(mv))
            history.append((mv, op))
        last = sorted((h[-1][0].order, ch) for ch, h in issued.items() if waited.get(ch, 0) < len(h))
        for _, ch in last:
            _wait(issued[ch], len(issued[ch]) - 1, metadata)
    return seq


def _memcpy(mv: HostMove, tensor: object, bd_id: int, symbol: str) -> object:
    offsets, sizes, strides = static_fields(mv.walk)
    attrs = {
        "id": aie_ops.i64(bd_id),
        "metadata": aie_ops.symbol(symbol),
        "operandSegmentSizes": aie_ops.dense_i32([1, 0, 0, 0]),
        "static_offsets": aie_ops.dense_i64(offsets),
        "static_sizes": aie_ops.dense_i64(sizes),
        "static_strides": aie_ops.dense_i64(strides),
    }
    return aie_ops.create("aiex.npu.dma_memcpy_nd", [tensor], attrs)


def _wait(history: list[tuple[HostMove, object]], index: int, metadata: Callable[[HostMove], str]) -> None:
    """Wait for move ``index`` of a channel (and so every earlier one): it issues a token, the wait takes it."""
    mv, op = history[index]
    op.attributes["issue_token"] = aie_ops.boolean(True)
    aie_ops.create("aiex.npu.dma_wait", attrs={"symbol": aie_ops.symbol(metadata(mv))})
