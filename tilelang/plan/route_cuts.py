"""Cut bounds: cheap proofs that no routing exists, checked before any LP.

A cut splits the tiles in two; every flow with its source on one side and a
destination on the other needs at least one channel on the links crossing the
cut in that direction (a broadcast tree crosses at least once, whatever it
does after). If more flows need to cross than those links have channels, no
routing exists. The cuts tried are every column boundary (eastward and
westward), every row boundary (northward and southward) and every single tile
(flows leaving it, flows entering it). Capacities are the device's link
capacities (``Fabric.cap``, from ``Device.link_capacity``), so the bound holds
for any topology the device declares. When all of them have room, every run
of the shim row's columns is tried too (``_shim_row_interval``).

Each cut costs one pass over the flows; the worst cut (most channels short,
then the fewest channels, then position) is reported, so the message is the
same on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from tilelang.plan.fabric import Coord, Fabric, describe
from tilelang.plan.negotiated import Flow

#: Flow names listed in a message before "and N more".
SHOWN = 8


@dataclass(frozen=True)
class Cut:
    """A set of tiles and a direction: flows out of the set (``outward``) or into it.

    The set is the tiles with coordinate ``axis`` (0: column, 1: row) at most ``bound``,
    or, with ``tile`` given, that one tile.

    Attributes:
        order: position in the deterministic list of cuts (the last tie-break).
        what: how a message names it.
        outward: True for flows from inside to outside.
        axis: 0 or 1 for a boundary cut.
        bound: the last column or row inside.
        tile: the tile of a single-tile cut.
    """

    order: int
    what: str
    outward: bool
    axis: int = 0
    bound: int = 0
    tile: Coord | None = None

    def inside(self, t: Coord) -> bool:
        return t == self.tile if self.tile is not None else t[self.axis] <= self.bound

    def crosses(self, a: Coord, b: Coord) -> bool:
        ia, ib = self.inside(a), self.inside(b)
        return (ia and not ib) if self.outward else (ib and not ia)

    def needs(self, flow: Flow) -> bool:
        src, dests = flow
        if self.outward:
            return self.inside(src) and any(not self.inside(d) for d in dests)
        return not self.inside(src) and any(self.inside(d) for d in dests)


def _cuts(fab: Fabric) -> list[Cut]:
    dev = fab.device
    specs: list[tuple[str, bool, int, int, Coord | None]] = []
    for axis, n in ((0, dev.cols), (1, dev.rows)):
        for k in range(n - 1):
            for outward in (True, False):
                specs.append((describe_boundary((axis, outward, k)), outward, axis, k, None))
    for t in dev.tiles():
        specs.append((f"the links out of tile ({t[0]},{t[1]})", True, 0, 0, t))
        specs.append((f"the links into tile ({t[0]},{t[1]})", False, 0, 0, t))
    return [Cut(i, *spec) for i, spec in enumerate(specs)]


def _demand(fab: Fabric, flows: Sequence[Flow], cuts: list[Cut]) -> list[int]:
    """Flows that must cross each cut, counted in one pass over the flows (ranges for the boundaries)."""
    dev = fab.device
    # per axis and direction, +1 on [lo, hi) over the boundaries a flow must cross
    diff = {(axis, out): [0] * (n + 1) for axis, n in ((0, dev.cols), (1, dev.rows)) for out in (True, False)}
    leaving: dict[Coord, int] = {}
    entering: dict[Coord, int] = {}
    for flow in flows:
        src, dests = flow
        for axis, outward, lo, hi in _spans(flow):
            diff[(axis, outward)][lo] += 1
            diff[(axis, outward)][hi] -= 1
        if any(d != src for d in dests):
            leaving[src] = leaving.get(src, 0) + 1
        for d in dests:
            if d != src:
                entering[d] = entering.get(d, 0) + 1
    running = {key: list(accumulate(v)) for key, v in diff.items()}
    out = []
    for cut in cuts:
        if cut.tile is not None:
            out.append((leaving if cut.outward else entering).get(cut.tile, 0))
        else:
            out.append(running[(cut.axis, cut.outward)][cut.bound])
    return out


@lru_cache(maxsize=8)
def _capacity(fab: Fabric) -> tuple[list[Cut], list[tuple[int, list[int]]]]:
    """The cuts of a fabric, with the channels and links across each (fabrics are cached and immutable)."""
    cuts = _cuts(fab)
    across: dict[tuple, list[int]] = {}
    for e, (a, b) in enumerate(fab.links):
        across.setdefault(("out", a), []).append(e)
        across.setdefault(("in", b), []).append(e)
        for axis in (0, 1):
            for k in range(min(a[axis], b[axis]), max(a[axis], b[axis])):
                across.setdefault((axis, b[axis] > a[axis], k), []).append(e)
    out = []
    for cut in cuts:
        key = ("out" if cut.outward else "in", cut.tile) if cut.tile is not None else (cut.axis, cut.outward, cut.bound)
        links = across.get(key, [])
        out.append((sum(fab.cap[e] for e in links), links))
    return cuts, out


def worst_cut(fab: Fabric, flows: Sequence[Flow], names: Sequence[str]) -> str | None:
    """A PlanError message for the worst violated cut, or None when every cut has room.

    Args:
        fab: the fabric.
        flows: validated (source, dests) flows.
        names: a name per flow, for the message.

    Returns:
        The message naming the cut, its channels, the flows that must cross it; None if no cut is short.
    """
    if not flows:
        return None
    cuts, room = _capacity(fab)
    worst: tuple | None = None
    for cut, need, (cap, links) in zip(cuts, _demand(fab, flows, cuts), room, strict=True):
        if need <= cap:
            continue
        key = (-(need - cap), cap, cut.order)
        if worst is None or key < worst[0]:
            worst = (key, cut, [i for i, f in enumerate(flows) if cut.needs(f)], links, cap)
    if worst is None:
        return _shim_row_interval(fab, flows, names)
    _, cut, users, links, cap = worst
    shown = ", ".join(names[i] for i in users[:SHOWN]) + (f" and {len(users) - SHOWN} more" if len(users) > SHOWN else "")
    advice = "spread the flows' endpoints or use fewer flows"
    if len(links) == 1:
        return (
            f"no routing: link {describe(fab.links[links[0]])} needs {len(users)} channels, has {cap} "
            f"(proven: it is the only link across {cut.what}; flows {shown}); {advice}"
        )
    over = ", ".join(describe(fab.links[e]) for e in links[:4]) + (", ..." if len(links) > 4 else "")
    return (
        f"no routing: {len(users)} flows must cross {cut.what}, which has {cap} channels "
        f"({len(links)} links: {over}) (proven by a cut: flows {shown}); {advice}"
    )


def _shim_row_interval(fab: Fabric, flows: Sequence[Flow], names: Sequence[str]) -> str | None:
    """The worst violated cut around a run of shim-row tiles (columns ``a`` to ``b`` of the shim row), flows
    into it or out of it, checked once every column, row and tile cut has room.

    Host ends all sit on shims, so the shim row is where their streams crowd: on a full VC1902 the 200
    streams of 20 x 10 cascade chains of 2 fill all 200 channels down into the shim row, and columns 0-11
    then bring 48 streams down for PL shims that take at most 36, more than the one shim-row link east can
    carry away. No whole column, row or tile cut shows that; the run of columns 12-49 does (its links in
    carry 156 channels, and 164 streams end there).
    """
    dev = fab.device
    rows = sorted({t[1] for t in dev.tiles("shim")})
    if len(rows) != 1:
        return None
    row = rows[0]
    touching = [(i, f) for i, f in enumerate(flows) if f[0][1] == row or any(d[1] == row for d in f[1])]
    if not touching:
        return None
    cap_in: dict[int, int] = {}  # column -> channels of links from off the row into its shim-row tile
    cap_out: dict[int, int] = {}
    east: dict[int, tuple[int, int]] = {}  # column c -> (channels c -> c+1, channels c+1 -> c) along the row
    for e, (a, b) in enumerate(fab.links):
        if a[1] == row and b[1] == row:
            lo = min(a[0], b[0])
            fwd, back = east.get(lo, (0, 0))
            east[lo] = (fwd + fab.cap[e], back) if b[0] > a[0] else (fwd, back + fab.cap[e])
        elif b[1] == row:
            cap_in[b[0]] = cap_in.get(b[0], 0) + fab.cap[e]
        elif a[1] == row:
            cap_out[a[0]] = cap_out.get(a[0], 0) + fab.cap[e]
    worst: tuple | None = None
    for a in range(dev.cols):
        for b in range(a, dev.cols):
            def inside(t: Coord, a: int = a, b: int = b) -> bool:
                return t[1] == row and a <= t[0] <= b
            for outward in (False, True):
                users = [i for i, (src, dests) in touching
                         if (inside(src) and any(not inside(d) for d in dests) if outward
                             else not inside(src) and any(inside(d) for d in dests))]
                if not users:
                    continue
                side = cap_out if outward else cap_in
                cap = sum(side.get(c, 0) for c in range(a, b + 1))
                cap += (east.get(a - 1, (0, 0))[1 if outward else 0] if a > 0 else 0)
                cap += (east.get(b, (0, 0))[0 if outward else 1] if b < dev.cols - 1 else 0)
                if len(users) > cap:
                    key = (-(len(users) - cap), cap, a, b, outward)
                    if worst is None or key < worst[0]:
                        worst = (key, users, cap, a, b, outward)
    if worst is None:
        return None
    _, users, cap, a, b, outward = worst
    shown = ", ".join(names[i] for i in users[:SHOWN]) + (f" and {len(users) - SHOWN} more" if len(users) > SHOWN else "")
    what = f"the shim row's columns {a}-{b}" if a != b else f"the shim row's column {a}"
    verb = "leave" if outward else "end in"
    return (f"no routing: {len(users)} flows {verb} {what}, whose links {'out of' if outward else 'into'} them have "
            f"{cap} channels (proven by a cut: flows {shown}); spread the flows' endpoints or use fewer flows")


Boundary = tuple[int, bool, int]  # (axis, outward, bound): a column (0) or row (1) boundary cut and its direction


def boundaries(flow: Flow) -> list[Boundary]:
    """The column and row boundary cuts ``flow`` must cross, each with its direction (as :func:`worst_cut`
    counts them): a tree from its source crosses every boundary between the source and its farthest
    destination on each side, once."""
    return [(axis, outward, k) for axis, outward, lo, hi in _spans(flow) for k in range(lo, hi)]


def boundary_of(a: Coord, b: Coord) -> Boundary:
    """The column or row boundary cut (with its direction) that the link ``a -> b`` between 4-neighbours crosses."""
    axis = 0 if a[1] == b[1] else 1
    return axis, b[axis] > a[axis], min(a[axis], b[axis])


def describe_boundary(boundary: Boundary) -> str:
    """How a message names a boundary cut and its direction (as :func:`worst_cut` does)."""
    axis, outward, k = boundary
    word, ways = ("columns", ("eastward", "westward")) if axis == 0 else ("rows", ("northward", "southward"))
    return f"the boundary between {word} {k} and {k + 1}, {ways[0] if outward else ways[1]}"


def _spans(flow: Flow) -> list[tuple[int, bool, int, int]]:
    """(axis, outward, lo, hi): per axis and direction, the boundaries ``lo`` to ``hi - 1`` a tree from the
    flow's source must cross to reach its farthest destination on that side (none when ``lo == hi``)."""
    src, dests = flow
    out = []
    for axis in (0, 1):
        far = max(d[axis] for d in dests)
        near = min(d[axis] for d in dests)
        if far > src[axis]:
            out.append((axis, True, src[axis], far))
        if near < src[axis]:
            out.append((axis, False, near, src[axis]))
    return out


class BoundaryLoad:
    """Flows placed so far against the channels of every column and row boundary, per direction: the cut
    bound of :func:`worst_cut`, kept incrementally so a placement can choose endpoints that leave it room.

    Args:
        fab: the fabric whose link capacities (``Device.link_capacity``) give each boundary's channels.
    """

    def __init__(self, fab: Fabric) -> None:
        cuts, room = _capacity(fab)
        self.cap = {(c.axis, c.outward, c.bound): cap for c, (cap, _) in zip(cuts, room, strict=True)
                    if c.tile is None}
        self.load = dict.fromkeys(self.cap, 0)

    def over(self, flow: Flow) -> int:
        """Boundaries ``flow`` would take beyond their channels if added."""
        return sum(self.load[b] >= self.cap[b] for b in boundaries(flow))

    def add(self, flow: Flow, sign: int = 1) -> None:
        """Count ``flow`` in (``sign`` 1) or out (-1)."""
        for b in boundaries(flow):
            self.load[b] += sign

    def overfull(self) -> bool:
        """Whether some boundary has more flows than channels."""
        return any(n > self.cap[b] for b, n in self.load.items())

    def full(self) -> bool:
        """Whether some boundary that flows cross has no channel left."""
        return any(n and n >= self.cap[b] for b, n in self.load.items())

    def crowding(self, flow: Flow) -> float:
        """The summed share of channels taken on the boundaries ``flow`` crosses."""
        return sum(self.load[b] / max(self.cap[b], 1) for b in boundaries(flow))
