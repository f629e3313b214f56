"""Simulated cycles against the published measurements in AIE_FACTS.md.

Run: ``.venv/bin/python benchmarks/accuracy.py``. Each row says whether the
figure *sets* a constant of the cost model (then agreement is by construction
and proves nothing) or *tests* it (nothing was fitted to it).

Figures and how each is reproduced:
- [PG4c] vector_scalar_mul, 1024 x int16, 72 cycles: kernel cycles of the same
  kernel. Sets CALL_OVERHEAD (cost.py).
- [PG4c] 64x64x64 int16 matmul, 2048 cycles ideal: the MAC-bound cycles of the
  same kernel in the model (device MAC rate, [F] int16 = 64 per cycle).
- [I2735] whole-array GEMM kernels alone "at most about 80%": MAC efficiency of
  one 64^3 bf16 kernel call. Sets MATMUL_BLOCK_OVERHEAD.
- [I2735] whole-array GEMM on npu1, about 75% of peak int16 and 50% bf16: the
  whole-array design of benchmarks/sim_bench.py (16 cores, 64^3 tiles), simulated.
- [I1198] 512^3 single-core matmul, Phoenix bf16 43% of peak: the same design on
  a 1 x 1 grid, simulated.
- EQueue FIR on AIE1 (xcvc1902), 512 int32 samples, 32 taps: the vendor
  simulator's 2276 cycles for one kernel and 539 for four chained kernels of 8
  taps (EQueue's own model: 2048 and 538).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from sim_bench import gemm_plan, whole_array_gemm  # noqa: E402

import simulator  # noqa: E402
import tilelang as tl  # noqa: E402
from simulator import cost  # noqa: E402

NPU1 = tl.device("npu1")


def vector_scalar_mul_kernel() -> int:
    @tl.kernel
    def scale(a: tl.Tile[(1024,), tl.i16], c: tl.Tile[(1024,), tl.i16], f: tl.i16):
        c[...] = a * f

    return cost.kernel_cycles(scale, NPU1)


def _mac_kernel(dt, acc, t=64):
    @tl.kernel
    def mac(a: tl.Tile[(t, t), dt], b: tl.Tile[(t, t), dt], c: tl.Tile[(t, t), acc]):
        c[...] += a @ b

    return mac


def matmul_i16_mac_bound() -> int:
    s = cost.kernel_slots(_mac_kernel(tl.i16, tl.i32), NPU1)
    return int(s.mac)


def bf16_kernel_efficiency() -> float:
    ideal = 64**3 / NPU1.macs_per_cycle(tl.bf16)
    return ideal / cost.kernel_cycles(_mac_kernel(tl.bf16, tl.f32), NPU1)


def gemm_efficiency(size: int, dtype, rows: int, cols: int) -> float:
    d = whole_array_gemm(size, size, size, dtype, rows=rows, cols=cols)
    p = gemm_plan(d, rows, cols)
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (size, size)).astype(np.float32 if dtype.is_float else dtype.numpy)
    b = rng.integers(-3, 4, (size, size)).astype(np.float32 if dtype.is_float else dtype.numpy)
    res = simulator.simulate(p, A=a, B=b)
    assert np.array_equal(res.outputs["C"].astype(np.float64), a.astype(np.float64) @ b.astype(np.float64))
    peak = NPU1.macs_per_cycle(dtype) * rows * cols
    return size**3 / (res.cycles * peak)


def fir_single() -> int:
    """One FIR kernel: 481 outputs of 32 taps over 512 int32 samples (EQueue's FIR)."""
    dev = tl.device("xcvc1902")
    return cost.kernel_cycles(_fir_kernel(32, 0, False), dev)


def _fir_kernel(taps: int, first: int, partial: bool, name: str = "fir"):
    n_out = 481

    if partial:
        def fir(x: tl.Tile[(512,), tl.i32], h: tl.Tile[(32,), tl.i32], p: tl.Tile[(n_out,), tl.i32],
                y: tl.Tile[(n_out,), tl.i32]):
            acc = p
            for k in range(first, first + taps):
                acc = acc + x[k : k + n_out] * h[k : k + 1]
            y[...] = acc
    else:
        def fir(x: tl.Tile[(512,), tl.i32], h: tl.Tile[(32,), tl.i32], y: tl.Tile[(n_out,), tl.i32]):
            acc = x[first : first + n_out] * h[first : first + 1]
            for k in range(first + 1, first + taps):
                acc = acc + x[k : k + n_out] * h[k : k + 1]
            y[...] = acc

    fir.__name__ = name
    return tl.kernel(fir)


def fir_chain(chunks: int = 1) -> int:
    """Four cores of 8 taps each, partial sums passed through neighbour shared memory.

    Returns the span from the first kernel start to the last kernel end (the
    vendor figure counts the kernels, not the host transfers).
    """
    k0 = _fir_kernel(8, 0, False, "fir0")
    ks = [_fir_kernel(8, 8 * i, True, f"fir{i}") for i in range(1, 4)]

    @tl.design(device="xcvc1902")
    def fir4(X: tl.Tensor[(512,), tl.i32], H: tl.Tensor[(32,), tl.i32], Y: tl.Tensor[(481,), tl.i32]):
        xs = [tl.fifo(tl.Tile[(512,), tl.i32], depth=1, name=f"x{i}") for i in range(4)]
        hs = [tl.fifo(tl.Tile[(32,), tl.i32], depth=1, name=f"h{i}") for i in range(4)]
        ps = [tl.fifo(tl.Tile[(481,), tl.i32], depth=1, name=f"p{i}") for i in range(4)]
        for i in range(4):
            @tl.core(name=f"stage{i}", tile=(2, 1 + i))
            def body(i=i):
                x, h, y = xs[i].acquire(), hs[i].acquire(), ps[i].acquire()
                if i == 0:
                    k0(x, h, y)
                else:
                    p = ps[i - 1].acquire()
                    ks[i - 1](x, h, p, y)
                    ps[i - 1].release()
                xs[i].release()
                hs[i].release()
                ps[i].release()

        for i in range(4):
            tl.dma(X, xs[i])
            tl.dma(H, hs[i])
        tl.dma(ps[3], Y)

    from test_sim_support import hand_plan

    plan = hand_plan(fir4, {f"stage{i}": (2, 1 + i) for i in range(4)}, shim=(2, 0),
                     shared={f"p{i}": (2, 2 + i) for i in range(3)})
    rng = np.random.default_rng(0)
    x = rng.integers(-100, 100, 512).astype(np.int32)
    h = rng.integers(-10, 10, 32).astype(np.int32)
    res = simulator.simulate(plan, X=x, H=h)
    assert np.array_equal(res.outputs["Y"], np.convolve(x, h[::-1], mode="valid").astype(np.int32))
    calls = [s for s in res.trace.spans() if s[1].startswith("fir")]
    return max(s[2] + s[3] for s in calls) - min(s[2] for s in calls)


def rows() -> list[tuple[str, float, float, str, str]]:
    """(figure, published, simulated, unit, role)."""
    out = [
        ("vector_scalar_mul 1024 x i16 kernel [PG4c]", 72, vector_scalar_mul_kernel(), "cycles", "sets CALL_OVERHEAD"),
        ("64^3 i16 matmul, MAC-bound [PG4c]", 2048, matmul_i16_mac_bound(), "cycles", "tests MAC rate i16"),
        ("64^3 bf16 kernel alone, % peak [I2735]", 80, 100 * bf16_kernel_efficiency(), "%",
         "sets MATMUL_BLOCK_OVERHEAD"),
        ("whole-array GEMM 1024^3 i16, % peak [I2735]", 75, 100 * gemm_efficiency(1024, tl.i16, 4, 4), "%", "tests"),
        ("whole-array GEMM 1024^3 bf16, % peak [I2735]", 50, 100 * gemm_efficiency(1024, tl.bf16, 4, 4), "%",
         "tests"),
        ("single-core 512^3 bf16, % peak [I1198]", 43, 100 * gemm_efficiency(512, tl.bf16, 1, 1), "%", "tests"),
        ("FIR 32 taps, 1 kernel, AIE1 [EQueue]", 2276, fir_single(), "cycles", "tests"),
        ("FIR 32 taps, 4 kernels, AIE1 [EQueue]", 539, fir_chain(), "cycles", "tests"),
    ]
    return out


def main() -> None:
    print(f"{'figure':<48} {'published':>10} {'simulated':>10} {'error':>8}  unit    role")
    for name, pub, sim, unit, role in rows():
        err = (sim - pub) / pub
        print(f"{name:<48} {pub:>10.0f} {sim:>10.1f} {err:>+8.1%}  {unit:<7} {role}")


if __name__ == "__main__":
    main()
