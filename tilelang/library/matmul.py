"""``tl.library.matmul``: single-core and whole-array GEMM designs.

The whole-array form follows IRON's whole_array example: a grid of R x C
cores; each core (r, c) computes one m x n block of every (R*m) x (C*n) block
of the output, accumulating over K in k-steps. A is fed through a memtile
split (one fifo per core row, broadcast along the row), B by one broadcast
fifo per core column, and each column's C blocks are joined in a memtile.
"""

from __future__ import annotations

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import DesignError
from tilelang.frontend.design import core, design, dma, fifo, join, split
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import kernel
from tilelang.frontend.kernel import matmul as tile_matmul
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, bf16, f32
from tilelang.ir.pattern import pattern
from tilelang.ir.types import Tensor, Tile


def _grid(dev: Device, cores: int | tuple[int, int] | None) -> tuple[int, int]:
    """Core rows x core columns to use."""
    compute = dev.tiles("compute")
    rows = len({r for _, r in compute})
    cols = len({c for c, _ in compute})
    if cores is None:
        # at most 4 core rows: the memtile split of A feeds one fifo per row
        return min(rows, 4), cols
    if isinstance(cores, tuple):
        r, c = cores
    else:
        r = min(rows, 4, cores)
        while cores % r:
            r -= 1
        c = cores // r
    if r < 1 or c < 1 or r > rows or c > cols:
        raise DesignError(f"cores={cores!r} does not fit {dev.name}'s {rows} x {cols} compute tiles")
    return r, c


def _sizes(M: int, K: int, N: int, in_dtype: DType, out_dtype: DType, dev: Device, grid: tuple[int, int],
           tiling: str | dict) -> tuple[int, int, int]:
    if tiling == "auto":
        from tilelang.plan.tiling import tile_contraction

        choice = tile_contraction("mk,kn->mn", {"m": M, "k": K, "n": N}, (in_dtype, in_dtype, out_dtype), dev,
                                  cores=grid)
        return choice.tile["m"], choice.tile["k"], choice.tile["n"]
    if not isinstance(tiling, dict) or set(tiling) != {"m", "k", "n"}:
        raise DesignError(f'tiling must be "auto" or a dict with keys m, k, n; got {tiling!r}')
    return int(tiling["m"]), int(tiling["k"]), int(tiling["n"])


def matmul(M: int, K: int, N: int, in_dtype: DType = bf16, out_dtype: DType = f32, device: str | Device = "npu1",
           cores: int | tuple[int, int] | None = None, tiling: str | dict = "auto") -> Design:
    """A GEMM design ``C = A @ B`` with tensors A (M x K), B (K x N), C (M x N).

    Args:
        M, K, N: problem sizes.
        in_dtype: dtype of A and B.
        out_dtype: dtype of C (the accumulator: f32 for bf16, i32 for integers, or the input dtype).
        device: device name or model.
        cores: None for the whole array (at most 4 core rows), an int, or (rows, cols).
        tiling: "auto" (the tiling ILP) or {"m": .., "k": .., "n": ..}, the per-core kernel tile.

    Returns:
        The traced design.

    Raises:
        DesignError: sizes that the tiles or the core grid do not divide.
    """
    dev = lookup_device(device)
    R, Q = _grid(dev, cores)
    m, k, n = _sizes(M, K, N, in_dtype, out_dtype, dev, (R, Q), tiling)
    if M % (R * m) or N % (Q * n) or K % k:
        raise DesignError(
            f"matmul {M}x{K}x{N}: tiles m={m}, k={k}, n={n} on a {R}x{Q} core grid need M % {R * m} == 0, "
            f"N % {Q * n} == 0 and K % {k} == 0"
        )
    acc = out_dtype

    @kernel
    def zero(c: Tile[(m, n), acc]):
        c[...] = 0 if acc.is_int else 0.0

    @kernel
    def matmul_acc(a: Tile[(m, k), in_dtype], b: Tile[(k, n), in_dtype], c: Tile[(m, n), acc]):
        c[...] += tile_matmul(a, b, acc=acc)

    blocks_m, blocks_n, steps = M // (R * m), N // (Q * n), K // k
    name = f"matmul_{M}x{K}x{N}"

    def body(A, B, C):  # noqa: N803 - the tensors' API names
        a_mem = fifo(Tile[(R * m, k), in_dtype], depth=2, name="a_mem")
        a_rows = [fifo(Tile[(m, k), in_dtype], depth=2, name=f"a{r}") for r in range(R)]
        b_cols = [fifo(Tile[(k, n), in_dtype], depth=2, name=f"b{q}") for q in range(Q)]
        c_cores = [[fifo(Tile[(m, n), acc], depth=2, name=f"c{r}_{q}") for q in range(Q)] for r in range(R)]
        c_cols = [fifo(Tile[(R * m, n), acc], depth=2, name=f"c{q}") for q in range(Q)]
        split(a_mem, a_rows, offsets=[r * m * k for r in range(R)], name="split_a")
        for q in range(Q):
            join([c_cores[r][q] for r in range(R)], c_cols[q], offsets=[r * m * n for r in range(R)], name=f"join_c{q}")
        for r in range(R):
            for q in range(Q):

                @core(name=f"core_{r}_{q}")
                def worker(a_in=a_rows[r], b_in=b_cols[q], c_out=c_cores[r][q]):
                    for _ in tl_range(blocks_m * blocks_n):
                        acc_tile = c_out.acquire()
                        zero(acc_tile)
                        for _ in tl_range(steps):
                            a, b = a_in.acquire(), b_in.acquire()
                            matmul_acc(a, b, acc_tile)
                            a_in.release()
                            b_in.release()
                        c_out.release()

        for bi in range(blocks_m):
            for bj in range(blocks_n):
                # A: the (R*m) x K row block, walked as K/k tiles of (R*m) x k
                dma(A, a_mem, pattern=pattern(bi * R * m * K, (steps, R * m, k), (k, K, 1)))
                for q in range(Q):
                    col = bj * Q * n + q * n
                    dma(B, b_cols[q], pattern=pattern(col, (steps, k, n), (k * N, N, 1)))
                for q in range(Q):
                    col = bj * Q * n + q * n
                    dma(c_cols[q], C, pattern=pattern(bi * R * m * N + col, (R * m, n), (N, 1)))

    body.__name__ = name
    body.__annotations__ = {
        "A": Tensor[(M, K), in_dtype],
        "B": Tensor[(K, N), in_dtype],
        "C": Tensor[(M, N), acc],
    }
    return design(body, device=dev)


__all__ = ["matmul"]
