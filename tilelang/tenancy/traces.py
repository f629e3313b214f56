"""Request traces for ``tl.serve``: Poisson and bursty arrivals from a seed.

Load is relative to the time-share capacity: one request at a time on the
whole array, each taking dispatch plus its design's cycles there, with no
reconfiguration; ``load=1.0`` offers exactly that many requests per cycle for
the mix. A request's deadline is its arrival plus ``slack`` times that same
isolated service time of its design. numpy's PCG64 generator makes a trace
from a seed identically on every machine.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tilelang.errors import TileLangError
from tilelang.tenancy.serve import Costs, Request, ServiceTimes


def isolated_cycles(service: ServiceTimes, costs: Costs | None = None) -> dict[str, int]:
    """Per design: dispatch plus its cycles on the whole device."""
    costs = costs or Costs()
    dispatch = round(costs.dispatch * service.device.clock_hz)
    out = {}
    for d in service.designs:
        c = service.cycles(d, service.device.cols)
        if c is None:
            raise TileLangError(f"design {d!r} does not fit the whole {service.device.name}; traces are sized by it")
        out[d] = dispatch + c
    return out


def _mix(service: ServiceTimes, mix: Mapping[str, float] | None) -> tuple[list[str], np.ndarray]:
    mix = dict(mix) if mix is not None else dict.fromkeys(service.designs, 1.0)
    names = list(mix)
    bad = [n for n in names if n not in service.designs]
    if bad or not names or any(v <= 0 for v in mix.values()):
        raise TileLangError(f"mix must give positive weights to known designs {list(service.designs)}, got {mix}")
    p = np.array([mix[n] for n in names], float)
    return names, p / p.sum()


def _rate(service: ServiceTimes, names: list[str], p: np.ndarray, load: float, costs: Costs | None) -> float:
    if not load > 0:
        raise TileLangError(f"load must be positive, got {load}")
    iso = isolated_cycles(service, costs)
    mean = float(sum(pi * iso[n] for n, pi in zip(names, p, strict=True)))
    return load / mean  # requests per cycle


def _requests(service: ServiceTimes, names: list[str], which: np.ndarray, times: np.ndarray, slack: float,
              costs: Costs | None) -> list[Request]:
    iso = isolated_cycles(service, costs)
    out = []
    for k, t in zip(which, times, strict=True):
        n = names[int(k)]
        at = int(round(t))
        out.append(Request(at, n, at + int(round(slack * iso[n]))))
    return out


def poisson(service: ServiceTimes, n: int, load: float, seed: int = 0, mix: Mapping[str, float] | None = None,
            slack: float = 4.0, costs: Costs | None = None) -> list[Request]:
    """``n`` requests with exponential inter-arrival times at ``load`` x the time-share capacity.

    Args:
        service: the designs' service times.
        n: number of requests.
        load: offered load relative to the time-share capacity (module docstring).
        seed: the generator's seed.
        mix: relative frequency per design (default: equal).
        slack: deadline = arrival + slack x the design's isolated service time.
        costs: the dispatch cost counted in the isolated service time.

    Returns:
        Requests by arrival (cycles).
    """
    names, p = _mix(service, mix)
    rate = _rate(service, names, p, load, costs)
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.exponential(1 / rate, n))
    return _requests(service, names, rng.choice(len(names), n, p=p), times, slack, costs)


def bursty(service: ServiceTimes, n: int, load: float, seed: int = 0, mix: Mapping[str, float] | None = None,
           slack: float = 4.0, burst: float = 8.0, costs: Costs | None = None) -> list[Request]:
    """``n`` requests in bursts of mean size ``burst``, the same mean rate as :func:`poisson`.

    Bursts start as a Poisson process at ``rate / burst``; a burst's size is geometric with
    mean ``burst``, and its requests are 10x the mean rate apart (exponential), all of one
    design drawn from the mix (a burst is one client's batch).
    """
    names, p = _mix(service, mix)
    rate = _rate(service, names, p, load, costs)
    rng = np.random.default_rng(seed)
    times: list[float] = []
    which: list[int] = []
    t = 0.0
    while len(times) < n:
        t += rng.exponential(burst / rate)
        size = int(rng.geometric(1 / burst))
        k = int(rng.choice(len(names), p=p))
        u = t
        for _ in range(min(size, n - len(times))):
            times.append(u)
            which.append(k)
            u += rng.exponential(1 / (10 * rate))
    order = np.argsort(np.array(times), kind="stable")
    return _requests(service, names, np.array(which)[order], np.array(times)[order], slack, costs)
