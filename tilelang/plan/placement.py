"""The placement ILP: cores onto compute tiles, links onto memtiles, host ends onto shim channels.

Objective: bytes carried x Manhattan distance, summed over every producer /
consumer pair of every fifo, where a pair of cores that share a memory
(``Device.shared_memory_tiles``, IRON's shared-memory object fifo) costs
nothing. Constraints, one function each:

- assignment: every agent on exactly one candidate tile, at most one core per
  compute tile, pins honoured;
- sharing: a fifo may count as shared only if its cores' tiles reach a common memory;
- DMA channels: per core and direction, its streamed fifos (all but the shared
  ones) fit the tile's channels; per memtile, its links' channels; per shim, the
  host ends in each direction;
- memory: each core's own buffers (a consumer's copy vanishes when shared)
  and each memtile's link buffers within capacity; memtile BDs and locks.

Distances are linearised with per-pair column and row differences. The
greedy placement is the warm start and the fallback. On large arrays each
core only considers tiles within ``radius`` of its greedy tile (a
neighbourhood search), and the SolveInfo says so ("ilp-local").
"""

from __future__ import annotations

import time

import pulp

from tilelang.ir.plan import SolveInfo
from tilelang.ir.verify import HOST
from tilelang.plan.carriage import MM2S, S2MM, Placement, common_memories, link_needs, set_locks
from tilelang.plan.fabric import manhattan
from tilelang.plan.greedy import greedy_placement
from tilelang.plan.problem import Coord, FifoSpec, Problem
from tilelang.plan.resources import STACK_BYTES
from tilelang.plan.solve import solve_model

#: Above this many (core, tile) candidates the search is restricted around the greedy placement.
FULL_MODEL_LIMIT = 1200
#: Neighbourhood radius (tiles, Manhattan) of the restricted search.
RADIUS = 2
#: Largest (tiles of a) x (tiles of b) for the exact product linearisation of a pair's distance.
PAIR_LIMIT = 600


def key_of(agent: str, fifo: str) -> str:
    """The placed entity behind an agent's end of a fifo (host ends are per fifo)."""
    return f"host@{fifo}" if agent == HOST else agent


class _Model:
    """Variables and constraint families of one placement ILP."""

    def __init__(self, problem: Problem, start: Placement, radius: int | None) -> None:
        self.p, self.dev, self.start = problem, problem.device, start
        self.prob = pulp.LpProblem("placement", pulp.LpMinimize)
        self.assign: dict[str, dict[Coord, pulp.LpVariable]] = {}
        self.shared: dict[str, pulp.LpVariable] = {}
        self.cost: list = []
        self.warm: dict[str, float] = {}
        self._candidates(radius)

    # -- variables ------------------------------------------------------------------------

    def _var(self, name: str, warm: float, cat: str = "Binary", low: float = 0) -> pulp.LpVariable:
        v = pulp.LpVariable(name, low, None if cat != "Binary" else 1, cat=cat)
        v.setInitialValue(warm)
        return v

    def _candidates(self, radius: int | None) -> None:
        dev, pins = self.dev, self.p.pin_map
        computes = dev.tiles("compute")
        for i, c in enumerate(self.p.cores):
            home = self.start.cores[c]
            if c in pins:
                tiles = [pins[c]]
            elif radius is None:
                tiles = computes
            else:
                tiles = [t for t in computes if manhattan(t, home) <= radius]
            self._add(f"core:{c}", f"x{i}", tiles, home)
        for i, ln in enumerate(self.p.links):
            self._add(f"link:{ln.name}", f"y{i}", dev.tiles("mem"), self.start.links[ln.name])
        shims = [t for t in dev.tiles("shim") if dev.is_noc_shim(t)]
        for i, f in enumerate(self.p.fifos):
            if HOST in f.agents:
                self._add(f"host@{f.name}", f"z{i}", shims, self.start.hosts[f.name])

    def _add(self, key: str, tag: str, tiles: list[Coord], home: Coord) -> None:
        self.assign[key] = {t: self._var(f"{tag}_{t[0]}_{t[1]}", 1.0 if t == home else 0.0) for t in tiles}
        self.prob += pulp.lpSum(self.assign[key].values()) == 1, f"one_{tag}"

    def coord(self, key: str, axis: int) -> pulp.LpAffineExpression:
        return pulp.lpSum(t[axis] * v for t, v in self.assign[key].items())

    def home(self, key: str) -> Coord:
        return next(t for t, v in self.assign[key].items() if v.varValue == 1.0)

    # -- constraint families -------------------------------------------------------------------

    def one_core_per_tile(self) -> None:
        users: dict[Coord, list] = {}
        for c in self.p.cores:
            for t, v in self.assign[f"core:{c}"].items():
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
                small = len(self.assign[a]) * len(self.assign[b]) <= PAIR_LIMIT
                pair = self._product if small else self._coordinates
                d = pair(f"{i}_{j}", a, b, f)
                self.cost.append(weight[f.name] * d)

    def _product(self, tag: str, a: str, b: str, f: FifoSpec) -> pulp.LpAffineExpression:
        """Exact linearisation: w[t,u] = x[a,t] x[b,u] through its row and column sums."""
        xa, xb = self.assign[a], self.assign[b]
        ha, hb = self.home(a), self.home(b)
        # Two cores never share a tile, so w[t,t] = 0: leaving it out is what makes the LP bound useful.
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
        return pulp.lpSum(manhattan(*k) * v for k, v in w.items() if k not in near)

    def _coordinates(self, tag: str, a: str, b: str, f: FifoSpec) -> pulp.LpAffineExpression:
        """Column and row differences; a shareable pair's distance drops to 0 when shared."""
        parts = []
        for axis, name in ((0, "dc"), (1, "dr")):
            diff = self.coord(a, axis) - self.coord(b, axis)
            v = self._var(f"{name}{tag}", abs(self.home(a)[axis] - self.home(b)[axis]), "Continuous")
            self.prob += v >= diff, f"{name}p{tag}"
            self.prob += v >= -diff, f"{name}n{tag}"
            parts.append(v)
        d = pulp.lpSum(parts)
        if not f.shareable:
            return d
        s = self._share(f, tag, a, b)
        e = self._var(f"e{tag}", 0.0 if s.varValue else d.value(), "Continuous")
        self.prob += e >= d - (self.dev.cols + self.dev.rows) * s, f"e_{tag}"
        return e

    def _share(self, f: FifoSpec, tag: str, a: str, b: str) -> pulp.LpVariable:
        now = bool(common_memories(self.dev, self.home(a), self.home(b)))
        s = self._var(f"s{tag}", 1.0 if now else 0.0)
        self.shared[f.name] = s
        xb = self.assign[b]
        for t, xa in self.assign[a].items():
            ok = [v for u, v in xb.items() if common_memories(self.dev, t, u)]
            self.prob += s + xa - 1 <= pulp.lpSum(ok), f"share_{tag}_{t[0]}_{t[1]}"
        return s

    def core_channels_and_memory(self) -> None:
        """Per core: streamed fifos within the tile's DMA channels; own buffers within its memory."""
        tile = self.dev.tiles("compute")[0]
        cap = self.dev.memory_bytes(tile)
        for i, c in enumerate(self.p.cores):
            me = f"core:{c}"
            streams = {MM2S: [], S2MM: []}
            fixed = {MM2S: 0, S2MM: 0}
            mem: list = [STACK_BYTES]
            for f in self.p.fifos:
                if me not in f.agents:
                    continue
                d = MM2S if f.producer == me else S2MM
                size = f.elem_bytes * f.depth
                s = self.shared.get(f.name)
                if s is None:
                    fixed[d] += 1
                    mem.append(size)
                else:
                    streams[d].append(1 - s)
                    # the producer holds the buffers shared or not; a consumer's copy vanishes when shared
                    mem.append(size if d == MM2S else size * (1 - s))
            for d in (MM2S, S2MM):
                if streams[d]:
                    self.prob += fixed[d] + pulp.lpSum(streams[d]) <= self.dev.dma_channels(tile, d), f"ch_{d}_{i}"
            self.prob += pulp.lpSum(mem) <= cap, f"mem_{i}"

    def memtiles(self) -> None:
        """Links' DMA channels, buffer bytes, BDs and locks within each memtile."""
        for m in self.dev.tiles("mem"):
            if not self.p.links:
                return
            have = {
                MM2S: self.dev.dma_channels(m, MM2S),
                S2MM: self.dev.dma_channels(m, S2MM),
                "bytes": self.dev.memory_bytes(m),
                "bds": self.dev.buffer_descriptors(m),
                "locks": self.dev.locks(m),
            }
            for k, cap in have.items():
                use = [link_needs(self.p, ln.name)[k] * self.assign[f"link:{ln.name}"][m] for ln in self.p.links]
                self.prob += pulp.lpSum(use) <= cap, f"m{k}_{m[0]}_{m[1]}"

    def shims(self) -> None:
        """Host ends within each shim's DMA channels per direction."""
        for s in sorted({t for k, a in self.assign.items() if k.startswith("host@") for t in a}):
            for d in (MM2S, S2MM):
                ends = [
                    self.assign[f"host@{f.name}"][s]
                    for f in self.p.fifos
                    if HOST in f.agents and (f.producer == HOST) == (d == MM2S)
                ]
                if ends:
                    self.prob += pulp.lpSum(ends) <= self.dev.dma_channels(s, d), f"sh_{d}_{s[0]}_{s[1]}"

    def result(self, values: dict[str, float]) -> Placement:
        def pick(key: str) -> Coord:
            return max(self.assign[key], key=lambda t: (values.get(self.assign[key][t].name, 0.0), t))

        cores = {c: pick(f"core:{c}") for c in self.p.cores}
        links = {ln.name: pick(f"link:{ln.name}") for ln in self.p.links}
        hosts = {f.name: pick(f"host@{f.name}") for f in self.p.fifos if HOST in f.agents}
        return Placement(cores, links, hosts)


def weights(problem: Problem) -> dict[str, float]:
    """Objective weight of each fifo: its bytes, scaled so the heaviest weighs 100."""
    top = max((f.traffic for f in problem.fifos), default=1)
    return {f.name: 100.0 * f.traffic / top for f in problem.fifos}


def build(problem: Problem, start: Placement, radius: int | None) -> _Model:
    """The placement model with every constraint family, warm-started at ``start``."""
    m = _Model(problem, start, radius)
    m.one_core_per_tile()
    m.distances(weights(problem))
    m.core_channels_and_memory()
    m.memtiles()
    m.shims()
    m.prob += pulp.lpSum(m.cost)
    return m


def place_ilp(problem: Problem, solver: str, time_limit: float) -> tuple[Placement, SolveInfo]:
    """Place cores, links and host ends by ILP.

    Args:
        problem: the planning problem.
        solver: "cbc" or "highs".
        time_limit: hard deadline in seconds.

    Returns:
        (placement, how it was solved); the greedy placement when the ILP has
        nothing better in time.
    """
    start = time.monotonic()
    greedy = greedy_placement(problem)
    n = len(problem.cores) * len(problem.device.tiles("compute"))
    radius = None if n <= FULL_MODEL_LIMIT else RADIUS
    if not problem.cores and not problem.links and not any(HOST in f.agents for f in problem.fifos):
        return greedy, SolveInfo("ilp", "optimal", 0.0, 0.0, 0.0)
    model = build(problem, greedy, radius)
    left = max(0.2, time_limit - (time.monotonic() - start))
    sol = solve_model(model.prob, solver, left)
    method = "ilp" if radius is None else "ilp-local"
    if not sol.values:
        return greedy, SolveInfo(f"{method}->greedy", "timeout", 0.0)
    return model.result(sol.values), SolveInfo(method, sol.status, 0.0, sol.objective, sol.gap)


__all__ = ["FULL_MODEL_LIMIT", "RADIUS", "place_ilp", "set_locks"]
