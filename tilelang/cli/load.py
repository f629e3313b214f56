"""Finding the design a command line names: ``file.py:name`` or a printed ``.tl`` IR file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tilelang.errors import TileLangError
from tilelang.ir.design import Design


class UsageError(TileLangError):
    """The command line names something that does not exist."""


def load_design(spec: str) -> Design:
    """The design named by ``spec``.

    Args:
        spec: ``path/to/file.py:name`` where ``name`` is a design (``@tl.design``)
            or a function of no arguments returning one; ``path/to/file.py``
            alone when the file defines exactly one design; or a ``.tl`` file
            holding printed IR.

    Raises:
        UsageError: no such file or name, or an ambiguous file.
        TileLangError: the design itself is invalid.
    """
    path_text, _, name = spec.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text}")
    if path.suffix == ".tl":
        from tilelang.ir import parse

        obj = parse(path.read_text())
        if not isinstance(obj, Design):
            raise UsageError(f"{path_text} holds no design")
        return obj
    module = _import(path)
    if name:
        if not hasattr(module, name):
            found = ", ".join(_designs(module)) or "none"
            raise UsageError(f"{path_text} has no {name!r} (designs found: {found})")
        obj = getattr(module, name)
        if callable(obj) and not isinstance(obj, Design):
            obj = obj()
        if not isinstance(obj, Design):
            raise UsageError(f"{path_text}:{name} is not a design (got {type(obj).__name__})")
        return obj
    found = _designs(module)
    if len(found) != 1:
        raise UsageError(f"{path_text} defines {len(found)} designs ({', '.join(found) or 'none'}); name one: {path_text}:NAME")
    return getattr(module, found[0])


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"_tilelang_user_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def _designs(module) -> list[str]:
    return sorted(k for k, v in vars(module).items() if isinstance(v, Design))
