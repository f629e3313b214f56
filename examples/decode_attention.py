"""decode_attention: one decoding step's attention with grouped-query heads on npu2 (FlashDecoding).

``tl.library.attention(..., split_kv=N)``: each query head has one row (the token being generated), every four
query heads share a key/value head (grouped-query attention, as Llama 3's 32 over 8), and the keys are many. The
four rows of a key/value head's query heads go through as one block, and its keys are split over N pipelines of
three cores, each with its own shim channels for its run of K^T and V; one more core merges the pipelines'
partial softmaxes (each output weighted by exp(its row maximum - the overall one) times its row sum). K^T comes
in contiguous key blocks of 64 keys (``kt_layout="blocks"``, as a paged KV cache keeps them): one DMA run per
block instead of 128 short ones. The result is compared with the exact attention within docs/library.md's
bound, 4 x 2^-9 x max|V|.

Run: python examples/decode_attention.py [--small]
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
    heads, kv_heads, skv, d = (8, 2, 512, 64) if args.small else (32, 8, 4096, 128)
    group = heads // kv_heads
    block_kv = 64
    design = tl.library.attention(1, skv, d, dtype=tl.bf16, device="npu2", heads=heads, kv_heads=kv_heads,
                                  block_q=group, block_kv=block_kv, split_kv=4, kt_layout="blocks")
    rng = np.random.default_rng(5)
    q = rng.uniform(-2, 2, (heads, 1, d)).astype(ml_dtypes.bfloat16)
    kt = rng.uniform(-2, 2, (kv_heads, d, skv)).astype(ml_dtypes.bfloat16)
    v = rng.uniform(-2, 2, (kv_heads, skv, d)).astype(ml_dtypes.bfloat16)
    want = np.empty((heads, 1, d))
    for h in range(heads):  # query head h reads key/value head h // group
        s = q[h].astype(np.float64) @ kt[h // group].astype(np.float64) / np.sqrt(d)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        want[h] = (p / p.sum(axis=1, keepdims=True)) @ v[h // group].astype(np.float64)
    tol = harness.Tolerance(atol=4 * 2.0**-9 * float(np.abs(v.astype(np.float64)).max()))
    # K^T (kv_heads, d, skv) in key blocks: (kv_heads, skv / block_kv, d, block_kv), each block contiguous
    kt_blocks = np.ascontiguousarray(kt.reshape(kv_heads, d, skv // block_kv, block_kv).transpose(0, 2, 1, 3))
    return harness.run("decode_attention", design, {"Q": q, "KT": kt_blocks, "V": v}, {"O": want}, args,
                       tolerance=tol, macs=2 * heads * skv * d)


if __name__ == "__main__":
    raise SystemExit(main())
