"""The IR text form (docs/ir.md): printing kernels, extern kernels and designs.

Printing is a table of functions keyed by class, so other modules (the plan
printer) add their own with :func:`register_printer` without this module
importing them. Every printed text parses back to an equal object and prints
again to the same text (``tilelang.ir.parser``).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Callable

from tilelang.ir.design import (
    Acquire,
    Call,
    ConstArg,
    Design,
    Dma,
    ElemArg,
    Link,
    LinkKind,
    Loop,
    LoopVarArg,
    Release,
    Stmt,
)
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import ExternKernel, Kernel, KOp, Param
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.types import TensorType, TileType

INDENT = "  "

Printer = Callable[[object], str]
_PRINTERS: dict[type, Printer] = {}


def register_printer(cls: type, fn: Printer) -> None:
    """Make :func:`print_ir` print instances of ``cls`` (and subclasses) with ``fn``.

    Args:
        cls: the class to print.
        fn: returns the text of one object, ending with a newline.
    """
    _PRINTERS[cls] = fn


def print_ir(obj: object) -> str:
    """The IR text of a kernel, extern kernel, design, sequence of kernels or registered object.

    Returns:
        The text, ending with exactly one newline (empty for an empty sequence).

    Raises:
        TypeError: for an object no printer is registered for.
    """
    if isinstance(obj, tuple | list):
        return "\n".join(print_ir(x) for x in obj)
    for cls in type(obj).__mro__:
        fn = _PRINTERS.get(cls)
        if fn is not None:
            return fn(obj).rstrip("\n") + "\n"
    raise TypeError(f"cannot print {type(obj).__name__} as IR; expected a Kernel, ExternKernel or Design")


# -- attribute values ---------------------------------------------------------------


def format_number(v: int | float) -> str:
    """An int as is; a float as Python's ``repr`` (``inf``, ``-inf`` and ``nan`` included)."""
    if isinstance(v, bool):
        raise TypeError("booleans have no IR text form")
    if isinstance(v, numbers.Integral):
        return str(int(v))
    return repr(float(v))


def format_value(v: object) -> str:
    """The text of one attribute value (see docs/ir.md, attribute values).

    Raises:
        TypeError: for a value with no text form.
    """
    if isinstance(v, DType):
        return v.name
    if isinstance(v, str):
        # JSON escapes: unambiguous, and json.loads reads them back exactly.
        return json.dumps(v)
    if isinstance(v, AccessPattern):
        return str(v)
    if isinstance(v, tuple | list):
        return "[" + ", ".join(_format_entry(x) for x in v) + "]"
    if isinstance(v, numbers.Real):
        return format_number(v)
    raise TypeError(f"attribute value {v!r} has no IR text form")


def _format_entry(x: object) -> str:
    # A (start, stop, step) triple is a slice of an index; the parser reads it back as one.
    if isinstance(x, tuple) and len(x) == 3 and all(isinstance(i, numbers.Integral) for i in x):
        return ":".join(str(int(i)) for i in x)
    return format_value(x)


def format_attrs(attrs: list[tuple[str, object]] | tuple[tuple[str, object], ...]) -> str:
    """`` {k = v, ...}`` with a leading space, or "" when there are none."""
    if not attrs:
        return ""
    return " {" + ", ".join(f"{k} = {format_value(v)}" for k, v in attrs) + "}"


def format_type(t: TileType | TensorType | DType) -> str:
    """``tile<...>``, ``tensor<...>`` or a scalar dtype name."""
    return t.name if isinstance(t, DType) else str(t)


def _format_params(params: tuple[Param, ...]) -> str:
    return ", ".join(f"%{p.name}: {format_type(p.type)}" for p in params)


# -- kernels ------------------------------------------------------------------------


def print_kernel(k: Kernel) -> str:
    """The text of a traced kernel; op results are numbered %0, %1, ... in body order."""
    names: dict[int, str] = {id(p): f"%{p.name}" for p in k.params}
    lines = [f"kernel @{k.name}({_format_params(k.params)}) {{"]
    count = 0
    for op in k.body:
        text = _format_op(op, names)
        if op.type is not None:
            names[id(op)] = f"%{count}"
            text = f"%{count} = {text} : {format_type(op.type)}"
            count += 1
        lines.append(INDENT + text)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _format_op(op: KOp, names: dict[int, str]) -> str:
    operands = ", ".join(names[id(x)] for x in op.operands)
    return f"{op.kind.value}({operands}){format_attrs(op.attrs)}"


def print_extern(k: ExternKernel) -> str:
    """``extern @name(params) {cycles = ..., object_file = ..., writes = [...]}``.

    A cycle function has no text form and prints as the word ``dynamic``.
    """
    parts = []
    if k.cycles is not None:
        parts.append(f"cycles = {k.cycles if isinstance(k.cycles, int) else 'dynamic'}")
    if k.object_file is not None:
        parts.append(f"object_file = {format_value(k.object_file)}")
    # Always present, so the attribute dict is never empty.
    parts.append("writes = [" + ", ".join(f"%{p.name}" for p in k.params if p.name in k.writes) + "]")
    return f"extern @{k.name}({_format_params(k.params)}) {{" + ", ".join(parts) + "}\n"


# -- designs ------------------------------------------------------------------------


def print_design(d: Design) -> str:
    """The kernels the design calls (each followed by a blank line), then the design."""
    kernels = "".join(print_ir(k) + "\n" for k in d.kernels)
    params = ", ".join(f"%{t.name}: {t.type}" for t in d.params)
    lines = [f"design @{d.name}({params}){format_attrs([('device', d.device.name)])} {{"]
    lines += [f"{INDENT}fifo @{f.name} : {f.elem}{format_attrs([('depth', f.depth)])}" for f in d.fifos]
    for c in d.cores:
        pin = format_attrs([("tile", c.tile)]) if c.tile is not None else ""
        lines.append(f"{INDENT}core @{c.name}{pin} {{")
        lines += _format_body(c.body, 2, 0)
        lines.append(INDENT + "}")
    lines += [INDENT + _format_link(link) for link in d.links]
    lines += [INDENT + _format_dma(m) for m in d.dmas]
    lines.append("}")
    return kernels + "\n".join(lines) + "\n"


def _format_body(body: tuple[Stmt, ...], level: int, depth: int) -> list[str]:
    pad = INDENT * level
    lines: list[str] = []
    for s in body:
        if isinstance(s, Acquire | Release):
            word = "acquire" if isinstance(s, Acquire) else "release"
            lines.append(f"{pad}{word} @{s.fifo} {s.port.value} {s.n}")
        elif isinstance(s, Call):
            args = ", ".join(_format_arg(a) for a in s.args)
            lines.append(f"{pad}call @{s.kernel}({args})")
        elif isinstance(s, Loop):
            lines.append(f"{pad}for %i{depth} = {s.start} to {s.stop} step {s.step} {{")
            lines += _format_body(s.body, level + 1, depth + 1)
            lines.append(pad + "}")
        else:
            raise TypeError(f"cannot print core statement {s!r}")
    return lines


def _format_arg(a: object) -> str:
    if isinstance(a, ElemArg):
        return f"@{a.fifo}[{a.index}]"
    if isinstance(a, ConstArg):
        return f"{format_number(a.value)} : {a.dtype.name}"
    if isinstance(a, LoopVarArg):
        return f"%i{a.depth} : {a.dtype.name}"
    raise TypeError(f"cannot print call argument {a!r}")


def _format_link(link: Link) -> str:
    srcs = ", ".join(f"@{n}" for n in link.srcs)
    dsts = ", ".join(f"@{n}" for n in link.dsts)
    attrs: list[tuple[str, object]] = []
    if link.kind is not LinkKind.FORWARD or link.offsets:
        attrs.append(("offsets", link.offsets))
    if link.pattern is not None:
        attrs.append(("pattern", link.pattern))
    return f"{link.kind.value} @{link.name}({srcs} -> {dsts}){format_attrs(attrs)}"


def _format_dma(m: Dma) -> str:
    dsts = ", ".join(str(e) for e in m.dsts)
    return f"dma @{m.name}({m.src} -> {dsts}){format_attrs([('pattern', m.pattern)])}"


register_printer(Kernel, print_kernel)  # type: ignore[arg-type]
register_printer(ExternKernel, print_extern)  # type: ignore[arg-type]
register_printer(Design, print_design)  # type: ignore[arg-type]
