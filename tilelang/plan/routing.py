"""Routing of stream flows: ``tl.route`` and the router the planner uses.

``route(device, flows)`` takes raw flows ``[(source, [dests]), ...]`` and
returns a :class:`Routing`. Three methods share one result type:

- ``"ilp"`` (default): the congestion-aware ILP of ``route_ilp.py``, warm
  started and bounded by negotiated congestion, in a child process killed at
  the deadline (falling back to the negotiated routing);
- ``"negotiated"``: PathFinder alone (the baseline);
- ``"greedy"``: shortest trees one flow at a time over free channels,
  PathFinder if that fails.

Infeasible flow sets raise PlanError naming the link that ran out; a set
that a cut proves infeasible (``route_cuts.py``) is rejected before any LP,
naming the worst cut.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import PlanError
from tilelang.ir.plan import Route, SolveInfo
from tilelang.plan.fabric import Coord, Fabric, describe, fabric, prune_tree
from tilelang.plan.negotiated import Flow, RouteResult, negotiate, sequential, tidy
from tilelang.plan.route_cuts import worst_cut
from tilelang.plan.solve import SolveLog, check_solver, check_time_limit, clock

METHODS = ("ilp", "negotiated", "greedy")


@dataclass(frozen=True, eq=False)
class Routing:
    """Routes of a flow set.

    Attributes:
        device: the device routed on.
        routes: one Route per flow, in input order.
        gap: proven relative optimality gap of the objective (0.0 when optimal;
            None when no bound is known, e.g. for the heuristics).
        solve: how the routing was found.
        objective: wirelength plus the congestion penalty, as minimised.
    """

    device: Device
    routes: tuple[Route, ...]
    gap: float | None
    solve: SolveInfo
    objective: float | None = None

    def link_usage(self) -> dict[tuple[Coord, Coord], int]:
        """Channels in use on each directed link any route uses."""
        use: Counter = Counter()
        for r in self.routes:
            for link in r.links:
                use[link] += 1
        return dict(sorted(use.items()))

    @property
    def wirelength(self) -> int:
        """Links used, summed over flows (a broadcast tree counts each of its links once)."""
        return sum(len(r.links) for r in self.routes)

    @property
    def max_utilisation(self) -> float:
        """The largest channels-used / channels-available over all links (0.0 with no links)."""
        use = self.link_usage()
        return max((n / self.device.link_capacity(a, b) for (a, b), n in use.items()), default=0.0)

    @property
    def max_use(self) -> int:
        """The most channels in use on one link."""
        return max(self.link_usage().values(), default=0)


def check_flows(fab: Fabric, flows: object) -> list[Flow]:
    """Validate raw flows ``[(source, [dests]), ...]``.

    Raises:
        PlanError: a malformed flow or a tile off the array.
    """
    if not isinstance(flows, Sequence) or isinstance(flows, str):
        raise PlanError(f"flows must be a list of (source, [dests]), got {type(flows).__name__}")
    out = []
    for i, fl in enumerate(flows):
        if not (isinstance(fl, Sequence) and len(fl) == 2 and isinstance(fl[1], Sequence) and not isinstance(fl[1], str)):
            raise PlanError(f"flow {i}: expected (source, [dests]), got {fl!r}")
        src = fab.check_tile(fl[0], f"flow {i} source")
        dests = tuple(dict.fromkeys(fab.check_tile(d, f"flow {i} destination") for d in fl[1]))
        if not dests:
            raise PlanError(f"flow {i} from {src} has no destination")
        out.append((src, dests))
    return out


def no_routing_message(fab: Fabric, flows: Sequence[Flow], result: RouteResult, names: Sequence[str]) -> str:
    """PlanError text naming the most over-used link (or the unroutable flow)."""
    for i, t in enumerate(result.trees):
        if t is None:
            src, dests = flows[i]
            return f"no routing: flow {names[i]} from {src} to {list(dests)} has no path on {fab.device.name}"
    e, over = max(result.overflow.items(), key=lambda kv: (kv[1], -kv[0]))
    users = [names[i] for i, t in enumerate(result.trees) if t and e in t]
    cap = fab.cap[e]
    return (
        f"no routing: link {describe(fab.links[e])} needs {cap + over} channels, has {cap} "
        f"(flows {', '.join(users)})"
    )


def to_routes(fab: Fabric, flows: Sequence[Flow], trees: Sequence[Sequence[int]]) -> tuple[Route, ...]:
    out = []
    for (src, dests), t in zip(flows, trees, strict=True):
        kept = prune_tree(fab, src, dests, t)
        out.append(Route(src, dests, tuple(fab.links[e] for e in kept)))
    return tuple(out)


def _heuristic(fab: Fabric, flows: list[Flow], method: str, time_limit: float) -> RouteResult:
    if method == "greedy":
        res = sequential(fab, flows)
        if res.legal:
            return res
    # Under the ILP, negotiation is only the warm start: leave most of the time to the ILP.
    return negotiate(fab, flows, time_limit=time_limit * (0.3 if method == "ilp" else 1.0))


def first_pass(fab: Fabric, flows: list[Flow], names: Sequence[str], time_limit: float = 60,
               method: str = "ilp") -> RouteResult:
    """The cut check and the heuristic routing :func:`route_flows` starts from (for "ilp": negotiated
    congestion, the ILP's warm start). Its work is bounded by passes, so when it is not legal its
    ``overflow`` names the same links on every run (unless ``clocked``: its safety net fired).

    Args:
        fab: the fabric.
        flows: validated (source, dests) flows.
        names: a name per flow, for messages.
        time_limit: seconds for the whole routing (the heuristic's safety net is a share of it).
        method: "ilp", "negotiated" or "greedy".

    Returns:
        The heuristic :class:`~tilelang.plan.negotiated.RouteResult`.

    Raises:
        PlanError: an unknown method, or a cut proves that no routing exists.
    """
    if method not in METHODS:
        raise PlanError(f"unknown routing method {method!r}; use one of {list(METHODS)}")
    short = worst_cut(fab, flows, names)
    if short is not None:
        raise PlanError(short)
    return _heuristic(fab, flows, method, time_limit)


def route_flows(
    fab: Fabric,
    flows: list[Flow],
    names: Sequence[str],
    solver: str = "cbc",
    time_limit: float = 60,
    method: str = "ilp",
    base: RouteResult | None = None,
) -> Routing:
    """Route validated flows (the planner's entry point).

    Args:
        fab: the fabric.
        flows: validated (source, dests) flows.
        names: a name per flow, for messages.
        solver: "cbc" or "highs" (for the ILP).
        time_limit: seconds for the whole routing.
        method: "ilp", "negotiated" or "greedy".
        base: :func:`first_pass` of these flows and method, if already made (it is not made again).

    Returns:
        The :class:`Routing`.

    Raises:
        PlanError: no legal routing was found (naming the over-used link).
    """
    start = clock()
    if base is None:
        base = first_pass(fab, flows, names, time_limit, method)
    if method != "ilp":
        log = SolveLog("routing")
        if base.clocked:
            log.fired("negotiated congestion")
        if not base.legal:
            raise PlanError(no_routing_message(fab, flows, base, names))
        trees = tidy(fab, flows, base.trees) if method == "greedy" else base.trees  # type: ignore[arg-type]
        info = log.info(method, "feasible", float(sum(len(t) for t in trees)), None)
        return Routing(fab.device, to_routes(fab, flows, trees), None, info)
    from tilelang.plan.route_ilp import ilp_route

    left = max(0.5, time_limit - (clock() - start))
    return ilp_route(fab, flows, names, base, solver, left)


def route(device: str | Device, flows: object, solver: str = "cbc", time_limit: float = 60) -> Routing:
    """Route raw stream flows on a device (API.md "Planning": ``tl.route``).

    Args:
        device: a device name or Device.
        flows: ``[(source, [dests]), ...]`` with tiles as (col, row).
        solver: "cbc" or "highs".
        time_limit: seconds; the ILP runs in a child process killed at this deadline,
            the negotiated-congestion routing standing in if it has nothing better.

    Returns:
        A :class:`Routing` with one Route per flow, in input order.

    Raises:
        PlanError: malformed flows, an unknown solver, or no legal routing.
    """
    dev = lookup_device(device)
    solver = check_solver(solver)
    check_time_limit(time_limit)
    fab = fabric(dev)
    checked = check_flows(fab, flows)
    names = [f"#{i}" for i in range(len(checked))]
    return route_flows(fab, checked, names, solver, float(time_limit), "ilp")
