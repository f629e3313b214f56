"""Calling a design on numpy arrays: plan, simulate, return the outputs."""

from __future__ import annotations

import numpy as np

from tilelang.errors import DesignError
from tilelang.ir.design import Design


def run_design(design: Design, arrays: tuple, named: dict) -> object:
    """Plan and simulate ``design`` on arrays bound to its tensors by position or name.

    Arrays given for output tensors are also written in place, when their
    dtype and shape match. Returns the output array, or a tuple of them in
    argument order.
    """
    from simulator import simulate
    from tilelang.plan import plan

    names = [t.name for t in design.params]
    if len(arrays) > len(names):
        raise DesignError(f"{design.name}() takes {len(names)} arrays, got {len(arrays)}")
    bound = dict(zip(names, arrays, strict=False))
    for k, v in named.items():
        if k not in names:
            raise DesignError(f"{design.name}() has no tensor {k!r}; tensors are {names}")
        if k in bound:
            raise DesignError(f"{design.name}() got two arrays for {k!r}")
        bound[k] = v
    result = simulate(plan(design), **bound)
    outs = []
    for name in design.outputs:
        out = result.outputs[name]
        given = bound.get(name)
        if isinstance(given, np.ndarray) and given.shape == out.shape and given.dtype == out.dtype and given.flags.writeable:
            given[...] = out
        outs.append(out)
    return outs[0] if len(outs) == 1 else tuple(outs)
