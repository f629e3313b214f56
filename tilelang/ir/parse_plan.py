"""Building a Plan from its parse tree (the ``plan`` item of the IR text, docs/ir.md "Plans").

A plan block follows the design it plans and names it. Every reference is
checked against that design (cores, links and fifos exist; each fifo's ends
are the agents the design gives it, in order; buffers belong to a fifo and an
index below its depth) and every tile against the device's array; then the
plan verifier (``plan_verify.py``) checks that its decisions are legal on the
device (placement, channels, memory, routes), as for a plan from JSON, and a
violation is a ParseError at the plan's name.
"""

from __future__ import annotations

from lark import Token, Tree

from tilelang.errors import PlanError
from tilelang.ir.design import Design
from tilelang.ir.parser import (
    ParseContext,
    as_int,
    as_number,
    as_string,
    attributes,
    error,
    integer,
    register_item,
    required,
    subtrees,
)
from tilelang.ir.plan import BufferPlacement, FifoEnd, FifoPlan, Plan, Route, SolveInfo
from tilelang.ir.plan_verify import verify_plan
from tilelang.ir.verify import HOST, fifo_ends

Coord = tuple[int, int]


class _PlanScope:
    """The planned design, for checking names, agents and tiles."""

    def __init__(self, design: Design) -> None:
        self.design = design
        self.cores = {c.name for c in design.cores}
        self.links = {ln.name for ln in design.links}
        self.fifos = {f.name: f for f in design.fifos}
        self.ends = fifo_ends(design)

    def tile(self, node: Tree) -> Coord:
        col, row = (integer(t) for t in node.children)
        dev = self.design.device
        if not (0 <= col < dev.cols and 0 <= row < dev.rows):
            raise error(node, f"tile ({col}, {row}) is outside {dev.name}'s {dev.cols}x{dev.rows} array")
        return col, row

    def fifo(self, tok: Token) -> str:
        if tok[1:] not in self.fifos:
            raise error(tok, f"undefined fifo {tok}")
        return tok[1:]

    def agent(self, node: Tree) -> str:
        if node.data == "host_agent":
            return HOST
        kind = "core" if node.data == "core_agent" else "link"
        tok = node.children[0]
        if tok[1:] not in (self.cores if kind == "core" else self.links):
            raise error(tok, f"undefined {kind} {tok}")
        return f"{kind}:{tok[1:]}"


def _unique(seen: dict, key: str, node: Token | Tree, what: str) -> None:
    if key in seen:
        raise error(node, f"{what} is given twice")


def _placed(node: Tree, scope: _PlanScope, cores: dict[str, Coord], links: dict[str, Coord]) -> None:
    kind_node, sym, coord = node.children
    kind = str(kind_node.children[0])
    names, into = (scope.cores, cores) if kind == "core" else (scope.links, links)
    if sym[1:] not in names:
        raise error(sym, f"undefined {kind} {sym}")
    _unique(into, sym[1:], sym, f"the tile of {kind} {sym}")
    into[sym[1:]] = scope.tile(coord)


def _fifo_end(node: Tree, scope: _PlanScope) -> FifoEnd:
    agent_node, coord, *channel = node.children
    return FifoEnd(scope.agent(agent_node), scope.tile(coord), integer(channel[0]) if channel else None)


def _fifo_plan(node: Tree, scope: _PlanScope) -> FifoPlan:
    sym = node.children[0]
    name = scope.fifo(sym)
    shared = subtrees(node, "shared_at")
    producer, *consumers = (_fifo_end(e, scope) for e in subtrees(node, "fifo_end"))
    want = scope.ends[name]
    got = [producer.agent, *(c.agent for c in consumers)]
    if got != [*want.producers[:1], *want.consumers]:
        raise error(
            sym,
            f"fifo {sym} runs from {', '.join(want.producers)} to {', '.join(want.consumers)} in the design; "
            f"the plan gives ends {', '.join(got)}",
        )
    return FifoPlan(name, producer, tuple(consumers), scope.tile(shared[0].children[0]) if shared else None)


def _buffer(node: Tree, scope: _PlanScope) -> tuple[str, BufferPlacement]:
    sym, *rest = node.children
    coord, attrs_node = rest[-2:]
    fifo, index = "", 0
    if len(rest) == 4:
        fifo = scope.fifo(rest[0])
        index = integer(rest[1])
        depth = scope.fifos[fifo].depth
        if not 0 <= index < depth:
            raise error(rest[1], f"buffer {sym}: fifo @{fifo} has {depth} buffers, no index {index}")
    keys = ("bank", "offset", "size")
    attrs = attributes(attrs_node, keys)
    bank, offset, size = (as_int(required(attrs, k, node, f"buffer {sym}")) for k in keys)
    if offset < 0 or size <= 0 or bank < 0:
        raise error(attrs_node, f"buffer {sym}: offset and bank must be >= 0 and size > 0")
    return sym[1:], BufferPlacement(scope.tile(coord), bank, offset, size, fifo, index)


def _route(node: Tree, scope: _PlanScope) -> tuple[str, Route]:
    sym, source, dests, *hops = node.children
    name = scope.fifo(sym)
    links = tuple((scope.tile(a), scope.tile(b)) for a, b in (h.children for h in hops))
    return name, Route(scope.tile(source), tuple(scope.tile(c) for c in dests.children), links)


def _solve(node: Tree) -> tuple[str, SolveInfo]:
    name, attrs_node = node.children
    attrs = attributes(attrs_node, ("method", "status", "objective", "gap", "message"))
    method = as_string(required(attrs, "method", node, f"solve {name}"))
    status = as_string(required(attrs, "status", node, f"solve {name}"))
    objective = as_number(attrs["objective"]) if "objective" in attrs else None
    gap = as_number(attrs["gap"]) if "gap" in attrs else None
    message = as_string(attrs["message"]) if "message" in attrs else ""
    return str(name), SolveInfo(method, status, 0.0, objective, gap, message)


_WHAT = {"fifo_plan": "the ends of fifo @{}", "buffer": "buffer @{}", "route": "the route of @{}", "solve": "solve {}"}


def _build_plan(node: Tree, ctx: ParseContext) -> Plan:
    sym = node.children[0]
    design = ctx.design
    if design is None or any(isinstance(x, Plan) for x in ctx.items):
        raise error(node, "a plan follows the design it plans, and a text holds at most one plan")
    if sym[1:] != design.name:
        raise error(sym, f"plan {sym} follows design @{design.name}; a plan names the design it plans")
    scope = _PlanScope(design)
    cores: dict[str, Coord] = {}
    links: dict[str, Coord] = {}
    fifos: dict[str, FifoPlan] = {}
    buffers: dict[str, BufferPlacement] = {}
    routes: dict[str, Route] = {}
    solves: dict[str, SolveInfo] = {}
    for item in node.children[1:]:
        if item.data == "placed":
            _placed(item, scope, cores, links)
            continue
        key: str
        value: object
        if item.data == "fifo_plan":
            value = _fifo_plan(item, scope)
            key, into = value.name, fifos
        elif item.data == "buffer":
            (key, value), into = _buffer(item, scope), buffers
        elif item.data == "route":
            (key, value), into = _route(item, scope), routes
        else:
            (key, value), into = _solve(item), solves
        _unique(into, key, item, _WHAT[item.data].format(key))
        into[key] = value
    _complete(sym, scope, cores, links, fifos)
    plan = Plan(design, cores, links, fifos, buffers, routes, solves)
    try:
        verify_plan(plan)
    except PlanError as e:
        raise error(sym, f"plan {sym}: {e}") from None
    return plan


def _complete(sym: Token, scope: _PlanScope, cores: dict, links: dict, fifos: dict) -> None:
    """Every core and link placed and every fifo's ends given, or a ParseError at the plan's name."""
    d = scope.design
    missing = [f"core @{c.name}" for c in d.cores if c.name not in cores]
    missing += [f"link @{ln.name}" for ln in d.links if ln.name not in links]
    missing += [f"fifo @{f.name}" for f in d.fifos if f.name not in fifos]
    if missing:
        raise error(sym, f"plan {sym} does not place {', '.join(missing)}")


register_item("plan", _build_plan)
