"""Solver children must not finalise what they inherit from the parent.

A foreign library's object (the MLIR bindings' context, for one) can have a
destructor that waits on worker threads, which do not exist in a forked
child. If the child's garbage collector reached such an object the solve
would never finish; planning would then depend on what the process did
before (a real bug: a plan made after an MLIR emission fell back to another
method and differed).
"""

import gc
import os
import threading

import pulp

from tilelang.plan.solve import solve_model

_COLLECT_IN_CHILD = {"on": False}


def _child_collects_at_once() -> None:
    if _COLLECT_IN_CHILD["on"]:
        gc.enable()
        gc.collect()


os.register_at_fork(after_in_child=_child_collects_at_once)


class _WaitsOnAThread:
    """Garbage whose finaliser, in a forked child, waits for a thread that is not there."""

    def __init__(self) -> None:
        self.parent = os.getpid()
        self.never = threading.Event()
        self.me = self  # a cycle: only the garbage collector frees it

    def __del__(self) -> None:
        if os.getpid() != self.parent:
            self.never.wait()


def test_child_solve_ignores_inherited_finalisers():
    prob = pulp.LpProblem("tiny", pulp.LpMinimize)
    xs = [prob.add_variable(f"x{i}", 0, 1, cat="Binary") for i in range(8)]
    prob += pulp.lpSum(xs)
    prob += pulp.lpSum(xs) >= 3
    gc.collect()
    gc.disable()
    _COLLECT_IN_CHILD["on"] = True
    try:
        _WaitsOnAThread()  # garbage at once, left for the collector
        sol = solve_model(prob, "cbc", 5.0)
    finally:
        _COLLECT_IN_CHILD["on"] = False
        gc.enable()
        gc.collect()
    assert sol.status == "optimal" and round(sol.objective) == 3
