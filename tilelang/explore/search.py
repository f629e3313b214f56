"""``tl.explore``: an Optuna study over a :class:`Space`, warm-started by the analytic prior.

The order of work:

1. the prior (``prior.py``) ranks every point by the tiler's estimate, and the
   best-ranked quarter of the budget is enqueued first;
2. then Optuna's TPE sampler (multivariate, seeded) proposes points from the
   simulated ones: infeasible points are told to it as pruned, so it learns to
   avoid their region; a point it proposes twice is not simulated again (after
   :data:`MAX_MISSES` such proposals in a row, the next unevaluated point in
   prior order is taken instead);
3. points are asked in batches of :data:`BATCH`, whatever the number of
   workers, evaluated in parallel, and told back in the order asked: the same
   space, budget and seed give the same trials on any backend and worker
   count (timeouts aside: they depend on the machine's speed).

With ``warm_start`` (explorations of the same factory on other devices), step 1
ranks the points instead by a surrogate fitted on those trials and on this
search's own, with the devices' features as part of its input
(``transfer.py``): the best-predicted points are evaluated first, a batch at a
time, the surrogate refitted after each batch. Where the factory has a prior,
its best unevaluated points take the first half of each such batch (the prior
models the target device itself; the surrogate knows it only through the
device features and the trials measured so far).

A ``storage`` (an SQLite file for ``.db``/``.sqlite`` paths, an Optuna
journal file otherwise, or an SQLAlchemy URL) keeps the study: calling
``tl.explore`` again with the same space, objective and seed resumes it,
evaluating only up to the budget. The sampler's random state is not stored, so
a resumed search proposes its next points from the stored trials with a fresh
seeded state, which may differ from an uninterrupted run's.

Searches running at once on one storage share the study (docs/explore.md,
"Sharing"): each asked trial is claimed (:func:`_claim`, renewed by a
heartbeat while evaluated), a search takes in the others' finished trials
before each batch (:func:`_sync`) and gives way where another asked a point
first or the budget is spoken for (:func:`_contested`), and trials whose search
is gone are failed and their points asked again (:func:`_abandoned`).
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import Any

from tilelang.errors import PlanError, TileLangError
from tilelang.explore.evaluate import Task, evaluate, run_children, timeout_result
from tilelang.explore.prior import prior_for
from tilelang.explore.result import METRICS, Exploration, Trial
from tilelang.explore.space import Key, Space
from tilelang.plan.solve import check_time_limit

#: Points asked from the sampler per round (not tied to the workers, so trials do not depend on them).
BATCH = 4
#: Proposals of already evaluated points in a row before the next unevaluated point is taken.
MAX_MISSES = 16
#: Share of the budget given to the prior's best-ranked points.
PRIOR_SHARE = 0.25
#: A shared study (``storage=`` used by several searches at once): seconds between the heartbeats of a
#: search's trials in flight, by which the other searches see them alive.
HEARTBEAT = 30.0
#: A trial in flight whose search's heartbeat is older than this (or whose search's process on this machine
#: is gone) was abandoned: it is failed and its point can be asked again.
GRACE = 4 * HEARTBEAT
#: Seconds a search waits before looking again when the rest of its budget is in flight in other searches.
POLL = 1.0
#: A trial being asked before this one in a shared study, its point not written yet: looks again, so often,
#: before giving way.
ASKING_WAITS = 40
ASKING_POLL = 0.05
#: Seconds a search of a shared study lets claims land before it reads whose a trial it just claimed is (for a
#: trial that waited in the study, or when another search has trials in flight), where it cannot take the
#: study's ask lock (:class:`_Turn`).
CLAIM_SETTLE = 0.1
#: The user attribute of a trial in flight: which search asked it ({host, pid, at: its last heartbeat}).
CLAIM = "tilelang_claim"
#: The user attribute holding a trial's record in the Optuna study.
ATTR = "tilelang"

Progress = Callable[[int, int, "float | None"], None]


def explore(space: Space, budget: int = 40, objective: str = "cycles", seed: int = 0, backend: Any = "local",
            workers: int | None = None, storage: str | None = None, time_limit: float | None = None,
            address: str | None = None, progress: Progress | None = None, prior: bool = True,
            warm_start: Sequence[Exploration] | None = None, strategy: str = "sample",
            front: str | None = None) -> Exploration:
    """Search a space for the point with the best objective (API.md "Explore").

    Args:
        space: the :class:`Space`.
        budget: most points to evaluate (each a factory call, a plan and a timing simulation).
        objective: the metric minimised: "cycles", "cores", "onchip_bytes", "ddr_bytes", or
            "peak" (maximised).
        seed: the sampler's seed; the same seed gives the same trials.
        backend: "local" (child processes on this machine), "ray" (Ray tasks), or an object
            with ``map(tasks) -> results`` (each task ``(factory, kwargs, plan_options)``,
            each result what :func:`tilelang.explore.evaluate.evaluate` returns).
        workers: evaluations at once (default: the machine's cores, or the Ray cluster's CPUs).
        storage: a file (``.db``/``.sqlite``: SQLite; otherwise an Optuna journal) or an
            SQLAlchemy URL holding the study; an existing study of this space is resumed.
        time_limit: seconds per evaluation; a point taking longer is stopped and recorded
            as "timeout" (None: no limit).
        address: the Ray cluster to join (backend "ray"; None starts a local instance).
        progress: called as ``progress(trials done, trials wanted, best objective)`` after each batch.
        prior: rank the points by the factory's analytic estimate and evaluate the best first
            (False: the sampler alone, for comparison).
        warm_start: explorations of spaces of the same factory on other devices (each space
            fixing its ``device``): their trials, with each device's features, fit the surrogate
            that picks this search's first points (docs/explore.md "Transfer across devices").
        strategy: "sample" (the prior's best points, then Optuna's TPE sampler), or "bound" (objective
            "cycles" only): every point in the prior's order, skipping each point whose lower bound on
            cycles (its floor, ``simulator.bound``) is no better than the best found so far; when the budget
            covers the space, the best trial is then the space's optimum (``Exploration.proven``).
        front: (strategy "bound") "cores": prove the Pareto front of cycles and cores instead of the best
            cycles alone. A point is then skipped only when a trial with no more cores took no more cycles
            than its floor; when proven, ``Exploration.pareto(["cycles", "cores"])`` is the space's front
            (the fastest point for every number of cores that beats every smaller one).

    Returns:
        The :class:`Exploration`. Failed points are trials with their status and message;
        nothing a point does raises here.

    Raises:
        TileLangError: bad arguments, an empty space, or a backend that is not installed.
    """
    _check(space, budget, objective, seed, workers, time_limit)
    _check_strategy(strategy, objective, warm_start, front)
    warm = _warm_observations(warm_start, objective)
    optuna = _optuna()
    t0 = time.perf_counter()
    keys = space.keys()
    if not keys:
        raise TileLangError("explore: the space has no point (its constraint rejects every one)")
    want = min(budget, len(keys))
    estimates = _estimates(space) if prior else {}
    order = sorted((k for k in keys if estimates.get(k) is not None), key=lambda k: (estimates[k], k))
    fallback = order + [k for k in keys if estimates.get(k) is None]
    runner, backend_name, close = _runner(backend, workers, time_limit, address, space)
    names = space.names
    dists = {n: optuna.distributions.CategoricalDistribution(list(range(len(c)))) for n, c in space.params.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the multivariate TPE sampler is marked experimental
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    study, trials, done = _open_study(optuna, f"tilelang-{space.describe()}-{objective}-seed{seed}", storage,
                                      sampler, space)
    shared = storage is not None  # (a study in memory has no other search)
    turn = _Turn(storage if shared else None)
    warm_n = min(want, max(1, math.ceil(want * PRIOR_SHARE)))
    if not study.trials and warm is None and strategy == "sample":
        for k in order[: min(len(order), warm_n)]:
            study.enqueue_trial(dict(zip(names, k, strict=True)), user_attrs={"source": "prior"})
    if strategy == "bound":
        try:
            sweep = _BoundSweep(space, order, estimates, workers, time_limit, front)
            evaluated = sweep.run(optuna, study, dists, runner, trials, done, want, progress, objective, shared, turn)
        finally:
            close()
        return Exploration(trials, objective, len(keys), budget, seed, backend_name, evaluated,
                           time.perf_counter() - t0, fixed=dict(space.fixed), strategy=strategy,
                           skipped=sweep.skipped(), proven=sweep.proven(done),
                           bound_seconds=sweep.seconds, front=front, floor_timeouts=sweep.floor_timeouts)
    features = _point_features(space, estimates) if warm is not None else {}
    evaluated = 0
    try:
        while len(done) < want:
            # a shared study: the trials other searches finished join ours; their points in flight are not asked
            claimed = _sync(optuna, study, space, trials, done) if shared else set()
            n = min(BATCH, want - len(done) - len(claimed))
            if n <= 0 and claimed:  # the rest of the budget is in flight in other searches
                time.sleep(POLL)
                continue
            if warm is not None and len(done) < warm_n:
                n = min(n, warm_n - len(done))
                # with a prior, its best unevaluated points take the first half of the batch (rounded down:
                # a batch of one is the surrogate's), the surrogate's best predictions the rest
                ranked = [k for k in order if k not in done][: n // 2]
                picks = _transfer_batch(space, features, warm, done, objective, n - len(ranked), set(ranked))
                for k, source in [*((k, "prior") for k in ranked), *((k, "transfer") for k in picks)]:
                    study.enqueue_trial(dict(zip(names, k, strict=True)), user_attrs={"source": source})
            batch = _ask(optuna, study, dists, names, space, done, fallback, n, claimed, want if shared else None,
                         turn)
            if not batch:  # every point left is evaluated or in flight elsewhere (or the budget spoken for)
                if not (shared and _sync(optuna, study, space, trials, done)):
                    break
                time.sleep(POLL)
                continue
            _record(optuna, study, space, batch, runner, trials, done, estimates, objective, shared)
            evaluated += len(batch)
            if progress is not None:
                ex = Exploration(trials, objective, len(keys), budget, seed, backend_name)
                best = ex.best
                progress(len(done), want, best.metrics[objective] if best is not None else None)
    finally:
        close()
    return Exploration(trials, objective, len(keys), budget, seed, backend_name, evaluated,
                       time.perf_counter() - t0, fixed=dict(space.fixed))


def _record(optuna: Any, study: Any, space: Space, batch: list[tuple[Any, Key, str]],
            runner: Callable[[list[Task]], list[dict]], trials: list[Trial], done: dict[Key, Trial],
            estimates: dict[Key, float | None], objective: str, shared: bool = False) -> None:
    """Evaluate a batch of asked points and record each as a trial (in the study too), in the order asked.
    In a shared study the batch's trials send heartbeats while they are evaluated (:data:`HEARTBEAT`)."""
    with _heartbeat([ft for ft, _, _ in batch]) if shared else contextlib.nullcontext():
        results = _evaluate(runner, space, [k for _, k, _ in batch])
    for (ft, key, source), res in zip(batch, results, strict=True):
        trial = Trial(number=len(trials), params=space.point(key), status=res["status"],
                      cycles=res["metrics"].get("cycles") if res["status"] == "ok" else None,
                      error=res["error"], metrics=res["metrics"], prior=estimates.get(key), source=source,
                      warnings=list(res.get("warnings", [])))
        _store(optuna, study, ft, trial, key, objective)
        trials.append(trial)
        done[key] = trial


#: Points whose lower bounds are computed together (in child processes) as the bounded sweep reaches them.
BOUND_CHUNK = 16
#: The strategies of ``tl.explore``.
STRATEGIES = ("sample", "bound")
#: Metrics whose Pareto front with cycles the bounded sweep can prove: each known from a point's design.
FRONTS = ("cores",)


def _check_strategy(strategy: str, objective: str, warm_start: Sequence[Exploration] | None,
                    front: str | None = None) -> None:
    if strategy not in STRATEGIES:
        raise TileLangError(f"explore: strategy must be one of {STRATEGIES}, got {strategy!r}")
    if front is not None and front not in FRONTS:
        raise TileLangError(f"explore: front must be one of {FRONTS} or None, got {front!r} (the bounded sweep "
                            "proves a front only over a metric each point's design gives exactly)")
    if front is not None and strategy != "bound":
        raise TileLangError(f'explore: front={front!r} needs strategy="bound" (the sampler proves no front)')
    if strategy == "bound" and objective != "cycles":
        raise TileLangError(f'explore: strategy="bound" bounds cycles only; objective {objective!r} has no bound '
                            f'(use strategy="sample")')
    if strategy == "bound" and warm_start is not None:
        raise TileLangError('explore: strategy="bound" takes no warm_start (it orders points by the prior, '
                            'then by their bound)')


class _BoundSweep:
    """``strategy="bound"``: the points in order (the prior's estimate, then the points it does not estimate
    by their bound), each evaluated unless its lower bound on cycles is at least the best found so far.

    The best only falls, so a point skipped once stays no better than the final best. Bounds are computed
    as the sweep reaches the points, :data:`BOUND_CHUNK` at a time, each in a child process (the factory is
    the user's: ``time_limit`` applies, and a point whose bound fails is evaluated like any other).
    """

    def __init__(self, space: Space, order: list[Key], estimates: dict[Key, float | None], workers: int | None,
                 time_limit: float | None, front: str | None = None) -> None:
        self.space = space
        self.front = front
        self.cores: dict[Key, int | None] = {}
        self.estimates = estimates
        self.order = list(order)
        self.rest: list[Key] | None = [k for k in space.keys() if estimates.get(k) is None]
        self.bounds: dict[Key, int | None] = {}
        self.skip: dict[Key, int] = {}
        self.workers = workers or os.cpu_count() or 1
        self.time_limit = time_limit
        self.pos = 0
        self.seconds = 0.0
        #: points whose floor computation the time limit stopped (they are evaluated instead of bounded)
        self.floor_timeouts = 0
        #: (a shared study) points passed over while another search had them in flight, in sweep order:
        #: taken up again if that search abandons them
        self.deferred: list[Key] = []

    def _compute(self, keys: Sequence[Key]) -> None:
        """The bounds of ``keys`` (those not known yet), split over the workers, one child process each."""
        from tilelang.explore.bound import points_bounds

        todo = [k for k in keys if k not in self.bounds]
        if not todo:
            return
        points: list[tuple[Callable[..., Any], dict[str, Any]]] = []
        for k in todo:
            try:
                points.append((self.space.factory, self.space.arguments(k)[0]))
            except TileLangError:
                points.append((_no_design, {}))
        n = min(self.workers, len(points))
        parts = [points[i::n] for i in range(n)]
        limit = self.time_limit * max(len(p) for p in parts) if self.time_limit is not None else None
        t0 = time.perf_counter()
        results = run_children([(p,) for p in parts], n, limit, job=points_bounds)
        self.seconds += time.perf_counter() - t0
        for i, r in enumerate(results):  # a part past its time limit: no bounds (its points are evaluated)
            none = [None] * len(parts[i])
            if r.get("status") == "timeout":  # the safety net fired: reported (Exploration.floor_timeouts)
                self.floor_timeouts += len(parts[i])
            for k, b, c in zip(todo[i::n], r.get("bounds") or none, r.get("cores") or none, strict=True):
                self.bounds[k] = b
                self.cores[k] = c

    def _beaten(self, k: Key, bound: int, incumbents: list[tuple[int | None, int]]) -> bool:
        """Whether an evaluated point is at least as good as ``k`` can be: cycles no more than ``k``'s bound
        (and, with ``front="cores"``, no more cores than ``k`` has). ``incumbents``: (cores, cycles) of
        the ok trials so far."""
        if self.front is None:
            return any(cycles <= bound for _, cycles in incumbents)
        cores = self.cores.get(k)
        return cores is not None and any(c is not None and c <= cores and cycles <= bound for c, cycles in incumbents)

    def _next(self, n: int, done: dict[Key, Trial], incumbents: list[tuple[int | None, int]],
              claimed: Collection[Key] = ()) -> list[Key]:
        out: list[Key] = []
        waiting = []
        for k in self.deferred:  # (a shared study) passed over while in flight elsewhere: done, or abandoned
            if k in done:
                continue
            if k in claimed or len(out) >= n:
                waiting.append(k)
            elif (b := self.bounds.get(k)) is not None and self._beaten(k, b, incumbents):
                self.skip[k] = b
            else:
                out.append(k)
        self.deferred = waiting
        while len(out) < n:
            if self.pos >= len(self.order):
                if self.rest is None:
                    break
                rest, self.rest = [k for k in self.rest if k not in done], None
                self._compute(rest)
                self.order += sorted(rest, key=lambda k: (self.bounds[k] is None, self.bounds[k] or 0, k))
                continue
            k = self.order[self.pos]
            if k not in self.bounds and k not in done:
                self._compute([x for x in self.order[self.pos: self.pos + BOUND_CHUNK] if x not in done])
            self.pos += 1
            if k in done:
                continue
            if k in claimed:  # in flight in another search of a shared study
                self.deferred.append(k)
                continue
            b = self.bounds[k]
            if b is not None and self._beaten(k, b, incumbents):
                self.skip[k] = b
                continue
            out.append(k)
        return out

    def run(self, optuna: Any, study: Any, dists: dict, runner: Callable[[list[Task]], list[dict]],
            trials: list[Trial], done: dict[Key, Trial], want: int, progress: Progress | None, objective: str,
            shared: bool = False, turn: _Turn | None = None) -> int:
        """Evaluate up to ``want`` trials in all; returns the evaluations run. Sweeps sharing a study (``shared``)
        take in each other's trials, pass over each other's points in flight, and claim theirs as
        :func:`_ask` does."""
        names = self.space.names
        turn = turn if turn is not None else _Turn(None)
        evaluated = 0
        while len(done) < want:
            # a shared study: the others' finished trials join ours (and their cycles the incumbents); their
            # points in flight are passed over until they finish or are abandoned
            claimed = _sync(optuna, study, self.space, trials, done) if shared else set()
            incumbents = [(t.metrics.get("cores"), t.cycles) for t in done.values() if t.ok and t.cycles is not None]
            n = min(BATCH, want - len(done) - len(claimed))
            keys = self._next(n, done, incumbents, claimed) if n > 0 else []
            if not keys:
                if shared and (claimed or self.deferred):
                    time.sleep(POLL)
                    continue
                break
            batch = []
            for k in keys:
                source = "prior" if self.estimates.get(k) is not None else "bound"
                with turn():
                    ft = _ask_exact(optuna, study, dists, names, k, source, shared)
                    why = _contested(optuna, study, ft, k, names, want, turn.locks) if shared else None
                    if why not in (None, "theirs"):  # (a trial another search popped too is theirs to tell)
                        _tell(optuna, study, ft, state=optuna.trial.TrialState.FAIL)
                if why is None:
                    batch.append((ft, k, source))
                    continue
                self.deferred.append(k)  # evaluated elsewhere, or taken up again if abandoned
                if why == "budget":
                    break
            if not batch:
                if shared:
                    time.sleep(POLL)
                continue
            _record(optuna, study, self.space, batch, runner, trials, done, self.estimates, objective, shared)
            evaluated += len(batch)
            if progress is not None:
                ok = [t.cycles for t in done.values() if t.ok and t.cycles is not None]
                progress(len(done), want, min(ok) if ok else None)
        return evaluated

    def skipped(self) -> list[dict[str, Any]]:
        """The points skipped by their bound (never evaluated), in sweep order, with their cores."""
        return [{"params": self.space.point(k), "bound": b, "cores": self.cores.get(k)} for k, b in self.skip.items()]

    def proven(self, done: dict[Key, Trial]) -> bool:
        """Whether every point was evaluated (none stopped by the time limit) or skipped by its bound."""
        if any(t.status == "timeout" for t in done.values()):
            return False
        return all(k in done or k in self.skip for k in self.space.keys())


def _no_design() -> None:
    """A task for a point whose arguments cannot be formed: its bound fails (the trial records why)."""
    raise TileLangError("the point's arguments cannot be formed")


def _ask_exact(optuna: Any, study: Any, dists: dict, names: list[str], key: Key, source: str,
               shared: bool = False) -> Any:
    """A study trial for exactly ``key`` (trials an earlier run left waiting in the study are failed first)."""
    study.enqueue_trial(dict(zip(names, key, strict=True)), user_attrs={"source": source})
    while True:
        try:
            ft = study.ask(dists)
        except optuna.exceptions.UpdateFinishedTrialError:  # (see _ask)
            continue
        if tuple(ft.params[name] for name in names) == key:
            if shared and not _claim(ft):  # (another search popped this waiting trial and finished it)
                study.enqueue_trial(dict(zip(names, key, strict=True)), user_attrs={"source": source})
                continue
            return ft
        _tell(optuna, study, ft, state=optuna.trial.TrialState.FAIL)


def _warm_observations(warm_start: Sequence[Exploration] | None, objective: str) -> list[Any] | None:
    """The source trials of a warm start as surrogate observations (None without a warm start)."""
    if warm_start is None:
        return None
    from tilelang.explore.transfer import observations

    if (isinstance(warm_start, Exploration) or not isinstance(warm_start, Sequence)
            or not all(isinstance(e, Exploration) for e in warm_start)):
        raise TileLangError("explore: warm_start takes a list of Explorations (from tl.explore on other devices)")
    return [o for ex in warm_start for o in observations(ex, objective)]


def _point_features(space: Space, estimates: dict[Key, float | None]) -> dict[Key, dict[str, float]]:
    """Every point's surrogate features: its arguments, its device's features, and the log of the prior's
    estimate where there is one.

    Raises:
        TileLangError: a point whose device is not known (neither fixed, explored nor the factory's default).
    """
    import inspect

    from tilelang.explore.transfer import device_features, point_features

    try:
        default = inspect.signature(space.factory).parameters.get("device")
    except (TypeError, ValueError):
        default = None
    out: dict[Key, dict[str, float]] = {}
    cache: dict[str, dict[str, float]] = {}
    for k in space.keys():
        kwargs = space.arguments(k)[0]
        dev = kwargs.get("device", default.default if default is not None else inspect.Parameter.empty)
        if dev is inspect.Parameter.empty:
            raise TileLangError("explore: warm_start needs each point's device (fix or explore 'device')")
        name = dev if isinstance(dev, str) else dev.name
        if name not in cache:
            cache[name] = device_features(dev)
        est = estimates.get(k)
        out[k] = {**point_features(kwargs), **cache[name], **({"prior": math.log2(est)} if est else {})}
    return out


def _transfer_batch(space: Space, features: dict[Key, dict[str, float]], source: list[Any],
                    done: dict[Key, Trial], objective: str, n: int, taken: Collection[Key] = ()) -> list[Key]:
    """The ``n`` unevaluated points (none of ``taken``) the surrogate (source trials and this search's so far)
    predicts best."""
    from tilelang.explore.transfer import Observation, rank

    own = []
    for key, t in done.items():
        if t.status == "timeout":
            continue
        v = t.value(objective) if t.ok else None
        own.append(Observation(features[key], "target", v if v is not None and math.isfinite(v) else None))
    todo = [k for k in space.keys() if k not in done and k not in taken]
    order = rank([features[k] for k in todo], [*source, *own])
    return [todo[i] for i in order[:n]]


def _check(space: Space, budget: int, objective: str, seed: int, workers: int | None,
           time_limit: float | None) -> None:
    if not isinstance(space, Space):
        raise TileLangError(f"explore takes a tl.Space, got {type(space).__name__}")
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise TileLangError(f"explore: budget must be a positive int, got {budget!r}")
    if objective not in METRICS:
        raise TileLangError(f"explore: objective must be one of {METRICS}, got {objective!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise TileLangError(f"explore: seed must be an int in [0, 2**32 - 1] (the sampler's range), got {seed!r}")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise TileLangError(f"explore: workers must be a positive int or None, got {workers!r}")
    if time_limit is not None:
        try:
            check_time_limit(time_limit)  # the planner's rule: positive seconds, at most a year
        except PlanError as e:
            raise TileLangError(f"explore: {e}, or None (no limit)") from None


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise TileLangError("tl.explore needs optuna (pip install optuna)") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _estimates(space: Space) -> dict[Key, float | None]:
    prior = prior_for(space.factory)
    if prior is None:
        return {}
    out: dict[Key, float | None] = {}
    for k in space.keys():
        try:
            out[k] = prior(space.arguments(k)[0])
        except TileLangError:
            out[k] = None
    return out


def _open_study(optuna: Any, name: str, storage: str | os.PathLike | None, sampler: Any,
                space: Space) -> tuple[Any, list[Trial], dict[Key, Trial]]:
    """The study (created, or loaded from ``storage``) and the trials it already holds.

    Raises:
        TileLangError: the storage cannot be opened or read, naming it and the cause.
    """
    try:
        study = optuna.create_study(study_name=name, storage=_storage(optuna, storage), sampler=sampler,
                                    direction="minimize", load_if_exists=True)
        trials: list[Trial] = []
        done: dict[Key, Trial] = {}
        _sync(optuna, study, space, trials, done)
        return study, trials, done
    except TileLangError:
        raise
    except Exception as e:  # noqa: BLE001 - optuna's and its database's own errors, for one storage
        cause = (str(e).strip().splitlines() or [""])[0]
        raise TileLangError(f"explore: cannot use storage {os.fspath(storage)!r} ({type(e).__name__}: {cause}); give a "
                            f"writable path to a new file or to one an earlier tl.explore wrote (.db for SQLite, "
                            f"else a journal)") from None


def _storage(optuna: Any, storage: str | os.PathLike | None) -> Any:
    if storage is None:
        return None
    if not isinstance(storage, str | os.PathLike) or not os.fspath(storage):
        raise TileLangError(f"explore: storage must be a file path (str or os.PathLike) or None, got {storage!r}")
    text = os.fspath(storage)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if "://" in text:
        return text
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text) or not os.path.isdir(folder):
        what = "is a directory" if os.path.isdir(text) else f"is in a directory that does not exist ({folder})"
        raise TileLangError(f"explore: storage {text!r} {what}; give a file path (.db for SQLite, else a journal)")
    if text.endswith((".db", ".sqlite", ".sqlite3")):
        # several searches may share the file: a writer waits up to a minute for another's transaction; the
        # first to open a new file makes Optuna's tables while the others wait under a lock on the file: two
        # searches starting together would otherwise both make them, and one would fail ("table studies already
        # exists", optuna/optuna issue 1092; two creating one study is Optuna's own case, ``load_if_exists``)
        with _file_lock(text):
            return optuna.storages.RDBStorage(f"sqlite:///{os.path.abspath(text)}",
                                              engine_kwargs={"connect_args": {"timeout": 60}})
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    return JournalStorage(JournalFileBackend(os.path.abspath(text)))


def _can_lock() -> bool:
    """Whether this system has advisory file locks (``fcntl.flock``)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def _file_lock(path: str) -> Any:
    """Hold an exclusive advisory lock (``flock``) on the file ``path`` (made if missing: an empty file is also a
    new SQLite database); without advisory locks on this system, hold nothing.

    Raises:
        TileLangError: the file cannot be opened, naming it and the cause.
    """
    if not _can_lock():
        yield
        return
    import fcntl

    try:
        fh = open(path, "a")  # noqa: SIM115 - closed below, after the lock is let go
    except OSError as e:
        raise TileLangError(f"explore: cannot open {path!r} to lock it ({e.strerror}); give a storage in a directory "
                            f"this process can write") from None
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class _Turn:
    """The ask lock of a shared study: an exclusive advisory lock (``flock``) on a file beside its storage file
    (the storage's name and ``.tilelang-lock``, opened by nothing else: on NFS, where Linux takes ``flock`` as
    a POSIX lock, closing any other descriptor of a locked file would let the lock go), under which
    every search sharing the file asks a trial, claims it and decides whether it must give way
    (:func:`_contested`), and tells a trial it gives up. Every trial in flight that a search sees while it
    holds the lock was asked before its own and has its point, so the order of asks is the order the lock was
    taken, whatever the searches' clocks say, and no claim has to be waited for. ``locks`` is False where there
    is nothing to lock (no storage, a database URL) or no advisory locks (no ``fcntl``): there the searches
    order trials by the start the study records and let claims land first (:data:`CLAIM_SETTLE`)."""

    def __init__(self, storage: str | os.PathLike | None) -> None:
        text = os.fsdecode(os.fspath(storage)) if storage is not None and _can_lock() else ""
        self.path = os.path.abspath(text) + ".tilelang-lock" if text and "://" not in text else None
        self.locks = self.path is not None

    def __call__(self) -> Any:
        """The lock, held while the ``with`` block runs (nothing where :attr:`locks` is False)."""
        return _file_lock(self.path) if self.path is not None else contextlib.nullcontext()


def _me() -> dict[str, Any]:
    return {"host": socket.gethostname(), "pid": os.getpid()}


def _mine(t: Any, me: dict[str, Any]) -> bool:
    """Whether trial ``t`` is claimed by this search (``me``: :func:`_me`)."""
    claim = t.user_attrs.get(CLAIM)
    return isinstance(claim, dict) and all(claim.get(k) == v for k, v in me.items())


def _started(t: Any, default: float) -> float:
    """When trial ``t`` was asked, in seconds since the epoch (``default`` if the study does not say)."""
    return t.datetime_start.timestamp() if t.datetime_start is not None else default


def _point(t: Any, names: Sequence[str]) -> Key | None:
    """The point trial ``t`` was asked for (None while its ask is still writing it)."""
    return tuple(t.params[n] for n in names) if all(n in t.params for n in names) else None


def _claim(ft: Any) -> bool:
    """Mark a trial in flight as this search's, now (its heartbeat); False if it is finished already (in a
    shared study another search failed it for abandoned, or asked the same waiting trial and finished it)."""
    from optuna.exceptions import UpdateFinishedTrialError

    try:
        ft.set_user_attr(CLAIM, {**_me(), "at": time.time()})
    except UpdateFinishedTrialError:
        return False
    return True


def _abandoned(claim: Any, now: float, started: float, between_batches: bool = True) -> bool:
    """Whether a trial in flight (asked at ``started``) was abandoned: its search's heartbeat is older than
    :data:`GRACE`, or its search ran on this machine in a process that is gone, or in this one
    (``between_batches``: this search has none in flight, so it is an earlier call's that stopped). A trial
    not claimed yet (asked a moment ago) is abandoned once as old as that."""
    if not isinstance(claim, dict):
        return now - started > GRACE
    try:
        at, pid = float(claim["at"]), int(claim["pid"])
    except (KeyError, TypeError, ValueError):
        return True
    if claim.get("host") == socket.gethostname():
        if pid == os.getpid():
            return between_batches
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except (PermissionError, OverflowError):
            pass  # alive (another user's), or no such pid here
    return now - at > GRACE


@contextlib.contextmanager
def _heartbeat(fts: list[Any]) -> Any:
    """While the block runs, renew the claims of trials ``fts`` every :data:`HEARTBEAT` seconds."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT):
            for ft in fts:
                with contextlib.suppress(Exception):  # a storage hiccup: the next beat tries again
                    _claim(ft)

    thread = threading.Thread(target=beat, name="tilelang-explore-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _sync(optuna: Any, study: Any, space: Space, trials: list[Trial], done: dict[Key, Trial]) -> set[Key]:
    """Bring the study's finished trials not yet in ``done`` into ``trials`` and ``done`` (a resumed study's,
    or another search's of a shared one), in the order of their numbers (then as asked: two searches of a
    shared study number theirs alike), numbered on from ``trials``; fail
    the trials in flight that were abandoned (:func:`_abandoned`: a search cut off mid-evaluation); return
    the points of the others in flight (another search is evaluating them)."""
    state = optuna.trial.TrialState
    now = time.time()
    new: list[tuple[tuple, Key, dict[str, Any]]] = []
    claimed: set[Key] = set()
    for ft in study.get_trials(deepcopy=False):
        if ft.state == state.RUNNING:
            if _abandoned(ft.user_attrs.get(CLAIM), now, _started(ft, now)):
                _tell(optuna, study, ft.number, state=state.FAIL)
            elif (point := _point(ft, space.names)) is not None:
                claimed.add(point)
        elif ATTR in ft.user_attrs:
            record = dict(ft.user_attrs[ATTR])
            key = tuple(record.pop("key"))
            if key not in done:
                new.append(((record.get("number", 0), *_asked(ft)), key, record))
    for _, key, record in sorted(new, key=lambda x: x[0]):
        if key in done:  # (two searches of a shared study both evaluated it: the first told is kept)
            continue
        record["number"] = len(trials)
        t = Trial(params=space.point(key), **record)
        trials.append(t)
        done[key] = t
    return claimed - set(done)


def _ask(optuna: Any, study: Any, dists: dict, names: list[str], space: Space, done: dict[Key, Trial],
         fallback: list[Key], n: int, claimed: Collection[Key] = (), want: int | None = None,
         turn: _Turn | None = None) -> list[tuple[Any, Key, str]]:
    """``n`` new points from the study, in the order asked.

    In a shared study (``want``: the budget, given only then) ``claimed`` are the points in flight in other
    searches, and each asked trial is claimed for this search, then given up if it is contested
    (:func:`_contested`), all while the search holds the study's ask lock (``turn``): the batch ends early when
    the budget is spoken for.
    """
    state = optuna.trial.TrialState
    batch: list[tuple[Any, Key, str]] = []
    skip = set(claimed)
    misses = 0
    turn = turn if turn is not None else _Turn(None)
    while len(batch) < n:
        with turn():
            try:
                ft = study.ask(dists)
            except optuna.exceptions.UpdateFinishedTrialError:  # (a shared study: another search popped the
                continue                                        # same waiting trial and finished it first)
            key = tuple(ft.params[name] for name in names)
            taken = key in done or key in skip or any(key == k for _, k, _ in batch)
            why = None
            if not taken and want is not None and space.contains(key):
                why = _contested(optuna, study, ft, key, names, want, turn.locks) if _claim(ft) else "theirs"
            if why == "point":
                skip.add(key)
                taken = True
            # a trial given up is told before the lock is let go: the next search to ask must not count it
            if why == "budget" or (why != "theirs" and (taken or not space.contains(key))):
                # a repeat teaches nothing (failed trials are ignored); a point outside the constraint is pruned
                _tell(optuna, study, ft, state=state.FAIL if why == "budget" or taken else state.PRUNED)
        if why == "theirs":  # another search asked this very trial too (a waiting one): it is theirs
            misses += 1
            continue
        if why == "budget":
            break
        if taken or not space.contains(key):
            misses += 1
            if misses >= MAX_MISSES:
                pending = {k for _, k, _ in batch}
                nxt = next((k for k in fallback if k not in done and k not in pending and k not in skip), None)
                if nxt is None:
                    break
                study.enqueue_trial(dict(zip(names, nxt, strict=True)), user_attrs={"source": "fallback"})
                misses = 0
            continue
        batch.append((ft, key, ft.user_attrs.get("source", "sampler")))
        misses = 0
    return batch


def _asked(t: Any) -> tuple[float, int]:
    """When a trial was asked, as every search of a shared study orders them alike: its start (a trial waiting
    in the study keeps the number it was enqueued with, so numbers are not the order asked), then its number."""
    return (_started(t, math.inf), t.number)


def _contested(optuna: Any, study: Any, ft: Any, key: Key, names: list[str], want: int,
               locked: bool = False) -> str | None:
    """Whether a trial just claimed in a shared study must give way, as every search decides alike by the
    order the study asked its trials in: "point" when its point is evaluated already or in flight in a trial
    asked before it (two searches asked it at once), "budget" when the points evaluated and in flight in
    trials asked before it fill the budget, "theirs" when the trial itself is another search's (two searches
    popped the same waiting trial, and the other's claim came last); else None.

    ``locked``: the search holds the study's ask lock (:class:`_Turn`), under which every search asks and
    decides: every other trial in flight was asked before this one, and has its point. Without it the order
    is the one the study records (:func:`_asked`: the searches' clocks), and claims are let land first."""
    state = optuna.trial.TrialState
    me = _me()
    # Two searches that popped the same waiting trial both claim it within milliseconds, and the last claim
    # stays: let a claim land before reading whose the trial is, for a trial that waited in the study (every
    # enqueued trial carries its "source"; a trial the sampler made is asked by one search only), or while
    # another search has trials in flight.
    if not locked and ("source" in ft.user_attrs or not all(
            _mine(t, me) for t in study.get_trials(deepcopy=False, states=(state.RUNNING,)))):
        time.sleep(CLAIM_SETTLE)
    mine = _asked(study.get_trials(deepcopy=False)[ft.number])
    for _ in range(ASKING_WAITS + 1):
        now = time.time()
        evaluated: set[Key] = set()
        ahead: set[Key] = set()
        asking = False  # a trial asked before this one whose point is not written yet
        for t in study.get_trials(deepcopy=False):
            if t.number == ft.number:
                if t.state != state.RUNNING or not _mine(t, me):
                    return "theirs"
                continue
            if t.state != state.RUNNING:
                if ATTR in t.user_attrs:
                    evaluated.add(tuple(t.user_attrs[ATTR]["key"]))
            elif (locked or _asked(t) < mine) and not _abandoned(t.user_attrs.get(CLAIM), now, _started(t, now),
                                                                  between_batches=False):
                point = _point(t, names)
                if point is not None:
                    ahead.add(point)
                else:
                    asking = True
        if key in evaluated or key in ahead:
            return "point"
        if len(evaluated | ahead) >= want:
            return "budget"
        if not asking:
            return None
        time.sleep(ASKING_POLL)  # (an ask writes its point within milliseconds)
    return "point"  # (still not written: give way, the point can be asked again)


def _evaluate(runner: Callable[[list[Task]], list[dict]], space: Space, keys: Sequence[Key]) -> list[dict]:
    tasks: list[Task | None] = []
    results: list[dict | None] = []
    for k in keys:
        try:
            kwargs, plan = space.arguments(k)
            tasks.append((space.factory, kwargs, plan))
            results.append(None)
        except TileLangError as e:
            tasks.append(None)
            results.append({"status": "design_error", "error": f"{type(e).__name__}: {e}", "metrics": {}})
    todo = [t for t in tasks if t is not None]
    out = iter(runner(todo) if todo else [])
    return [r if r is not None else next(out) for r in results]


def _store(optuna: Any, study: Any, ft: Any, trial: Trial, key: Key, objective: str) -> None:
    """Store the trial's record (its point as choice indices) and tell the sampler its value."""
    record = trial.to_dict()
    del record["params"]
    record["key"] = list(key)
    value = trial.value(objective)
    # In a shared study another search may have taken this one for abandoned (its heartbeat was late) and
    # failed it: the trial is then this search's alone (the study keeps whatever that search evaluates).
    with contextlib.suppress(optuna.exceptions.UpdateFinishedTrialError):
        ft.set_user_attr(ATTR, record)
    if trial.ok and math.isfinite(value):
        _tell(optuna, study, ft, values=value)
    else:
        _tell(optuna, study, ft, state=optuna.trial.TrialState.PRUNED)


def _tell(optuna: Any, study: Any, trial: Any, **what: Any) -> None:
    """``study.tell(trial, **what)``, skipped when the trial is finished already: in a shared study another
    search may have failed it for abandoned (:func:`_sync`), or finished it just before."""
    with contextlib.suppress(optuna.exceptions.UpdateFinishedTrialError):  # (finished between check and write)
        study.tell(trial, skip_if_finished=True, **what)


# -- backends ----------------------------------------------------------------------------------


def _runner(backend: Any, workers: int | None, time_limit: float | None, address: str | None,
            space: Space) -> tuple[Callable[[list[Task]], list[dict]], str, Callable[[], None]]:
    """(evaluate a list of tasks in order, the backend's name, clean-up)."""
    if backend == "local":
        n = workers or os.cpu_count() or 1
        return (lambda tasks: run_children(tasks, n, time_limit)), "local", lambda: None
    if backend == "ray":
        return _ray_runner(workers, time_limit, address, space)
    if hasattr(backend, "map") and callable(backend.map):
        return backend.map, type(backend).__name__, lambda: None
    raise TileLangError(f'explore: backend must be "local", "ray" or an object with map(tasks), got {backend!r}')


def _ray_runner(workers: int | None, time_limit: float | None, address: str | None,
                space: Space) -> tuple[Callable[[list[Task]], list[dict]], str, Callable[[], None]]:
    try:
        import ray
    except ImportError:
        raise TileLangError("backend='ray' needs ray (pip install ray)") from None
    started = False
    if not ray.is_initialized():
        import logging

        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
        if address is None and workers is not None:
            kw["num_cpus"] = workers
        ray.init(address=address, **kw)
        started = True
    module = sys.modules.get(getattr(space.factory, "__module__", "") or "")
    if module is not None and module.__name__.startswith("_tilelang_user_"):
        ray.cloudpickle.register_pickle_by_value(module)  # a file loaded by path: workers cannot import it
    n = workers or max(1, int(ray.available_resources().get("CPU", 1)))
    remote = ray.remote(num_cpus=1, max_retries=0)(evaluate)

    def run(tasks: list[Task]) -> list[dict]:
        results: list[dict | None] = [None] * len(tasks)
        running: dict[Any, tuple[int, float]] = {}
        try:
            fill(tasks, results, running)
        except BaseException:  # Ctrl-C (or any error here): the tasks in flight would run on in the cluster
            for ref in running:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            raise
        return results  # type: ignore[return-value]

    def fill(tasks: list[Task], results: list[dict | None], running: dict[Any, tuple[int, float]]) -> None:
        nxt = 0
        while nxt < len(tasks) or running:
            while nxt < len(tasks) and len(running) < n:
                running[remote.remote(*tasks[nxt])] = (nxt, time.monotonic())
                nxt += 1
            timeout = None
            if time_limit is not None:
                timeout = max(0.0, min(s + time_limit for _, s in running.values()) - time.monotonic())
            ready, _ = ray.wait(list(running), num_returns=1, timeout=timeout)
            for ref in ready:
                i, _ = running.pop(ref)
                try:
                    results[i] = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a worker that died: record it, go on
                    results[i] = {"status": "sim_error", "metrics": {}, "error": f"the Ray task failed: {e}"}
            if time_limit is not None:
                now = time.monotonic()
                for ref, (i, s) in list(running.items()):
                    if now - s >= time_limit:
                        ray.cancel(ref, force=True)
                        running.pop(ref)
                        results[i] = timeout_result(time_limit)

    def close() -> None:
        if started:
            ray.shutdown()

    return run, "ray", close
