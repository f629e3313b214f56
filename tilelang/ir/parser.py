"""Parse the IR text form (docs/ir.md) back into kernels, designs and plans.

lark parses the text with ``grammar.lark`` (LALR, positions kept); the builders
here turn each top-level item into IR objects, resolve ``%value`` and ``@name``
references, and turn every failure into a :class:`ParseError` carrying the line
and column of the offending item. IR constructors do the type checking: a
kernel op is rebuilt with its declared type, which ``KOp`` checks.

New top-level items are added by extending ``_item`` in the grammar and
registering a builder with :func:`register_item` (as ``parse_design`` and
``parse_plan`` do).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from tilelang.errors import DesignError, KernelError, ParseError
from tilelang.ir.design import (
    Design,
)
from tilelang.ir.dtypes import DTYPES, DType
from tilelang.ir.kernel import AnyKernel, ExternKernel, Kernel, KOp, OpKind, Param
from tilelang.ir.ops import KIND_BY_NAME
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.types import TensorType, TileType

Node = Tree | Token


@functools.cache
def grammar() -> Lark:
    """The compiled IR grammar (built once)."""
    text = Path(__file__).with_name("grammar.lark").read_text()
    return Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=False)


# -- errors -------------------------------------------------------------------------


def position(node: Node) -> tuple[int | None, int | None]:
    """Line and column (1-based) where a token or tree starts."""
    if isinstance(node, Token):
        return node.line, node.column
    if getattr(node.meta, "empty", True):
        return None, None
    return node.meta.line, node.meta.column


def error(node: Node, message: str) -> ParseError:
    """A ParseError located at ``node``."""
    return ParseError(message, *position(node))


@contextmanager
def located(node: Node) -> Iterator[None]:
    """Re-raise errors of IR constructors as ParseErrors at ``node``."""
    try:
        yield
    except (KernelError, DesignError) as e:
        raise error(node, str(e)) from e


_READABLE = {
    "SYMBOL": "@name",
    "VALUE": "%value",
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "TILE_TYPE": "tile<...>",
    "TENSOR_TYPE": "tensor<...>",
    "$END": "end of text",
}


def _expected(names: set[str]) -> str:
    out = set()
    for n in names:
        if n in _READABLE:
            out.add(_READABLE[n])
            continue
        try:
            pat = grammar().get_terminal(n).pattern
        except KeyError:
            continue
        out.add(repr(pat.value) if pat.type == "str" else n)
    return ", ".join(sorted(out))


def _syntax_error(e: UnexpectedInput, text: str) -> ParseError:
    line, column = e.line, e.column
    at_end = isinstance(e, UnexpectedToken) and e.token.type == "$END"
    if at_end or line is None or line < 1:  # lark places the end of text at the last token
        line = text.count("\n") + 1
        column = len(text) - text.rfind("\n")
    if isinstance(e, UnexpectedCharacters):
        return ParseError(f"unexpected character {e.char!r}", line, column)
    expected = set(getattr(e, "expected", ()) or ())
    if isinstance(e, UnexpectedToken) and e.interactive_parser is not None:
        # LALR merges lookaheads of similar states; the parser state itself knows exactly.
        expected = set(e.interactive_parser.accepts())
    what = "end of text" if at_end or not isinstance(e, UnexpectedToken) else repr(str(e.token))
    return ParseError(f"unexpected {what}; expected {_expected(expected)}", line, column)


# -- the entry point ------------------------------------------------------------------


@dataclass
class ParseContext:
    """What item builders share.

    Attributes:
        externs: extern kernels given by the caller, by name.
        kernels: kernels and extern kernels defined in the text, in text order.
        design: the design of the text, once built.
        items: the other items built so far (designs, ...), in text order.
    """

    externs: dict[str, ExternKernel]
    kernels: dict[str, AnyKernel] = field(default_factory=dict)
    design: Design | None = None
    items: list[object] = field(default_factory=list)


ItemBuilder = Callable[[Tree, ParseContext], object]
_BUILDERS: dict[str, ItemBuilder] = {}
# Definitions are built before other items, so a design may call a kernel defined after it.
_DEFINITIONS = ("kernel", "extern")


def register_item(rule: str, fn: ItemBuilder) -> None:
    """Build the top-level grammar item ``rule`` with ``fn(tree, context)``.

    Args:
        rule: the grammar rule of the item (an alternative of ``_item``).
        fn: returns the built object; it is appended to ``context.items``.
    """
    _BUILDERS[rule] = fn


def parse_ir(text: str, externs: dict[str, ExternKernel] | None = None) -> object:
    """Parse IR text into the objects it was printed from.

    Args:
        text: IR text (docs/ir.md).
        externs: extern kernels by name; each replaces the extern declaration
            of the same name, whose signature must match.

    Returns:
        The last non-kernel item (a Plan, or a Design) if there is one; else
        the kernel if the text defines exactly one; else a tuple of the kernels.

    Raises:
        ParseError: malformed text, with the line and column of the problem.
        DesignError: a well-formed design that the design verifier rejects.
    """
    try:
        tree = grammar().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None
    ctx = ParseContext(dict(externs or {}))
    for node in tree.children:
        if node.data in _DEFINITIONS:
            kernel = _BUILDERS[node.data](node, ctx)
            assert isinstance(kernel, Kernel | ExternKernel)
            if kernel.name in ctx.kernels:
                raise error(node.children[0], f"duplicate kernel name @{kernel.name}")
            ctx.kernels[kernel.name] = kernel
    for node in tree.children:
        if node.data not in _DEFINITIONS:
            ctx.items.append(_BUILDERS[node.data](node, ctx))
    if ctx.items:
        return ctx.items[-1]
    kernels = tuple(ctx.kernels.values())
    return kernels[0] if len(kernels) == 1 else kernels


# -- attribute values -----------------------------------------------------------------


def subtrees(node: Tree, rule: str) -> list[Tree]:
    """The direct children of ``node`` that are ``rule`` trees."""
    return [c for c in node.children if isinstance(c, Tree) and c.data == rule]


def attributes(node: Tree | None, allowed: tuple[str, ...] | None = None) -> dict[str, Tree]:
    """The value trees of an ``attrs`` node by name, checking names against ``allowed``."""
    out: dict[str, Tree] = {}
    for attr in [] if node is None else node.children:
        key_tok, value = attr.children
        key = str(key_tok)
        if key in out:
            raise error(key_tok, f"duplicate attribute {key}")
        if allowed is not None and key not in allowed:
            raise error(key_tok, f"unknown attribute {key}; expected {', '.join(allowed)}")
        out[key] = value
    return out


def required(attrs: dict[str, Tree], key: str, node: Node, what: str) -> Tree:
    """``attrs[key]``, or a ParseError at ``node`` saying it is missing."""
    if key not in attrs:
        raise error(node, f"{what}: missing attribute {key}")
    return attrs[key]


def number(tok: Token) -> int | float:
    """An int if the token is written as one, else a float (``inf``/``nan`` included)."""
    s = str(tok)
    return int(s) if re.fullmatch(r"-?\d+", s) else float(s)


def integer(tok: Token) -> int:
    """An integer token's value."""
    v = number(tok)
    if not isinstance(v, int):
        raise error(tok, f"expected an integer, got {tok}")
    return v


def dtype(tok: Token) -> DType:
    """The dtype named by ``tok``."""
    if str(tok) not in DTYPES:
        raise error(tok, f"unknown dtype {tok}; expected one of {', '.join(DTYPES)}")
    return DTYPES[str(tok)]


def _form(v: Tree, form: str, what: str) -> Token:
    if v.data != form:
        raise error(v, f"expected {what}")
    return v.children[0]


def as_int(v: Tree) -> int:
    return integer(_form(v, "number", "an integer"))


def as_number(v: Tree) -> int | float:
    return number(_form(v, "number", "a number"))


def as_dtype(v: Tree) -> DType:
    return dtype(_form(v, "word", "a dtype"))


def as_string(v: Tree) -> str:
    return json.loads(_form(v, "string", "a string"))


def as_ints(v: Tree) -> tuple[int, ...]:
    if v.data != "list":
        raise error(v, "expected a list of integers")
    return tuple(as_int(x) for x in v.children)


def as_index(v: Tree) -> tuple[tuple[int, int, int] | int, ...]:
    """``[start:stop:step, i, ...]``: slices as triples, single positions as ints."""
    if v.data != "list":
        raise error(v, "expected an index [start:stop:step, ...]")
    out: list[tuple[int, int, int] | int] = []
    for x in v.children:
        if x.data == "range":
            start, stop, step = (integer(t) for t in x.children)
            out.append((start, stop, step))
        else:
            out.append(as_int(x))
    return tuple(out)


def as_pattern(v: Tree) -> AccessPattern:
    """``pattern<offset = o, sizes = [...], strides = [...], repeat = r>``."""
    if v.data != "pattern":
        raise error(v, "expected pattern<...>")
    keys = ("offset", "sizes", "strides", "repeat")
    fields = attributes(Tree("attrs", v.children), keys)
    offset, sizes, strides, repeat = (required(fields, k, v, "pattern") for k in keys)
    with located(v):
        return AccessPattern(as_int(offset), as_ints(sizes), as_ints(strides), as_int(repeat))


def as_value(v: Tree) -> object:
    """Any attribute value, by its written form (for attributes without a known kind)."""
    if v.data == "number":
        return as_number(v)
    if v.data == "string":
        return as_string(v)
    if v.data == "word":
        return as_dtype(v)
    if v.data == "pattern":
        return as_pattern(v)
    if v.data == "range":
        return tuple(integer(t) for t in v.children)
    if v.data == "list":
        return tuple(as_value(x) for x in v.children)
    raise error(v, f"{v.children[0]} is not a value here")


def parse_type(node: Tree) -> TileType | TensorType | DType:
    """A ``type`` node: ``tile<...>``, ``tensor<...>`` or a scalar dtype."""
    tok = node.children[0]
    if tok.type == "NAME":
        return dtype(tok)
    m = re.fullmatch(r"(\w+)<((?:\d+x)+)(\w+)>", str(tok))
    assert m is not None, "the grammar only lets well-formed types through"
    shape = tuple(int(s) for s in m[2].rstrip("x").split("x"))
    if 0 in shape:
        raise error(tok, f"{tok}: sizes must be positive")
    dt = dtype(Token("NAME", m[3], line=tok.line, column=tok.column))
    return TileType(shape, dt) if m[1] == "tile" else TensorType(shape, dt)


# -- kernels --------------------------------------------------------------------------


def parse_params(node: Tree) -> list[Param]:
    """The ``%name: type`` parameters of a kernel or extern kernel."""
    out: list[Param] = []
    for p in subtrees(node, "param"):
        tok, ty = p.children
        if any(q.name == tok[1:] for q in out):
            raise error(tok, f"duplicate parameter {tok}")
        t = parse_type(ty)
        if isinstance(t, TensorType):
            raise error(ty, f"kernel parameter {tok} must be a tile or a scalar, not {t}")
        with located(p):
            out.append(Param(tok[1:], t))
    return out


def _build_kernel(node: Tree, ctx: ParseContext) -> Kernel:
    params = parse_params(node)
    env: dict[str, object] = {f"%{p.name}": p for p in params}
    body = [_build_op(op, env) for op in subtrees(node, "kop")]
    with located(node):
        return Kernel(node.children[0][1:], tuple(params), tuple(body))


# How each kernel attribute is read back, so e.g. axes (1,) and index ((0, 4, 1),) stay apart.
_OP_ATTRS: dict[str, Callable[[Tree], object]] = {
    "index": as_index,
    "axes": as_ints,
    "dtype": as_dtype,
    "acc": as_dtype,
    "value": as_number,
}


def _build_op(node: Tree, env: dict[str, object]) -> KOp:
    result: Token | None = None
    kind_tok: Token | None = None
    attrs: Tree | None = None
    type_node: Tree | None = None
    operands: list[Token] = []
    for c in node.children:
        if isinstance(c, Tree):
            if c.data == "result":
                result = c.children[0]
            elif c.data == "attrs":
                attrs = c
            else:
                type_node = c
        elif c.type == "NAME":
            kind_tok = c
        else:
            operands.append(c)
    assert kind_tok is not None
    kind = KIND_BY_NAME.get(str(kind_tok))
    if kind is None:
        raise error(kind_tok, f"unknown op kind {kind_tok}; expected one of {', '.join(KIND_BY_NAME)}")
    args = []
    for tok in operands:
        if tok not in env:
            raise error(tok, f"undefined value {tok}")
        args.append(env[tok])
    values = {k: _OP_ATTRS.get(k, as_value)(v) for k, v in attributes(attrs).items()}
    declared = _result_type(type_node) if type_node is not None else None
    if kind is OpKind.STORE and (result is not None or type_node is not None):
        raise error(node, "store has no result")
    if kind is not OpKind.STORE and (result is None or declared is None):
        raise error(node, f"{kind.value} gives a value: write %N = {kind.value}(...) : type")
    with located(node):
        op = KOp(kind, tuple(args), tuple(sorted(values.items())), declared)
    if result is not None:
        if result in env:
            raise error(result, f"{result} is defined twice")
        env[str(result)] = op
    return op


def _result_type(node: Tree) -> TileType:
    t = parse_type(node)
    if isinstance(t, DType):
        return TileType((), t)
    if isinstance(t, TensorType):
        raise error(node, f"a kernel value is a tile or a scalar, not {t}")
    return t


def _build_extern(node: Tree, ctx: ParseContext) -> ExternKernel:
    sym = node.children[0]
    params = parse_params(node)
    attrs = attributes(subtrees(node, "attrs")[0], ("cycles", "object_file", "writes"))
    cycles: int | str | None = None
    if "cycles" in attrs:
        v = attrs["cycles"]
        cycles = "dynamic" if v.data == "word" and v.children[0] == "dynamic" else as_int(v)
    object_file = as_string(attrs["object_file"]) if "object_file" in attrs else None
    writes: list[str] = []
    if "writes" in attrs:
        v = attrs["writes"]
        if v.data != "list" or any(x.data != "ref" for x in v.children):
            raise error(v, "writes is a list of parameters [%a, ...]")
        for ref in (x.children[0] for x in v.children):
            if not any(p.name == ref[1:] for p in params):
                raise error(ref, f"undefined value {ref}")
            writes.append(ref[1:])
    with located(node):
        k = ExternKernel(sym[1:], tuple(params), frozenset(writes), cycles, None, object_file)  # type: ignore[arg-type]
    given = ctx.externs.get(k.name)
    if given is None:
        return k
    if _signature(given) != _signature(k):
        raise error(
            sym, f"extern @{k.name} does not match the given extern kernel: {_signature(k)} vs {_signature(given)}"
        )
    return given


def _signature(k: ExternKernel) -> str:
    params = ", ".join(f"%{p.name}: {p.type}" for p in k.params)
    writes = ", ".join(f"%{p.name}" for p in k.params if p.name in k.writes)
    return f"@{k.name}({params}) writes [{writes}]"


# -- designs --------------------------------------------------------------------------


register_item("kernel", _build_kernel)
register_item("extern", _build_extern)

# The design and plan items register themselves; imported last because they build on this module.
from tilelang.ir import parse_design, parse_plan  # noqa: E402, F401
