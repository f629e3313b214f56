"""Dealing a tensor out to a grid of cores, and gathering results back.

A tensor is cut into equal contiguous chunks (one fifo element each, in
flat row-major order); chunk ``b * cores + i`` goes to core ``i`` in round
``b``. Cores are numbered column by column, so a column's cores, and any run
of them, hold one contiguous run of each round. How the chunks travel is
chosen by the device:

- staged (devices with memory tiles, as IRON's designs do): a group of a
  column's cores is served by one host move filling a memtile fifo whose
  element holds the group's chunks side by side, and a split (scatter) or
  join (gather) in that memtile hands each core its part. A column is one
  group, or two when the shim's second channel is free (:func:`column_groups`);
- direct (AIE1, no memory tiles; one core per column; or a group of one):
  one host move per core, straight between the shim and the core.

A shim DMA that walks only linear runs (AIE1's, :class:`ShimLimits`) would
need one move, and one buffer descriptor, per round for the round-robin deal;
there a design whose result does not depend on which core gets which chunk
deals ``blocked``: core ``i`` gets chunks ``i * rounds`` to ``(i + 1) * rounds
- 1``, one contiguous run, one move (scatter and gather must agree).

The helpers declare fifos and links at once, but return the host moves
instead of issuing them, so a factory orders its runtime sequence itself
(inputs first, then outputs, as IRON's runtime sequences are written).
:func:`issue` cuts each move to what one shim buffer descriptor can walk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from tilelang.devices import Device
from tilelang.devices.dma_rules import zero_stride_problem
from tilelang.errors import DesignError
from tilelang.frontend.builder import FifoRef, TensorArg
from tilelang.frontend.design import dma, fifo, join, split
from tilelang.ir.pattern import AccessPattern, pattern
from tilelang.ir.types import Tile, TileType
from tilelang.library._common import Grid

#: Bytes of one DMA word: offsets, innermost runs and strides are counted in 32-bit words
#: (AIE_FACTS "DMA address granularity 32 bits").
WORD_BYTES = 4


@dataclass(frozen=True)
class ShimLimits:
    """What one shim BD walks ([F] "wrap / stride fields"; ``Device.bd_field_bits``).

    Attributes:
        dims: dimensions of a BD (``Device.dma_dims``).
        wrap: largest size of a dimension (the innermost counted in words); 0: linear runs only.
        iterations: largest size of one more, outermost dimension (the iteration field), 0 if none.
    """

    dims: int
    wrap: int
    iterations: int

    @staticmethod
    def of(dev: Device) -> ShimLimits:
        shim = next(t for t in dev.tiles("shim") if dev.is_noc_shim(t))
        bits = dev.bd_field_bits(shim)
        wrap = (1 << bits["wrap"]) - 1 if bits.get("wrap") else 0
        iterations = 1 << bits["iteration"] if bits.get("iteration") else 0
        return ShimLimits(dev.dma_dims(shim), wrap, iterations)

    @property
    def linear_only(self) -> bool:
        """Whether a BD walks only linear runs (AIE1's shim DMA: no wrap field)."""
        return self.wrap == 0

    def fits(self, pat: AccessPattern, elem_bytes: int) -> bool:
        """Whether one BD walks ``pat``: a linear run always; else within the dimensions and fields."""
        dims = list(zip(pat.sizes, pat.strides, strict=True))
        if pat.repeat_count > 1:
            dims.insert(0, (pat.repeat_count, 0))
        if len(dims) == 1 and dims[0][1] == 1:
            return True
        if self.linear_only:
            return False
        if dims[-1][1] != 1:
            dims.append((1, 1))  # a BD's innermost dimension is contiguous: one element per step
        sizes = [n for n, _ in dims[:-1]] + [dims[-1][0] * elem_bytes / WORD_BYTES]
        if zero_stride_problem(tuple(n for n, _ in dims), tuple(s for _, s in dims)):
            return False
        if len(dims) > 1 and dims[0][1] == 0:
            # a repeat always takes the iteration field (the runtime sequence's repeat slot), even when the
            # dimensions would fit the wrap fields
            return (0 < sizes[0] <= self.iterations and len(dims) - 1 <= self.dims
                    and all(n <= self.wrap for n in sizes[1:]))
        if len(dims) <= self.dims:
            return all(n <= self.wrap for n in sizes)
        return len(dims) == self.dims + 1 and sizes[0] <= self.iterations and all(n <= self.wrap for n in sizes[1:])


@dataclass(frozen=True)
class Move:
    """A host move to issue later: ``tensor -> fifo`` (``to_device``) or ``fifo -> tensor``."""

    tensor: TensorArg
    fifo: FifoRef
    pattern: AccessPattern
    to_device: bool
    name: str
    plio: int = 0  # 0: a NoC shim DMA move; else a PLIO stream of this many bits (docs/plio.md)

    def issue(self, limits: ShimLimits) -> None:
        """Record the move in the runtime sequence (call inside the design body).

        A pattern one shim BD cannot walk (too many dimensions, a dimension
        beyond the wrap field, or any non-linear walk on AIE1's 1-D shim DMA)
        becomes one move per step of its outermost dimensions, in walk order.

        Raises:
            DesignError: when a part would not be a whole number of fifo elements.
        """
        elem = self.fifo.elem
        parts = _fit(self.pattern.canonical(), limits, elem.dtype.bytes, elem.numel)
        if any(p.numel % elem.numel for p in parts):
            raise DesignError(
                f"{self.name}: moving {elem} elements of tensor {self.tensor.name!r} walks {self.pattern}, which "
                f"a shim DMA of this device ({limits.dims}-d, wrap {limits.wrap}) cannot do in one move, and one "
                f"element is not a contiguous run of the tensor; choose tiles that are whole rows of it"
            )
        for k, pat in enumerate(parts):
            name = self.name if len(parts) == 1 else f"{self.name}_{k}"
            plio = self.plio or False
            if self.to_device:
                dma(self.tensor, self.fifo, pattern=pat, name=name, plio=plio)
            else:
                dma(self.fifo, self.tensor, pattern=pat, name=name, plio=plio)


def _fit(pat: AccessPattern, limits: ShimLimits, elem_bytes: int, elem_numel: int) -> list[AccessPattern]:
    """``pat`` as consecutive patterns one shim BD each can walk, in walk order.

    The outermost dimension is cut into runs of at most the wrap (or iteration)
    limit, each a whole number of fifo elements, when it is the one too big;
    otherwise into single steps, so that what is inside can be cut in turn.
    """
    at_zero = _fit_at_zero(pat.sizes, pat.strides, pat.repeat_count, limits, elem_bytes, elem_numel)
    return [p.shifted(pat.offset) for p in at_zero]


@lru_cache(maxsize=4096)
def _fit_at_zero(sizes: tuple[int, ...], strides: tuple[int, ...], repeat_count: int, limits: ShimLimits,
                 elem_bytes: int, elem_numel: int) -> tuple[AccessPattern, ...]:
    """:func:`_fit` of the walk starting at element 0. Where a walk starts changes no cut, only the
    offsets, and a factory cuts many moves of one shape at different offsets."""
    pat = AccessPattern(0, sizes, strides, repeat_count).canonical()
    if limits.fits(pat, elem_bytes) or (pat.rank == 1 and pat.repeat_count == 1):
        return (pat,)
    if pat.repeat_count > 1:
        once = replace(pat, repeat_count=1)
        if limits.iterations and limits.fits(once, elem_bytes):
            # the repeats in runs of at most the iteration field's, each run one BD
            runs = [min(limits.iterations, pat.repeat_count - i) for i in range(0, pat.repeat_count, limits.iterations)]
            return tuple(replace(pat, repeat_count=r).canonical() for r in runs)
        return tuple(p for _ in range(pat.repeat_count) for p in _fit(once, limits, elem_bytes, elem_numel))
    n, stride = pat.sizes[0], pat.strides[0]
    inner = math.prod(pat.sizes[1:])
    room = limits.wrap if pat.rank <= limits.dims or not limits.iterations else limits.iterations
    run = next((c for c in range(min(n - 1, room), 1, -1) if n % c == 0 and (c * inner) % elem_numel == 0), 1)
    parts = [AccessPattern(i * stride, (run, *pat.sizes[1:]), (stride, *pat.strides[1:])).canonical()
             for i in range(0, n, run)]
    return tuple(p for part in parts for p in _fit(part, limits, elem_bytes, elem_numel))


def issue(moves: Sequence[Move], dev: Device) -> None:
    """Issue moves in order, each cut to what ``dev``'s shim DMA walks."""
    limits = ShimLimits.of(dev)
    for m in moves:
        m.issue(limits)


def _stacked(elem: TileType, n: int) -> TileType:
    """``n`` elements stacked along the first axis (a memtile buffer holding a column's chunks)."""
    return Tile[(n * elem.shape[0], *elem.shape[1:]), elem.dtype]


def _walk(offset: int, rounds: int, run: int, stride: int) -> AccessPattern:
    """``rounds`` runs of ``run`` contiguous elements, ``stride`` apart."""
    if rounds == 1:
        return pattern(offset, (run,), (1,))
    return pattern(offset, (rounds, run), (stride, 1))


def column_groups(dev: Device, grid: Grid, n_in: int, n_out: int) -> tuple[int, int]:
    """Memtile groups per core column for ``n_in`` scattered and ``n_out`` gathered tensors (0: direct).

    A column's shim has two channels each way (AIE_FACTS "DMA channels"), so a
    tensor with the other channel free is dealt as two groups, each its own
    host move and memtile split (join): twice the bandwidth into (out of) the
    column. The column's memtile must still have the channels: ``n_in`` S2MM per
    input group plus one per core for each output, and the mirror for MM2S.
    A group of one core is fed straight from the shim.
    """
    if not dev.tiles("mem") or grid.rows == 1:
        return 0, 0
    shim = next(t for t in dev.tiles("shim") if dev.is_noc_shim(t))
    mm2s, s2mm = dev.dma_channels(dev.tiles("mem")[0], "mm2s"), dev.dma_channels(dev.tiles("mem")[0], "s2mm")

    def most(channels: int, n: int) -> int:
        return max(1, min(grid.rows, channels // max(n, 1)))

    g_in, g_out = most(dev.dma_channels(shim, "mm2s"), n_in), most(dev.dma_channels(shim, "s2mm"), n_out)
    while grid.rows % g_in or n_in * g_in + n_out * grid.rows > s2mm:
        g_in -= 1
    while grid.rows % g_out or n_in * grid.rows + n_out * g_out > mm2s:
        g_out -= 1
    return max(g_in, 1), max(g_out, 1)


def scatter(tensor: TensorArg, elem: TileType, grid: Grid, rounds: int, name: str, groups: int,
            depth: int = 2, blocked: bool = False) -> tuple[list[FifoRef], list[Move]]:
    """Fifos carrying ``tensor``'s chunks to every core, and the host moves that fill them.

    Args:
        tensor: the design tensor (its flat elements are cut into chunks of ``elem.numel``).
        elem: the fifo element one core receives per chunk.
        grid: the cores.
        rounds: chunks each core receives (the tensor holds ``rounds * grid.cores`` chunks).
        name: prefix of the fifo, link and move names.
        groups: memtile groups per column (see :func:`column_groups`); 0 feeds every core from the shim.
        depth: buffers per fifo.
        blocked: with ``groups`` 0, deal each core one contiguous run of chunks (see the module docstring).

    Returns:
        (one fifo per core in core order, the host moves).
    """
    return _deal(tensor, elem, grid, rounds, name, groups, depth, True, blocked)


def gather(tensor: TensorArg, elem: TileType, grid: Grid, rounds: int, name: str, groups: int,
           depth: int = 2, blocked: bool = False) -> tuple[list[FifoRef], list[Move]]:
    """Fifos carrying every core's chunks back into ``tensor``, and the host moves that drain them.

    The mirror of :func:`scatter`: core ``i``'s ``b``-th element lands in chunk
    ``b * cores + i`` (``i * rounds + b`` when ``blocked``); a join per memtile group assembles the group's
    chunks first.

    Returns:
        (one fifo per core in core order, the host moves).
    """
    return _deal(tensor, elem, grid, rounds, name, groups, depth, False, blocked)


def _deal(tensor: TensorArg, elem: TileType, grid: Grid, rounds: int, name: str, groups: int, depth: int,
          to_device: bool, blocked: bool) -> tuple[list[FifoRef], list[Move]]:
    if blocked and groups:
        raise DesignError(f"{name}: a blocked deal feeds every core from the shim (groups 0), not {groups} groups")
    chunk, cores = elem.numel, grid.cores
    size = grid.rows // groups if groups else 1
    verb = "fill" if to_device else "drain"
    per_core: list[FifoRef] = []
    moves: list[Move] = []
    for first in range(0, cores, size):  # a group: cores first .. first + size - 1, within one column
        q, r0 = divmod(first, grid.rows)
        if blocked:
            walk = _walk(first * rounds * chunk, 1, rounds * chunk, 0)
        else:
            walk = _walk(first * chunk, rounds, size * chunk, cores * chunk)
        if size == 1:
            f = fifo(elem, depth=depth, name=f"{name}_{first}")
            per_core.append(f)
            moves.append(Move(tensor, f, walk, to_device, f"{verb}_{name}_{first}"))
            continue
        tag = f"{q}" if groups == 1 else f"{q}_{r0 // size}"
        whole = fifo(_stacked(elem, size), depth=depth, name=f"{name}_l2_{tag}")
        parts = [fifo(elem, depth=depth, name=f"{name}_{first + r}") for r in range(size)]
        offsets = [r * chunk for r in range(size)]
        if to_device:
            split(whole, parts, offsets=offsets, name=f"split_{name}_{tag}")
        else:
            join(parts, whole, offsets=offsets, name=f"join_{name}_{tag}")
        per_core += parts
        moves.append(Move(tensor, whole, walk, to_device, f"{verb}_{name}_{tag}"))
    return per_core, moves


__all__ = ["Move", "ShimLimits", "column_groups", "gather", "issue", "scatter"]
