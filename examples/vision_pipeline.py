"""vision_pipeline: RGBA -> gray -> edges -> threshold on three chained cores
(after mlir-aie programming_examples/vision/edge_detect: rgba2gray, filter2d, threshold).

One image line per fifo element. Core 1 turns an RGBA line into fixed-point
luminance (77 R + 150 G + 29 B, 8 fractional bits); core 2 keeps a window of
three gray lines (acquire 3, release 1) and applies the 3 x 3 Laplacian;
core 3 marks pixels whose edge response exceeds a threshold (255) or not
(0). The planner puts neighbouring stages next to each other, so the lines
between cores are handed over in shared memory.

Run: python examples/vision_pipeline.py [--small]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

import tilelang as tl  # noqa: E402

#: Edge strength above which a pixel is marked, in fixed-point gray units (8 fractional bits).
THRESHOLD = 40 * 256


def vision_pipeline(height: int = 64, width: int = 128, device: str = "npu1"):
    """A (height, width, 4) RGBA image -> C (height - 2, width - 2) binary edge map."""
    w, wo = width, width - 2

    @tl.kernel
    def rgba2gray(px: tl.Tile[(w, 4), tl.i32], gray: tl.Tile[(w,), tl.i32]):
        gray[...] = px[:, 0] * 77 + px[:, 1] * 150 + px[:, 2] * 29

    @tl.kernel
    def laplacian(up: tl.Tile[(w,), tl.i32], mid: tl.Tile[(w,), tl.i32], down: tl.Tile[(w,), tl.i32],
                  edge: tl.Tile[(wo,), tl.i32]):
        edge[...] = up[1:-1] + down[1:-1] + mid[0:-2] + mid[2:] - mid[1:-1] * 4

    @tl.kernel
    def threshold(edge: tl.Tile[(wo,), tl.i32], mask: tl.Tile[(wo,), tl.i32]):
        strength = abs(edge)
        mask[...] = tl.where(strength > THRESHOLD, 255, strength * 0)

    @tl.design(device=device)
    def vision_pipeline(A: tl.Tensor[(height, width, 4), tl.i32], C: tl.Tensor[(height - 2, wo), tl.i32]):
        rgba = tl.fifo(tl.Tile[(w, 4), tl.i32], name="rgba")
        gray = tl.fifo(tl.Tile[(w,), tl.i32], depth=4, name="gray")  # 3 held by the window, 1 being filled
        edges = tl.fifo(tl.Tile[(wo,), tl.i32], name="edges")
        out = tl.fifo(tl.Tile[(wo,), tl.i32], name="out")

        @tl.core(name="to_gray")
        def to_gray():
            for _ in tl.range(height):
                px, g = rgba.acquire(), gray.acquire()
                rgba2gray(px, g)
                rgba.release()
                gray.release()

        @tl.core(name="filter")
        def filter2d():
            for _ in tl.range(height - 2):
                up, mid, down = gray.acquire(3)  # after the first line, acquires only the newest
                e = edges.acquire()
                laplacian(up, mid, down, e)
                gray.release(1)
                edges.release()
            gray.release(2)

        @tl.core(name="mark")
        def threshold_core():
            for _ in tl.range(height - 2):
                e, m = edges.acquire(), out.acquire()
                threshold(e, m)
                edges.release()
                out.release()

        tl.dma(A, rgba, pattern=tl.tiles((1, width, 4)))
        tl.dma(out, C, pattern=tl.tiles((1, wo)))

    return vision_pipeline


def reference(img: np.ndarray) -> np.ndarray:
    gray = img[..., 0] * 77 + img[..., 1] * 150 + img[..., 2] * 29
    lap = gray[:-2, 1:-1] + gray[2:, 1:-1] + gray[1:-1, :-2] + gray[1:-1, 2:] - 4 * gray[1:-1, 1:-1]
    return np.where(np.abs(lap) > THRESHOLD, 255, 0).astype(np.int32)


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    h, w = (16, 32) if args.small else (120, 160)
    rng = np.random.default_rng(9)
    # a smooth gradient with a bright square and noise: edges along the square's border
    yy, xx = np.mgrid[0:h, 0:w]
    base = (xx * 200 // w + yy * 40 // h)[..., None] + rng.integers(0, 8, (h, w, 4))
    base[h // 4:3 * h // 4, w // 4:3 * w // 4] += 50
    img = np.clip(base, 0, 255).astype(np.int32)
    img[..., 3] = 255
    return harness.run("vision_pipeline", vision_pipeline(h, w), {"A": img}, {"C": reference(img)}, args)


if __name__ == "__main__":
    raise SystemExit(main())
