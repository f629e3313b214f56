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
    placed: dict[str, Coord] = {}
    for chain in _chains(pairs):
        path = _search(dev, chain, tiles, pins, taken)
        if path is None:
            first = name_of[(chain[0], chain[1])]
            raise PlanError(
                f"cascade {first!r}: no placement puts the chain of cores {' -> '.join(chain)} on cascade "
                f"neighbours of {dev.name} ({len(taken)} compute tiles already taken); {describe_rule(dev)}"
            )
        for c, t in zip(chain, path, strict=True):
            placed[c] = t
            taken.add(t)
    return placed


def _search(dev: object, chain: list[str], tiles: list[Coord], pins: dict[str, Coord],
            taken: set[Coord]) -> list[Coord] | None:
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
    for s in starts:
        if ok(chain[0], s):
            found = extend([s])
            if found is not None:
                return found
    return None


__all__ = ["cascade_pairs", "place_chains"]
