"""Keeping solver banners off standard output.

Constructing a ``highspy.Highs`` writes a banner ("Running HiGHS ...
Copyright ...") to file descriptor 1 from C, before any option can turn
output off; Python-level redirection (``contextlib.redirect_stdout``, pytest's
capsys) does not see it. Standard output carries only what a user asked for
(``tilelang plan --json``, ``tilelang emit > f.mlir``), so every Highs is made
through :func:`new_highs`, or inside :func:`no_c_stdout`, which points fd 1 at
the null device for the duration.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _flush_c_stdio() -> None:
    """Flush C's stdio buffers, so text the C code wrote goes where fd 1 pointed when it wrote it."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library to reach (not on a POSIX system): nothing buffered there
        pass


@contextmanager
def no_c_stdout() -> Iterator[None]:
    """Discard whatever is written to file descriptor 1 inside the block (Python's own output is flushed first)."""
    try:
        sys.stdout.flush()
    except (AttributeError, OSError, ValueError):  # a closed or replaced sys.stdout
        pass
    _flush_c_stdio()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        _flush_c_stdio()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def new_highs() -> Any:  # noqa: ANN401 - a highspy.Highs (highspy has no stubs)
    """A ``highspy.Highs`` with console output off, its construction banner discarded."""
    import highspy

    with no_c_stdout():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h
