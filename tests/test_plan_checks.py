"""An independent legality check of a Plan, used by the planner's tests (no tests of its own here).

It re-derives every rule from the design and the device, not from the
planner's modules: tile kinds, pins, one core per tile, memory within
capacity and without overlap, DMA channel indices within the tile's
channels and unique per direction, shared fifos only between cores that
reach the memory, and every route a tree from its source reaching every
destination within link capacity.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from tilelang.ir.plan import Plan
from tilelang.ir.verify import fifo_ends


def check_routes_legal(device, routes) -> None:
    """Every route a tree (one parent per tile, reached from the source) within link capacity."""
    use: Counter = Counter()
    for r in routes:
        parents: dict = {}
        for a, b in r.links:
            assert device.link_capacity(a, b) > 0, f"route uses {a}->{b}, not a link"
            assert b not in parents, f"tile {b} entered twice: not a tree"
            assert b != r.source, "a route re-enters its source"
            parents[b] = a
            use[(a, b)] += 1
        reached = r.reaches()
        for d in r.dests:
            assert d in reached, f"destination {d} not reached from {r.source}"
        # no dangling links: every link leads to a destination
        needed = set()
        for d in r.dests:
            t = d
            while t != r.source:
                needed.add((parents[t], t))
                t = parents[t]
        assert needed == set(r.links), "a route has links that reach no destination"
    for (a, b), n in use.items():
        assert n <= device.link_capacity(a, b), f"link {a}->{b} carries {n}, has {device.link_capacity(a, b)}"


def _check_placement(p: Plan) -> None:
    dev, d = p.device, p.design
    assert set(p.placement) == {c.name for c in d.cores}
    assert len(set(p.placement.values())) == len(p.placement), "two cores on one tile"
    for c in d.cores:
        assert dev.tile_kind(p.placement[c.name]) == "compute"
        if c.tile is not None:
            assert p.placement[c.name] == c.tile, f"pin of {c.name} not honoured"
    assert set(p.link_tiles) == {ln.name for ln in d.links}
    for t in p.link_tiles.values():
        assert dev.tile_kind(t) == "mem"


def _check_fifos(p: Plan) -> None:
    dev = p.device
    ends = fifo_ends(p.design)
    channels: dict = defaultdict(list)
    for name, e in ends.items():
        f = p.fifos[name]
        assert f.producer.agent == e.producers[0]
        assert [c.agent for c in f.consumers] == e.consumers
        for end in (f.producer, *f.consumers):
            expect = p.tile_of(end.agent)
            if expect is not None:
                assert end.tile == expect
            else:
                assert dev.is_noc_shim(end.tile), "a host end off a NoC shim"
        if f.shared:
            assert len(f.consumers) == 1 and f.producer.agent.startswith("core:")
            for end in (f.producer, f.consumers[0]):
                assert f.shared_tile in dev.shared_memory_tiles(end.tile)
                assert end.channel is None
            assert name not in p.routes
            continue
        direction = {f.producer.agent: "mm2s"}
        for end in (f.producer, *f.consumers):
            way = direction.get(end.agent, "s2mm")
            assert end.channel is not None and 0 <= end.channel < dev.dma_channels(end.tile, way)
            channels[(end.tile, way)].append(end.channel)
        r = p.routes[name]
        assert r.source == f.producer.tile
        assert set(r.dests) == {c.tile for c in f.consumers}
    for key, used in channels.items():
        assert len(used) == len(set(used)), f"DMA channel used twice on {key}: {used}"


def _check_buffers(p: Plan) -> None:
    dev = p.device
    by_tile: dict = defaultdict(list)
    core_tiles = set(p.placement.values())
    for name, b in p.buffers.items():
        assert b.size > 0 and b.offset >= 0
        assert b.end <= dev.memory_bytes(b.tile), f"{name} ends past the memory of {b.tile}"
        assert b.bank == b.offset // (dev.memory_bytes(b.tile) // dev.memory_banks(b.tile))
        if b.tile in core_tiles:
            assert b.offset >= 1024, f"{name} overlaps the core stack"
        by_tile[b.tile].append((b.offset, b.end, name))
    for spans in by_tile.values():
        spans.sort()
        for (_, hi, n1), (lo, _, n2) in zip(spans, spans[1:], strict=False):
            assert hi <= lo, f"buffers {n1} and {n2} overlap"
    for name, f in p.fifos.items():
        fifo = p.design.fifo(name)
        if f.shared:
            bufs = p.buffers_of(name)
            assert len(bufs) == fifo.depth and all(b.tile == f.shared_tile for b in bufs)
            continue
        for end in (f.producer, *f.consumers):
            if end.agent.startswith("core:"):
                bufs = p.buffers_of(name, end.agent)
                assert len(bufs) == fifo.depth and all(b.tile == end.tile for b in bufs)
                assert all(b.size >= fifo.elem.nbytes for b in bufs)


def check_plan(p: Plan) -> None:
    """Assert that ``p`` is a complete, legal plan of its design."""
    _check_placement(p)
    _check_fifos(p)
    _check_buffers(p)
    check_routes_legal(p.device, p.routes.values())
