"""``tl.library.attention`` equals numpy's softmax(Q K^T * scale) V within docs/library.md's bound, on every
device family, and refuses what cannot work with a message naming the argument."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import tilelang as tl
from tilelang.errors import DesignError


def reference(q: np.ndarray, kt: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    s = q.astype(np.float64) @ kt.astype(np.float64) * scale
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def inputs(sq: int, skv: int, d: int, dtype: object, seed: int = 0, spread: float = 2.0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    np_dt = ml_dtypes.bfloat16 if dtype is tl.bf16 else np.float32
    return {"Q": rng.uniform(-spread, spread, (sq, d)).astype(np_dt),
            "KT": rng.uniform(-spread, spread, (d, skv)).astype(np_dt),
            "V": rng.uniform(-spread, spread, (skv, d)).astype(np_dt)}


def bound(dtype: object, v: np.ndarray) -> float:
    """docs/library.md "attention": 4 x 2^-9 x max|V| (bf16), 1e-5 x max|V| (f32)."""
    top = float(np.abs(v.astype(np.float64)).max())
    return (4 * 2.0**-9 if dtype is tl.bf16 else 1e-5) * top


def run(design: object, x: dict[str, np.ndarray]) -> np.ndarray:
    res = tl.simulate(tl.plan(design, strategy="greedy"), **x)
    return res.outputs["O"].astype(np.float64)


@pytest.mark.parametrize(("device", "dtype", "sq", "skv", "d", "kw"), [
    ("npu1", tl.bf16, 128, 128, 64, {}),
    ("npu1", tl.bf16, 96, 192, 32, {"block_q": 16, "block_kv": 32, "pipelines": 2}),
    ("npu1", tl.f32, 64, 64, 32, {"block_q": 16, "block_kv": 32}),
    ("npu2", tl.bf16, 256, 64, 64, {}),
    ("xcve2802", tl.bf16, 64, 128, 32, {"block_q": 16}),
    ("xcvc1902", tl.f32, 64, 64, 32, {"block_q": 16}),
])
def test_attention_equals_numpy_within_the_documented_bound(device, dtype, sq, skv, d, kw):
    x = inputs(sq, skv, d, dtype)
    got = run(tl.library.attention(sq, skv, d, dtype=dtype, device=device, **kw), x)
    want = reference(x["Q"], x["KT"], x["V"], 1 / np.sqrt(d))
    assert np.abs(got - want).max() <= bound(dtype, x["V"])


def test_a_row_whose_maximum_rises_late_is_rescaled():
    """Scores that grow along the keys: every key block raises each row's maximum, so every step rescales the
    running sum and output (with exp(m_old - m_new) far below 1); a missed rescale is off by far more than the
    bound."""
    sq, skv, d = 32, 256, 32
    x = inputs(sq, skv, d, tl.f32, seed=3, spread=0.5)
    x["Q"][:, 0] = 4.0
    x["KT"][0, :] = np.linspace(-3.0, 3.0, skv, dtype=np.float32)  # score ~ 12 * key position
    got = run(tl.library.attention(sq, skv, d, dtype=tl.f32, block_q=16, block_kv=32), x)
    want = reference(x["Q"], x["KT"], x["V"], 1 / np.sqrt(d))
    assert np.abs(got - want).max() <= bound(tl.f32, x["V"])


def test_the_scale_is_the_callers():
    sq, skv, d = 32, 64, 32
    x = inputs(sq, skv, d, tl.f32, seed=5)
    got = run(tl.library.attention(sq, skv, d, dtype=tl.f32, block_q=16, block_kv=32, scale=0.5), x)
    assert np.abs(got - reference(x["Q"], x["KT"], x["V"], 0.5)).max() <= bound(tl.f32, x["V"])


def test_the_pipeline_count_changes_the_cycles_not_the_numbers():
    sq, skv, d = 128, 64, 32
    x = inputs(sq, skv, d, tl.bf16, seed=7)
    outs, cycles = [], []
    for p in (1, 2, 4):
        design = tl.library.attention(sq, skv, d, device="npu1", pipelines=p, block_q=32, block_kv=32)
        assert len(design.cores) == 3 * p
        res = tl.simulate(tl.plan(design, strategy="greedy"), **x)
        outs.append(res.outputs["O"])
        cycles.append(res.cycles)
    assert all(np.array_equal(outs[0], o) for o in outs[1:])
    assert cycles[0] > cycles[1] > cycles[2]


def test_default_pipelines_are_one_per_column_the_shims_feed():
    assert len(tl.library.attention(256, 64, 64, device="npu1").cores) == 3 * 4
    assert len(tl.library.attention(512, 64, 64, device="npu2").cores) == 3 * 8
    # 3 query blocks: the most pipelines dividing them
    assert len(tl.library.attention(96, 64, 64, device="npu1").cores) == 3 * 3


def test_default_key_blocks_are_the_largest_that_divide_and_fit():
    """block_kv=None: the largest power of two up to 128 that divides Skv and whose buffers fit as the planner
    lays them out (both MLIR levels keep that layout); the whole of KT on AIE1 (linear shim walks)."""
    def key_block(**kw):
        return tl.library.attention(**kw).fifo("kt").elem.shape[1]

    assert key_block(Sq=64, Skv=256, d=32) == 128
    assert key_block(Sq=64, Skv=96, d=32) == 32  # 128 and 64 do not divide 96
    assert key_block(Sq=64, Skv=256, d=64) == 128
    # d = 128: at 64 keys the pv core's V and output blocks (2 x 16 KiB, 2 x 8 KiB) and f32 accumulator (16 KiB)
    # overflow its 64 KiB
    assert key_block(Sq=64, Skv=256, d=128) == 32
    assert key_block(Sq=64, Skv=256, d=64, dtype=tl.f32) == 64  # f32 scores and P: 2 x 32 KiB at 128 keys
    assert key_block(Sq=64, Skv=96, d=32, device="xcvc1902", dtype=tl.f32) == 96


def test_default_key_blocks_plan_and_go_through_mlir_aie_at_both_levels():
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    for kw in ({"d": 64}, {"d": 128}, {"d": 64, "dtype": tl.f32}):
        plan = tl.plan(tl.library.attention(128, 256, **kw), strategy="greedy")
        for level in vendor.LEVELS:
            vendor.compile_text(tl.emit_mlir(plan, level=level), level)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((64, 64, 32), {"dtype": tl.i16}, "needs a float dtype"),
    ((64, 64, 32), {"block_q": 48}, "Sq (query rows) by block_q: 64 is not a multiple of 48"),
    ((64, 96, 32), {"block_kv": 64}, "Skv (key rows) by block_kv: 96 is not a multiple of 64"),
    ((64, 64, 32), {"pipelines": 5, "block_q": 16}, "5 pipelines need 5 compute columns"),
    ((96, 64, 32), {"pipelines": 2}, "the 3 query blocks over 2 pipelines"),
    ((64, 64, 32), {"scale": 0.0}, "scale must be a finite number > 0"),
    ((64, 64, 32), {"pipelines": True}, "pipelines must be a positive int or None"),
    ((64, 0, 32), {}, "Skv must be a positive int"),
    ((64, 128, 32), {"device": "xcvc1902", "dtype": tl.f32, "block_kv": 64}, "use block_kv=128"),
    ((64, 128, 32), {"causal": True}, "self-attention (Sq == Skv), got Sq=64, Skv=128"),
    ((128, 128, 32), {"causal": True, "block_q": 64, "block_kv": 32}, "block_kv a multiple of block_q"),
    ((64, 64, 32), {"causal": 1}, "causal must be True or False"),
])
def test_attention_rejects_what_cannot_work(args, kwargs, message):
    with pytest.raises(DesignError, match=re.escape(message)):
        tl.library.attention(*args, **kwargs)


def test_a_device_whose_shims_cannot_feed_one_pipeline_is_refused_by_the_factory():
    from tilelang.tenancy.colocate import partition

    one_column = partition(tl.device("npu2"), 1)  # one shim: 2 MM2S channels; a pipeline takes 3 fills
    with pytest.raises(DesignError, match=re.escape("one pipeline (its query fill, the K^T and V fills): 3 shim "
                                                    "MM2S channels")):
        tl.library.attention(64, 64, 32, device=one_column)


def test_a_block_too_large_for_a_core_is_a_plan_error_naming_the_buffers():
    design = tl.library.attention(256, 256, 128, device="npu1", block_q=64, block_kv=128)
    with pytest.raises(tl.PlanError, match="data memory"):
        tl.plan(design, strategy="greedy")


def causal_reference(q: np.ndarray, kt: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    s = q.astype(np.float64) @ kt.astype(np.float64) * scale
    s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)  # query i sees keys 0..i
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.parametrize(("device", "dtype", "s", "d", "kw"), [
    ("npu1", tl.bf16, 128, 64, {"block_q": 32, "block_kv": 32}),
    ("npu1", tl.bf16, 256, 64, {}),
    ("npu1", tl.f32, 96, 32, {"block_q": 16, "block_kv": 48, "pipelines": 2}),
    ("npu2", tl.bf16, 256, 32, {"block_q": 16}),
    ("xcvc1902", tl.f32, 64, 32, {"block_q": 16, "block_kv": 64}),
])
def test_causal_attention_equals_numpy_within_the_documented_bound(device, dtype, s, d, kw):
    x = inputs(s, s, d, dtype, seed=2)
    got = run(tl.library.attention(s, s, d, dtype=dtype, device=device, causal=True, **kw), x)
    assert np.abs(got - causal_reference(x["Q"], x["KT"], x["V"], 1 / np.sqrt(d))).max() <= bound(dtype, x["V"])


def test_causal_attention_skips_the_key_blocks_no_query_sees():
    s, d, bq, bkv = 256, 32, 16, 32
    design = tl.library.attention(s, s, d, dtype=tl.f32, causal=True, block_q=bq, block_kv=bkv)
    res = tl.simulate(tl.plan(design, strategy="greedy"), **inputs(s, s, d, tl.f32))
    # query block b sees key blocks 0 .. ((b + 1) bq - 1) // bkv
    want = sum(((b + 1) * bq - 1) // bkv + 1 for b in range(s // bq))
    got = sum(st.calls for name, st in res.stats.cores.items() if name.startswith("qk_"))
    assert got == want < (s // bq) * (s // bkv)


@pytest.mark.parametrize(("heads", "kv_heads", "causal", "device"), [
    (2, None, False, "npu1"), (4, 2, False, "npu1"), (4, 1, True, "npu1"), (2, 2, True, "npu2")])
def test_heads_and_grouped_query_heads_equal_numpy_per_head(heads, kv_heads, causal, device):
    s, d = 64, 32
    hkv = kv_heads or heads
    rng = np.random.default_rng(9)
    x = {"Q": rng.uniform(-2, 2, (heads, s, d)), "KT": rng.uniform(-2, 2, (hkv, d, s)),
         "V": rng.uniform(-2, 2, (hkv, s, d))}
    x = {k: a.astype(ml_dtypes.bfloat16) for k, a in x.items()}
    design = tl.library.attention(s, s, d, device=device, heads=heads, kv_heads=kv_heads, causal=causal,
                                  block_q=16, block_kv=32)
    got = run(design, x)
    ref = causal_reference if causal else reference
    for h in range(heads):
        g = h // (heads // hkv)  # query head h reads key/value head g
        want = ref(x["Q"][h], x["KT"][g], x["V"][g], 1 / np.sqrt(d))
        assert np.abs(got[h] - want).max() <= bound(tl.bf16, x["V"])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"heads": 4, "kv_heads": 3}, "heads by kv_heads: 4 is not a multiple of 3"),
    ({"kv_heads": 2}, "kv_heads needs heads"),
    ({"heads": 0}, "heads must be a positive int"),
])
def test_heads_reject_what_cannot_work(kwargs, message):
    with pytest.raises(DesignError, match=re.escape(message)):
        tl.library.attention(64, 64, 32, **kwargs)


def test_any_arguments_give_numpys_answer_or_a_tilelang_error():
    """A seeded sweep over devices, dtypes, block sizes, sequence lengths, heads, pipelines and the mask: every
    point either equals numpy within the bound or is refused with a tilelang error (never another exception)."""
    import random

    rng = random.Random(1)
    outcomes = {"ok": 0, "refused": 0}
    for i in range(48):
        dev = rng.choice(["npu1", "npu2", "xcvc1902", "xcve2802"])
        dt = tl.f32 if dev == "xcvc1902" or rng.random() < 0.3 else tl.bf16
        bq, bkv = rng.choice([8, 16, 32, 48]), rng.choice([8, 16, 32, 64, 96])
        sq, skv, d = bq * rng.choice([1, 2, 3, 4, 6]), bkv * rng.choice([1, 2, 3]), rng.choice([8, 16, 32, 64])
        causal = rng.random() < 0.4
        skv = sq if causal else skv
        heads = rng.choice([None, None, 2, 3])
        kv_heads = rng.choice([None, 1]) if heads else None
        kw = {"dtype": dt, "device": dev, "block_q": bq, "block_kv": bkv, "causal": causal, "heads": heads,
              "kv_heads": kv_heads, "pipelines": rng.choice([None, None, 1, 2, 5]), "split_kv": rng.choice([1, 1, 2, 4])}
        try:
            design = tl.library.attention(sq, skv, d, **kw)
            plan = tl.plan(design, strategy="greedy")
        except tl.TileLangError:
            outcomes["refused"] += 1
            continue
        h, hk = heads or 1, kv_heads or heads or 1
        lead, lead_kv = ((h,), (hk,)) if heads else ((), ())
        r = np.random.default_rng(i)
        np_dt = ml_dtypes.bfloat16 if dt is tl.bf16 else np.float32
        x = {"Q": r.uniform(-2, 2, (*lead, sq, d)).astype(np_dt), "KT": r.uniform(-2, 2, (*lead_kv, d, skv)).astype(np_dt),
             "V": r.uniform(-2, 2, (*lead_kv, skv, d)).astype(np_dt)}
        got = tl.simulate(plan, **x).outputs["O"].astype(np.float64)
        ref = causal_reference if causal else reference
        if heads:
            want = np.stack([ref(x["Q"][j], x["KT"][j // (h // hk)], x["V"][j // (h // hk)], 1 / np.sqrt(d))
                             for j in range(h)])
        else:
            want = ref(x["Q"], x["KT"], x["V"], 1 / np.sqrt(d))
        assert np.abs(got - want).max() <= bound(dt, x["V"]), (sq, skv, d, kw)
        outcomes["ok"] += 1
    assert outcomes["ok"] >= 8 and outcomes["refused"] >= 4, outcomes


@pytest.mark.parametrize(("device", "dtype", "sq", "skv", "d", "kw"), [
    ("npu1", tl.bf16, 1, 512, 64, {"block_q": 1, "split_kv": 2}),
    ("npu1", tl.bf16, 16, 384, 32, {"block_q": 8, "block_kv": 32, "split_kv": 3}),
    ("npu1", tl.f32, 8, 256, 32, {"block_q": 8, "block_kv": 32, "split_kv": 2}),
    ("npu2", tl.bf16, 8, 1024, 64, {"block_q": 8, "split_kv": 4}),
    ("xcve2802", tl.bf16, 8, 512, 32, {"block_q": 8, "split_kv": 2}),
])
def test_split_kv_equals_numpy_within_the_documented_bound(device, dtype, sq, skv, d, kw):
    x = inputs(sq, skv, d, dtype, seed=11)
    got = run(tl.library.attention(sq, skv, d, dtype=dtype, device=device, **kw), x)
    assert np.abs(got - reference(x["Q"], x["KT"], x["V"], 1 / np.sqrt(d))).max() <= bound(dtype, x["V"])


def test_split_kv_merges_parts_whose_maxima_differ_by_far():
    """Keys whose scores rise along the sequence: each pipeline's run of keys has its own, very different row
    maximum, so the merge's weights exp((m_p - M) * scale) span many orders of magnitude; a merge that drops them
    (or the sums l_p) is off by far more than the bound."""
    sq, skv, d = 8, 288, 32
    x = inputs(sq, skv, d, tl.f32, seed=13, spread=0.5)
    x["Q"][:, 0] = 4.0
    x["KT"][0, :] = np.linspace(-2.0, 2.0, skv, dtype=np.float32)
    got = run(tl.library.attention(sq, skv, d, dtype=tl.f32, block_q=8, block_kv=32, split_kv=3), x)
    assert np.abs(got - reference(x["Q"], x["KT"], x["V"], 1 / np.sqrt(d))).max() <= bound(tl.f32, x["V"])


@pytest.mark.parametrize(("heads", "kv_heads"), [(2, None), (4, 1)])
def test_split_kv_with_grouped_query_heads_equals_numpy_per_head(heads, kv_heads):
    s, skv, d = 8, 256, 32
    hkv = kv_heads or heads
    rng = np.random.default_rng(17)
    x = {"Q": rng.uniform(-2, 2, (heads, s, d)), "KT": rng.uniform(-2, 2, (hkv, d, skv)),
         "V": rng.uniform(-2, 2, (hkv, skv, d))}
    x = {k: a.astype(ml_dtypes.bfloat16) for k, a in x.items()}
    got = run(tl.library.attention(s, skv, d, heads=heads, kv_heads=kv_heads, block_q=8, block_kv=32, split_kv=2), x)
    for h in range(heads):
        g = h // (heads // hkv)
        want = reference(x["Q"][h], x["KT"][g], x["V"][g], 1 / np.sqrt(d))
        assert np.abs(got[h] - want).max() <= bound(tl.bf16, x["V"])


def test_split_kv_blocks_span_a_key_value_heads_query_heads_and_read_its_keys_once_per_block():
    """Decoding with grouped-query heads: one query row per head, the 4 query heads of each key/value head stacked
    into one block of 4 rows, so K^T and V are read once per key/value head (not once per query head)."""
    heads, kv_heads, skv, d = 8, 2, 512, 32
    rng = np.random.default_rng(19)
    x = {"Q": rng.uniform(-2, 2, (heads, 1, d)), "KT": rng.uniform(-2, 2, (kv_heads, d, skv)),
         "V": rng.uniform(-2, 2, (kv_heads, skv, d))}
    x = {k: a.astype(ml_dtypes.bfloat16) for k, a in x.items()}
    design = tl.library.attention(1, skv, d, heads=heads, kv_heads=kv_heads, block_q=4, block_kv=64, split_kv=2)
    res = tl.simulate(tl.plan(design, strategy="greedy"), **x)
    got = res.outputs["O"].astype(np.float64)
    for h in range(heads):
        g = h // (heads // kv_heads)
        assert np.abs(got[h] - reference(x["Q"][h], x["KT"][g], x["V"][g], 1 / np.sqrt(d))).max() <= bound(
            tl.bf16, x["V"])
    read = sum(m["bytes"] for name, m in res.stats.moves.items() if name.startswith(("fill_kt", "fill_v")))
    assert read == 2 * kv_heads * d * skv * 2  # K^T and V, bf16, once each


def test_split_kv_reads_the_keys_in_parallel():
    """Decoding (a few query rows, many keys) is bound by reading K^T and V; with the keys split over pipelines,
    each with its own shim channels, the same attention takes fewer cycles (npu1: 2 pipelines; npu2: 4)."""
    for device, split, d in (("npu1", 2, 64), ("npu2", 4, 128)):
        one = tl.simulate(tl.library.attention(8, 2048, d, device=device, block_q=8), mode="timing").cycles
        many = tl.simulate(tl.library.attention(8, 2048, d, device=device, block_q=8, split_kv=split),
                           mode="timing").cycles
        assert many < one / (split * 0.75), (device, one, many)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((64, 64, 32), {"split_kv": 2, "causal": True}, "with causal=True the blocks see different keys"),
    ((8, 256, 32), {"block_q": 8, "split_kv": 2, "pipelines": 3}, "split_kv=2 runs 2 pipelines; got pipelines=3"),
    ((8, 96, 32), {"block_q": 8, "block_kv": 32, "split_kv": 2}, "the 3 key blocks over split_kv=2 pipelines"),
    ((1, 512, 32), {"block_q": 4, "split_kv": 2, "heads": 4, "kv_heads": 2},
     "a key/value head's query rows (Sq x heads / kv_heads) by block_q: 2 is not a multiple of 4"),
    ((1, 512, 32), {"block_q": 4, "heads": 8, "kv_heads": 2},
     "by block_q (a block spans a key/value head's query heads only with split_kv > 1): 1 is not a multiple of 4"),
    ((8, 512, 32), {"block_q": 8, "split_kv": 0}, "split_kv must be a positive int"),
    ((8, 512, 32), {"block_q": 8, "split_kv": 5}, "split_kv=5 pipelines need 5 compute columns"),
    ((8, 512, 32), {"block_q": 8, "split_kv": 4}, "a K^T and a V fill per pipeline and the output drain: 9 shim MM2S"),
    ((8, 1024, 32), {"block_q": 8, "split_kv": 8, "device": "npu2"}, "npu2's take 6 (one S2MM channel each)"),
    ((8, 512, 32), {"block_q": 8, "split_kv": 2, "device": "xcvc1902", "dtype": tl.f32, "block_kv": 512},
     "xcvc1902 has none"),
])
def test_split_kv_rejects_what_cannot_work(args, kwargs, message):
    with pytest.raises(DesignError, match=re.escape(message)):
        tl.library.attention(*args, **kwargs)


def test_split_kv_counts_the_partial_results_in_the_memory_checks():
    """A split_kv pipeline's output core holds an f32 (block_q, d + 2) partial result per buffer and three
    statistics columns: at 32 query rows, d = 128 and 32-key blocks that is past a core's memory where the plain
    pipeline's bf16 output fits, and fits() says so as the planner does (it agreed on the 128 split points of npu1
    and npu2 the factory accepts, of 144 tried, when written). The merging core holds every pipeline's partial result: where those cannot fit,
    the factory says so (no key block helps)."""
    from tilelang.library.attention import fits

    dev = tl.device("npu1")
    assert fits(dev, 32, 32, 128, tl.bf16) and not fits(dev, 32, 32, 128, tl.bf16, partial=True)
    with pytest.raises(DesignError, match=re.escape("split_kv=2's merging core holds 2 x 2 partial results of 32 x "
                                                    "130 f32, 2 output blocks and an f32 accumulator: 100352 B")):
        tl.library.attention(32, 256, 128, block_q=32, split_kv=2)
    tl.plan(tl.library.attention(16, 256, 128, block_q=16, split_kv=2), strategy="greedy")


def in_blocks(kt: np.ndarray, block_kv: int) -> np.ndarray:
    """KT (..., d, Skv) laid out in key blocks, (..., Skv // block_kv, d, block_kv), each block contiguous."""
    *lead, d, skv = kt.shape
    return np.ascontiguousarray(np.moveaxis(kt.reshape(*lead, d, skv // block_kv, block_kv), -2, -3))


@pytest.mark.parametrize(("device", "dtype", "sq", "skv", "d", "kw"), [
    ("npu1", tl.bf16, 128, 256, 64, {"block_kv": 64}),
    ("npu1", tl.bf16, 128, 128, 32, {"block_q": 16, "block_kv": 32, "causal": True}),
    ("npu2", tl.bf16, 1, 1024, 128, {"block_q": 1, "block_kv": 32, "split_kv": 4}),
    ("xcvc1902", tl.f32, 64, 256, 32, {"block_q": 16, "block_kv": 64}),
])
def test_key_blocks_layout_equals_numpy_and_reads_faster(device, dtype, sq, skv, d, kw):
    """kt_layout="blocks": KT in contiguous key blocks (as a paged KV cache keeps them), one run per block; the
    same answer, and where the short runs of KT (d, Skv) bound the run, fewer cycles (npu2's decoding step more
    than 3x fewer). On AIE1, whose shim DMAs walk linear runs only, it allows key blocks shorter than Skv."""
    x = inputs(sq, skv, d, dtype, seed=23)
    want = reference(x["Q"], x["KT"], x["V"], 1 / np.sqrt(d)) if not kw.get("causal") else causal_reference(
        x["Q"], x["KT"], x["V"], 1 / np.sqrt(d))
    design = tl.library.attention(sq, skv, d, dtype=dtype, device=device, kt_layout="blocks", **kw)
    assert design.tensors["KT"].shape == (skv // kw["block_kv"], d, kw["block_kv"])
    res = tl.simulate(tl.plan(design, strategy="greedy"), **{**x, "KT": in_blocks(x["KT"], kw["block_kv"])})
    assert np.abs(res.outputs["O"].astype(np.float64) - want).max() <= bound(dtype, x["V"])
    if device == "xcvc1902":
        with pytest.raises(DesignError, match=re.escape("or kt_layout='blocks'")):
            tl.library.attention(sq, skv, d, dtype=dtype, device=device, **kw)
        return
    rows = tl.simulate(tl.plan(tl.library.attention(sq, skv, d, dtype=dtype, device=device, **kw),
                               strategy="greedy"), mode="timing").cycles
    assert res.cycles < rows
    if kw.get("split_kv"):
        assert res.cycles * 3 < rows


def test_key_blocks_layout_with_grouped_query_heads_equals_numpy():
    heads, kv_heads, skv, d, bkv = 8, 2, 256, 32, 64
    rng = np.random.default_rng(29)
    x = {"Q": rng.uniform(-2, 2, (heads, 1, d)), "KT": rng.uniform(-2, 2, (kv_heads, d, skv)),
         "V": rng.uniform(-2, 2, (kv_heads, skv, d))}
    x = {k: a.astype(ml_dtypes.bfloat16) for k, a in x.items()}
    design = tl.library.attention(1, skv, d, heads=heads, kv_heads=kv_heads, block_q=4, block_kv=bkv, split_kv=2,
                                  kt_layout="blocks")
    got = run(design, {**x, "KT": in_blocks(x["KT"], bkv)})
    for h in range(heads):
        g = h // (heads // kv_heads)
        assert np.abs(got[h] - reference(x["Q"][h], x["KT"][g], x["V"][g], 1 / np.sqrt(d))).max() <= bound(
            tl.bf16, x["V"])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kt_layout": "blocks"}, "kt_layout='blocks' needs block_kv"),
    ({"kt_layout": "cols", "block_kv": 32}, "kt_layout must be 'rows'"),
])
def test_key_blocks_layout_rejects_what_cannot_work(kwargs, message):
    with pytest.raises(DesignError, match=re.escape(message)):
        tl.library.attention(64, 64, 32, **kwargs)
