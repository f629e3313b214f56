"""The error hierarchy users see (API.md, section Errors).

Every error a user can cause derives from :class:`TileLangError`; messages say
what is wrong, where (the user's file and line when known) and what to do.
"""

from __future__ import annotations


class TileLangError(Exception):
    """Base of every error tilelang raises for bad input."""


class KernelError(TileLangError):
    """A kernel is ill-typed or uses an unsupported operation."""


class DesignError(TileLangError):
    """A design is invalid: bad device, pattern, fifo wiring or types."""


class PlanError(TileLangError):
    """Planning failed: a resource ran out or a solver found no plan."""


class SimulationError(TileLangError):
    """Simulation failed."""


class DeadlockError(SimulationError):
    """The simulated design cannot make progress."""


class ParseError(TileLangError):
    """Malformed IR text; carries the line and column of the problem."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(where + message)
        self.line = line
        self.column = column


class PlanWarning(UserWarning):
    """The planner fell back (a solver failed or a wall-clock safety net fired): the plan is legal,
    but it may not be the one the ILP would give, or may differ on another machine."""
