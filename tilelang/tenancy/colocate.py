"""``tl.colocate``: several designs planned side by side on disjoint column partitions.

Each tenant is planned on the partition device of its width (npu1_Ncol,
npu2_Ncol: tilelang/devices, after mlir-aie's AIEDevice list) and placed at a
column offset of the whole device, tenants left to right in the order given.
When the columns are not given, the split is chosen by exact search: every
tenant is planned at every width it may get, each plan simulated in the
simulator's "timing" mode (the timed cost model without moving data), and every
split of the columns into the tenants' widths is tried; the split with the
smallest slowest tenant wins (ties: smaller total cycles, then narrower widths
first in tenant order). The candidates' cycles are those of each tenant alone:
the search does not model the tenants' shared DDR bandwidth, the joint
simulation (``tl.simulate(mp, ...)``) does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import DesignError, PlanError, TileLangError
from tilelang.ir.design import Design
from tilelang.ir.multiplan import MultiPlan, Tenant
from tilelang.ir.plan import Plan
from tilelang.ir.rename import prefix_design

#: A tenant: a design (re-targeted to its partition as it is) or a factory of designs per partition device.
TenantSpec = Design | Callable[[Device], Design]


def partition(device: Device, width: int) -> Device:
    """The partition device of ``width`` columns of ``device`` (npu1 -> npu1_2col, ...).

    Raises:
        PlanError: the device has no partition of that width.
    """
    if width == device.cols:
        return device
    base = device.name.split("_", 1)[0]
    try:
        part = lookup_device(f"{base}_{width}col")
    except DesignError:
        raise PlanError(f"{device.name} has no {width}-column partition device (mlir-aie defines "
                        f"npu1_1col..3col and npu2_1col..7col)") from None
    if part.arch is not device.arch or part.rows != device.rows:
        raise PlanError(f"{part.name} is not a partition of {device.name}")
    return part


class TenantError(DesignError):
    """A tenant that is no design at any width: neither a Design nor a factory, or a factory returning
    something else than a Design for the device it was given."""


def check_tenants(specs: object) -> dict[str, TenantSpec]:
    """``specs`` as ``{name: design or factory}``.

    Raises:
        TenantError: not a dict of non-empty names to Designs or callables.
    """
    if not isinstance(specs, Mapping):
        raise TenantError(f"expected a dict of tenants {{name: design or factory(device)}}, got {type(specs).__name__}")
    for name, spec in specs.items():
        if not isinstance(name, str) or not name:
            raise TenantError(f"tenant names must be non-empty strings, got {name!r}")
        if not isinstance(spec, Design) and not callable(spec):
            raise TenantError(f"tenant {name!r}: expected a Design or a function of a device returning one, "
                              f"got {spec!r}")
    return dict(specs)


def _design_for(name: str, spec: TenantSpec, dev: Device) -> Design:
    if isinstance(spec, Design):
        return spec if spec.device is dev else prefix_design(spec, "", device=dev)
    if callable(spec):
        d = spec(dev)
        if not isinstance(d, Design) or d.device.name != dev.name:
            got = f"a Design for {d.device.name}" if isinstance(d, Design) else repr(d)
            raise TenantError(f"tenant {name!r}: its factory must return a Design for the device it is given "
                              f"({dev.name}), got {got}")
        return d
    raise TenantError(f"tenant {name!r}: expected a Design or a function of a device returning one, got {spec!r}")


class Candidates:
    """Each tenant's plan and predicted cycles per width, computed once each.

    Attributes:
        device: the whole device.
        specs: the tenants.
        planner: ``plan(design) -> Plan``.
        cycles_of: ``cycles(plan) -> int``, the prediction.
    """

    def __init__(self, device: Device, specs: Mapping[str, TenantSpec], planner: Callable[[Design], Plan],
                 cycles_of: Callable[[Plan], int]) -> None:
        self.device = device
        self.specs = specs
        self.planner = planner
        self.cycles_of = cycles_of
        self.plans: dict[tuple[str, int], Plan | PlanError] = {}
        self.cycles: dict[tuple[str, int], int] = {}

    def plan(self, name: str, width: int) -> Plan:
        """Tenant ``name`` planned on ``width`` columns.

        Raises:
            PlanError: it does not fit, naming the tenant.
        """
        key = (name, width)
        if key not in self.plans:
            try:
                dev = partition(self.device, width)
                self.plans[key] = self.planner(_design_for(name, self.specs[name], dev))
            except TenantError:
                raise  # not a question of width
            except (PlanError, DesignError) as e:
                self.plans[key] = PlanError(f"tenant {name!r} does not fit {width} column(s) of "
                                            f"{self.device.name}: {e}")
        got = self.plans[key]
        if isinstance(got, PlanError):
            raise got
        return got

    def why(self, name: str, widths: range | list[int]) -> str:
        """Why tenant ``name`` fits none of ``widths``: the widest one's error ("" when unknown)."""
        for w in sorted(widths, reverse=True):
            got = self.plans.get((name, w))
            if isinstance(got, PlanError):
                return str(got)
        return ""

    def predicted(self, name: str, width: int) -> int | None:
        """Predicted cycles of tenant ``name`` on ``width`` columns, None when it does not fit."""
        key = (name, width)
        if key not in self.cycles:
            try:
                self.cycles[key] = self.cycles_of(self.plan(name, width))
            except PlanError:
                return None
        return self.cycles[key]


def best_split(cand: Candidates, names: list[str]) -> tuple[tuple[int, ...], int]:
    """The widths (in tenant order) minimising the slowest tenant's predicted cycles, and that maximum.

    Raises:
        PlanError: no split fits every tenant, naming a tenant that fits no width available to it.
    """
    cols, n = cand.device.cols, len(names)
    if n > cols:
        raise PlanError(f"{n} tenants cannot share {cand.device.name}'s {cols} columns (one column at least each)")
    widths = range(1, cols - n + 2)
    for name in names:
        if all(cand.predicted(name, w) is None for w in widths):
            cand.plan(name, max(widths))  # raises the PlanError of the widest partition it may get
    best: tuple[tuple[int, int, tuple[int, ...]], tuple[int, ...]] | None = None
    for split in itertools.product(widths, repeat=n):
        if sum(split) > cols:
            continue
        cycles = [cand.predicted(name, w) for name, w in zip(names, split, strict=True)]
        if any(c is None for c in cycles):
            continue
        key = (max(cycles), sum(cycles), split)  # type: ignore[type-var, arg-type]
        if best is None or key < best[0]:
            best = (key, split)
    if best is None:
        raise PlanError(f"no split of {cand.device.name}'s {cols} columns fits every tenant of {names}")
    return best[1], best[0][0]


def _timing_cycles(plan: Plan) -> int:
    from simulator import simulate

    return simulate(plan, mode="timing", trace=False).cycles


def colocate(designs: Mapping[str, TenantSpec], device: str | Device = "npu1",
             columns: Mapping[str, tuple[int, int]] | None = None, solver: str = "cbc",
             time_limit: float = 60) -> MultiPlan:
    """Plan several designs side by side on disjoint column ranges of one device (API.md "Tenancy and fusion").

    Args:
        designs: ``{tenant: design}``; a design is re-targeted to its partition device as it
            is (its cores must fit), or give a function ``device -> Design`` to build one per width.
        device: the whole device ("npu1" or "npu2").
        columns: ``{tenant: (first column, width)}``; None: chosen by exact search over widths,
            minimising the slowest tenant's cycles (timing-mode simulation of each candidate plan).
        solver, time_limit: passed to the planner for each tenant's plan.

    Returns:
        A :class:`~tilelang.ir.multiplan.MultiPlan`; ``mp.plans[tenant]`` is confined to its columns.

    Raises:
        PlanError: a tenant does not fit its columns (naming it), columns overlap or leave the device.
        DesignError: a tenant that is neither a design nor a factory of designs.
    """
    from tilelang.plan import plan as _plan

    dev = lookup_device(device)
    if not isinstance(designs, Mapping) or not designs:
        raise DesignError("tl.colocate takes a non-empty {tenant name: design} dict")
    for name in designs:
        if not isinstance(name, str) or not name.isidentifier():
            raise DesignError(f"tenant name {name!r} is not an identifier")
    designs = check_tenants(designs)
    cand = Candidates(dev, designs, lambda d: _plan(d, solver=solver, time_limit=time_limit), _timing_cycles)
    names = list(designs)
    if columns is None:
        widths, worst = best_split(cand, names)
        firsts = list(itertools.accumulate((0, *widths[:-1])))
        placed = dict(zip(names, zip(firsts, widths, strict=True), strict=True))
        how = f"split by exact search, slowest tenant {worst} cycles alone (timing simulation)"
    else:
        unknown = sorted(set(columns) ^ set(names))
        if unknown:
            raise TileLangError(f"tl.colocate: columns must name every tenant and only them; mismatched: {unknown}")
        placed = dict(columns)
        how = "columns given"
    tenants = {}
    for name in names:
        given = placed[name]
        if not (isinstance(given, tuple | list) and len(given) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in given) and given[1] >= 1):
            raise PlanError(f"tenant {name!r}: columns must be (first column, width >= 1), got {given!r}")
        first, width = given
        tenants[name] = Tenant(name, cand.plan(name, width), first)
    return MultiPlan(dev, tenants, how)
