"""The analytic prior: a cost-model estimate of a point, where the factory has one.

For ``tl.library.matmul`` a point fixes the kernel tile (m, k, n) and the core
grid; the tiler's model (``tilelang.plan.tiling_model``, what
``tl.tile_contraction`` minimises) evaluates exactly that tile and split over
every memtile block size and keeps the best feasible estimate. For
``tl.library.attention`` it paces the pipelines by their slowest stage (:func:`attention_estimate`). For
``tl.library.softmax``, ``rms_norm``, ``layer_norm`` and ``elementwise``'s one-input named ops (chunked designs:
one kernel call per chunk of rows,
the chunks dealt to the cores through the memtiles) it paces each shim channel's
transfers by the slowest of the kernel (the simulator's kernel cost model), a
core's DMA and the channel per round, starts each channel when the runtime
sequence has issued its move, and serves every transfer's bursts by the one
DDR all channels share, as the simulator charges them. That costs
milliseconds per point, against seconds for a plan and a simulation, so the
whole space is ranked before the first simulation and the best-ranked points
are evaluated first. A point the model finds infeasible, or a factory without
a model, has no estimate (None) and is left to the sampler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tilelang.errors import TileLangError

Prior = Callable[[dict[str, Any]], "float | None"]


def prior_for(factory: Callable[..., Any]) -> Prior | None:
    """The prior of a factory, or None when it has none."""
    import tilelang.library as lib

    return {lib.matmul: matmul_estimate, lib.softmax: softmax_estimate, lib.rms_norm: rms_norm_estimate,
            lib.layer_norm: layer_norm_estimate, lib.elementwise: elementwise_estimate,
            lib.attention: attention_estimate}.get(factory)


def matmul_estimate(kwargs: dict[str, Any]) -> float | None:
    """The tiling model's cycles for ``tl.library.matmul(**kwargs)`` with its tile and grid fixed.

    Returns:
        The best estimate over memtile blocks, or None (tiling "auto", a grid or tile the
        factory would refuse, or no feasible candidate).
    """
    from tilelang.ir.dtypes import bf16, f32
    from tilelang.library._common import resolve_device
    from tilelang.library.matmul import _grid
    from tilelang.plan.tiling_model import Space, evaluate, parse

    tiling = kwargs.get("tiling", "auto")
    if not isinstance(tiling, dict) or set(tiling) != {"m", "k", "n"}:
        return None
    try:
        dev = resolve_device(kwargs.get("device", "npu1"))
        dtypes = (kwargs.get("in_dtype", bf16), kwargs.get("out_dtype", f32))
        grid, _ = _grid(dev, kwargs.get("cores"), (kwargs["M"], kwargs["K"], kwargs["N"]), tiling, dtypes,
                        kwargs.get("layout", "row-major"))
        sizes = {"m": kwargs["M"], "k": kwargs["K"], "n": kwargs["N"]}
        c = parse("mk,kn->mn", sizes, (dtypes[0],) * 2 + (dtypes[1],))
    except (TileLangError, KeyError, TypeError):
        return None
    split = {"m": grid.rows, "k": 1, "n": grid.cols}
    ts, ss, bigs = [], [], []
    for i in c.indices:
        t, s, n = int(tiling[i]), split[i], c.sizes[i]
        if t <= 0 or n % (s * t):
            return None
        blocks = [s * t]  # the library re-reads DDR per core-grid block (tile_contraction's blocks="grid")
        ts.append(np.full(len(blocks), t, dtype=np.int64))
        ss.append(np.full(len(blocks), s, dtype=np.int64))
        bigs.append(np.array(blocks, dtype=np.int64))
    ev = evaluate(c, dev, Space(c.indices, tuple(ts), tuple(ss), tuple(bigs)), grid.rows * grid.cols)
    est = np.where(ev.feasible, ev.estimate, np.inf).ravel()
    best = float(est.min()) if est.size else float("inf")
    return best if np.isfinite(best) else None


def softmax_estimate(kwargs: dict[str, Any]) -> float | None:
    """Cycles of ``tl.library.softmax(**kwargs)``: :func:`rows_estimate` of its kernel."""
    from tilelang.library.softmax import softmax_kernel

    return rows_estimate(kwargs, "softmax", softmax_kernel)


def rms_norm_estimate(kwargs: dict[str, Any]) -> float | None:
    """Cycles of ``tl.library.rms_norm(**kwargs)``: :func:`rows_estimate` of its kernel."""
    from tilelang.library.norm import rms_norm_kernel

    return _norm_estimate(kwargs, "rms_norm", rms_norm_kernel)


def layer_norm_estimate(kwargs: dict[str, Any]) -> float | None:
    """Cycles of ``tl.library.layer_norm(**kwargs)``: :func:`rows_estimate` of its kernel."""
    from tilelang.library.norm import layer_norm_kernel

    return _norm_estimate(kwargs, "layer_norm", layer_norm_kernel)


def _norm_estimate(kwargs: dict[str, Any], what: str, make: Callable[..., Any]) -> float | None:
    from tilelang.library.norm import EPS

    return rows_estimate(kwargs, what, lambda per, cols, dtype: make(per, cols, dtype, kwargs.get("eps", EPS)))


def elementwise_estimate(kwargs: dict[str, Any]) -> float | None:
    """Cycles of ``tl.library.elementwise(**kwargs)`` for a named one-input op (``"relu"``, ``"silu"``, ...): the
    same chunked design as the row designs, each chunk of ``tile`` values one row; None for other ops."""
    from tilelang.ir.dtypes import i32
    from tilelang.library.elementwise import OPS, _kernel_from

    op, n, tile = kwargs.get("op"), kwargs.get("n"), kwargs.get("tile") or 1024
    if not isinstance(op, str) or OPS.get(op, (0,))[0] != 1 or not isinstance(n, int) or not isinstance(tile, int):
        return None
    if tile <= 0 or n % tile:
        return None
    rows = {"rows": n // tile, "cols": tile, "dtype": kwargs.get("dtype") or i32, "rows_per_tile": 1,
            **{k: kwargs[k] for k in ("device", "cores", "depth") if k in kwargs}}
    return rows_estimate(rows, "elementwise", lambda per, cols, dtype: _kernel_from(op, cols, dtype)[0])


def rows_estimate(kwargs: dict[str, Any], what: str, kernel_of: Callable[[int, int, Any], Any]) -> float | None:
    """Cycles of a row-wise library design (``softmax``, ``rms_norm``, ``layer_norm``: ``rows`` x ``cols``, one
    kernel call per chunk of ``rows_per_tile`` rows) from its kernel's cost, its data movement and its host moves.

    The rows travel as the library deals them (``tilelang.library._movement``): per round each core takes
    one chunk (``rows_per_tile`` rows) in and one out, a group of a column's cores sharing one shim channel
    each way (``column_groups``), each group's chunks one shim transfer. A round costs the slowest of the
    kernel call, a core's DMA hop and the shim channel serving the group (with one buffer per fifo: the call
    plus its input's move, the next input and the last output moving together). On top of that rate, what
    the simulator charges the host side (``simulator.cost.host_sequence_cycles``, ``simulator.memory.Ddr``):

    - the runtime sequence pushes the moves one after another, every channel's first part, then every
      channel's second (inputs first, then outputs; a move is cut to what one shim BD walks, ``_fit``),
      a to-device move's first data a burst latency after its push;
    - every shim transfer reserves its bursts' time on the DDR, one server shared by all channels, in the
      order the transfers start.

    Each channel's transfers are laid out at that rate, from its move's issue on (outputs a chunk's fill
    later), and served by the DDR in start order: the estimate is when the DDR serves the last one, or the
    last transfer's own channel time ends, whichever is later. So a point is as slow as its kernel, its
    DMA, its moves' issue or the DDR, and the DDR idles while the channels start one by one (a transfer
    reserves its DDR time when it starts: a few large transfers keep it busy sooner than many small ones).

    Returns:
        The estimate, or None (arguments the factory would refuse, or buffers that do not fit a core's or a
        memory tile's memory).
    """
    from simulator.cost import ddr_bytes_per_cycle, host_sequence_cycles, kernel_cycles, transfer_cycles
    from simulator.memory import Ddr
    from tilelang.devices.abi import STACK_BYTES
    from tilelang.devices.costs import BD_SETUP_CYCLES
    from tilelang.ir.dtypes import bf16
    from tilelang.library._common import has_memtiles, resolve_device
    from tilelang.library._movement import ShimLimits, _fit, _walk, column_groups
    from tilelang.library.elementwise import chunk_grid

    try:
        dev = resolve_device(kwargs.get("device", "npu1"))
        rows, cols = int(kwargs["rows"]), int(kwargs["cols"])
        per, depth = int(kwargs.get("rows_per_tile", 1)), int(kwargs.get("depth", 2))
        dtype = kwargs.get("dtype", bf16)
        if per <= 0 or depth <= 0:
            return None
        grid = chunk_grid(dev, kwargs.get("cores", 1), what, 1, 1, rows, per)
        kern = kernel_of(per, cols, dtype)
        kernel = float(kernel_cycles(kern, dev))  # (a DesignError for a dtype the cores have no datapath for)
    except (TileLangError, KeyError, TypeError, ValueError):
        return None
    if rows % (grid.cores * per):
        return None
    chunk = per * cols * dtype.bits // 8
    core = dev.tiles("compute")[0]
    if 2 * depth * chunk + STACK_BYTES > dev.memory_bytes(core):
        return None
    if has_memtiles(dev) and 2 * depth * grid.rows * chunk > dev.memory_bytes(dev.tiles("mem")[0]):
        return None
    rounds = rows // (grid.cores * per)
    stream = dev.stream_bits / 8
    move = BD_SETUP_CYCLES + chunk / stream
    one = BD_SETUP_CYCLES + chunk / float(min(stream, dev.shim_run_bytes_per_cycle(chunk)))
    groups = column_groups(dev, grid, 1, 1)[0]
    size = grid.rows // groups if groups else 1  # cores per shim channel
    shim = one * size  # a shim channel's share of one round
    if depth > 1:
        per_round = max(kernel, move, shim)
    else:  # the call waits for its input and for the last output's buffer; those two moves overlap
        per_round = max(kernel + max(move, one), shim)
    # the host side: one shim transfer per group and round, each way, or one per core and call where a
    # linear-only shim DMA deals each core a contiguous run (``chunked_design``'s ``blocked``)
    channels, elems, limits = grid.cores // size, per * cols, ShimLimits.of(dev)
    blocked = not groups and limits.linear_only
    walk = _walk(0, 1, rounds * elems, 0) if blocked else _walk(0, rounds, size * elems, grid.cores * elems)
    parts = len(_fit(walk.canonical(), limits, chunk // elems, elems))
    nbytes = size * chunk
    run = nbytes * rounds if blocked or channels == 1 else nbytes  # contiguous: one core's run, or all of them
    ddr = Ddr.for_device(dev)
    charged, limit = ddr.cost(nbytes, run)
    tau = float(transfer_cycles(nbytes, min(stream, limit)))
    issue, _, latency = host_sequence_cycles(dev)
    fill = tau + kernel + (2 * move if size > 1 else 0)  # a chunk in (through the memtile), its call, its result
    part = (np.arange(rounds) * parts) // rounds  # the move each round's transfer belongs to
    g = np.arange(channels)[:, None]
    start_in = _paced(_issued(part, g, 0, channels) * issue + latency, per_round)
    start_out = _paced(np.maximum(_issued(part, g, channels, channels) * issue, start_in + fill),
                       per_round)
    starts = np.sort(np.concatenate([start_in.ravel(), start_out.ravel()]))
    work = charged / ddr_bytes_per_cycle(dev)
    served = float(np.max(starts - work * np.arange(len(starts)))) + work * len(starts)  # one server, start order
    return max(served, float(start_out.max()) + tau)


def attention_estimate(kwargs: dict[str, Any]) -> float | None:
    """Cycles of ``tl.library.attention(**kwargs)``: its three-stage pipelines at the pace of their slowest part.

    Per key block every pipeline takes a ``KT`` and a ``V`` block (one broadcast each, a shim channel each:
    ``KT``'s block is ``d`` runs of ``block_kv`` values, read at the rate such short runs allow, ``V``'s one
    run; the DDR serves both, charged per burst as the simulator charges them) and its three cores each run one step (the
    kernel cost model's cycles); per query block the softmax core also starts its statistics and the output
    core zeroes, then normalises and sends its block. A query block's period is the slowest of the three
    cores' work and the key/value stream; with ``causal`` the round's key blocks and each core's work are
    those of the query block it holds that round (masked steps at their own cost), the round as slow as its
    busiest pipeline. The estimate is every round and head at its slowest stage's pace (a causal round's
    slowest stage may not be the next one's, and the rounds hardly overlap: each waits for its query block),
    plus the first query block's way to the stage slowest over the run (after the runtime sequence has pushed
    the moves it needs) and the last one's way out of it (the steps of the stages after it, its output's
    drain). A ``split_kv`` design is estimated by :func:`_split_estimate`.

    Returns:
        The estimate, or None (arguments the factory would refuse).
    """
    from simulator.cost import ddr_bytes_per_cycle, host_sequence_cycles, kernel_cycles, transfer_cycles
    from simulator.memory import Ddr
    from tilelang.ir.dtypes import bf16
    from tilelang.library import attention as make
    from tilelang.library.attention import attention_kernels, combine_kernel, fits, masked_step_kernel, schedule

    try:
        design = make(**kwargs)  # the factory's own checks (and its pipelines), milliseconds
        sq, skv, d = int(kwargs["Sq"]), int(kwargs["Skv"]), int(kwargs["d"])
        bq = int(kwargs.get("block_q", 32))
        split = int(kwargs.get("split_kv", 1))
        # the factory's block_kv (its default when not given)
        bkv = design.fifo("kt" if split == 1 else "kt_0").elem.shape[1]
        dtype, causal = kwargs.get("dtype", bf16), bool(kwargs.get("causal", False))
        scale = float(kwargs.get("scale") or 1.0 / np.sqrt(d))
        dev = design.device
        ks = {k: float(kernel_cycles(v, dev))
              for k, v in attention_kernels(bq, bkv, d, dtype, scale, partial=split > 1).items()}
        if split > 1:
            ks["combine"] = float(kernel_cycles(combine_kernel(bq, d, dtype, scale, split), dev))
        masked = ({o: float(kernel_cycles(masked_step_kernel(bq, bkv, dtype, scale, o), dev))
                   for o in range(0, bkv, bq)} if causal else {})
    except (TileLangError, KeyError, TypeError, ValueError):
        return None
    npipe = len(design.cores) // 3
    heads, per, nkv = int(kwargs.get("heads") or 1), sq // bq // npipe, skv // bkv
    if not fits(dev, bq, bkv, d, dtype, int(kwargs.get("depth", 2)), split > 1):
        return None
    stream = dev.stream_bits / 8
    block = bkv * d * dtype.bits // 8  # a KT block and a V block alike
    ddr = Ddr.for_device(dev)
    # d runs of a block's row of KT, or (kt_layout="blocks") the block in one run
    kt_run = block if kwargs.get("kt_layout") == "blocks" else bkv * dtype.bits // 8
    kt_charged, kt_limit = ddr.cost(block, kt_run)
    v_charged, v_limit = ddr.cost(block, block)
    # a step's KT and V blocks, each on its own shim channel, every pipeline's (split: each its own) from one DDR
    kv = max(float(transfer_cycles(block, min(stream, kt_limit))), float(transfer_cycles(block, min(stream, v_limit))),
             split * (kt_charged + v_charged) / ddr_bytes_per_cycle(dev))
    qblock = float(transfer_cycles(bq * d * dtype.bits // 8, stream))
    issue, _, latency = host_sequence_cycles(dev)
    if split > 1:
        # query blocks: every head's query rows (a key/value head's query heads stacked) in blocks of block_q
        return _split_estimate(ks, kv, qblock, issue, latency, split, nkv // split, heads * sq // bq,
                               float(transfer_cycles(bq * (d + 2) * 4, stream)))
    work = {"qk": 0.0, "sm": 0.0, "pv": 0.0}  # each stage's cores' work, one head; a round as slow as its busiest
    paced = 0.0  # the rounds one after another, each at its slowest stage's pace
    for sweep, per_pipe in schedule(npipe, per, nkv, bq, bkv, causal):
        rnd = dict.fromkeys(work, 0.0)
        for seen in per_pipe:
            sm = sum(ks["sm_step"] if o is None else masked[o] for o in seen.values())
            rnd["qk"] = max(rnd["qk"], sweep * kv, len(seen) * ks["qk"])  # every block of the sweep passes by
            rnd["sm"] = max(rnd["sm"], sm + ks["sm_init"])
            rnd["pv"] = max(rnd["pv"], len(seen) * ks["pv_step"] + ks["pv_zero"] + ks["pv_out"])
        for k in work:
            work[k] += rnd[k]
        paced += max(rnd.values())
    slowest = max(work, key=lambda k: work[k])
    # the runtime sequence pushes every pipeline's query move and the KT and V moves before the first key block
    # flows (each push its issue time), whose first data come a DDR latency later
    start = (npipe + 2) * issue + latency
    # the first query block's way to the slowest stage, and the last one's way out of it
    before = start + {"qk": qblock, "sm": qblock + kv + ks["qk"], "pv": qblock + kv + ks["qk"] + ks["sm_step"]}[slowest]
    after = {"qk": ks["sm_step"] + ks["pv_step"] + ks["pv_out"], "sm": ks["pv_step"] + ks["pv_out"], "pv": 0.0}[slowest]
    return before + heads * paced + after + qblock


def _split_estimate(ks: dict[str, float], kv: float, qblock: float, issue: float, latency: float, split: int,
                    steps: int, blocks: int, part: float) -> float:
    """:func:`attention_estimate` of a ``split_kv`` design: ``blocks`` query blocks one after another, each
    through ``split`` pipelines of ``steps`` key blocks (``kv`` cycles each at the shims), then the merging
    core (``part``: a partial result's transfer into the memtile's join). Each block's period is its slowest
    stage; the first block's way to the merge and the last one's output drain come on top."""
    stages = {"qk": steps * max(kv, ks["qk"]), "sm": steps * ks["sm_step"] + ks["sm_init"],
              "pv": steps * ks["pv_step"] + ks["pv_zero"] + ks["pv_out"], "combine": ks["combine"] + part}
    # the runtime sequence pushes the query move and every pipeline's KT and V moves before the keys flow
    start = (2 * split + 1) * issue + latency + qblock
    # the first block: its pipeline's stages one after another (the slowest paces the rest), then the merge
    first = stages["qk"] + ks["sm_step"] + ks["pv_step"] + ks["pv_out"] + part
    return start + first + (blocks - 1) * max(stages.values()) + ks["combine"] + qblock


def _issued(part: np.ndarray, channel: np.ndarray, first: int, channels: int) -> np.ndarray:
    """How many moves the runtime sequence has pushed once it pushes part ``part`` of a channel's move
    (``first + channel``: inputs first, then outputs). The sequence pushes the fifos together
    (``tilelang.ir.sequence.issue_order``): every channel's first part, in program order, then every
    channel's second, and so on. (A push past a channel's ring waits for that channel's earlier part to
    complete; the estimate does not charge that wait.)"""
    return part * 2 * channels + first + channel + 1


def _paced(ready: np.ndarray, period: float) -> np.ndarray:
    """Start times of each row's transfers: each at its ready time, and ``period`` after the row's previous one."""
    m = np.arange(ready.shape[1])
    return np.maximum.accumulate(ready - m * period, axis=1) + m * period
