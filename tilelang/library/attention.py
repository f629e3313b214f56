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
from tilelang.frontend.design import buffer, core, fifo
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import exp, maximum
from tilelang.frontend.kernel import matmul as tile_matmul
from tilelang.frontend.kernel import max as tl_max
from tilelang.frontend.kernel import sum as tl_sum
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, bf16, f32
from tilelang.ir.kernel import Kernel
from tilelang.ir.pattern import pattern
from tilelang.ir.types import Tensor, Tile
from tilelang.library._common import build_design, build_kernel, check_args, divide, resolve_device, shim_problem
from tilelang.library._movement import Move, ShimLimits, issue

#: The running maximum's start: the first block's maximum replaces it, and its ``alpha`` is exp(-inf) = 0.
_LOWEST = float("-inf")


def attention_kernels(block_q: int, block_kv: int, d: int, dtype: DType, scale: float) -> dict[str, Kernel]:
    """The six kernels of one pipeline: ``qk``, ``sm_init``, ``sm_step``, ``pv_zero``, ``pv_step``, ``pv_out``.

    ``st`` (the softmax core's own buffer) and ``sc`` (what it passes on) are (block_q, 2) f32, a row per query
    row: column 0 the running maximum (``st``) or ``alpha`` (``sc``), column 1 the running sum. A column
    ``x[:, 0:1]`` broadcasts along a row of scores (numpy broadcasting), so each step is a few whole-block ops.
    """
    bq, bkv = block_q, block_kv
    q_t, kt_t, v_t = Tile[(bq, d), dtype], Tile[(d, bkv), dtype], Tile[(bkv, d), dtype]
    s_t, p_t, st_t, o_t = Tile[(bq, bkv), f32], Tile[(bq, bkv), dtype], Tile[(bq, 2), f32], Tile[(bq, d), f32]

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

    def pv_zero(o: Any) -> None:
        o[...] = 0.0

    def pv_step(p: Any, v: Any, sc: Any, o: Any) -> None:
        o[...] = o * sc[:, 0:1]
        o[...] += tile_matmul(p, v, acc=f32)

    def pv_out(o: Any, sc: Any, out: Any) -> None:
        out[...] = _as(o * (1.0 / sc[:, 1:2]), dtype)  # a reciprocal per row, not a division per value

    tag = f"{bq}x{bkv}x{d}_{dtype}"
    return {
        "qk": build_kernel(f"attn_qk_{tag}", {"q": q_t, "kt": kt_t, "s": s_t}, qk),
        "sm_init": build_kernel(f"attn_sm_init_{tag}", {"st": st_t}, sm_init),
        "sm_step": build_kernel(f"attn_sm_step_{tag}", {"s": s_t, "st": st_t, "p": p_t, "sc": st_t}, sm_step),
        "pv_zero": build_kernel(f"attn_pv_zero_{tag}", {"o": o_t}, pv_zero),
        "pv_step": build_kernel(f"attn_pv_step_{tag}", {"p": p_t, "v": v_t, "sc": st_t, "o": o_t}, pv_step),
        "pv_out": build_kernel(f"attn_pv_out_{tag}", {"o": o_t, "sc": st_t, "out": q_t}, pv_out),
    }


def _as(x: Any, dtype: DType) -> Any:
    """``x`` converted to ``dtype`` (itself when it has it already)."""
    return x if x.dtype == dtype else x.astype(dtype)


def _columns(dev: Device) -> tuple[list[int], list[int]]:
    """The compute columns, and the first three compute rows (a pipeline's), of ``dev``."""
    compute = dev.tiles("compute")
    cols = sorted({c for c, _ in compute})
    rows = sorted({r for _, r in compute})
    return cols, rows[:3]


def _pipelines(dev: Device, pipelines: int | None, blocks: int) -> int:
    """How many pipelines: ``pipelines`` checked, or the most (one per compute column, each fed its own shim
    channel) that divide the ``blocks`` query blocks."""
    cols, rows = _columns(dev)
    if len(rows) < 3:
        raise DesignError(f"attention: a pipeline is three cores in a column; {dev.name} has {len(rows)} compute rows")
    # each pipeline: a query fill and an output drain; K^T and V one fill each, broadcast
    fit = [p for p in range(1, len(cols) + 1) if shim_problem(dev, p + 2, p, "") is None]
    most = max(fit, default=0)
    if pipelines is None:
        usable = [p for p in range(most, 0, -1) if blocks % p == 0]
        return usable[0] if usable else 1
    if not isinstance(pipelines, int) or isinstance(pipelines, bool) or pipelines <= 0:
        raise DesignError(f"attention: pipelines must be a positive int or None, got {pipelines!r}")
    if pipelines > len(cols):
        raise DesignError(f"attention: {pipelines} pipelines need {pipelines} compute columns (one each); "
                          f"{dev.name} has {len(cols)}")
    problem = shim_problem(dev, pipelines + 2, pipelines, f"{pipelines} pipelines' query fills and output drains "
                           "plus the K^T and V fills")
    if problem:
        raise DesignError(f"attention: {problem}")
    return pipelines


def attention(Sq: int, Skv: int, d: int, dtype: DType = bf16, device: str | Device = "npu1",  # noqa: N803
              pipelines: int | None = None, block_q: int = 32, block_kv: int = 64, scale: float | None = None,
              depth: int = 2) -> Design:
    """A design computing O (Sq, d) = softmax(Q KT * scale) V for Q (Sq, d), KT (d, Skv) and V (Skv, d).

    Args:
        Sq, Skv: query and key/value rows.
        d: the head dimension.
        dtype: bf16 or f32, of Q, KT, V and O (module docstring: the precision of each step).
        device: device name or model (three compute rows or more).
        pipelines: pipelines of three cores, one per compute column (None: the most that the shims feed and
            that divide the Sq / block_q query blocks).
        block_q: query rows per block (a pipeline keeps one block resident while the keys go past).
        block_kv: key/value rows per block.
        scale: the scores' scale (None: 1 / sqrt(d)).
        depth: buffers per fifo.

    Returns:
        The traced design.

    Raises:
        DesignError: an integer dtype, sizes the blocks and pipelines do not divide, a bad scale, or more
            pipelines than the device's columns and shims take.
    """
    check_args("attention", {"Sq": Sq, "Skv": Skv, "d": d, "block_q": block_q, "block_kv": block_kv,
                             "depth": depth}, {"dtype": dtype})
    if not dtype.is_float:
        raise DesignError(f"attention needs a float dtype (bf16 or f32), got {dtype}")
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < float("inf"):
        raise DesignError(f"attention: scale must be a finite number > 0, got {scale!r}")
    dev = resolve_device(device)
    blocks = divide(Sq, block_q, "attention: Sq (query rows) by block_q")
    nkv = divide(Skv, block_kv, "attention: Skv (key rows) by block_kv")
    npipe = _pipelines(dev, pipelines, blocks)
    per = divide(blocks, npipe, f"attention: the {blocks} query blocks over {npipe} pipelines")
    ks = attention_kernels(block_q, block_kv, d, dtype, float(scale))
    cols, rows = _columns(dev)
    bq, bkv = block_q, block_kv
    if bkv != Skv and ShimLimits.of(dev).linear_only:
        raise DesignError(f"attention on {dev.name}: its shim DMAs walk linear runs only, and a K^T block of "
                          f"{bkv} of its {Skv} columns is not one; use block_kv={Skv} (whole rows of KT)")

    def body(Q: TensorArg, KT: TensorArg, V: TensorArg, out: TensorArg) -> None:  # noqa: N803 - the tensors' names
        kt_in = fifo(Tile[(d, bkv), dtype], depth=depth, name="kt")
        v_in = fifo(Tile[(bkv, d), dtype], depth=depth, name="v")
        fills, drains = [], []
        for j in range(npipe):
            q_in = fifo(Tile[(bq, d), dtype], depth=depth, name=f"q_{j}")
            o_out = fifo(Tile[(bq, d), dtype], depth=depth, name=f"o_{j}")
            _pipeline(j, (cols[j], rows), ks, q_in, kt_in, v_in, o_out, per, nkv, bq, bkv, d, dtype, depth)
            # query blocks j * per to (j + 1) * per - 1: one contiguous run of rows
            walk = pattern(j * per * bq * d, (per * bq * d,), (1,))
            fills.append(Move(Q, q_in, walk, True, f"fill_q_{j}"))
            drains.append(Move(out, o_out, walk, False, f"drain_o_{j}"))
        # per query block a pipeline holds: every K^T block (d x bkv, walked by columns), then every V block
        fills.append(Move(KT, kt_in, pattern(0, (nkv, d, bkv), (bkv, Skv, 1)).repeat(per), True, "fill_kt"))
        fills.append(Move(V, v_in, pattern(0, (Skv * d,), (1,)).repeat(per), True, "fill_v"))
        issue(fills + drains, dev)

    tensors = {"Q": Tensor[(Sq, d), dtype], "KT": Tensor[(d, Skv), dtype], "V": Tensor[(Skv, d), dtype],
               "O": Tensor[(Sq, d), dtype]}
    return build_design(f"attention_{Sq}x{Skv}x{d}", dev, tensors, body)


def _pipeline(j: int, where: tuple[int, list[int]], ks: dict[str, Kernel], q_in: FifoRef, kt_in: FifoRef,
              v_in: FifoRef, o_out: FifoRef, per: int, nkv: int, bq: int, bkv: int, d: int, dtype: DType,
              depth: int) -> None:
    """Pipeline ``j``'s three cores, in column ``where[0]`` at rows ``where[1]``, and the fifos between them."""
    col, rows = where
    s_f = fifo(Tile[(bq, bkv), f32], depth=depth, name=f"s_{j}")
    p_f = fifo(Tile[(bq, bkv), dtype], depth=depth, name=f"p_{j}")
    sc_f = fifo(Tile[(bq, 2), f32], depth=depth, name=f"sc_{j}")

    @core(name=f"qk_{j}", tile=(col, rows[0]))
    def qk() -> None:
        for _ in tl_range(per):
            q = q_in.acquire()
            for _ in tl_range(nkv):
                kt, s = kt_in.acquire(), s_f.acquire()
                ks["qk"](q, kt, s)
                kt_in.release()
                s_f.release()
            q_in.release()

    @core(name=f"sm_{j}", tile=(col, rows[1]))
    def sm() -> None:
        st = buffer(Tile[(bq, 2), f32], name=f"stats_{j}")
        for _ in tl_range(per):
            ks["sm_init"](st)
            for _ in tl_range(nkv):
                s, p, sc = s_f.acquire(), p_f.acquire(), sc_f.acquire()
                ks["sm_step"](s, st, p, sc)
                s_f.release()
                p_f.release()
                sc_f.release()

    @core(name=f"pv_{j}", tile=(col, rows[2]))
    def pv() -> None:
        o = buffer(Tile[(bq, d), f32], name=f"acc_{j}")
        for _ in tl_range(per):
            ks["pv_zero"](o)
            if nkv > 1:  # (a loop of no trips is no loop)
                for _ in tl_range(nkv - 1):
                    p, v, sc = p_f.acquire(), v_in.acquire(), sc_f.acquire()
                    ks["pv_step"](p, v, sc, o)
                    p_f.release()
                    v_in.release()
                    sc_f.release()
            p, v, sc, out = p_f.acquire(), v_in.acquire(), sc_f.acquire(), o_out.acquire()
            ks["pv_step"](p, v, sc, o)
            ks["pv_out"](o, sc, out)
            p_f.release()
            v_in.release()
            sc_f.release()
            o_out.release()


__all__ = ["attention", "attention_kernels"]
