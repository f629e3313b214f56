"""The placement ILP model: variables and one function per constraint family.

Every agent gets a one-hot choice of tile: cores among compute tiles, links
among memtiles, host ends among NoC shims. An agent with a single candidate
(a pinned core, or a core held fixed by the neighbourhood search) is a
constant, not a variable. The objective sums, over every producer/consumer
pair of every fifo, the fifo's weight times the route distance of the pair
(``fabric.hops``: the Manhattan distance, plus 2 between memtiles of one row,
which have no east/west links), 0 for a pair of cores sharing a memory (IRON's
shared-memory object fifo). A pair's distance is linearised exactly by ``w[t,u] = x[a,t] x[b,u]``
through its row and column sums (``w[t,t]`` left out for two cores, which is
what makes the LP bound useful); pairs with too many candidate products use
column and row differences (Manhattan, exact between compute tiles) with a
big-M sharing term instead.

Constraint families: one core per tile; per core, streamed fifos within its
DMA channels and own buffers within its memory (a consumer's copy vanishes
when shared); per memtile, its links' channels, bytes, BDs and locks, and
the fifos crossing its links to the core above and the shim below (AIE-ML
memtiles have no east/west links, so a core's fifo into a link enters its
memtile from above: more than those links carry cannot be routed without a
detour); per shim, host ends per direction, within its DMA (PLIO) channels,
and their BDs within its buffer descriptors (AIE1's static shim chains take one
per move: ``descriptors.host_end_bds``) (and, on request, within its own links
to the array above: ``shim_links``).
"""

from __future__ import annotations

from functools import lru_cache

import pulp

from tilelang.devices import Device
from tilelang.devices.abi import STACK_BYTES
from tilelang.devices.cascade_rules import cascade_targets
from tilelang.ir.descriptors import host_end_bds
from tilelang.ir.verify import HOST
from tilelang.plan.carriage import MM2S, S2MM, Placement, common_memories, host_shims, link_needs, memtile_ports
from tilelang.plan.cascades import cascade_pairs
from tilelang.plan.fabric import fabric, hops, manhattan
from tilelang.plan.greedy import host_flow, placed_flows
from tilelang.plan.placement_grid import grid_term
from tilelang.plan.problem import Coord, FifoSpec, Problem
from tilelang.plan.route_cuts import Boundary, BoundaryLoad, boundaries

#: Largest (tiles of a) x (tiles of b) for the exact product linearisation of a pair's distance.
PAIR_LIMIT = 600

Choice = dict[Coord, object]  # tile -> LpVariable, or the constant 1 for a fixed agent


def array_channels(device: Device, shim: Coord, direction: str) -> int:
    """Channels of the links between ``shim`` and the tiles above it (not the shim row): leaving it for
    ``mm2s`` (into the array), entering it for ``s2mm``; from ``Device.link_capacity`` as the router has them."""
    fab = fabric(device)
    up = [t for _, t in fab.out[shim] if device.tile_kind(t) != "shim"]
    if direction == MM2S:
        return sum(device.link_capacity(shim, t) for t in up)
    return sum(device.link_capacity(t, shim) for t in up)


def crowded_shims(problem: Problem, placement: Placement) -> list[tuple[Coord, str, int]]:
    """(shim, direction, host ends) of every shim whose host ends in a direction exceed its array links'
    channels (``array_channels``), sorted."""
    count: dict[tuple[Coord, str], int] = {}
    for f in problem.fifos:
        if HOST in f.agents:
            key = (placement.hosts[f.name], MM2S if f.producer == HOST else S2MM)
            count[key] = count.get(key, 0) + 1
    return [(s, d, n) for (s, d), n in sorted(count.items()) if n > array_channels(problem.device, s, d)]


@lru_cache(maxsize=8)
def _hop_memo(device: Device) -> dict[tuple[Coord, Coord], int]:
    """``fabric.hops`` of the tile pairs asked so far on ``device``, shared by every model built for it."""
    return {}


@lru_cache(maxsize=1 << 16)
def _crossings(flow: tuple) -> tuple[Boundary, ...]:
    """``route_cuts.boundaries`` of a flow, remembered (each window model asks again for every host end)."""
    return tuple(boundaries(flow))


def key_of(agent: str, fifo: str) -> str:
    """The placed entity behind an agent's end of a fifo (host ends are per fifo)."""
    return f"host@{fifo}" if agent == HOST else agent


def weights(problem: Problem) -> dict[str, float]:
    """Objective weight of each fifo: its bytes, scaled so the heaviest weighs 100."""
    top = max((f.traffic for f in problem.fifos), default=1)
    return {f.name: 100.0 * f.traffic / top for f in problem.fifos}


class PlacementModel:
    """One placement ILP.

    Args:
        problem: the planning problem.
        start: the warm start (and the tiles of cores held fixed).
        movable: cores free to move (None: all unpinned cores).
        radius: a movable core only considers tiles this close to its start (None: all).
        reserve: channels kept free on a column or row boundary (``boundaries``), by the routing feedback.
        hold_hosts: hold a host end at its start unless its fifo has a movable core or a link among its agents
            (a neighbourhood window's model: the host ends of the window's cores move with them, the others
            are constants, as the cores outside it are).
    """

    def __init__(self, problem: Problem, start: Placement, movable: frozenset[str] | None, radius: int | None,
                 reserve: dict[Boundary, int] | None = None, hold_hosts: bool = False) -> None:
        self.p, self.dev, self.start = problem, problem.device, start
        self.reserve = dict(reserve or {})
        self.hold_hosts = hold_hosts
        self.prob = pulp.LpProblem("placement", pulp.LpMinimize)
        self.assign: dict[str, Choice] = {}
        self.shared: dict[str, object] = {}
        self.cost: list = []
        self._dist = _hop_memo(problem.device)
        self._candidates(movable, radius, hold_hosts)

    # -- variables ------------------------------------------------------------------------

    def _var(self, name: str, warm: float, cat: str = "Binary") -> pulp.LpVariable:
        v = self.prob.add_variable(name, 0, None if cat != "Binary" else 1, cat=cat)
        v.setInitialValue(warm)
        return v

    def variable(self, name: str, warm: float, cat: str = "Binary") -> pulp.LpVariable:
        """A new model variable with its warm-start value (for terms built outside this class)."""
        return self._var(name, warm, cat)

    def _candidates(self, movable: frozenset[str] | None, radius: int | None, hold_hosts: bool) -> None:
        dev, pins = self.dev, self.p.pin_map
        fixed = {c: t for c, t in self.start.cores.items() if c in pins or (movable is not None and c not in movable)}
        held = set(fixed.values())
        free = [t for t in dev.tiles("compute") if t not in held]
        for i, c in enumerate(self.p.cores):
            home = self.start.cores[c]
            if c in fixed:
                self.assign[f"core:{c}"] = {fixed[c]: 1}
                continue
            tiles = free if radius is None else [t for t in free if manhattan(t, home) <= radius]
            self._add(f"core:{c}", f"x{i}", tiles, home)
        for i, ln in enumerate(self.p.links):
            self._add(f"link:{ln.name}", f"y{i}", dev.tiles("mem"), self.start.links[ln.name])
        moving = {f"core:{c}" for c in self.p.cores if c not in fixed}
        for i, f in enumerate(self.p.fifos):
            if HOST in f.agents and hold_hosts and not any(a in moving or a.startswith("link:") for a in f.agents):
                self.assign[f"host@{f.name}"] = {self.start.hosts[f.name]: 1}
            elif HOST in f.agents:
                shims = host_shims(dev, self.p.design.plio_of(f.name))
                self._add(f"host@{f.name}", f"z{i}", shims, self.start.hosts[f.name])

    def _add(self, key: str, tag: str, tiles: list[Coord], home: Coord) -> None:
        self.assign[key] = {t: self._var(f"{tag}_{t[0]}_{t[1]}", 1.0 if t == home else 0.0) for t in tiles}
        self.prob += pulp.lpSum(self.assign[key].values()) == 1, f"one_{tag}"

    def fixed(self, key: str) -> bool:
        return len(self.assign[key]) == 1 and not isinstance(next(iter(self.assign[key].values())), pulp.LpVariable)

    def home(self, key: str) -> Coord:
        """The agent's tile in the warm start."""
        for t, v in self.assign[key].items():
            if not isinstance(v, pulp.LpVariable) or v.varValue == 1.0:
                return t
        raise KeyError(key)

    # -- constraint families -------------------------------------------------------------------

    def one_core_per_tile(self) -> None:
        users: dict[Coord, list] = {}
        for c in self.p.cores:
            for t, v in self.assign[f"core:{c}"].items():
                if isinstance(v, pulp.LpVariable):
                    users.setdefault(t, []).append(v)
        for t in sorted(users):
            if len(users[t]) > 1:
                self.prob += pulp.lpSum(users[t]) <= 1, f"tile_{t[0]}_{t[1]}"

    def distances(self, weight: dict[str, float]) -> None:
        """Weighted distance of every producer/consumer pair; a pair sharing a memory costs nothing."""
        for i, f in enumerate(self.p.fifos):
            a = key_of(f.producer, f.name)
            for j, c in enumerate(f.consumers):
                b = key_of(c, f.name)
                if self.fixed(a) and self.fixed(b):
                    d = self._constant(a, b, f)
                elif self.fixed(a) or self.fixed(b) or len(self.assign[a]) * len(self.assign[b]) <= PAIR_LIMIT:
                    d = self._product(f"{i}_{j}", a, b, f)
                else:
                    d = self._coordinates(f"{i}_{j}", a, b, f)
                self.cost.append(weight[f.name] * d)

    def _constant(self, a: str, b: str, f: FifoSpec) -> float:
        ta, tb = self.home(a), self.home(b)
        near = f.shareable and bool(common_memories(self.dev, ta, tb))
        if f.shareable:
            self.shared[f.name] = 1 if near else 0
        return 0.0 if near else float(hops(self.dev, ta, tb))

    def _product(self, tag: str, a: str, b: str, f: FifoSpec) -> pulp.LpAffineExpression:
        """Exact linearisation: w[t,u] = x[a,t] x[b,u] (just x when one side is fixed)."""
        xa, xb = self.assign[a], self.assign[b]
        if self.fixed(a) or self.fixed(b):
            w = {(t, u): (vb if self.fixed(a) else va) for t, va in xa.items() for u, vb in xb.items()}
        else:
            ha, hb = self.home(a), self.home(b)
            both_cores = a.startswith("core:") and b.startswith("core:")
            w = {(t, u): self._var(f"w{tag}_{t[0]}_{t[1]}_{u[0]}_{u[1]}", float(t == ha and u == hb), "Continuous")
                 for t in xa for u in xb if not (both_cores and t == u)}
            for t, v in xa.items():
                self.prob += pulp.lpSum(w[t, u] for u in xb if (t, u) in w) == v, f"wr{tag}_{t[0]}_{t[1]}"
            for u, v in xb.items():
                self.prob += pulp.lpSum(w[t, u] for t in xa if (t, u) in w) == v, f"wc{tag}_{u[0]}_{u[1]}"
        near = {k for k in w if f.shareable and common_memories(self.dev, *k)}
        if f.shareable:
            self.shared[f.name] = pulp.lpSum(w[k] for k in sorted(near))
        # the sum built term by term, as lpSum would (zero distances left out): the same expression, faster
        terms: dict = {}
        for k, v in w.items():
            d = 0 if k in near else self._hops(k)
            if d:
                terms[v] = terms.get(v, 0) + d
        return pulp.LpAffineExpression(terms)

    def _hops(self, pair: tuple[Coord, Coord]) -> int:
        """``fabric.hops`` of a tile pair, remembered (a model asks for the same pairs many times)."""
        d = self._dist.get(pair)
        if d is None:
            d = self._dist[pair] = hops(self.dev, *pair)
        return d

    def _coordinates(self, tag: str, a: str, b: str, f: FifoSpec) -> pulp.LpAffineExpression:
        """Column and row differences; a shareable pair's distance drops to 0 when shared."""
        parts = []
        for axis, name in ((0, "dc"), (1, "dr")):
            diff = pulp.lpSum(t[axis] * v for t, v in self.assign[a].items()) - pulp.lpSum(
                t[axis] * v for t, v in self.assign[b].items())
            v = self._var(f"{name}{tag}", abs(self.home(a)[axis] - self.home(b)[axis]), "Continuous")
            self.prob += v >= diff, f"{name}p{tag}"
            self.prob += v >= -diff, f"{name}n{tag}"
            parts.append(v)
        d = pulp.lpSum(parts)
        if not f.shareable:
            return d
        now = bool(common_memories(self.dev, self.home(a), self.home(b)))
        s = self._var(f"s{tag}", 1.0 if now else 0.0)
        self.shared[f.name] = s
        near = self._sharing(self.assign[a], self.assign[b])
        for t, xa in self.assign[a].items():
            self.prob += s + xa - 1 <= pulp.lpSum(near[t]), f"share_{tag}_{t[0]}_{t[1]}"
        e = self._var(f"e{tag}", 0.0 if now else d.value(), "Continuous")
        self.prob += e >= d - (self.dev.cols + self.dev.rows) * s, f"e_{tag}"
        return e

    def _sharing(self, xa: dict, xb: dict) -> dict:
        """Per candidate tile t of one end, the variables of the other end's candidates u that share a memory
        with t (``common_memories``), in ``xb``'s order: found through each memory's sharers, not by testing
        every pair (a core's candidates are every compute tile; 400 x 400 pairs on xcvc1902)."""
        sets = self.dev.shared_memory_sets()
        if not all(t in sets for t in xa) or not all(u in sets for u in xb):  # (only cores share memories)
            return {t: [v for u, v in xb.items() if common_memories(self.dev, t, u)] for t in xa}
        order = {u: i for i, u in enumerate(xb)}
        sharers: dict = {}
        for u in xb:
            for m in sets[u]:
                sharers.setdefault(m, []).append(u)
        out = {}
        for t in xa:
            found = {u for m in sets[t] for u in sharers.get(m, ())}
            out[t] = [xb[u] for u in sorted(found, key=order.__getitem__)]
        return out

    def _add_if_variable(self, expr: pulp.LpAffineExpression, cap: float, name: str) -> None:
        if expr.toDict():  # a constraint of constants only is the warm start's business, not the model's
            self.prob += expr <= cap, name

    def _add_held(self, expr: pulp.LpAffineExpression, cap: float, name: str) -> None:
        """A host ends' bound; with host ends held, at most what the warm start already uses where that is more
        (a window cannot move the held ends that overfill it, so it may only not make it worse)."""
        if self.hold_hosts and expr.toDict():
            cap = max(cap, round(expr.value()))
        self._add_if_variable(expr, cap, name)

    def cascades(self) -> None:
        """The producer of each cascade on a tile from which the device's cascade reaches its consumer's tile."""
        for k, (_, p, q) in enumerate(cascade_pairs(self.p.design)):
            dst = self.assign[f"core:{q}"]
            for t, x in self.assign[f"core:{p}"].items():
                reach = [dst[b] for b in cascade_targets(self.dev, t) if b in dst]
                if not isinstance(x, pulp.LpVariable) and not any(isinstance(v, pulp.LpVariable) for v in reach):
                    continue  # both ends fixed: the design verifier and the greedy placement checked them
                self.prob += x <= pulp.lpSum(reach), f"cascade_{k}_{t[0]}_{t[1]}"

    def core_channels_and_memory(self) -> None:
        """Per core: streamed fifos within the tile's DMA channels; own buffers within its memory."""
        tile = self.dev.tiles("compute")[0]
        cap = self.dev.memory_bytes(tile)
        for i, c in enumerate(self.p.cores):
            me = f"core:{c}"
            streams = {MM2S: pulp.LpAffineExpression(), S2MM: pulp.LpAffineExpression()}
            mem = pulp.LpAffineExpression()
            for f in self.p.fifos:
                if me not in f.agents:
                    continue
                d = MM2S if f.producer == me else S2MM
                size = f.elem_bytes * f.depth
                s = self.shared.get(f.name)
                streamed = 1 if s is None else 1 - s
                streams[d] += streamed
                # the producer holds the buffers shared or not; a consumer's copy vanishes when shared
                mem += size if d == MM2S else size * streamed
            for d in (MM2S, S2MM):
                self._add_if_variable(streams[d], self.dev.dma_channels(tile, d), f"ch_{d}_{i}")
            # the core's local buffers (packed) sit in its own memory wherever it goes
            self._add_if_variable(mem, cap - STACK_BYTES - self.p.arena_bytes(c), f"mem_{i}")

    def memtiles(self) -> None:
        """Links' DMA channels, buffer bytes, BDs, locks and vertical stream links within each memtile."""
        if not self.p.links:
            return
        needs = {ln.name: link_needs(self.p, ln.name) for ln in self.p.links}
        for m in self.dev.tiles("mem"):
            have = {
                MM2S: self.dev.dma_channels(m, MM2S),
                S2MM: self.dev.dma_channels(m, S2MM),
                "bytes": self.dev.memory_bytes(m),
                "bds": self.dev.buffer_descriptors(m),
                "locks": self.dev.locks(m),
                **memtile_ports(self.dev, m),
            }
            for k, cap in have.items():
                use = [needs[ln.name][k] * self.assign[f"link:{ln.name}"][m] for ln in self.p.links]
                if sum(needs[ln.name][k] for ln in self.p.links) > cap:
                    self.prob += pulp.lpSum(use) <= cap, f"m{k}_{m[0]}_{m[1]}"

    def shims(self) -> None:
        """Host ends within each shim's DMA channels (a PL shim's PLIO channels) per direction."""
        for s, d, ends in self._shim_ends():
            self._add_held(pulp.lpSum(ends), self.dev.end_channels(s, d), f"sh_{d}_{s[0]}_{s[1]}")

    def shim_bds(self) -> None:
        """Host ends' BDs within each shim's buffer descriptors (one pool for all its channels), where the
        ends that may go there could need more: on AIE1 a host end's chain takes one BD per move on its fifo,
        so two fifos of 16 moves each cannot share a 16-BD shim (an NPU host end takes one BD of the runtime
        sequence's ring: never binding)."""
        need = {f.name: (host_end_bds(self.p.design, f.name), f.producer == HOST) for f in self.p.fifos
                if HOST in f.agents}
        for s in sorted({t for k, a in self.assign.items() if k.startswith("host@") for t in a}):
            ends = [(n, out, self.assign[f"host@{name}"][s]) for name, (n, out) in need.items()
                    if s in self.assign[f"host@{name}"]]
            cap = self.dev.buffer_descriptors(s)
            # the most the shim's channels let in (the largest needs, as many as its channels a direction):
            # added only where that is more than its BDs, so models where it cannot bind stay as they were
            most = sum(sum(sorted((n for n, o, _ in ends if o == out), reverse=True)[:self.dev.end_channels(s, d)])
                       for out, d in ((True, MM2S), (False, S2MM)))
            if most > cap:
                self._add_held(pulp.lpSum(n * x for n, _, x in ends), cap, f"shbd_{s[0]}_{s[1]}")

    def shim_links(self) -> None:
        """Host ends within the channels of each shim's own links to the array above (``array_channels``),
        where those are fewer than its channels: a VC1902 PL shim takes 8 PLIO streams in and sends 6 north,
        sends 6 out and takes 4 from the north; a NoC shim's 2 DMA channels a direction never reach them.

        A model's choice, not a hardware limit: a stream beyond a shim's own links goes sideways along the
        shim row and up through a neighbour's, which the model does not count, and on a large grid the
        neighbours are full too (8 x 8 PLIO-fed cascade chains of 4 put seven streams on one PL shim and
        did not route). The placement adds it only once a solve's answer breaks it (``placement.py``)."""
        for s, d, ends in self._shim_ends():
            cap = array_channels(self.dev, s, d)
            if cap < min(len(ends), self.dev.end_channels(s, d)):
                self._add_held(pulp.lpSum(ends), cap, f"shl_{d}_{s[0]}_{s[1]}")

    def _shim_ends(self) -> list[tuple[Coord, str, list]]:
        """(shim, direction, the host ends' variables for that shim) for every candidate shim with ends (a PLIO
        fifo's candidates are PL shims, any other's NoC shims: each shim counts the ends that may go there)."""
        out = []
        for s in sorted({t for k, a in self.assign.items() if k.startswith("host@") for t in a}):
            for d in (MM2S, S2MM):
                ends = [
                    self.assign[f"host@{f.name}"][s]
                    for f in self.p.fifos
                    if HOST in f.agents and (f.producer == HOST) == (d == MM2S) and s in self.assign[f"host@{f.name}"]
                ]
                if ends:
                    out.append((s, d, ends))
        return out

    def boundaries(self) -> None:
        """The routed flows that must cross each column and row boundary, per direction, within its channels
        (the router's cut bound, ``route_cuts.BoundaryLoad``). The host ends are the variables: a broadcast
        crosses every boundary between its source and its farthest destination, the direction set by the
        source's side, so many host ends at the middle of a span they share overfill one direction (the
        distance objective pulls each there). The other ends count at their tiles in the warm start: exact
        for agents the model holds fixed, approximate for a window's cores, which may move ``radius`` tiles.
        Only boundaries the flows could overfill get a row."""
        homes = Placement({c: self.home(f"core:{c}") for c in self.p.cores},
                          {ln.name: self.home(f"link:{ln.name}") for ln in self.p.links}, {})
        load = BoundaryLoad(fabric(self.dev))
        for flow in placed_flows(self.p, homes.cores, homes.links):
            load.add(flow)
        terms: dict[tuple, list] = {}
        fifos: dict[tuple, set[str]] = {}
        tiles = {**{f"core:{c}": t for c, t in homes.cores.items()}, **{f"link:{n}": t for n, t in homes.links.items()}}
        for f in self.p.fifos:
            if HOST not in f.agents:
                continue
            for s, z in self.assign[f"host@{f.name}"].items():
                flow = host_flow(f, s, tiles)
                for b in _crossings(flow) if flow is not None else ():
                    terms.setdefault(b, []).append(z)
                    fifos.setdefault(b, set()).add(f.name)
        for b in sorted(terms):
            cap = load.cap[b] - self.reserve.get(b, 0)
            if load.load[b] + len(fifos[b]) > cap:
                self._add_held(pulp.lpSum(terms[b]), cap - load.load[b], f"cut_{b[0]}_{int(b[1])}_{b[2]}")

    def result(self, values: dict[str, float]) -> Placement:
        """The placement a solution's values pick."""

        def pick(key: str) -> Coord:
            choice = self.assign[key]
            return max(choice, key=lambda t: (values.get(getattr(choice[t], "name", ""), 1.0 if self.fixed(key) else 0.0), t))

        cores = {c: pick(f"core:{c}") for c in self.p.cores}
        links = {ln.name: pick(f"link:{ln.name}") for ln in self.p.links}
        hosts = {f.name: pick(f"host@{f.name}") for f in self.p.fifos if HOST in f.agents}
        return Placement(cores, links, hosts)


def build(problem: Problem, start: Placement, movable: frozenset[str] | None = None, radius: int | None = None,
          tie: tuple[dict[str, Coord], float] | None = None, links: bool = False,
          reserve: dict[Boundary, int] | None = None, hold_hosts: bool = False) -> PlacementModel:
    """The placement model with every constraint family, warm-started at ``start``.

    ``tie`` = (logical grid, eps) adds the grid tie-break of ``placement_grid.py`` to the objective
    (``cost`` stays the primary objective alone); ``links`` adds the shims' array-link bound
    (``PlacementModel.shim_links``); ``reserve`` keeps channels free on boundaries and ``hold_hosts`` holds the
    host ends no movable core or link needs (``PlacementModel``).
    """
    m = PlacementModel(problem, start, movable, radius, reserve, hold_hosts)
    m.one_core_per_tile()
    m.cascades()
    m.distances(weights(problem))
    m.core_channels_and_memory()
    m.memtiles()
    m.shims()
    m.shim_bds()
    if links:
        m.shim_links()
    m.boundaries()
    if tie is None:
        m.prob += pulp.lpSum(m.cost)
    else:
        m.prob += pulp.lpSum(m.cost) + tie[1] * grid_term(m, tie[0])
    return m


def objective_of(problem: Problem, placement: Placement) -> float:
    """The placement objective of a given placement (everything fixed)."""
    fixed = build(problem, placement, frozenset(), 0)
    return float(pulp.value(pulp.lpSum(fixed.cost)) or 0.0)
