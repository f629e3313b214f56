"""Finding the user's source line for error messages (the IR's numpy call paths and the frontend)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from types import FrameType

_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame() -> FrameType | None:
    """The innermost stack frame outside the tilelang package."""
    frame = inspect.currentframe()
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PKG_ROOT + os.sep) and "importlib" not in path:
            return frame
        frame = frame.f_back
    return None


def user_location() -> str | None:
    """``file:line`` of the innermost stack frame outside the tilelang package."""
    frame = user_frame()
    return f"{_short(frame.f_code.co_filename)}:{frame.f_lineno}" if frame is not None else None


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
