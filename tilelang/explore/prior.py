"""The analytic prior: the tiler's cost-model estimate of a point, where the factory has one.

For ``tl.library.matmul`` a point fixes the kernel tile (m, k, n) and the core
grid; the tiler's model (``tilelang.plan.tiling_model``, what
``tl.tile_contraction`` minimises) evaluates exactly that tile and split over
every memtile block size and keeps the best feasible estimate. That costs
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

    return {lib.matmul: matmul_estimate}.get(factory)


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
