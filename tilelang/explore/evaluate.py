"""One trial: the factory call, ``tl.plan`` and ``tl.simulate(mode="timing")``, with its metrics.

:func:`evaluate` runs in the process that calls it and never raises: every
failure becomes a status and a message. :func:`run_children` runs several
evaluations, each in its own child process (forked, so the factory need not
be importable by name) with an optional time limit: a child that exceeds it is
killed with its process group (the planner's solver children included) and
its point recorded as a timeout.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from tilelang.errors import DesignError, KernelError, ParseError, PlanError, PlanWarning, TileLangError

#: Trial statuses (API.md "Explore").
STATUSES = ("ok", "design_error", "plan_error", "sim_error", "timeout")

#: What a worker evaluates: (factory, factory kwargs, tl.plan options).
Task = tuple[Callable[..., Any], dict[str, Any], dict[str, Any]]


def evaluate(factory: Callable[..., Any], kwargs: dict[str, Any], plan_options: dict[str, Any]) -> dict[str, Any]:
    """Build, plan and time one point.

    Args:
        factory: the design factory.
        kwargs: its keyword arguments.
        plan_options: keyword arguments of ``tl.plan``.

    Returns:
        ``{"status", "error", "metrics", "warnings"}``: status one of :data:`STATUSES`, the error
        message (None when ok), the metrics (cycles, cores, onchip_bytes, ddr_bytes, peak,
        wall_seconds and the seconds of each stage; only wall_seconds unless ok), and the
        messages of the ``tl.PlanWarning`` s issued meanwhile (a planner's wall-clock safety net
        that fired, a fallback taken: the point's result may differ on another machine).
    """
    import tilelang as tl
    from tilelang.ir.design import Design

    t0 = time.perf_counter()
    stage = "design_error"
    metrics: dict[str, Any] = {}
    caught: list[warnings.WarningMessage] = []
    try:
        with quiet(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PlanWarning)  # each one, even one issued before in this process
            design = factory(**kwargs)
            if not isinstance(design, Design):
                raise DesignError(f"the factory returned {type(design).__name__}, not a Design")
            t1 = time.perf_counter()
            stage = "plan_error"
            plan = tl.plan(design, **plan_options)
            t2 = time.perf_counter()
            stage = "sim_error"
            res = tl.simulate(plan, mode="timing", trace=False)
            t3 = time.perf_counter()
        metrics = design_metrics(plan, res)
        metrics.update(design_seconds=t1 - t0, plan_seconds=t2 - t1, sim_seconds=t3 - t2)
        status, error = "ok", None
    except TileLangError as e:
        status, error = _status(e, stage), f"{type(e).__name__}: {e}"
    except (Exception, SystemExit) as e:  # noqa: BLE001 - a user's factory may raise (or exit) anything; the search goes on
        status, error = stage, f"{type(e).__name__}: {e}"
    metrics["wall_seconds"] = time.perf_counter() - t0
    notes = []
    for w in caught:
        if issubclass(w.category, PlanWarning):
            notes.append(str(w.message))
        else:  # not the trial's to keep: shown as it would have been
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return {"status": status, "error": error, "metrics": metrics, "warnings": notes}


def _status(e: TileLangError, stage: str) -> str:
    """The status of an error: by its kind (a factory may raise PlanError from the tiler), else by stage."""
    if isinstance(e, PlanError):
        return "plan_error"
    if isinstance(e, DesignError | KernelError | ParseError):
        return "design_error"
    return stage


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Standard output (file descriptor 1, where solver libraries print banners) to /dev/null."""
    import sys

    with contextlib.suppress(Exception):
        sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        with contextlib.redirect_stdout(open(os.devnull, "w")):  # noqa: SIM115 - closed with the redirect's end
            yield
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def design_metrics(plan: Any, res: Any) -> dict[str, Any]:
    """Cycles, cores, on-chip and DDR bytes, and the fraction of peak MAC throughput of a simulated plan."""
    design = plan.design
    cycles = int(res.cycles)
    cores = len(design.cores)
    ideal = ideal_core_cycles(design)
    return {
        "cycles": cycles,
        "cores": cores,
        "onchip_bytes": int(sum(b.size for b in plan.buffers.values())),
        "ddr_bytes": int(res.stats.ddr_bytes_read + res.stats.ddr_bytes_written),
        "peak": ideal / (cycles * cores) if ideal and cycles and cores else None,
    }


def ideal_core_cycles(design: Any) -> float:
    """Core-cycles the design's matmuls take at the device's peak MAC rate (0: no matmul).

    The calls of each kernel are counted through the cores' static loops; a matmul of an
    ``m x k`` by a ``k x n`` tile is ``m k n`` MACs at ``Device.macs_per_cycle`` of its input dtype.
    """
    from tilelang.ir.design import call_counts
    from tilelang.ir.kernel import Kernel, OpKind

    dev = design.device
    per_call: dict[str, float] = {}
    for k in design.kernels:
        if not isinstance(k, Kernel):
            continue
        total = 0.0
        for op in k.body:
            if op.kind is OpKind.MATMUL:
                (m, kk), n = op.operands[0].type.shape, op.operands[1].type.shape[1]
                rate = dev.macs_per_cycle(op.operands[0].type.dtype)
                total += m * kk * n / rate if rate else 0.0
        per_call[k.name] = total
    return sum(n * per_call.get(name, 0.0) for c in design.cores for name, n in call_counts(c.body).items())


# -- children ----------------------------------------------------------------------------


def _child(conn: Connection, task: Task, job: Callable[..., dict[str, Any]]) -> None:
    os.setpgrp()  # its own process group: a timeout kills the planner's solver children too
    try:
        conn.send(job(*task))
    finally:
        conn.close()


def timeout_result(limit: float) -> dict[str, Any]:
    """The record of a point whose evaluation exceeded the time limit."""
    return {"status": "timeout", "warnings": [], "metrics": {"wall_seconds": limit},
            "error": f"the evaluation exceeded the time limit of {limit:g} s and was stopped (a safety net: "
                     f"raise time_limit to evaluate this point)"}


def run_children(tasks: Sequence[Task], workers: int, time_limit: float | None,
                 job: Callable[..., dict[str, Any]] = evaluate) -> list[dict[str, Any]]:
    """Run ``job(*task)`` (default :func:`evaluate`) for each of ``tasks``, at most ``workers`` at a time,
    each in a forked child; results in task order (a task past ``time_limit``: :func:`timeout_result`)."""
    ctx = multiprocessing.get_context("fork")
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    running: dict[Connection, tuple[int, Any, float]] = {}
    try:
        _run(ctx, tasks, workers, time_limit, job, results, running)
    except BaseException:
        # Ctrl-C (or any error here): the children lead their own process groups, so the terminal's interrupt
        # does not reach them, and multiprocessing would wait for them at exit. End them now.
        for conn, (_, proc, _) in running.items():
            _kill(proc)
            conn.close()
        raise
    return results  # type: ignore[return-value]


def _run(ctx: Any, tasks: Sequence[Task], workers: int, time_limit: float | None, job: Callable[..., dict[str, Any]],
         results: list[dict[str, Any] | None], running: dict[Connection, tuple[int, Any, float]]) -> None:
    """:func:`run_children`'s loop: fills ``results``; ``running`` holds the children in flight."""
    nxt = 0
    while nxt < len(tasks) or running:
        while nxt < len(tasks) and len(running) < workers:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(send, tasks[nxt], job), daemon=False)
            # The child must never finalise what it inherits: an MLIR context of this process's (an emitted or
            # read module) joins worker threads the child does not have, and would wait forever (as in
            # tilelang/plan/solve.py).
            gc.freeze()
            try:
                proc.start()
            finally:
                gc.unfreeze()
            running[recv] = (nxt, proc, time.monotonic())
            send.close()
            nxt += 1
        timeout = None
        if time_limit is not None:
            now = time.monotonic()
            timeout = max(0.0, min(start + time_limit - now for _, _, start in running.values()))
        for conn in wait(list(running), timeout):
            i, proc, _ = running.pop(conn)  # type: ignore[index]
            try:
                results[i] = conn.recv()
            except EOFError:
                proc.join()
                results[i] = {"status": "sim_error", "metrics": {},
                              "error": f"the evaluation process died (exit code {proc.exitcode})"}
            conn.close()
            proc.join()
        if time_limit is not None:
            now = time.monotonic()
            for conn, (i, proc, start) in list(running.items()):
                if now - start >= time_limit:
                    _kill(proc)
                    running.pop(conn)
                    conn.close()
                    results[i] = timeout_result(time_limit)


def _kill(proc: Any) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the child's group (it may not have made it yet: then the child alone)
    proc.kill()
    proc.join()
