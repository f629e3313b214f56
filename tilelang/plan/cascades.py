"""Placing cores joined by cascades: the two ends of every cascade on tiles the device's cascade connects.

The rule is device data (``tilelang.devices.cascade_rules``): AIE1's fixed snake, AIE-ML's east or south.
The placement ILP adds it as a constraint family (``PlacementModel.cascades``); the greedy placement places
each chain of cascaded cores first, by a depth-first search over the device's cascade graph
(:func:`place_chains`), and the driver checks the final placement (``check_placement``).

When the device's cascade graph is a set of paths (AIE1's snake is one path through every compute tile), a
chain takes a run of consecutive free tiles along it, and the chains still to place fit exactly when their
lengths pack into the free runs (a bin packing, :func:`_packs`). The greedy placement takes no start that
breaks that, so chains that tile the array (100 chains of 4 on the VC1902's 400 cores) or nearly are packed
without stranding the last ones in runs too short for them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from tilelang.devices.cascade_rules import cascade_targets, describe_rule
from tilelang.errors import PlanError
from tilelang.ir.cascade import cascade_ends

Coord = tuple[int, int]

#: Search steps per chain before giving up (each step tries one tile for one core).
SEARCH_STEPS = 200_000
#: Search steps of one packing check (:func:`_packs`); past them the check does not reject the start (a start
#: is only ever refused when the chains after it provably do not fit).
PACK_STEPS = 20_000


def cascade_pairs(design: object) -> list[tuple[str, str, str]]:
    """``(cascade, producer core, consumer core)`` for every cascade, in design order."""
    ends = cascade_ends(design)  # type: ignore[arg-type]
    return [(name, e.producer, e.consumer) for name, e in ends.items()]


def _chains(pairs: list[tuple[str, str, str]]) -> list[list[str]]:
    """Maximal chains of cores, each from a core no cascade feeds, following the one cascade out of each."""
    out = {p: q for _, p, q in pairs}
    fed = {q for _, _, q in pairs}
    chains = []
    for _, p, _ in pairs:
        if p in fed:
            continue
        chain = [p]
        while chain[-1] in out:
            chain.append(out[chain[-1]])
        chains.append(chain)
    return chains


def place_chains(problem: object, pins: dict[str, Coord]) -> dict[str, Coord]:
    """Tiles for every core on a cascade chain, honouring ``pins`` and leaving pinned tiles to their cores.

    Chains are placed one at a time, in design order. Each goes where its cores add the least to the
    bounding boxes of the fifos they share with cores placed before (:class:`_Boxes`, weighted by the fifos'
    bytes), the first such start in row then column order: a broadcast's bounding box is the span its
    route must cover, and its width the column boundaries it crosses, whose channels the router has to
    share (``route_cuts``). Chains fed by one broadcast stack up where they can, so a grid of chains fed
    by row and column broadcasts keeps each broadcast to a band of the array instead of its whole width.
    On a device whose cascade graph is a set of paths, a start is taken only if the later chains without
    pinned cores still pack into the free runs along them (:func:`_fits`); a design whose chains all fitted
    without that check gets the same tiles, since no start it took is refused.

    Raises:
        PlanError: a chain fits nowhere (names its first cascade and the device's rule).
    """
    design, dev = problem.design, problem.device  # type: ignore[attr-defined]
    pairs = cascade_pairs(design)
    if not pairs:
        return {}
    name_of = {(p, q): n for n, p, q in pairs}
    tiles = dev.tiles("compute")
    taken = set(pins.values())
    boxes = _Boxes(problem, pins)
    placed: dict[str, Coord] = {}
    chains = _chains(pairs)
    paths = cascade_paths(dev, tiles)
    for i, chain in enumerate(chains):
        later = [len(c) for c in chains[i + 1:] if not any(x in pins for x in c)]
        fits = None if paths is None or not later else _fits(paths, taken, later)
        path = _search(dev, chain, tiles, pins, taken, boxes, fits)
        if path is None:
            first = name_of[(chain[0], chain[1])]
            raise PlanError(
                f"cascade {first!r}: no placement puts the chain of cores {' -> '.join(chain)} on cascade "
                f"neighbours of {dev.name} ({len(taken)} compute tiles already taken); {describe_rule(dev)}"
            )
        for c, t in zip(chain, path, strict=True):
            placed[c] = t
            taken.add(t)
        boxes.add(chain, path)
    return placed


class _Boxes:
    """Per fifo between cores: the bounding box of its cores placed so far, and its bytes."""

    def __init__(self, problem: object, pins: dict[str, Coord]) -> None:
        self.fifos: dict[str, list[tuple[str, int]]] = {}  # core -> (fifo, traffic) of the fifos it touches
        for f in problem.fifos:  # type: ignore[attr-defined]
            for a in f.agents:
                if a.startswith("core:"):
                    self.fifos.setdefault(a[5:], []).append((f.name, f.traffic))
        self.box: dict[str, tuple[int, int, int, int]] = {}
        for c, t in pins.items():
            self._grow(c, t)

    def _grow(self, core: str, t: Coord) -> None:
        for f, _ in self.fifos.get(core, ()):
            b = self.box.get(f)
            self.box[f] = (t[0], t[0], t[1], t[1]) if b is None else \
                (min(b[0], t[0]), max(b[1], t[0]), min(b[2], t[1]), max(b[3], t[1]))

    def cost(self, chain: list[str], path: list[Coord]) -> int:
        """Bytes x growth of the half perimeter of every fifo box the chain's cores would join."""
        grown: dict[str, tuple[int, int, int, int]] = {}
        weight: dict[str, int] = {}
        for c, t in zip(chain, path, strict=True):
            for f, traffic in self.fifos.get(c, ()):
                b = grown.get(f, self.box.get(f))
                if b is None:
                    grown[f] = (t[0], t[0], t[1], t[1])
                else:
                    grown[f] = (min(b[0], t[0]), max(b[1], t[0]), min(b[2], t[1]), max(b[3], t[1]))
                weight[f] = traffic
        total = 0
        for f, b in grown.items():
            old = self.box.get(f)
            before = 0 if old is None else (old[1] - old[0]) + (old[3] - old[2])
            total += weight[f] * ((b[1] - b[0]) + (b[3] - b[2]) - before)
        return total

    def add(self, chain: list[str], path: list[Coord]) -> None:
        for c, t in zip(chain, path, strict=True):
            self._grow(c, t)


def cascade_paths(dev: object, tiles: list[Coord]) -> list[list[Coord]] | None:
    """The device's cascade graph over ``tiles`` as disjoint paths in cascade order, or None when it is not
    one (a tile with two cascade targets or two sources, as on AIE-ML, or a cycle).

    On AIE1 (``cascade_targets``' snake) this is one path through every compute tile, from the west end of the
    first compute row.
    """
    succ = {t: cascade_targets(dev, t) for t in tiles}
    if any(len(v) > 1 for v in succ.values()):
        return None
    fed = Counter(u for v in succ.values() for u in v)
    if any(n > 1 for n in fed.values()):
        return None
    paths = []
    for head in (t for t in tiles if not fed[t]):
        path = [head]
        while succ[path[-1]]:
            path.append(succ[path[-1]][0])
        paths.append(path)
    return paths if sum(map(len, paths)) == len(tiles) else None


def _runs(paths: list[list[Coord]], taken: set[Coord]) -> list[int]:
    """Lengths of the maximal runs of tiles not in ``taken`` along each path."""
    runs = []
    for path in paths:
        n = 0
        for t in path:
            if t in taken:
                if n:
                    runs.append(n)
                n = 0
            else:
                n += 1
        if n:
            runs.append(n)
    return runs


def _packs(lengths: list[int], runs: list[int]) -> bool:
    """Whether chains of ``lengths`` fit the free ``runs`` (a run holds chains whose lengths add up to at most
    its own; they lie one after the other along it).

    Exact for chains of one length (each run holds ``run // length``); otherwise a depth-first bin packing,
    longest chain first, that answers True once past ``PACK_STEPS`` steps (not proven not to fit).
    """
    if not lengths:
        return True
    if len(set(lengths)) == 1:
        return sum(r // lengths[0] for r in runs) >= len(lengths)
    todo = sorted(lengths, reverse=True)
    room = sorted(runs, reverse=True)
    if sum(todo) > sum(room) or not room or todo[0] > room[0]:
        return False
    if _first_fit(todo, list(room)):  # the common case, without a search
        return True
    steps = [0]

    def place(i: int) -> bool:
        if i == len(todo):
            return True
        steps[0] += 1
        if steps[0] > PACK_STEPS:
            return True
        tried = set()
        for j, r in enumerate(room):
            if r >= todo[i] and r not in tried:  # runs with the same room left are alike
                tried.add(r)
                room[j] -= todo[i]
                ok = place(i + 1)
                room[j] += todo[i]
                if ok:
                    return True
        return False

    return place(0)


def _first_fit(todo: list[int], room: list[int]) -> bool:
    """Whether first fit, longest chain first, puts every chain of ``todo`` in a run of ``room`` (changed)."""
    for n in todo:
        j = next((j for j, r in enumerate(room) if r >= n), None)
        if j is None:
            return False
        room[j] -= n
    return True


def _fits(paths: list[list[Coord]], taken: set[Coord], later: list[int]) -> Callable[[list[Coord]], bool]:
    """A test of one chain's tiles: whether chains of the ``later`` lengths still fit the runs left free."""
    return lambda tiles: _packs(later, _runs(paths, taken | set(tiles)))


def _search(dev: object, chain: list[str], tiles: list[Coord], pins: dict[str, Coord],
            taken: set[Coord], boxes: _Boxes, fits: Callable[[list[Coord]], bool] | None = None) -> list[Coord] | None:
    """The cheapest placement of ``chain`` (:meth:`_Boxes.cost`; the first in row, column order on ties):
    per start tile, the first path along the device's cascade found depth first; a path ``fits`` refuses is
    skipped (it is asked only of a path that would be the cheapest so far)."""
    steps = [0]

    def ok(core: str, t: Coord) -> bool:
        return t == pins[core] if core in pins else t not in taken

    def extend(path: list[Coord]) -> list[Coord] | None:
        if len(path) == len(chain):
            return path
        steps[0] += 1
        if steps[0] > SEARCH_STEPS:
            return None
        for t in cascade_targets(dev, path[-1]):
            if ok(chain[len(path)], t) and t not in path:
                found = extend(path + [t])
                if found is not None:
                    return found
        return None

    starts = [pins[chain[0]]] if chain[0] in pins else sorted(tiles, key=lambda t: (t[1], t[0]))
    best: tuple[int, list[Coord]] | None = None
    for s in starts:
        if ok(chain[0], s):
            found = extend([s])
            if found is not None:
                cost = boxes.cost(chain, found)
                if (best is None or cost < best[0]) and (fits is None or fits(found)):
                    best = (cost, found)
                    if cost == 0:  # nothing placed shares a fifo with it, or it joins them for free
                        break
    return None if best is None else best[1]


__all__ = ["cascade_pairs", "cascade_paths", "place_chains"]
