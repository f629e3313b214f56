"""The tilelang IR: types, kernels, designs, their verifier and their text form.

``tl.ir.print(obj)`` prints a kernel, a design or a plan; ``tl.ir.parse(text)``
reads it back exactly.
"""

from __future__ import annotations

import os

from tilelang.ir.dtypes import DTYPES, DType, bf16, f32, i1, i8, i16, i32
from tilelang.ir.kernel import ExternKernel, Kernel, KOp, OpKind, Param
from tilelang.ir.pattern import AccessPattern, Tiles
from tilelang.ir.types import Tensor, TensorType, Tile, TileType


def print(obj: object) -> str:  # noqa: A001 - the API name is tl.ir.print
    """The IR text of a kernel, extern kernel, design or plan."""
    from tilelang.ir.printer import print_ir

    return print_ir(obj)


def parse(text: str | os.PathLike, externs: dict | None = None) -> object:
    """Parse IR text back into the object it was printed from.

    Args:
        text: printed IR, or the path (``pathlib.Path``) of a file holding it.
        externs: extern kernels by name, to re-attach their numpy references
            and cycle functions (which have no text form).

    Raises:
        ParseError: malformed text, with line and column; an unreadable file; a value that is neither.
    """
    from tilelang.errors import ParseError
    from tilelang.ir.parser import parse_ir

    if isinstance(text, os.PathLike):
        try:
            with open(text) as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise ParseError(f"cannot read IR file {os.fspath(text)}: {e}") from None
    if not isinstance(text, str):
        raise ParseError(f"tl.ir.parse takes IR text (a str) or a pathlib.Path, got {type(text).__name__}")
    return parse_ir(text, externs=externs)


def verify(design: object) -> None:
    """Check a whole design; raises DesignError naming what is wrong."""
    from tilelang.ir.verify import verify_design

    verify_design(design)  # type: ignore[arg-type]


__all__ = [
    "DTYPES",
    "AccessPattern",
    "DType",
    "ExternKernel",
    "KOp",
    "Kernel",
    "OpKind",
    "Param",
    "Tensor",
    "TensorType",
    "Tile",
    "TileType",
    "Tiles",
    "bf16",
    "f32",
    "i1",
    "i8",
    "i16",
    "i32",
    "parse",
    "print",
    "verify",
]
