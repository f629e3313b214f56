"""Where every cycle went: the critical path of a timed run, by cause, and a one-line verdict.

Computed after the run from what it recorded (per-core busy, bank and stall
cycles, the cycles a core waited before its first call, per-channel busy
cycles, the host moves' issue and completion); nothing is added to the event
loop.

The critical path follows the core that finished last (ties: the busiest,
then by name). From cycle 0 to the end of the run it is, exactly:

- host dispatch: the cycles before anything starts (``dispatch_overhead``);
- fill: the core's waits before its first input arrived (the pipeline filling), named by the busiest
  resource the first input comes through (channels and cores upstream, through cores to their inputs);
- kernel compute and bank conflicts: its kernel calls (``CoreStats.busy``
  split by ``CoreStats.banks``);
- waiting on a fifo: every later stall, per fifo, charged to what feeds the
  fifo (input side: the DMA channels and cores upstream; output side: those
  downstream), named by the busiest of them;
- drain: from the core's end to the run's end (the last results reaching DDR).

A core's time from its start to its end is its busy plus its stall cycles
(acquires and kernel calls are the only things that take time), so the shares
add up to the run's cycles. A design without cores is all data movement.

One definition of utilisation throughout: the busy cycles of a resource over
the run's cycles (a core is busy in kernel calls, a DMA channel while it moves
data). A kernel's "% of MAC peak" is the MACs of one call over the MACs the
core could do in that call's cycles (alone: no bank conflict); the design's
"% of device peak" is every call's MACs over what every core of the device
could do in the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.bound import floor
from simulator.cost import kernel_cycles
from simulator.result import UTILISATION
from tilelang.errors import SimulationError
from tilelang.ir.design import Core, call_counts
from tilelang.ir.kernel import Kernel, OpKind
from tilelang.ir.plan import Plan


@dataclass(frozen=True)
class Share:
    """One cause's part of the critical path.

    Attributes:
        cause: "host dispatch", "fill", "kernel compute", "bank conflicts",
            "waiting on fifo <name> (input)" / "(output)", "drain" or "data movement".
        cycles: its cycles on the path.
        detail: what it means here (the kernel's efficiency, the feeding channel and its utilisation).
        resource: the busiest resource behind a wait ("" when none), for the verdict.
        utilisation: that resource's utilisation.
    """

    cause: str
    cycles: int
    detail: str = ""
    resource: str = ""
    utilisation: float = 0.0


@dataclass(frozen=True)
class Explanation:
    """The result of :func:`explain`.

    Attributes:
        cycles: the run's cycles (the shares add up to them).
        seconds: the same at the device clock.
        path: the agent the critical path follows ("core worker (0,2)", or "host moves").
        shares: the causes, in path order (zero shares left out).
        verdict: one line: what bounds the run and by how much.
        device_peak: every call's MACs over the device's MAC capacity in the run (None: no MACs known).
        kernel_peak: the path core's main kernel alone, % of MAC peak as a fraction (None: no MACs).
        floor: cycles no run of the design can beat, from the design alone (``simulator.bound.floor``).
        floor_cause: what sets the floor, in words.
        sequence: the runtime sequence's pushes and waits in one line (``Stats.sequence_line``; "" without one).
    """

    cycles: int
    seconds: float
    path: str
    shares: tuple[Share, ...]
    verdict: str
    device_peak: float | None
    kernel_peak: float | None
    floor: int = 0
    floor_cause: str = ""
    sequence: str = ""

    def share(self, cause: str) -> int:
        """Cycles of the shares whose cause starts with ``cause``."""
        return sum(s.cycles for s in self.shares if s.cause.startswith(cause))

    def text(self) -> str:
        """A readable table: header, one line per share, the verdict."""
        total = max(1, self.cycles)
        lines = [f"where the {self.cycles} cycles ({self.seconds * 1e6:.2f} us) went, along {self.path}",
                 f"({UTILISATION})", ""]
        for s in self.shares:
            lines.append(f"  {s.cause:<34} {s.cycles:>12} {s.cycles / total:>7.1%}  {s.detail}")
        peak = "no MACs" if self.device_peak is None else f"{self.device_peak:.1%} of device MAC peak"
        lines += ["", f"verdict: {self.verdict}", f"design: {peak}"]
        if self.floor:
            lines.append(f"floor: {self.floor} cycles ({self.floor_cause}); the run is "
                         f"{self.cycles / self.floor:.2f}x its floor")
        if self.sequence:
            lines.append(self.sequence)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def explain(result: object, plan: Plan) -> Explanation:
    """Where every cycle of a timed run went (see the module docstring).

    Args:
        result: a :class:`simulator.result.SimResult` of a timed run of ``plan`` (mode "timed" or "timing").
        plan: the plan simulated.

    Returns:
        An :class:`Explanation`.

    Raises:
        SimulationError: the run was not timed, or its statistics do not belong to ``plan``.
    """
    if result.mode == "functional":  # type: ignore[attr-defined]
        raise SimulationError("explain() needs a timed run (mode 'timed' or 'timing'); this one is 'functional'")
    stats = result.stats  # type: ignore[attr-defined]
    cycles: int = stats.cycles
    unknown = sorted(set(stats.cores) - {c.name for c in plan.design.cores})
    if unknown:
        raise SimulationError(f"the run has core(s) {unknown} the plan does not have")
    given: dict[str, int] = getattr(result, "kernel_cycles", None) or {}
    start = _start(stats)
    shares: list[Share] = [Share("host dispatch", start, "before anything starts")] if start else []
    finished = [(c.finished_at, c.busy, name) for name, c in stats.cores.items() if c.finished_at is not None]
    kernel_peak = None
    if not finished:
        path = "host moves"
        res, util = _busiest(_move_channels(plan, stats), stats, plan)
        shares.append(Share("data movement", cycles - start, _fed(res, util), res, util))
    else:
        end, _, name = max(finished, key=lambda t: (t[0], t[1], t[2]))
        path = _core_label(plan, name)
        core_shares, kernel_peak = _core_shares(plan, stats, name, given)
        shares += core_shares
        if cycles - end:
            res, util = _busiest(_move_channels(plan, stats, last_only=True), stats, plan)
            out = "the PL" if _last_move_plio(plan, stats) else "DDR"
            shares.append(Share("drain", cycles - end, f"last results to {out}" + (f": {_fed(res, util)}" if res else ""),
                                res, util))
    if sum(s.cycles for s in shares) != cycles:
        raise SimulationError(f"the critical path's shares add up to {sum(s.cycles for s in shares)}, "
                              f"not the run's {cycles} cycles")
    device_peak = _device_peak(plan, cycles)
    fl = floor(plan.design, given)
    return Explanation(cycles, result.seconds, path, tuple(shares),  # type: ignore[attr-defined]
                       _verdict(shares, cycles, kernel_peak, path), device_peak, kernel_peak, fl.cycles, fl.cause,
                       stats.sequence_line())  # type: ignore[attr-defined]


# -- the path ----------------------------------------------------------------------------


def _start(stats: object) -> int:
    """The cycle the run started at: the host's first issue, or the first core's start."""
    issued = [m["issued"] for m in stats.moves.values() if m["issued"] is not None]  # type: ignore[attr-defined]
    begun = [c.finished_at - c.busy - c.stall for c in stats.cores.values()  # type: ignore[attr-defined]
             if c.finished_at is not None]
    points = issued + begun
    return min(points) if points else 0


def _core_shares(plan: Plan, stats: object, name: str, given: dict[str, int]) -> tuple[list[Share], float | None]:
    """The path core's time from its start to its end: fill, compute, bank conflicts, later
    waits per fifo; and its main kernel's MAC efficiency alone (``given``: the run's cycles given per kernel)."""
    cs = stats.cores[name]  # type: ignore[attr-defined]
    main, kernel_peak = _main_kernel(plan, _core(plan, name), given)
    shares = []
    fill = sum(cs.fill.values())
    if fill:
        cone: list[str] = []
        seen: set[str] = set()
        for fifo in sorted(cs.fill):
            cone += _cone(plan, fifo, seen)
        res, util = _busiest(cone, stats, plan)
        shares.append(Share("fill", fill, f"waiting for the first input (on {', '.join(sorted(cs.fill))})"
                            + (f"; the busiest resource it comes through: {res} at {util:.1%}" if res else ""),
                            res, util))
    if cs.busy - cs.banks:
        shares.append(Share("kernel compute", cs.busy - cs.banks, main))
    if cs.banks:
        shares.append(Share("bank conflicts", cs.banks, "kernel calls slowed by shared memory banks"))
    stalls = {f: n - cs.fill.get(f, 0) for f, n in cs.stalls.items()}
    for fifo, n in sorted(stalls.items(), key=lambda kv: (-kv[1], kv[0])):
        if n:
            shares.append(_wait(plan, stats, name, fifo, n))
    return shares, kernel_peak


def _core(plan: Plan, name: str) -> Core:
    for c in plan.design.cores:
        if c.name == name:
            return c
    raise SimulationError(f"the plan has no core {name!r}")


def _wait(plan: Plan, stats: object, core: str, fifo: str, n: int) -> Share:
    """A stall on ``fifo``: input side (waiting for data) or output side (for a free buffer); or on a cascade."""
    if fifo.startswith("cascade "):  # simulator/cascade.py: waiting for the other end of a cascade
        name = fifo.split(" ", 1)[1]
        st = getattr(stats, "cascades", {}).get(name)
        util = st.utilisation if st is not None else 0.0
        return Share(f"waiting on {fifo}", n, f"cascade {name} busy {util:.1%} (the other core is late or the "
                     f"cascade is the bottleneck)", f"cascade {name}", util)
    fp = plan.fifos.get(fifo)
    if fp is None:
        raise SimulationError(f"core {core!r} stalled on fifo {fifo!r}, which the plan does not have")
    output = fp.producer.agent == f"core:{core}"
    feeders = _downstream(plan, fifo, set()) if output else _cone(plan, fifo, set())
    res, util = _busiest(feeders, stats, plan)
    side = "output" if output else "input"
    what = "drained by" if output else "fed by"
    return Share(f"waiting on fifo {fifo} ({side})", n, f"{what} {res} at {util:.1%}" if res else "", res, util)


def _core_label(plan: Plan, name: str) -> str:
    tile = plan.placement.get(name)
    return f"core {name}" + (f" ({tile[0]},{tile[1]})" if tile is not None else "")


def _fed(res: str, util: float) -> str:
    return f"{res} at {util:.1%}" if res else ""


# -- what feeds a fifo ---------------------------------------------------------------------


def _channel(plan: Plan, tile: tuple[int, int], direction: str, index: int | None) -> str | None:
    """The simulator's name of a DMA channel (``simulator.dma.Channel``)."""
    if index is None:
        return None
    kind = "plio" if plan.device.is_pl_shim(tile) else plan.device.tile_kind(tile)
    return f"{kind} ({tile[0]},{tile[1]}) {direction} {index}"


def _ends(plan: Plan, fifo: str) -> list[str]:
    """The channels and cores of one fifo's own hop."""
    fp = plan.fifos[fifo]
    out = []
    if fp.producer.agent.startswith("core:"):
        out.append(fp.producer.agent)
    for c in fp.consumers:
        if c.agent.startswith("core:"):
            out.append(c.agent)
    if not fp.shared:
        out.append(_channel(plan, fp.producer.tile, "mm2s", fp.producer.channel))
        out += [_channel(plan, c.tile, "s2mm", c.channel) for c in fp.consumers]
    return [x for x in out if x]


def _upstream(plan: Plan, fifo: str, seen: set[str]) -> list[str]:
    """Everything a consumer of ``fifo`` waits on: its hop's channels and producer, and through a
    memtile link the hops into the link."""
    if fifo in seen:
        return []
    seen.add(fifo)
    fp = plan.fifos[fifo]
    out = [x for x in _ends(plan, fifo) if not x.startswith("core:") or x == fp.producer.agent]
    if fp.producer.agent.startswith("link:"):
        link = _link(plan, fp.producer.agent[5:])
        for src in link.srcs:
            out += _upstream(plan, src, seen)
    return out


def _cone(plan: Plan, fifo: str, seen: set[str]) -> list[str]:
    """Everything the first element of ``fifo`` comes through: :func:`_upstream`, and through each core that
    produces on the way, the cones of the fifos that core reads (a pipeline of cores fills one after another)."""
    out = _upstream(plan, fifo, seen)
    for agent in [x for x in out if x.startswith("core:")]:
        for name, fp in sorted(plan.fifos.items()):
            if any(c.agent == agent for c in fp.consumers):
                out += _cone(plan, name, seen)
    return out


def _downstream(plan: Plan, fifo: str, seen: set[str]) -> list[str]:
    """Everything a producer of ``fifo`` waits on for a free buffer: its hop's channels and
    consumers, and through a memtile link the hops out of the link."""
    if fifo in seen:
        return []
    seen.add(fifo)
    fp = plan.fifos[fifo]
    out = [x for x in _ends(plan, fifo) if x != fp.producer.agent]
    for c in fp.consumers:
        if c.agent.startswith("link:"):
            for dst in _link(plan, c.agent[5:]).dsts:
                out += _downstream(plan, dst, seen)
    return out


def _link(plan: Plan, name: str):  # noqa: ANN202 - the IR's Link
    for ln in plan.design.links:
        if ln.name == name:
            return ln
    raise SimulationError(f"the plan names memtile link {name!r}, which the design does not have")


def _last_move_plio(plan: Plan, stats: object) -> bool:
    """Whether the host move to complete last is a PLIO stream (its results go to the PL, not DDR)."""
    moves = [(m["completed"] or 0, name) for name, m in stats.moves.items()]  # type: ignore[attr-defined]
    last = max(moves)[1] if moves else None
    return any(d.plio for d in plan.design.dmas if d.name == last)


def _move_channels(plan: Plan, stats: object, last_only: bool = False) -> list[str]:
    """The channels of the host moves (only the last to complete, with ``last_only``)."""
    moves = [(m["completed"] or 0, name) for name, m in stats.moves.items()]  # type: ignore[attr-defined]
    if not moves:
        return []
    names = {max(moves)[1]} if last_only else {n for _, n in moves}
    out: list[str] = []
    for d in plan.design.dmas:
        if d.name in names:
            for f in d.fifos:
                out += [x for x in _ends(plan, f) if not x.startswith("core:")]
    return out


def _busiest(resources: list[str], stats: object, plan: Plan) -> tuple[str, float]:
    """The resource with the highest utilisation (ties: the first named), and that utilisation."""
    best, util = "", -1.0
    cycles = max(1, stats.cycles)  # type: ignore[attr-defined]
    for r in resources:
        if r.startswith("core:"):
            c = stats.cores.get(r[5:])  # type: ignore[attr-defined]
            u = c.busy / cycles if c is not None else 0.0
            label = _core_label(plan, r[5:])
        else:
            ch = stats.channels.get(r)  # type: ignore[attr-defined]
            u = ch.utilisation if ch is not None else 0.0
            label = r
        if u > util:
            best, util = label, u
    return best, max(util, 0.0)


# -- MACs ----------------------------------------------------------------------------------


def kernel_mac_cycles(kernel: Kernel, device: object) -> float:
    """Cycles one call's MACs take at the core's MAC peak (matmuls and multiplies; 0 for none).

    Raises:
        SimulationError: an op's dtype has no MAC datapath on the device.
    """
    total = 0.0
    for op in kernel.body:
        if op.kind is OpKind.MATMUL:
            a, b = op.operands
            m, k = a.type.shape  # type: ignore[union-attr]
            n = b.type.shape[1]  # type: ignore[union-attr]
            total += m * k * n / device.macs_per_cycle(a.type.dtype)  # type: ignore[attr-defined, union-attr]
        elif op.kind is OpKind.MUL and op.type is not None:
            total += op.type.numel / device.macs_per_cycle(op.type.dtype)  # type: ignore[attr-defined]
    return total


def _kernels(plan: Plan) -> dict[str, object]:
    return {k.name: k for k in plan.design.kernels}


def _main_kernel(plan: Plan, core: Core, given: dict[str, int]) -> tuple[str, float | None]:
    """The core's kernel with the most cycles, described, and its MAC efficiency alone (``given``: cycles
    per call given for kernels by name, the run's instead of the model's)."""
    kernels = _kernels(plan)
    best: tuple[float, str] | None = None
    for name, n in call_counts(core.body).items():
        k = kernels[name]
        cyc = given[name] if name in given else kernel_cycles(k, plan.device) if isinstance(k, Kernel) else 0
        if best is None or n * cyc > best[0]:
            best = (n * cyc, name)
    if best is None:
        return "no kernel calls", None
    name = best[1]
    k = kernels[name]
    how = " (given)" if name in given else ""
    if not isinstance(k, Kernel):
        return f"{name} (extern kernel: {given[name]} cycles per call, given)" if how else (
            f"{name} (extern kernel: declared cycles)"), None
    alone = given[name] if how else kernel_cycles(k, plan.device)
    macs = kernel_mac_cycles(k, plan.device)
    if not macs or not alone:
        return f"{name}: {alone} cycles per call{how}, no MACs", None
    eff = macs / alone
    return f"{name}: {alone} cycles per call{how}, alone {eff:.1%} of MAC peak", eff


def _device_peak(plan: Plan, cycles: int) -> float | None:
    """Every call's MAC cycles over (run cycles x compute tiles of the device)."""
    kernels = _kernels(plan)
    total = 0.0
    for core in plan.design.cores:
        for name, n in call_counts(core.body).items():
            k = kernels[name]
            if isinstance(k, Kernel):
                total += n * kernel_mac_cycles(k, plan.device)
    tiles = len(plan.device.tiles("compute"))
    if not total or not cycles or not tiles:
        return None
    return total / (cycles * tiles)


# -- the verdict ---------------------------------------------------------------------------


def _verdict(shares: list[Share], cycles: int, kernel_peak: float | None, path: str) -> str:
    """What bounds the run: the largest group of shares, named by its busiest resource; but a core in kernel
    calls for less of the run than a resource it waits on is busy is bound by that resource."""
    groups: dict[str, list[Share]] = {}
    for s in shares:
        if s.cause in ("kernel compute", "bank conflicts"):
            key = "compute"
        elif s.cause.endswith("(input)"):
            key = "input"
        elif s.cause.endswith("(output)"):
            key = "output"
        elif s.cause in ("fill", "drain"):
            key = "latency"
        else:
            key = s.cause
        groups.setdefault(key, []).append(s)
    key, members = max(groups.items(), key=lambda kv: (sum(s.cycles for s in kv[1]), kv[0]))
    if key == "compute":
        # A core busy less of the run than the resource it waits on is not what bounds it: that resource,
        # busier, is (a shim channel 99% busy feeding a core busy 57% of the run).
        busy = sum(s.cycles for s in members) / max(1, cycles)
        waits = [(s.utilisation, k) for k in ("input", "output") for s in groups.get(k, ())
                 if s.resource and s.utilisation is not None and s.utilisation > busy]
        if waits:
            key = max(waits)[1]
            members = groups[key]
    part = sum(s.cycles for s in members) / max(1, cycles)
    alone = "" if kernel_peak is None else f"; kernel alone {kernel_peak:.0%} of MAC peak"
    if key == "compute":
        banks = sum(s.cycles for s in members if s.cause == "bank conflicts") / max(1, cycles)
        extra = f" (bank conflicts {banks:.0%})" if banks >= 0.01 else ""
        return f"compute bound: {path} in kernel calls {part:.0%} of the run{extra}{alone}"
    if key in ("input", "output"):
        top = max(members, key=lambda s: s.cycles)
        where = f"{top.resource} at {top.utilisation:.0%}" if top.resource else top.cause
        kind = f"{key}-stream bound"
        if top.resource.startswith("core "):
            kind = "upstream-core bound" if key == "input" else "downstream-core bound"
        return f"{kind}: {where} ({part:.0%} of the run waiting on {top.cause.split(' ')[3]}){alone}"
    if key == "latency":
        first = next((s for s in members if s.cause == "fill" and s.resource), None)
        through = f"; the first input through {first.resource} at {first.utilisation:.0%}" if first else ""
        return (f"latency bound: fill and drain {part:.0%} of the run (too little work per invocation{through})"
                f"{alone}")
    if key == "host dispatch":
        return f"dispatch bound: host dispatch {part:.0%} of the run{alone}"
    top = members[0]
    return f"data-movement bound: {top.resource} at {top.utilisation:.0%}"
