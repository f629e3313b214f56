"""``tl.serve``: a discrete-event serving simulator over a request trace (docs/tenancy.md).

Requests for several designs arrive with deadlines; a policy decides which
request runs when, on which columns:

- "time-share": the whole array, one request at a time; switching to another
  design reconfigures the array.
- "static": fixed partitions, one per design, widths chosen once (exact search)
  to minimise the most loaded partition's utilisation for the trace's mix.
- "fission" (Planaria, MICRO'20, "architecture fission"): columns are handed
  out per request from the queue state. At every arrival and completion the
  waiting requests, earliest deadline first, each get the narrowest free
  contiguous width that still meets their deadline (the widest useful one when
  none does), leaving at least a column for every other waiting design;
  loading a partition not configured for that design and width is charged a
  reconfiguration.

Every policy serves earliest deadline first (ties: arrival, then trace order)
and never preempts a running request. A request's service time on ``w``
columns is the dispatch cost plus the simulator's cycles for the design
planned on the ``w``-column partition (timing mode), cached per width
(:class:`ServiceTimes`). All times are integer cycles at the device clock, so
a run is deterministic.

Costs (:class:`Costs`):
- dispatch, 450 us per request: mlir-aie issue 3793 (simulator/cost.py
  ``DISPATCH_SECONDS``). Partitions are separate hardware contexts, whose
  commands the driver and firmware run concurrently (Linux
  Documentation/accel/amdxdna/amdnpu.rst); that dispatches of different
  partitions overlap completely is an estimate.
- reconfiguration, 110 us: whole-array reconfiguration measured on Strix,
  nod-ai/iree-amd-aie issue 1187 (106-116 us per reconfiguration from 1000 runs
  on). Charging a partition the whole array's figure is an estimate (an upper
  bound: a partition has fewer tiles to configure).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import PlanError, TileLangError
from tilelang.tenancy.colocate import Candidates, TenantSpec, check_tenants

POLICIES = ("time-share", "static", "fission")

#: Host dispatch per request, seconds: mlir-aie issue 3793 (simulator/cost.py DISPATCH_SECONDS).
DISPATCH_SECONDS = 450e-6
#: Reconfiguring the array for another design, seconds: nod-ai/iree-amd-aie issue 1187, whole-array
#: reconfiguration on Strix, 106-116 us from 1000 runs on.
RECONFIG_SECONDS = 110e-6


@dataclass(frozen=True)
class Costs:
    """What the serving simulator charges besides the design's own cycles (seconds)."""

    dispatch: float = DISPATCH_SECONDS
    reconfig: float = RECONFIG_SECONDS

    def __post_init__(self) -> None:
        for name in ("dispatch", "reconfig"):
            v = getattr(self, name)
            if not isinstance(v, int | float) or isinstance(v, bool) or not 0 <= v < math.inf:
                raise TileLangError(f"Costs.{name} must be a non-negative number of seconds, got {v!r}")


@dataclass(frozen=True)
class Request:
    """One inference request: arrival and deadline in cycles at the device clock."""

    arrival: int
    design: str
    deadline: int


class ServiceTimes:
    """Each design's cycles per width, planned and simulated once each (timing mode).

    Attributes:
        device: the whole device.
        designs: the designs (or factories) by name.
    """

    def __init__(self, designs: Mapping[str, TenantSpec], device: str | Device = "npu1", solver: str = "cbc",
                 time_limit: float = 60) -> None:
        from tilelang.plan import plan as _plan
        from tilelang.tenancy.colocate import _timing_cycles

        self.device = lookup_device(device)
        self.designs = check_tenants(designs)
        self.candidates = Candidates(self.device, self.designs,
                                     lambda d: _plan(d, solver=solver, time_limit=time_limit), _timing_cycles)

    def cycles(self, design: str, width: int) -> int | None:
        """Cycles of one run of ``design`` on ``width`` columns (no dispatch), None when it does not fit."""
        if design not in self.designs:
            raise TileLangError(f"no design {design!r}; the designs are {list(self.designs)}")
        return self.candidates.predicted(design, width)

    def widths(self, design: str) -> list[int]:
        """Widths the design fits, narrowest first."""
        return [w for w in range(1, self.device.cols + 1) if self.cycles(design, w) is not None]

    def table(self) -> dict[str, dict[int, int]]:
        """``{design: {width: cycles}}`` for every width each design fits."""
        return {d: {w: self.cycles(d, w) for w in self.widths(d)} for d in self.designs}  # type: ignore[misc]


@dataclass
class Served:
    """One request's outcome (cycles)."""

    request: Request
    start: int
    end: int
    width: int
    first_column: int
    reconfigured: bool

    @property
    def latency(self) -> int:
        return self.end - self.request.arrival

    @property
    def missed(self) -> bool:
        return self.end > self.request.deadline


@dataclass
class ServeReport:
    """What a serving run measured.

    Attributes:
        policy: the policy.
        served: every request's outcome, in trace order.
        clock_hz: to turn cycles into seconds.
        isolated: per design, dispatch plus cycles on the whole device (the fairness reference).
        partitions: the static split ``{design: (first, width)}`` (static policy only).
    """

    policy: str
    served: list[Served]
    clock_hz: float
    isolated: dict[str, int]
    partitions: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def requests(self) -> int:
        return len(self.served)

    @property
    def makespan(self) -> int:
        """Cycles from the first arrival to the last completion."""
        if not self.served:
            return 0
        return max(s.end for s in self.served) - min(s.request.arrival for s in self.served)

    @property
    def throughput(self) -> float:
        """Requests completed per second over the makespan."""
        return self.requests / (self.makespan / self.clock_hz) if self.makespan else 0.0

    def latency_percentile(self, q: float) -> float:
        """Latency percentile ``q`` (0..100) in seconds (nearest rank)."""
        lat = sorted(s.latency for s in self.served)
        if not lat:
            return 0.0
        k = max(0, math.ceil(q / 100 * len(lat)) - 1)
        return lat[k] / self.clock_hz

    @property
    def p50(self) -> float:
        return self.latency_percentile(50)

    @property
    def p99(self) -> float:
        return self.latency_percentile(99)

    @property
    def misses(self) -> int:
        return sum(s.missed for s in self.served)

    @property
    def miss_rate(self) -> float:
        return self.misses / self.requests if self.requests else 0.0

    @property
    def reconfigurations(self) -> int:
        return sum(s.reconfigured for s in self.served)

    def progress(self) -> dict[str, float]:
        """Per design, mean normalised progress: isolated service time over latency (1 = as if alone)."""
        by: dict[str, list[float]] = {}
        for s in self.served:
            by.setdefault(s.request.design, []).append(self.isolated[s.request.design] / max(1, s.latency))
        return {d: sum(v) / len(v) for d, v in by.items()}

    @property
    def fairness(self) -> float:
        """min / max of the designs' normalised progress (PREMA, HPCA'20; 1 = perfectly fair)."""
        p = self.progress()
        return min(p.values()) / max(p.values()) if p else 1.0

    def summary(self) -> dict[str, float]:
        return {"throughput": self.throughput, "p50_s": self.p50, "p99_s": self.p99, "misses": self.misses,
                "miss_rate": self.miss_rate, "fairness": self.fairness, "reconfigurations": self.reconfigurations}


class _Array:
    """Which columns are busy and what each was last configured for."""

    def __init__(self, cols: int) -> None:
        self.busy = [False] * cols
        self.loaded: list[tuple[str, int, int] | None] = [None] * cols

    def free_runs(self) -> list[tuple[int, int]]:
        """Maximal free contiguous ranges ``(first, width)``, west to east."""
        runs, start = [], None
        for c, b in enumerate([*self.busy, True]):
            if not b and start is None:
                start = c
            elif b and start is not None:
                runs.append((start, c - start))
                start = None
        return runs

    def configured(self, design: str, first: int, width: int) -> bool:
        return all(self.loaded[c] == (design, first, width) for c in range(first, first + width))

    def take(self, design: str, first: int, width: int) -> bool:
        """Mark the range busy and configured; True when that needed a reconfiguration."""
        re = not self.configured(design, first, width)
        for c in range(first, first + width):
            self.busy[c] = True
            self.loaded[c] = (design, first, width)
        return re

    def give(self, first: int, width: int) -> None:
        for c in range(first, first + width):
            self.busy[c] = False


class _Sim:
    """The event loop shared by the policies: a heap of (time, kind, seq) events."""

    def __init__(self, service: ServiceTimes, costs: Costs, trace: list[Request]) -> None:
        self.service = service
        self.dev = service.device
        self.dispatch = round(costs.dispatch * self.dev.clock_hz)
        self.reconfig = round(costs.reconfig * self.dev.clock_hz)
        self.trace = trace
        self.array = _Array(self.dev.cols)
        self.waiting: list[tuple[int, int, int, Request]] = []  # (deadline, arrival, index, request)
        self.out: dict[int, Served] = {}
        self.events: list[tuple[int, int, int, object]] = []
        self.seq = itertools.count()

    def run_time(self, design: str, width: int, reconfigured: bool) -> int:
        cycles = self.service.cycles(design, width)
        assert cycles is not None
        return self.dispatch + cycles + (self.reconfig if reconfigured else 0)

    def start(self, now: int, item: tuple[int, int, int, Request], first: int, width: int) -> None:
        _, _, idx, req = item
        re = self.array.take(req.design, first, width)
        end = now + self.run_time(req.design, width, re)
        self.out[idx] = Served(req, now, end, width, first, re)
        heapq.heappush(self.events, (end, 0, next(self.seq), (first, width)))

    def loop(self, schedule) -> list[Served]:  # noqa: ANN001 - schedule(now) places waiting requests
        for i, r in enumerate(self.trace):
            heapq.heappush(self.events, (r.arrival, 1, next(self.seq), (i, r)))
        while self.events:
            now, kind, _, what = heapq.heappop(self.events)
            if kind == 0:
                self.array.give(*what)  # type: ignore[misc]
            else:
                i, r = what  # type: ignore[misc]
                heapq.heappush(self.waiting, (r.deadline, r.arrival, i, r))
            if self.events and self.events[0][0] == now:
                continue  # settle every event of this cycle before deciding
            schedule(now)
        if self.waiting:
            names = sorted({w[3].design for w in self.waiting})
            why = self.service.candidates.why(names[0], range(1, self.dev.cols + 1))
            raise PlanError(f"requests for {names} can never run: no width of the array fits them"
                            + (f" ({why})" if why else ""))
        return [self.out[i] for i in range(len(self.trace))]


def _time_share(sim: _Sim) -> None:
    cols = sim.dev.cols

    def schedule(now: int) -> None:
        if sim.waiting and not any(sim.array.busy):
            sim.start(now, heapq.heappop(sim.waiting), 0, cols)

    sim.loop(schedule)


def static_split(service: ServiceTimes, trace: list[Request], costs: Costs) -> dict[str, tuple[int, int]]:
    """Fixed partitions for the static policy: exact search over widths minimising the busiest partition's load.

    Raises:
        PlanError: more designs than columns, or no split fits every design.
    """
    names = list(service.designs)
    cols = service.device.cols
    if len(names) > cols:
        raise PlanError(f"static: {len(names)} designs cannot each hold a partition of {cols} columns")
    dispatch = round(costs.dispatch * service.device.clock_hz)
    count = {n: sum(r.design == n for r in trace) for n in names}
    best = None
    for split in itertools.product(range(1, cols - len(names) + 2), repeat=len(names)):
        if sum(split) > cols:
            continue
        loads = []
        for n, w in zip(names, split, strict=True):
            c = service.cycles(n, w)
            if c is None:
                break
            loads.append(count[n] * (dispatch + c))
        else:
            key = (max(loads), sum(loads), split)
            if best is None or key < best:
                best = key
    if best is None:
        lost = [n for n in names if not service.widths(n)]
        why = service.candidates.why(lost[0], range(1, cols + 1)) if lost else ""
        raise PlanError(f"static: no split of {cols} columns fits every design of {names}" + (f" ({why})" if why else ""))
    firsts = itertools.accumulate((0, *best[2][:-1]))
    return dict(zip(names, zip(firsts, best[2], strict=True), strict=True))


def _static(sim: _Sim, parts: dict[str, tuple[int, int]]) -> None:
    def schedule(now: int) -> None:
        kept = []
        while sim.waiting:
            item = heapq.heappop(sim.waiting)
            first, width = parts[item[3].design]
            if sim.array.busy[first]:
                kept.append(item)
            else:
                sim.start(now, item, first, width)
        for item in kept:
            heapq.heappush(sim.waiting, item)

    sim.loop(schedule)


def _fission_width(sim: _Sim, now: int, req: Request, runs: list[tuple[int, int]], cap: int) -> tuple[int, int] | None:
    """(first, width) for ``req``: the narrowest width meeting its deadline, else the fastest; None if none fits."""
    options = []
    for first, span in runs:
        for w in sim.service.widths(req.design):
            if w > min(span, cap):
                break
            for f in range(first, first + span - w + 1):
                re = not sim.array.configured(req.design, f, w)
                end = now + sim.run_time(req.design, w, re)
                options.append((end, w, re, f))
    if not options:
        return None
    meeting = [o for o in options if o[0] <= req.deadline]
    if meeting:
        end, w, re, f = min(meeting, key=lambda o: (o[1], o[2], o[0], o[3]))
    else:
        end, w, re, f = min(options, key=lambda o: (o[0], o[1], o[3]))
    return f, w


def _fission(sim: _Sim) -> None:
    def schedule(now: int) -> None:
        kept = []
        while sim.waiting:
            item = heapq.heappop(sim.waiting)
            runs = sim.array.free_runs()
            free = sum(w for _, w in runs)
            others = len({w[3].design for w in sim.waiting} - {item[3].design})
            cap = max(1, free - others)
            got = _fission_width(sim, now, item[3], runs, cap) if runs else None
            if got is None:
                kept.append(item)
                continue
            sim.start(now, item, *got)
        for item in kept:
            heapq.heappush(sim.waiting, item)

    sim.loop(schedule)


def serve(designs: Mapping[str, TenantSpec] | ServiceTimes, trace: list[Request], policy: str = "fission",
          device: str | Device = "npu1", costs: Costs | None = None) -> ServeReport:
    """Serve a request trace under a policy (API.md "Tenancy and fusion"; docs/tenancy.md).

    Args:
        designs: ``{name: design or factory(device) -> design}``, or a :class:`ServiceTimes`
            built from them (to share its cached service times across runs).
        trace: requests (:func:`tilelang.tenancy.traces.poisson` / ``bursty`` make them), by arrival.
        policy: "time-share", "static" or "fission".
        device: the whole device (ignored when ``designs`` is a ServiceTimes).
        costs: dispatch and reconfiguration costs (default: the cited figures).

    Returns:
        A :class:`ServeReport`: throughput, p50/p99 latency, deadline misses, fairness.

    Raises:
        TileLangError: an unknown policy, or a request for an unknown design.
        PlanError: a design fits no width a policy may give it.
    """
    if policy not in POLICIES:
        raise TileLangError(f"unknown policy {policy!r}; choose one of {list(POLICIES)}")
    service = designs if isinstance(designs, ServiceTimes) else ServiceTimes(designs, device)
    costs = costs or Costs()
    if not isinstance(costs, Costs):
        raise TileLangError(f"costs must be a Costs, got {type(costs).__name__}")
    if isinstance(trace, str | bytes) or not isinstance(trace, list | tuple):
        raise TileLangError(f"trace must be a list of Requests, got {type(trace).__name__}")
    for r in trace:
        if not isinstance(r, Request):
            raise TileLangError(f"trace holds {r!r}, not a Request(arrival, design, deadline)")
        if not isinstance(r.design, str) or r.design not in service.designs:
            raise TileLangError(f"request for unknown design {r.design!r}; the designs are {list(service.designs)}")
    given = list(trace)
    order = sorted(range(len(given)), key=lambda i: given[i].arrival)  # stable: equal arrivals keep their order
    trace = [given[i] for i in order]
    sim = _Sim(service, costs, trace)
    cols = service.device.cols
    parts: dict[str, tuple[int, int]] = {}
    if policy == "time-share":
        for d in {r.design for r in trace}:
            if service.cycles(d, cols) is None:
                why = service.candidates.why(d, [cols])
                raise PlanError(f"time-share: design {d!r} does not fit the whole {service.device.name}"
                                + (f" ({why})" if why else ""))
        _time_share(sim)
    elif policy == "static":
        parts = static_split(service, trace, costs)
        _static(sim, parts)
    else:
        _fission(sim)
    served: list[Served] = [None] * len(trace)  # type: ignore[list-item]
    for pos, i in enumerate(order):  # back in the order the trace was given
        served[i] = sim.out[pos]
    isolated = {d: sim.dispatch + (service.cycles(d, cols) or min(service.cycles(d, w) for w in service.widths(d)))
                for d in service.designs if service.widths(d)}
    return ServeReport(policy, served, service.device.clock_hz, isolated, parts)
