"""The logical grid a design's core names spell, and whether a placement keeps it.

Cores named ``<prefix>_<i>_<j>`` (the library's ``core_<row>_<col>``, IRON's habit) that fill a whole
``R x Q`` rectangle of indices form a logical grid. A placement keeps it when core ``(i, j)`` sits at
tile ``(c0 + j, r0 + i)`` for one origin ``(c0, r0)``: logical columns on physical columns, logical
rows on physical rows, in order (IRON's whole-array designs put core row ``i`` on tile row ``2 + i``).
The planner prefers such a placement among those its objective ties (``tilelang/plan/placement_grid.py``);
``plan.report()`` says when the placement does not keep the grid.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_NAME = re.compile(r"^(.*)_(\d+)_(\d+)$")

Coord = tuple[int, int]


def logical_grid(cores: Iterable[str]) -> dict[str, Coord] | None:
    """core -> (row, column) when every core's name is ``<prefix>_<i>_<j>``, one prefix, filling a rectangle.

    Args:
        cores: the design's core names.

    Returns:
        The grid position of each core, or None (fewer than two cores, other names, a ragged grid).
    """
    names = list(cores)
    found = {c: _NAME.match(c) for c in names}
    if len(names) < 2 or not all(found.values()) or len({m.group(1) for m in found.values()}) != 1:
        return None
    grid = {c: (int(m.group(2)), int(m.group(3))) for c, m in found.items()}
    rows = sorted({i for i, _ in grid.values()})
    cols = sorted({j for _, j in grid.values()})
    full = set(grid.values()) == {(i, j) for i in rows for j in cols} and len(grid) == len(rows) * len(cols)
    consecutive = rows == list(range(rows[0], rows[0] + len(rows))) and cols == list(range(cols[0], cols[0] + len(cols)))
    return grid if full and consecutive else None


def neighbours(grid: Mapping[str, Coord]) -> list[tuple[str, str, Coord]]:
    """(core, its right or upper neighbour, the tile offset between them when the grid is kept)."""
    at = {pos: c for c, pos in grid.items()}
    out = []
    for c, (i, j) in sorted(grid.items(), key=lambda kv: kv[1]):
        if (i, j + 1) in at:
            out.append((c, at[i, j + 1], (1, 0)))
        if (i + 1, j) in at:
            out.append((c, at[i + 1, j], (0, 1)))
    return out


def grid_deviation(grid: Mapping[str, Coord], tiles: Mapping[str, Coord]) -> int:
    """Sum over grid neighbours of how far their tile offset is from the kept grid's (0 exactly when kept)."""
    total = 0
    for a, b, (dc, dr) in neighbours(grid):
        (ca, ra), (cb, rb) = tiles[a], tiles[b]
        total += abs(cb - ca - dc) + abs(rb - ra - dr)
    return total


def grid_note(cores: Mapping[str, Coord]) -> str | None:
    """One line for a plan's report: whether the placement keeps the cores' logical grid (None: no grid)."""
    grid = logical_grid(cores)
    if grid is None:
        return None
    rows = 1 + max(i for i, _ in grid.values()) - min(i for i, _ in grid.values())
    cols = 1 + max(j for _, j in grid.values()) - min(j for _, j in grid.values())
    deviation = grid_deviation(grid, cores)
    if deviation == 0:
        return f"logical grid {rows}x{cols} kept: core (i, j) on tile (c0 + j, r0 + i)"
    return (f"logical grid {rows}x{cols} not kept: core (i, j) is not on tile (c0 + j, r0 + i) (neighbour offsets "
            f"off by {deviation} tiles in all); the placement ILP keeps the grid only among layouts its objective ties")
