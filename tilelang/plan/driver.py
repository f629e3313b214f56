"""``plan(design)``: every decision, in order, into one immutable Plan.

placement (cores, links, host ends) -> carriage (shared or streamed, DMA
channels) -> tile resources checked -> buffers (memory, bank, offset) ->
routes. Each step is one module with one entry point; the strategy chooses
between the ILPs and the greedy/negotiated fallbacks. Wall times are kept
out of the Plan's JSON (``SolveInfo.seconds`` is 0.0; the times are in
``Plan.timings``) so the same design always gives byte-identical JSON.
"""

from __future__ import annotations

import time
from dataclasses import replace

from tilelang.errors import PlanError
from tilelang.ir.cascade import check_placement
from tilelang.ir.design import Design
from tilelang.ir.plan import BufferPlacement, FifoEnd, FifoPlan, Plan, Route, SolveInfo
from tilelang.ir.stream_channels import assign_channels
from tilelang.ir.verify import verify_design
from tilelang.plan.bank_fit import first_fit_banks
from tilelang.plan.bank_ilp import ilp_banks
from tilelang.plan.bank_weights import contention
from tilelang.plan.buffers import place_buffers
from tilelang.plan.carriage import Carriage, Placement, carry
from tilelang.plan.channels import check_host_ends, check_link_channels
from tilelang.plan.fabric import describe, fabric
from tilelang.plan.greedy import greedy_placement, place_hosts, place_links
from tilelang.plan.negotiated import RouteResult
from tilelang.plan.packing import Packing, pack_core
from tilelang.plan.placement import keep_free, place_ilp
from tilelang.plan.placement_model import objective_of
from tilelang.plan.problem import Coord, Problem, build_problem
from tilelang.plan.resources import check_tiles
from tilelang.plan.route_cuts import Boundary, boundary_of, describe_boundary
from tilelang.plan.routing import Routing, first_pass, route_flows
from tilelang.plan.solve import SolveLog, check_solver, check_time_limit, clock, warn

STRATEGIES = ("ilp", "greedy")
#: Rounds of routing feedback at most (``_feedback``; work, not time, bounds them: deterministic).
FEEDBACK_ROUNDS = 3


def _check_args(design: object, solver: str, time_limit: object, strategy: str) -> str:
    if not isinstance(design, Design):
        raise PlanError(f"tl.plan takes a design (from @tl.design or tl.ir.parse), got {type(design).__name__}")
    if strategy not in STRATEGIES:
        raise PlanError(f"unknown strategy {strategy!r}; use one of {list(STRATEGIES)}")
    check_time_limit(time_limit)
    return check_solver(solver)


def _place(problem: Problem, strategy: str, solver: str, budget: float) -> tuple[Placement, SolveInfo]:
    if strategy == "ilp":
        return place_ilp(problem, solver, budget)
    return greedy_placement(problem), SolveInfo("greedy", "feasible", 0.0)


def _buffers(problem: Problem, carriage: Carriage, placement: Placement, strategy: str, solver: str, budget: float):
    """Buffers and banks; the SolveInfo's objective is the cycles kernel calls are predicted to lose to
    memory banks over one run, summed over cores (the phases under the chosen banks)."""
    core_tiles = set(placement.cores.values())
    local = {buf: name for p in problem.packings for name, _, members in p.clusters() for buf in members}
    weights, phases = contention(problem.design, set(carriage.shared), local)
    if strategy == "ilp":
        chooser, record = ilp_banks(solver, budget)
        bufs, shared_at = place_buffers(problem.device, carriage, core_tiles, chooser, weights=weights, phases=phases)
        info = record.result()
    else:
        bufs, shared_at = place_buffers(
            problem.device, carriage, core_tiles, first_fit_banks, weights=weights, phases=phases
        )
        info = SolveInfo("first-fit", "feasible", 0.0)
    bufs = _split_groups(problem, bufs)
    banks = {name: b.bank for name, b in bufs.items()}
    lost = float(sum(n * ph.lost(banks) for ph, n in phases.items()))
    return bufs, shared_at, replace(info, objective=lost)


def _split_groups(problem: Problem, bufs: dict[str, BufferPlacement]) -> dict[str, BufferPlacement]:
    """Each placed group of local buffers (``Packing.clusters``) replaced by its buffers at their offsets."""
    out = dict(bufs)
    for p in problem.packings:
        for name, _, members in p.clusters():
            group = out.pop(name)
            bank_bytes = problem.device.memory_bytes(group.tile) // problem.device.memory_banks(group.tile)
            for buf, rel in members.items():
                at = group.offset + rel
                out[buf] = BufferPlacement(group.tile, at // bank_bytes, at, p.sizes[buf])
    return dict(sorted(out.items()))


def _packings(design: Design, solver: str, pack: bool, deadline: float) -> tuple[Packing, ...]:
    kernels = {k.name: k for k in design.kernels}
    cores = [c for c in design.cores if c.buffers]
    return tuple(pack_core(c, kernels, solver, _share(deadline, 0.1 / len(cores)), pack) for c in cores)


def _flows(problem: Problem, carriage: Carriage, placement: Placement) -> tuple[list, list[str]]:
    flows, names = [], []
    for f in problem.fifos:
        if f.name in carriage.shared:
            continue
        src = placement.tile_of(f.producer, f.name)
        dests = tuple(dict.fromkeys(placement.tile_of(c, f.name) for c in f.consumers))
        flows.append((src, dests))
        names.append(f.name)
    return flows, names


def _fifo_plans(problem: Problem, carriage: Carriage, placement: Placement, shared_at: dict[str, Coord]) -> dict[str, FifoPlan]:
    out = {}
    for f in problem.fifos:
        shared = shared_at.get(f.name) if f.name in carriage.shared else None

        def end(agent: str, fname: str = f.name, shared: Coord | None = shared) -> FifoEnd:
            ch = None if shared is not None else carriage.channels[(fname, agent)]
            return FifoEnd(agent, placement.tile_of(agent, fname), ch)

        out[f.name] = FifoPlan(f.name, end(f.producer), tuple(end(c) for c in f.consumers), shared)
    return out


def plan(design: Design, solver: str = "cbc", time_limit: float = 60, strategy: str = "ilp", pack: bool = True) -> Plan:
    """Plan a design: placement, buffers and routes (API.md "Planning": ``tl.plan``).

    Args:
        design: a traced or parsed design.
        solver: "cbc" (bundled with PuLP) or "highs" (highspy).
        time_limit: seconds for the whole plan; each ILP runs in a child process
            killed at its share of it, its greedy/negotiated counterpart standing in.
        strategy: "ilp" (the ILPs) or "greedy" (greedy placement, first-fit buffers,
            shortest-path routing; fast, no optimality claim).
        pack: let a core's local buffers whose lifetimes never meet share memory
            (``packing.py``); False keeps every buffer apart.

    Returns:
        The immutable :class:`~tilelang.ir.plan.Plan`; the same design always gives
        the same plan (``to_json`` byte for byte).

    Raises:
        PlanError: a resource ran out (the message names it and who needs it), or bad arguments.
        DesignError: the design itself is invalid.
    """
    solver = _check_args(design, solver, time_limit, strategy)
    verify_design(design)
    start = time.monotonic()
    deadline = clock() + float(time_limit)
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    packings = _packings(design, solver, pack, deadline)
    if packings:
        timings["packing"] = time.monotonic() - t0
    problem = build_problem(design, packings)
    check_link_channels(design)
    check_host_ends(design)

    t0 = time.monotonic()
    # Shares of the time limit are safety nets only (work bounds each solve): generous to the placement,
    # whose models are the largest.
    budget = _share(deadline, 0.5)
    placement, place_info = _place(problem, strategy, solver, budget)
    bad = check_placement(design, placement.cores)
    if bad is not None:  # the ILP's answer must obey the rule it was given; the greedy one never breaks it
        placement, place_info = greedy_placement(problem), SolveInfo("ilp->greedy", "feasible", 0.0, None, None, bad)
    timings["placement"] = time.monotonic() - t0
    t0 = time.monotonic()
    try:
        carriage, buffers, shared_at, buf_info = _resources(problem, placement, strategy, solver, deadline)
    except PlanError as e:
        if strategy != "ilp":
            raise
        # The placement ILP models resources approximately (a memtile's BDs as one pool of 48, shared
        # buffers, locks). If its placement does not fit, its cores stay with the links and host ends placed
        # around them as the greedy placement places them (which checks the BD pools); failing that, the
        # greedy placement of everything may fit.
        resources = None
        links = place_links(problem, placement.cores)
        repaired = Placement(placement.cores, links, place_hosts(problem, placement.cores, links))
        if repaired != placement:  # (its cores passed check_placement above)
            try:
                resources = _resources(problem, repaired, strategy, solver, deadline)
            except PlanError:
                resources = None
        if resources is not None:
            placement = repaired
            place_info = SolveInfo(f"{place_info.method}, links and host ends greedy", "feasible", place_info.seconds,
                                   objective_of(problem, repaired), None,
                                   f"the ILP's links and host ends do not fit ({e}); its cores keep their tiles")
            carriage, buffers, shared_at, buf_info = resources
        else:
            why = f"the ILP placement does not fit ({e}); the greedy placement is used"
            warn(f"placement: {why}")
            placement = greedy_placement(problem)
            place_info = SolveInfo("ilp->greedy", "infeasible-resources", 0.0, None, None, why)
            carriage, buffers, shared_at, buf_info = _resources(problem, placement, strategy, solver, deadline)
    timings["buffers"] = time.monotonic() - t0

    t0 = time.monotonic()
    base, tried = None, ""
    if strategy == "ilp" and place_info.method != "ilp->greedy":
        resources = (carriage, buffers, shared_at, buf_info)
        placement, place_info, resources, base, tried = _feedback(problem, placement, place_info, resources,
                                                                  solver, deadline)
        carriage, buffers, shared_at, buf_info = resources
    try:
        routing = _route(problem, carriage, placement, strategy, solver, deadline, base)
    except PlanError as e:
        # The placement ILP bounds the flows across each column and row boundary and the host ends on each
        # shim's own links to the array, not every link: a placement it finds can still fail to route.
        # When it does not route (after the routing feedback), the greedy one, if different, may.
        greedy = greedy_placement(problem) if strategy == "ilp" else placement
        if greedy == placement:
            raise
        why = f"the ILP placement does not route ({e}){tried}; the greedy placement is used"
        warn(f"placement: {why}")
        placement = greedy
        place_info = SolveInfo("ilp->greedy", "infeasible-routing", 0.0, None, None, why)
        carriage, buffers, shared_at, buf_info = _resources(problem, placement, strategy, solver, deadline)
        routing = _route(problem, carriage, placement, strategy, solver, deadline)
    timings["routing"] = time.monotonic() - t0
    timings["total"] = time.monotonic() - start
    return _assemble(problem, placement, carriage, shared_at, buffers, routing, place_info, buf_info, timings)


def _resources(problem: Problem, placement: Placement, strategy: str, solver: str, deadline: float):
    carriage = carry(problem, placement)
    buffers, shared_at, buf_info = _buffers(problem, carriage, placement, strategy, solver, _share(deadline, 0.15))
    check_tiles(problem.device, carriage, shared_at)
    return carriage, buffers, shared_at, buf_info


def _share(deadline: float, fraction: float) -> float:
    return max(0.5, (deadline - clock()) * fraction)


def _route(problem: Problem, carriage: Carriage, placement: Placement, strategy: str, solver: str, deadline: float,
           base: RouteResult | None = None) -> Routing:
    flows, names = _flows(problem, carriage, placement)
    fab = fabric(problem.device)
    method = "ilp" if strategy == "ilp" else "greedy"
    return route_flows(fab, flows, names, solver, max(0.5, deadline - clock()), method, base)


Resources = tuple[Carriage, dict[str, BufferPlacement], dict[str, Coord], SolveInfo]


def _feedback(problem: Problem, placement: Placement, info: SolveInfo, resources: Resources, solver: str,
              deadline: float) -> tuple[Placement, SolveInfo, Resources, RouteResult | None, str]:
    """Routing feedback into the ILP's placement, before the routing ILP.

    The placement model bounds every column and row boundary as a whole, not each link: on a full array
    (10 x 8 PLIO-fed cascade chains of 4 on xcvc1902) every link of a boundary can be needed and the
    negotiated routing leave one link a channel short. Negotiated congestion is bounded by passes, so
    the links it leaves over capacity are the same on every run and known in seconds, where the routing
    ILP would search until its safety net. While it leaves links over capacity (at most
    ``FEEDBACK_ROUNDS`` rounds), the boundary each such link crosses keeps that many more channels free
    and the host ends and links are placed again by the model (``placement.keep_free``, warm started at
    the last placement, cores held); the first placement whose negotiated routing is legal is routed.
    When none is, or a round changes nothing, the ILP's own placement goes to the routing ILP as before.

    Returns:
        (placement, its SolveInfo, its resources, its negotiated routing for the router or None,
        text for a fallback's message counting the rounds tried).
    """
    fab = fabric(problem.device)
    log = SolveLog("placement")
    reserve: dict[Boundary, int] = {}
    rounds: list[str] = []
    current, current_res, first = placement, resources, None
    for _ in range(FEEDBACK_ROUNDS + 1):
        flows, names = _flows(problem, current_res[0], current)
        try:
            base = first_pass(fab, flows, names, max(0.5, deadline - clock()), "ilp")
        except PlanError:
            break  # a cut proves it: the router says so again below
        first = base if first is None else first
        if base.legal:
            if not rounds:
                return placement, info, resources, base, ""
            return current, _fed_info(problem, current, info, rounds), current_res, base, ""
        if base.clocked or len(rounds) == FEEDBACK_ROUNDS:
            break
        over: dict[Boundary, tuple[int, list[str]]] = {}
        for e, n in sorted(base.overflow.items()):
            b = boundary_of(*fab.links[e])
            seen = over.get(b, (0, []))
            over[b] = (seen[0] + n, [*seen[1], describe(fab.links[e])])
        for b, (n, _) in over.items():
            reserve[b] = reserve.get(b, 0) + n
        new = keep_free(problem, current, reserve, solver, _share(deadline, 0.1), log)
        if new is None or new == current:
            break
        try:
            new_res = _resources(problem, new, "ilp", solver, deadline)
        except PlanError:
            break
        rounds.append("; ".join(
            f"{', '.join(links)} over by {n} after negotiated congestion: {reserve[b]} channel(s) kept free on "
            f"{describe_boundary(b)}" for b, (n, links) in over.items()))
        current, current_res = new, new_res
    tried = f" (negotiated congestion left it over capacity; {len(rounds)} round(s) of routing feedback did not help)"
    return placement, info, resources, first, tried if first is not None and not first.legal else ""


def _fed_info(problem: Problem, placement: Placement, info: SolveInfo, rounds: list[str]) -> SolveInfo:
    """The SolveInfo of a placement from routing feedback: its objective, the gap against the ILP's bound
    (a bound of the model without the kept channels holds with them too), the rounds in the message."""
    obj = objective_of(problem, placement)
    gap = None
    if info.gap is not None and info.objective is not None:
        bound = info.objective * (1.0 - info.gap)
        gap = max(0.0, (obj - bound) / max(obj, 1e-9))
    text = " | ".join(f"round {i + 1}: {r}" for i, r in enumerate(rounds))
    message = f"routing feedback, {len(rounds)} round(s): {text}"
    status = info.status if info.status not in ("optimal", "feasible") else ("optimal" if gap == 0.0 else "feasible")
    return SolveInfo(info.method, status, 0.0, obj, gap, message if not info.message else f"{info.message}; {message}")


def _assemble(
    problem: Problem,
    placement: Placement,
    carriage: Carriage,
    shared_at: dict[str, Coord],
    buffers: dict[str, BufferPlacement],
    routing: Routing,
    place_info: SolveInfo,
    buf_info: SolveInfo,
    timings: dict[str, float],
) -> Plan:
    _, names = _flows(problem, carriage, placement)
    routes: dict[str, Route] = dict(zip(names, routing.routes, strict=True))
    assign_channels(problem.device, routes)  # every hop gets a channel the switches can connect (raises if not)
    r = routing.solve
    route_info = SolveInfo(r.method, r.status, 0.0, r.objective, routing.gap, r.message)
    solves = {"placement": _zero(place_info), "buffers": _zero(buf_info), "routing": route_info}
    solves.update({f"packing_{p.core}": _zero(p.info) for p in problem.packings})
    out = Plan(
        design=problem.design,
        placement=dict(placement.cores),
        link_tiles=dict(placement.links),
        fifos=_fifo_plans(problem, carriage, placement, shared_at),
        buffers=buffers,
        routes=routes,
        solves=solves,
        timings=dict(timings),
    )
    return out


def _zero(info: SolveInfo) -> SolveInfo:
    return SolveInfo(info.method, info.status, 0.0, info.objective, info.gap, info.message)
