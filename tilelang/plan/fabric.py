"""The stream-switch graph of a device and shortest trees over it.

Nodes are tiles, edges the directed neighbour links with their channel
capacity (``Device.link_capacity``: the master ports of one switch toward the
other, AIE_FACTS "Stream switch"). A circuit-switched flow owns one channel on
every link of its route; a broadcast is one tree whose links each carry one
channel. Edges are numbered so routers can keep costs in flat lists.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from tilelang.devices import Device
from tilelang.errors import PlanError

Coord = tuple[int, int]
LinkKey = tuple[Coord, Coord]

_DIRECTION = {(0, 1): "north", (0, -1): "south", (1, 0): "east", (-1, 0): "west"}


def direction(a: Coord, b: Coord) -> str:
    """Compass direction of the link a -> b."""
    return _DIRECTION[(b[0] - a[0], b[1] - a[1])]


def describe(link: LinkKey) -> str:
    """``(2,3)->(2,4) north``."""
    a, b = link
    return f"({a[0]},{a[1]})->({b[0]},{b[1]}) {direction(a, b)}"


@dataclass(frozen=True, eq=False)
class Fabric:
    """A device's links, numbered, with capacities and adjacency.

    Attributes:
        device: the device.
        links: every directed link with capacity, sorted; edge i is links[i].
        cap: channels of edge i.
        index: link -> edge number.
        out: tile -> ((edge, neighbour), ...) leaving it.
    """

    device: Device
    links: tuple[LinkKey, ...]
    cap: tuple[int, ...]
    index: dict[LinkKey, int]
    out: dict[Coord, tuple[tuple[int, Coord], ...]]

    def check_tile(self, t: object, what: str) -> Coord:
        """``t`` as a tile of this device.

        Raises:
            PlanError: not a (col, row) pair on the array.
        """
        ok = isinstance(t, tuple | list) and len(t) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in t)
        if not ok or not (0 <= t[0] < self.device.cols and 0 <= t[1] < self.device.rows):  # type: ignore[index]
            raise PlanError(
                f"{what}: {t!r} is not a tile of {self.device.name} ({self.device.cols} columns x {self.device.rows} rows)"
            )
        return (int(t[0]), int(t[1]))  # type: ignore[index]


@lru_cache(maxsize=32)
def fabric(device: Device) -> Fabric:
    """The :class:`Fabric` of ``device`` (cached; devices are immutable)."""
    links = tuple(device.links())
    cap = tuple(device.link_capacity(a, b) for a, b in links)
    index = {link: i for i, link in enumerate(links)}
    out: dict[Coord, list[tuple[int, Coord]]] = {t: [] for t in device.tiles()}
    for i, (a, b) in enumerate(links):
        out[a].append((i, b))
    return Fabric(device, links, cap, index, {t: tuple(v) for t, v in out.items()})


def manhattan(a: Coord, b: Coord) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def hops(device: Device, a: Coord, b: Coord) -> int:
    """Links on a shortest route from ``a`` to ``b`` over the switch graph.

    The Manhattan distance wherever a row has east/west links; more where it has
    none: memtile rows have no east/west ports (AIE_FACTS "Stream switch": "no
    East/West" at memtiles), so two memtiles of one row in different columns are
    ``|dc| + 2`` apart (out to a neighbouring row and back).

    Raises:
        PlanError: ``b`` cannot be reached from ``a``.
    """
    d = _distances(device, a).get(b)
    if d is None:
        raise PlanError(f"{device.name}: no route from ({a[0]},{a[1]}) to ({b[0]},{b[1]})")
    return d


@lru_cache(maxsize=4096)
def _distances(device: Device, a: Coord) -> dict[Coord, int]:
    """Breadth-first hop counts from ``a`` to every reachable tile."""
    fab = fabric(device)
    dist = {a: 0}
    frontier = [a]
    while frontier:
        nxt = []
        for t in frontier:
            for _, n in fab.out[t]:
                if n not in dist:
                    dist[n] = dist[t] + 1
                    nxt.append(n)
        frontier = nxt
    return dist


def shortest_path(
    fab: Fabric,
    sources: Sequence[Coord],
    dest: Coord,
    cost: Sequence[float],
    allowed: Sequence[bool] | None = None,
    box: tuple[int, int, int, int] | None = None,
) -> list[int] | None:
    """A* from any of ``sources`` to ``dest``: the edges of a cheapest path.

    Edge costs must be at least 1 (the Manhattan distance is then an admissible
    heuristic). Ties break on (cost, heuristic, tile), so results are deterministic.

    Args:
        fab: the fabric.
        sources: start tiles (all at cost 0, e.g. a partial tree).
        dest: the tile to reach.
        cost: cost of each edge.
        allowed: edges that may be used (None: all).
        box: (col_lo, col_hi, row_lo, row_hi) the path must stay in (None: anywhere).

    Returns:
        Edge numbers from a source to ``dest`` in order, [] if dest is a source, None if unreachable.
    """
    if dest in sources:
        return []
    dist: dict[Coord, float] = {}
    back: dict[Coord, tuple[int, Coord]] = {}
    heap: list[tuple[float, int, Coord]] = []
    for s in sorted(set(sources)):
        dist[s] = 0.0
        heapq.heappush(heap, (manhattan(s, dest), 0, s))
    done: set[Coord] = set()
    while heap:
        _, _, t = heapq.heappop(heap)
        if t in done:
            continue
        if t == dest:
            return _unwind(back, dest, set(sources))
        done.add(t)
        g = dist[t]
        for e, n in fab.out[t]:
            if allowed is not None and not allowed[e]:
                continue
            if box is not None and not (box[0] <= n[0] <= box[1] and box[2] <= n[1] <= box[3]):
                continue
            ng = g + cost[e]
            if ng < dist.get(n, float("inf")) - 1e-12:
                dist[n] = ng
                back[n] = (e, t)
                heapq.heappush(heap, (ng + manhattan(n, dest), -int(ng * 1000), n))
    return None


def _unwind(back: dict[Coord, tuple[int, Coord]], dest: Coord, sources: set[Coord]) -> list[int]:
    path, t = [], dest
    while t not in sources:
        e, t = back[t]
        path.append(e)
    return path[::-1]


def steiner_tree(
    fab: Fabric,
    source: Coord,
    dests: Sequence[Coord],
    cost: Sequence[float],
    allowed: Sequence[bool] | None = None,
    box: tuple[int, int, int, int] | None = None,
) -> list[int] | None:
    """A tree from ``source`` reaching every dest: nearest dest first, each joined to the tree so far.

    Edges already in the tree cost nothing more (a broadcast shares them).

    Returns:
        The tree's edge numbers (sorted), or None if some dest is unreachable.
    """
    tree_nodes = [source]
    edges: set[int] = set()
    order = sorted(set(dests), key=lambda d: (manhattan(source, d), d))
    for d in order:
        if d in tree_nodes:
            continue
        path = shortest_path(fab, tree_nodes, d, cost, allowed, box)
        if path is None:
            return None
        for e in path:
            edges.add(e)
            nxt = fab.links[e][1]
            if nxt not in tree_nodes:
                tree_nodes.append(nxt)
    return sorted(edges)


def tree_reaches(fab: Fabric, source: Coord, dests: Sequence[Coord], edges: Sequence[int]) -> bool:
    """Whether ``edges`` connect ``source`` to every dest."""
    adj: dict[Coord, list[Coord]] = {}
    for e in edges:
        a, b = fab.links[e]
        adj.setdefault(a, []).append(b)
    seen, todo = {source}, [source]
    while todo:
        t = todo.pop()
        for n in adj.get(t, []):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return all(d in seen for d in dests)


def prune_tree(fab: Fabric, source: Coord, dests: Sequence[Coord], edges: Sequence[int]) -> list[int]:
    """Drop edges not on a path from ``source`` to a dest (and any cycle), keeping a tree.

    A BFS from the source over ``edges`` gives each reached tile one parent;
    the tree is the union of parent chains of the dests.
    """
    adj: dict[Coord, list[tuple[int, Coord]]] = {}
    for e in sorted(edges):
        a, b = fab.links[e]
        adj.setdefault(a, []).append((e, b))
    parent: dict[Coord, int] = {}
    seen, queue = {source}, [source]
    for t in queue:
        for e, n in adj.get(t, []):
            if n not in seen:
                seen.add(n)
                parent[n] = e
                queue.append(n)
    keep: set[int] = set()
    for d in dests:
        t = d
        while t != source and t in parent:
            e = parent[t]
            if e in keep:
                break
            keep.add(e)
            t = fab.links[e][0]
    return sorted(keep)
