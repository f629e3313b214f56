"""MultiPlan: several tenants' plans side by side on disjoint column ranges of one device.

The NPU array splits at column boundaries into spatially isolated partitions
(Linux Documentation/accel/amdxdna/amdnpu.rst: "The 2D array can be
partitioned at a column boundary creating a spatially isolated partition which
can be bound to a workload context"). mlir-aie models a partition as a device
of its own, npu1_1col..npu1_3col and npu2_1col..npu2_7col, whose columns are
always numbered from 0 (VirtualizedNPU1TargetModel / NPU2TargetModel take the
column count only); the xdna driver picks the partition's start column when it
creates the hardware context (xdna-driver's hwctx ``start_col``). So a tenant is
planned on the partition device of its width (its *local* plan, columns from 0,
the one emitted) and placed at a column offset of the whole device (its plan in
:attr:`MultiPlan.plans`, every coordinate moved east, the one the report draws).

:meth:`MultiPlan.joint` is every tenant's plan in one plan of the whole device,
names prefixed ``t<i>_``: the simulator runs it to model the tenants together
(their host sequences run side by side and share the one DDR bandwidth limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from tilelang.devices import Device
from tilelang.errors import PlanError
from tilelang.ir.plan import Plan
from tilelang.ir.rename import merge_designs, prefix_design, shift_plan


@dataclass(frozen=True)
class Tenant:
    """One tenant: its local plan (on its partition device) and where the partition sits.

    Attributes:
        name: the tenant's name.
        local: the plan on the partition device (columns from 0), as emitted.
        first_column: the partition's first column on the whole device.
    """

    name: str
    local: Plan
    first_column: int

    @property
    def width(self) -> int:
        return self.local.device.cols

    @property
    def columns(self) -> tuple[int, int]:
        """``(first, width)`` on the whole device."""
        return (self.first_column, self.width)


@dataclass(frozen=True, eq=False)
class MultiPlan:
    """Tenants on disjoint column ranges of ``device``.

    Attributes:
        device: the whole device.
        tenants: by name, in the order given.
        how: how the column split was chosen (for the report).
    """

    device: Device
    tenants: dict[str, Tenant]
    how: str = ""

    def __post_init__(self) -> None:
        used: dict[int, str] = {}
        for t in self.tenants.values():
            if t.local.device.arch is not self.device.arch or t.local.device.rows != self.device.rows:
                raise PlanError(f"tenant {t.name!r}: planned for {t.local.device.name}, not a partition of "
                                f"{self.device.name}")
            if t.first_column < 0 or t.first_column + t.width > self.device.cols:
                raise PlanError(f"tenant {t.name!r}: columns {t.first_column}..{t.first_column + t.width - 1} are "
                                f"outside {self.device.name}'s {self.device.cols} columns")
            for c in range(t.first_column, t.first_column + t.width):
                if c in used:
                    raise PlanError(f"tenants {used[c]!r} and {t.name!r} both hold column {c}")
                used[c] = t.name

    @cached_property
    def plans(self) -> dict[str, Plan]:
        """Each tenant's plan on the whole device, confined to its columns."""
        out = {}
        for name, t in self.tenants.items():
            design = prefix_design(t.local.design, "", device=self.device, columns=t.first_column)
            out[name] = shift_plan(t.local, "", t.first_column, design)
        return out

    @property
    def columns(self) -> dict[str, tuple[int, int]]:
        """``{tenant: (first column, width)}``."""
        return {name: t.columns for name, t in self.tenants.items()}

    def prefix(self, tenant: str) -> str:
        """The prefix of ``tenant``'s names in :meth:`joint`."""
        return f"t{list(self.tenants).index(tenant)}_"

    @cached_property
    def joint(self) -> Plan:
        """Every tenant in one plan of the whole device, tenant i's names prefixed ``t<i>_``."""
        designs, plans = [], []
        for name, t in self.tenants.items():
            p = self.prefix(name)
            d = prefix_design(t.local.design, p, device=self.device, columns=t.first_column)
            designs.append(d)
            plans.append(shift_plan(t.local, p, t.first_column, d))
        design = merge_designs("colocated", self.device, designs)
        merged: dict[str, dict] = {k: {} for k in ("placement", "link_tiles", "fifos", "buffers", "routes", "solves")}
        for pl in plans:
            for k, v in merged.items():
                v.update(getattr(pl, k))
        return Plan(design=design, **merged)

    def report(self) -> str:
        """The partition: each tenant's columns, cores and design, and a column map."""
        lines = [f"{self.device.name}: {len(self.tenants)} tenants on {self.device.cols} columns"
                 + (f" ({self.how})" if self.how else "")]
        owner = ["."] * self.device.cols
        for i, (name, t) in enumerate(self.tenants.items()):
            first, width = t.columns
            for c in range(first, first + width):
                owner[c] = chr(ord("a") + i % 26)
            lines.append(f"  {owner[first]} {name:<12} columns {first}..{first + width - 1} on {t.local.device.name}: "
                         f"design {t.local.design.name}, {len(t.local.design.cores)} cores")
        lines.append("  columns: " + " ".join(owner) + "   (. = free)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()
