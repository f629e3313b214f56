"""``tl.library.matmul(..., cascade=L)``: a GEMM whose output tiles are each computed by a chain of
``L`` cores joined by cascade streams (docs/library.md "Cascade chains").

The layout of the large VC1902 designs (MaxEVA, CHARM): a grid of ``R x Q`` chains; chain ``(r, q)``
computes one ``m x n`` tile of every ``(R m) x (Q n)`` block of C. K is cut into ``L`` slices; core
``l`` of the chain multiplies its slice (``K / L / k`` k-steps, accumulated in a local buffer), adds
the partial sum it takes from core ``l - 1`` over the cascade (none for ``l = 0``) and sends the sum
on to core ``l + 1``; the last core writes the finished tile into C.

- A: one fifo per (core row ``r``, slice ``l``), from its own shim channel, broadcast to the ``Q``
  cores at position ``l`` of row ``r``'s chains.
- B: one fifo per (core column ``q``, slice ``l``), broadcast to the ``R`` cores at position ``l``
  of column ``q``'s chains.
- C: one fifo per chain, from its last core to a shim.

Devices without memtiles only (AIE1, xcvc1902): the fifos run shim <-> core, so the shims' DMA
channels bound the grid: ``(R + Q) L`` MM2S and ``R Q`` S2MM channels. Host tensors are in stream
layout (AIE1's shim DMA walks linear runs): A ``(R, L, M/(R m), N/(Q n), K/(L k), m, k)``, B ``(Q, L,
M/(R m), N/(Q n), K/(L k), k, n)``, C ``(R, Q, M/(R m), N/(Q n), m, n)``; ``pack_streams`` and
``unpack_streams`` convert.

A cascade moves whole words (384 bits on AIE1): a partial-sum tile that is not whole words travels
in a staging tile padded with zero rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tilelang.devices import Device
from tilelang.devices.abi import STACK_BYTES
from tilelang.devices.cascade_rules import cascade_spec
from tilelang.errors import DesignError
from tilelang.frontend.builder import FifoRef, TensorArg
from tilelang.frontend.design import buffer, cascade, core, fifo
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import kernel
from tilelang.frontend.kernel import matmul as tile_matmul
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType
from tilelang.ir.pattern import pattern
from tilelang.ir.types import Tensor, Tile
from tilelang.library._common import Grid, build_design, compute_shape, has_memtiles, mac_step, shim_channels
from tilelang.library._movement import Move, issue

# tile sizes the automatic choice tries (see _auto_tile)
_TILE_MN = (64, 48, 32, 16)
_TILE_K = (64, 32, 16, 8)


def cascade_matmul(M: int, K: int, N: int, in_dtype: DType, out_dtype: DType, dev: Device,  # noqa: N803
                   cores: int | tuple[int, int] | None, tiling: str | dict, layout: str, chain: int,
                   plio: bool | int = False) -> Design:
    """The design (arguments as :func:`tilelang.library.matmul`, ``chain`` = its ``cascade``; ``plio``: feed
    A and B and drain C through PL shims' PLIO streams instead of NoC shims' DMAs, as MaxEVA and CHARM do).

    Raises:
        DesignError: a device with memtiles, a layout other than "streams", a grid the shims' channels
            (or PLIO streams) cannot feed, PLIO on a device without it, or sizes and tiles that do not divide
            or fit.
    """
    if has_memtiles(dev):
        raise DesignError(f"matmul(cascade={chain}) on {dev.name}: the cascade chains are fed shim -> core, the "
                          f"layout of devices without memtiles (xcvc1902); use cascade=1 on {dev.name}")
    if layout != "streams":
        raise DesignError(f"matmul(cascade={chain}) on {dev.name}: its shim DMA walks linear runs only; use "
                          f"layout=\"streams\" and tl.library.pack_streams (docs/library.md)")
    bits = dev.plio_width(None if plio is True else plio) if plio else 0
    if K % chain:
        raise DesignError(f"matmul {M}x{K}x{N}: cascade={chain} needs K % {chain} == 0 (each chain core takes "
                          f"K / {chain})")

    def splits(g: Grid) -> bool:
        try:
            m, k, n = _tile(M, K // chain, N, in_dtype, out_dtype, dev, g, chain, tiling)
        except DesignError:
            return False
        return not (M % (g.rows * m) or N % (g.cols * n) or (K // chain) % k)

    grid = _chain_grid(dev, cores, chain, bool(bits), splits)
    R, Q, L = grid.rows, grid.cols, chain  # noqa: N806
    m, k, n = _tile(M, K // L, N, in_dtype, out_dtype, dev, grid, L, tiling)
    if M % (R * m) or N % (Q * n) or (K // L) % k:
        raise DesignError(f"matmul {M}x{K}x{N}: tiles m={m}, k={k}, n={n} on {R}x{Q} chains of {L} need "
                          f"M % {R * m} == 0, N % {Q * n} == 0 and K % {L * k} == 0")
    s = _Chain(M, K, N, m, k, n, grid, L, _pad_rows(m, n, out_dtype, dev))
    c_depth = 2 if _memory(s, in_dtype, out_dtype, 2) <= dev.memory_bytes(dev.tiles("compute")[0]) else 1

    def body(A: TensorArg, B: TensorArg, C: TensorArg) -> None:  # noqa: N803 - the tensors' API names
        a = [[fifo(Tile[(m, k), in_dtype], depth=2, name=f"a_{r}_{j}") for j in range(L)] for r in range(R)]
        b = [[fifo(Tile[(k, n), in_dtype], depth=2, name=f"b_{q}_{j}") for j in range(L)] for q in range(Q)]
        c = [[fifo(Tile[(m, n), out_dtype], depth=c_depth, name=f"c_{r}_{q}") for q in range(Q)] for r in range(R)]
        kernels = _kernels(s, in_dtype, out_dtype)
        for r, q in grid.cells():
            links = [cascade(Tile[(m + s.pad, n), out_dtype], name=f"sum_{r}_{q}_{j}") for j in range(L - 1)]
            for j in range(L):
                _chain_core(f"core_{r}_{q}_{j}", s, j, a[r][j], b[q][j], c[r][q] if j == L - 1 else None,
                            links[j - 1] if j else None, links[j] if j < L - 1 else None, kernels, out_dtype)
        issue(_moves(s, A, B, C, a, b, c, bits), dev)

    tensors = {name: Tensor[shp, dt] for name, (shp, dt) in stream_shapes(s, in_dtype, out_dtype).items()}
    return build_design(f"matmul_{M}x{K}x{N}_cascade{L}" + ("_plio" if bits else ""), dev, tensors, body)


class _Chain:
    """Problem and tile sizes of a cascade matmul, and the counts derived from them."""

    def __init__(self, M: int, K: int, N: int, m: int, k: int, n: int, grid: Grid, chain: int,  # noqa: N803
                 pad: int) -> None:
        self.M, self.K, self.N, self.m, self.k, self.n, self.grid = M, K, N, m, k, n, grid
        self.chain, self.pad = chain, pad
        self.blocks_m = M // (grid.rows * m)
        self.blocks_n = N // (grid.cols * n)
        self.steps = K // (chain * k)


def _chain_grid(dev: Device, cores: int | tuple[int, int] | None, chain: int, plio: bool = False,
                splits: Callable[[Grid], bool] | None = None) -> Grid:
    """R x Q chains: ``cores`` (an int counts chains; the most rows, at most 4, that divide it), or for None
    the grid with the most chains (then the squarest, then the most rows) that the shims' channels feed (A and
    B fifos ``(R + Q) chain`` MM2S, C fifos ``R Q`` S2MM; with ``plio`` the PL shims' PLIO streams in and out
    instead) and over which the sizes split (``splits``), the first that does.

    Raises:
        DesignError: a grid the shims or the array cannot hold, or a bad ``cores``.
    """
    if plio:
        pl = [t for t in dev.tiles("shim") if dev.is_pl_shim(t)]
        mm2s, s2mm = (sum(dev.end_channels(t, d) for t in pl) for d in ("mm2s", "s2mm"))
    else:
        mm2s, s2mm = shim_channels(dev, "mm2s"), shim_channels(dev, "s2mm")
    tiles = len(dev.tiles("compute"))

    def fits(r: int, q: int) -> bool:
        return (r + q) * chain <= mm2s and r * q <= s2mm and r * q * chain <= tiles

    if cores is None:
        options = [(r * q, -abs(r - q), r, q) for r in range(1, 5) for q in range(1, s2mm + 1) if fits(r, q)]
        if plio:  # with PLIO the array, not the channels, bounds the grid: more rows than four may be needed
            rows, cols = compute_shape(dev)
            options = [(r * q, -abs(r - q), r, q) for r in range(1, rows + 1) for q in range(1, cols + 1)
                       if fits(r, q)]
        if not options:
            raise DesignError(f"matmul(cascade={chain}) on {dev.name}: no grid of chains fits its {mm2s} shim MM2S "
                              f"channels (A and B need (rows + cols) x {chain})")
        for _, _, r, q in sorted(options, reverse=True):
            if splits is None or splits(Grid(r, q)):
                return Grid(r, q)
        _, _, r, q = max(options)
        return Grid(r, q)  # none splits: the largest, whose tiling then says why
    if isinstance(cores, int) and not isinstance(cores, bool) and cores > 0:
        r = max(x for x in range(1, 5) if cores % x == 0)
        grid = Grid(r, cores // r)
    elif (isinstance(cores, tuple) and len(cores) == 2
          and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in cores)):
        grid = Grid(*cores)
    else:
        raise DesignError(f"matmul(cascade={chain}): cores must be None, a positive int (chains) or (rows, cols), "
                          f"got {cores!r}")
    if not fits(grid.rows, grid.cols):
        raise DesignError(
            f"matmul(cascade={chain}) on {dev.name}: {grid.rows}x{grid.cols} chains of {chain} need "
            f"{(grid.rows + grid.cols) * chain} shim MM2S channels (A, B), {grid.rows * grid.cols} S2MM (C) and "
            f"{grid.cores * chain} cores; the device has {mm2s}, {s2mm} and {tiles}")
    return grid


def _pad_rows(m: int, n: int, out_dtype: DType, dev: Device) -> int:
    """Zero rows that make an ``m x n`` partial-sum tile whole cascade words (AIE1: 48 B)."""
    word = cascade_spec(dev).word_bytes
    row = n * out_dtype.bytes
    pad = 0
    while ((m + pad) * row) % word:
        pad += 1
    return pad


def _memory(s: _Chain, in_dtype: DType, out_dtype: DType, c_depth: int) -> int:
    """Bytes the fullest core of a chain needs: A and B double-buffered, the sum and the cascade staging
    tiles (taken and sent), or C and the staging tile taken, and the stack."""
    tile, staged = s.m * s.n * out_dtype.bytes, (s.m + s.pad) * s.n * out_dtype.bytes
    inputs = 2 * (s.m * s.k + s.k * s.n) * in_dtype.bytes
    middle = tile + (2 if s.chain > 2 else 1) * staged
    last = staged + c_depth * tile
    return inputs + max(middle, last) + STACK_BYTES


def _tile(M: int, KL: int, N: int, in_dtype: DType, out_dtype: DType, dev: Device, grid: Grid,  # noqa: N803
          chain: int, tiling: str | dict) -> tuple[int, int, int]:
    """The per-core tile (m, k, n): the user's, or the automatic choice (:func:`_auto_tile`)."""
    if tiling == "auto":
        return _auto_tile(M, KL, N, in_dtype, out_dtype, dev, grid, chain)
    if not isinstance(tiling, dict) or set(tiling) != {"m", "k", "n"}:
        raise DesignError(f'matmul: tiling must be "auto" or a dict with keys m, k, n; got {tiling!r}')
    m, k, n = (tiling[x] for x in "mkn")
    if not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in (m, k, n)):
        raise DesignError(f"matmul: tile sizes must be positive ints, got {tiling!r}")
    s = _Chain(m, k * chain, n, m, k, n, Grid(1, 1), chain, _pad_rows(m, n, out_dtype, dev))
    mem = dev.memory_bytes(dev.tiles("compute")[0])
    if _memory(s, in_dtype, out_dtype, 1) > mem:
        raise DesignError(f"matmul(cascade={chain}): tiles m={m}, k={k}, n={n} need {_memory(s, in_dtype, out_dtype, 1)}"
                          f" B in a chain's fullest core (A and B double-buffered, sum, cascade staging, stack); "
                          f"{dev.name} cores have {mem} B. Use smaller tiles")
    return m, k, n


def _auto_tile(M: int, KL: int, N: int, in_dtype: DType, out_dtype: DType, dev: Device, grid: Grid,  # noqa: N803
               chain: int) -> tuple[int, int, int]:
    """The tile with the most MACs per input element streamed in (``m n / (m + n)``: each core's A and B
    fifos carry ``(m + n) k`` elements per ``m n k`` MACs; then the fewest padded cascade rows, the larger k)
    among m, n in 64, 48, 32, 16 and k in 64, 32, 16, 8 that divide the sizes, fit a core's memory and
    whose buffers each fit one memory bank, leaving one bank's bytes free: the planner lays buffers out
    bank by bank, and fuller sets may not fit (on AIE1, the 32 x 64 x 32 i16 tile's 25,856 B with
    padded staging tiles did not lay out in 32 KiB).

    A rule rather than the tiling ILP: the ILP does not model the cascade's staging buffers.

    Raises:
        DesignError: no candidate divides the sizes and fits.
    """
    tile0 = dev.tiles("compute")[0]
    mem = dev.memory_bytes(tile0)
    bank = mem // dev.memory_banks(tile0)
    best = None
    for m in _TILE_MN:
        for n in _TILE_MN:
            for k in _TILE_K:
                if M % (grid.rows * m) or N % (grid.cols * n) or KL % k:
                    continue
                pad = _pad_rows(m, n, out_dtype, dev)
                s = _Chain(M, KL * chain, N, m, k, n, grid, chain, pad)
                biggest = max(m * k * in_dtype.bytes, k * n * in_dtype.bytes, (m + pad) * n * out_dtype.bytes)
                if _memory(s, in_dtype, out_dtype, 1) > mem - bank or biggest > bank:
                    continue
                key = (m * n / (m + n), -pad, k, m)
                if best is None or key > best[0]:
                    best = (key, (m, k, n))
    if best is None:
        raise DesignError(f"matmul {M}x{KL * chain}x{N}, cascade={chain} on {grid.rows}x{grid.cols} chains: no tile "
                          f"(m, n in {_TILE_MN}, k in {_TILE_K}) divides the sizes and fits a core; choose sizes the "
                          f"grid divides, another cores=, or a tiling={{'m': .., 'k': .., 'n': ..}}")
    return best[1]


def _kernels(s: _Chain, in_dtype: DType, acc: DType) -> dict[str, object]:
    """The chain's kernels: a k-step's product written into (``first``) or added to (``acc``) the core's sum,
    and the cascade calls after a block's k-steps: ``head`` sends the sum, ``mid`` sends its sum plus the one
    it takes, ``tail`` adds the one it takes to C. Each writes straight into a tile parameter (no stack
    temporaries), and a sending call never reads its cascade tile."""
    m, k, n, p = s.m, s.k, s.n, s.pad
    A, B, S, T = Tile[(m, k), in_dtype], Tile[(k, n), in_dtype], Tile[(m, n), acc], Tile[(m + p, n), acc]  # noqa: N806

    @kernel
    def matmul_first(a: A, b: B, c: S):
        c[...] = tile_matmul(a, b, acc=acc)

    @kernel
    def matmul_acc(a: A, b: B, c: S):
        c[...] += tile_matmul(a, b, acc=acc)

    @kernel
    def chain_head(c: S, out: T):
        out[0:m] = c[...]
        if p:
            out[m:m + p] = c[0:p] * 0  # zero padding to whole cascade words

    @kernel
    def chain_mid(c: S, inp: T, out: T):
        out[0:m] = c[...] + inp[0:m]
        if p:
            out[m:m + p] = c[0:p] * 0

    @kernel
    def chain_tail(inp: T, c: S):
        c[...] += inp[0:m]

    return {"first": matmul_first, "acc": matmul_acc, "head": chain_head, "mid": chain_mid, "tail": chain_tail}


def _chain_core(name: str, s: _Chain, pos: int, a_in: FifoRef, b_in: FifoRef, c_out: FifoRef | None,  # noqa: PLR0913
                take: object, send: object, kn: dict, acc: DType) -> None:
    """Core ``pos`` of a chain: per block of C, ``s.steps`` k-steps over its K slice into its sum (C's tile on
    the last core), then the cascade call: send the sum (plus the one taken), or add the one taken to C."""
    last = c_out is not None

    def step(kernel, c) -> None:  # noqa: ANN001
        mac_step(kernel, a_in, b_in, c)

    @core(name=name)
    def worker() -> None:
        local = None if last else buffer(Tile[(s.m, s.n), acc], name=f"{name}_sum")
        for _ in tl_range(s.blocks_m * s.blocks_n):
            c = c_out.acquire() if last else local
            step(kn["first"], c)
            if s.steps > 1:
                for _ in tl_range(s.steps - 1):
                    step(kn["acc"], c)
            if last:
                kn["tail"](take, c)
                c_out.release()
            elif pos == 0:
                kn["head"](c, send)
            else:
                kn["mid"](c, take, send)


def stream_shapes(s: _Chain, in_dtype: DType, out_dtype: DType) -> dict[str, tuple[tuple, DType]]:
    """Host tensor shapes: one leading (row or column, slice) index per A and B fifo, (row, column) per C."""
    R, Q, L, bm, bn = s.grid.rows, s.grid.cols, s.chain, s.blocks_m, s.blocks_n  # noqa: N806
    return {"A": ((R, L, bm, bn, s.steps, s.m, s.k), in_dtype), "B": ((Q, L, bm, bn, s.steps, s.k, s.n), in_dtype),
            "C": ((R, Q, bm, bn, s.m, s.n), out_dtype)}


def _moves(s: _Chain, A: TensorArg, B: TensorArg, C: TensorArg, a: list, b: list, c: list,  # noqa: N803
           plio: int = 0) -> list[Move]:
    """One contiguous move per host fifo (a PLIO stream of ``plio`` bits, or a shim DMA move for 0)."""
    R, Q, L = s.grid.rows, s.grid.cols, s.chain  # noqa: N806
    a_len = s.blocks_m * s.blocks_n * s.steps * s.m * s.k
    b_len = s.blocks_m * s.blocks_n * s.steps * s.k * s.n
    c_len = s.blocks_m * s.blocks_n * s.m * s.n
    moves = [Move(A, a[r][j], pattern((r * L + j) * a_len, (a_len,), (1,)), True, f"fill_a_{r}_{j}", plio)
             for r in range(R) for j in range(L)]
    moves += [Move(B, b[q][j], pattern((q * L + j) * b_len, (b_len,), (1,)), True, f"fill_b_{q}_{j}", plio)
              for q in range(Q) for j in range(L)]
    moves += [Move(C, c[r][q], pattern((r * Q + q) * c_len, (c_len,), (1,)), False, f"drain_c_{r}_{q}", plio)
              for r in range(R) for q in range(Q)]
    return moves


def pack(shapes: dict[str, tuple], A: np.ndarray, B: np.ndarray, C: np.ndarray | None) -> dict[str, np.ndarray]:  # noqa: N803
    """Row-major A, B (and C) in a cascade matmul's stream layout, given its tensors' shapes.

    Raises:
        DesignError: A, B or C of the wrong shape.
    """
    R, L, bm, bn, steps, m, k = shapes["A"]  # noqa: N806
    Q, n = shapes["B"][0], shapes["B"][6]  # noqa: N806
    M, K, N = bm * R * m, L * steps * k, bn * Q * n  # noqa: N806
    A, B = np.asarray(A), np.asarray(B)  # noqa: N806
    if A.shape != (M, K) or B.shape != (K, N):
        raise DesignError(f"pack_streams: the cascade matmul takes A {(M, K)} and B {(K, N)}, got {A.shape} and "
                          f"{B.shape}")
    # A[(bi R + r) m + i, (l steps + t) k + j] -> a[r, l, bi, bj, t, i, j] for every bj
    a = A.reshape(bm, R, m, L, steps, k).transpose(1, 3, 0, 4, 2, 5)[:, :, :, None]
    # B[(l steps + t) k + i, (bj Q + q) n + j] -> b[q, l, bi, bj, t, i, j] for every bi
    b = B.reshape(L, steps, k, bn, Q, n).transpose(4, 0, 3, 1, 2, 5)[:, :, None]
    out = {"A": np.ascontiguousarray(np.broadcast_to(a, shapes["A"])),
           "B": np.ascontiguousarray(np.broadcast_to(b, shapes["B"]))}
    if C is not None:
        C = np.asarray(C)  # noqa: N806
        if C.shape != (M, N):
            raise DesignError(f"pack_streams: the cascade matmul computes C {(M, N)}, got {C.shape}")
        out["C"] = np.ascontiguousarray(C.reshape(bm, R, m, bn, Q, n).transpose(1, 4, 0, 3, 2, 5))
    return out


def unpack(shape: tuple, C: np.ndarray) -> np.ndarray:  # noqa: N803
    """Row-major C from a cascade matmul's C tensor of shape ``shape`` (R, Q, bm, bn, m, n)."""
    R, Q, bm, bn, m, n = shape  # noqa: N806
    return np.asarray(C).transpose(2, 0, 4, 3, 1, 5).reshape(bm * R * m, bn * Q * n)


def is_cascade(design: Design) -> bool:
    """Whether ``design`` is a cascade matmul (its A tensor has the chain index)."""
    a = getattr(design, "tensors", {}).get("A")
    return a is not None and len(a.shape) == 7 and math.prod(a.shape) > 0
