"""Several kernels in one core, through core-local buffers (``tl.buffer``, IRON's LocalBuffer).

Three designs (npu1 by default), each checked against numpy:

- ``fused_matmul_relu``: C = relu(A @ B + bias) on one core, the accumulator a
  local buffer: zero it, accumulate K/t products into it, then add the bias
  and apply relu on the way out (the bias is a scalar argument: a bias
  vector would be a third input stream, and a compute tile has two S2MM
  channels);
- ``attention_step``: O = softmax(Q K^T) V per block of queries, with S = Q K^T
  and P = softmax(S) local; K^T and V stay resident (acquired once, both
  through one fifo of depth 2: a compute tile has two S2MM channels, Q takes
  the other);
- ``kernel_pipeline``: four kernels in a row, t1 = 2a, t2 = relu(t1), t3 = t2^2,
  c = t3 + 1, through three local buffers. t1 is dead once t2 is made, so t1
  and t3 can share memory: at the default size the design needs that packing
  to fit the core's 64 KiB (``tl.plan(..., pack=False)`` raises PlanError);
- ``branches``: two branches from one input, written breadth first (both f32
  intermediates, then both bf16 results, then their sum); running one branch
  to its small result before starting the other holds less memory at once,
  which ``tl.passes.schedule_memory`` finds.

Run: python examples/local_buffers.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402

BF16 = ml_dtypes.bfloat16


def fused_matmul_relu(m: int = 128, k: int = 128, n: int = 128, t: int = 32, bias: float = 0.25,
                      device: str = "npu1"):
    """C = relu(A @ B + bias) (bf16 in, f32 out) on one core, in t x t output tiles."""
    mt, kt, nt = m // t, k // t, n // t

    @tl.kernel
    def zero(acc: tl.Tile[(t, t), tl.f32]):
        acc[...] = 0.0

    @tl.kernel
    def mac(a: tl.Tile[(t, t), tl.bf16], b: tl.Tile[(t, t), tl.bf16], acc: tl.Tile[(t, t), tl.f32]):
        acc[...] += a @ b

    @tl.kernel
    def bias_relu(acc: tl.Tile[(t, t), tl.f32], b: tl.f32, c: tl.Tile[(t, t), tl.f32]):
        c[...] = tl.relu(acc + b)

    @tl.design(device=device)
    def fused_matmul_relu(A: tl.Tensor[(m, k), tl.bf16], B: tl.Tensor[(k, n), tl.bf16], C: tl.Tensor[(m, n), tl.f32]):
        a_in = tl.fifo(tl.Tile[(t, t), tl.bf16], depth=2, name="a_in")
        b_in = tl.fifo(tl.Tile[(t, t), tl.bf16], depth=2, name="b_in")
        c_out = tl.fifo(tl.Tile[(t, t), tl.f32], depth=2, name="c_out")

        @tl.core(name="fused")
        def fused():
            acc = tl.buffer(tl.Tile[(t, t), tl.f32], name="acc")
            for _ in tl.range(mt * nt):
                zero(acc)
                for _ in tl.range(kt):
                    a = a_in.acquire()
                    b = b_in.acquire()
                    mac(a, b, acc)
                    a_in.release()
                    b_in.release()
                c = c_out.acquire()
                bias_relu(acc, bias, c)
                c_out.release()

        for i in range(mt):
            for j in range(nt):
                tl.dma(A, a_in, pattern=tl.pattern(i * t * k, (kt, t, t), (t, k, 1)))
                tl.dma(B, b_in, pattern=tl.pattern(j * t, (kt, t, t), (t * n, n, 1)))
        tl.dma(c_out, C, pattern=tl.tiles((t, t)))

    return fused_matmul_relu


def attention_step(queries: int = 128, d: int = 64, block: int = 32, device: str = "npu1"):
    """O = softmax(Q K^T) V (bf16 in, f32 out) over ``d`` keys of width ``d``, ``block`` queries per step,
    K^T and V resident."""
    steps, keys = queries // block, d

    @tl.kernel
    def scores(q: tl.Tile[(block, d), tl.bf16], kt: tl.Tile[(d, keys), tl.bf16], s: tl.Tile[(block, keys), tl.f32]):
        s[...] = q @ kt

    @tl.kernel
    def softmax(s: tl.Tile[(block, keys), tl.f32], p: tl.Tile[(block, keys), tl.bf16]):
        for i in range(block):  # in place in s, row by row: no temporaries beyond a row's max and sum
            s[i] = s[i] - tl.max(s[i])
            s[i] = tl.exp(s[i])
            p[i] = (s[i] / tl.sum(s[i])).astype(tl.bf16)

    @tl.kernel
    def weigh(p: tl.Tile[(block, keys), tl.bf16], v: tl.Tile[(keys, d), tl.bf16], o: tl.Tile[(block, d), tl.f32]):
        o[...] = p @ v

    @tl.design(device=device)
    def attention_step(Q: tl.Tensor[(queries, d), tl.bf16], KT: tl.Tensor[(d, keys), tl.bf16],
                       V: tl.Tensor[(keys, d), tl.bf16], Out: tl.Tensor[(queries, d), tl.f32]):
        q_in = tl.fifo(tl.Tile[(block, d), tl.bf16], depth=2, name="q_in")
        kv_in = tl.fifo(tl.Tile[(d, keys), tl.bf16], depth=2, name="kv_in")  # K^T, then V (keys == d)
        o_out = tl.fifo(tl.Tile[(block, d), tl.f32], depth=2, name="o_out")

        @tl.core(name="attention")
        def attention():
            s = tl.buffer(tl.Tile[(block, keys), tl.f32], name="s")
            p = tl.buffer(tl.Tile[(block, keys), tl.bf16], name="p")
            kt, v = kv_in.acquire(2)
            for _ in tl.range(steps):
                q = q_in.acquire()
                scores(q, kt, s)
                q_in.release()
                softmax(s, p)
                o = o_out.acquire()
                weigh(p, v, o)
                o_out.release()
            kv_in.release(2)

        tl.dma(Q, q_in, pattern=tl.tiles((block, d)))
        tl.dma(KT, kv_in)
        tl.dma(V, kv_in)
        tl.dma(o_out, Out, pattern=tl.tiles((block, d)))

    return attention_step


def kernel_pipeline(n: int = 16384, tile: int = 4096, device: str = "npu1"):
    """c = (relu(2a))^2 + 1 through four kernels and three local buffers (bf16 a and c, f32 t1/t3, bf16 t2)."""

    @tl.kernel
    def double(a: tl.Tile[(tile,), tl.bf16], t1: tl.Tile[(tile,), tl.f32]):
        t1[...] = a.astype(tl.f32) * 2.0

    @tl.kernel
    def rectify(t1: tl.Tile[(tile,), tl.f32], t2: tl.Tile[(tile,), tl.bf16]):
        t2[...] = tl.relu(t1).astype(tl.bf16)

    @tl.kernel
    def square(t2: tl.Tile[(tile,), tl.bf16], t3: tl.Tile[(tile,), tl.f32]):
        t3[...] = t2.astype(tl.f32)
        t3[...] = t3 * t3

    @tl.kernel
    def bump(t3: tl.Tile[(tile,), tl.f32], c: tl.Tile[(tile,), tl.bf16]):
        c[...] = (t3 + 1.0).astype(tl.bf16)

    @tl.design(device=device)
    def kernel_pipeline(A: tl.Tensor[(n,), tl.bf16], C: tl.Tensor[(n,), tl.bf16]):
        a_in = tl.fifo(tl.Tile[(tile,), tl.bf16], depth=2, name="a_in")
        c_out = tl.fifo(tl.Tile[(tile,), tl.bf16], depth=2, name="c_out")

        @tl.core(name="pipeline")
        def pipeline():
            t1 = tl.buffer(tl.Tile[(tile,), tl.f32], name="t1")
            t2 = tl.buffer(tl.Tile[(tile,), tl.bf16], name="t2")
            t3 = tl.buffer(tl.Tile[(tile,), tl.f32], name="t3")
            for _ in tl.range(n // tile):
                a = a_in.acquire()
                double(a, t1)
                a_in.release()
                rectify(t1, t2)
                square(t2, t3)
                c = c_out.acquire()
                bump(t3, c)
                c_out.release()

        tl.dma(A, a_in, pattern=tl.tiles((tile,)))
        tl.dma(c_out, C, pattern=tl.tiles((tile,)))

    return kernel_pipeline


def branches(n: int = 8192, tile: int = 2048, device: str = "npu1"):
    """c = bf16(relu(3a)) + bf16((a + 1)^2) through two f32 and two bf16 local buffers, written breadth first."""

    @tl.kernel
    def triple(a: tl.Tile[(tile,), tl.bf16], u: tl.Tile[(tile,), tl.f32]):
        u[...] = a.astype(tl.f32)
        u[...] = u * 3.0

    @tl.kernel
    def shift(a: tl.Tile[(tile,), tl.bf16], v: tl.Tile[(tile,), tl.f32]):
        v[...] = a.astype(tl.f32) + 1.0

    @tl.kernel
    def rectify(u: tl.Tile[(tile,), tl.f32], s1: tl.Tile[(tile,), tl.bf16]):
        s1[...] = tl.relu(u).astype(tl.bf16)

    @tl.kernel
    def square(v: tl.Tile[(tile,), tl.f32], s2: tl.Tile[(tile,), tl.bf16]):
        s2[...] = (v * v).astype(tl.bf16)

    @tl.kernel
    def merge(s1: tl.Tile[(tile,), tl.bf16], s2: tl.Tile[(tile,), tl.bf16], c: tl.Tile[(tile,), tl.bf16]):
        c[...] = s1 + s2

    @tl.design(device=device)
    def branches(A: tl.Tensor[(n,), tl.bf16], C: tl.Tensor[(n,), tl.bf16]):
        a_in = tl.fifo(tl.Tile[(tile,), tl.bf16], depth=2, name="a_in")
        c_out = tl.fifo(tl.Tile[(tile,), tl.bf16], depth=2, name="c_out")

        @tl.core(name="branches")
        def body():
            u = tl.buffer(tl.Tile[(tile,), tl.f32], name="u")
            v = tl.buffer(tl.Tile[(tile,), tl.f32], name="v")
            s1 = tl.buffer(tl.Tile[(tile,), tl.bf16], name="s1")
            s2 = tl.buffer(tl.Tile[(tile,), tl.bf16], name="s2")
            for _ in tl.range(n // tile):
                a = a_in.acquire()
                c = c_out.acquire()
                triple(a, u)
                shift(a, v)
                rectify(u, s1)
                square(v, s2)
                merge(s1, s2, c)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in, pattern=tl.tiles((tile,)))
        tl.dma(c_out, C, pattern=tl.tiles((tile,)))

    return branches


# -- numpy answers ------------------------------------------------------------------------


def fused_reference(a: np.ndarray, b: np.ndarray, bias: float = 0.25) -> np.ndarray:
    return np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)


def attention_reference(q: np.ndarray, kt: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = q.astype(np.float64) @ kt.astype(np.float64)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def pipeline_reference(a: np.ndarray) -> np.ndarray:
    """Each step in the design's dtypes: f32 products, a bf16 rounding after relu and at the end."""
    t1 = a.astype(np.float32) * np.float32(2.0)
    t2 = np.maximum(t1, 0).astype(BF16).astype(np.float32)
    return (t2 * t2 + np.float32(1.0)).astype(BF16)


def branches_reference(a: np.ndarray) -> np.ndarray:
    """Each kernel computes in f32 and rounds its bf16 result once."""
    x = a.astype(np.float32)
    s1 = np.maximum(x * np.float32(3.0), 0).astype(BF16).astype(np.float32)
    v = x + np.float32(1.0)
    s2 = (v * v).astype(BF16).astype(np.float32)
    return (s1 + s2).astype(BF16)


def inputs(design: object, seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for one of the designs above, uniform in [-2, 2)."""
    rng = np.random.default_rng(seed)
    t = design.tensors  # type: ignore[attr-defined]
    out = {}
    for tensor in design.inputs:  # type: ignore[attr-defined]
        decl = t[tensor]
        out[tensor] = rng.uniform(-2, 2, decl.shape).astype(decl.dtype.numpy)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    status = 0
    fused = fused_matmul_relu(64, 64, 64) if args.small else fused_matmul_relu()
    x = inputs(fused)
    want = {"C": fused_reference(x["A"], x["B"])}
    status |= harness.run("fused_matmul_relu", fused, x, want, args, tolerance=harness.Tolerance(rtol=1e-5, atol=1e-4))
    att = attention_step(64, 32, 32) if args.small else attention_step()
    x = inputs(att)
    # P is rounded to bf16 (8 significant bits) before P @ V; each weight errs by at most 2**-8 relative
    tol = harness.Tolerance(rtol=2.0**-7, atol=float(np.abs(x["V"]).max()) * 2.0**-8)
    status |= harness.run("attention_step", att, x, {"Out": attention_reference(x["Q"], x["KT"], x["V"])}, args,
                          tolerance=tol)
    pipe = kernel_pipeline(2048, 512) if args.small else kernel_pipeline()
    x = inputs(pipe)
    # under the script's name: the design whose buffers share bytes (<out>/local_buffers.mlir)
    status |= harness.run("local_buffers", pipe, x, {"C": pipeline_reference(x["A"])}, args)
    br = branches(4096, 1024) if args.small else branches()
    x = inputs(br)
    status |= harness.run("branches", br, x, {"C": branches_reference(x["A"])}, args)
    print(f"local_buffers: 4 designs (local_buffers is kernel_pipeline), "
          f"{'all match numpy' if status == 0 else 'a MISMATCH above'}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
