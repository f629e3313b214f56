"""Which channel of each link every stream route takes: the switch rules applied to a plan's routes.

A route is a tree of neighbour links; channel ``k`` of a tile's master port feeds channel ``k`` of
the neighbour's facing slave port. Where a switch keeps the channel from the arriving bundle to the
leaving one (the device's switch rules, ``Device.switch_rule``: e.g. an AIE-ML memtile connects
South k only to North k), consecutive hops must take one index. The emitter builds switchbox
connections from this assignment, the plan verifier checks parsed plans with it, and the planner
checks its routing with it, so all three apply the one rule.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from tilelang.devices import Device
from tilelang.devices.layout import LINK_BUNDLES
from tilelang.errors import PlanError
from tilelang.ir.plan import Route

Coord = tuple[int, int]
Hop = tuple[Coord, Coord]


def ordered_links(route: Route) -> list[tuple[Coord, Coord]]:
    """The route's links breadth first from its source (a fixed order)."""
    children: dict[Coord, list[Coord]] = {}
    for a, b in route.links:
        children.setdefault(a, []).append(b)
    out, queue, seen = [], deque([route.source]), {route.source}
    while queue:
        t = queue.popleft()
        for c in sorted(children.get(t, [])):
            out.append((t, c))
            if c not in seen:  # a link back into the tree is listed, not followed (the verifier refuses it)
                seen.add(c)
                queue.append(c)
    return out



def route_hops(name: str, route: Route) -> list[Hop]:
    """The route's links from its source outward, each continuing a path already reached.

    Raises:
        PlanError: a link that does not continue the tree from the route's source.
    """
    reached = {route.source}
    hops = ordered_links(route)
    for a, b in hops:
        if (b[0] - a[0], b[1] - a[1]) not in LINK_BUNDLES or a not in reached:
            raise PlanError(f"route {name!r}: link {a}->{b} does not continue a path from {route.source}")
        reached.add(b)
    return hops


def channel_groups(device: Device, hops: list[Hop]) -> list[list[Hop]]:
    """The route's hops in groups that must use one channel index.

    Two consecutive hops a->b->c share a group when b's switch keeps the channel from the
    arriving bundle to the leaving one (device rule ``"same"``).
    """
    group_of: dict[Hop, list[Hop]] = {}
    groups: list[list[Hop]] = []
    arriving = {b: (a, b) for a, b in hops}
    for a, b in hops:
        prev = arriving.get(a)
        out_bundle = LINK_BUNDLES[(b[0] - a[0], b[1] - a[1])][0]
        if prev is not None:
            in_bundle = LINK_BUNDLES[(prev[1][0] - prev[0][0], prev[1][1] - prev[0][1])][1]
            if device.switch_rule(a, in_bundle, out_bundle) == "same":
                group_of[prev].append((a, b))
                group_of[(a, b)] = group_of[prev]
                continue
        group = [(a, b)]
        groups.append(group)
        group_of[(a, b)] = group
    return groups


def assign_channels(device: Device, routes: Mapping[str, Route]) -> dict[tuple[str, Hop], int]:
    """The channel index each route takes on each of its links.

    Groups of hops that must keep one index are placed first (longest first, then by route
    name), each at the lowest index free on all its links; single hops then fill in. The
    switch rules that force a shared index (memtile pass-through) join links of equal
    capacity that only pass-through flows share, so a routing within link capacities
    always gets an assignment this way.

    Raises:
        PlanError: a link carries more flows than it has channels, or a route is not a tree.
    """
    pending: list[tuple[int, str, int, list[Hop]]] = []
    for name in sorted(routes):
        for i, group in enumerate(channel_groups(device, route_hops(name, routes[name]))):
            pending.append((-len(group), name, i, group))
    taken: dict[Hop, set[int]] = {}
    chosen: dict[tuple[str, Hop], int] = {}
    for _, name, _, group in sorted(pending, key=lambda p: p[:3]):
        cap = min(device.link_capacity(a, b) for a, b in group)
        k = next((k for k in range(cap) if all(k not in taken.get(h, ()) for h in group)), None)
        if k is None:
            a, b = group[0]
            raise PlanError(
                f"route {name!r}: link {a}->{b} has {device.link_capacity(a, b)} channels, all taken "
                f"(by {len(taken.get((a, b), ()))} flows)"
            )
        for h in group:
            taken.setdefault(h, set()).add(k)
            chosen[(name, h)] = k
    return chosen
