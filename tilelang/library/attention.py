"""``tl.library.attention``: ``O = softmax(Q K^T * scale) V`` on pipelines of three cores, K and V streamed.

mlir-aie's ``ml/mha`` example (IRON's MHA operator) runs attention as FlashAttention does: the keys and values
go past in blocks of ``block_kv`` rows, and each block of ``block_q`` query rows keeps a running row maximum
``m``, a running sum ``l`` of the exponentials and a running output ``O``, rescaled by ``exp(m_old - m_new)``
whenever a block raises a row's maximum, so no row of scores is ever held whole. As there, each pipeline is
three cores:

- ``qk``: ``S = Q_b @ K^T_j`` for each key block ``j`` (the query block stays resident);
- ``sm``: the online softmax: per row ``m_new = max(m, max(S_row))``, ``alpha = exp((m - m_new) * scale)``,
  ``P_row = exp((S_row - m_new) * scale)``, ``l = alpha * l + sum(P_row)``; it passes on ``P`` and, per row,
  ``alpha`` and ``l``;
- ``pv``: ``O = alpha * O + P @ V_j``, and after the last key block ``O * (1 / l)`` (a reciprocal per row).

The three cores of a pipeline sit one above another in a column, so ``S``, ``P`` and the row statistics go
through memory the neighbours share (a core has two input DMA channels; ``pv`` reads three fifos). Pipeline
``p`` takes the ``p``-th run of ``Sq / pipelines`` query rows; every pipeline sees the same key and value blocks, one
broadcast each (a sweep of K^T and of V per query block a pipeline holds).

With ``heads`` the tensors get a leading head axis and the pipelines take the heads one after another;
``kv_heads`` fewer than ``heads`` is grouped-query attention (query head ``h`` reads key/value head
``h // (heads // kv_heads)``). ``causal=True`` masks keys after each query (``_causal_pipeline``).

``split_kv=N`` is FlashDecoding, for few query rows and many keys: N pipelines share each query block, each over
its run of ``Skv / N`` keys with its own shim channels for them, and end with partial results (their outputs
normalised by their own sums, with per row the maximum and the sum) that a memtile joins and one more core
merges (``_split_design``, :func:`combine_kernel`).

K comes transposed, ``KT`` (d, Skv), as mlir-aie's MHA takes it column-major: a kernel cannot transpose, and a
bf16 transpose is finer than the DMA's 32-bit words.

Precision: ``S``, the row statistics and ``O`` are f32 (mlir-aie's MHA keeps them in bf16), ``P`` has the
inputs' dtype and feeds the ``P @ V`` product. Each output is a weighted mean of V's rows, so its error is
bounded by a multiple of ``max|V|``: with bf16 inputs ``|O - exact| <= 4 x 2^-9 x max|V|`` (``P``, each
block's row sums and ``O`` round to bf16 once each: docs/library.md "attention"), with f32 ``1e-5 x max|V|``.
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.builder import FifoRef, TensorArg
from tilelang.frontend.design import buffer, core, fifo, join
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import exp, maximum
from tilelang.frontend.kernel import matmul as tile_matmul
from tilelang.frontend.kernel import max as tl_max
from tilelang.frontend.kernel import sum as tl_sum
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, bf16, f32
from tilelang.ir.kernel import Kernel
from tilelang.ir.pattern import AccessPattern, pattern
from tilelang.ir.types import Tensor, Tile
from tilelang.library._common import (
    build_design,
    build_kernel,
    check_args,
    divide,
    memtile_channels,
    resolve_device,
    shim_problem,
)
from tilelang.library._movement import Move, ShimLimits, issue

#: The running maximum's start: the first block's maximum replaces it, and its ``alpha`` is exp(-inf) = 0.
_LOWEST = float("-inf")


def attention_kernels(block_q: int, block_kv: int, d: int, dtype: DType, scale: float,
                      partial: bool = False) -> dict[str, Kernel]:
    """The six kernels of one pipeline: ``qk``, ``sm_init``, ``sm_step``, ``pv_zero``, ``pv_step``, ``pv_out``.

    ``st`` (the softmax core's own buffer) and ``sc`` (what it passes on) are (block_q, 2) f32, a row per query
    row: column 0 the running maximum (``st``) or ``alpha`` (``sc``), column 1 the running sum. A column
    ``x[:, 0:1]`` broadcasts along a row of scores (numpy broadcasting), so each step is a few whole-block ops.

    ``partial`` (a split-KV pipeline's kernels, :func:`combine_kernel` merges them): ``sc`` has a third column,
    the running maximum, and ``pv_out`` writes the pipeline's partial result, an f32 (block_q, d + 2) tile: the
    output normalised by its own sum, then per row the maximum and the sum.
    """
    bq, bkv = block_q, block_kv
    ncol = 3 if partial else 2
    q_t, kt_t, v_t = Tile[(bq, d), dtype], Tile[(d, bkv), dtype], Tile[(bkv, d), dtype]
    s_t, p_t, st_t, o_t = Tile[(bq, bkv), f32], Tile[(bq, bkv), dtype], Tile[(bq, 2), f32], Tile[(bq, d), f32]
    sc_t = Tile[(bq, ncol), f32]
    out_t = Tile[(bq, d + 2), f32] if partial else q_t

    def qk(q: Any, kt: Any, s: Any) -> None:
        s[...] = tile_matmul(q, kt, acc=f32)

    def sm_init(st: Any) -> None:
        st[:, 0] = _LOWEST
        st[:, 1] = 0.0

    def sm_step(s: Any, st: Any, p: Any, sc: Any) -> None:
        # results go straight into the tiles (a core's stack is 1 KiB): the new maximum parks in sc[:, 1]
        sc[:, 1] = maximum(st[:, 0], tl_max(s, axis=1))
        sc[:, 0] = exp((st[:, 0] - sc[:, 1]) * scale)  # alpha = exp((m - m_new) * scale)
        st[:, 0] = sc[:, 1]
        p[...] = _as(exp((s - st[:, 0:1]) * scale), dtype)
        st[:, 1] = st[:, 1] * sc[:, 0] + _as(tl_sum(p, axis=1), f32)
        sc[:, 1] = st[:, 1]
        if partial:
            sc[:, 2] = st[:, 0]

    def pv_zero(o: Any) -> None:
        o[...] = 0.0

    def pv_step(p: Any, v: Any, sc: Any, o: Any) -> None:
        o[...] = o * sc[:, 0:1]
        o[...] += tile_matmul(p, v, acc=f32)

    def pv_out(o: Any, sc: Any, out: Any) -> None:
        if partial:
            out[:, 0:d] = o * (1.0 / sc[:, 1:2])
            out[:, d:d + 1] = sc[:, 2:3]  # the maximum
            out[:, d + 1:d + 2] = sc[:, 1:2]  # the sum
        else:
            out[...] = _as(o * (1.0 / sc[:, 1:2]), dtype)  # a reciprocal per row, not a division per value

    tag = f"{bq}x{bkv}x{d}_{dtype}" + ("_part" if partial else "")
    return {
        "qk": build_kernel(f"attn_qk_{tag}", {"q": q_t, "kt": kt_t, "s": s_t}, qk),
        "sm_init": build_kernel(f"attn_sm_init_{tag}", {"st": st_t}, sm_init),
        "sm_step": build_kernel(f"attn_sm_step_{tag}", {"s": s_t, "st": st_t, "p": p_t, "sc": sc_t}, sm_step),
        "pv_zero": build_kernel(f"attn_pv_zero_{tag}", {"o": o_t}, pv_zero),
        "pv_step": build_kernel(f"attn_pv_step_{tag}", {"p": p_t, "v": v_t, "sc": sc_t, "o": o_t}, pv_step),
        "pv_out": build_kernel(f"attn_pv_out_{tag}", {"o": o_t, "sc": sc_t, "out": out_t}, pv_out),
    }


def combine_kernel(block_q: int, d: int, dtype: DType, scale: float, parts: int) -> Kernel:
    """FlashDecoding's merge of ``parts`` partial results (:func:`attention_kernels` with ``partial``) of one
    query block, stacked in an f32 (parts * block_q, d + 2) tile: per row ``M = max_p m_p``, weights
    ``w_p = exp((m_p - M) * scale) * l_p``, ``O = sum_p w_p O_p / sum_p w_p`` (``acc``: the sum, f32)."""
    bq = block_q

    def combine(part: Any, acc: Any, out: Any) -> None:
        top = part[0:bq, d:d + 1]
        for i in range(1, parts):
            top = maximum(top, part[i * bq:(i + 1) * bq, d:d + 1])
        total = None
        for i in range(parts):
            rows = slice(i * bq, (i + 1) * bq)
            w = exp((part[rows, d:d + 1] - top) * scale) * part[rows, d + 1:d + 2]
            if total is None:
                acc[...] = part[rows, 0:d] * w
                total = w
            else:
                acc[...] += part[rows, 0:d] * w
                total = total + w
        out[...] = _as(acc * (1.0 / total), dtype)

    return build_kernel(f"attn_combine_{parts}x{bq}x{d}_{dtype}",
                        {"part": Tile[(parts * bq, d + 2), f32], "acc": Tile[(bq, d), f32],
                         "out": Tile[(bq, d), dtype]}, combine)


def masked_step_kernel(block_q: int, block_kv: int, dtype: DType, scale: float, offset: int) -> Kernel:
    """``sm_step`` for a key block the causal mask cuts: query row ``i`` of the block sees the block's first
    ``offset + i + 1`` keys (``offset``: the query block's first row less the key block's). Row by row, each
    row's visible part a slice; the masked part of ``P`` is zero."""
    bq, bkv = block_q, block_kv
    st_t = Tile[(bq, 2), f32]

    def step(s: Any, st: Any, p: Any, sc: Any) -> None:
        for i in range(bq):
            seen = min(bkv, offset + i + 1)
            sc[i, 1] = maximum(st[i, 0], tl_max(s[i, 0:seen]))
            sc[i, 0] = exp((st[i, 0] - sc[i, 1]) * scale)
            st[i, 0] = sc[i, 1]
            p[i, 0:seen] = _as(exp((s[i, 0:seen] - st[i, 0]) * scale), dtype)
            if seen < bkv:
                p[i, seen:bkv] = 0.0
            st[i, 1] = st[i, 1] * sc[i, 0] + _as(tl_sum(p[i, 0:seen]), f32)
            sc[i, 1] = st[i, 1]

    return build_kernel(f"attn_sm_causal_{bq}x{bkv}_{dtype}_{offset}",
                        {"s": Tile[(bq, bkv), f32], "st": st_t, "p": Tile[(bq, bkv), dtype], "sc": st_t}, step)


def _as(x: Any, dtype: DType) -> Any:
    """``x`` converted to ``dtype`` (itself when it has it already)."""
    return x if x.dtype == dtype else x.astype(dtype)


def _columns(dev: Device, pipelines: int = 0, what: str = "") -> tuple[list[int], list[int]]:
    """The compute columns, and the first three compute rows (a pipeline's), of ``dev``.

    Raises:
        DesignError: fewer than three compute rows, or fewer columns than ``pipelines`` (``what`` names them).
    """
    compute = dev.tiles("compute")
    cols = sorted({c for c, _ in compute})
    rows = sorted({r for _, r in compute})
    if len(rows) < 3:
        raise DesignError(f"attention: a pipeline is three cores in a column; {dev.name} has {len(rows)} compute rows")
    if pipelines > len(cols):
        raise DesignError(f"attention: {what} need {pipelines} compute columns (one each); {dev.name} has {len(cols)}")
    return cols, rows[:3]


def _pipelines(dev: Device, pipelines: int | None, blocks: int) -> int:
    """How many pipelines: ``pipelines`` checked, or the most (one per compute column, each fed its own shim
    channel) that divide the ``blocks`` query blocks."""
    cols, _ = _columns(dev)
    # each pipeline: a query fill and an output drain; K^T and V one fill each, broadcast
    fit = [p for p in range(1, len(cols) + 1) if shim_problem(dev, p + 2, p, "") is None]
    most = max(fit, default=0)
    if not most:
        raise DesignError(f"attention: {shim_problem(dev, 3, 1, 'one pipeline (its query fill, the K^T and V fills)')}")
    if pipelines is None:
        usable = [p for p in range(most, 0, -1) if blocks % p == 0]
        return usable[0] if usable else 1
    if not isinstance(pipelines, int) or isinstance(pipelines, bool) or pipelines <= 0:
        raise DesignError(f"attention: pipelines must be a positive int or None, got {pipelines!r}")
    _columns(dev, pipelines, f"{pipelines} pipelines")
    problem = shim_problem(dev, pipelines + 2, pipelines, f"{pipelines} pipelines' query fills and output drains "
                           "plus the K^T and V fills")
    if problem:
        raise DesignError(f"attention: {problem}")
    return pipelines


def attention(Sq: int, Skv: int, d: int, dtype: DType = bf16, device: str | Device = "npu1",  # noqa: N803
              pipelines: int | None = None, block_q: int = 32, block_kv: int | None = None, scale: float | None = None,
              causal: bool = False, heads: int | None = None, kv_heads: int | None = None,
              depth: int = 2, split_kv: int = 1, kt_layout: str = "rows") -> Design:
    """A design computing O (Sq, d) = softmax(Q KT * scale) V for Q (Sq, d), KT (d, Skv) and V (Skv, d); with
    ``heads``, per head: Q and O (heads, Sq, d), KT (kv_heads, d, Skv), V (kv_heads, Skv, d).

    Args:
        Sq, Skv: query and key/value rows.
        d: the head dimension.
        dtype: bf16 or f32, of Q, KT, V and O (module docstring: the precision of each step).
        device: device name or model (three compute rows or more).
        pipelines: pipelines of three cores, one per compute column (None: the most that the shims feed and
            that divide the Sq / block_q query blocks).
        block_q: query rows per block (a pipeline keeps one block resident while the keys go past).
        block_kv: key/value rows per block (None: the largest of 128, 64, 32, 16 and 8 that divides Skv and
            whose buffers fit a pipeline's cores as the planner lays them out (:func:`fits`): longer ``KT``
            runs read faster, fewer steps cost less; on a device whose shim DMAs walk linear runs only, Skv).
        scale: the scores' scale (None: 1 / sqrt(d)).
        causal: query row ``i`` sees keys ``0..i`` only (self-attention: ``Sq == Skv``; ``block_kv`` a multiple
            of ``block_q``). Query blocks are dealt round-robin, each round's keys sent as far as its last
            query needs, and key blocks a query block cannot see are skipped (``_causal_pipeline``).
        heads: query heads (None: one, and two-dimensional tensors). The pipelines take the heads one after
            another, each head's query blocks dealt among them as for one head.
        kv_heads: key/value heads (None: ``heads``); fewer is grouped-query attention: query head ``h`` uses
            key/value head ``h // (heads // kv_heads)``.
        depth: buffers per fifo.
        split_kv: FlashDecoding: ``split_kv`` pipelines share each query block, pipeline ``j`` taking the
            ``j``-th run of ``Skv / split_kv`` keys, and one more core merges their partial results
            (:func:`combine_kernel`); the query blocks go through them one after another, cut from each
            key/value head's query heads stacked (``block_q`` may span query heads). For few query rows and many
            keys (decoding), where one block per pipeline leaves the others idle. ``pipelines`` is then None or
            ``split_kv``; not with ``causal``.
        kt_layout: "rows", KT (d, Skv) (a key block is ``d`` short runs of ``block_kv`` values, which the shim
            reads below its stream rate when short), or "blocks", KT (Skv // block_kv, d, block_kv): each key
            block's ``K^T`` contiguous, as a paged KV cache keeps its blocks (one run per block; ``block_kv``
            must then be given, the tensor's block size). With heads, a leading ``kv_heads`` axis either way.

    Returns:
        The traced design.

    Raises:
        DesignError: an integer dtype, sizes the blocks and pipelines do not divide, a bad scale, heads that
            kv_heads does not divide, more pipelines than the device's columns and shims take, or (split_kv)
            more than its memtile joins or a merging core whose partial results cannot fit.
    """
    check_args("attention", {"Sq": Sq, "Skv": Skv, "d": d, "block_q": block_q, "depth": depth}, {"dtype": dtype})
    if block_kv is not None:
        check_args("attention", {"block_kv": block_kv})
    if not dtype.is_float:
        raise DesignError(f"attention needs a float dtype (bf16 or f32), got {dtype}")
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < float("inf"):
        raise DesignError(f"attention: scale must be a finite number > 0, got {scale!r}")
    if heads is None and kv_heads is not None:
        raise DesignError("attention: kv_heads needs heads")
    H = 1 if heads is None else heads
    check_args("attention", {"heads": H, "kv_heads": H if kv_heads is None else kv_heads})
    group = divide(H, H if kv_heads is None else kv_heads, "attention: heads by kv_heads")
    if not isinstance(causal, bool):
        raise DesignError(f"attention: causal must be True or False, got {causal!r}")
    if causal and Sq != Skv:
        raise DesignError(f"attention: causal attention here is self-attention (Sq == Skv), got Sq={Sq}, Skv={Skv}")
    check_args("attention", {"split_kv": split_kv})
    if split_kv > 1 and causal:
        raise DesignError("attention: split_kv splits every query block's keys; with causal=True the blocks see "
                          "different keys (use split_kv=1)")
    if split_kv > 1 and pipelines not in (None, split_kv):
        raise DesignError(f"attention: split_kv={split_kv} runs {split_kv} pipelines; got pipelines={pipelines!r}")
    if kt_layout not in ("rows", "blocks"):
        raise DesignError(f"attention: kt_layout must be 'rows' (KT (d, Skv)) or 'blocks' (KT (Skv // block_kv, d, "
                          f"block_kv)), got {kt_layout!r}")
    blocked = kt_layout == "blocks"
    if blocked and block_kv is None:
        raise DesignError("attention: kt_layout='blocks' needs block_kv (the size of KT's key blocks)")
    dev = resolve_device(device)
    if block_kv is None:
        block_kv = _default_block_kv(dev, Skv, block_q, d, dtype, depth, causal, split_kv > 1)
    if causal and block_kv % block_q:
        raise DesignError(f"attention: causal needs block_kv a multiple of block_q (each key block's mask then "
                          f"starts on a query block's row), got block_q={block_q}, block_kv={block_kv}")
    nkv = divide(Skv, block_kv, "attention: Skv (key rows) by block_kv")
    if split_kv > 1:
        divide(group * Sq, block_q, "attention: a key/value head's query rows (Sq x heads / kv_heads) by block_q")
        return _split_design(Sq, Skv, d, dtype, dev, block_q, block_kv, float(scale), heads, H, group, depth,
                             split_kv, blocked)
    stack = group > 1 and Sq % block_q and (group * Sq) % block_q == 0
    blocks = divide(Sq, block_q, "attention: Sq (query rows) by block_q" + (
        " (a block spans a key/value head's query heads only with split_kv > 1)" if stack else ""))
    npipe = _pipelines(dev, pipelines, blocks)
    per = divide(blocks, npipe, f"attention: the {blocks} query blocks over {npipe} pipelines")
    ks = attention_kernels(block_q, block_kv, d, dtype, float(scale))
    cols, rows = _columns(dev)
    bq, bkv = block_q, block_kv
    rounds = schedule(npipe, per, nkv, bq, bkv, causal)
    masked = {o: masked_step_kernel(bq, bkv, dtype, float(scale), o) for o in range(0, bkv, bq)} if causal else {}
    if bkv != Skv and ShimLimits.of(dev).linear_only and not blocked:
        raise DesignError(f"attention on {dev.name}: its shim DMAs walk linear runs only, and a K^T block of "
                          f"{bkv} of its {Skv} columns is not one; use block_kv={Skv} (whole rows of KT) or "
                          f"kt_layout='blocks'")

    def body(Q: TensorArg, KT: TensorArg, V: TensorArg, out: TensorArg) -> None:  # noqa: N803 - the tensors' names
        kt_in = fifo(Tile[(d, bkv), dtype], depth=depth, name="kt")
        v_in = fifo(Tile[(bkv, d), dtype], depth=depth, name="v")
        fills, drains = [], []
        for j in range(npipe):
            q_in = fifo(Tile[(bq, d), dtype], depth=depth, name=f"q_{j}")
            o_out = fifo(Tile[(bq, d), dtype], depth=depth, name=f"o_{j}")
            fifos = (q_in, kt_in, v_in, o_out)
            if causal:
                # query blocks j, j + npipe, ...: round r's blocks are the r-th npipe of them
                _causal_pipeline(j, (cols[j], rows), ks, fifos, rounds, bq, bkv, d, dtype, depth, masked, H)
                walk = pattern(j * bq * d, (H, per, bq * d), (Sq * d, npipe * bq * d, 1))
            else:
                _pipeline(j, (cols[j], rows), ks, fifos, H * per, nkv, bq, bkv, d, dtype, depth)
                # per head, query blocks j * per to (j + 1) * per - 1: one contiguous run of rows
                walk = pattern(j * per * bq * d, (H, per * bq * d), (Sq * d, 1))
            fills.append(Move(Q, q_in, walk, True, f"fill_q_{j}"))
            drains.append(Move(out, o_out, walk, False, f"drain_o_{j}"))
        # per head, per query block a pipeline holds: K^T's blocks, then V's, of the head's key/value head
        for h in range(H):
            at_kt, at_v = h // group * d * Skv, h // group * Skv * d
            tag = f"_{h}" if heads is not None else ""
            if causal:
                for r, (n, _) in enumerate(rounds):
                    fills.append(Move(KT, kt_in, _kt_walk(at_kt, 0, n, d, bkv, Skv, blocked), True,
                                      f"fill_kt{tag}_{r}"))
                    fills.append(Move(V, v_in, pattern(at_v, (n * bkv * d,), (1,)), True, f"fill_v{tag}_{r}"))
            else:
                fills.append(Move(KT, kt_in, _kt_walk(at_kt, 0, nkv, d, bkv, Skv, blocked).repeat(per), True,
                                  f"fill_kt{tag}"))
                fills.append(Move(V, v_in, pattern(at_v, (Skv * d,), (1,)).repeat(per), True, f"fill_v{tag}"))
        issue(fills + drains, dev)

    name, tensors = _tensors(Sq, Skv, d, dtype, heads, H, group, bkv if blocked else None)
    return build_design(name, dev, tensors, body)


def _tensors(Sq: int, Skv: int, d: int, dtype: DType, heads: int | None, H: int,  # noqa: N803
             group: int, kt_block: int | None = None) -> tuple[str, dict[str, Any]]:
    """The design's name and tensors: 2-D without ``heads``, else with a leading head axis (``kt_block``: KT in
    key blocks of that size, each contiguous)."""
    kt = (d, Skv) if kt_block is None else (Skv // kt_block, d, kt_block)
    tag = "" if kt_block is None else f"_ktb{kt_block}"
    if heads is None:
        return f"attention_{Sq}x{Skv}x{d}{tag}", {"Q": Tensor[(Sq, d), dtype], "KT": Tensor[kt, dtype],
                                                  "V": Tensor[(Skv, d), dtype], "O": Tensor[(Sq, d), dtype]}
    hkv = H // group
    return (f"attention_{H}x{Sq}x{Skv}x{d}" + (f"_kv{hkv}" if hkv != H else "") + tag,
            {"Q": Tensor[(H, Sq, d), dtype], "KT": Tensor[(hkv, *kt), dtype], "V": Tensor[(hkv, Skv, d), dtype],
             "O": Tensor[(H, Sq, d), dtype]})


def _kt_walk(at: int, first: int, n: int, d: int, bkv: int, Skv: int, blocked: bool) -> AccessPattern:  # noqa: N803
    """The walk of ``n`` key blocks of K^T from block ``first``, in a head's K^T starting at element ``at``: ``d``
    runs of ``bkv`` values per block (KT (d, Skv)), or one run (KT in contiguous key blocks)."""
    if blocked:
        return pattern(at + first * d * bkv, (n * d * bkv,), (1,))
    return pattern(at + first * bkv, (n, d, bkv), (bkv, Skv, 1))


def _split_design(Sq: int, Skv: int, d: int, dtype: DType, dev: Device, bq: int, bkv: int, scale: float,  # noqa: N803
                  heads: int | None, H: int, group: int, depth: int, nsplit: int,  # noqa: N803
                  blocked: bool = False) -> Design:
    """``split_kv``: ``nsplit`` pipelines over one query block at a time, pipeline ``j`` over the ``j``-th run of
    ``Skv / nsplit`` keys, and a merging core. Attention over few queries is bound by reading K and V, so each
    pipeline has its own shim channel for each (a K^T block is ``d`` short runs, the slowest fill); the query is
    one fill (a broadcast), the output one drain, the partial results are joined in a memtile. With grouped
    query heads the blocks are cut from each key/value head's query heads stacked (``block_q`` may span them)."""
    cols, rows = _columns(dev, nsplit, f"split_kv={nsplit} pipelines")
    joins = memtile_channels(dev, "s2mm")
    if nsplit > joins:
        raise DesignError(f"attention: split_kv={nsplit} joins {nsplit} partial results in a memory tile; "
                          + (f"{dev.name}'s take {joins} (one S2MM channel each)" if joins else f"{dev.name} has none"))
    problem = shim_problem(dev, 2 * nsplit + 1, 1, f"split_kv={nsplit}: the query fill, a K^T and a V fill per "
                           "pipeline and the output drain")
    if problem:
        raise DesignError(f"attention: {problem}")
    from tilelang.devices.abi import STACK_BYTES

    mem = dev.memory_bytes(dev.tiles("compute")[0])
    need = depth * (nsplit * bq * (d + 2) * 4 + bq * d * dtype.bits // 8) + bq * d * 4 + STACK_BYTES
    if need > mem:
        raise DesignError(f"attention: split_kv={nsplit}'s merging core holds {depth} x {nsplit} partial results of "
                          f"{bq} x {d + 2} f32, {depth} output blocks and an f32 accumulator: {need} B, more than a "
                          f"core's {mem} B; use a smaller block_q or fewer pipelines")
    nkv = Skv // bkv
    nkv_p = divide(nkv, nsplit, f"attention: the {nkv} key blocks over split_kv={nsplit} pipelines")
    hkv = H // group
    # the query heads of a key/value head are consecutive: its rows, stacked, are one run of Q's (and O's) rows,
    # cut into blocks that read its keys and values once per block (not once per query head)
    blocks = group * Sq // bq
    ks = attention_kernels(bq, bkv, d, dtype, scale, partial=True)
    merge = combine_kernel(bq, d, dtype, scale, nsplit)
    per = hkv * blocks  # query blocks, one after another
    run = nkv_p * bkv  # keys per pipeline

    def body(Q: TensorArg, KT: TensorArg, V: TensorArg, out: TensorArg) -> None:  # noqa: N803 - the tensors' names
        q_in = fifo(Tile[(bq, d), dtype], depth=depth, name="q")
        part_all = fifo(Tile[(nsplit * bq, d + 2), f32], depth=depth, name="part")
        o_out = fifo(Tile[(bq, d), dtype], depth=depth, name="o")
        kts = [fifo(Tile[(d, bkv), dtype], depth=depth, name=f"kt_{j}") for j in range(nsplit)]
        vs = [fifo(Tile[(bkv, d), dtype], depth=depth, name=f"v_{j}") for j in range(nsplit)]
        parts = [fifo(Tile[(bq, d + 2), f32], depth=depth, name=f"part_{j}") for j in range(nsplit)]
        join(parts, part_all, offsets=[j * bq * (d + 2) for j in range(nsplit)], name="join_part")
        for j in range(nsplit):
            _pipeline(j, (cols[j], rows), ks, (q_in, kts[j], vs[j], parts[j]), per, nkv_p, bq, bkv, d, dtype, depth,
                      ncol=3)

        @core(name="combine")
        def combine() -> None:
            acc = buffer(Tile[(bq, d), f32], name="acc_combine")
            for _ in tl_range(per):
                _with([part_all, o_out], lambda part, o: merge(part, acc, o))

        moves = [Move(Q, q_in, pattern(0, (H * Sq * d,), (1,)), True, "fill_q")]
        for j in range(nsplit):
            for g in range(hkv):  # per key/value head, per query block of its heads: the pipeline's keys
                at_kt, at_v = g * d * Skv, (g * Skv + j * run) * d
                tag = f"_{g}" if heads is not None else ""
                moves.append(Move(KT, kts[j], _kt_walk(at_kt, j * nkv_p, nkv_p, d, bkv, Skv, blocked).repeat(blocks),
                                  True, f"fill_kt{tag}_{j}"))
                moves.append(Move(V, vs[j], pattern(at_v, (run * d,), (1,)).repeat(blocks), True, f"fill_v{tag}_{j}"))
        moves.append(Move(out, o_out, pattern(0, (H * Sq * d,), (1,)), False, "drain_o"))
        issue(moves, dev)

    name, tensors = _tensors(Sq, Skv, d, dtype, heads, H, group, bkv if blocked else None)
    return build_design(name + f"_split{nsplit}", dev, tensors, body)


def fits(dev: Device, block_q: int, block_kv: int, d: int, dtype: DType, depth: int = 2,
         partial: bool = False) -> bool:
    """Whether a pipeline's buffers fit its three cores' memories as the planner lays them out: the query and
    ``KT`` blocks in the ``qk`` core's, the scores and ``P`` in the ``sm`` core's (with its statistics), the
    ``V`` blocks, the row statistics it receives, the output blocks and the f32 accumulator in the ``pv``
    core's, each core keeping its stack. ``partial``: a ``split_kv`` pipeline's (three statistics columns, an
    f32 partial result of ``d + 2`` columns for an output). (A necessary check: the planner has the last word.)"""
    from tilelang.devices.abi import STACK_BYTES

    bq, bkv, nbytes = block_q, block_kv, dtype.bits // 8
    mem = dev.memory_bytes(dev.tiles("compute")[0])
    ncol, out = (3, bq * (d + 2) * 4) if partial else (2, bq * d * nbytes)
    qk = depth * (bq * d + d * bkv) * nbytes
    sm = depth * (bq * bkv * 4 + bq * bkv * nbytes) + bq * 2 * 4
    pv = depth * (bkv * d * nbytes + bq * ncol * 4 + out) + bq * d * 4
    return max(qk, sm, pv) + STACK_BYTES <= mem


#: One round of a design: the key blocks that go past, and per pipeline the blocks its query block computes,
#: each with the causal mask's offset in it (None: the block is seen whole).
Round = tuple[int, list[dict[int, int | None]]]


def schedule(npipe: int, per: int, nkv: int, block_q: int, block_kv: int, causal: bool) -> list[Round]:
    """The rounds of each pipeline's work. In round ``r`` pipeline ``j`` holds query block ``r * npipe + j``
    (causal: dealt round-robin) and the key blocks ``0 .. sweep - 1`` go past every pipeline: all of them, or
    (causal) as far as the round's last query row sees. Key block ``k`` is computed when some row of the query
    block ``b`` sees a key in it (``k * block_kv <= (b + 1) * block_q - 1``), masked from offset
    ``b * block_q - k * block_kv`` unless the block's last key is at most the block's first row."""
    bq, bkv = block_q, block_kv
    out: list[Round] = []
    for r in range(per):
        if not causal:
            out.append((nkv, [dict.fromkeys(range(nkv)) for _ in range(npipe)]))
            continue
        sweep = min(nkv, ((r + 1) * npipe * bq - 1) // bkv + 1)
        blocks = [r * npipe + j for j in range(npipe)]
        out.append((sweep, [{k: None if (k + 1) * bkv - 1 <= b * bq else b * bq - k * bkv
                             for k in range(sweep) if k * bkv <= (b + 1) * bq - 1} for b in blocks]))
    return out


def _default_block_kv(dev: Device, Skv: int, block_q: int, d: int, dtype: DType, depth: int,  # noqa: N803
                      causal: bool, partial: bool = False) -> int:
    """``block_kv=None``: the largest of 128, 64, 32, 16, 8 that divides Skv (and, causal, is a multiple of
    block_q) and whose buffers fit as the planner lays them out (:func:`fits`; the objectfifo-level MLIR keeps
    that layout: ``aie.objectfifo.allocate``); Skv on a linear-only shim DMA; else the smallest dividing one
    (the planner then says what does not fit)."""
    if ShimLimits.of(dev).linear_only:
        return Skv
    ok = [b for b in (128, 64, 32, 16, 8) if Skv % b == 0 and not (causal and b % block_q)]
    return next((b for b in ok if fits(dev, block_q, b, d, dtype, depth, partial)), ok[-1] if ok else Skv)


def _inner(j: int, bq: int, bkv: int, dtype: DType, depth: int,
           ncol: int = 2) -> tuple[FifoRef, FifoRef, FifoRef]:
    """The fifos between pipeline ``j``'s cores: scores, ``P``, and the row statistics (``ncol`` columns)."""
    return (fifo(Tile[(bq, bkv), f32], depth=depth, name=f"s_{j}"),
            fifo(Tile[(bq, bkv), dtype], depth=depth, name=f"p_{j}"),
            fifo(Tile[(bq, ncol), f32], depth=depth, name=f"sc_{j}"))


def _with(fifos: list[FifoRef], call: Any) -> None:
    """One step of a core program: an element of each of ``fifos`` acquired (in that order), ``call`` on them,
    each released (in the same order)."""
    els = [f.acquire() for f in fifos]
    call(*els)
    for f in fifos:
        f.release()


def _pipeline(j: int, where: tuple[int, list[int]], ks: dict[str, Kernel], fifos: tuple[FifoRef, ...], per: int,
              nkv: int, bq: int, bkv: int, d: int, dtype: DType, depth: int, ncol: int = 2) -> None:
    """Pipeline ``j``'s three cores, in column ``where[0]`` at rows ``where[1]``, and the fifos between them
    (``ncol``: the statistics' columns, 3 for a split-KV pipeline's kernels)."""
    col, rows = where
    q_in, kt_in, v_in, o_out = fifos
    s_f, p_f, sc_f = _inner(j, bq, bkv, dtype, depth, ncol)

    @core(name=f"qk_{j}", tile=(col, rows[0]))
    def qk() -> None:
        for _ in tl_range(per):
            q = q_in.acquire()
            for _ in tl_range(nkv):
                _with([kt_in, s_f], lambda kt, s, q=q: ks["qk"](q, kt, s))
            q_in.release()

    @core(name=f"sm_{j}", tile=(col, rows[1]))
    def sm() -> None:
        st = buffer(Tile[(bq, 2), f32], name=f"stats_{j}")
        for _ in tl_range(per):
            ks["sm_init"](st)
            for _ in tl_range(nkv):
                _with([s_f, p_f, sc_f], lambda s, p, sc: ks["sm_step"](s, st, p, sc))

    @core(name=f"pv_{j}", tile=(col, rows[2]))
    def pv() -> None:
        o = buffer(Tile[(bq, d), f32], name=f"acc_{j}")

        def last(p: Any, v: Any, sc: Any, out: Any) -> None:
            ks["pv_step"](p, v, sc, o)
            ks["pv_out"](o, sc, out)

        for _ in tl_range(per):
            ks["pv_zero"](o)
            if nkv > 1:  # (a loop of no trips is no loop)
                for _ in tl_range(nkv - 1):
                    _with([p_f, v_in, sc_f], lambda p, v, sc: ks["pv_step"](p, v, sc, o))
            _with([p_f, v_in, sc_f, o_out], last)


def _causal_pipeline(j: int, where: tuple[int, list[int]], ks: dict[str, Kernel], fifos: tuple[FifoRef, ...],
                     rounds: list[Round], bq: int, bkv: int, d: int, dtype: DType, depth: int,
                     masked: dict[int, Kernel], heads: int) -> None:
    """Pipeline ``j`` of a causal design, its rounds (:func:`schedule`) written out: every key block of a round
    goes past (a broadcast); the ones its query block sees get the plain softmax step or the masked one
    (``masked``, by offset), the rest are taken and dropped; the output goes after the last block it sees. The
    rounds repeat per head (a loop: each head's rounds are the same)."""
    col, rows = where
    q_in, kt_in, v_in, o_out = fifos
    s_f, p_f, sc_f = _inner(j, bq, bkv, dtype, depth)
    mine = [(n, per_pipe[j]) for n, per_pipe in rounds]

    @core(name=f"qk_{j}", tile=(col, rows[0]))
    def qk() -> None:
        for _ in _heads(heads):
            for n, seen in mine:
                q = q_in.acquire()
                for k in range(n):
                    kt = kt_in.acquire()
                    if k in seen:
                        _with([s_f], lambda s, q=q, kt=kt: ks["qk"](q, kt, s))
                    kt_in.release()
                q_in.release()

    @core(name=f"sm_{j}", tile=(col, rows[1]))
    def sm() -> None:
        st = buffer(Tile[(bq, 2), f32], name=f"stats_{j}")
        for _ in _heads(heads):
            for _, seen in mine:
                ks["sm_init"](st)
                for offset in seen.values():
                    f = ks["sm_step"] if offset is None else masked[offset]
                    _with([s_f, p_f, sc_f], lambda s, p, sc, f=f: f(s, st, p, sc))

    @core(name=f"pv_{j}", tile=(col, rows[2]))
    def pv() -> None:
        acc = buffer(Tile[(bq, d), f32], name=f"acc_{j}")

        def after(p: Any, v: Any, sc: Any, last: bool) -> None:  # the step, and the output after the last
            ks["pv_step"](p, v, sc, acc)
            if last:
                _with([o_out], lambda out: ks["pv_out"](acc, sc, out))

        for _ in _heads(heads):
            for n, seen in mine:
                ks["pv_zero"](acc)
                for k in range(n):
                    v = v_in.acquire()
                    if k in seen:
                        last = k == max(seen)
                        _with([p_f, sc_f], lambda p, sc, v=v, last=last: after(p, v, sc, last))
                    v_in.release()


def _heads(heads: int) -> Any:
    """The per-head repetition of a core program: a loop for several heads, once (no loop) for one."""
    return tl_range(heads) if heads > 1 else range(1)


__all__ = ["Round", "attention", "attention_kernels", "combine_kernel", "fits", "masked_step_kernel", "schedule"]
