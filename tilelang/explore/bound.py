"""The bounded sweep's workers: a point's floor (``simulator.bound``), computed in a child process.

``tl.explore(..., strategy="bound")`` skips the points whose floor is no better than the best simulated so
far (docs/explore.md "The bounded sweep"). A point's floor needs its design only, so a worker calls the
factory and prices the design; it never plans or simulates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from tilelang.errors import TileLangError


def point_bound(factory: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The floor of one point and its cores: ``{"bound": int or None, "cores": int or None, "error": str or
    None, "seconds"}`` (a trial's "cores" metric is the design's cores, known before planning).

    Never raises: a factory that fails (or returns something else than a Design) gives ``bound`` None, and
    the point is then evaluated like any other (its trial records the failure).
    """
    from simulator.bound import lower_bound
    from tilelang.explore.evaluate import quiet
    from tilelang.ir.design import Design

    t0 = time.perf_counter()
    try:
        with quiet():
            design = factory(**kwargs)
            if not isinstance(design, Design):
                raise TileLangError(f"the factory returned {type(design).__name__}, not a Design")
            bound: int | None = lower_bound(design)
            cores: int | None = len(design.cores)
        error = None
    except Exception as e:  # noqa: BLE001 - a user's factory may raise anything; the search must go on
        bound, cores, error = None, None, f"{type(e).__name__}: {e}"
    return {"bound": bound, "cores": cores, "error": error, "seconds": time.perf_counter() - t0}


def points_bounds(points: Sequence[tuple[Callable[..., Any], dict[str, Any]]]) -> dict[str, Any]:
    """:func:`point_bound` of several points in one worker: ``{"bounds": [int or None, ...], "cores": [...]}``
    in order."""
    got = [point_bound(factory, kwargs) for factory, kwargs in points]
    return {"bounds": [g["bound"] for g in got], "cores": [g["cores"] for g in got]}


__all__ = ["point_bound", "points_bounds"]
