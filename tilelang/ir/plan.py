"""The Plan: a design plus every decision the hardware needs.

The planner produces it; the simulator and the MLIR emitter read it and decide
nothing themselves. A plan is immutable and serialisable (``to_json`` /
``Plan.from_json``, the design inside carried as IR text), and has an IR text
form of its own: ``tl.ir.print(plan)`` / ``tl.ir.parse`` (docs/ir.md "Plans";
printer.py and parse_plan.py).

Vocabulary:
- an *agent* is one end of a fifo: ``host``, ``core:<name>`` or ``link:<name>``;
- an :class:`FifoEnd` says on which tile an agent's end of a fifo lives and
  which DMA channel it uses (None when the fifo is in shared memory);
- a fifo is *shared* when its producer and its single consumer are cores that
  can both reach one memory: its buffers live there and nothing is streamed;
  otherwise it is *streamed*: a route carries it from the producer's MM2S
  channel to each consumer's S2MM channel (a tree for a broadcast);
- buffers are named ``<fifo>_<i>`` (shared) or ``<fifo>_<agent>_<i>`` (the
  producer's or a consumer's copy on its own tile); the host has none (DDR).
  A link's memtile holds the buffers of the fifo that is whole there (the
  source of a split or forward, the destination of a join) and its parts are
  moved from or to offsets inside them.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from tilelang.errors import ParseError
from tilelang.ir.design import Design

Coord = tuple[int, int]
LinkKey = tuple[Coord, Coord]


def byte_groups(spans: dict[str, tuple[int, int]]) -> list[list[str]]:
    """Names grouped where their byte ranges ``[offset, offset + size)`` overlap, transitively.

    Each group's ranges cover one contiguous range that no other group's cross (buffers a plan
    packs into shared bytes form one group). Groups and their members are in (offset, name) order.

    Args:
        spans: name -> (offset, size).
    """
    groups: list[list[str]] = []
    end = -1
    for name in sorted(spans, key=lambda n: (spans[n][0], n)):
        lo, size = spans[name]
        if groups and lo < end:
            groups[-1].append(name)
            end = max(end, lo + size)
        else:
            groups.append([name])
            end = lo + size
    return groups


def agent_name(agent: str) -> str:
    """The bare name of an agent (``core:worker`` -> ``worker``)."""
    return agent.split(":", 1)[1] if ":" in agent else agent


@dataclass(frozen=True)
class FifoEnd:
    """One end of a fifo: the agent, its tile, and its DMA channel index (None: shared memory)."""

    agent: str
    tile: Coord
    channel: int | None = None


@dataclass(frozen=True)
class FifoPlan:
    """Where a fifo's ends live and how it is carried."""

    name: str
    producer: FifoEnd
    consumers: tuple[FifoEnd, ...]
    shared_tile: Coord | None = None

    @property
    def shared(self) -> bool:
        return self.shared_tile is not None


@dataclass(frozen=True)
class BufferPlacement:
    """One buffer: the tile whose memory holds it, its bank, byte offset and size."""

    tile: Coord
    bank: int
    offset: int
    size: int
    fifo: str = ""
    index: int = 0

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class Route:
    """A stream flow: neighbour links from ``source`` reaching every tile in ``dests`` (a tree)."""

    source: Coord
    dests: tuple[Coord, ...]
    links: tuple[LinkKey, ...]

    def reaches(self) -> set[Coord]:
        """Tiles reachable from the source over the route's links."""
        seen, frontier = {self.source}, [self.source]
        out: dict[Coord, list[Coord]] = {}
        for a, b in self.links:
            out.setdefault(a, []).append(b)
        while frontier:
            t = frontier.pop()
            for n in out.get(t, []):
                if n not in seen:
                    seen.add(n)
                    frontier.append(n)
        return seen

    def hops_to(self, dest: Coord) -> int:
        """Links on the path from the source to ``dest`` (0 if not reached)."""
        parent: dict[Coord, Coord] = {b: a for a, b in self.links}
        n, t = 0, dest
        while t != self.source and t in parent and n <= len(self.links):
            t, n = parent[t], n + 1
        return n if t == self.source else 0


@dataclass(frozen=True)
class SolveInfo:
    """How one planning decision was made.

    ``status`` is "optimal", "feasible", "time-limited" (a wall-clock safety net
    fired: the decision may differ on another machine), "error" (a solver
    failed) or what a fallback was for; ``message`` says what happened when the
    decision is not simply "optimal" or "feasible" (the solver's error, the
    fallback taken).
    """

    method: str
    status: str
    seconds: float
    objective: float | None = None
    gap: float | None = None
    message: str = ""


@dataclass(frozen=True, eq=False)
class Plan:
    """A design with every decision made.

    Attributes:
        design: the planned design.
        placement: compute tile of every core.
        link_tiles: memtile of every link.
        fifos: ends and carriage of every fifo.
        buffers: every buffer's placement.
        routes: stream flows by name (the fifo they carry).
        solves: how each decision was made (``seconds`` is 0.0 in plans from
            the planner, so the JSON is deterministic; see ``timings``).
        timings: wall seconds of each planning step (not serialised).
    """

    design: Design
    placement: dict[str, Coord]
    link_tiles: dict[str, Coord]
    fifos: dict[str, FifoPlan]
    buffers: dict[str, BufferPlacement]
    routes: dict[str, Route]
    solves: dict[str, SolveInfo] = field(default_factory=dict)
    #: Wall seconds per planning step; not serialised, so JSON stays byte-identical.
    timings: dict[str, float] = field(default_factory=dict, compare=False, repr=False)

    @property
    def device(self):  # noqa: ANN201 - a Device
        return self.design.device

    def tile_of(self, agent: str) -> Coord | None:
        """The tile an agent runs on (None for the host, which is spread over shims)."""
        kind, _, name = agent.partition(":")
        if kind == "core":
            return self.placement[name]
        if kind == "link":
            return self.link_tiles[name]
        return None

    def buffers_of(self, fifo: str, agent: str | None = None) -> list[BufferPlacement]:
        """The buffers of ``fifo`` (on ``agent``'s side, or the shared ones), in index order."""
        prefix = f"{fifo}_" if agent is None else f"{fifo}_{agent_name(agent)}_"
        out = []
        for name, b in self.buffers.items():
            if b.fifo != fifo or not name.startswith(prefix):
                continue
            rest = name[len(prefix) :]
            if rest.isdigit():
                out.append(b)
        return sorted(out, key=lambda b: b.index)

    def link_usage(self) -> dict[LinkKey, int]:
        """Channels in use on every directed neighbour link any route uses."""
        use: Counter = Counter()
        for r in self.routes.values():
            for link in r.links:
                use[link] += 1
        return dict(sorted(use.items()))

    def report(self) -> str:
        """A readable summary of every decision."""
        from tilelang.ir.plan_report import render

        return render(self)

    def __str__(self) -> str:
        return self.report()

    # -- serialisation ------------------------------------------------------------------

    def to_json(self) -> str:
        """The plan as JSON (the design carried as IR text); deterministic."""
        from tilelang.ir import print as print_ir

        def end(e: FifoEnd) -> dict:
            return {"agent": e.agent, "tile": list(e.tile), "channel": e.channel}

        doc = {
            "design": print_ir(self.design),
            "placement": {k: list(v) for k, v in sorted(self.placement.items())},
            "link_tiles": {k: list(v) for k, v in sorted(self.link_tiles.items())},
            "fifos": {
                k: {
                    "producer": end(f.producer),
                    "consumers": [end(c) for c in f.consumers],
                    "shared_tile": list(f.shared_tile) if f.shared_tile else None,
                }
                for k, f in sorted(self.fifos.items())
            },
            "buffers": {
                k: {"tile": list(b.tile), "bank": b.bank, "offset": b.offset, "size": b.size, "fifo": b.fifo, "index": b.index}
                for k, b in sorted(self.buffers.items())
            },
            "routes": {
                k: {"source": list(r.source), "dests": [list(d) for d in r.dests], "links": [[list(a), list(b)] for a, b in r.links]}
                for k, r in sorted(self.routes.items())
            },
            "solves": {
                k: {"method": s.method, "status": s.status, "seconds": s.seconds, "objective": s.objective, "gap": s.gap}
                | ({"message": s.message} if s.message else {})
                for k, s in sorted(self.solves.items())
            },
        }
        return json.dumps(doc, indent=1, sort_keys=True)

    @staticmethod
    def from_json(text: str | os.PathLike, externs: dict | None = None) -> Plan:
        """Rebuild a plan from :meth:`to_json` output.

        Args:
            text: the JSON text, or the path of a file holding it.
            externs: extern kernels by name (see ``tl.ir.parse``).

        Raises:
            ParseError: text that is not JSON, or JSON that is not a plan, naming what is missing.
            PlanError: a plan whose decisions are not legal on its device (``plan_verify.py``).
        """
        from tilelang.ir import parse

        doc = _json_doc(text)
        design = parse(doc["design"], externs=externs)

        def tile(x: list) -> Coord:
            if not isinstance(x, list) or len(x) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                                                 for v in x):
                raise ValueError(f"a tile is [col, row] of ints, got {x!r}")
            return (x[0], x[1])

        def end(e: dict) -> FifoEnd:
            return FifoEnd(e["agent"], tile(e["tile"]), e["channel"])

        def fifo(k: str, f: dict) -> FifoPlan:
            shared = tile(f["shared_tile"]) if f["shared_tile"] else None
            return FifoPlan(k, end(f["producer"]), tuple(end(c) for c in f["consumers"]), shared)

        def buffer(b: dict) -> BufferPlacement:
            return BufferPlacement(tile(b["tile"]), b["bank"], b["offset"], b["size"], b["fifo"], b["index"])

        def route(r: dict) -> Route:
            return Route(tile(r["source"]), tuple(tile(d) for d in r["dests"]), tuple((tile(a), tile(b)) for a, b in r["links"]))

        plan = Plan(
            design=design,  # type: ignore[arg-type]
            placement=_section(doc, "placement", lambda k, v: tile(v)),
            link_tiles=_section(doc, "link_tiles", lambda k, v: tile(v)),
            fifos=_section(doc, "fifos", fifo),
            buffers=_section(doc, "buffers", lambda k, b: buffer(b)),
            routes=_section(doc, "routes", lambda k, r: route(r)),
            solves=_section(doc, "solves", lambda k, v: SolveInfo(**v)),
        )
        from tilelang.ir.plan_verify import verify_plan

        verify_plan(plan)
        return plan


#: The keys of a plan's JSON document (what :meth:`Plan.to_json` writes).
PLAN_KEYS = ("design", "placement", "link_tiles", "fifos", "buffers", "routes", "solves")


def _json_doc(text: object) -> dict:
    """The JSON object of a plan, from its text or a file path; ParseError when it is not one."""
    if isinstance(text, os.PathLike):
        try:
            with open(text) as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise ParseError(f"cannot read plan file {os.fspath(text)}: {e}") from None
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise ParseError(f"Plan.from_json takes JSON text or a path, got {type(text).__name__}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParseError(f"plan JSON: {e.msg}", e.lineno, e.colno) from None
    if not isinstance(doc, dict):
        raise ParseError(f"plan JSON must be an object with keys {list(PLAN_KEYS)}, got {type(doc).__name__}")
    missing = [k for k in PLAN_KEYS if k not in doc]
    if missing:
        raise ParseError(f"plan JSON lacks {missing}; a plan is written by Plan.to_json() or 'tilelang plan -o'")
    if not isinstance(doc["design"], str):
        raise ParseError("plan JSON: 'design' must be the design's IR text")
    return doc


def _section(doc: dict, key: str, make: Callable[[str, object], object]) -> dict:
    """``{name: make(name, value)}`` for one section of a plan's JSON, naming the entry that is malformed."""
    items = doc[key]
    if not isinstance(items, dict):
        raise ParseError(f"plan JSON: {key!r} must be an object, got {type(items).__name__}")
    out = {}
    for k, v in items.items():
        try:
            out[k] = make(k, v)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            what = f"missing key {e}" if isinstance(e, KeyError) else str(e)
            raise ParseError(f"plan JSON: {key}[{k!r}] is malformed ({what})") from None
    return out
