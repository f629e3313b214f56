"""Choosing banks: first fit with local improvement, and the cost every chooser minimises.

The cost of a bank assignment is the weighted cycles kernel calls lose to
shared banks (``BankProblem.phases``), plus the weight of every pair of
buffers sharing a bank (``BankProblem.pairs``: contention from
``bank_weights.py`` plus the halves of a double buffer), plus a large cost
per buffer left without a bank. First fit places the largest buffers first,
each into the bank where it costs least (ties: a set's buffers rotate from
the roomiest bank), then applies the best single move or pairwise swap while
one lowers the cost. It is the greedy strategy's chooser, the ILP's warm
start and its fallback.
"""

from __future__ import annotations

from tilelang.plan.bank_weights import Phase
from tilelang.plan.buffers import BankProblem

#: Cost of a buffer left without a bank (placed later in any gap, spanning banks): more than
#: a tile's phases and pairs can add up to (``buffers.PHASE_SCALE`` per phase, ``PAIR_SCALE`` per pair).
UNPLACED = 1e7


def tile_cost(bp: BankProblem, banks: dict[str, int]) -> float:
    """Phases plus pairs of one tile under ``banks`` (buffers missing from it count nowhere)."""
    total = sum(w * p.lost(banks) for w, p in bp.phases)
    for x, y, w in bp.pairs:
        if x in banks and banks.get(x) == banks.get(y):
            total += w
    return total


class _Delta:
    """Cost changes of moving a few buffers of one tile, looking only at the phases and pairs they touch."""

    def __init__(self, bp: BankProblem) -> None:
        self.partners = bp.partners()
        self.phases_of: dict[str, list[tuple[float, Phase]]] = {}
        for w, p in bp.phases:
            for name, _ in p.demand:
                self.phases_of.setdefault(name, []).append((w, p))

    def __call__(self, out: dict[str, int], changes: dict[str, int]) -> float:
        """New cost minus old when the buffers in ``changes`` go to the banks it names."""
        trial = {**out, **changes}
        touched = {id(p): (w, p) for n in changes for w, p in self.phases_of.get(n, ())}
        d = sum(w * (p.lost(trial) - p.lost(out)) for w, p in touched.values())
        seen: set[tuple[str, str]] = set()
        for n in changes:
            for o, w in self.partners.get(n, {}).items():
                key = (min(n, o), max(n, o))
                if key in seen:
                    continue
                seen.add(key)
                before = n in out and o in out and out[n] == out[o]
                after = o in trial and trial[n] == trial[o]
                d += w * (int(after) - int(before))
        return d


def _first_fit_tile(bp: BankProblem) -> dict[str, int]:
    """Largest first, each buffer into the bank where it costs least; then single moves and swaps."""
    banks = bp.mem.banks
    free = list(bp.free)
    delta = _Delta(bp)
    out: dict[str, int] = {}
    start: dict[int, int] = {}
    for it in bp.items:
        if it.set_id not in start:
            start[it.set_id] = max(range(banks), key=lambda b: (free[b], -b))
        want = (start[it.set_id] + it.index) % banks
        rotation = [(want + k) % banks for k in range(banks)]
        cost = [delta(out, {it.name: b}) for b in range(banks)]
        for b in sorted(rotation, key=lambda b: (cost[b], rotation.index(b))):
            if free[b] >= it.size:
                out[it.name] = b
                free[b] -= it.size
                break
    _improve(bp, out, free, delta)
    return out


def _improve(bp: BankProblem, out: dict[str, int], free: list[int], delta: _Delta) -> None:
    """Single moves and pairwise swaps that lower the tile's cost, until none does (bounded passes)."""
    items = [it for it in bp.items if it.name in out]
    for _ in range(2 * len(items)):
        best: tuple[float, tuple] | None = None
        for i, it in enumerate(items):
            for b in range(bp.mem.banks):
                if b != out[it.name] and free[b] >= it.size:
                    g = -delta(out, {it.name: b})
                    if g > 1e-9:
                        best = max(best or (0.0, ()), (g, ("move", i, b)))
            for j in range(i + 1, len(items)):
                jt = items[j]
                bi, bj = out[it.name], out[jt.name]
                if bi == bj or free[bj] + jt.size < it.size or free[bi] + it.size < jt.size:
                    continue
                g = -delta(out, {it.name: bj, jt.name: bi})
                if g > 1e-9:
                    best = max(best or (0.0, ()), (g, ("swap", i, j)))
        if best is None:
            return
        kind, i, k = best[1]
        it = items[i]
        if kind == "move":
            free[out[it.name]] += it.size
            free[k] -= it.size
            out[it.name] = k
        else:
            jt = items[k]
            bi, bj = out[it.name], out[jt.name]
            free[bi] += it.size - jt.size
            free[bj] += jt.size - it.size
            out[it.name], out[jt.name] = bj, bi


def first_fit_banks(problems: list[BankProblem]) -> dict[str, int]:
    """Each buffer into the bank where it costs least (largest first), improved by moves and swaps."""
    out: dict[str, int] = {}
    for bp in problems:
        out.update(_first_fit_tile(bp))
    return out


def bank_cost(problems: list[BankProblem], banks: dict[str, int]) -> float:
    """Every tile's phases and pairs under ``banks``, plus ``UNPLACED`` per buffer left without a bank."""
    total = 0.0
    for bp in problems:
        total += UNPLACED * sum(1 for it in bp.items if it.name not in banks)
        total += tile_cost(bp, banks)
    return total


def conflicts(problems: list[BankProblem], banks: dict[str, int]) -> int:
    """Buffers sharing a bank with another buffer of their set, plus buffers left without a bank."""
    n = 0
    for bp in problems:
        seen: set[tuple[int, int]] = set()
        for it in bp.items:
            if it.name not in banks:
                n += 1
                continue
            key = (it.set_id, banks[it.name])
            n += key in seen
            seen.add(key)
    return n
