"""The IR text form (docs/ir.md): printing kernels, extern kernels, designs and plans.

Printing is a table of functions keyed by class, so other modules (the plan
printer) add their own with :func:`register_printer` without this module
importing them. Every printed text parses back to an equal object and prints
again to the same text (``tilelang.ir.parser``).
"""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Callable

from tilelang.ir.design import (
    Acquire,
    AffineArg,
    BufArg,
    Call,
    CascadeArg,
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
from tilelang.ir.plan import BufferPlacement, FifoEnd, FifoPlan, Plan, Route, SolveInfo
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
    raise TypeError(f"cannot print {type(obj).__name__} as IR; expected a Kernel, ExternKernel, Design or Plan")


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
    lines += [f"{INDENT}cascade @{c.name} : {c.elem}" for c in d.cascades]
    for c in d.cores:
        pin = format_attrs([("tile", c.tile)]) if c.tile is not None else ""
        lines.append(f"{INDENT}core @{c.name}{pin} {{")
        lines += [f"{INDENT * 2}buffer @{b.name} : {b.elem}" for b in c.buffers]
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
    if isinstance(a, BufArg):
        return f"@{a.buffer}"
    if isinstance(a, CascadeArg):
        return f"@{a.cascade}"
    if isinstance(a, ConstArg):
        return f"{format_number(a.value)} : {a.dtype.name}"
    if isinstance(a, LoopVarArg):
        return f"%i{a.depth} : {a.dtype.name}"
    if isinstance(a, AffineArg):
        terms = [f"%i{d}" if c == 1 else f"{c} * %i{d}" for d, c in a.terms]
        if a.offset or not terms:
            terms.append(str(a.offset))
        return f"({' + '.join(terms)}) : {a.dtype.name}"
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
    attrs: list[tuple[str, object]] = [("pattern", m.pattern)]
    if m.plio:
        attrs.append(("plio", m.plio))
    return f"dma @{m.name}({m.src} -> {dsts}){format_attrs(attrs)}"


# -- plans --------------------------------------------------------------------------

_IDENT = re.compile(r"[^\W\d]\w*")


def _symbol(name: str, what: str) -> str:
    if not _IDENT.fullmatch(name):
        raise ValueError(f"{what} {name!r} has no IR text form: names are identifiers")
    return f"@{name}"


def format_tile(t: tuple[int, int]) -> str:
    """A tile as ``(col, row)``."""
    return f"({int(t[0])}, {int(t[1])})"


def print_plan(p: Plan) -> str:
    """The design's text (kernels first), a blank line, then ``plan @<design> { ... }``.

    Inside the plan block, one line per decision: placements (cores, then links,
    in design order), fifo ends (design order), buffers (by tile, then address:
    each tile's memory map), routes (design fifo order) and solves (as recorded;
    wall seconds are left out so the text is deterministic).
    """
    d = p.design
    order = {f.name: i for i, f in enumerate(d.fifos)}
    lines = [f"plan {_symbol(d.name, 'design')} {{"]
    lines += [f"{INDENT}core {_symbol(n, 'core')} at {format_tile(t)}" for n, t in _in_order(p.placement, d.cores)]
    lines += [f"{INDENT}link {_symbol(n, 'link')} at {format_tile(t)}" for n, t in _in_order(p.link_tiles, d.links)]
    lines += [INDENT + _format_fifo_plan(f) for _, f in _in_order(p.fifos, d.fifos)]
    buffers = sorted(p.buffers.items(), key=lambda nb: (nb[1].tile, nb[1].offset, nb[0]))
    lines += [INDENT + _format_buffer(n, b) for n, b in buffers]
    routes = sorted(p.routes.items(), key=lambda nr: (order.get(nr[0], len(order)), nr[0]))
    lines += [INDENT + _format_route(n, r) for n, r in routes]
    lines += [INDENT + _format_solve(n, s) for n, s in p.solves.items()]
    lines.append("}")
    return print_design(d) + "\n" + "\n".join(lines) + "\n"


def _in_order(entries: dict, declared: tuple) -> list[tuple[str, object]]:
    """``entries`` in the design's declaration order, names the design lacks last (sorted)."""
    rank = {x.name: i for i, x in enumerate(declared)}
    return sorted(entries.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _format_end(e: FifoEnd) -> str:
    kind, _, name = e.agent.partition(":")
    who = "host" if not name else f"{kind} {_symbol(name, kind)}"
    channel = "" if e.channel is None else f" ch {e.channel}"
    return f"{who} at {format_tile(e.tile)}{channel}"


def _format_fifo_plan(f: FifoPlan) -> str:
    shared = "" if f.shared_tile is None else f" shared at {format_tile(f.shared_tile)}"
    consumers = ", ".join(_format_end(c) for c in f.consumers)
    return f"fifo {_symbol(f.name, 'fifo')}{shared} : {_format_end(f.producer)} -> {consumers}"


def _format_buffer(name: str, b: BufferPlacement) -> str:
    if b.fifo:
        of = f" : {_symbol(b.fifo, 'fifo')}[{b.index}]"
    elif b.index:
        raise ValueError(f"buffer {name!r} has index {b.index} but no fifo; it has no IR text form")
    else:
        of = ""
    attrs = format_attrs([("bank", b.bank), ("offset", b.offset), ("size", b.size)])
    return f"buffer {_symbol(name, 'buffer')}{of} at {format_tile(b.tile)}{attrs}"


def _format_route(name: str, r: Route) -> str:
    dests = ", ".join(format_tile(t) for t in r.dests)
    links = ", ".join(f"{format_tile(a)} -> {format_tile(b)}" for a, b in r.links)
    return f"route {_symbol(name, 'route')} from {format_tile(r.source)} to [{dests}] links [{links}]"


def _format_solve(name: str, s: SolveInfo) -> str:
    if not _IDENT.fullmatch(name):
        raise ValueError(f"solve {name!r} has no IR text form: names are identifiers")
    attrs: list[tuple[str, object]] = [("method", s.method), ("status", s.status)]
    attrs += [(k, v) for k, v in (("objective", s.objective), ("gap", s.gap)) if v is not None]
    if s.message:
        attrs.append(("message", s.message))
    return f"solve {name}{format_attrs(attrs)}"


register_printer(Kernel, print_kernel)  # type: ignore[arg-type]
register_printer(ExternKernel, print_extern)  # type: ignore[arg-type]
register_printer(Design, print_design)  # type: ignore[arg-type]
register_printer(Plan, print_plan)  # type: ignore[arg-type]
