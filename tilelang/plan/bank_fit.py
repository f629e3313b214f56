"""Choosing banks: first fit with local improvement, and the cost every chooser minimises.

The cost of a bank assignment is the weight of every pair of buffers sharing a
bank (``BankProblem.pairs``: contention from ``bank_weights.py`` plus the
halves of a double buffer) and a large cost per buffer left without a bank.
First fit places the largest buffers first, each into the bank where it
costs least (ties: a set's buffers rotate from the roomiest bank), then
applies the best single move or pairwise swap while one lowers the cost. It
is the greedy strategy's chooser, the ILP's warm start and its fallback.
"""

from __future__ import annotations

from tilelang.plan.buffers import BankProblem, Item

#: Cost of a buffer left without a bank (placed later in any gap, spanning banks): more than
#: any buffer's pair weights can add up to.
UNPLACED = 1e5


def _first_fit_tile(bp: BankProblem) -> dict[str, int]:
    """Largest first, each buffer into the bank where it costs least; then single moves and swaps."""
    banks = bp.mem.banks
    free = list(bp.free)
    partners = bp.partners()
    out: dict[str, int] = {}
    start: dict[int, int] = {}
    for it in bp.items:
        if it.set_id not in start:
            start[it.set_id] = max(range(banks), key=lambda b: (free[b], -b))
        want = (start[it.set_id] + it.index) % banks
        rotation = [(want + k) % banks for k in range(banks)]
        mine = partners.get(it.name, {})
        cost = [sum(w for o, w in mine.items() if out.get(o) == b) for b in range(banks)]
        for b in sorted(rotation, key=lambda b: (cost[b], rotation.index(b))):
            if free[b] >= it.size:
                out[it.name] = b
                free[b] -= it.size
                break
    _improve(bp, out, free)
    return out


def _improve(bp: BankProblem, out: dict[str, int], free: list[int]) -> None:
    """Single moves and pairwise swaps that lower the tile's cost, until none does (bounded passes)."""
    partners = bp.partners()
    items = [it for it in bp.items if it.name in out]

    def gain(it: Item, b: int, skip: str = "") -> float:
        mine = partners.get(it.name, {})
        here = sum(w for o, w in mine.items() if out.get(o) == out[it.name] and o != skip)
        there = sum(w for o, w in mine.items() if out.get(o) == b and o != skip)
        return here - there

    for _ in range(2 * len(items)):
        best: tuple[float, tuple] | None = None
        for i, it in enumerate(items):
            for b in range(bp.mem.banks):
                if b != out[it.name] and free[b] >= it.size and gain(it, b) > 1e-9:
                    best = max(best or (0.0, ()), (gain(it, b), ("move", i, b)))
            for jt in items[i + 1 :]:
                bi, bj = out[it.name], out[jt.name]
                if bi == bj or free[bj] + jt.size < it.size or free[bi] + it.size < jt.size:
                    continue
                g = gain(it, bj, jt.name) + gain(jt, bi, it.name)
                if g > 1e-9:
                    best = max(best or (0.0, ()), (g, ("swap", i, items.index(jt))))
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
    """The weight of every pair sharing a bank, plus ``UNPLACED`` per buffer left without one."""
    total = 0.0
    for bp in problems:
        total += UNPLACED * sum(1 for it in bp.items if it.name not in banks)
        for x, y, w in bp.pairs:
            if x in banks and banks.get(x) == banks.get(y):
                total += w
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
