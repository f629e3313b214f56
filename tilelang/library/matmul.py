"""``tl.library.matmul``: single-core and whole-array GEMM designs.

The layout is IRON's ``whole_array`` example (mlir-aie
programming_examples/basic/matrix_multiplication/whole_array): a grid of
``R x Q`` cores; core (r, q) computes one ``m x n`` tile of every
``(R*m) x (Q*n)`` block of C, accumulating over K in ``k``-steps.

- A: one fifo per core row, filled from its own shim, staged in a memtile and
  broadcast along the row (IRON's ``A_L3L2_i`` forwarded to ``A_L2L1_i``).
- B: one fifo per core column, staged and broadcast down the column.
- C: each core's tile joins its column's others in the column's memtile
  (``C_L1L2_*`` joined into ``C_L2L3_col``) on the way back to the host. With
  an even number of rows and two shim S2MM channels per column to spare, the
  column's C leaves as two joins of half the rows each over two shim channels:
  the same bytes, but the last block's drain, which nothing overlaps, takes
  half as long.

On devices without memtiles (AIE1) the same fifos run shim <-> core directly.
``cores=1`` is mlir-aie's ``single_core`` example: the same structure on a
1 x 1 grid.

``layout="streams"`` keeps the host tensors in the order their fifos carry
them: A as each core row's sequence of ``m x k`` tiles (row block by row
block, once per block column of C), B as each core column's ``k x n`` tiles,
C as each C fifo's tiles. Every host fifo then moves one contiguous run, which
AIE1's linear-only shim DMA needs (a row-major ``m x k`` tile is ``m`` runs,
and every run a move and a buffer descriptor of the shim's 16); the host
reorders the data, as a PL data mover would. :func:`pack_streams` and
:func:`unpack_streams` convert from and to row-major. The bytes read from DDR
are the row-major design's: it also reads A's row blocks once per block
column and B's strips once per block row.
"""

from __future__ import annotations

import numpy as np

from tilelang.devices import Device
from tilelang.devices.abi import STACK_BYTES
from tilelang.errors import DesignError, PlanError
from tilelang.frontend.builder import FifoRef, TensorArg
from tilelang.frontend.design import core, dma, fifo, join
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import kernel
from tilelang.frontend.kernel import matmul as tile_matmul
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, bf16, f32
from tilelang.ir.kernel import can_accumulate
from tilelang.ir.pattern import pattern
from tilelang.ir.types import Tensor, Tile
from tilelang.ir.verify_sizes import MAX_TRACED
from tilelang.library._common import (
    Grid,
    build_design,
    check_args,
    choose_grid,
    has_memtiles,
    mac_step,
    resolve_device,
    shim_channels,
)
from tilelang.library._movement import Move, ShimLimits, issue
from tilelang.library.cascade_matmul import cascade_matmul, is_cascade
from tilelang.library.cascade_matmul import pack as cascade_pack
from tilelang.library.cascade_matmul import unpack as cascade_unpack
from tilelang.plan.tiling_model import out_depth


def _grid(dev: Device, cores: int | tuple[int, int] | None, sizes: tuple[int, int, int], tiling: str | dict,
          dtypes: tuple[DType, DType], layout: str) -> tuple[Grid, tuple[int, int, int, int | None]]:
    """Core rows x core columns, and the kernel tile and C depth on them (as :func:`_sizes`).

    With memtiles, at most 4 rows: a column's memtile joins one C tile per row
    and also forwards A and B, on its 6 S2MM channels (AIE_FACTS "DMA
    channels": memtile 6+6). Without, every core drains C through its own shim
    S2MM channel, and ``cores=None`` takes at most 16 cores.

    ``cores=None`` takes the grid with the most cores (then the most rows) whose host moves have a shim DMA
    channel each (A one per core row, B one per core column, C one or two per core column (:func:`_c_groups`),
    or one per core without memtiles) within the columns and NoC shims of
    :func:`~tilelang.library._common.shim_reach`, and over which M, N and K split into whole tiles
    (``tiling``'s, or the tiling ILP's for "auto").
    """
    M, K, N = sizes  # noqa: N806
    staged = has_memtiles(dev)
    tiles: dict[Grid, tuple[int, int, int, int | None]] = {}

    def moves(g: Grid) -> tuple[int, int, str]:
        c_moves = g.cols * _c_groups(dev, g, layout) if staged else g.cores
        return (g.rows + g.cols, c_moves, f"a {g.rows} x {g.cols} core grid reads A once per row and B once per "
                f"column, and drains C {c_moves} times (once per {'column' if staged else 'core'}"
                f"{' and half column' if c_moves == 2 * g.cols else ''})")

    def splits(g: Grid) -> str | None:
        if M % g.rows or N % g.cols:
            return f"M={M} and N={N} do not split over {g.rows} rows and {g.cols} columns of cores"
        try:
            m, k, n, depth = tiles[g] = _sizes(M, K, N, *dtypes, dev, g, tiling)
        except DesignError as e:
            return str(e)
        if M % (g.rows * m) or N % (g.cols * n) or K % k:
            return f"tiles m={m}, k={k}, n={n} need M % {g.rows * m} == 0, N % {g.cols * n} == 0 and K % {k} == 0"
        return None

    grid = choose_grid(dev, cores, "matmul", max_rows=4, max_cores=None if staged or cores is not None else 16,
                       moves=moves, splits=splits)
    return grid, tiles[grid] if grid in tiles else _sizes(M, K, N, *dtypes, dev, grid, tiling)


def _c_groups(dev: Device, grid: Grid, layout: str) -> int:
    """C joins per core column: two of half the rows (see the module docstring) with an even number of rows and
    two shim S2MM channels per column; the streams layout keeps one C stream per column."""
    two = layout == "row-major" and grid.rows % 2 == 0 and shim_channels(dev, "s2mm") >= 2 * grid.cols
    return 2 if two else 1


def _sizes(M: int, K: int, N: int, in_dtype: DType, out_dtype: DType, dev: Device, grid: Grid,
           tiling: str | dict) -> tuple[int, int, int, int | None]:
    """The per-core kernel tile (m, k, n) and C's depth: the tiling ILP's choice (with the C depth its
    estimate assumed), or the user's tile (depth None: ``_c_depth`` decides)."""
    if tiling == "auto":
        from tilelang.api import tile_contraction

        try:
            # the design re-reads A and B per core-grid block (one tile at a time through the memtiles)
            choice = tile_contraction("mk,kn->mn", {"m": M, "k": K, "n": N}, (in_dtype, in_dtype, out_dtype), dev,
                                      cores=(grid.rows, grid.cols), blocks="grid")
        except PlanError as e:
            # No tiling exists for these sizes on this grid: the request itself cannot work (docs/library.md).
            raise DesignError(
                f"matmul {M}x{K}x{N} on a {grid.rows}x{grid.cols} core grid: no tiling fits ({e}); choose sizes the "
                f"grid divides into whole tiles, another cores=, or a tiling={{'m': .., 'k': .., 'n': ..}}"
            ) from None
        return choice.tile["m"], choice.tile["k"], choice.tile["n"], choice.out_depth
    if not isinstance(tiling, dict) or set(tiling) != {"m", "k", "n"}:
        raise DesignError(f'matmul: tiling must be "auto" or a dict with keys m, k, n; got {tiling!r}')
    m, k, n = (tiling[x] for x in "mkn")
    if not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in (m, k, n)):
        raise DesignError(f"matmul: tile sizes must be positive ints, got {tiling!r}")
    return m, k, n, None


def _c_depth(dev: Device, m: int, k: int, n: int, in_dtype: DType, out_dtype: DType) -> int:
    """Buffers of each core's C tile: 2 when they fit next to double-buffered A and B, else 1.

    Raises:
        DesignError: when even one C buffer does not fit the core's memory.
    """
    mem = dev.memory_bytes(dev.tiles("compute")[0])
    inputs = 2 * (m * k + k * n) * in_dtype.bytes
    c = m * n * out_dtype.bytes
    # the tiler's rule, so that tiling="auto" builds the depth its estimate assumed
    depth = int(out_depth(mem, inputs, c))
    if depth:
        return depth
    raise DesignError(f"matmul: tiles m={m}, k={k}, n={n} need {inputs + STACK_BYTES + c} B of core memory (A and B double-"
                      f"buffered, one C, {STACK_BYTES} B stack); {dev.name} cores have {mem} B. Use smaller tiles")


def matmul(M: int, K: int, N: int, in_dtype: DType = bf16, out_dtype: DType = f32, device: str | Device = "npu1",
           cores: int | tuple[int, int] | None = None, tiling: str | dict = "auto",
           layout: str = "row-major", cascade: int = 1, plio: bool | int = False) -> Design:
    """A GEMM design ``C = A @ B`` with tensors A (M x K), B (K x N), C (M x N).

    Args:
        M, K, N: problem sizes.
        in_dtype: dtype of A and B.
        out_dtype: dtype of C, the accumulator (f32 or bf16 for bf16 inputs; i32,
            i16 or the input type for integers). C accumulates in place over K.
        device: device name or model.
        cores: None: the grid with the most cores (at most 4 rows; 16 cores on AIE1), then the most rows,
            whose host moves have NoC shim channels and over which the sizes split into whole tiles (the
            whole array on npu1 and npu2; the rule is :func:`_grid`'s), an int (the most rows that divide
            it), or (rows, cols).
        tiling: "auto" (the tiling ILP, ``tl.tile_contraction``) or
            ``{"m": .., "k": .., "n": ..}``, the per-core kernel tile.
        layout: "row-major" (A, B, C as matrices) or "streams" (each host tensor in the
            order its fifos carry it; see the module docstring, :func:`pack_streams` and
            :func:`unpack_streams`). AIE1 needs "streams".
        cascade: cores per output tile. 1 (the default): the layout above. ``L > 1``: each output tile is
            computed by a chain of ``L`` cores joined by cascade streams, each core multiplying one K slice
            and passing its partial sum on (devices without memtiles, ``layout="streams"``; ``cores`` then
            counts chains, the whole design uses ``L`` times as many; see
            :mod:`tilelang.library.cascade_matmul`).
        plio: with ``cascade > 1``, move A, B and C through PL shims' PLIO streams (``True``: the
            device's default width, or a width in bits; docs/plio.md) instead of NoC shims' DMAs, so
            the grid is no longer bound by the NoC shims' channels.

    Returns:
        The traced design. Each core holds A and B double-buffered and its C
        tile double-buffered when memory allows (else single-buffered).

    Raises:
        DesignError: sizes the tiles and core grid do not divide, tiles that
            do not fit a core's memory, or a grid whose host moves the NoC shims' channels cannot carry.
    """
    check_args("matmul", {"M": M, "K": K, "N": N}, {"in_dtype": in_dtype, "out_dtype": out_dtype})
    if not can_accumulate(out_dtype, in_dtype):
        hint = "tl.i32" if not in_dtype.is_float else "tl.f32"
        raise DesignError(f"matmul: out_dtype {out_dtype} cannot accumulate products of {in_dtype} inputs; give "
                          f"out_dtype={hint} (or another {'float' if in_dtype.is_float else 'integer'} type at "
                          f"least as wide as {in_dtype})")
    dev = resolve_device(device)
    if layout not in ("row-major", "streams"):
        raise DesignError(f'matmul: layout must be "row-major" or "streams", got {layout!r}')
    if not isinstance(cascade, int) or isinstance(cascade, bool) or cascade < 1:
        raise DesignError(f"matmul: cascade must be a positive int (cores per output tile), got {cascade!r}")
    if plio is not False and cascade == 1:
        raise DesignError("matmul: plio= feeds the cascade chains (cascade > 1); the whole-array layout moves "
                          "through NoC shims")
    if cascade > 1:
        return cascade_matmul(M, K, N, in_dtype, out_dtype, dev, cores, tiling, layout, cascade, plio)
    grid, (m, k, n, auto_depth) = _grid(dev, cores, (M, K, N), tiling, (in_dtype, out_dtype), layout)
    R, Q = grid.rows, grid.cols
    if M % (R * m) or N % (Q * n) or K % k:
        raise DesignError(
            f"matmul {M}x{K}x{N}: tiles m={m}, k={k}, n={n} on a {R}x{Q} core grid need M % {R * m} == 0, "
            f"N % {Q * n} == 0 and K % {k} == 0"
        )
    if layout == "row-major" and ShimLimits.of(dev).linear_only and not (k == K and n == N):
        raise DesignError(
            f"matmul on {dev.name}: its shim DMA walks linear runs only, so an {m}x{k} tile of a row-major A "
            f"(or a {k}x{n} tile of B) is not one move; use layout=\"streams\" and lay the tensors out with "
            f"tl.library.pack_streams (docs/library.md)"
        )
    c_depth = auto_depth or _c_depth(dev, m, k, n, in_dtype, out_dtype)
    c_groups = _c_groups(dev, grid, layout)
    first, mac = _kernels(m, k, n, in_dtype, out_dtype)
    shape = _Shape(M, K, N, m, k, n, grid)
    staged = has_memtiles(dev)

    def body(A: TensorArg, B: TensorArg, C: TensorArg) -> None:  # noqa: N803 - the tensors' API names
        a_l2, b_l2, c_l1, l3 = _fifos(shape, in_dtype, out_dtype, c_depth, staged, c_groups)
        for r, q in grid.cells():
            _worker(f"core_{r}_{q}", a_l2[r], b_l2[q], c_l1[r][q], first, mac, shape)
        if layout == "streams":
            issue(_stream_moves(shape, A, B, C, *l3, c_l1), dev)
        else:
            issue(_runtime_sequence(shape, A, B, C, *l3, c_l1), dev)

    if layout == "streams":
        tensors = {name: Tensor[shp, dt] for name, (shp, dt) in _stream_shapes(shape, staged, in_dtype, out_dtype).items()}
    else:
        tensors = {"A": Tensor[(M, K), in_dtype], "B": Tensor[(K, N), in_dtype], "C": Tensor[(M, N), out_dtype]}
    return build_design(f"matmul_{M}x{K}x{N}", dev, tensors, body)


def _stream_shapes(s: _Shape, staged: bool, in_dtype: DType, out_dtype: DType) -> dict[str, tuple[tuple, DType]]:
    """Shapes of the host tensors under ``layout="streams"``: one leading index per host fifo."""
    R, Q, bm, bn = s.grid.rows, s.grid.cols, s.blocks_m, s.blocks_n
    c = (Q, bm, bn, R * s.m, s.n) if staged else (R, Q, bm, bn, s.m, s.n)
    return {"A": ((R, bm, bn, s.steps, s.m, s.k), in_dtype), "B": ((Q, bm, bn, s.steps, s.k, s.n), in_dtype),
            "C": (c, out_dtype)}


def _stream_moves(s: _Shape, A: TensorArg, B: TensorArg, C: TensorArg,  # noqa: N803
                  a_host: list, b_host: list, c_host: list | None, c_l1: list) -> list[Move]:
    """One contiguous move per host fifo: A's rows, B's columns, then C's fifos."""
    R, Q = s.grid.rows, s.grid.cols
    a_len = s.blocks_m * s.blocks_n * s.steps * s.m * s.k
    b_len = s.blocks_m * s.blocks_n * s.steps * s.k * s.n
    moves = [Move(A, a_host[r], pattern(r * a_len, (a_len,), (1,)), True, f"fill_a_{r}") for r in range(R)]
    moves += [Move(B, b_host[q], pattern(q * b_len, (b_len,), (1,)), True, f"fill_b_{q}") for q in range(Q)]
    if c_host is not None:
        c_len = s.blocks_m * s.blocks_n * R * s.m * s.n
        moves += [Move(C, c_host[q][0], pattern(q * c_len, (c_len,), (1,)), False, f"drain_c_{q}") for q in range(Q)]
    else:
        c_len = s.blocks_m * s.blocks_n * s.m * s.n
        moves += [Move(C, c_l1[r][q], pattern((r * Q + q) * c_len, (c_len,), (1,)), False, f"drain_c_{r}_{q}")
                  for r in range(R) for q in range(Q)]
    return moves


def _stream_dims(design: Design) -> tuple[int, int, int, int, int, int, int, int, bool]:
    """(R, Q, blocks_m, blocks_n, steps, m, k, n, staged) of a ``layout="streams"`` matmul design.

    Raises:
        DesignError: the design is not one.
    """
    tensors = getattr(design, "tensors", {})
    a, b, c = (tensors[x].shape if x in tensors else () for x in "ABC")
    if len(a) != 6 or len(b) != 6 or len(c) not in (5, 6):
        raise DesignError(f"design {design.name!r} is not a tl.library.matmul design with layout=\"streams\"")
    R, bm, bn, steps, m, k = a
    Q, n = b[0], b[5]
    return R, Q, bm, bn, steps, m, k, n, len(c) == 5


def pack_streams(design: Design, A: np.ndarray, B: np.ndarray,  # noqa: N803
                 C: np.ndarray | None = None) -> dict[str, np.ndarray]:  # noqa: N803
    """Row-major A (M, K) and B (K, N) as the host tensors of a ``layout="streams"`` matmul design.

    Args:
        design: the design.
        A, B: the operands, row-major.
        C: optionally a row-major C (M, N), e.g. the expected result, to lay out as the design's C.

    Returns:
        ``{"A": ..., "B": ...}`` (and ``"C"``) for ``tl.simulate(plan, **pack_streams(design, A, B))``.

    Raises:
        DesignError: the design is not a streams matmul, or A, B or C has the wrong shape.
    """
    if is_cascade(design):
        return cascade_pack({x: design.tensors[x].shape for x in "AB"}, A, B, C)
    R, Q, bm, bn, steps, m, k, n, staged = _stream_dims(design)
    M, K, N = bm * R * m, steps * k, bn * Q * n  # noqa: N806
    A, B = np.asarray(A), np.asarray(B)  # noqa: N806
    if A.shape != (M, K) or B.shape != (K, N):
        raise DesignError(f"pack_streams: {design.name} takes A {(M, K)} and B {(K, N)}, got {A.shape} and {B.shape}")
    # A[(bi R + r) m + i, kk k + j] -> a[r, bi, bj, kk, i, j] for every bj
    a = A.reshape(bm, R, m, steps, k).transpose(1, 0, 3, 2, 4)[:, :, None]
    # B[kk k + i, (bj Q + q) n + j] -> b[q, bi, bj, kk, i, j] for every bi
    b = B.reshape(steps, k, bn, Q, n).transpose(3, 2, 0, 1, 4)[:, None]
    out = {"A": np.ascontiguousarray(np.broadcast_to(a, (R, bm, bn, steps, m, k))),
           "B": np.ascontiguousarray(np.broadcast_to(b, (Q, bm, bn, steps, k, n)))}
    if C is not None:
        C = np.asarray(C)  # noqa: N806
        if C.shape != (M, N):
            raise DesignError(f"pack_streams: {design.name} computes C {(M, N)}, got {C.shape}")
        if staged:  # the inverse of unpack_streams' transposes
            out["C"] = np.ascontiguousarray(C.reshape(bm, R * m, bn, Q, n).transpose(3, 0, 2, 1, 4))
        else:
            out["C"] = np.ascontiguousarray(C.reshape(bm, R, m, bn, Q, n).transpose(1, 4, 0, 3, 2, 5))
    return out


def unpack_streams(design: Design, C: np.ndarray) -> np.ndarray:  # noqa: N803
    """The row-major C (M, N) from the C tensor of a ``layout="streams"`` matmul design.

    Raises:
        DesignError: the design is not a streams matmul, or C has the wrong shape.
    """
    if is_cascade(design):
        want = design.tensors["C"].shape
        if np.asarray(C).shape != tuple(want):
            raise DesignError(f"unpack_streams: {design.name} gives C of shape {tuple(want)}, got {np.asarray(C).shape}")
        return cascade_unpack(tuple(want), C)
    R, Q, bm, bn, _, m, _, n, staged = _stream_dims(design)
    want = (Q, bm, bn, R * m, n) if staged else (R, Q, bm, bn, m, n)
    C = np.asarray(C)  # noqa: N806
    if C.shape != want:
        raise DesignError(f"unpack_streams: {design.name} gives C of shape {want}, got {C.shape}")
    if staged:  # c[q, bi, bj, i, j] = C[bi R m + i, (bj Q + q) n + j]
        out = C.transpose(1, 3, 2, 0, 4)
    else:  # c[r, q, bi, bj, i, j] = C[(bi R + r) m + i, (bj Q + q) n + j]
        out = C.transpose(2, 0, 4, 3, 1, 5)
    return out.reshape(bm * R * m, bn * Q * n)


class _Shape:
    """Problem and tile sizes, and the counts derived from them."""

    def __init__(self, M: int, K: int, N: int, m: int, k: int, n: int, grid: Grid) -> None:  # noqa: N803
        self.M, self.K, self.N, self.m, self.k, self.n, self.grid = M, K, N, m, k, n, grid
        self.blocks_m = M // (grid.rows * m)
        self.blocks_n = N // (grid.cols * n)
        self.steps = K // k


def _kernels(m: int, k: int, n: int, in_dtype: DType, acc: DType) -> tuple:
    """The first k-step's kernel (writes C without reading it) and the accumulating one.

    Writing the first product saves zeroing C (a store-only call per C tile) and the first
    step's read of C; the result is the same as zeroing and accumulating (0 + x rounds to x).
    """

    @kernel
    def matmul_first(a: Tile[(m, k), in_dtype], b: Tile[(k, n), in_dtype], c: Tile[(m, n), acc]):
        c[...] = tile_matmul(a, b, acc=acc)

    @kernel
    def matmul_acc(a: Tile[(m, k), in_dtype], b: Tile[(k, n), in_dtype], c: Tile[(m, n), acc]):
        c[...] += tile_matmul(a, b, acc=acc)

    return matmul_first, matmul_acc


def _fifos(s: _Shape, in_dtype: DType, acc: DType, c_depth: int, staged: bool, c_groups: int):
    """The fifos and links: (A per row, B per column, C per core, host-side fifos: C's per column and group
    of ``R / c_groups`` consecutive rows)."""
    R, Q = s.grid.rows, s.grid.cols
    c_l1 = [[fifo(Tile[(s.m, s.n), acc], depth=c_depth, name=f"c_l1_{r}_{q}") for q in range(Q)] for r in range(R)]
    if not staged:
        a = [fifo(Tile[(s.m, s.k), in_dtype], depth=2, name=f"a_{r}") for r in range(R)]
        b = [fifo(Tile[(s.k, s.n), in_dtype], depth=2, name=f"b_{q}") for q in range(Q)]
        return a, b, c_l1, (a, b, None)
    a_l3 = [fifo(Tile[(s.m, s.k), in_dtype], depth=2, name=f"a_l3_{r}") for r in range(R)]
    a_l2 = [fifo(Tile[(s.m, s.k), in_dtype], depth=2, name=f"a_l2_{r}") for r in range(R)]
    b_l3 = [fifo(Tile[(s.k, s.n), in_dtype], depth=2, name=f"b_l3_{q}") for q in range(Q)]
    b_l2 = [fifo(Tile[(s.k, s.n), in_dtype], depth=2, name=f"b_l2_{q}") for q in range(Q)]
    rows = R // c_groups
    tag = [f"_{h}" if c_groups > 1 else "" for h in range(c_groups)]
    c_l2 = [[fifo(Tile[(rows * s.m, s.n), acc], depth=2, name=f"c_l2_{q}{tag[h]}") for h in range(c_groups)]
            for q in range(Q)]
    for r in range(R):
        dma(a_l3[r], a_l2[r], name=f"forward_a_{r}")
    for q in range(Q):
        dma(b_l3[q], b_l2[q], name=f"forward_b_{q}")
        for h in range(c_groups):
            if rows == 1:
                dma(c_l1[h][q], c_l2[q][h], name=f"forward_c_{q}{tag[h]}")
            else:
                join([c_l1[h * rows + r][q] for r in range(rows)], c_l2[q][h],
                     offsets=[r * s.m * s.n for r in range(rows)], name=f"join_c_{q}{tag[h]}")
    return a_l2, b_l2, c_l1, (a_l3, b_l3, c_l2)


def _worker(name: str, a_in: FifoRef, b_in: FifoRef, c_out: FifoRef, first, mac, s: _Shape) -> None:  # noqa: ANN001
    def step(kernel, acc_tile) -> None:  # noqa: ANN001
        mac_step(kernel, a_in, b_in, acc_tile)

    @core(name=name)
    def worker() -> None:
        for _ in tl_range(s.blocks_m * s.blocks_n):
            acc_tile = c_out.acquire()
            step(first, acc_tile)
            if s.steps > 1:
                for _ in tl_range(s.steps - 1):
                    step(mac, acc_tile)
            c_out.release()


def _runtime_sequence(s: _Shape, A: TensorArg, B: TensorArg, C: TensorArg,  # noqa: N803
                      a_host: list, b_host: list, c_host: list | None, c_l1: list) -> list[Move]:
    """One block row of C at a time: its A rows, all of B, then its C tiles (IRON's order)."""
    R, Q = s.grid.rows, s.grid.cols
    m, k, n, K, N = s.m, s.k, s.n, s.K, s.N
    count = s.blocks_m * (R + 2 * Q)  # A rows, B strips and C tiles per block row (at most)
    if count > MAX_TRACED:
        raise DesignError(f"matmul: M={s.blocks_m * R * m} in block rows of {R * m} needs about {count} host moves, "
                          f"more than {MAX_TRACED} (tilelang.ir.verify_sizes.MAX_TRACED); use larger tiles or a "
                          f"smaller M")
    moves = []
    for bi in range(s.blocks_m):
        for r in range(R):
            # row (bi, r) of A tiles, walked K/k tiles at a time, once per block column of C
            row = (bi * R + r) * m
            moves.append(Move(A, a_host[r], pattern(row * K, (s.blocks_n, s.steps, m, k), (0, k, K, 1)), True,
                              f"fill_a_{bi}_{r}"))
        for q in range(Q):
            # column q's n-wide strips of B, every Q-th one: K/k tiles down each
            moves.append(Move(B, b_host[q], pattern(q * n, (s.blocks_n, s.steps, k, n), (Q * n, k * N, N, 1)), True,
                              f"fill_b_{bi}_{q}"))
        for q in range(Q):
            base = bi * R * m * N + q * n
            if c_host is not None:
                groups = c_host[q]
                rows = R // len(groups)
                for h, fifo_h in enumerate(groups):
                    tag = f"_{h}" if len(groups) > 1 else ""
                    moves.append(Move(C, fifo_h, pattern(base + h * rows * m * N, (s.blocks_n, rows * m, n),
                                                         (Q * n, N, 1)), False, f"drain_c_{bi}_{q}{tag}"))
                continue
            for r in range(R):
                moves.append(Move(C, c_l1[r][q], pattern(base + r * m * N, (s.blocks_n, m, n), (Q * n, N, 1)), False,
                                  f"drain_c_{bi}_{r}_{q}"))
    return moves


__all__ = ["matmul", "pack_streams", "unpack_streams"]
