"""Designs the MLIR backend tests emit: every fifo shape the plan can carry.

Each factory returns a traced design on the device asked for, small enough to
plan in a fraction of a second with the greedy strategy.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import tilelang as tl

_EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "designs.py"


def examples():  # noqa: ANN201 - the examples/designs.py module
    """examples/designs.py, the designs API.md and the examples use."""
    name = "tilelang_examples_designs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _EXAMPLES)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules[name]


def vector_scalar_mul(device: str = "npu1"):  # noqa: ANN201
    return examples().vector_scalar_mul(device=device)


def split_join(device: str = "npu1", parts: int = 2, n: int = 4096, tile: int = 1024):  # noqa: ANN201
    """A memtile split to ``parts`` cores and a join back (links with offsets)."""
    part = tile // parts

    @tl.kernel
    def add1(a: tl.Tile[(part,), tl.i32], c: tl.Tile[(part,), tl.i32]):
        c[...] = a + 1

    @tl.design(device=device)
    def split_join(A: tl.Tensor[(n,), tl.i32], C: tl.Tensor[(n,), tl.i32]):
        a_mem = tl.fifo(tl.Tile[(tile,), tl.i32], depth=2, name="a_mem")
        c_mem = tl.fifo(tl.Tile[(tile,), tl.i32], depth=2, name="c_mem")
        ins = [tl.fifo(tl.Tile[(part,), tl.i32], depth=2, name=f"in{i}") for i in range(parts)]
        outs = [tl.fifo(tl.Tile[(part,), tl.i32], depth=2, name=f"out{i}") for i in range(parts)]
        tl.split(a_mem, ins, offsets=[i * part for i in range(parts)])
        tl.join(outs, c_mem, offsets=[i * part for i in range(parts)])
        for i in range(parts):

            @tl.core(name=f"w{i}")
            def w(i=i):
                for _ in tl.range(n // tile):
                    a = ins[i].acquire()
                    c = outs[i].acquire()
                    add1(a, c)
                    ins[i].release()
                    outs[i].release()

        tl.dma(A, a_mem, pattern=tl.tiles((tile,)))
        tl.dma(c_mem, C, pattern=tl.tiles((tile,)))

    return split_join


def transpose_forward(device: str = "npu1"):  # noqa: ANN201
    """A memtile forward that re-lays an 8x8 tile out (a transpose) on its way to the core."""

    @tl.kernel
    def copy(a: tl.Tile[(8, 8), tl.i32], c: tl.Tile[(8, 8), tl.i32]):
        c[...] = a

    @tl.design(device=device)
    def transpose(A: tl.Tensor[(64,), tl.i32], C: tl.Tensor[(64,), tl.i32]):
        x = tl.fifo(tl.Tile[(8, 8), tl.i32], depth=2, name="x")
        y = tl.fifo(tl.Tile[(8, 8), tl.i32], depth=2, name="y")
        z = tl.fifo(tl.Tile[(8, 8), tl.i32], depth=2, name="z")
        tl.dma(x, y, pattern=tl.pattern(0, (8, 8), (1, 8)))

        @tl.core(name="k")
        def k():
            a = y.acquire()
            c = z.acquire()
            copy(a, c)
            y.release()
            z.release()

        tl.dma(A, x)
        tl.dma(z, C)

    return transpose


def pipeline(device: str = "npu1", stages: int = 3, depth: int = 2):  # noqa: ANN201
    """Cores in a chain: neighbours share memory, the ends stream to and from the host."""

    @tl.kernel
    def inc(a: tl.Tile[(256,), tl.i32], c: tl.Tile[(256,), tl.i32], k: tl.i32):
        c[...] = a + k

    @tl.design(device=device)
    def pipeline(A: tl.Tensor[(1024,), tl.i32], C: tl.Tensor[(1024,), tl.i32]):
        fs = [tl.fifo(tl.Tile[(256,), tl.i32], depth=depth, name=f"f{i}") for i in range(stages + 1)]
        for s in range(stages):

            @tl.core(name=f"s{s}")
            def st(s=s):
                for i in tl.range(4):
                    a = fs[s].acquire()
                    c = fs[s + 1].acquire()
                    inc(a, c, i)
                    fs[s].release()
                    fs[s + 1].release()

        tl.dma(A, fs[0], pattern=tl.tiles((256,)))
        tl.dma(fs[-1], C, pattern=tl.tiles((256,)))

    return pipeline


def sliding_window(device: str = "npu1"):  # noqa: ANN201
    """A window of two elements sliding by one: the first iteration holds fewer than the rest."""

    @tl.kernel
    def add2(a: tl.Tile[(64,), tl.i32], b: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
        c[...] = a + b

    @tl.design(device=device)
    def sliding_window(A: tl.Tensor[(512,), tl.i32], C: tl.Tensor[(448,), tl.i32]):
        x = tl.fifo(tl.Tile[(64,), tl.i32], depth=3, name="x")
        y = tl.fifo(tl.Tile[(64,), tl.i32], depth=2, name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(7):
                w = x.acquire(2)
                c = y.acquire()
                add2(w[0], w[1], c)
                x.release(1)
                y.release()
            x.release(1)

        tl.dma(A, x, pattern=tl.tiles((64,)))
        tl.dma(y, C, pattern=tl.tiles((64,)))

    return sliding_window


def window3(device: str = "npu1", depth: int = 4, iters: int = 10):  # noqa: ANN201
    """A window of three elements sliding by one over a deeper fifo, primed in the loop's first iteration.

    The first iteration is peeled (it takes three, the rest one); the rest is
    an ``scf.for``: at depth 4 unrolled by the buffer rotation (4 iterations a
    step, buffer indices constant), at depth 5 (rotation 10 > 9 iterations
    left) with buffer indices computed from the loop counter.
    """

    @tl.kernel
    def add3(
        a: tl.Tile[(32,), tl.i32], b: tl.Tile[(32,), tl.i32], c: tl.Tile[(32,), tl.i32], y: tl.Tile[(32,), tl.i32]
    ):
        y[...] = a + b * 2 + c * 3

    @tl.design(device=device)
    def window3(A: tl.Tensor[((iters + 2) * 32,), tl.i32], C: tl.Tensor[(iters * 32,), tl.i32]):
        x = tl.fifo(tl.Tile[(32,), tl.i32], depth=depth, name="x")
        y = tl.fifo(tl.Tile[(32,), tl.i32], depth=2, name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(iters):
                w = x.acquire(3)
                c = y.acquire()
                add3(w[0], w[1], w[2], c)
                x.release(1)
                y.release()
            x.release(2)

        tl.dma(A, x, pattern=tl.tiles((32,)))
        tl.dma(y, C, pattern=tl.tiles((32,)))

    return window3


def window3_computed(device: str = "npu1"):  # noqa: ANN201
    return window3(device=device, depth=5)


def gemm(device: str = "npu1"):  # noqa: ANN201
    return examples().gemm_single_core(m=64, k=64, n=64, t=32, device=device)


def broadcast(device: str = "xcvc1902", cores: int = 4):  # noqa: ANN201
    return examples().broadcast_scale(cores=cores, n=256, device=device)


def extern_scale(device: str = "npu1"):  # noqa: ANN201
    """The reference module's shape: a core calling a precompiled vendor kernel."""
    scale = tl.extern_kernel(
        "scale_int32",
        [tl.Tile[(1024,), tl.i32], tl.Tile[(1024,), tl.i32], tl.i32],
        reference=lambda a, c, f: c.__setitem__(..., a * f),
        cycles=1000,
        object_file="scale.o",
    )

    @tl.design(device=device)
    def extern_scale(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4096,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(1024,), tl.i32], depth=2, name="a_in")
        c_out = tl.fifo(tl.Tile[(1024,), tl.i32], depth=2, name="c_out")

        @tl.core(name="worker")
        def worker():
            for _ in tl.range(4):
                a = a_in.acquire()
                c = c_out.acquire()
                scale(a, c, 3)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in, pattern=tl.tiles((1024,)))
        tl.dma(c_out, C, pattern=tl.tiles((1024,)))

    return extern_scale


def chains(device: str = "xcvc1902", n_chains: int = 3, stages: int = 8, n: int = 64, iters: int = 4):  # noqa: ANN201
    """``n_chains`` pipelines of ``stages`` cores: examples/designs.py's, smaller than emit_bench's."""
    return examples().chains(n_chains, stages, n, iters, device=device)


def dma_broadcast(device: str = "npu1"):  # noqa: ANN201
    """One host move feeding two fifos (``tl.dma(A, [x0, x1])``), two cores, two outputs."""

    @tl.kernel
    def add(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32], k: tl.i32):
        c[...] = a + k

    @tl.design(device=device)
    def dma_broadcast(A: tl.Tensor[(256,), tl.i32], C: tl.Tensor[(512,), tl.i32]):
        xs = [tl.fifo(tl.Tile[(64,), tl.i32], depth=2, name=f"x{i}") for i in range(2)]
        ys = [tl.fifo(tl.Tile[(64,), tl.i32], depth=2, name=f"y{i}") for i in range(2)]
        for i in range(2):

            @tl.core(name=f"k{i}")
            def k(i=i):
                for _ in tl.range(4):
                    a = xs[i].acquire()
                    c = ys[i].acquire()
                    add(a, c, i + 1)
                    xs[i].release()
                    ys[i].release()

        tl.dma(A, xs)
        for i in range(2):
            tl.dma(ys[i], C, pattern=tl.pattern(i * 256, (256,), (1,)))

    return dma_broadcast


def loop_affine(device: str = "npu1"):  # noqa: ANN201
    """C's tile (i, j) = A's + (4 i + j) + (120 + 5 j as i8, which wraps from j = 2 on): kernel scalars affine
    in two tl.range variables."""

    @tl.kernel
    def add2(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32], u: tl.i32, v: tl.i8):
        c[...] = a + u + v.astype(tl.i32)

    @tl.design(device=device)
    def loop_affine(A: tl.Tensor[(3 * 4 * 16,), tl.i32], C: tl.Tensor[(3 * 4 * 16,), tl.i32]):
        a = tl.fifo(tl.Tile[(16,), tl.i32], depth=2, name="a")
        c = tl.fifo(tl.Tile[(16,), tl.i32], depth=2, name="c")

        @tl.core(name="k")
        def k():
            for i in tl.range(3):
                for j in tl.range(4):
                    x, y = a.acquire(), c.acquire()
                    add2(x, y, i * 4 + j, 120 + 5 * j)
                    a.release()
                    c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    return loop_affine


def matmul_streams(device: str = "xcvc1902"):  # noqa: ANN201
    return tl.library.matmul(64, 32, 64, in_dtype=tl.i16, out_dtype=tl.i32, device=device, cores=(2, 2),
                             tiling={"m": 16, "k": 16, "n": 16}, layout="streams")


#: (factory, devices it is emitted for) for the "every example design" checks.
ZOO = {
    "vector_scalar_mul": (vector_scalar_mul, ("npu1", "npu2", "xcvc1902")),
    "split_join": (split_join, ("npu1", "npu2")),
    "transpose_forward": (transpose_forward, ("npu1", "npu2")),
    "pipeline": (pipeline, ("npu1", "npu2", "xcvc1902")),
    "sliding_window": (sliding_window, ("npu1", "npu2", "xcvc1902")),
    "window3": (window3, ("npu1", "xcvc1902")),
    "window3_computed": (window3_computed, ("npu1", "xcvc1902")),
    "gemm": (gemm, ("npu1", "npu2")),
    "broadcast": (broadcast, ("npu2", "xcvc1902")),
    "extern_scale": (extern_scale, ("npu1",)),
    "chains": (chains, ("npu2", "xcvc1902")),
    "dma_broadcast": (dma_broadcast, ("npu1", "xcvc1902")),
    "matmul_streams": (matmul_streams, ("npu1", "xcvc1902")),
    "loop_affine": (loop_affine, ("npu1", "xcvc1902")),
}


# -- inputs and expected outputs, worked out directly in numpy ----------------------------------


def _ints(rng, shape, lo=-1000, hi=1000):  # noqa: ANN001, ANN202
    import numpy as np

    return rng.integers(lo, hi, size=shape).astype(np.int32)


def oracle(name: str, design, rng):  # noqa: ANN001, ANN201
    """(inputs, expected outputs) of a zoo design: what the design computes, by hand."""
    import ml_dtypes
    import numpy as np

    if name in ("vector_scalar_mul", "extern_scale"):
        a = _ints(rng, (4096,))
        return {"A": a}, {"C": a * 3}
    if name == "split_join":
        a = _ints(rng, (4096,))
        return {"A": a}, {"C": a + 1}
    if name == "transpose_forward":
        a = _ints(rng, (64,))
        return {"A": a}, {"C": a.reshape(8, 8).T.reshape(-1)}
    if name == "pipeline":
        a = _ints(rng, (1024,))
        tiles = a.reshape(4, 256) + 3 * np.arange(4)[:, None]  # each of 3 stages adds the tile's index
        return {"A": a}, {"C": tiles.reshape(-1).astype(np.int32)}
    if name == "sliding_window":
        a = _ints(rng, (512,))
        t = a.reshape(8, 64)
        return {"A": a}, {"C": (t[:-1] + t[1:]).reshape(-1)}
    if name in ("window3", "window3_computed"):
        a = _ints(rng, (384,))
        t = a.reshape(12, 32)
        return {"A": a}, {"C": (t[:-2] + t[1:-1] * 2 + t[2:] * 3).reshape(-1)}
    if name == "gemm":
        m = k = n = 64
        a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16)
        c = a.astype(np.float64) @ b.astype(np.float64)
        return {"A": a, "B": b}, {"C": c.astype(np.float32)}
    if name == "broadcast":
        cores = len(design.cores)
        x, w = _ints(rng, (cores * 256,)), _ints(rng, (256,))
        return {"X": x, "W": w}, {"Y": (x.reshape(cores, 256) * w).reshape(-1)}
    if name == "loop_affine":
        a = _ints(rng, (3 * 4 * 16,))
        t = np.arange(12)
        i, j = t // 4, t % 4
        v = (120 + 5 * j).astype(np.int64)
        v = np.where(v > 127, v - 256, v)  # the i8 parameter holds 120 + 5 j wrapped
        return {"A": a}, {"C": (a.reshape(12, 16) + (4 * i + j + v)[:, None]).reshape(-1).astype(np.int32)}
    if name == "matmul_streams":
        a, b = _ints(rng, (64, 32), -50, 50).astype(np.int16), _ints(rng, (32, 64), -50, 50).astype(np.int16)
        c = a.astype(np.int32) @ b.astype(np.int32)
        packed = tl.library.pack_streams(design, a, b, C=c)
        return {"A": packed["A"], "B": packed["B"]}, {"C": packed["C"]}
    if name == "dma_broadcast":
        a = _ints(rng, (256,))
        return {"A": a}, {"C": np.concatenate([a + 1, a + 2])}
    if name == "chains":
        n_chains, total = design.params[0].shape
        x = _ints(rng, (n_chains, total), -50, 50)
        stages = len(design.cores) // n_chains
        y = x.reshape(n_chains, -1, 64).astype(np.int64)
        for _ in range(stages):
            y = y * 3 + np.arange(y.shape[1])[None, :, None]
        return {"X": x}, {"Y": y.reshape(n_chains, total).astype(np.int32)}
    raise KeyError(name)
