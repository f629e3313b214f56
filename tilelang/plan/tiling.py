"""``tl.tile_contraction``: the tiling ILP (API.md "Planning").

The cost model and the candidate space are in ``tiling_model.py``. The
choice is exact over that space and built the way the issue measured to be
fast: one binary per feasible (core tile, spatial split) candidate, with its
best memtile blocking folded in exactly (the estimate is a max of terms and
only the DDR terms depend on the memtile blocks, so for a fixed core tile and
split the best blocks are the ones with the least DDR time, found by
vectorised enumeration). The ILP then picks one candidate minimising the
estimate, ties broken towards less DDR traffic (CoSA, ISCA'21, is the model:
one-hot choices, a linear objective, solved exactly).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pulp

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import PlanError
from tilelang.ir.plan import SolveInfo
from tilelang.plan.solve import check_solver, solve_model
from tilelang.plan.tiling_model import Contraction, Evaluation, Space, evaluate, parse, space

#: Weight of DDR bytes against cycles in the objective: a tie-break only.
TIE_BREAK = 1e-9
#: Most candidates enumerated (the product of per-index options).
MAX_CANDIDATES = 8_000_000


@dataclass(frozen=True)
class Tiling:
    """The chosen tiling of a contraction.

    Attributes:
        spec: the contraction ("mk,kn->mn").
        device: the device name.
        core: tile size of every index in core memory (one kernel call's operands).
        memtile: block size of every index staged in memtiles (None without memtiles).
        spatial: cores along every index (1 for reduction indices).
        cores: cores used.
        estimate: cycles of the whole contraction under the cost model.
        seconds: the estimate at the device's clock.
        terms: cycles of each term (compute, core_in, core_out, ddr_in, ddr_out).
        bound: the term that sets the estimate.
        core_bytes: data memory used per core.
        memtile_bytes: memtile memory used in all.
        ddr_bytes: bytes moved to and from DDR.
        candidates: feasible candidates considered (core tile x split x memtile blocks).
        solve: how the choice was made.
        macs: multiply-accumulates of the whole contraction.
        out_depth: buffers of each core's output tile the estimate assumes: 2 (its drain overlaps the
            next tile's compute) or 1 (only one fits; the core waits for each drain).
            ``tl.library.matmul(tiling="auto")`` builds its C fifo with this depth.
    """

    spec: str
    device: str
    core: dict[str, int]
    memtile: dict[str, int] | None
    spatial: dict[str, int]
    cores: int
    estimate: float
    seconds: float
    terms: dict[str, float]
    bound: str
    core_bytes: int
    memtile_bytes: int
    ddr_bytes: int
    candidates: int
    solve: SolveInfo
    macs: int = 0
    out_depth: int = 2

    @property
    def tile(self) -> dict[str, int]:
        """The core-memory tile of every index (the kernel's operand tile): same as ``core``."""
        return self.core

    @property
    def macs_per_cycle(self) -> float:
        """MACs per cycle the estimate implies."""
        return self.macs / self.estimate if self.estimate else 0.0


def _runs(sp: Space) -> list[np.ndarray]:
    """Per index, where each (core tile, split) run of its options starts (options are sorted by them)."""
    out = []
    for t, s in zip(sp.t, sp.s, strict=True):
        change = np.r_[True, (np.diff(t) != 0) | (np.diff(s) != 0)]
        out.append(np.flatnonzero(change))
    return out


def _groups(sp: Space, ev: Evaluation) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The best key (estimate + tie-break) of every (core tile, split) group, by block minima.

    Returns:
        (group keys, an n-d array, inf where infeasible; candidate keys reshaped; run starts).
    """
    key = np.where(ev.feasible, ev.estimate + TIE_BREAK * ev.ddr_bytes, np.inf).reshape(ev.shape)
    runs = _runs(sp)
    g = key
    for axis, starts in enumerate(runs):
        g = np.minimum.reduceat(g, starts, axis=axis)
    return g, key, runs


def _member(key: np.ndarray, runs: list[np.ndarray], group: tuple[int, ...]) -> int:
    """The flat index of the best candidate inside one group's block (the first on ties)."""
    lo, hi = [], []
    for starts, j, n in zip(runs, group, key.shape, strict=True):
        lo.append(int(starts[j]))
        hi.append(int(starts[j + 1]) if j + 1 < len(starts) else n)
    block = key[tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))]
    inner = np.unravel_index(int(np.argmin(block)), block.shape)
    return int(np.ravel_multi_index(tuple(a + i for a, i in zip(lo, inner, strict=True)), key.shape))


def _pick(costs: np.ndarray, solver: str, time_limit: float) -> tuple[int, SolveInfo]:
    """The ILP: one binary per feasible group, exactly one chosen, least cost."""
    prob = pulp.LpProblem("tiling", pulp.LpMinimize)
    z = [prob.add_variable(f"z{j}", 0, 1, cat="Binary") for j in range(len(costs))]
    prob += pulp.lpSum(float(cst) * v for cst, v in zip(costs, z, strict=True))
    prob += pulp.lpSum(z) == 1, "one"
    sol = solve_model(prob, solver, time_limit)
    if not sol.values:
        # the deadline passed: the cheapest candidate by direct comparison is the same optimum
        j = int(np.argmin(costs))
        return j, SolveInfo("argmin", "optimal", 0.0, float(costs[j]), 0.0)
    j = max(range(len(z)), key=lambda k: (sol.values.get(z[k].name, 0.0), -k))
    return j, SolveInfo("ilp", sol.status, 0.0, sol.objective, sol.gap)


def tile_contraction(
    spec: str,
    sizes: dict[str, int],
    dtypes: object,
    device: str | Device,
    cores: int | tuple[int, int] | None = None,
    solver: str = "cbc",
    time_limit: float = 10,
    blocks: str = "memtile",
) -> Tiling:
    """Choose tile sizes per memory level and the spatial split of a contraction.

    Args:
        spec: einsum-style contraction with one or two inputs, e.g. ``"mk,kn->mn"``.
        sizes: extent of every index, e.g. ``{"m": 4096, "k": 4096, "n": 4096}``.
        dtypes: the input dtype (the output accumulates: i32 for integers, f32 for
            floats), or one dtype per input, optionally followed by the output's.
        device: device name or Device.
        cores: most cores to use (default: every compute tile), or a (rows, cols) core
            grid: the split of the output's first two indices, fixed.
        solver: "cbc" or "highs".
        time_limit: seconds for the ILP (a child process killed at the deadline).
        blocks: "memtile": memtile blocks larger than the core grid's block may hold inputs
            for reuse (DDR read once per block); "grid": DDR is re-read per core-grid block,
            as a design that stages one tile at a time reads it (``tl.library.matmul``).

    Returns:
        The :class:`Tiling` with its estimate.

    Raises:
        PlanError: a malformed spec, sizes or dtypes, or no feasible tiling.
    """
    dev = lookup_device(device)
    solver = check_solver(solver)
    c = parse(spec, sizes, dtypes)
    if not dev.supports_dtype(c.in_dtypes[0]):
        raise PlanError(f"{dev.name} cores have no {c.in_dtypes[0]} datapath")
    max_cores, fixed = _cores(cores, c, dev)
    if blocks not in ("memtile", "grid"):
        raise PlanError(f'blocks must be "memtile" or "grid", got {blocks!r}')
    sp = space(c, dev, max_cores, fixed, blocks)
    total = int(np.prod([len(a) for a in sp.t]))
    if total > MAX_CANDIDATES:
        raise PlanError(f"{total} candidate tilings exceed {MAX_CANDIDATES}; give fewer or smaller indices")
    ev = evaluate(c, dev, sp, max_cores)
    groups, key, runs = _groups(sp, ev)
    ok = np.flatnonzero(np.isfinite(groups))
    if ok.size == 0:
        raise PlanError(_infeasible(c, dev))
    j, info = _pick(groups.ravel()[ok], solver, time_limit)
    flat = _member(key, runs, tuple(int(x) for x in np.unravel_index(int(ok[j]), groups.shape)))
    return _result(spec, c, dev, sp, ev, flat, int(ev.feasible.sum()), info)


def _cores(cores: object, c: Contraction, dev: Device) -> tuple[int, dict[str, int] | None]:
    every = len(dev.tiles("compute"))
    if cores is None:
        return every, None
    if isinstance(cores, tuple | list):
        if len(cores) != 2 or len(c.output) < 2 or not all(isinstance(x, int) and x >= 1 for x in cores):
            raise PlanError(f"cores=(rows, cols) needs two positive ints and an output with two indices, got {cores!r}")
        return cores[0] * cores[1], {c.output[0]: cores[0], c.output[1]: cores[1]}
    if not isinstance(cores, int) or isinstance(cores, bool) or cores < 1:
        raise PlanError(f"cores must be a positive int or (rows, cols), got {cores!r}")
    return min(cores, every), None


def _infeasible(c: Contraction, dev: Device) -> str:
    return (
        f"no tiling of {','.join(c.inputs)}->{c.output} with sizes {c.sizes} fits {dev.name}: even the smallest "
        f"core tiles (double-buffered inputs, one {c.out_dtype} output tile) exceed a core's "
        f"{dev.memory_bytes(dev.tiles('compute')[0])} B, or the memtile/DMA limits"
    )


def _result(spec: str, c: Contraction, dev: Device, sp: Space, ev: Evaluation, flat: int, n: int, info: SolveInfo) -> Tiling:
    t, s, big = ev.choice(sp, flat)
    terms = {k: float(v[flat]) for k, v in ev.terms.items()}
    est = float(ev.estimate[flat])
    return Tiling(
        spec=spec.replace(" ", ""),
        device=dev.name,
        core=t,
        memtile=big if dev.tiles("mem") else None,
        spatial=s,
        cores=int(ev.cores[flat]),
        estimate=est,
        seconds=est / dev.clock_hz,
        terms=terms,
        bound=max(terms, key=lambda k: terms[k]),
        core_bytes=int(ev.core_bytes[flat]),
        memtile_bytes=int(ev.mem_bytes[flat]),
        ddr_bytes=int(ev.ddr_bytes[flat]),
        candidates=n,
        solve=info,
        macs=c.macs,
        out_depth=int(ev.out_depth[flat]),
    )
