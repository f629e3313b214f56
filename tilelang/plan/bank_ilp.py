"""The bank-assignment ILP: bank-sized buffers into banks, halves of a double buffer apart.

For every tile, each buffer no larger than a bank goes into one bank, within
the bank's free bytes (``b[i,k]`` binaries, one per buffer and bank). The
objective counts buffers that share a bank with another buffer of their set
(a double buffer's halves in one bank make the core's reads and the DMA's
writes collide, the reason mlir-aie's bank-aware allocator spreads them),
plus a large cost per buffer left without a bank (placed later in any free
gap, spanning banks). All tiles form one block-diagonal model, solved in one
child process. When first fit already has no conflict it is optimal and no
solver runs. This plays the role of Levental's memory-planning MIP, reduced
to what bank-interleaved memories need: within a bank, buffers are stacked,
so capacity is the only packing constraint.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulp

from tilelang.ir.plan import SolveInfo
from tilelang.plan.buffers import BankChooser, BankProblem, conflicts, first_fit_banks
from tilelang.plan.solve import solve_model

#: Cost of a buffer left without a bank, against 1 per same-bank conflict.
UNPLACED = 100.0


@dataclass
class BankSolve:
    """How the chooser's last call went (read by the driver for the Plan's SolveInfo)."""

    method: str = "first-fit"
    status: str = "optimal"
    objective: float | None = 0.0
    gap: float | None = 0.0
    log: list[str] = field(default_factory=list)

    def result(self) -> SolveInfo:
        return SolveInfo(self.method, self.status, 0.0, self.objective, self.gap)


def build_bank_model(problems: list[BankProblem]) -> tuple[pulp.LpProblem, dict[str, dict[int, pulp.LpVariable]]]:
    """The bank model over all tiles, warm-started with first fit."""
    prob = pulp.LpProblem("banks", pulp.LpMinimize)
    warm = first_fit_banks(problems)
    x: dict[str, dict[int, pulp.LpVariable]] = {}
    cost = []
    for t, bp in enumerate(problems):
        for it in bp.items:
            x[it.name] = {}
            for k in range(bp.mem.banks):
                if it.size <= bp.free[k]:
                    v = prob.add_variable(f"b_{it.name}_{k}", 0, 1, cat="Binary")
                    v.setInitialValue(1 if warm.get(it.name) == k else 0)
                    x[it.name][k] = v
            miss = prob.add_variable(f"u_{it.name}", 0, 1, cat="Binary")
            miss.setInitialValue(0 if it.name in warm else 1)
            prob += pulp.lpSum(x[it.name].values()) + miss == 1, f"one_{it.name}"
            cost.append(UNPLACED * miss)
        for k in range(bp.mem.banks):
            load = [it.size * x[it.name][k] for it in bp.items if k in x[it.name]]
            if load:
                prob += pulp.lpSum(load) <= bp.free[k], f"cap_{t}_{k}"
        for sid in sorted({it.set_id for it in bp.items}):
            mine = [it for it in bp.items if it.set_id == sid]
            if len(mine) < 2:
                continue
            for k in range(bp.mem.banks):
                here = [x[it.name][k] for it in mine if k in x[it.name]]
                if len(here) < 2:
                    continue
                extra = prob.add_variable(f"c_{t}_{sid}_{k}", 0)
                extra.setInitialValue(max(0, sum(1 for it in mine if warm.get(it.name) == k) - 1))
                prob += extra >= pulp.lpSum(here) - 1, f"apart_{t}_{sid}_{k}"
                cost.append(extra)
    prob += pulp.lpSum(cost)
    return prob, x


def ilp_banks(solver: str, time_limit: float) -> tuple[BankChooser, BankSolve]:
    """A bank chooser that solves the bank ILP (in a child process killed at ``time_limit``).

    Returns:
        (the chooser for ``place_buffers``, the record of how it solved).
    """
    record = BankSolve()

    def choose(problems: list[BankProblem]) -> dict[str, int]:
        first = first_fit_banks(problems)
        score = conflicts(problems, first)
        if score == 0:
            record.method, record.status, record.objective, record.gap = "first-fit", "optimal", 0.0, 0.0
            return first
        prob, x = build_bank_model(problems)
        sol = solve_model(prob, solver, time_limit)
        if not sol.values:
            record.method, record.status, record.objective, record.gap = "ilp->first-fit", sol.status, None, None
            return first
        out = {}
        for name, banks in x.items():
            for k, v in banks.items():
                if sol.values.get(v.name, 0.0) > 0.5:
                    out[name] = k
        record.method, record.status, record.objective, record.gap = "ilp", sol.status, sol.objective, sol.gap
        return out

    return choose, record
