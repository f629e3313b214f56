"""Solving PuLP models under a hard deadline, in a child process killed when time is up.

Solvers' own time limits are not trusted (CBC's first LP cannot be
interrupted; HiGHS has run its root solve far past its limit), so every
solve here runs in a forked child that leads its own process group. The
parent waits until the deadline and then kills the whole group (the CBC
binary included). The child may report progress (an incumbent) before it
finishes; the parent keeps the last report, so a killed job still yields its
best result.

Two solvers are supported through PuLP: ``"cbc"`` (bundled) and
``"highs"`` (highspy). Both run single-threaded with fixed options, so the
same model gives the same answer.

Determinism: what a solve returns must depend on the model alone, never on
how fast the machine is. A MIP is therefore bounded by work (a limit on
branch-and-bound nodes, which CBC and HiGHS count the same way on every
machine); the deadline is only a safety net against a model too large to
finish. When the net fires, the :class:`Solution` says so (``clocked``) and
the caller reports it (:func:`warn`, and ``"time-limited"`` in the plan's
solves), since the result may then differ on another machine.

Files: a solve writes its model, its solution and its log (CBC's, through PuLP) as files. Each child
writes them in a scratch directory of its own, which the parent removes once the child has ended,
killed or not, and the child's orphan watch removes before it ends a child whose parent was killed:
a killed solve leaves no file behind (PuLP deletes its files only when the solve returns).

Every deadline in the planner is read from :func:`clock`;
:func:`slowed_clock` makes that clock run fast, so a test can show a plan is
the same on a machine many times slower.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import re
import shutil
import signal
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pulp

from tilelang.errors import PlanError, PlanWarning
from tilelang.ir.plan import SolveInfo
from tilelang.plan.quiet import no_c_stdout

SOLVERS = ("cbc", "highs")

#: Seconds a solver is told it has, short of the hard deadline, so that it stops
#: on its own and hands back its incumbent before the parent has to kill it.
SOFT_MARGIN = 0.25

#: Branch-and-bound nodes a MIP may explore unless its caller says otherwise: the work bound
#: that makes a solve's answer independent of the machine's speed.
MAX_NODES = 2000

# (origin, factor): clock() = origin + factor * (monotonic() - origin); factor 1 outside slowed_clock.
_CLOCK = [0.0, 1.0]


def clock() -> float:
    """The planner's clock in seconds: every deadline (a safety net only) is measured on it."""
    origin, factor = _CLOCK
    return origin + factor * (time.monotonic() - origin)


def real_seconds(seconds: float) -> float:
    """Wall seconds in which ``seconds`` of :func:`clock` pass (to wait or to hand a solver)."""
    return seconds / _CLOCK[1]


@contextmanager
def slowed_clock(factor: float) -> Iterator[None]:
    """Within the block, the planner's clock runs ``factor`` times fast: a machine ``factor`` times slower.

    Args:
        factor: > 1 makes every deadline arrive that much sooner in wall time.
    """
    saved = list(_CLOCK)
    now = time.monotonic()
    _CLOCK[:] = [now, factor]
    try:
        yield
    finally:
        _CLOCK[:] = saved


def warn(message: str) -> None:
    """Report a planning fallback or a safety net that fired (a :class:`~tilelang.errors.PlanWarning`)."""
    warnings.warn(message, PlanWarning, stacklevel=3)


@dataclass
class SolveLog:
    """What went wrong while making one decision: safety nets that fired and solvers that failed.

    Each is a PlanWarning at once; :meth:`info` turns them into the decision's status
    ("error" before "time-limited") and message.

    Attributes:
        decision: "placement", "routing", ... (the start of every warning).
        clocked: steps stopped or skipped by a wall-clock safety net.
        errors: "step: solver message" of steps whose solver failed.
    """

    decision: str
    clocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def fired(self, step: str) -> None:
        """``step`` was stopped or skipped by a wall-clock safety net."""
        self.clocked.append(step)
        warn(
            f"{self.decision}: the wall-clock safety net stopped the {step}; the plan may differ on another "
            f"machine (raise time_limit)"
        )

    def failed(self, step: str, message: str) -> None:
        """``step``'s solver failed with ``message``; what it would have decided is skipped."""
        self.errors.append(f"{step}: {message}")
        warn(f"{self.decision}: the {step} solve failed ({message}); it is skipped")

    def note(self, step: str, sol: Solution) -> None:
        """Record a solve's failure or safety net, if any."""
        if sol.status == "error":
            self.failed(step, sol.message)
        elif sol.clocked:
            self.fired(step)

    def info(self, method: str, status: str, objective: float | None, gap: float | None) -> SolveInfo:
        """The decision's SolveInfo: ``status`` when nothing went wrong."""
        if self.errors:
            return SolveInfo(method, "error", 0.0, objective, gap, "; ".join(self.errors))
        if self.clocked:
            return SolveInfo(method, "time-limited", 0.0, objective, gap, "safety net fired: " + ", ".join(self.clocked))
        return SolveInfo(method, status, 0.0, objective, gap)


@dataclass(frozen=True)
class Outcome:
    """What a deadline-bounded job produced.

    Attributes:
        status: "done" (finished), "timeout" (killed at the deadline) or "error".
        result: the final result ("done"), else the last progress report or None.
        message: the error text for "error".
        seconds: wall time spent.
    """

    status: str
    result: Any
    message: str = ""
    seconds: float = 0.0


#: The longest time limit a solve takes (a year): the operating system's timers overflow far beyond it.
MAX_TIME_LIMIT = 365 * 24 * 3600.0


def check_time_limit(time_limit: object) -> float:
    """``time_limit`` as seconds: a positive number up to :data:`MAX_TIME_LIMIT`.

    Raises:
        PlanError: anything else (a bool, NaN, infinity, zero or less).
    """
    if (not isinstance(time_limit, int | float) or isinstance(time_limit, bool)
            or not 0 < time_limit <= MAX_TIME_LIMIT):
        raise PlanError(f"time_limit must be a positive number of seconds up to {MAX_TIME_LIMIT:g} (a year), "
                        f"got {time_limit!r}")
    return float(time_limit)


def check_solver(solver: str) -> str:
    """Normalise a solver name.

    Raises:
        PlanError: an unknown solver.
    """
    name = solver.lower() if isinstance(solver, str) else solver
    if name not in SOLVERS:
        raise PlanError(f"unknown solver {solver!r}; use one of {list(SOLVERS)}")
    return name


#: Seconds between the solver child's checks that its parent is still alive.
ORPHAN_POLL = 0.2

#: Where scratch directories are made: the system's temporary directory, as this process found it
#: before a solver child (module docstring, "Files") pointed ``tempfile`` at its own scratch. A child's
#: children thus get scratch directories beside its own, not inside it: each is removed by its own parent.
_scratch_root: str | None = None


def _orphan_watch(parent_pid: int, scratch: str) -> None:
    """End the child's process group (the child and its solver binary) once its parent is gone,
    removing the child's scratch directory first (the parent that would have removed it is gone).

    The child leads its own group, so a kill of the parent's group (``tl.explore``'s time limit) does
    not reach it: without this it would run on, reparented, beside the evaluations that follow.
    """
    while os.getppid() == parent_pid:
        time.sleep(ORPHAN_POLL)
    shutil.rmtree(scratch, ignore_errors=True)
    os.killpg(0, signal.SIGKILL)


def _child(conn: Any, other_end: Any, job: Callable[..., Any], args: tuple, scratch: str) -> None:
    parent_pid = os.getppid()
    os.setsid()  # lead a new process group so the parent can kill the solver binary with us
    other_end.close()  # the parent's end: held here, a write to a dead parent would block, not fail
    # Every temporary file of the solve goes to the scratch directory: Python's (``tempfile``) and
    # PuLP's (its command-line solvers take their directory from TMPDIR when made).
    global _scratch_root
    _scratch_root = _scratch_root or tempfile.gettempdir()
    tempfile.tempdir = scratch
    os.environ["TMPDIR"] = os.environ["TMP"] = scratch
    threading.Thread(target=_orphan_watch, args=(parent_pid, scratch), daemon=True).start()

    def report(payload: Any) -> None:
        conn.send(("progress", payload))

    try:
        try:
            message = ("done", job(report, *args))
        except PlanError as e:
            message = ("planerror", str(e))
        except BaseException as e:  # noqa: BLE001 - anything the solver raises goes back to the parent
            message = ("error", f"{type(e).__name__}: {e}")
        conn.send(message)
    except OSError:
        pass  # the parent is gone (its pipe broke): there is nobody to tell
    finally:
        conn.close()


def run_with_deadline(job: Callable[..., Any], args: tuple, seconds: float) -> Outcome:
    """Run ``job(report, *args)`` in a child process for at most ``seconds``.

    Args:
        job: called in the child with a ``report(payload)`` callback first.
        args: further arguments (inherited by fork, not pickled).
        seconds: the hard deadline.

    Returns:
        The :class:`Outcome`.

    Raises:
        PlanError: the job raised PlanError (re-raised here with its message).
    """
    start = clock()
    ctx = multiprocessing.get_context("fork")
    # the child's temporary files (module docstring, "Files"), removed below whatever became of the child
    scratch = tempfile.mkdtemp(prefix="tilelang-solve-", dir=_scratch_root)
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, parent, job, args, scratch), daemon=True)
    # The child must never finalise objects it inherits: a foreign library's
    # destructor (the MLIR bindings' context, say) may wait on worker threads
    # that do not exist after fork, and the child would spin forever. Frozen
    # objects are invisible to the child's garbage collector.
    gc.freeze()
    # Inside a daemonic process (a multiprocessing.Pool worker: a user's, or the fuzz harness's), Process.start
    # refuses to make children; the solver's child is always killed below before this returns, so the
    # refusal's reason (children orphaned when the daemon exits) does not apply: the flag is lifted meanwhile.
    me = multiprocessing.current_process()
    daemonic = me.daemon
    try:
        if daemonic:
            me.daemon = False
        proc.start()
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    finally:
        if daemonic:
            me.daemon = True
        gc.unfreeze()
    child.close()
    last: Any = None
    try:
        while True:
            left = seconds - (clock() - start)
            if left <= 0 or not parent.poll(real_seconds(left)):
                return Outcome("timeout", last, seconds=clock() - start)
            try:
                kind, payload = parent.recv()
            except EOFError:
                return Outcome("error", last, "the solver process died", clock() - start)
            if kind == "progress":
                last = payload
            elif kind == "done":
                return Outcome("done", payload, seconds=clock() - start)
            elif kind == "planerror":
                raise PlanError(payload)
            else:
                return Outcome("error", last, payload, clock() - start)
    finally:
        _kill(proc)
        parent.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _kill(proc: Any) -> None:
    if proc.is_alive():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.join(timeout=5)


# -- one PuLP model -------------------------------------------------------------------------


@dataclass(frozen=True)
class Solution:
    """A solved model: status, variable values by name, objective and proven bound.

    Attributes:
        status: "optimal", "feasible" (stopped with an incumbent), "infeasible", "none"
            (no solution), "timeout" (killed at the deadline) or "error" (the solver failed).
        values: variable name -> value (empty without a solution).
        objective: objective of the incumbent.
        bound: proven lower bound on the optimum (minimisation), when known.
        duals: constraint name -> dual value (LP solves only).
        message: the solver's error text for "error".
        clocked: the wall-clock safety net stopped the solve (the solver's own time limit
            or the kill at the deadline), so the answer may differ on another machine;
            False when the solve ended on its own or on its node limit.
    """

    status: str
    values: dict[str, float]
    objective: float | None
    bound: float | None
    duals: dict[str, float]
    message: str = ""
    clocked: bool = False

    @property
    def gap(self) -> float | None:
        """Relative gap (objective - bound) / |objective|; 0.0 when optimal."""
        if self.status == "optimal":
            return 0.0
        if self.objective is None or self.bound is None:
            return None
        return max(0.0, (self.objective - self.bound) / max(abs(self.objective), 1e-9))


class _WarmHiGHS(pulp.HiGHS):  # type: ignore[misc]
    """PuLP's HiGHS with the variables' initial values handed over as a MIP start, and its node limit understood."""

    def findSolutionValues(self, lp: pulp.LpProblem) -> tuple[int, int]:  # noqa: N802 - PuLP's hook name
        try:
            return super().findSolutionValues(lp)
        except KeyError:
            # PuLP's table lacks kSolutionLimit (the node limit); the values are set by then.
            import highspy

            feasible = lp.solverModel.getInfo().primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
            if feasible:
                return pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible
            return pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound

    def createAndConfigureSolver(self, lp: pulp.LpProblem) -> None:  # noqa: N802 - PuLP's hook name
        with no_c_stdout():  # highspy.Highs() prints its banner to fd 1 before output can be turned off
            super().createAndConfigureSolver(lp)

    def callSolver(self, lp: pulp.LpProblem) -> None:  # noqa: N802 - PuLP's hook name
        cols = sorted(lp.variables(), key=lambda v: v.index)
        if any(v.varValue is not None for v in cols):
            import highspy

            start = highspy.HighsSolution()
            start.col_value = [float(v.varValue or 0.0) for v in cols]
            start.value_valid = True
            lp.solverModel.setSolution(start)
        lp.solverModel.run()


def _cbc_bound(log: str) -> float | None:
    m = re.search(r"Lower bound:\s*([-0-9.eE+]+)", log)
    return float(m.group(1)) if m else None


def solve_in_process(
    prob: pulp.LpProblem, solver: str, time_limit: float, mip: bool = True, nodes: int = MAX_NODES
) -> Solution:
    """Solve ``prob`` (a minimisation) in this process; used inside deadline-bounded children.

    Args:
        prob: the model.
        solver: "cbc" or "highs".
        time_limit: the soft limit handed to the solver (seconds of :func:`clock`).
        mip: False solves the LP relaxation and collects duals.
        nodes: branch-and-bound nodes at most (the deterministic work bound).

    Returns:
        The :class:`Solution`.
    """
    limit = max(0.05, real_seconds(time_limit))
    log = ""
    if solver == "cbc":
        with tempfile.NamedTemporaryFile("r", suffix=".log", delete=True) as fh:
            warm = mip and any(v.varValue is not None for v in prob.variables())
            with warnings.catch_warnings():
                # PuLP 3 deprecates its bundled CBC in favour of a separate install; the bundled one is what we ship.
                warnings.simplefilter("ignore", DeprecationWarning)
                # no -threads option: CBC then runs its serial code. With "-threads 1" it starts its threaded
                # code with one worker, which now and then deadlocks on its own locks (two threads in futex
                # waits; coin-or/Cbc issue 640): about one solve in a hundred of a 4-buffer packing MIP
                # hung until its deadline.
                cmd = pulp.PULP_CBC_CMD(
                    mip=mip, msg=False, timeLimit=limit, logPath=fh.name, warmStart=warm, maxNodes=nodes
                )
            prob.solve(cmd)
            log = fh.read()
        bound = _cbc_bound(log)
        clocked = "Stopped on time" in log
    else:
        import highspy

        cmd = _WarmHiGHS(mip=mip, msg=False, timeLimit=limit, threads=1, random_seed=0, mip_max_nodes=nodes)
        prob.solve(cmd)
        bound = None
        model = getattr(prob, "solverModel", None)
        clocked = model is not None and model.getModelStatus() == highspy.HighsModelStatus.kTimeLimit
        if model is not None and mip:
            info = model.getInfo()
            bound = float(info.mip_dual_bound) if abs(info.mip_dual_bound) < 1e30 else None
            if model.getModelStatus() == highspy.HighsModelStatus.kSolutionLimit:
                log = "Stopped on node limit"
    return _solution(prob, bound, mip, log, clocked)


def _solution(prob: pulp.LpProblem, bound: float | None, mip: bool, log: str, clocked: bool) -> Solution:
    status = pulp.LpStatus[prob.status]
    sol = prob.sol_status
    if status == "Infeasible":
        return Solution("infeasible", {}, None, None, {}, clocked=clocked)
    if sol in (pulp.LpSolutionOptimal,) and "Stopped on" not in log and not clocked:
        kind = "optimal"
    elif sol in (pulp.LpSolutionIntegerFeasible, pulp.LpSolutionOptimal):
        kind = "feasible"
    else:
        return Solution("none", {}, None, bound, {}, clocked=clocked)
    values = {v.name: (v.varValue if v.varValue is not None else 0.0) for v in prob.variables()}
    duals = {} if mip else {c.name: (c.pi if c.pi is not None else 0.0) for c in prob.constraints()}
    obj = pulp.value(prob.objective)
    objective = float(obj) if obj is not None else 0.0
    if kind == "optimal":
        bound = objective
    return Solution(kind, values, objective, bound, duals, clocked=clocked)


def _model_job(
    report: Callable[[Any], None], prob: pulp.LpProblem, solver: str, soft: float, mip: bool, nodes: int
) -> Solution:
    del report
    return solve_in_process(prob, solver, soft, mip, nodes)


def solve_model(
    prob: pulp.LpProblem, solver: str, time_limit: float, mip: bool = True, nodes: int = MAX_NODES
) -> Solution:
    """Solve ``prob`` in a child process: bounded by ``nodes``, killed at ``time_limit`` seconds.

    Args:
        prob: a minimisation model.
        solver: "cbc" or "highs".
        time_limit: hard deadline in seconds of :func:`clock` (a safety net: see the module docstring).
        mip: False for an LP relaxation (duals are returned).
        nodes: branch-and-bound nodes at most; a solve stopped there is "feasible" (or
            "none") and the same on every machine.

    Returns:
        The :class:`Solution`; status "timeout" (``clocked``) when the deadline passed first,
        "error" (with the solver's message) when the solver process failed.
    """
    solver = check_solver(solver)
    soft = max(0.05, time_limit - SOFT_MARGIN) if time_limit > 2 * SOFT_MARGIN else time_limit * 0.8
    out = run_with_deadline(_model_job, (prob, solver, soft, mip, nodes), time_limit)
    if out.status == "done":
        return out.result
    return Solution(out.status, {}, None, None, {}, out.message, clocked=out.status == "timeout")
