"""Simulating co-located tenants together: ``tl.simulate(mp, a={...}, b={...})``.

The tenants' plans run as one joint plan of the whole device
(:attr:`MultiPlan.joint`): every tenant's host sequence is issued from the
start, side by side, and all their shim DMAs draw on the one DDR bandwidth
limit the simulator models for any design (simulator/memory.py ``Ddr``: a
single server reserving DDR time in the order transfers start). Tenants share
nothing else: their tiles, routes and shim channels lie in disjoint columns.
A tenant's cycles are when its last move or core finished.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from simulator.result import SimResult, Stats
from simulator.run import simulate
from tilelang.errors import SimulationError
from tilelang.ir.multiplan import MultiPlan


@dataclass
class TenantResult:
    """One tenant's share of a joint run.

    Attributes:
        outputs: its written tensors, by its own names.
        cycles: when its last move or core finished.
        stats: its cores, fifos, moves, and the DMA channels and stream links in its columns (own names).
        columns: ``(first column, width)``.
    """

    outputs: dict[str, np.ndarray]
    cycles: int
    stats: Stats
    columns: tuple[int, int]


@dataclass
class MultiResult:
    """A joint run of every tenant.

    Attributes:
        tenants: by name.
        makespan: cycles until every tenant finished.
        joint: the whole run (prefixed names ``t<i>_``).
    """

    tenants: dict[str, TenantResult]
    makespan: int
    joint: SimResult

    def __getitem__(self, tenant: str) -> TenantResult:
        return self.tenants[tenant]

    @property
    def cycles(self) -> int:
        return self.makespan

    def report(self) -> str:
        """Per tenant: columns, cycles, DDR bytes; and the makespan."""
        lines = [f"{'tenant':<12} {'columns':>8} {'cycles':>10} {'DDR bytes':>12}"]
        for name, t in self.tenants.items():
            cols = f"{t.columns[0]}..{t.columns[0] + t.columns[1] - 1}"
            lines.append(f"{name:<12} {cols:>8} {t.cycles:>10} {t.stats.ddr_bytes_read + t.stats.ddr_bytes_written:>12}")
        lines.append(f"makespan {self.makespan} cycles")
        return "\n".join(lines)


_COLUMN = re.compile(r"\((\d+),\s*\d+\)")


def _in_columns(key: str, first: int, width: int) -> bool:
    m = _COLUMN.search(key)
    return bool(m) and first <= int(m.group(1)) < first + width


def _strip(d: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in d.items() if k.startswith(prefix)}


def _tenant_stats(stats: Stats, prefix: str, columns: tuple[int, int], cycles: int, to_device: set[str]) -> Stats:
    moves = _strip(stats.moves, prefix)
    read = sum(m["bytes"] for k, m in moves.items() if prefix + k in to_device)
    return Stats(
        cycles=cycles,
        cores={k: dataclasses.replace(c, stalls=_strip(c.stalls, prefix), fill=_strip(c.fill, prefix))
               for k, c in _strip(stats.cores, prefix).items()},
        channels={k: v for k, v in stats.channels.items() if _in_columns(k, *columns)},
        links=_strip(stats.links, prefix),
        stream_links={k: v for k, v in stats.stream_links.items() if _in_columns(k, *columns)},
        fifos=_strip(stats.fifos, prefix),
        moves=moves,
        ddr_bytes_read=read,
        ddr_bytes_written=sum(m["bytes"] for m in moves.values()) - read,
        events=0,
    )


def simulate_multi(mp: MultiPlan, arrays: dict[str, dict[str, np.ndarray]], mode: str = "timed",
                   trace: bool = True) -> MultiResult:
    """Run every tenant of ``mp`` together.

    Args:
        mp: the MultiPlan.
        arrays: ``{tenant: {tensor: array}}`` by the tenants' own tensor names.
        mode: as for one plan ("timed", "functional" or "timing").
        trace: record a Perfetto trace of the joint run.

    Returns:
        A :class:`MultiResult`: ``res[tenant].outputs``, ``res[tenant].cycles``, ``res.makespan``.

    Raises:
        SimulationError: an unknown tenant, or a tenant's arrays do not fit its design.
        DeadlockError: some tenant cannot progress.
    """
    unknown = sorted(set(arrays) - set(mp.tenants))
    if unknown:
        raise SimulationError(f"no tenant(s) {unknown}; the tenants are {list(mp.tenants)}")
    joint_arrays: dict[str, np.ndarray] = {}
    if mode != "timing":
        for name, t in mp.tenants.items():
            missing = [n for n in t.local.design.inputs if n not in (arrays.get(name) or {})]
            if missing:
                raise SimulationError(f"tenant {name!r} reads tensor(s) {missing} but no array was given for them; "
                                      f"pass {name}={{{', '.join(repr(n) + ': ...' for n in missing)}}}")
    for name, given in arrays.items():
        if not isinstance(given, dict):
            raise SimulationError(f"tenant {name!r}: pass its arrays as a dict {{tensor: array}}, got "
                                  f"{type(given).__name__}")
        tensors = mp.tenants[name].local.design.tensors
        bad = sorted(set(given) - set(tensors))
        if bad:
            raise SimulationError(f"tenant {name!r} has no tensor(s) {bad}; its tensors are {list(tensors)}")
        joint_arrays.update({mp.prefix(name) + k: v for k, v in given.items()})
    plan = mp.joint
    res = simulate(plan, mode=mode, trace=trace, **joint_arrays)
    to_device = {m.name for m in plan.design.dmas if m.to_device}
    tenants = {}
    for name, t in mp.tenants.items():
        p = mp.prefix(name)
        ends = [m["completed"] or 0 for k, m in res.stats.moves.items() if k.startswith(p)]
        ends += [c.finished_at or 0 for k, c in res.stats.cores.items() if k.startswith(p)]
        cycles = max(ends, default=0) if mode != "functional" else 0
        stats = _tenant_stats(res.stats, p, t.columns, cycles, to_device)
        tenants[name] = TenantResult(_strip(res.outputs, p), cycles, stats, t.columns)
    return MultiResult(tenants, res.cycles, res)
