"""Trial plans: whether a rewritten design still plans, asked cheaply first and exactly last.

A pass tries candidates with the greedy planner (milliseconds; the same
resource checks: memory, buffer descriptors, locks, DMA channels) and checks
the design it returns with the default planner, the one ``tl.plan`` runs, so
that what a pass returns plans. Warnings of trial plans (the planner's
fallbacks) are not the user's and are silenced.
"""

from __future__ import annotations

import warnings

from tilelang.errors import DesignError, PlanError, PlanWarning
from tilelang.ir.design import Design
from tilelang.ir.plan import Plan


def plan_quietly(design: Design, strategy: str = "ilp") -> Plan:
    """``tl.plan(design, strategy=strategy)`` with the planner's warnings silenced.

    Raises:
        PlanError: the design does not plan.
    """
    from tilelang.plan import plan

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlanWarning)
        return plan(design, strategy=strategy)


def why_not(design: Design, strategy: str = "ilp") -> str | None:
    """None when ``design`` verifies and plans with ``strategy``, else the error's message."""
    from tilelang.ir.verify import verify_design

    try:
        verify_design(design)
        plan_quietly(design, strategy)
    except (DesignError, PlanError) as e:
        return str(e)
    return None


__all__ = ["plan_quietly", "why_not"]
