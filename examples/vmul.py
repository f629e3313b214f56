"""API.md's example design at module level, for the command line:

    tilelang simulate examples/vmul.py:vector_scalar_mul
    tilelang emit examples/vmul.py:vector_scalar_mul --level physical
"""

import tilelang as tl


@tl.kernel
def scale(a: tl.Tile[(1024,), tl.i32], c: tl.Tile[(1024,), tl.i32], factor: tl.i32):
    c[...] = a * factor


@tl.design(device="npu1")
def vector_scalar_mul(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4096,), tl.i32]):
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
