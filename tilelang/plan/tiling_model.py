"""The tiling cost model: a contraction's candidate tilings and the estimate of each.

A contraction such as ``"mk,kn->mn"`` runs output-stationary on the array:
``s_i`` cores along each output index (the spatial split), each core
accumulating a ``t``-tile (its core-memory tile) of the output over the whole
reduction, fed with ``t``-tiles of the inputs streamed from the memtiles,
which stage ``T``-blocks read from DDR (``T_i`` a multiple of ``s_i t_i`` for
output indices, of ``t_i`` for reduction indices). Devices without memtiles
(AIE1) feed the cores from the shims directly, each input tile broadcast from
one shim channel to the cores that share it (a row of cores shares A's
tiles, a column B's, as ``tl.library.matmul`` builds it), so DDR is read per
``s_i t_i`` block there too.

The estimate (cycles) is the largest of the time terms, which overlap under
double buffering (a roofline over the levels):

- compute: MACs / (cores x MACs per cycle)             (AIE_FACTS "Compute rates")
- core_in: the busiest input's bytes per core / stream width (one S2MM channel each;
  AIE_FACTS "Stream width")
- core_out: output bytes per core / stream width
- memtile_out: each input's bytes out of the memtiles (a tile broadcast to the
  cores sharing it counts once) over its broadcast groups' channels
- kernel: every core's kernel calls, each charged its call overhead, matmul loop
  overhead and busiest slot, no faster than its input tiles stream in, plus the
  pipeline's unoverlapped fill and drain
  (``tiling_calls.py``, with the simulator's cited constants from
  ``tilelang.devices.costs``)
- ddr_in / ddr_out: bytes through the shims / (channels x shim rate), the rate
  at the contiguous runs of a core tile's rows (``Device.shim_run_bytes_per_cycle``; two
  channels each way per NoC shim, AIE_FACTS "DMA channels")

An input X is re-read from the level above once per tile of every output
index it lacks (no reuse across those tiles); the output leaves once, unless
memtile blocks hold more output than the cores accumulate and the reduction
is split over blocks (then partial sums go out and come back).

Feasibility: without memtiles, the shims have a channel for every input
stream and every core's output; tile sizes divide the extents and are multiples of the kernel
intrinsic's shape (``tilelang.devices.costs.MICROKERNEL``); core memory holds double-buffered input
tiles, the output tile (double-buffered when that fits, else single-buffered: ``out_depth``, and
then its drain is not overlapped, see ``tiling_calls.py``) and the stack; memtiles hold double-buffered input blocks
and output staging; BD length and wrap fields hold the transfers
(``Device.bd_field_bits``; the silent-truncation check of AIE_FACTS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tilelang.devices import Device
from tilelang.devices.abi import STACK_BYTES
from tilelang.devices.costs import DEFAULT_SHAPE, MICROKERNEL
from tilelang.errors import PlanError
from tilelang.ir.dtypes import DType
from tilelang.plan.tiling_calls import kernel_term

#: Shim DMA channels per NoC shim in each direction (AIE_FACTS "DMA channels": shim 2+2).
SHIM_CHANNELS = 2


@dataclass(frozen=True)
class Contraction:
    """A parsed contraction.

    Attributes:
        inputs: index string of each input ("mk", "kn").
        output: index string of the output ("mn").
        sizes: extent of every index.
        in_dtypes: dtype of each input.
        out_dtype: dtype of the output.
    """

    inputs: tuple[str, ...]
    output: str
    sizes: dict[str, int]
    in_dtypes: tuple[DType, ...]
    out_dtype: DType

    @property
    def indices(self) -> tuple[str, ...]:
        seen: list[str] = []
        for x in (*self.inputs, self.output):
            seen += [c for c in x if c not in seen]
        return tuple(seen)

    @property
    def reduction(self) -> tuple[str, ...]:
        return tuple(i for i in self.indices if i not in self.output)

    @property
    def macs(self) -> int:
        return math.prod(self.sizes[i] for i in self.indices)

    def numel(self, operand: str) -> int:
        return math.prod(self.sizes[i] for i in operand)


def parse(spec: object, sizes: object, dtypes: object) -> Contraction:
    """Check and parse ``spec``, ``sizes`` and ``dtypes``.

    Raises:
        PlanError: malformed spec, missing or bad sizes, or bad dtypes.
    """
    if not isinstance(spec, str) or spec.count("->") != 1:
        raise PlanError(f"spec must look like 'mk,kn->mn', got {spec!r}")
    lhs, out = spec.replace(" ", "").split("->")
    ins = tuple(lhs.split(","))
    for x in (*ins, out):
        if not x or not x.isalpha() or not x.islower() or len(set(x)) != len(x):
            raise PlanError(f"spec {spec!r}: each operand is distinct lower-case index letters, got {x!r}")
    if not 1 <= len(ins) <= 2:
        raise PlanError(f"spec {spec!r}: one or two inputs are supported, got {len(ins)}")
    if set(out) - set("".join(ins)):
        raise PlanError(f"spec {spec!r}: output indices {sorted(set(out) - set(''.join(ins)))} appear in no input")
    if not isinstance(sizes, dict):
        raise PlanError(f"sizes must be a dict {{index: extent}}, got {sizes!r}")
    letters = sorted(set("".join(ins)))
    for i in letters:
        n = sizes.get(i)
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise PlanError(f"sizes[{i!r}] must be a positive int, got {n!r}")
    ins_dt, out_dt = _dtypes(dtypes, len(ins))
    return Contraction(ins, out, {i: int(sizes[i]) for i in letters}, ins_dt, out_dt)


def _dtypes(dtypes: object, n_in: int) -> tuple[tuple[DType, ...], DType]:
    from tilelang.ir.dtypes import DTYPES, accumulator

    def one(d: object) -> DType:
        if isinstance(d, DType):
            return d
        if isinstance(d, str) and d in DTYPES:
            return DTYPES[d]
        raise PlanError(f"unknown dtype {d!r}; use tl.i8, tl.i16, tl.i32, tl.bf16 or tl.f32")

    if isinstance(dtypes, DType | str):
        d = one(dtypes)
        return (d,) * n_in, accumulator(d)
    if isinstance(dtypes, tuple | list) and len(dtypes) in (n_in, n_in + 1):
        ds = [one(d) for d in dtypes]
        ins = tuple(ds[:n_in])
        return ins, (ds[n_in] if len(ds) > n_in else accumulator(ins[0]))
    raise PlanError(f"dtypes must be one dtype or one per input (plus the output), got {dtypes!r}")


def granularity(c: Contraction, device: Device) -> dict[str, int]:
    """Multiple each index's core tile must be, from the kernel intrinsic shape."""
    table = MICROKERNEL.get(device.arch.name, {})
    r, s, t = table.get(c.in_dtypes[0].name, DEFAULT_SHAPE)
    out: dict[str, int] = {}
    a = c.inputs[0]
    b = c.inputs[1] if len(c.inputs) > 1 else ""
    for i in c.indices:
        if i in a and i in c.output and i not in b:
            out[i] = r
        elif i in a and i in b and i not in c.output:
            out[i] = s
        elif i in b and i in c.output and i not in a:
            out[i] = t
        else:
            out[i] = 1
    return out


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, ascending (by pairs up to the square root: a size of 10**9 takes 3 10**4 steps)."""
    low = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return low + [n // d for d in reversed(low) if d * d != n]


@dataclass(frozen=True)
class Space:
    """Per-index options: (t, s, T) triples, as parallel arrays per index."""

    indices: tuple[str, ...]
    t: tuple[np.ndarray, ...]
    s: tuple[np.ndarray, ...]
    big: tuple[np.ndarray, ...]


def space(c: Contraction, device: Device, max_cores: int, fixed: dict[str, int] | None = None,
          blocks: str = "memtile") -> Space:
    """Every per-index (core tile, cores, memtile block) choice that divides the extents.

    ``fixed`` pins the split of some output indices (a given core grid). ``blocks="grid"`` keeps
    only memtile blocks of one core-grid block (``s * t``; ``t`` along reductions): DDR is then
    re-read per core-grid block, as a design that stages one tile at a time in the memtiles
    (``tl.library.matmul``) reads it; ``"memtile"`` also offers larger blocks held for reuse.

    Raises:
        PlanError: an index has no core tile (extent not a multiple of the granularity).
    """
    g = granularity(c, device)
    wrap = device.bd_field_bits(device.tiles("compute")[0])["wrap"]
    limit = (1 << wrap) - 1 if wrap else 1 << 30
    ts, ss, bigs = [], [], []
    for i in c.indices:
        n = c.sizes[i]
        tiles = [d for d in divisors(n) if d % g[i] == 0 and d <= limit]
        if not tiles:
            raise PlanError(
                f"index {i!r} of extent {n} has no core tile: tiles must divide it and be multiples of {g[i]} "
                f"(the {device.name} kernel shape for {c.in_dtypes[0]}) and at most {limit} (BD wrap field)"
            )
        rows: list[tuple[int, int, int]] = []
        for t in tiles:
            splits = [s for s in divisors(n // t) if s <= max_cores] if i in c.output else [1]
            if fixed and i in fixed:
                splits = [s for s in splits if s == fixed[i]]
            for s in splits:
                rows += [(t, s, s * t * u) for u in (divisors(n // (s * t)) if blocks == "memtile" else [1])]
        if not rows:
            raise PlanError(f"index {i!r} of extent {n} cannot be split over {fixed[i] if fixed else '?'} cores in whole tiles")
        arr = np.array(rows, dtype=np.int64)
        ts.append(arr[:, 0])
        ss.append(arr[:, 1])
        bigs.append(arr[:, 2])
    return Space(c.indices, tuple(ts), tuple(ss), tuple(bigs))


@dataclass(frozen=True)
class Evaluation:
    """Every candidate of a :class:`Space` (flattened), its feasibility, terms and estimate."""

    shape: tuple[int, ...]
    feasible: np.ndarray
    estimate: np.ndarray
    terms: dict[str, np.ndarray]
    cores: np.ndarray
    core_bytes: np.ndarray
    mem_bytes: np.ndarray
    ddr_bytes: np.ndarray
    out_depth: np.ndarray

    def choice(self, sp: Space, flat: int) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        """(core tile, cores, memtile block) per index of candidate ``flat``."""
        pos = np.unravel_index(flat, self.shape)
        t = {i: int(sp.t[k][p]) for k, (i, p) in enumerate(zip(sp.indices, pos, strict=True))}
        s = {i: int(sp.s[k][p]) for k, (i, p) in enumerate(zip(sp.indices, pos, strict=True))}
        big = {i: int(sp.big[k][p]) for k, (i, p) in enumerate(zip(sp.indices, pos, strict=True))}
        return t, s, big


def _axis(arr: np.ndarray, k: int, d: int) -> np.ndarray:
    shape = [1] * d
    shape[k] = -1
    return arr.reshape(shape).astype(np.float64)


def _prod(xs: list[np.ndarray]) -> np.ndarray | float:
    out: np.ndarray | float = 1.0
    for x in xs:
        out = out * x
    return out


def evaluate(c: Contraction, device: Device, sp: Space, max_cores: int) -> Evaluation:
    """Feasibility and estimate of every candidate (the cartesian product of the per-index options)."""
    d = len(sp.indices)
    pos = {i: k for k, i in enumerate(sp.indices)}
    t = {i: _axis(sp.t[pos[i]], pos[i], d) for i in sp.indices}
    s = {i: _axis(sp.s[pos[i]], pos[i], d) for i in sp.indices}
    big = {i: _axis(sp.big[pos[i]], pos[i], d) for i in sp.indices}
    n = {i: float(c.sizes[i]) for i in sp.indices}
    shape = tuple(len(a) for a in sp.t)
    full = np.zeros(shape)
    out_b = c.out_dtype.bytes
    computes = device.tiles("compute")
    rows_c = len({r for _, r in computes})
    cols_c = len({col for col, _ in computes})
    cores = _prod([s[i] for i in c.output]) + full
    ok = cores <= max_cores
    if len(c.output) == 2:
        a, b = (s[i] + full for i in c.output)
        ok &= ((a <= rows_c) & (b <= cols_c)) | ((a <= cols_c) & (b <= rows_c))
    cols_used = np.minimum(np.ceil(cores / rows_c), cols_c)

    # core memory: double-buffered input tiles, the output tile double-buffered when it fits (else
    # single-buffered: out_depth), plus the stack
    tile_b = [_prod([t[i] for i in x]) * dt.bytes for x, dt in zip(c.inputs, c.in_dtypes, strict=True)]
    out_tile = _prod([t[i] for i in c.output]) * out_b
    depth = out_depth(device.memory_bytes(computes[0]), 2 * sum(tile_b) + full, out_tile)
    core_bytes = 2 * sum(tile_b) + depth * out_tile + STACK_BYTES + full
    ok &= depth >= 1
    core = computes[0]
    core_len = device.bd_field_bits(core)["len"]
    for tb in [*tile_b, out_tile]:
        ok &= tb / 4 <= (1 << core_len)

    mems = device.tiles("mem")
    # DDR is read per memtile block, or without memtiles per block of the core grid (a tile is
    # broadcast from its shim channel to the cores that share it)
    ddr_level = big if mems else {i: s[i] * t[i] if i in c.output else t[i] for i in sp.indices}
    mem_bytes = full
    if mems:
        n_mem = np.minimum(cols_used, len(mems))
        blocks = [_prod([big[i] for i in x]) * dt.bytes for x, dt in zip(c.inputs, c.in_dtypes, strict=True)]
        staging = _prod([s[i] * t[i] for i in c.output]) * out_b
        mem_bytes = 2 * sum(blocks) + 2 * staging + full
        ok &= mem_bytes <= n_mem * device.memory_bytes(mems[0])
        mem_len = device.bd_field_bits(mems[0])["len"]
        for blk in blocks:
            ok &= blk / 4 / n_mem <= (1 << mem_len)
        groups = sum(_prod([s[i] for i in x if i in c.output]) for x in c.inputs)
        ok &= groups <= n_mem * device.dma_channels(mems[0], "mm2s")
    shims = [x for x in device.tiles("shim") if device.is_noc_shim(x)]
    if not mems and shims:
        # straight from the shims: a channel per input stream (one per group of cores sharing a tile) and
        # one per core's output
        groups = sum(_prod([s[i] for i in x if i in c.output]) for x in c.inputs)
        ok &= groups <= sum(device.dma_channels(x, "mm2s") for x in shims)
        ok &= cores <= sum(device.dma_channels(x, "s2mm") for x in shims)
    shim_wrap = device.bd_field_bits(shims[0])["wrap"] if shims else 0
    if shim_wrap:
        for x, dt in zip(c.inputs, c.in_dtypes, strict=True):
            ok &= ddr_level[x[-1]] * dt.bytes / 4 <= (1 << shim_wrap) - 1

    bw = device.stream_bits / 8
    ch = SHIM_CHANNELS * np.maximum(1.0, np.minimum(cols_used, len(shims)))
    terms: dict[str, np.ndarray] = {"compute": c.macs / (cores * device.macs_per_cycle(c.in_dtypes[0])) + full}
    core_in = full
    ddr_in = full
    ddr_in_bytes = full
    for x, dt in zip(c.inputs, c.in_dtypes, strict=True):
        size = c.numel(x) * dt.bytes
        lacking = [j for j in c.output if j not in x]
        per_core = size / _prod([s[i] for i in x if i in c.output]) * _prod([n[j] / (s[j] * t[j]) for j in lacking])
        core_in = np.maximum(core_in, per_core / bw)
        # the shim walks the tensor tile by tile, so it reads runs of a core tile's rows, and a
        # channel reading short runs is slower (Device.shim_run_bytes_per_cycle, the simulator's
        # DDR burst model)
        rate = device.shim_run_bytes_per_cycle(_run(x, t, n) * dt.bytes)
        x_bytes = size * _prod([n[j] / ddr_level[j] for j in lacking])
        ddr_in_bytes = ddr_in_bytes + x_bytes
        ddr_in = ddr_in + x_bytes / (ch * rate)
    terms["core_in"] = core_in
    terms["core_out"] = c.numel(c.output) * out_b / cores / bw + full
    covers = np.ones(shape, dtype=bool)
    for i in c.output:
        covers &= (big[i] == s[i] * t[i]) + np.zeros(shape, dtype=bool)
    whole_k = np.ones(shape, dtype=bool)
    for r in c.reduction:
        whole_k &= (big[r] == n[r]) + np.zeros(shape, dtype=bool)
    splits = _prod([n[r] / big[r] for r in c.reduction]) + full
    factor = np.where(covers | whole_k | (not mems), 1.0, 2.0 * splits - 1.0)
    ddr_out_bytes = c.numel(c.output) * out_b * factor
    terms["kernel"] = kernel_term(c, device, t, s, 2 if mems else 1, depth) + full
    terms["ddr_in"] = ddr_in
    terms["ddr_out"] = ddr_out_bytes / (ch * device.shim_run_bytes_per_cycle(_run(c.output, t, n) * out_b))
    estimate = np.maximum.reduce([terms[k] for k in terms])
    flat = {k: v.ravel() for k, v in terms.items()}
    return Evaluation(
        shape=shape,
        feasible=ok.ravel(),
        estimate=estimate.ravel(),
        terms=flat,
        cores=cores.ravel(),
        core_bytes=core_bytes.ravel(),
        mem_bytes=np.asarray(mem_bytes).ravel(),
        ddr_bytes=(ddr_in_bytes + ddr_out_bytes).ravel(),
        out_depth=depth.ravel().astype(np.int64),
    )


def _run(x: tuple[str, ...], level: dict, n: dict) -> np.ndarray | float:
    """Elements of each contiguous run of a row-major tile of ``x`` (``level``: its extent per
    index): its last extent, times the one before while the rows are whole."""
    run = level[x[-1]]
    if len(x) > 1:
        run = run * np.where(level[x[-1]] == n[x[-1]], level[x[-2]], 1)
    return run


def out_depth(memory: int, inputs: np.ndarray | float, out_tile: np.ndarray | float) -> np.ndarray:
    """Buffers of a core's output tile: 2 when they fit next to the inputs and the stack, else 1, else 0.

    ``tl.library.matmul`` builds its C fifo with this depth (IRON's whole_array example double-buffers
    C; a single C buffer is what still fits when it does not, at the price of an unoverlapped drain).

    Args:
        memory: a core's data memory in bytes.
        inputs: bytes of the (double-buffered) input buffers.
        out_tile: bytes of one output tile.

    Returns:
        2, 1 or 0 (0: infeasible) per candidate.
    """
    free = memory - STACK_BYTES - np.asarray(inputs, dtype=np.float64)
    return np.where(free >= 2 * out_tile, 2, np.where(free >= out_tile, 1, 0))
