"""attention: O = softmax(Q K^T / sqrt(d)) V in bf16 on npu1 (mlir-aie programming_examples/ml/mha).

``tl.library.attention``: pipelines of three cores, one per column: ``qk`` computes a block of scores
against each block of keys, ``sm`` keeps each query row's running maximum and sum (FlashAttention's
online softmax) and hands on the exponentials, ``pv`` rescales and accumulates them against the values.
The keys and values stream past every pipeline (one broadcast each); no row of scores is held whole. The
result is compared with the exact attention within docs/library.md's bound, 4 x 2^-9 x max|V|.

Run: python examples/attention.py [--small]
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


def main(argv: Sequence[str] | None = None) -> int:
    args = harness.arguments(__doc__.splitlines()[0], argv)
    sq, skv, d = (128, 128, 64) if args.small else (1024, 1024, 64)
    design = tl.library.attention(sq, skv, d, dtype=tl.bf16, device="npu1")
    rng = np.random.default_rng(11)
    q, kt, v = (rng.uniform(-2, 2, shape).astype(ml_dtypes.bfloat16) for shape in ((sq, d), (d, skv), (skv, d)))
    s = q.astype(np.float64) @ kt.astype(np.float64) / np.sqrt(d)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)
    tol = harness.Tolerance(atol=4 * 2.0**-9 * float(np.abs(v.astype(np.float64)).max()))
    return harness.run("attention", design, {"Q": q, "KT": kt, "V": v}, {"O": want}, args, tolerance=tol,
                       macs=2 * sq * skv * d)


if __name__ == "__main__":
    raise SystemExit(main())
