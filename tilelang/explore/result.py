"""What ``tl.explore`` returns: every :class:`Trial`, the best one, the Pareto front, a table and plots."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tilelang.errors import TileLangError

#: Metrics a search may minimise or a Pareto front compare ("peak" is maximised: it is a fraction of peak).
METRICS = ("cycles", "cores", "onchip_bytes", "ddr_bytes", "peak")


@dataclass
class Trial:
    """One evaluated point.

    Attributes:
        number: its place in the evaluation order (0, 1, ...).
        params: the point (explored parameters only).
        status: "ok", "design_error", "plan_error", "sim_error" or "timeout".
        cycles: simulated cycles (None unless ok).
        error: the error message (None when ok).
        metrics: cycles, cores, onchip_bytes (every planned buffer), ddr_bytes (read and
            written), peak (fraction of the cores' peak MAC rate, None without matmuls),
            wall_seconds, and design/plan/sim seconds.
        prior: the analytic estimate of its cycles (None where the factory has no model).
        source: "prior" (enqueued by its estimate), "sampler" or "fallback" (the sampler only
            proposed evaluated points, so the next unevaluated one was taken), "transfer" (picked
            by the warm start's surrogate), or "bound" (the bounded sweep's points without an
            estimate, taken in the order of their floors).
        warnings: the ``tl.PlanWarning`` messages issued while the point was planned: a planner's
            wall-clock safety net that fired or a fallback taken, so that the trial's result may
            differ on another machine (empty for most trials).
    """

    number: int
    params: dict[str, Any]
    status: str
    cycles: int | None
    error: str | None
    metrics: dict[str, Any] = field(default_factory=dict)
    prior: float | None = None
    source: str = "sampler"
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def value(self, metric: str) -> float:
        """The metric as a quantity to minimise (inf when missing)."""
        v = self.metrics.get(metric)
        if v is None:
            return math.inf
        return -float(v) if metric == "peak" else float(v)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["params"] = {k: _jsonable(v) for k, v in self.params.items()}
        return d


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)


def _unjson(v: Any) -> Any:
    """The inverse of :func:`_jsonable` where it matters: dtype names to dtypes, [int, int] to a tuple."""
    from tilelang.ir.dtypes import DTYPES

    if isinstance(v, dict):
        return {k: _unjson(x) for k, x in v.items()}
    if isinstance(v, list):
        items = [_unjson(x) for x in v]
        return tuple(items) if len(items) == 2 and all(type(x) is int for x in items) else items
    if isinstance(v, str) and v in DTYPES:
        return DTYPES[v]
    return v


def fmt_params(params: dict[str, Any]) -> str:
    """A point as ``name=value`` pairs (dicts and tuples compactly)."""
    def one(v: Any) -> str:
        if isinstance(v, dict):
            return "{" + ",".join(f"{k}:{one(x)}" for k, x in v.items()) + "}"
        if isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, int) for x in v):
            return f"{v[0]}x{v[1]}"
        return str(v)

    return " ".join(f"{k}={one(v)}" for k, v in params.items())


@dataclass
class Exploration:
    """The outcome of ``tl.explore``.

    Attributes:
        trials: every evaluated point, in evaluation order (those of a resumed study first).
        objective: the minimised metric.
        space_size: points in the space.
        budget: the evaluations asked for.
        seed: the sampler's seed.
        backend: "local", "ray" or the backend object's class name.
        evaluated: evaluations run by this call (less than ``len(trials)`` when resumed).
        seconds: wall seconds of this call.
        fixed: the space's fixed arguments (the rest of each point, for ``warm_start``).
        strategy: "sample" or "bound" (``tl.explore``'s strategy).
        skipped: (strategy "bound") the points never evaluated because their lower bound on cycles was no
            better than the best found, each ``{"params": ..., "bound": cycles}``.
        proven: (strategy "bound") whether every point was evaluated or skipped, so that :attr:`best` is
            the space's optimum (None for strategy "sample").
        bound_seconds: wall seconds spent computing bounds (strategy "bound").
        front: (strategy "bound") "cores" when the sweep proves the Pareto front of cycles and cores
            (``proven`` then means :meth:`pareto` over them is the space's front), else None.
        floor_timeouts: (strategy "bound") points whose floor ``time_limit`` stopped: they were evaluated
            instead of bounded (the best and ``proven`` stand; on a faster machine they might be skipped).
    """

    trials: list[Trial]
    objective: str
    space_size: int
    budget: int
    seed: int
    backend: str
    evaluated: int = 0
    seconds: float = 0.0
    fixed: dict[str, Any] | None = None
    strategy: str = "sample"
    skipped: list[dict[str, Any]] = field(default_factory=list)
    proven: bool | None = None
    bound_seconds: float = 0.0
    front: str | None = None
    floor_timeouts: int = 0

    @property
    def ok_trials(self) -> list[Trial]:
        return [t for t in self.trials if t.ok]

    @property
    def best(self) -> Trial | None:
        """The ok trial with the lowest objective (the earliest among equals), or None."""
        ok = [t for t in self.ok_trials if math.isfinite(t.value(self.objective))]
        return min(ok, key=lambda t: (t.value(self.objective), t.number)) if ok else None

    def pareto(self, metrics: list[str] | tuple[str, ...] = ("cycles", "cores")) -> list[Trial]:
        """The ok trials no other ok trial dominates on ``metrics`` (all minimised; "peak" maximised).

        Raises:
            TileLangError: fewer than two metrics, or an unknown one.
        """
        metrics = list(metrics)
        bad = [m for m in metrics if m not in METRICS]
        if len(metrics) < 2 or bad:
            raise TileLangError(f"pareto needs two or more of {METRICS}, got {metrics}")
        pts = [(t, tuple(t.value(m) for m in metrics)) for t in self.ok_trials]
        pts = [(t, v) for t, v in pts if all(math.isfinite(x) for x in v)]
        front = []
        for t, v in pts:
            dominated = any(all(a <= b for a, b in zip(w, v, strict=True)) and w != v for _, w in pts)
            if not dominated:
                front.append(t)
        return sorted(front, key=lambda t: tuple(t.value(m) for m in metrics) + (t.number,))

    def best_so_far(self) -> list[float | None]:
        """After each trial, the best objective value seen (None before the first ok trial)."""
        out: list[float | None] = []
        best = math.inf
        for t in self.trials:
            if t.ok:
                best = min(best, t.value(self.objective))
            out.append(None if math.isinf(best) else (-best if self.objective == "peak" else best))
        return out

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.trials:
            out[t.status] = out.get(t.status, 0) + 1
        return out

    def table(self, limit: int | None = 20) -> str:
        """The trials as text, best first (failures last, with their messages)."""
        ok = sorted(self.ok_trials, key=lambda t: (t.value(self.objective), t.number))
        bad = [t for t in self.trials if not t.ok]
        rows = (ok + bad)[: limit if limit is not None else None]
        lines = [f"{'#':>4} {'status':<12} {'cycles':>12} {'peak':>6} {'cores':>5} {'on-chip B':>10} "
                 f"{'DDR B':>11} {'prior':>12} {'wall s':>7}  params"]
        for t in rows:
            m = t.metrics
            peak = f"{m['peak']:.0%}" if m.get("peak") is not None else "-"
            prior = f"{t.prior:.0f}" if t.prior is not None else "-"
            cyc = f"{t.cycles}" if t.cycles is not None else "-"
            line = (f"{t.number:>4} {t.status:<12} {cyc:>12} {peak:>6} {m.get('cores', '-'):>5} "
                    f"{m.get('onchip_bytes', '-'):>10} {m.get('ddr_bytes', '-'):>11} {prior:>12} "
                    f"{m.get('wall_seconds', 0.0):>7.2f}  {fmt_params(t.params)}")
            if t.error:
                line += f"\n{'':>18}{t.error.splitlines()[0][:160]}"
            for w in t.warnings:
                line += f"\n{'':>18}warning: {w.splitlines()[0][:160]}"
            lines.append(line)
        counts = ", ".join(f"{n} {s}" for s, n in sorted(self.counts().items()))
        lines.append(f"{len(self.trials)} trials of {self.space_size} points ({counts}); "
                     f"{self.evaluated} evaluated in {self.seconds:.1f} s on {self.backend}")
        warned = [t.number for t in self.trials if t.warnings]
        if warned:
            lines.append(f"{len(warned)} trial(s) planned with warnings (trials {', '.join(map(str, warned[:10]))}"
                         f"{', ...' if len(warned) > 10 else ''}): a planner's safety net fired or a fallback was "
                         "taken, so their results may differ on another machine (a longer time_limit for the "
                         "planner: fixed={'plan': {'time_limit': seconds}})")
        if self.strategy == "bound":
            what = "the front of cycles and cores is the space's" if self.front else "the best is the space's optimum"
            verdict = (f"every point was evaluated or bounded: {what}" if self.proven else
                       "not every point was evaluated or bounded (budget, or a timeout): "
                       f"the {'front' if self.front else 'best'} is not proven")
            stopped = (f"; the time limit stopped {self.floor_timeouts} floor computations (those points were "
                       "evaluated instead)" if self.floor_timeouts else "")
            lines.append(f"bounded sweep: {len(self.skipped)} points skipped by their lower bound "
                         f"({self.bound_seconds:.1f} s computing bounds){stopped}; {verdict}")
            if self.front is not None:
                for t in self.pareto(["cycles", self.front]):
                    lines.append(f"front: trial {t.number}, {t.metrics['cycles']} cycles on {t.metrics[self.front]} "
                                 f"{self.front}  {fmt_params(t.params)}")
        spent = {k: sum(t.metrics.get(k) or 0.0 for t in self.trials) for k in ("plan_seconds", "sim_seconds")}
        if spent["plan_seconds"] or spent["sim_seconds"]:  # (trials recorded without the split show none)
            greedy = ((self.fixed or {}).get("plan") or {}).get("strategy") == "greedy"
            hint = ("; the greedy planner is faster: fixed={'plan': {'strategy': 'greedy'}}"
                    if spent["plan_seconds"] > spent["sim_seconds"] and not greedy else "")
            lines.append(f"trials spent {spent['plan_seconds']:.1f} s planning and {spent['sim_seconds']:.1f} s "
                         f"simulating{hint}")
        return "\n".join(lines)

    def to_json(self) -> str:
        """The exploration as JSON: its settings, the space's fixed arguments and every trial
        (:meth:`from_json` reads it back, e.g. for a later search's ``warm_start``)."""
        best = self.best
        return json.dumps({
            "objective": self.objective, "space_size": self.space_size, "budget": self.budget, "seed": self.seed,
            "backend": self.backend, "evaluated": self.evaluated, "seconds": self.seconds,
            "best": best.number if best is not None else None,
            "fixed": _jsonable(self.fixed) if self.fixed is not None else None,
            "strategy": self.strategy, "proven": self.proven, "bound_seconds": self.bound_seconds,
            "skipped": [{"params": _jsonable(x["params"]), "bound": x["bound"], "cores": x.get("cores")}
                        for x in self.skipped],
            "front": self.front, "floor_timeouts": self.floor_timeouts,
            "trials": [t.to_dict() for t in self.trials],
        }, indent=1)

    @classmethod
    def from_json(cls, text: str, where: str = "exploration JSON") -> Exploration:
        """An exploration written by :meth:`to_json` (``tilelang explore --json``).

        Values JSON cannot hold come back as the search had them where that matters to
        ``warm_start``: dtype names as dtypes, two-integer lists as tuples (core grids).

        Args:
            text: the JSON text.
            where: what the text is (a file name), for error messages.

        Raises:
            TileLangError: not JSON, or not an exploration (a missing or malformed field named).
        """
        try:
            record = json.loads(text)
        except json.JSONDecodeError as e:
            raise TileLangError(f"{where}: not JSON ({e})") from None
        if not isinstance(record, dict):
            raise TileLangError(f"{where}: expected a JSON object written by tl.explore's to_json")
        try:
            trials = [Trial(number=int(t["number"]), params=_unjson(t["params"]), status=str(t["status"]),
                            cycles=t["cycles"], error=t["error"], metrics=dict(t.get("metrics", {})),
                            prior=t.get("prior"), source=str(t.get("source", "sampler")),
                            warnings=[str(w) for w in t.get("warnings", [])])
                      for t in record["trials"]]
            fixed = record.get("fixed")
            return cls(trials, str(record["objective"]), int(record["space_size"]), int(record["budget"]),
                       int(record["seed"]), str(record["backend"]), int(record.get("evaluated", 0)),
                       float(record.get("seconds", 0.0)), fixed=_unjson(fixed) if fixed is not None else None,
                       strategy=str(record.get("strategy", "sample")),
                       skipped=[{"params": _unjson(x["params"]), "bound": int(x["bound"]), "cores": x.get("cores")}
                                for x in record.get("skipped", [])],
                       proven=record.get("proven"), bound_seconds=float(record.get("bound_seconds", 0.0)),
                       front=record.get("front"), floor_timeouts=int(record.get("floor_timeouts", 0)))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise TileLangError(f"{where}: not an exploration written by tl.explore's to_json "
                                f"({type(e).__name__}: {e})") from None

    # -- plots -------------------------------------------------------------------------

    def plot_convergence(self, path: str | Path) -> Path:
        """Best objective after each trial (and every ok trial's value), written as a PNG."""
        fig = _figure((6, 3.5))
        ax = fig.subplots()
        xs = [t.number for t in self.trials if t.ok]
        ys = [t.metrics[self.objective] for t in self.trials if t.ok]
        ax.scatter(xs, ys, s=12, color="0.6", label="trial")
        best = self.best_so_far()
        ax.step(range(len(best)), [b if b is not None else float("nan") for b in best], where="post",
                color="C0", label="best so far")
        bad = [t.number for t in self.trials if not t.ok]
        if bad and ys:
            ax.scatter(bad, [max(ys)] * len(bad), marker="x", color="C3", s=14, label="failed")
        ax.set_xlabel("trial")
        ax.set_ylabel(self.objective)
        ax.legend(fontsize=8)
        return _save(fig, path)

    def plot_pareto(self, path: str | Path, metrics: tuple[str, str] = ("cycles", "cores")) -> Path:
        """Every ok trial on two metrics with the Pareto front highlighted, written as a PNG."""
        x, y = metrics
        fig = _figure((5, 4))
        ax = fig.subplots()
        ok = [t for t in self.ok_trials if t.metrics.get(x) is not None and t.metrics.get(y) is not None]
        ax.scatter([t.metrics[x] for t in ok], [t.metrics[y] for t in ok], s=12, color="0.6", label="trial")
        front = sorted(self.pareto([x, y]), key=lambda t: t.metrics[x])
        ax.plot([t.metrics[x] for t in front], [t.metrics[y] for t in front], "o-", color="C1", label="Pareto front")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.legend(fontsize=8)
        return _save(fig, path)


def _figure(size: tuple[float, float]) -> Any:
    """A matplotlib Figure outside pyplot (no global state, no display needed)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise TileLangError("plots need matplotlib (pip install 'tilelang-aie[plot]')") from None
    return Figure(figsize=size)


def _save(fig: Any, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(p, dpi=110)
    return p
