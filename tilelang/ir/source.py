"""Finding the user's source line for error messages (the IR's numpy call paths and the frontend)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from types import FrameType

import numpy as np

_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: numpy's own frames are skipped too: ``np.sum(tile)`` in a kernel reaches the tile's methods from inside
#: numpy, and the line to blame is the user's call, not numpy's.
_NUMPY_ROOT = os.path.dirname(os.path.abspath(np.__file__))


#: co_filename -> whether it is outside the package and numpy (absolute names only: a relative one depends on the cwd).
#: Every fifo and move of a design asks, walking the same few frames.
_OUTSIDE: dict[str, bool] = {}


def _outside(filename: str) -> bool:
    hit = _OUTSIDE.get(filename)
    if hit is None:
        path = os.path.abspath(filename)
        hit = not path.startswith((_PKG_ROOT + os.sep, _NUMPY_ROOT + os.sep)) and "importlib" not in path
        if os.path.isabs(filename):
            _OUTSIDE[filename] = hit
    return hit


def user_frame() -> FrameType | None:
    """The innermost stack frame outside the tilelang package and numpy."""
    frame = inspect.currentframe()
    while frame is not None:
        if _outside(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def user_location() -> str | None:
    """``file:line`` of the innermost stack frame outside the tilelang package and numpy."""
    frame = user_frame()
    return f"{_short(frame.f_code.co_filename)}:{frame.f_lineno}" if frame is not None else None


def definition_location(fn: Callable) -> str:
    """``file:line`` where ``fn`` is defined."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{_short(code.co_filename)}:{code.co_firstlineno}"


def _short(path: str) -> str:
    key = (path, os.getcwd())
    short = _SHORT.get(key)
    if short is None:
        try:
            rel = os.path.relpath(path)
        except ValueError:
            rel = ".."
        short = rel if not rel.startswith("..") else path
        if len(_SHORT) > 4096:
            _SHORT.clear()
        _SHORT[key] = short
    return short


#: (path, cwd) -> ``_short(path)``; a design names the same few files thousands of times.
_SHORT: dict[tuple[str, str], str] = {}


def located(message: str, where: str | None) -> str:
    return f"{where}: {message}" if where else message


def at(loc: str | None) -> str:
    """`` (at file:line)`` to follow an entity's name in a message, or nothing when ``loc`` is unknown."""
    return f" (at {loc})" if loc else ""
