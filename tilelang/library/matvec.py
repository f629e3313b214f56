"""``tl.library.matvec``: matrix-vector multiplication ``C = A @ B`` on a grid of cores.

mlir-aie's ``matrix_vector`` example: the rows of A are dealt to the cores in
``m``-row blocks (block ``b * cores + i`` to core ``i``), each core walks its
block ``k`` columns at a time, and B is broadcast to every core (one shim
channel, one multicast stream). On devices with memory tiles each core
column's A blocks are staged together in its memtile and split there, and its
C blocks joined there (one shim channel per column each way); on AIE1 every
core has its own shim moves. The kernel is a ``(m, k) @ (k, 1)`` matmul
accumulating in the output dtype, as IRON's ``matvec`` kernel does.
"""

from __future__ import annotations

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.builder import FifoRef, TensorArg
from tilelang.frontend.design import core, fifo, split
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import kernel
from tilelang.frontend.kernel import matmul as tile_matmul
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, accumulator, i16
from tilelang.ir.pattern import pattern
from tilelang.ir.types import Tensor, Tile
from tilelang.library._common import (
    Grid,
    build_design,
    check_args,
    choose_grid,
    divide,
    has_memtiles,
    memtile_channels,
    resolve_device,
)
from tilelang.library._movement import Move, ShimLimits, gather, issue


def _grid(dev: Device, cores: int | tuple[int, int] | None, M: int, K: int, tiling: dict | None) -> Grid:  # noqa: N803
    """A column's memtile splits A to ``rows`` cores and joins their C (S2MM: 1 + rows; MM2S: rows + 1);
    without memtiles (or with one core per column) each core has its own A and C shim channels. B takes one
    more MM2S.

    ``cores=None`` takes the grid with the most cores (then the most rows) whose host moves have a shim DMA
    channel each within the columns and NoC shims of :func:`~tilelang.library._common.shim_reach`, and over
    which M splits into whole row blocks (a multiple of cores x m).
    """
    staged = has_memtiles(dev)

    def moves(g: Grid) -> tuple[int, int, str]:
        per = g.cols if staged and g.rows > 1 else g.cores
        return (per + 1, per, f"a {g.rows} x {g.cols} core grid fills A and drains C once per "
                f"{'column' if staged and g.rows > 1 else 'core'}, and B once")

    def splits(g: Grid) -> str | None:
        try:
            _tiles(M, K, g, tiling)
        except DesignError as e:
            return str(e)
        return None

    if staged:
        limit = min(memtile_channels(dev, "mm2s") - 1, memtile_channels(dev, "s2mm") - 1)
        return choose_grid(dev, cores, "matvec", max_rows=limit, moves=moves, splits=splits)
    return choose_grid(dev, cores, "matvec", moves=moves, splits=splits)


def _tiles(M: int, K: int, grid: Grid, tiling: dict | None) -> tuple[int, int]:
    t = {"m": 32, "k": 32} if tiling is None else tiling
    if not isinstance(t, dict) or set(t) != {"m", "k"} or not all(isinstance(v, int) and v > 0 for v in t.values()):
        raise DesignError(f'matvec: tiling must be {{"m": .., "k": ..}} with positive ints, got {tiling!r}')
    divide(M, grid.cores * t["m"], f"matvec: M must be a multiple of cores x m ({grid.cores} x {t['m']}); M")
    divide(K, t["k"], "matvec: K must be a multiple of k; K")
    return t["m"], t["k"]


def matvec(M: int, K: int, in_dtype: DType = i16, out_dtype: DType | None = None, device: str | Device = "npu1",
           cores: int | tuple[int, int] | None = 1, tiling: dict | None = None) -> Design:
    """A design computing C (M,) = A (M, K) @ B (K,).

    Args:
        M, K: sizes.
        in_dtype: dtype of A and B (i16 as in IRON's example).
        out_dtype: dtype of C, the accumulator (default: i32 for integers, f32 for floats).
        device: device name or model.
        cores: None (the grid with the most cores, then rows, the shims feed and M splits over: see
            :func:`_grid`), a count, or (rows, cols).
        tiling: ``{"m": .., "k": ..}``: rows of A per block and columns per step (default 32 x 32).

    Returns:
        The traced design.

    Raises:
        DesignError: sizes the tiles and grid do not divide, or a grid the DMA channels cannot feed.
    """
    check_args("matvec", {"M": M, "K": K}, {"in_dtype": in_dtype, "out_dtype": out_dtype})
    dev = resolve_device(device)
    acc = out_dtype or accumulator(in_dtype)
    grid = _grid(dev, cores, M, K, tiling)
    m, k = _tiles(M, K, grid, tiling)
    blocks, steps = M // (grid.cores * m), K // k
    via = has_memtiles(dev) and grid.rows > 1
    # on a linear-only shim DMA (AIE1) whole-row tiles let each core take one contiguous run of row blocks
    blocked = not via and k == K and ShimLimits.of(dev).linear_only

    @kernel
    def zero(c: Tile[(m, 1), acc]):
        c[...] = 0 if acc.is_int else 0.0

    @kernel
    def matvec_acc(a: Tile[(m, k), in_dtype], b: Tile[(k, 1), in_dtype], c: Tile[(m, 1), acc]):
        c[...] += tile_matmul(a, b, acc=acc)

    def body(A: TensorArg, B: TensorArg, C: TensorArg) -> None:  # noqa: N803 - the tensors' API names
        a_in, fills = _rows_of_a(A, grid, M, K, m, k, in_dtype, via, blocked)
        b_in = fifo(Tile[(k, 1), in_dtype], depth=2, name="b")
        c_out, drains = gather(C, Tile[(m, 1), acc], grid, blocks, "c", 1 if via else 0, blocked=blocked)
        for i in range(grid.cores):
            _worker(f"core_{i}", a_in[i], b_in, c_out[i], zero, matvec_acc, blocks, steps)
        # B once per block of rows, to every core at once
        fills.append(Move(B, b_in, pattern(0, (K,), (1,)).repeat(blocks), True, "fill_b"))
        issue(fills + drains, dev)

    tensors = {"A": Tensor[(M, K), in_dtype], "B": Tensor[(K,), in_dtype], "C": Tensor[(M,), acc]}
    return build_design(f"matvec_{M}x{K}", dev, tensors, body)


def _rows_of_a(A: TensorArg, grid: Grid, M: int, K: int, m: int, k: int, dt: DType,  # noqa: N803
               via_memtile: bool, blocked: bool) -> tuple[list[FifoRef], list[Move]]:
    """Fifos carrying core ``i`` its ``(m, k)`` tiles of A row blocks ``i, i + cores, ...`` (``blocked``: row
    blocks ``i * blocks`` to ``(i + 1) * blocks - 1``, one contiguous run when ``k == K``), and their fills."""
    cores, blocks, steps = grid.cores, M // (grid.cores * m), K // k
    per_core: list[FifoRef] = []
    moves: list[Move] = []
    if via_memtile:
        R = grid.rows
        for q in range(grid.cols):
            col = fifo(Tile[(R * m, k), dt], depth=2, name=f"a_l2_{q}")
            parts = [fifo(Tile[(m, k), dt], depth=2, name=f"a_{grid.index(r, q)}") for r in range(R)]
            split(col, parts, offsets=[r * m * k for r in range(R)], name=f"split_a_{q}")
            per_core += parts
            walk = pattern(q * R * m * K, (blocks, steps, R * m, k), (cores * m * K, k, K, 1))
            moves.append(Move(A, col, walk, True, f"fill_a_{q}"))
        return per_core, moves
    for i in range(cores):
        f = fifo(Tile[(m, k), dt], depth=2, name=f"a_{i}")
        per_core.append(f)
        walk = (pattern(i * blocks * m * K, (blocks * m * K,), (1,)) if blocked
                else pattern(i * m * K, (blocks, steps, m, k), (cores * m * K, k, K, 1)))
        moves.append(Move(A, f, walk, True, f"fill_a_{i}"))
    return per_core, moves


def _worker(name: str, a_in: FifoRef, b_in: FifoRef, c_out: FifoRef, zero, mv, blocks: int,  # noqa: ANN001
            steps: int) -> None:
    @core(name=name)
    def worker() -> None:
        for _ in tl_range(blocks):
            c = c_out.acquire()
            zero(c)
            for _ in tl_range(steps):
                a, b = a_in.acquire(), b_in.acquire()
                mv(a, b, c)
                a_in.release()
                b_in.release()
            c_out.release()


__all__ = ["matvec"]
