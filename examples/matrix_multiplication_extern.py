"""matrix_multiplication extern: C = A @ B on one core with precompiled C++ kernels (bf16 in, f32 out)
(mlir-aie programming_examples/basic/matrix_multiplication/single_core, its kernels from aie_kernels/aie2/mm.cc).

The core calls two vendor kernels declared with ``tl.extern_kernel``, named and ordered as mlir-aie's ``mm.cc``
builds them for bf16 in and f32 out: ``zero_scalar_f32(c)`` and ``matmul_scalar_bf16_f32(a, b, c)``, row-major
m x k, k x n and m x n tiles (the scalar variants; the vectorised ``matmul_bf16_f32`` reads A and B in the blocked
layout IRON produces with ``dimensionsToStream``), linked from ``mm_<m>x<k>x<n>.o``. The emitted module declares
them as private functions with ``link_with``; mlir-aie's flow (``tilelang compile``) lowers, routes and
configures the design, and links the object when the AIE compiler builds the core (not available here: compile
mm.cc with Peano or Chess, ``-DDIM_M=<m> -DDIM_K=<k> -DDIM_N=<n>``, as mlir-aie's makefile does).

For simulation each extern kernel gives its numpy semantics (``reference``) and its cycles: here those of the
equivalent traced kernel under tilelang's cost model (``tilelang.ir.kernel_cost``), an estimate, not a
measurement of mm.cc.

Run: python examples/matrix_multiplication_extern.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402
from tilelang.ir.kernel_cost import kernel_cycles  # noqa: E402


def extern_kernels(m: int, k: int, n: int, device: str) -> tuple[object, object]:
    """``zero_scalar_f32`` and ``matmul_scalar_bf16_f32`` of mm.cc for m x k x n tiles."""
    a_t, b_t, c_t = tl.Tile[(m, k), tl.bf16], tl.Tile[(k, n), tl.bf16], tl.Tile[(m, n), tl.f32]

    @tl.kernel
    def zero_like(c: c_t):
        c[...] = 0.0

    @tl.kernel
    def matmul_like(a: a_t, b: b_t, c: c_t):
        c[...] += a @ b

    def zero_ref(c: np.ndarray) -> None:
        c[...] = 0

    def matmul_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        c[...] += a.astype(np.float32) @ b.astype(np.float32)

    dev = tl.device(device)
    obj = f"mm_{m}x{k}x{n}.o"
    zero = tl.extern_kernel("zero_scalar_f32", [("c_out", c_t)], reference=zero_ref,
                            cycles=kernel_cycles(zero_like, dev), object_file=obj)
    matmul = tl.extern_kernel("matmul_scalar_bf16_f32", [("a_in", a_t), ("b_in", b_t), ("c_out", c_t)],
                              reference=matmul_ref, cycles=kernel_cycles(matmul_like, dev), object_file=obj)
    return zero, matmul


def build(size: int = 128, t: int = 32, device: str = "npu1", kernels: tuple[object, object] | None = None) -> object:
    """A size^3 GEMM in t^3 tiles on one core: for each C tile, zero it, then accumulate over K.

    ``kernels``: the (zero, matmul) kernels the core calls (default: mm.cc's, :func:`extern_kernels`).
    """
    M = K = N = size  # noqa: N806
    m = k = n = t
    zero, matmul = kernels if kernels is not None else extern_kernels(m, k, n, device)
    tiles_m, tiles_n, tiles_k = M // m, N // n, K // k

    @tl.design(device=device)
    def matrix_multiplication_extern(A: tl.Tensor[(M, K), tl.bf16], B: tl.Tensor[(K, N), tl.bf16],
                                     C: tl.Tensor[(M, N), tl.f32]):
        a_in = tl.fifo(tl.Tile[(m, k), tl.bf16], depth=2, name="a_in")
        b_in = tl.fifo(tl.Tile[(k, n), tl.bf16], depth=2, name="b_in")
        # one C buffer: two 64 x 64 f32 tiles beside double-buffered A and B would not fit 64 KiB
        c_out = tl.fifo(tl.Tile[(m, n), tl.f32], depth=1, name="c_out")

        @tl.core(name="mm")
        def mm():
            for _ in tl.range(tiles_m * tiles_n):
                c = c_out.acquire()
                zero(c)
                for _ in tl.range(tiles_k):
                    a, b = a_in.acquire(), b_in.acquire()
                    matmul(a, b, c)
                    a_in.release()
                    b_in.release()
                c_out.release()

        for i in range(tiles_m):
            # row block i of A, once per column block of C: the repeat is the outermost dimension
            tl.dma(A, a_in, pattern=tl.pattern(i * m * K, (tiles_n, tiles_k, m, k), (0, k, K, 1)))
            # every column block of B, k x n tiles down each
            tl.dma(B, b_in, pattern=tl.pattern(0, (tiles_n, tiles_k, k, n), (n, k * N, N, 1)))
        tl.dma(c_out, C, pattern=tl.tiles((m, n)))

    return matrix_multiplication_extern


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    size, t = (64, 32) if args.small else (256, 64)
    design = build(size, t)
    # small integers are exact in bf16, and their products' sums exact in f32: a bit-exact check
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (size, size)).astype(np.float32)
    b = rng.integers(-4, 5, (size, size)).astype(np.float32)
    return harness.run("matrix_multiplication_extern", design, {"A": a, "B": b}, {"C": a @ b}, args,
                       macs=size**3)


if __name__ == "__main__":
    raise SystemExit(main())
