"""Buffer placement: every buffer into a tile memory, a bank and a byte offset.

The memory of a tile is ``banks`` equal banks. The placement works in three
steps, the middle one swappable (first fit here, an ILP in ``bank_ilp.py``):

1. the memory of each shared fifo (one of the memories both its cores reach),
   and per tile the buffers that exceed a bank: those are laid contiguously
   from the top of memory down;
2. every other buffer into one bank, minimising first the cycles kernel
   calls lose to shared banks under the kernel cost model (the *phases* of
   ``bank_weights.py``), then the contention weight of the pairs sharing a
   bank (buffers one call uses together, a buffer a DMA moves beside one a
   call uses, and the halves of a double buffer);
3. offsets: buffers of a bank stacked from its bottom (above the core stack in
   bank 0 of a tile that runs a core), 16-byte aligned.

``offset`` is the byte address in the tile's data memory (what mlir-aie's
``aie.buffer`` ``address`` holds) and ``bank`` the bank it starts in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tilelang.devices import Device
from tilelang.devices.abi import BUFFER_ALIGN, STACK_BYTES, align
from tilelang.errors import PlanError
from tilelang.ir.plan import BufferPlacement
from tilelang.plan.bank_weights import Phase
from tilelang.plan.carriage import BufferSet, Carriage
from tilelang.plan.problem import Coord
from tilelang.plan.resources import fmt_tile

#: Buffer address alignment (``devices.abi.BUFFER_ALIGN``, with its source).
ALIGN = BUFFER_ALIGN


@dataclass(frozen=True)
class Item:
    """One buffer to place on a tile."""

    name: str
    fifo: str
    index: int
    size: int
    set_id: int


@dataclass(frozen=True)
class TileMemory:
    """What one tile must hold and how its memory is cut."""

    tile: Coord
    capacity: int
    banks: int
    stack: int
    sets: tuple[BufferSet, ...]

    @property
    def bank_bytes(self) -> int:
        return self.capacity // self.banks

    def items(self) -> list[Item]:
        out = []
        for k, s in enumerate(self.sets):
            out += [Item(n, s.fifo, i, align(s.size), k) for i, n in enumerate(s.names())]
        return out

    @property
    def need(self) -> int:
        return self.stack + sum(align(s.size) * s.count for s in self.sets)


#: Weight of two buffers of one set (a double buffer's halves) in one bank, on top of their
#: contention weight: API.md's "double-buffer halves in different banks when they fit".
SAME_SET = 1.0
#: Contention weights are scaled so the heaviest pair of the design weighs this much.
PAIR_SCALE = 100.0
#: Phase costs (call counts x cycles lost) are scaled so the costliest phase of the design, all its
#: buffers in one bank, weighs this much: a hundred times the heaviest pair, so the cycles lost
#: decide and the pairs mostly rank assignments that lose the same.
PHASE_SCALE = 1e4

@dataclass(frozen=True)
class BankProblem:
    """The bank-sized buffers of one tile, the free bytes of each bank, and what sharing a bank costs.

    Attributes:
        mem: the tile.
        items: its bank-sized buffers, largest first.
        free: free bytes of each bank.
        pairs: (buffer, buffer, weight) for every pair that costs ``weight`` in one bank.
        phases: (weight, phase) per phase of calls on this tile's buffers: an assignment
            costs ``weight * phase.lost(banks)``.
    """

    mem: TileMemory
    items: tuple[Item, ...]
    free: tuple[int, ...]
    pairs: tuple[tuple[str, str, float], ...] = ()
    phases: tuple[tuple[float, Phase], ...] = ()

    def partners(self) -> dict[str, dict[str, float]]:
        """{buffer: {buffer whose bank it should not share: weight}}."""
        out: dict[str, dict[str, float]] = {}
        for x, y, w in self.pairs:
            out.setdefault(x, {})[y] = w
            out.setdefault(y, {})[x] = w
        return out


#: Chooses a bank for the bank-sized buffers of every tile at once: {buffer name: bank};
#: a buffer left out is placed in any free gap afterwards.
BankChooser = Callable[[list[BankProblem]], dict[str, int]]


# -- step 1: shared memories and per-tile contents ------------------------------------------


def choose_shared(device: Device, carriage: Carriage, core_tiles: set[Coord]) -> dict[str, Coord]:
    """The memory of each shared fifo: the candidate with the most free bytes (producer's own on ties).

    Sets are considered largest first so big buffers get the roomiest memory.
    """
    free: dict[Coord, int] = {}

    def room(t: Coord) -> int:
        if t not in free:
            free[t] = device.memory_bytes(t) - (STACK_BYTES if t in core_tiles else 0)
        return free[t]

    for s in carriage.buffer_sets:
        if s.fifo not in carriage.shared:
            room(s.tiles[0])
            free[s.tiles[0]] -= align(s.size) * s.count
    chosen: dict[str, Coord] = {}
    shared_sets = [s for s in carriage.buffer_sets if s.fifo in carriage.shared]
    for s in sorted(shared_sets, key=lambda s: -align(s.size) * s.count):
        best = max(s.tiles, key=lambda t: (room(t), -s.tiles.index(t)))
        chosen[s.fifo] = best
        free[best] -= align(s.size) * s.count
    return chosen


def tile_memories(
    device: Device, carriage: Carriage, shared_at: dict[str, Coord], core_tiles: set[Coord]
) -> list[TileMemory]:
    """The buffer sets each tile holds, in tile order."""
    by_tile: dict[Coord, list[BufferSet]] = {}
    for s in carriage.buffer_sets:
        tile = shared_at[s.fifo] if s.fifo in carriage.shared else s.tiles[0]
        by_tile.setdefault(tile, []).append(s)
    out = []
    for tile in sorted(by_tile):
        stack = STACK_BYTES if tile in core_tiles else 0
        out.append(TileMemory(tile, device.memory_bytes(tile), device.memory_banks(tile), stack, tuple(by_tile[tile])))
    return out


# -- step 2: banks (chosen in bank_fit.py or bank_ilp.py) ---------------------------------


def bank_pairs(mem: TileMemory, items: list[Item], weights: Mapping[tuple[str, str], float]) -> tuple:
    """(buffer, buffer, weight) of every pair of ``items`` that costs something in one bank.

    ``weights`` are already scaled (``scale_weights``); halves of one set add ``SAME_SET``.
    """
    out = []
    for i, x in enumerate(items):
        for y in items[i + 1 :]:
            a, b = min(x.name, y.name), max(x.name, y.name)
            w = weights.get((a, b), 0.0) + (SAME_SET if x.set_id == y.set_id else 0.0)
            if w > 0:
                out.append((a, b, w))
    return tuple(sorted(out))


def scale_weights(weights: Mapping[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """Contention weights scaled so the heaviest is ``PAIR_SCALE`` (rounded: stable solver input)."""
    top = max(weights.values(), default=0.0)
    if top <= 0:
        return {}
    return {k: round(PAIR_SCALE * w / top, 3) for k, w in weights.items() if w > 0}


def scale_phases(phases: Mapping[Phase, int]) -> dict[Phase, float]:
    """Call counts scaled so the costliest phase (all its buffers in one bank) weighs ``PHASE_SCALE``."""
    top = max((n * p.worst() for p, n in phases.items()), default=0.0)
    if top <= 0:
        return {}
    return {p: round(PHASE_SCALE * n / top, 6) for p, n in phases.items()}


def tile_phases(items: list[Item], phases: Mapping[Phase, float]) -> tuple[tuple[float, Phase], ...]:
    """The phases restricted to ``items`` (other buffers live elsewhere), merged, costly ones only."""
    mine = {it.name for it in items}
    merged: dict[Phase, float] = {}
    for p, w in phases.items():
        q = Phase(p.floor, tuple((n, d) for n, d in p.demand if n in mine))
        if len(q.demand) > 1 and q.worst() > 0:
            merged[q] = merged.get(q, 0.0) + w
    return tuple(sorted(((w, q) for q, w in merged.items()), key=lambda wq: (wq[1].demand, wq[1].floor, wq[0])))


# -- step 3: offsets ----------------------------------------------------------------------


def _split(
    mem: TileMemory, weights: Mapping[tuple[str, str], float], phases: Mapping[Phase, float]
) -> tuple[dict[str, BufferPlacement], BankProblem, int]:
    """Lay the buffers larger than a bank from the top of memory; the rest form a bank problem."""
    if mem.need > mem.capacity:
        raise PlanError(memory_message(mem))
    bank = mem.bank_bytes
    items = mem.items()
    big = [it for it in items if it.size > bank]
    out: dict[str, BufferPlacement] = {}
    top = mem.capacity
    for it in sorted(big, key=lambda it: (-it.size, it.name)):
        top = (top - it.size) // ALIGN * ALIGN
        out[it.name] = BufferPlacement(mem.tile, top // bank, top, it.size, it.fifo, it.index)
    floor = [b * bank + (mem.stack if b == 0 else 0) for b in range(mem.banks)]
    free = tuple(max(0, min((b + 1) * bank, top) - floor[b]) for b in range(mem.banks))
    small = sorted((it for it in items if it.size <= bank), key=lambda it: (-it.size, it.set_id, it.index))
    return out, BankProblem(mem, tuple(small), free, bank_pairs(mem, small, weights), tile_phases(small, phases)), top


def _layout(bp: BankProblem, banks: dict[str, int], out: dict[str, BufferPlacement], top: int) -> None:
    """Stack each bank's buffers from its bottom; spill the ones without a bank.

    When some buffers have no bank, every odd bank is stacked from its top down instead, so the free
    space at the top of bank 2i and at the bottom of bank 2i + 1 is one gap a spilled buffer can span
    (bottom-up everywhere leaves only gaps of one bank's remainder each).
    """
    mem = bp.mem
    unplaced = [it for it in bp.items if it.name not in banks]
    floor = [b * mem.bank_bytes + (mem.stack if b == 0 else 0) for b in range(mem.banks)]
    ceiling = [min((b + 1) * mem.bank_bytes, top) for b in range(mem.banks)]
    down = {b for b in range(1, mem.banks, 2) if unplaced and _fits_down(bp, banks, b, floor[b], ceiling[b])}
    for it in bp.items:
        if it.name in banks:
            b = banks[it.name]
            if b in down:
                ceiling[b] = (ceiling[b] - it.size) // ALIGN * ALIGN
                at = ceiling[b]
            else:
                at = floor[b]
                floor[b] += it.size
            out[it.name] = BufferPlacement(mem.tile, b, at, it.size, it.fifo, it.index)
    if unplaced:
        _spill(mem, unplaced, out, top)


def _fits_down(bp: BankProblem, banks: dict[str, int], b: int, floor: int, ceiling: int) -> bool:
    """Whether bank ``b``'s buffers, stacked from ``ceiling`` down at aligned offsets, stay above ``floor``."""
    for it in bp.items:
        if banks.get(it.name) == b:
            ceiling = (ceiling - it.size) // ALIGN * ALIGN
    return ceiling >= floor


def _spill(mem: TileMemory, items: list[Item], out: dict[str, BufferPlacement], top: int) -> None:
    """Place buffers that fit no single bank into any free gap (spanning banks); when the banks' layout leaves
    no gap large enough, the tile's buffers are laid end to end above the stack instead (largest first),
    their banks whatever that gives: a plan that fits before one that avoids shared banks."""
    taken = sorted([(0, mem.stack)] + [(b.offset, b.end) for b in out.values() if b.tile == mem.tile])
    for it in items:
        at = _gap(taken, it.size, top)
        if at is None:
            _end_to_end(mem, out, it)
            return
        out[it.name] = BufferPlacement(mem.tile, at // mem.bank_bytes, at, it.size, it.fifo, it.index)
        taken = sorted([*taken, (at, at + it.size)])


def _end_to_end(mem: TileMemory, out: dict[str, BufferPlacement], stuck: Item) -> None:
    """Every buffer of ``mem``'s tile laid end to end from the top of its stack, largest first.

    Raises:
        PlanError: they do not fit even so (``stuck``, the buffer that found no gap, is named).
    """
    at = mem.stack
    for it in sorted(mem.items(), key=lambda it: (-it.size, it.set_id, it.index)):
        at = align(at)
        if at + it.size > mem.capacity:
            raise PlanError(
                f"tile {fmt_tile(mem.tile)}: the buffers need {mem.need} B of its {mem.capacity} B but do not fit "
                f"contiguously (buffer {stuck.name} of {stuck.size} B finds no gap); reduce fifo depths or element "
                f"sizes"
            )
        out[it.name] = BufferPlacement(mem.tile, at // mem.bank_bytes, at, it.size, it.fifo, it.index)
        at += it.size


def _gap(taken: list[tuple[int, int]], size: int, top: int) -> int | None:
    at = 0
    for lo, hi in taken:
        if lo - at >= size:
            return at
        at = max(at, align(hi))
    return at if top - at >= size else None


def memory_message(mem: TileMemory) -> str:
    """The PlanError text for a tile whose buffers exceed its data memory."""
    parts = [s.label for s in mem.sets]
    if mem.stack:
        parts.append(f"core stack ({mem.stack} B)")
    return (
        f"tile {fmt_tile(mem.tile)} needs {mem.need} B of data memory, has {mem.capacity} B: "
        f"buffers {', '.join(parts)}"
    )


def place_buffers(
    device: Device,
    carriage: Carriage,
    core_tiles: set[Coord],
    choose: BankChooser | None = None,
    shared_at: dict[str, Coord] | None = None,
    weights: Mapping[tuple[str, str], float] | None = None,
    phases: Mapping[Phase, int] | None = None,
) -> tuple[dict[str, BufferPlacement], dict[str, Coord]]:
    """Place every buffer of ``carriage``.

    Args:
        device: the device.
        carriage: the buffer sets to place.
        core_tiles: tiles that run a core (their stack is reserved).
        choose: the bank chooser (``bank_fit.first_fit_banks`` when None, or the ILP).
        shared_at: the memory of each shared fifo; chosen here when None.
        weights: bank-contention weight of buffer pairs (``bank_weights.contention``);
            None: only the halves of each set are kept apart.
        phases: call counts of each phase (``bank_weights.contention``); None: no call's
            cycles are weighed.

    Returns:
        (buffer name -> placement, shared fifo -> memory).

    Raises:
        PlanError: a tile's buffers exceed its memory (naming the tile and the buffers).
    """
    if shared_at is None:
        shared_at = choose_shared(device, carriage, core_tiles)
    scaled = scale_weights(weights or {})
    scaled_phases = scale_phases(phases or {})
    out: dict[str, BufferPlacement] = {}
    todo = []
    for mem in tile_memories(device, carriage, shared_at, core_tiles):
        placed, bp, top = _split(mem, scaled, scaled_phases)
        out.update(placed)
        todo.append((bp, top))
    if choose is None:
        from tilelang.plan.bank_fit import first_fit_banks

        choose = first_fit_banks
    banks = choose([bp for bp, _ in todo])
    for bp, top in todo:
        _layout(bp, banks, out, top)
    return dict(sorted(out.items())), shared_at


__all__ = [
    "ALIGN",
    "BankChooser",
    "BankProblem",
    "Item",
    "TileMemory",
    "bank_pairs",
    "memory_message",
    "place_buffers",
    "scale_phases",
    "scale_weights",
    "tile_phases",
]
