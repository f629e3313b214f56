"""Designs shared by the examples, tests and benchmarks.

Each function builds and returns a traced design, so importing this module is
cheap and a caller chooses sizes.
"""

from __future__ import annotations

import tilelang as tl


def vector_scalar_mul(n: int = 4096, tile: int = 1024, device: str = "npu1"):
    """API.md's example: C = 3 * A on one core, double-buffered."""

    @tl.kernel
    def scale(a: tl.Tile[(tile,), tl.i32], c: tl.Tile[(tile,), tl.i32], factor: tl.i32):
        c[...] = a * factor

    @tl.design(device=device)
    def vector_scalar_mul(A: tl.Tensor[(n,), tl.i32], C: tl.Tensor[(n,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(tile,), tl.i32], depth=2, name="a_in")
        c_out = tl.fifo(tl.Tile[(tile,), tl.i32], depth=2, name="c_out")

        @tl.core(name="worker")
        def worker():
            for _ in tl.range(n // tile):
                a = a_in.acquire()
                c = c_out.acquire()
                scale(a, c, 3)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in, pattern=tl.tiles((tile,)))
        tl.dma(c_out, C, pattern=tl.tiles((tile,)))

    return vector_scalar_mul


def gemm_single_core(m: int = 128, k: int = 128, n: int = 128, t: int = 32, device: str = "npu1"):
    """C = A @ B (bf16 in, f32 out) on one core in t x t tiles.

    The host feeds A and B with one tl.dma per output tile row/column, in
    program order: for each output tile (i, j), A's row of tiles i and B's
    column of tiles j; the core accumulates k/t products per output tile.
    """
    mt, kt, nt = m // t, k // t, n // t

    @tl.kernel
    def zero(c: tl.Tile[(t, t), tl.f32]):
        c[...] = 0.0

    @tl.kernel
    def mac(a: tl.Tile[(t, t), tl.bf16], b: tl.Tile[(t, t), tl.bf16], c: tl.Tile[(t, t), tl.f32]):
        c[...] += a @ b

    @tl.design(device=device)
    def gemm(A: tl.Tensor[(m, k), tl.bf16], B: tl.Tensor[(k, n), tl.bf16], C: tl.Tensor[(m, n), tl.f32]):
        a_in = tl.fifo(tl.Tile[(t, t), tl.bf16], depth=2, name="a_in")
        b_in = tl.fifo(tl.Tile[(t, t), tl.bf16], depth=2, name="b_in")
        c_out = tl.fifo(tl.Tile[(t, t), tl.f32], depth=2, name="c_out")

        @tl.core(name="gemm_core")
        def gemm_core():
            for _ in tl.range(mt * nt):
                c = c_out.acquire()
                zero(c)
                for _ in tl.range(kt):
                    a = a_in.acquire()
                    b = b_in.acquire()
                    mac(a, b, c)
                    a_in.release()
                    b_in.release()
                c_out.release()

        for i in range(mt):
            for j in range(nt):
                # row of tiles i of A: kt tiles of t x t, row-major inside each
                tl.dma(A, a_in, pattern=tl.pattern(i * t * k, (kt, t, t), (t, k, 1)))
                # column of tiles j of B: kt tiles going down
                tl.dma(B, b_in, pattern=tl.pattern(j * t, (kt, t, t), (t * n, n, 1)))
        tl.dma(c_out, C, pattern=tl.tiles((t, t)))

    return gemm


def broadcast_scale(cores: int = 16, n: int = 256, device: str = "xcvc1902"):
    """Every core scales its own slice of X by a factor vector broadcast to all cores.

    One fifo (``w``) is broadcast from the host to every core; each core has its own
    input and output fifo. 16 cores on xcvc1902 by default.
    """

    @tl.kernel
    def scale_vec(x: tl.Tile[(n,), tl.i32], w: tl.Tile[(n,), tl.i32], y: tl.Tile[(n,), tl.i32]):
        y[...] = x * w

    @tl.design(device=device)
    def broadcast_scale(X: tl.Tensor[(cores * n,), tl.i32], W: tl.Tensor[(n,), tl.i32], Y: tl.Tensor[(cores * n,), tl.i32]):
        w = tl.fifo(tl.Tile[(n,), tl.i32], depth=1, name="w")
        xs = [tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name=f"x{i}") for i in range(cores)]
        ys = [tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name=f"y{i}") for i in range(cores)]
        for i in range(cores):

            @tl.core(name=f"core{i}")
            def body(i=i):
                wv = w.acquire()
                x = xs[i].acquire()
                y = ys[i].acquire()
                scale_vec(x, wv, y)
                xs[i].release()
                ys[i].release()
                w.release()

        tl.dma(W, w)
        for i in range(cores):
            tl.dma(X, xs[i], pattern=tl.pattern(i * n, (n,), (1,)))
            tl.dma(ys[i], Y, pattern=tl.pattern(i * n, (n,), (1,)))

    return broadcast_scale


def chains(n_chains: int = 3, stages: int = 8, n: int = 64, iters: int = 4, device: str = "xcvc1902"):
    """``n_chains`` independent pipelines of ``stages`` cores; stage s computes 3 * x + i on tile i.

    Neighbouring stages can share memory, so most fifos need no DMA; each chain
    is fed and drained by the host. 25 chains of 16 cores fill a VC1902.
    """

    @tl.kernel
    def stage(a: tl.Tile[(n,), tl.i32], c: tl.Tile[(n,), tl.i32], k: tl.i32):
        c[...] = a * 3 + k

    @tl.design(device=device)
    def chains(X: tl.Tensor[(n_chains, iters * n), tl.i32], Y: tl.Tensor[(n_chains, iters * n), tl.i32]):
        for ch in range(n_chains):
            fs = [tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name=f"c{ch}_f{s}") for s in range(stages + 1)]
            for s in range(stages):

                @tl.core(name=f"c{ch}_s{s}")
                def body(s=s, fs=fs):
                    for i in tl.range(iters):
                        a = fs[s].acquire()
                        c = fs[s + 1].acquire()
                        stage(a, c, i)
                        fs[s].release()
                        fs[s + 1].release()

            tl.dma(X, fs[0], pattern=tl.pattern(ch * iters * n, (iters * n,), (1,)))
            tl.dma(fs[-1], Y, pattern=tl.pattern(ch * iters * n, (iters * n,), (1,)))

    return chains
