"""The bank-assignment ILP: bank-sized buffers into banks, contending buffers apart.

For every tile, each buffer no larger than a bank goes into one bank, within
the bank's free bytes (``b[i,k]`` binaries, one per buffer and bank). The
objective has three parts:

- the cycles kernel calls lose to shared banks (``BankProblem.phases``, from
  ``bank_weights.py``): per phase ``p`` a continuous ``e[p] >= 0`` with
  ``e[p] >= sum_i d[p,i] * b[i,k] - floor[p]`` for every bank ``k``, so
  ``e[p]`` is the amount by which the phase's busiest bank exceeds what the
  call needs anyway; weighted by the phase's call count. This is exactly the
  contention the simulator charges (``tilelang/ir/kernel_cost.py``).
- the weight of every pair of buffers sharing a bank (``BankProblem.pairs``:
  two buffers one kernel call uses together, a buffer a DMA moves while a
  call uses the other, the halves of a double buffer), linearised with one
  ``s[i,j] >= b[i,k] + b[j,k] - 1`` per bank; it ranks assignments the phases
  leave equal.
- a large cost per buffer left without a bank (placed later in
any free gap, spanning banks). Tiles with the same buffers, banks and weights
(the cores of a GEMM grid) are solved once: one representative per distinct
tile, all in one block-diagonal model, in one child process. When first fit
already costs nothing it is optimal and no solver runs; when the solver's
answer is no better than first fit, first fit is kept. This plays the role of
Levental's memory-planning MIP, reduced to what bank-interleaved memories
need: within a bank, buffers are stacked, so capacity is the only packing
constraint.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulp

from tilelang.ir.plan import SolveInfo
from tilelang.plan.bank_fit import UNPLACED, bank_cost, first_fit_banks
from tilelang.plan.buffers import BankChooser, BankProblem
from tilelang.plan.solve import Solution, solve_model, warn


@dataclass
class BankSolve:
    """How the chooser's last call went (read by the driver for the Plan's SolveInfo)."""

    method: str = "first-fit"
    status: str = "optimal"
    objective: float | None = 0.0
    gap: float | None = 0.0
    log: list[str] = field(default_factory=list)
    message: str = ""

    def result(self) -> SolveInfo:
        return SolveInfo(self.method, self.status, 0.0, self.objective, self.gap, self.message)


def signature(bp: BankProblem) -> tuple:
    """What the bank model of a tile depends on, with buffers by position instead of name."""
    pos = {it.name: i for i, it in enumerate(bp.items)}
    items = tuple((it.size, it.set_id, it.index) for it in bp.items)
    pairs = tuple(sorted((pos[x], pos[y], w) for x, y, w in bp.pairs))
    phases = tuple((w, p.floor, tuple((pos[n], d) for n, d in p.demand)) for w, p in bp.phases)
    return bp.mem.banks, bp.free, items, pairs, phases


def distinct(problems: list[BankProblem]) -> tuple[list[BankProblem], list[int]]:
    """(one representative per signature, the representative's index for every problem)."""
    reps: list[BankProblem] = []
    index: dict[tuple, int] = {}
    of = []
    for bp in problems:
        sig = signature(bp)
        if sig not in index:
            index[sig] = len(reps)
            reps.append(bp)
        of.append(index[sig])
    return reps, of


def build_bank_model(problems: list[BankProblem]) -> tuple[pulp.LpProblem, dict[str, dict[int, pulp.LpVariable]]]:
    """The bank model over the given tiles, warm-started with first fit."""
    prob = pulp.LpProblem("banks", pulp.LpMinimize)
    warm = first_fit_banks(problems)
    for bp in problems:
        warm.update(_first_use_order(bp, warm))
    x: dict[str, dict[int, pulp.LpVariable]] = {}
    cost = []
    for t, bp in enumerate(problems):
        for i, it in enumerate(bp.items):
            x[it.name] = {}
            for k in range(bp.mem.banks):
                if it.size <= bp.free[k]:
                    v = prob.add_variable(f"b_{t}_{i}_{k}", 0, 1, cat="Binary")
                    v.setInitialValue(1 if warm.get(it.name) == k else 0)
                    x[it.name][k] = v
            miss = prob.add_variable(f"u_{t}_{i}", 0, 1, cat="Binary")
            miss.setInitialValue(0 if it.name in warm else 1)
            prob += pulp.lpSum(x[it.name].values()) + miss == 1, f"one_{t}_{i}"
            cost.append(UNPLACED * miss)
        for k in range(bp.mem.banks):
            load = [it.size * x[it.name][k] for it in bp.items if k in x[it.name]]
            if load:
                prob += pulp.lpSum(load) <= bp.free[k], f"cap_{t}_{k}"
        cost += _pair_costs(prob, t, bp, x, warm)
        cost += _phase_costs(prob, t, bp, x, warm)
        _order_identical_banks(prob, t, bp, x)
    prob += pulp.lpSum(cost)
    return prob, x


def _identical_banks(bp: BankProblem) -> list[list[int]]:
    """Groups (two or more) of a tile's banks the model cannot tell apart: banks with the same free bytes, or
    all of them when the buffers together fit the smallest (no capacity can bind). Pair and phase terms are
    the same for every bank, so any solution permuted among one group's banks is another of the same cost."""
    if sum(it.size for it in bp.items) <= min(bp.free):  # no capacity can bind: every bank is alike
        return [list(range(bp.mem.banks))] if bp.mem.banks > 1 else []
    groups: dict[int, list[int]] = {}
    for k in range(bp.mem.banks):
        groups.setdefault(bp.free[k], []).append(k)
    return [g for g in groups.values() if len(g) > 1]


def _order_identical_banks(prob: pulp.LpProblem, t: int, bp: BankProblem, x: dict) -> None:
    """Symmetry breaking: within a group of identical banks ``g``, buffer ``i`` may use ``g[j]`` only if an
    earlier buffer uses ``g[j - 1]`` (the banks numbered by first use). Every solution has such a
    relabelling of the same cost, so the optimum is kept; without it the solver proves optimality over
    every permutation of the banks (seconds on a dozen buffers)."""
    for gi, g in enumerate(_identical_banks(bp)):
        for i, it in enumerate(bp.items):
            for j in range(1, len(g)):
                v = x[it.name].get(g[j])
                if v is None:
                    continue
                earlier = [x[e.name][g[j - 1]] for e in bp.items[:i] if g[j - 1] in x[e.name]]
                prob += v <= pulp.lpSum(earlier), f"order_{t}_{gi}_{i}_{j}"


def _first_use_order(bp: BankProblem, banks: dict[str, int]) -> dict[str, int]:
    """``banks`` of this tile's buffers with each group of identical banks renumbered by first use (what
    :func:`_order_identical_banks` requires; the cost is the same)."""
    out = {it.name: banks[it.name] for it in bp.items if it.name in banks}
    for g in _identical_banks(bp):
        used = []
        for it in bp.items:
            k = out.get(it.name)
            if k in g and k not in used:
                used.append(k)
        relabel = dict(zip(used + [k for k in g if k not in used], g, strict=True))
        out = {n: relabel.get(k, k) for n, k in out.items()}
    return out


def _pair_costs(prob: pulp.LpProblem, t: int, bp: BankProblem, x: dict, warm: dict[str, int]) -> list:
    """``w * s`` per weighted pair, ``s >= b[i,k] + b[j,k] - 1`` for every bank both may use."""
    pos = {it.name: i for i, it in enumerate(bp.items)}
    out = []
    for a, b, w in bp.pairs:
        common = sorted(set(x[a]) & set(x[b]))
        if not common:
            continue
        s = prob.add_variable(f"s_{t}_{pos[a]}_{pos[b]}", 0)
        s.setInitialValue(1 if a in warm and warm.get(a) == warm.get(b) else 0)
        for k in common:
            prob += s >= x[a][k] + x[b][k] - 1, f"pair_{t}_{pos[a]}_{pos[b]}_{k}"
        out.append(w * s)
    return out


def _phase_costs(prob: pulp.LpProblem, t: int, bp: BankProblem, x: dict, warm: dict[str, int]) -> list:
    """``w * e`` per phase, ``e >= sum_i d_i * b[i,k] - floor`` for every bank where that can be positive."""
    out = []
    for j, (w, p) in enumerate(bp.phases):
        e = prob.add_variable(f"e_{t}_{j}", 0)
        e.setInitialValue(p.lost(warm))
        for k in range(bp.mem.banks):
            terms = [(d, x[n][k]) for n, d in p.demand if k in x.get(n, {})]
            if sum(d for d, _ in terms) > p.floor:
                prob += e >= pulp.lpSum(d * v for d, v in terms) - p.floor, f"phase_{t}_{j}_{k}"
        out.append(w * e)
    return out


def ilp_banks(solver: str, time_limit: float) -> tuple[BankChooser, BankSolve]:
    """A bank chooser that solves the bank ILP (in a child process killed at ``time_limit``).

    Returns:
        (the chooser for ``place_buffers``, the record of how it solved).
    """
    record = BankSolve()

    def choose(problems: list[BankProblem]) -> dict[str, int]:
        first = first_fit_banks(problems)
        score = bank_cost(problems, first)
        if score == 0:
            record.method, record.status, record.objective, record.gap = "first-fit", "optimal", 0.0, 0.0
            return first
        reps, of = distinct(problems)
        prob, x = build_bank_model(reps)
        sol = solve_model(prob, solver, time_limit)
        status, record.message = _judge(sol)
        if not sol.values:
            record.method, record.status, record.objective, record.gap = "ilp->first-fit", status, score, None
            record.message = record.message or f"the bank ILP found no solution ({sol.status}): first-fit banks kept"
            if status != "error":
                warn(f"buffers: {record.message}")
            return first
        chosen = _expand(problems, reps, of, x, sol.values)
        found = bank_cost(problems, chosen)
        if found > score:
            record.method, record.status, record.objective, record.gap = "ilp->first-fit", status, score, None
            return first
        record.method, record.status, record.objective, record.gap = "ilp", status, found, sol.gap
        return chosen

    return choose, record


def _judge(sol: Solution) -> tuple[str, str]:
    """(status for the plan, message) of a bank solve; a failure or a safety net is also a PlanWarning."""
    if sol.status == "error":
        warn(f"buffers: the bank ILP failed ({sol.message}); first-fit banks are used")
        return "error", f"the bank ILP failed: {sol.message}"
    if sol.clocked:
        warn("buffers: the bank ILP hit its wall-clock safety net; the banks may differ on another machine "
             "(raise time_limit)")
        return "time-limited", "the bank ILP hit its wall-clock safety net"
    return sol.status, ""


def _expand(problems: list[BankProblem], reps: list[BankProblem], of: list[int], x: dict, values: dict) -> dict[str, int]:
    """Every tile's banks from its representative's solution, buffer by position."""
    rep_banks: list[dict[int, int]] = []
    for bp in reps:
        banks = {}
        for i, it in enumerate(bp.items):
            for k, v in x[it.name].items():
                if values.get(v.name, 0.0) > 0.5:
                    banks[i] = k
        rep_banks.append(banks)
    out = {}
    for bp, r in zip(problems, of, strict=True):
        for i, it in enumerate(bp.items):
            if i in rep_banks[r]:
                out[it.name] = rep_banks[r][i]
    return out
