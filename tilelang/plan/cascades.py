"""Placing cores joined by cascades: the two ends of every cascade on tiles the device's cascade connects.

The rule is device data (``tilelang.devices.cascade_rules``): AIE1's fixed snake, AIE-ML's east or south.
The placement ILP adds it as a constraint family (``PlacementModel.cascades``); the greedy placement places
each chain of cascaded cores first, by a depth-first search over the device's cascade graph
(:func:`place_chains`), and the driver checks the final placement (``check_placement``).
"""

from __future__ import annotations

from tilelang.devices.cascade_rules import cascade_targets, describe_rule
from tilelang.errors import PlanError
from tilelang.ir.cascade import cascade_ends

Coord = tuple[int, int]

#: Search steps per chain before giving up (each step tries one tile for one core).
SEARCH_STEPS = 200_000


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
    for chain in _chains(pairs):
        path = _search(dev, chain, tiles, pins, taken, boxes)
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


def _search(dev: object, chain: list[str], tiles: list[Coord], pins: dict[str, Coord],
            taken: set[Coord], boxes: _Boxes) -> list[Coord] | None:
    """The cheapest placement of ``chain`` (:meth:`_Boxes.cost`; the first in row, column order on ties):
    per start tile, the first path along the device's cascade found depth first."""
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
                if best is None or cost < best[0]:
                    best = (cost, found)
                if cost == 0:  # nothing placed shares a fifo with it, or it joins them for free
                    break
    return None if best is None else best[1]


__all__ = ["cascade_pairs", "place_chains"]
