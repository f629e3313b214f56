"""Finding the user's source line for error messages; the location helpers live in the IR (tilelang.ir.source)."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from tilelang.ir.source import definition_location, located, user_frame, user_location

__all__ = ["annotations_of", "definition_location", "located", "user_location"]


def _defining_frame(fn: Callable):
    """The live frame of the function whose body defines ``fn`` (a nested def), if any."""
    frame = inspect.currentframe()
    while frame is not None:
        if fn.__code__ in frame.f_code.co_consts:
            return frame
        frame = frame.f_back
    return None


def annotations_of(fn: Callable) -> dict[str, object]:
    """``fn``'s annotations, evaluated.

    String annotations (``from __future__ import annotations``) are evaluated
    in the function's globals plus the locals of the user's frame that is
    decorating it, so sizes from an enclosing function resolve.
    """
    raw = inspect.get_annotations(fn)
    if not any(isinstance(v, str) for v in raw.values()):
        return dict(raw)
    frame = _defining_frame(fn) or user_frame()
    scope = dict(frame.f_locals) if frame is not None else {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
            try:
                scope.setdefault(name, cell.cell_contents)
            except ValueError:
                pass
    out = {}
    for k, v in raw.items():
        out[k] = eval(v, fn.__globals__, scope) if isinstance(v, str) else v  # noqa: S307 - the user's own annotation
    return out
