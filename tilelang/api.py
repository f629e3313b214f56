"""The top-level verbs of API.md: plan, route, tile_contraction, simulate, emit_mlir.

Each forwards to the layer that owns it, imported on first use so that
``import tilelang`` stays light and the optional ``mlir`` extra is needed only
by ``emit_mlir``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from tilelang.ir.design import Design
    from tilelang.ir.plan import Plan


def plan(design: Design, solver: str = "cbc", time_limit: float = 60, strategy: str = "ilp") -> Plan:
    """Plan a design: placement, buffers, routes (API.md "Planning").

    Args:
        design: a traced or parsed design.
        solver: "cbc" (bundled with PuLP) or "highs".
        time_limit: seconds for the whole plan, shared among its ILP solves; each
            solve runs in a child process killed at its share (a hard deadline).
        strategy: "ilp" (the ILPs, falling back to the heuristics when a solve
            runs out of time without a solution) or "greedy" (the heuristics only).

    Returns:
        The immutable :class:`~tilelang.ir.plan.Plan`.

    Raises:
        PlanError: a resource ran out; the message names it and who needs it.
    """
    from tilelang.plan import plan as _plan

    return _plan(design, solver=solver, time_limit=time_limit, strategy=strategy)


def route(device: object, flows: list, solver: str = "cbc", time_limit: float = 60):  # noqa: ANN201 - a Routing
    """Route raw stream flows ``[(source, [dests]), ...]`` on a device (API.md "Planning")."""
    from tilelang.plan import route as _route

    return _route(device, flows, solver=solver, time_limit=time_limit)


def tile_contraction(spec: str, sizes: dict, dtypes: tuple, device: object, **options: object):  # noqa: ANN201
    """Choose tile sizes and the spatial split of a contraction such as "mk,kn->mn" (the tiling ILP)."""
    from tilelang.plan.tiling import tile_contraction as _tile

    return _tile(spec, sizes, dtypes, device, **options)


def simulate(plan: Plan | Design, mode: str = "timed", dispatch_overhead: bool = False, trace: bool = True,
             **arrays: np.ndarray):  # noqa: ANN201 - a simulator.SimResult
    """Run a plan (or a design, planned first) with real numbers (API.md "Simulation").

    Args:
        plan: a Plan or a Design.
        mode: "timed" or "functional" (numbers only).
        dispatch_overhead: add the host's per-invocation dispatch cost.
        trace: record a Perfetto trace.
        **arrays: input arrays by tensor name.

    Returns:
        A ``simulator.SimResult`` with ``outputs``, ``cycles``, ``stats``, ``trace``.

    Raises:
        SimulationError, DeadlockError.
    """
    from simulator import simulate as _simulate

    return _simulate(plan, mode=mode, dispatch_overhead=dispatch_overhead, trace=trace, **arrays)


def emit_mlir(plan: Plan, as_module: bool = False, level: str = "objectfifo"):  # noqa: ANN201 - str or mlir Module
    """The plan as a verified mlir-aie module (API.md "MLIR").

    Args:
        plan: the plan to emit.
        as_module: return an ``mlir.ir.Module`` instead of text.
        level: "objectfifo" (fifos lowered by mlir-aie) or "physical" (buffers,
            locks, BD chains and routes as planned).
    """
    from tilelang.backends.mlir import emit_mlir as _emit

    return _emit(plan, as_module=as_module, level=level)
