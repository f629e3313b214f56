"""Finding the user's source line for error messages."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable

_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_location() -> str | None:
    """``file:line`` of the innermost stack frame outside the tilelang package."""
    frame = inspect.currentframe()
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PKG_ROOT + os.sep) and "importlib" not in path:
            return f"{_short(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def definition_location(fn: Callable) -> str:
    """``file:line`` where ``fn`` is defined."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{_short(code.co_filename)}:{code.co_firstlineno}"


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def located(message: str, where: str | None) -> str:
    return f"{where}: {message}" if where else message


def _user_frame():
    frame = inspect.currentframe()
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PKG_ROOT + os.sep) and "importlib" not in path:
            return frame
        frame = frame.f_back
    return None


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
    frame = _defining_frame(fn) or _user_frame()
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
