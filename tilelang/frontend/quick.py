"""Calling a design on numpy arrays: plan, simulate, return the outputs."""

from __future__ import annotations

import numpy as np

from tilelang.errors import DesignError
from tilelang.frontend.calls import bind_names
from tilelang.ir.design import Design


def run_design(design: Design, arrays: tuple, named: dict) -> object:
    """Plan and simulate ``design`` on arrays bound to its tensors by position or name.

    Every tensor the design reads must be given; arrays given for output tensors
    are also written in place, when their dtype and shape match. Returns the output array, or a tuple of them in
    argument order.
    """
    from simulator import simulate
    from tilelang.plan import plan

    bound = bind_names(design.name, [t.name for t in design.params], arrays, named, DesignError)
    missing = [n for n in design.inputs if bound.get(n) is None]
    if missing:
        only_written = [n for n in design.outputs if n not in design.inputs]
        raise DesignError(
            f"{design.name}() is missing the input array(s) {missing}: the design reads them "
            f"(only tensors it just writes, {only_written}, may be left out)"
        )
    result = simulate(plan(design), **bound)
    outs = []
    for name in design.outputs:
        out = result.outputs[name]
        given = bound.get(name)
        if isinstance(given, np.ndarray) and given.shape == out.shape and given.dtype == out.dtype and given.flags.writeable:
            given[...] = out
        outs.append(out)
    return outs[0] if len(outs) == 1 else tuple(outs)
