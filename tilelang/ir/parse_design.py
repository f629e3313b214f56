"""Building a Design from its parse tree (the ``design`` item of the IR text)."""

from __future__ import annotations

import re

from lark import Token, Tree

from tilelang.ir.design import (
    Acquire,
    AffineArg,
    Arg,
    BufArg,
    Call,
    Cascade,
    CascadeArg,
    ConstArg,
    Core,
    Design,
    Dma,
    ElemArg,
    Endpoint,
    EndpointKind,
    Fifo,
    Link,
    LinkKind,
    LocalBuffer,
    Loop,
    LoopVarArg,
    Port,
    Release,
    Stmt,
    TensorDecl,
)
from tilelang.ir.kernel import AnyKernel
from tilelang.ir.parser import (
    ParseContext,
    as_int,
    as_ints,
    as_pattern,
    as_string,
    attributes,
    dtype,
    error,
    integer,
    located,
    number,
    parse_type,
    register_item,
    required,
    subtrees,
)
from tilelang.ir.types import TensorType, TileType
from tilelang.ir.verify import verify_design


class _DesignScope:
    """Names a design declares, for resolving ``@fifo``, ``%tensor`` and ``@kernel``."""

    def __init__(self, kernels: dict[str, AnyKernel]):
        self.kernels = kernels
        self.names: dict[str, str] = {name: "kernel" for name in kernels}
        self.local: set[str] = set()  # the buffers of the core being read

    def declare(self, tok: Token, what: str) -> str:
        name = tok[1:]
        if name in self.names:
            raise error(tok, f"duplicate name {tok}: already used by a {self.names[name]}")
        self.names[name] = what
        return name

    def ref(self, tok: Token, what: str) -> str:
        sigil = "%" if what == "tensor" else "@"
        if tok[0] != sigil or self.names.get(tok[1:]) != what:
            raise error(tok, f"undefined {what} {tok}")
        return tok[1:]

    def stmts(self, nodes: list[Tree], depth: int) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for s in nodes:
            if s.data == "call":
                out.append(self.call(s, depth))
            elif s.data == "loop":
                var, start, stop, step, *body = s.children
                if var != f"%i{depth}":
                    raise error(var, f"the loop variable at depth {depth} is named %i{depth}, not {var}")
                inner = self.stmts(body, depth + 1)
                with located(s):
                    out.append(Loop(integer(start), integer(stop), integer(step), inner))
            else:
                fifo, port, n = s.children
                if port not in ("consume", "produce"):
                    raise error(port, f"expected consume or produce, got {port}")
                cls = Acquire if s.data == "acquire" else Release
                with located(s):
                    out.append(cls(self.ref(fifo, "fifo"), Port(str(port)), integer(n)))
        return tuple(out)

    def call(self, node: Tree, depth: int) -> Call:
        sym, *args = node.children
        kernel = self.kernels.get(sym[1:])
        if kernel is None:
            raise error(sym, f"unknown kernel {sym}")
        if len(args) != len(kernel.params):
            raise error(node, f"call of {sym} passes {len(args)} arguments, the kernel takes {len(kernel.params)}")
        out: list[Arg] = []
        for a in args:
            if a.data == "affine_arg":
                out.append(self.affine(a, depth))
                continue
            if a.data == "buf_arg":
                tok = a.children[0]
                if tok[1:] in self.local:
                    out.append(BufArg(tok[1:]))
                elif self.names.get(tok[1:]) == "cascade":
                    out.append(CascadeArg(tok[1:]))
                else:
                    raise error(tok, f"undefined buffer {tok} (declare it in this core: buffer {tok} : tile<...>)")
                continue
            first, second = a.children
            if a.data == "elem_arg":
                with located(a):
                    out.append(ElemArg(self.ref(first, "fifo"), integer(second)))
            elif a.data == "const_arg":
                out.append(ConstArg(number(first), dtype(second)))
            else:
                out.append(LoopVarArg(self.loop_var(first, depth), dtype(second)))
        return Call(sym[1:], tuple(out))

    @staticmethod
    def loop_var(tok: Token, depth: int) -> int:
        m = re.fullmatch(r"%i(0|[1-9]\d*)", tok)
        if m is None or int(m[1]) >= depth:
            raise error(tok, f"undefined loop variable {tok}")
        return int(m[1])

    def affine(self, node: Tree, depth: int) -> AffineArg:
        """``(c * %i<d> + %i<d> + n ...) : dtype``: coefficients per loop variable, summed, and the constant."""
        *terms, name = node.children
        coeff: dict[int, int] = {}
        offset = 0
        for t in terms:
            parts = t.children
            if len(parts) == 2:
                d, c = self.loop_var(parts[1], depth), integer(parts[0])
            elif parts[0].type == "VALUE":
                d, c = self.loop_var(parts[0], depth), 1
            else:
                offset += integer(parts[0])
                continue
            coeff[d] = coeff.get(d, 0) + c
        with located(node):
            return AffineArg(tuple(sorted((d, c) for d, c in coeff.items() if c)), offset, dtype(name))


def _build_design(node: Tree, ctx: ParseContext) -> Design:
    if ctx.design is not None:
        raise error(node, "a text holds at most one design")
    sym = node.children[0]
    scope = _DesignScope(ctx.kernels)
    params = []
    for p in subtrees(node, "param"):
        tok, ty = p.children
        t = parse_type(ty)
        if not isinstance(t, TensorType):
            raise error(ty, f"design parameter {tok} must be a host tensor tensor<...>, not {t}")
        params.append(TensorDecl(scope.declare(tok, "tensor"), t))
    attrs = attributes(subtrees(node, "attrs")[0], ("device",))
    dev_node = required(attrs, "device", node, f"design {sym}")
    with located(dev_node):
        from tilelang.devices import device

        dev = device(as_string(dev_node))
    fifos = [_fifo(f, scope) for f in subtrees(node, "fifo")]
    cascades = [_cascade(f, scope) for f in subtrees(node, "cascade")]
    cores = [_core(c, scope) for c in subtrees(node, "core")]
    links = [_link(x, scope) for x in subtrees(node, "link")]
    dmas = [_dma(m, scope) for m in subtrees(node, "dma")]
    with located(node):
        design = Design(
            sym[1:],
            dev,
            tuple(params),
            tuple(ctx.kernels.values()),
            tuple(fifos),
            tuple(cores),
            tuple(links),
            tuple(dmas),
            cascades=tuple(cascades),
        )
    ctx.design = design
    # DesignError from the verifier propagates unchanged: it is about the design, not the text.
    verify_design(design)
    return design


def _fifo(node: Tree, scope: _DesignScope) -> Fifo:
    sym, ty, attrs_node = node.children
    elem = parse_type(ty)
    if not isinstance(elem, TileType):
        raise error(ty, f"fifo {sym}: the element type must be tile<...>, not {elem}")
    depth = required(attributes(attrs_node, ("depth",)), "depth", node, f"fifo {sym}")
    with located(node):
        return Fifo(scope.declare(sym, "fifo"), elem, as_int(depth))


def _cascade(node: Tree, scope: _DesignScope) -> Cascade:
    sym, ty = node.children
    elem = parse_type(ty)
    if not isinstance(elem, TileType):
        raise error(ty, f"cascade {sym}: the element type must be tile<...>, not {elem}")
    with located(node):
        return Cascade(scope.declare(sym, "cascade"), elem)


def _core(node: Tree, scope: _DesignScope) -> Core:
    sym = node.children[0]
    attrs = attributes(next(iter(subtrees(node, "attrs")), None), ("tile",))
    tile = as_ints(attrs["tile"]) if "tile" in attrs else None
    if tile is not None and len(tile) != 2:
        raise error(attrs["tile"], f"core {sym}: tile is [col, row]")
    name = scope.declare(sym, "core")
    buffers = []
    for b in subtrees(node, "local"):
        bsym, ty = b.children
        elem = parse_type(ty)
        if not isinstance(elem, TileType):
            raise error(ty, f"buffer {bsym}: the type must be tile<...>, not {elem}")
        with located(b):
            buffers.append(LocalBuffer(scope.declare(bsym, "buffer"), elem))
    scope.local = {b.name for b in buffers}
    stmts = [c for c in node.children[1:] if isinstance(c, Tree) and c.data not in ("attrs", "local")]
    body = scope.stmts(stmts, 0)
    with located(node):
        return Core(name, body, tile, tuple(buffers))  # type: ignore[arg-type]


def _link(node: Tree, scope: _DesignScope) -> Link:
    kind_node, sym, srcs, dsts, *rest = node.children
    attrs = attributes(rest[0] if rest else None, ("offsets", "pattern"))
    offsets = as_ints(attrs["offsets"]) if "offsets" in attrs else ()
    pattern = as_pattern(attrs["pattern"]) if "pattern" in attrs else None
    name = scope.declare(sym, "link")
    src_names = tuple(scope.ref(t, "fifo") for t in srcs.children)
    dst_names = tuple(scope.ref(t, "fifo") for t in dsts.children)
    with located(node):
        return Link(name, LinkKind(str(kind_node.children[0])), src_names, dst_names, offsets, pattern)


def _dma(node: Tree, scope: _DesignScope) -> Dma:
    sym, srcs, dsts, attrs_node = node.children
    if len(srcs.children) != 1:
        raise error(srcs.children[1], f"dma {sym} has one source")
    attrs = attributes(attrs_node, ("pattern", "plio"))
    pattern = as_pattern(required(attrs, "pattern", node, f"dma {sym}"))
    plio = as_int(attrs["plio"]) if "plio" in attrs else 0
    if "plio" in attrs and plio <= 0:
        raise error(attrs["plio"], f"dma {sym}: plio is a PLIO width in bits; a move without PLIO has no plio attribute")
    name = scope.declare(sym, "dma")
    src = _endpoint(srcs.children[0], scope)
    with located(node):
        return Dma(name, src, tuple(_endpoint(t, scope) for t in dsts.children), pattern, plio=plio)


def _endpoint(tok: Token, scope: _DesignScope) -> Endpoint:
    if tok.type == "VALUE":
        return Endpoint(EndpointKind.TENSOR, scope.ref(tok, "tensor"))
    return Endpoint(EndpointKind.FIFO, scope.ref(tok, "fifo"))



register_item("design", _build_design)
