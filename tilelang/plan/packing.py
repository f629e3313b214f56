"""Packing a core's local buffers by lifetime: buffers never resident together share bytes.

Static memory planning as an interval/offset problem (docs/passes.md,
"Lifetime packing"): every local buffer ``i`` of a core gets an offset
``o_i`` in the core's *arena* (one contiguous region of its tile's memory),
and two buffers that interfere (``tilelang/ir/liveness.py``: resident during
one call) may not overlap. The arena's size is what the core needs.

1. first fit, largest buffer first, each at the lowest offset clear of the
   interfering buffers already placed;
2. the lower bound: the most bytes resident during one call (those buffers
   interfere pairwise, so need that much). First fit at the bound is optimal;
3. otherwise a MIP: ``min Z`` s.t. ``o_i + s_i <= Z`` and, for each
   interfering pair, ``o_i + s_i <= o_j + U y_ij`` and
   ``o_j + s_j <= o_i + U (1 - y_ij)`` with ``U`` first fit's size, started
   from first fit and bounded by nodes (``solve.MAX_NODES``) so its answer
   does not depend on the machine. A MIP that finds nothing better, stops on
   its limits or fails leaves first fit in place, and the plan says which.

Offsets are in 16-byte steps (``devices.abi.BUFFER_ALIGN``), so every buffer of the
arena starts aligned wherever the arena is placed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulp

from tilelang.devices.abi import BUFFER_ALIGN as ALIGN
from tilelang.devices.abi import align
from tilelang.ir.design import Core
from tilelang.ir.kernel import AnyKernel
from tilelang.ir.liveness import liveness
from tilelang.ir.plan import SolveInfo, byte_groups
from tilelang.plan.solve import solve_model

#: Buffers beyond which the MIP is not tried (first fit stands): its pair constraints grow quadratically.
MIP_MAX_BUFFERS = 24


@dataclass(frozen=True)
class Packing:
    """Where one core's local buffers sit in its arena.

    Attributes:
        core: the core.
        offsets: buffer -> byte offset in the arena (16-byte aligned).
        sizes: buffer -> aligned bytes.
        size: the arena's bytes.
        unpacked: the arena's bytes with every buffer apart (the sum of sizes).
        peak: most aligned bytes of local buffers resident during one call (a lower bound on ``size``).
        info: how the offsets were chosen (method, status, objective = ``size``).
    """

    core: str
    offsets: Mapping[str, int]
    sizes: Mapping[str, int]
    size: int
    unpacked: int
    peak: int
    info: SolveInfo = field(compare=False)

    def clusters(self) -> list[tuple[str, int, dict[str, int]]]:
        """The arena cut where no buffer crosses: (name, bytes, {buffer: offset in it}) per group of buffers
        that share bytes, transitively (a buffer alone is its own group, named as it is).

        The groups' spans are disjoint (a connected union of byte ranges is one range), so placing each
        group anywhere needs no more than the arena, and each can go to its own bank.
        """
        out = []
        for k, g in enumerate(byte_groups({n: (self.offsets[n], self.sizes[n]) for n in self.offsets})):
            base = min(self.offsets[n] for n in g)
            span = max(self.offsets[n] + self.sizes[n] for n in g) - base
            name = g[0] if len(g) == 1 else f"{self.core}__locals{k}"
            out.append((name, span, {n: self.offsets[n] - base for n in g}))
        return out


def _first_fit(sizes: Mapping[str, int], meet: set[tuple[str, str]]) -> dict[str, int]:
    placed: dict[str, int] = {}
    for name in sorted(sizes, key=lambda n: (-sizes[n], n)):
        busy = sorted((placed[o], placed[o] + sizes[o]) for o in placed
                      if (min(o, name), max(o, name)) in meet)
        at = 0
        for lo, hi in busy:
            if lo - at >= sizes[name]:
                break
            at = max(at, hi)
        placed[name] = at
    return placed


def _extent(offsets: Mapping[str, int], sizes: Mapping[str, int]) -> int:
    return max((offsets[n] + sizes[n] for n in offsets), default=0)


def _mip(sizes: Mapping[str, int], meet: set[tuple[str, str]], start: dict[str, int], solver: str,
         time_limit: float) -> tuple[dict[str, int] | None, SolveInfo]:
    """The offset MIP in ALIGN units, warm-started from ``start``; (offsets or None, how it went)."""
    names = sorted(sizes)
    s = {n: sizes[n] // ALIGN for n in names}
    upper = _extent(start, sizes) // ALIGN
    prob = pulp.LpProblem("packing", pulp.LpMinimize)
    o = {n: pulp.LpVariable(f"o_{i}", 0, upper - s[n], cat="Integer") for i, n in enumerate(names)}
    z = pulp.LpVariable("z", 0, upper, cat="Integer")
    prob += z
    for n in names:
        prob += o[n] + s[n] <= z
        o[n].setInitialValue(start[n] // ALIGN)
    z.setInitialValue(upper)
    for k, (a, b) in enumerate(sorted(meet)):
        y = pulp.LpVariable(f"y_{k}", cat="Binary")
        prob += o[a] + s[a] <= o[b] + upper * y
        prob += o[b] + s[b] <= o[a] + upper * (1 - y)
        y.setInitialValue(0 if start[a] + sizes[a] <= start[b] else 1)
    sol = solve_model(prob, solver, time_limit)
    status = "time-limited" if sol.clocked else sol.status
    if sol.status not in ("optimal", "feasible"):
        return None, SolveInfo("mip", status, 0.0, None, None, sol.message or f"the packing MIP ended {sol.status}")
    offsets = {n: int(round(sol.values[f"o_{i}"])) * ALIGN for i, n in enumerate(names)}
    return offsets, SolveInfo("mip", status, 0.0, float(_extent(offsets, sizes)), sol.gap)


def pack_offsets(sizes: Mapping[str, int], meet: set[tuple[str, str]], peak: int = 0, solver: str = "cbc",
         time_limit: float = 10.0) -> tuple[dict[str, int], SolveInfo]:
    """Offsets for buffers of ``sizes`` (multiples of 16 bytes) in which no interfering pair overlaps.

    Args:
        sizes: bytes of each buffer.
        meet: the interfering pairs, each (smaller name, larger name).
        peak: a lower bound on the extent (first fit that reaches it is optimal).
        solver: the MIP's solver.
        time_limit: the MIP's wall-clock safety net in seconds.

    Returns:
        (offsets, how they were chosen: objective = the extent).
    """
    offsets = _first_fit(sizes, meet)
    size = _extent(offsets, sizes)
    if size <= peak:
        return offsets, SolveInfo("first-fit", "optimal", 0.0, float(size), 0.0,
                                  "first fit reaches the resident-bytes bound")
    if len(sizes) > MIP_MAX_BUFFERS:
        return offsets, SolveInfo("first-fit", "feasible", 0.0, float(size), (size - peak) / size,
                                  f"{len(sizes)} buffers: more than the MIP takes ({MIP_MAX_BUFFERS}); first fit stands")
    better, mip = _mip(sizes, meet, offsets, solver, time_limit)
    if better is not None and _extent(better, sizes) < size:
        size = _extent(better, sizes)
        gap = 0.0 if mip.status == "optimal" else (size - peak) / size
        return better, SolveInfo("mip", mip.status, 0.0, float(size), gap, mip.message)
    why = mip.message or f"the MIP ({mip.status}) found nothing smaller"
    status = mip.status if mip.status in ("optimal", "time-limited") else "feasible"
    return offsets, SolveInfo("first-fit", status, 0.0, float(size), 0.0 if status == "optimal" else None,
                              f"{why}; first fit stands")


def pack_core(core: Core, kernels: Mapping[str, AnyKernel], solver: str = "cbc", time_limit: float = 10.0,
              pack: bool = True) -> Packing:
    """The arena layout of ``core``'s local buffers.

    Args:
        core: a verified core with local buffers.
        kernels: the design's kernels by name.
        solver: the MIP's solver ("cbc" or "highs").
        time_limit: the MIP's wall-clock safety net in seconds (nodes bound it first).
        pack: False lays every buffer apart (what the design needs without packing).

    Returns:
        The :class:`Packing`.
    """
    sizes = {b.name: align(b.nbytes) for b in core.buffers}
    unpacked = sum(sizes.values())
    live = liveness(core, kernels)
    peak = max((sum(sizes[b] for b in s) for s in live.resident), default=0)
    if not pack:
        offsets, at = {}, 0
        for b in core.buffers:
            offsets[b.name] = at
            at += sizes[b.name]
        info = SolveInfo("apart", "feasible", 0.0, float(unpacked), None, "packing off: every buffer apart")
        return Packing(core.name, offsets, sizes, unpacked, unpacked, peak, info)
    offsets, info = pack_offsets(sizes, live.interference(), peak, solver, time_limit)
    return Packing(core.name, offsets, sizes, _extent(offsets, sizes), unpacked, peak, info)


__all__ = ["MIP_MAX_BUFFERS", "Packing", "pack_core", "pack_offsets"]
