"""Finding what a command line names: ``file.py:name``, a printed ``.tl`` IR file or a saved ``.json`` plan,
and checking the files a command will read or write before any work is done."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import sys
import traceback
from pathlib import Path

from tilelang.errors import TileLangError
from tilelang.ir.design import Design
from tilelang.ir.plan import Plan


class UsageError(TileLangError):
    """The command line names something that does not exist."""


def load_target(spec: str) -> Design | Plan:
    """The design named by ``spec`` (see :func:`load_design`), or the plan in a ``.json`` file
    written by ``tilelang plan -o``.

    Raises:
        UsageError: no such file or name, or an ambiguous file.
        TileLangError: the design or plan itself is invalid.
    """
    path_text = spec.partition(":")[0]
    if path_text.endswith(".json"):
        path = Path(path_text)
        if not path.is_file():
            raise UsageError(f"no such file: {path_text}")
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"cannot read {path_text}: {e}") from None
        return Plan.from_json(text)
    return load_design(spec)


def load_design(spec: str) -> Design:
    """The design named by ``spec``.

    Args:
        spec: ``path/to/file.py:name`` where ``name`` is a design (``@tl.design``)
            or a function of no arguments returning one; ``path/to/file.py``
            alone when the file defines exactly one design; or a ``.tl`` file
            holding printed IR; or a ``.mlir`` file holding an objectfifo-level mlir-aie module
            (``tl.read_mlir``: its kernels read as extern kernels without numbers or cycles).

    Raises:
        UsageError: no such file or name, or an ambiguous file.
        TileLangError: the design itself is invalid.
    """
    path_text, _, name = spec.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text}")
    if path.suffix not in (".py", ".tl", ".mlir"):
        hint = " (a saved plan: this command takes the design, not its plan)" if path.suffix == ".json" else ""
        raise UsageError(f"{path_text}: expected a design as file.py:NAME, a printed .tl file or an objectfifo-level "
                         f".mlir module{hint}")
    if path.suffix == ".mlir":
        from tilelang.api import read_mlir

        return read_mlir(path)
    if path.suffix == ".tl":
        from tilelang.ir import parse

        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"cannot read {path_text}: {e}") from None
        obj = parse(text)
        if not isinstance(obj, Design):
            raise UsageError(f"{path_text} holds no design")
        return obj
    module = _import(path)
    if name:
        if not hasattr(module, name):
            raise UsageError(f"{path_text} has no {name!r} ({_found(module)})")
        obj = getattr(module, name)
        if callable(obj) and not isinstance(obj, Design):
            if _required(obj):
                raise UsageError(
                    f"{path_text}:{name} needs arguments {_required(obj)}; the command line calls factories with none"
                )
            try:
                obj = obj()
            except TileLangError:
                raise
            except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's code failed: say where
                raise user_code_error(path, f"{path_text}:{name}()", e) from None
        if not isinstance(obj, Design):
            raise UsageError(f"{path_text}:{name} is not a design (got {type(obj).__name__})")
        return obj
    found = _designs(module)
    if len(found) != 1:
        raise UsageError(f"{path_text} defines {len(found)} designs ({_found(module)}); name one: {path_text}:NAME")
    return getattr(module, found[0])


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"_tilelang_user_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except TileLangError:
        raise
    except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's file failed to run: say where
        raise user_code_error(path, f"importing {path}", e) from None
    finally:
        sys.path.pop(0)
    return module


def user_code_error(path: Path, what: str, e: BaseException) -> UsageError:
    """A failure inside the user's own file as one error naming the file, line and function it came from."""
    if isinstance(e, SyntaxError):
        where = f" at {e.filename}:{e.lineno}" if e.lineno else ""
        return UsageError(f"{what} failed{where}: {type(e).__name__}: {e.msg}")
    frames = traceback.extract_tb(e.__traceback__)
    try:
        mine = [f for f in frames if Path(f.filename).resolve() == path.resolve()]
    except OSError:
        mine = []
    last = mine[-1] if mine else (frames[-1] if frames else None)
    where = f" at {last.filename}:{last.lineno} (in {last.name})" if last is not None else ""
    detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return UsageError(f"{what} failed{where}: {detail}")


def _designs(module) -> list[str]:
    return sorted(k for k, v in vars(module).items() if isinstance(v, Design))


def _required(fn: object) -> list[str]:
    """Parameters of ``fn`` without a default ([] when its signature cannot be read)."""
    try:
        params = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _factories(module) -> list[str]:
    """Public functions defined in ``module`` that can be called with no arguments (design factories)."""
    return sorted(
        k for k, v in vars(module).items()
        if inspect.isfunction(v) and v.__module__ == module.__name__ and not k.startswith("_") and not _required(v)
    )


def _found(module) -> str:
    designs = ", ".join(_designs(module)) or "none"
    factories = ", ".join(_factories(module)) or "none"
    return f"designs found: {designs}; factories callable with no arguments: {factories}"


def check_readable(path: str | None, what: str) -> None:
    """Raise a UsageError now, before any work, if ``path`` is given but cannot be read."""
    if path is None:
        return
    if not Path(path).is_file():
        raise UsageError(f"{what}: no such file: {path}")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{what}: cannot read {path} (permission denied)")


def check_writable(path: str | None, what: str, directory: bool = False) -> None:
    """Raise a UsageError now, before any work, if ``path`` is given but could not be written.

    Args:
        path: the file (or, with ``directory``, the directory) the command will write.
        what: the option, for the message.
        directory: ``path`` is a directory the command creates if needed.
    """
    if path is None:
        return
    p = Path(path)
    if directory and p.exists():
        if not p.is_dir():
            raise UsageError(f"{what}: {path} exists and is not a directory")
        if not os.access(p, os.W_OK):
            raise UsageError(f"{what}: cannot write into {path} (permission denied)")
        return
    if not directory and p.is_dir():
        raise UsageError(f"{what}: {path} is a directory")
    if not directory and p.exists():
        if not os.access(p, os.W_OK):
            raise UsageError(f"{what}: cannot write {path} (permission denied)")
        return
    parent = p.parent
    while not parent.exists() and directory and parent != parent.parent:
        parent = parent.parent  # the report directory is created with its missing parents
    if not parent.is_dir():
        raise UsageError(f"{what}: cannot write {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{what}: cannot write {path}: directory {parent} is not writable")


def seed_type(text: str) -> int:
    """An argparse type: a seed, an int in [0, 2**32 - 1] (numpy's and Optuna's range)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"a seed is an int in [0, 2**32 - 1], got {value}")
    return value


def kernel_cycles_type(text: str) -> tuple[str, int]:
    """An argparse type: ``NAME=CYCLES``, a kernel's name and its measured cycles per call (an int >= 0)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=CYCLES (a kernel's name and its cycles per call), got {text!r}")
    try:
        cycles = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name.strip()}: cycles must be a whole number, got {value!r}") from None
    if cycles < 0:
        raise argparse.ArgumentTypeError(f"{name.strip()}: cycles must be >= 0, got {cycles}")
    return name.strip(), cycles


def positive_int(text: str) -> int:
    """An argparse type: an int of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, got {value}")
    return value
