"""The tilelang simulator: a cycle-approximate, functional discrete-event model of a Plan.

``simulate(plan, A=a, C=c)`` runs the plan with real numbers and returns a
:class:`SimResult` (outputs, cycles, statistics, Perfetto trace). See
docs/simulator.md for the model, its constants and its accuracy.
"""

from __future__ import annotations

from simulator.result import SimResult, Stats, Trace, TransferStats
from simulator.run import MODES, simulate

__all__ = ["MODES", "SimResult", "Stats", "Trace", "TransferStats", "simulate"]
