"""The greedy placer: the fallback strategy and the baseline the placement ILP is compared against.

Cores are placed one at a time (pinned cores first, then in breadth-first
order over the fifo graph) on the free compute tile that minimises the bytes
they exchange with already placed partners times the distance, a pair that
can share a memory counting as distance 0 (IRON lowers such a fifo with no
DMA). Links then go onto the memtiles nearest their cores that have the DMA
channels, memory, BDs and locks they need (a small backtracking search, as
channel counts can pack exactly), and every host end of a fifo onto the
nearest NoC shim with a free DMA channel in its direction and BDs left.
Tile-resource limits steer the choices; whatever still does not fit is
reported by the resource checks afterwards.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from tilelang.devices import Device
from tilelang.errors import PlanError
from tilelang.ir.descriptors import end_bds, host_end_locks, pools_fit
from tilelang.ir.plan import agent_name
from tilelang.ir.verify import HOST
from tilelang.plan.carriage import (
    LINK_PORTS,
    MM2S,
    S2MM,
    Placement,
    common_memories,
    host_shims,
    link_needs,
    memtile_ports,
)
from tilelang.plan.cascades import place_chains
from tilelang.plan.fabric import fabric, hops, manhattan
from tilelang.plan.problem import Coord, FifoSpec, Problem
from tilelang.plan.route_cuts import BoundaryLoad

#: Cost added per DMA channel a tile would need beyond what it has.
OVERFLOW_PENALTY = 1e12


def host_distance(device: Device, t: Coord) -> int:
    """Hops from the nearest NoC shim to ``t``."""
    cols = device.noc_columns
    return t[1] + (min(abs(t[0] - c) for c in cols) if cols else 0)


def memtile_distance(device: Device, t: Coord) -> int:
    mems = device.tiles("mem")
    return min((manhattan(t, m) for m in mems), default=0)


def core_fifos(problem: Problem) -> dict[str, list[FifoSpec]]:
    """The fifos each core touches, in fifo order."""
    out: dict[str, list[FifoSpec]] = {c: [] for c in problem.cores}
    for f in problem.fifos:
        for a in f.agents:
            if a.startswith("core:") and f not in out[agent_name(a)]:
                out[agent_name(a)].append(f)
    return out


def order_cores(problem: Problem, touching: dict[str, list[FifoSpec]]) -> list[str]:
    """Pinned cores, then breadth-first over shared fifos, starting each component in design order."""
    pins = problem.pin_map
    seen: list[str] = [c for c in problem.cores if c in pins]
    queue = deque(seen)
    remaining = [c for c in problem.cores if c not in pins]
    while remaining or queue:
        if not queue:
            queue.append(remaining[0])
            seen.append(remaining[0])
        c = queue.popleft()
        remaining = [r for r in remaining if r != c]
        for f in touching[c]:
            for a in f.agents:
                n = agent_name(a)
                if a.startswith("core:") and n not in seen:
                    seen.append(n)
                    queue.append(n)
    return seen


def _dir(f: FifoSpec, core: str) -> str:
    return MM2S if f.producer == f"core:{core}" else S2MM


def _link_anchor(problem: Problem, link: str, placed: dict[str, Coord]) -> Coord | None:
    """The memtile a link will likely take: the one nearest the first placed core sending into it."""
    for fname in problem.link(link).srcs:
        a = problem.fifo(fname).producer
        if a.startswith("core:") and agent_name(a) in placed:
            u = placed[agent_name(a)]
            return min(problem.device.tiles("mem"), key=lambda m: (hops(problem.device, u, m), m))
    return None


def _core_cost(problem: Problem, core: str, t: Coord, fifos: list[FifoSpec], placed: dict[str, Coord],
               anchors: dict[str, Coord | None]) -> float:
    """Bytes x distance to placed partners; a link the core sends into counts as its anchor (the memtile
    nearest the first placed core sending into it: a join's cores gather in one column), any other link,
    or one without an anchor yet, as the nearest memtile."""
    dev = problem.device
    cost = 0.0
    streams = {MM2S: 0, S2MM: 0}
    for f in fifos:
        me = f"core:{core}"
        partners = [a for a in f.agents if a != me]
        if not f.shareable:
            streams[_dir(f, core)] += 1
        for a in partners:
            if a == HOST:
                cost += f.traffic * host_distance(dev, t)
            elif a.startswith("link:"):
                # a core sending into a link goes near the cores already sending into it (they enter its
                # memtile from above, through one column); what a link sends out may be a broadcast along a row
                anchor = anchors.get(agent_name(a)) if f.producer == me else None
                cost += f.traffic * (memtile_distance(dev, t) if anchor is None else hops(dev, t, anchor))
            elif agent_name(a) in placed:
                u = placed[agent_name(a)]
                if f.shareable and common_memories(dev, t, u):
                    continue
                cost += f.traffic * hops(problem.device, t, u)
                if f.shareable:
                    streams[_dir(f, core)] += 1
    for d, n in streams.items():
        cost += OVERFLOW_PENALTY * max(0, n - dev.dma_channels(t, d))
    return cost


def place_cores(problem: Problem) -> dict[str, Coord]:
    """Greedy core placement honouring pins.

    Raises:
        PlanError: more cores than compute tiles, or a cascade chain that fits nowhere.
    """
    dev = problem.device
    tiles = dev.tiles("compute")
    if len(problem.cores) > len(tiles):
        raise PlanError(f"{len(problem.cores)} cores but {dev.name} has {len(tiles)} compute tiles")
    touching = core_fifos(problem)
    placed: dict[str, Coord] = dict(problem.pins)
    placed.update(place_chains(problem, dict(problem.pins)))  # cascaded cores first: their tiles are constrained
    taken = set(placed.values())
    for core in order_cores(problem, touching):
        if core in placed:
            continue
        free = [t for t in tiles if t not in taken]
        anchors = {agent_name(c): _link_anchor(problem, agent_name(c), placed)
                   for f in touching[core] for c in f.consumers if c.startswith("link:")}
        best = min(free, key=lambda t: (_core_cost(problem, core, t, touching[core], placed, anchors), t))
        placed[core] = best
        taken.add(best)
    return {c: placed[c] for c in problem.cores}


# -- links and host ends ------------------------------------------------------------------------


def _partner_tiles(problem: Problem, f: FifoSpec, me: str, cores: dict[str, Coord], links: dict[str, Coord]) -> list[Coord]:
    out = []
    for a in f.agents:
        if a == me or a == HOST:
            continue
        kind, _, n = a.partition(":")
        where = cores.get(n) if kind == "core" else links.get(n)
        if where is not None:
            out.append(where)
    return out


#: Placements of single links the link search tries before settling for the least-overflow greedy fit.
LINK_SEARCH_BUDGET = 20_000
_LINK_KINDS = (S2MM, MM2S, "bytes", "bds", "locks", *LINK_PORTS)


def _memtile_capacity(dev: Device, m: Coord) -> dict[str, int]:
    """What a memtile offers links: DMA channels per direction, bytes, BDs (both pools) and locks."""
    return {S2MM: dev.dma_channels(m, S2MM), MM2S: dev.dma_channels(m, MM2S), "bytes": dev.memory_bytes(m),
            "bds": dev.buffer_descriptors(m), "locks": dev.locks(m), **memtile_ports(dev, m)}


def place_links(problem: Problem, cores: dict[str, Coord]) -> dict[str, Coord]:
    """Each link onto a memtile with the channels, memory, BDs and locks it needs, nearest its partners.

    Links are taken most demanding first; each tries the memtiles in order of
    distance to its placed partners, skipping the ones it would overfill, and
    a link with no memtile left backtracks to move an earlier one (a
    depth-first search, ``LINK_SEARCH_BUDGET`` placements at most: tight
    designs, such as 2 splits and 2 joins filling each memtile's 6 + 6
    channels exactly, need it). When the search finds no fit within its
    budget, a balanced fit is tried (each link where it leaves the most room);
    failing that, every link goes to its least-overfilled nearest memtile and
    the resource checks report what does not fit.

    Raises:
        PlanError: links on a device without memtiles.
    """
    dev = problem.device
    mems = dev.tiles("mem")
    if not problem.links:
        return {}
    if not mems:
        raise PlanError(f"{dev.name} has no memtiles; links {', '.join(problem.link_names)} need one")
    order = sorted(problem.links, key=lambda ln: -(len(ln.srcs) + len(ln.dsts)))
    needs = [link_needs(problem, ln.name) for ln in order]
    # each link's ends' BDs per direction, for the BD pools of a memtile (descriptors.pools_fit)
    end_bd = [{MM2S: [end_bds(problem.design, f, f"link:{ln.name}") for f in ln.dsts],
               S2MM: [end_bds(problem.design, f, f"link:{ln.name}") for f in ln.srcs]} for ln in order]
    have = {m: _memtile_capacity(dev, m) for m in mems}
    used = {m: dict.fromkeys(_LINK_KINDS, 0) for m in mems}
    links: dict[str, Coord] = {}
    budget = [LINK_SEARCH_BUDGET]

    def distance(k: int, m: Coord) -> float:
        ln = order[k]
        me = f"link:{ln.name}"
        c = 0.0
        for fname in ln.fifos:
            f = problem.fifo(fname)
            c += sum(f.traffic * hops(dev, m, p) for p in _partner_tiles(problem, f, me, cores, links))
            if HOST in f.agents:
                c += f.traffic * host_distance(dev, m)
        return c

    def over(m: Coord, need: dict[str, int]) -> int:
        return sum(int(used[m][x] + need[x] > have[m][x]) for x in _LINK_KINDS)

    def put(k: int, m: Coord, sign: int) -> None:
        for x in _LINK_KINDS:
            used[m][x] += sign * needs[k][x]
        if sign > 0:
            links[order[k].name] = m
        else:
            del links[order[k].name]

    def pooled(k: int, m: Coord) -> bool:
        """Link ``k`` beside the links on ``m`` leaves some channel numbering within its BD pools."""
        if used[m]["bds"] + needs[k]["bds"] <= dev.bd_pool(m, 0)[1]:
            return True  # (within one pool's size: any numbering fits)
        on = [j for j in range(len(order)) if links.get(order[j].name) == m] + [k]
        return pools_fit(dev, m, {d: [b for j in on for b in end_bd[j][d]] for d in (MM2S, S2MM)})

    def search(k: int) -> bool:
        if k == len(order):
            return True
        for m in sorted((m for m in mems if not over(m, needs[k]) and pooled(k, m)),
                        key=lambda m: (distance(k, m), m)):
            if budget[0] <= 0:
                return False
            budget[0] -= 1
            put(k, m, 1)
            if search(k + 1):
                return True
            put(k, m, -1)
        return False

    if search(0):
        return dict(links)
    # Balanced fit: each link where it leaves the most room (the least-filled resource, as a fraction),
    # nearest on ties. Exact packings the search runs out of budget on (16 splits and 16 joins filling
    # npu2's eight memtiles as 2 + 2 each) come out even this way.
    links.clear()
    used = {m: dict.fromkeys(_LINK_KINDS, 0) for m in mems}

    def room(k: int, m: Coord) -> float:
        return min((have[m][x] - used[m][x] - needs[k][x]) / max(have[m][x], 1) for x in _LINK_KINDS)

    for k in range(len(order)):
        fits = [m for m in mems if not over(m, needs[k])]
        if not fits:
            break
        put(k, min(fits, key=lambda m, k=k: (-room(k, m), distance(k, m), m)), 1)
    else:
        return dict(links)
    links.clear()
    used = {m: dict.fromkeys(_LINK_KINDS, 0) for m in mems}
    for k in range(len(order)):
        best = min(mems, key=lambda m, k=k: (over(m, needs[k]), distance(k, m), m))
        put(k, best, 1)
    return dict(links)


def placed_flows(problem: Problem, cores: dict[str, Coord], links: dict[str, Coord]) -> list:
    """(source, destinations) of every fifo without a host end that will take a route: all but a pair of cores
    sharing a memory (the carriage lowers those with no DMA)."""
    out = []
    for f in problem.fifos:
        if HOST in f.agents:
            continue
        tiles = [cores.get(agent_name(a)) if a.startswith("core:") else links.get(agent_name(a)) for a in f.agents]
        if any(t is None for t in tiles):
            continue
        src, dests = tiles[0], tuple(tiles[1:])
        if f.shareable and common_memories(problem.device, src, dests[0]):
            continue
        out.append((src, dests))
    return out


def host_flow(f: FifoSpec, s: Coord, tiles: dict[str, Coord]) -> tuple | None:
    """(source, destinations) of fifo ``f`` with its host end on shim ``s``, the other agents on ``tiles``
    (``core:<name>`` / ``link:<name>`` keys); None when one of them is not there."""
    ends = [s if a == HOST else tiles.get(a) for a in f.agents]
    if any(t is None for t in ends):
        return None
    return ends[0], tuple(ends[1:])


#: Passes re-placing every host end against all the others' boundary crossings, while some boundary is
#: overfull (then, in a second round, full) (work, not time, bounds them: deterministic).
HOST_PASSES = 8


def place_hosts(problem: Problem, cores: dict[str, Coord], links: dict[str, Coord]) -> dict[str, Coord]:
    """The shim of every fifo's host end: the nearest NoC shim (PL shim for a PLIO fifo) with a DMA (PLIO)
    channel in its direction, BDs and locks left, whose flow leaves room on every column and row boundary
    it crosses (column order on ties); when none has, the one overfilling the least.

    The boundaries: the cut bound the router checks first (``route_cuts.BoundaryLoad``, each boundary's
    channels from the device's link capacities), counted over the routed fifos between cores and links and
    the other host ends. A broadcast crosses each boundary between its source and its farthest destinations
    once, westward on the source's west side and eastward on its east side: many broadcasts fed from the
    middle of the span they share fill one direction of its boundaries, and a source elsewhere on the span
    (or past it) takes the other direction instead. The first pass places the ends in fifo order against
    the ones before; while a boundary is overfull, each end is taken out and placed again against all the
    others (at most ``HOST_PASSES`` passes), moving ends off the full directions. Then, while a boundary
    is full to its last channel (which leaves the router no choice of row there), the same passes place
    each end where the boundaries it crosses are least crowded (``BoundaryLoad.crowding``), spreading
    the crossings over both directions; designs with no full boundary are left as they are.
    """
    hosts = _HostEnds(problem, cores, links)
    for f in hosts.fifos:
        hosts.place(f)
    _repass(hosts, hosts.load.overfull, balance=False)
    _repass(hosts, hosts.load.full, balance=True)
    return dict(hosts.at)


def _repass(hosts: _HostEnds, until: Callable[[], bool], balance: bool) -> None:
    """Re-place every host end against all the others while ``until()`` holds, nothing moved, or
    ``HOST_PASSES`` passes."""
    for _ in range(HOST_PASSES):
        if not until():
            return
        moved = False
        for f in hosts.fifos:
            before = hosts.at[f.name]
            hosts.remove(f)
            hosts.place(f, balance)
            moved |= hosts.at[f.name] != before
        if not moved:
            return


class _HostEnds:
    """The host ends placed so far: each shim's channels, BDs and locks in use, and the boundary load."""

    def __init__(self, problem: Problem, cores: dict[str, Coord], links: dict[str, Coord]) -> None:
        self.p, self.dev = problem, problem.device
        self.used = {s: {S2MM: 0, MM2S: 0, "bds": 0, "locks": 0} for s in self.dev.tiles("shim")}
        self.load = BoundaryLoad(fabric(self.dev))
        for flow in placed_flows(problem, cores, links):
            self.load.add(flow)
        self.fifos = [f for f in problem.fifos if HOST in f.agents]
        self.near = {f.name: _partner_tiles(problem, f, HOST, cores, links) for f in self.fifos}
        self.tiles = {**{f"core:{c}": t for c, t in cores.items()}, **{f"link:{n}": t for n, t in links.items()}}
        self.at: dict[str, Coord] = {}

    def _needs(self, f: FifoSpec) -> tuple[str, int, int, list[Coord]]:
        shims = host_shims(self.dev, self.p.design.plio_of(f.name))
        if not shims:
            kind = "PL shim tiles for PLIO streams" if self.p.design.plio_of(f.name) else "NoC shim tiles"
            raise PlanError(f"{self.dev.name} has no {kind}, which the host end of fifo {f.name!r} needs")
        d = MM2S if f.producer == HOST else S2MM
        return d, end_bds(self.p.design, f.name, HOST), host_end_locks(self.dev, shims[0]), shims

    def flow(self, f: FifoSpec, s: Coord) -> tuple | None:
        """The routed flow of ``f`` with its host end on ``s`` (None when an end is not placed)."""
        return host_flow(f, s, self.tiles)

    def place(self, f: FifoSpec, balance: bool = False) -> None:
        """``f``'s host end on the best shim: one with room, then the fewest boundaries overfilled, then (with
        ``balance``) the least crowded boundaries crossed, then the nearest."""
        d, bds, locks, shims = self._needs(f)
        used, dev = self.used, self.dev

        def cost(s: Coord) -> tuple:
            full = (used[s][d] >= dev.end_channels(s, d) or used[s]["bds"] + bds > dev.buffer_descriptors(s)
                    or used[s]["locks"] + locks > dev.locks(s))
            flow = self.flow(f, s)
            over = 0 if flow is None else self.load.over(flow)
            crowd = self.load.crowding(flow) if balance and flow is not None else 0.0
            return (full, over, crowd, sum(manhattan(s, p) for p in self.near[f.name]) * f.traffic, s)

        self._put(f, min(shims, key=cost), d, bds, locks, 1)

    def remove(self, f: FifoSpec) -> None:
        d, bds, locks, _ = self._needs(f)
        self._put(f, self.at.pop(f.name), d, bds, locks, -1)

    def _put(self, f: FifoSpec, s: Coord, d: str, bds: int, locks: int, sign: int) -> None:
        self.used[s][d] += sign
        self.used[s]["bds"] += sign * bds
        self.used[s]["locks"] += sign * locks
        flow = self.flow(f, s)
        if flow is not None:
            self.load.add(flow, sign)
        if sign > 0:
            self.at[f.name] = s


def greedy_placement(problem: Problem) -> Placement:
    """Place cores, links and host ends greedily.

    Raises:
        PlanError: more cores than compute tiles, or links on a device without memtiles.
    """
    cores = place_cores(problem)
    links = place_links(problem, cores)
    hosts = place_hosts(problem, cores, links)
    return Placement(cores, links, hosts)
