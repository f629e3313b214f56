"""A four-stage FIR filter whose partial sums travel over cascade streams (``tl.cascade``).

y[t] = sum_k h[k] x[t + k] over ``taps`` coefficients, split into four stages of ``taps / 4``
coefficients each, one core per stage, as the vendor's cascaded FIR designs split it: stage 0 computes
its partial sums of a chunk of outputs and sends them over the cascade to stage 1, which adds its own
and sends them on, and stage 3 writes the finished chunk to the host. Each stage reads its own window
of the input (the chunk plus its taps' history) from the host. The planner places the four cores
along the device's cascade: east or south on AIE-ML / AIE2 (npu1), along AIE1's fixed snake on the
VC1902 (xcvc1902). A cascade moves whole cascade words (512 bits on AIE-ML, 384 on AIE1), so the
partial sums of a chunk are padded with zeros to whole words where needed.

Two designs, each checked against numpy's convolution: ``cascade_fir`` on npu1 and ``cascade_fir_aie1``
on xcvc1902.

Run: python examples/cascade_fir.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402
from tilelang.devices.cascade_rules import cascade_spec  # noqa: E402
from tilelang.ir.verify import shim_pattern_dims  # noqa: E402

STAGES = 4


def _stage_kernel(chunk: int, width: int, taps: list[int], first: bool, last: bool, name: str):
    """One stage: ``chunk`` partial sums of ``taps`` over a window of ``chunk + len(taps) - 1`` samples.

    A stage that is not the first adds the partial sums it takes (``p``, ``width`` long, the first
    ``chunk`` meaningful); one that is not the last writes them, zero-padded to ``width``, to ``s``.
    """
    n = len(taps)
    window = chunk + n - 1

    def body(x, p, out) -> None:  # noqa: ANN001 - traced tiles
        acc = x[0:chunk] * taps[0] if p is None else p[0:chunk] + x[0:chunk] * taps[0]
        for k in range(1, n):
            acc = acc + x[k : k + chunk] * taps[k]
        out[0:chunk] = acc
        if not last and width > chunk:
            out[chunk:width] = x[0 : width - chunk] * 0

    out_len = chunk if last else width
    if first:
        def fir(x: tl.Tile[(window,), tl.i32], s: tl.Tile[(out_len,), tl.i32]):
            body(x, None, s)
    else:
        def fir(x: tl.Tile[(window,), tl.i32], p: tl.Tile[(width,), tl.i32], s: tl.Tile[(out_len,), tl.i32]):
            body(x, p, s)
    fir.__name__ = name
    return tl.kernel(fir)


def cascade_fir(samples: int = 2048, taps: int = 32, chunk: int = 64, device: str = "npu1",
                coefficients: Sequence[int] | None = None):
    """The design: ``samples`` outputs of a ``taps``-tap FIR in chunks of ``chunk``, over four cascaded cores.

    Args:
        samples: outputs (the input has ``samples + taps - 1`` samples).
        taps: coefficients, a multiple of four.
        chunk: outputs per kernel call; divides ``samples``.
        device: the device.
        coefficients: the taps (default: a fixed pseudo-random set in [-10, 10)).

    Returns:
        The Design with tensors ``X`` (input) and ``Y`` (output).
    """
    h = list(coefficients) if coefficients is not None else fir_taps(taps)
    per = taps // STAGES
    n = samples // chunk
    window = chunk + per - 1
    word = cascade_spec(tl.device(device)).word_bytes // 4  # i32 lanes per cascade word
    width = -(-chunk // word) * word  # partial sums padded to whole cascade words
    ks = [_stage_kernel(chunk, width, h[per * i : per * (i + 1)], i == 0, i == STAGES - 1, f"fir_stage{i}")
          for i in range(STAGES)]

    @tl.design(device=device)
    def cascade_fir(X: tl.Tensor[(samples + taps - 1,), tl.i32], Y: tl.Tensor[(samples,), tl.i32]):
        xs = [tl.fifo(tl.Tile[(window,), tl.i32], depth=2, name=f"x{i}") for i in range(STAGES)]
        y = tl.fifo(tl.Tile[(chunk,), tl.i32], depth=2, name="y")
        sums = [tl.cascade(tl.Tile[(width,), tl.i32], name=f"sum{i}") for i in range(STAGES - 1)]
        for i in range(STAGES):
            def stage(i: int = i) -> None:
                for _ in tl.range(n):
                    x = xs[i].acquire()
                    if i == 0:
                        ks[0](x, sums[0])
                    elif i < STAGES - 1:
                        ks[i](x, sums[i - 1], sums[i])
                    else:
                        out = y.acquire()
                        ks[i](x, sums[i - 1], out)
                        y.release()
                    xs[i].release()

            tl.core(stage, name=f"stage{i}")
        if shim_pattern_dims(tl.device(device)) > 1:  # one move per stage: its windows, overlapping
            for i in range(STAGES):
                tl.dma(X, xs[i], pattern=tl.pattern(per * i, [n, window], [chunk, 1]))
        else:  # AIE1's shim DMA walks one dimension: one move per window, in chunk order
            for j in range(n):
                for i in range(STAGES):
                    tl.dma(X, xs[i], pattern=tl.pattern(per * i + j * chunk, [window], [1]))
        tl.dma(y, Y)

    return cascade_fir


def fir_taps(taps: int) -> list[int]:
    """Fixed pseudo-random coefficients in [-10, 10)."""
    return [int(v) for v in np.random.default_rng(0).integers(-10, 10, taps)]


def reference(x: np.ndarray, h: Sequence[int]) -> np.ndarray:
    """numpy's answer: y[t] = sum_k h[k] x[t + k] (wrapping in int32, as the kernels do)."""
    return np.convolve(x.astype(np.int64), np.asarray(h[::-1], np.int64), mode="valid").astype(np.int32)


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    status = 0
    # eight chunks: AIE1's shim walks one window per BD, and a shim tile serving two stages has 16 BDs
    samples, taps, chunk = (512, 32, 64) if args.small else (2048, 32, 256)
    rng = np.random.default_rng(1)
    x = rng.integers(-100, 100, samples + taps - 1).astype(np.int32)
    h = fir_taps(taps)
    for name, device in (("cascade_fir", "npu1"), ("cascade_fir_aie1", "xcvc1902")):
        d = cascade_fir(samples, taps, chunk, device, h)
        status |= harness.run(name, d, {"X": x}, {"Y": reference(x, h)}, args)
    print(f"cascade_fir: 2 designs, {'all match numpy' if status == 0 else 'a MISMATCH above'}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
