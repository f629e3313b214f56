"""The analytic prior: a cost-model estimate of a point, where the factory has one.

For ``tl.library.matmul`` a point fixes the kernel tile (m, k, n) and the core
grid; the tiler's model (``tilelang.plan.tiling_model``, what
``tl.tile_contraction`` minimises) evaluates exactly that tile and split over
every memtile block size and keeps the best feasible estimate. For
``tl.library.softmax`` (a chunked design: one kernel call per chunk of rows, the
chunks dealt to the cores through the memtiles) it is the slowest of the
kernel (the simulator's kernel cost model), a core's DMA and its column's
shim channel per round, over the rounds, plus the first chunk's fill and the
last one's drain; with one buffer per fifo nothing overlaps. That costs
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

    return {lib.matmul: matmul_estimate, lib.softmax: softmax_estimate}.get(factory)


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
        grid = _grid(dev, kwargs.get("cores"))
        sizes = {"m": kwargs["M"], "k": kwargs["K"], "n": kwargs["N"]}
        c = parse("mk,kn->mn", sizes, (kwargs.get("in_dtype", bf16),) * 2 + (kwargs.get("out_dtype", f32),))
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
    """Cycles of ``tl.library.softmax(**kwargs)`` from its kernel's cost and its data movement.

    Per round every core takes one chunk (``rows_per_tile`` rows) in and one out: its kernel call, its own
    DMA channel moving the chunk at the stream's width, and a shim channel of its column moving the chunks
    of the cores it feeds (the library deals a column's cores to one or two shim channels,
    ``column_groups``) at the rate of DDR runs of one chunk (``Device.shim_run_bytes_per_cycle``). With
    two or more buffers per fifo these overlap and the slowest binds; with one, a call waits for its input
    and for its output buffer to drain (the next input and the last output move at the same time), and
    the shim channel still serves its cores in turn.

    Returns:
        The estimate, or None (arguments the factory would refuse, or buffers that do not fit a core's or a
        memory tile's memory).
    """
    from simulator.cost import kernel_cycles
    from tilelang.devices.abi import STACK_BYTES
    from tilelang.devices.costs import BD_SETUP_CYCLES
    from tilelang.ir.dtypes import bf16
    from tilelang.library._common import choose_grid, has_memtiles, resolve_device
    from tilelang.library._movement import column_groups
    from tilelang.library.elementwise import row_limits
    from tilelang.library.softmax import softmax_kernel

    try:
        dev = resolve_device(kwargs.get("device", "npu1"))
        rows, cols = int(kwargs["rows"]), int(kwargs["cols"])
        per, depth = int(kwargs.get("rows_per_tile", 1)), int(kwargs.get("depth", 2))
        dtype = kwargs.get("dtype", bf16)
        max_rows, max_cores = row_limits(dev, 1, 1)
        grid = choose_grid(dev, kwargs.get("cores", 1), "softmax", max_rows=max_rows, max_cores=max_cores)
        kern = softmax_kernel(per, cols, dtype)
    except (TileLangError, KeyError, TypeError, ValueError):
        return None
    if per <= 0 or depth <= 0 or rows % (grid.cores * per):
        return None
    chunk = per * cols * dtype.bits // 8
    core = dev.tiles("compute")[0]
    if 2 * depth * chunk + STACK_BYTES > dev.memory_bytes(core):
        return None
    if has_memtiles(dev) and 2 * depth * grid.rows * chunk > dev.memory_bytes(dev.tiles("mem")[0]):
        return None
    rounds = rows // (grid.cores * per)
    stream = dev.stream_bits / 8
    kernel = float(kernel_cycles(kern, dev))
    move = BD_SETUP_CYCLES + chunk / stream
    one = BD_SETUP_CYCLES + chunk / float(min(stream, dev.shim_run_bytes_per_cycle(chunk)))
    groups = column_groups(dev, grid, 1, 1)[0]
    shim = one * (grid.rows // groups if groups else 1)  # a shim channel's share of one round
    if depth > 1:
        per_round = max(kernel, move, shim)
    else:  # the call waits for its input and for the last output's buffer; those two moves overlap
        per_round = max(kernel + max(move, one), shim)
    return rounds * per_round + one + move + kernel + move
