"""The top-level verbs of API.md: plan, route, tile_contraction, simulate, emit_mlir (and read_mlir).

Each forwards to the layer that owns it, imported on first use so that
``import tilelang`` stays light and the optional ``mlir`` extra is needed only
by ``emit_mlir``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os

    import numpy as np

    from tilelang.ir.design import Design
    from tilelang.ir.plan import Plan


def plan(design: Design, solver: str = "cbc", time_limit: float = 60, strategy: str = "ilp", pack: bool = True) -> Plan:
    """Plan a design: placement, buffers, routes (API.md "Planning").

    Args:
        design: a traced or parsed design.
        solver: "cbc" (bundled with PuLP) or "highs".
        time_limit: seconds for the whole plan, shared among its ILP solves; each
            solve runs in a child process killed at its share (a hard deadline).
        strategy: "ilp" (the ILPs, falling back to the heuristics when a solve
            runs out of time without a solution) or "greedy" (the heuristics only).
        pack: let a core's ``tl.buffer`` buffers whose lifetimes never meet share memory
            (reported per tile in ``plan.report()``); False keeps them apart.

    Returns:
        The immutable :class:`~tilelang.ir.plan.Plan`.

    Raises:
        PlanError: a resource ran out; the message names it and who needs it.
    """
    from tilelang.plan import plan as _plan

    if not isinstance(pack, bool):
        from tilelang.errors import PlanError

        raise PlanError(f"pack must be True or False, got {pack!r}")
    return _plan(design, solver=solver, time_limit=time_limit, strategy=strategy, pack=pack)


def route(device: object, flows: list, solver: str = "cbc", time_limit: float = 60):  # noqa: ANN201 - a Routing
    """Route raw stream flows ``[(source, [dests]), ...]`` on a device (API.md "Planning")."""
    from tilelang.plan import route as _route

    return _route(device, flows, solver=solver, time_limit=time_limit)


def tile_contraction(spec: str, sizes: dict, dtypes: tuple, device: object, **options: object):  # noqa: ANN201
    """Choose tile sizes and the spatial split of a contraction such as "mk,kn->mn" (the tiling ILP)."""
    from tilelang.plan.tiling import tile_contraction as _tile

    return _tile(spec, sizes, dtypes, device, **options)


def simulate(plan: Plan | Design, mode: str = "timed", dispatch_overhead: bool = False, trace: bool = True,
             kernel_cycles: dict[str, int] | None = None, **arrays: np.ndarray):  # noqa: ANN201 - a simulator.SimResult
    """Run a plan (or a design, planned first) with real numbers (API.md "Simulation").

    Args:
        plan: a Plan or a Design.
        mode: "timed", "functional" (numbers only) or "timing" (cycles only).
        dispatch_overhead: add the host's per-invocation dispatch cost.
        trace: record a Perfetto trace.
        kernel_cycles: measured cycles per call of kernels by name, used instead of the cost model's
            (docs/simulator.md, "Measured kernel cycles").
        **arrays: input arrays by tensor name.

    Returns:
        A ``simulator.SimResult`` with ``outputs``, ``cycles``, ``stats``, ``trace``.

    Raises:
        SimulationError, DeadlockError.
    """
    from simulator import simulate as _simulate
    from tilelang.ir.design import Design
    from tilelang.ir.multiplan import MultiPlan

    if isinstance(plan, MultiPlan):  # co-located tenants: arrays are {tenant: {tensor: array}}
        from simulator.tenants import simulate_multi
        from tilelang.errors import SimulationError

        if dispatch_overhead:
            raise SimulationError("dispatch_overhead is per invocation of one design; a MultiPlan runs several")
        if kernel_cycles:
            raise SimulationError("kernel_cycles is taken for one plan; simulate a tenant's own plan to give its "
                                  "kernels' cycles")
        return simulate_multi(plan, arrays, mode=mode, trace=trace)  # type: ignore[arg-type]
    if isinstance(plan, Design):
        from tilelang.plan import plan as _plan

        plan = _plan(plan)
    return _simulate(plan, mode=mode, dispatch_overhead=dispatch_overhead, trace=trace, kernel_cycles=kernel_cycles,
                     **arrays)


def read_mlir(source: str | os.PathLike, kernels: dict | None = None, name: str | None = None) -> Design:
    """The Design of an objectfifo-level mlir-aie module (IRON's output, or a hand-written design), to
    plan and simulate (docs/mlir_backend.md, "Reading an mlir-aie module").

    Args:
        source: a ``.mlir`` path or the module's text (generic form, or custom assembly read through
            mlir-aie's aie-opt).
        kernels: ``tl.kernel`` / ``tl.extern_kernel`` objects by the module's function names, giving
            numbers and cycles; the other functions are extern kernels without either (simulate them in
            ``mode="timing"`` with ``kernel_cycles=``).
        name: the design's name (default: the file's stem).

    Returns:
        The verified Design.

    Raises:
        DesignError: a construct the reader does not take, named; TileLangError: not an MLIR module.
    """
    from tilelang.backends.mlir.reader import read_mlir as _read

    return _read(source, kernels, name)


def emit_mlir(plan: Plan, as_module: bool = False, level: str = "objectfifo", pretty: bool = False):  # noqa: ANN201
    """The plan as a verified mlir-aie module (API.md "MLIR").

    Args:
        plan: the plan to emit.
        as_module: return an ``mlir.ir.Module`` instead of text.
        level: "objectfifo" (fifos lowered by mlir-aie) or "physical" (buffers,
            locks, BD chains and routes as planned).
        pretty: return mlir-aie's custom assembly (printed by mlir-aie's own
            aie-opt, the form IRON users read) instead of the generic form.

    Returns:
        The module text (generic form, or custom with ``pretty``), or an ``mlir.ir.Module``.

    Raises:
        PlanError: the plan does not fit the hardware's BD, lock or switch rules.
        VendorFlowError: ``pretty`` without mlir-aie's aie-opt (the message says where it is looked for).
    """
    from tilelang.backends.mlir import emit_mlir as _emit
    from tilelang.ir.multiplan import MultiPlan

    if pretty and as_module:
        from tilelang.errors import TileLangError

        raise TileLangError("emit_mlir: pretty=True gives text; it cannot be combined with as_module=True")
    if isinstance(plan, MultiPlan):  # one aie.device per tenant's partition
        from tilelang.backends.mlir.multi import emit_multi
        from tilelang.errors import TileLangError

        if as_module:
            raise TileLangError("emit_mlir: a MultiPlan is emitted as text (one aie.device per tenant)")
        text = emit_multi(plan, level=level)
    else:
        text = _emit(plan, as_module=as_module, level=level)
    if pretty:
        from tilelang.backends.mlir.vendor import pretty as _pretty

        return _pretty(text)
    return text


def run_design(design: Design, arrays: tuple, named: dict) -> object:
    """Plan and simulate ``design`` on arrays bound to its tensors by position or name (``design(A, B)``).

    Every tensor the design reads must be given; arrays given for output tensors
    are also written in place, when their dtype and shape match.

    Returns:
        The output array, or a tuple of them in argument order.

    Raises:
        DesignError: arguments that do not bind, or a missing input array.
    """
    import numpy as np

    from tilelang.errors import DesignError
    from tilelang.ir.calls import bind_names

    bound = bind_names(design.name, [t.name for t in design.params], arrays, named, DesignError)
    missing = [n for n in design.inputs if bound.get(n) is None]
    if missing:
        only_written = [n for n in design.outputs if n not in design.inputs]
        raise DesignError(
            f"{design.name}() is missing the input array(s) {missing}: the design reads them "
            f"(only tensors it just writes, {only_written}, may be left out)"
        )
    result = simulate(design, **bound)
    outs = []
    for name in design.outputs:
        out = result.outputs[name]
        given = bound.get(name)
        if isinstance(given, np.ndarray) and given.shape == out.shape and given.dtype == out.dtype and given.flags.writeable:
            given[...] = out
        outs.append(out)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _register() -> None:
    # Design.__call__ lives in the IR, which may not import the planner or the simulator: it calls this runner.
    from tilelang.ir.calls import set_design_runner

    set_design_runner(run_design)


_register()
