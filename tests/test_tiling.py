"""Tests of tl.tile_contraction: brute-force optimality, the cost model by hand, constraints, errors.

The brute force evaluates every candidate of the space (no grouping, no
solver) and takes the least estimate; the ILP must match it. A scalar
re-implementation of the cost model (written from the module docstring of
tiling_model.py) checks the vectorised one on sampled candidates.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import tilelang as tl
from tilelang.devices import costs
from tilelang.errors import PlanError
from tilelang.plan.tiling import tile_contraction
from tilelang.plan.tiling_model import evaluate, granularity, parse, space

CASES = [("npu1", tl.i8), ("npu1", tl.bf16), ("npu2", tl.i8), ("npu2", tl.bf16), ("xcvc1902", tl.i8), ("xcvc1902", tl.f32)]
GEMM = {"m": 4096, "k": 4096, "n": 4096}


def brute_force(spec, sizes, dtype, device):
    dev = tl.device(device)
    c = parse(spec, sizes, dtype)
    sp = space(c, dev, len(dev.tiles("compute")))
    ev = evaluate(c, dev, sp, len(dev.tiles("compute")))
    return float(ev.estimate[ev.feasible].min())


@pytest.mark.parametrize("device, dtype", CASES)
def test_4096_gemm_matches_brute_force(device, dtype):
    # its speed is benchmarks/plan_bench.py's to measure, not a wall-clock assert here
    t = tile_contraction("mk,kn->mn", GEMM, dtype, device)
    assert t.estimate == brute_force("mk,kn->mn", GEMM, dtype, device)
    assert t.solve.status == "optimal"
    dev = tl.device(device)
    assert t.cores <= len(dev.tiles("compute"))
    # the compute term is exact arithmetic: MACs / (cores x MACs per cycle)
    assert t.terms["compute"] == pytest.approx(4096**3 / (t.cores * dev.macs_per_cycle(dtype)))
    assert t.estimate >= t.terms["compute"]


def test_tiles_divide_and_respect_the_kernel_shape_and_memory():
    t = tile_contraction("mk,kn->mn", GEMM, tl.bf16, "npu1")
    # npu1 bf16 kernel shape (4, 8, 4): m multiple of 4, k of 8, n of 4
    assert t.core["m"] % 4 == 0 and t.core["k"] % 8 == 0 and t.core["n"] % 4 == 0
    for i, n in GEMM.items():
        assert n % (t.spatial[i] * t.core[i]) == 0
        assert t.memtile[i] % (t.spatial[i] * t.core[i]) == 0 and n % t.memtile[i] == 0
    m, k, n = t.core["m"], t.core["k"], t.core["n"]
    core_bytes = 2 * (m * k * 2 + k * n * 2) + t.out_depth * m * n * 4 + 1024
    assert t.core_bytes == core_bytes <= 65536
    # C is double-buffered exactly when two C tiles fit
    assert t.out_depth == (2 if core_bytes + (2 - t.out_depth) * m * n * 4 <= 65536 else 1)
    assert t.spatial["k"] == 1 and t.cores == t.spatial["m"] * t.spatial["n"]


def test_cost_model_by_hand_single_core():
    # 64^3 int16 on one npu1 core: 64*64*64 / 64 MACs per cycle = 4096 cycles of compute ([F] int16 64)
    t = tile_contraction("mk,kn->mn", {"m": 64, "k": 64, "n": 64}, tl.i16, "npu1", cores=1)
    assert t.cores == 1 and t.terms["compute"] == 4096.0
    # the output (64*64 i32 = 16 KiB) leaves at 4 B per cycle: 4096 cycles
    assert t.terms["core_out"] == 4096.0
    assert t.estimate == max(t.terms.values())


def test_fixed_core_grid():
    t = tile_contraction("mk,kn->mn", {"m": 512, "k": 512, "n": 512}, tl.bf16, "npu1", cores=(4, 4))
    assert t.spatial == {"m": 4, "k": 1, "n": 4} and t.cores == 16
    assert t.tile == t.core


def shim_rate(dev, x, t, c, nbytes):
    """Bytes per cycle of a shim channel walking ``x`` tile by tile: its contiguous run is a core tile's
    last extent (times the one before when rows are whole), in bursts of at most the largest burst
    length, with ``outstanding`` bursts in flight over the burst latency, capped at the stream."""
    run = t[x[-1]] * (t[x[-2]] if len(x) > 1 and t[x[-1]] == c.sizes[x[-1]] else 1) * nbytes
    hm = dev.host_memory
    latency = round(hm.latency_ns * 1e-9 * dev.clock_hz)
    burst = run / math.ceil(run / max(hm.burst_bytes))
    return min(dev.stream_bits / 8, hm.outstanding * burst / latency)


def scalar_estimate(c, dev, t, s, big):
    """The cost model written out for one candidate (None when infeasible)."""
    computes = dev.tiles("compute")
    rows_c, cols_c = len({r for _, r in computes}), len({x for x, _ in computes})
    out_b = c.out_dtype.bytes
    cores = math.prod(s[i] for i in c.output)
    if len(c.output) == 2:
        a, b = (s[i] for i in c.output)
        if not ((a <= rows_c and b <= cols_c) or (a <= cols_c and b <= rows_c)):
            return None
    cols_used = min(math.ceil(cores / rows_c), cols_c)
    tiles = [math.prod(t[i] for i in x) * dt.bytes for x, dt in zip(c.inputs, c.in_dtypes, strict=True)]
    out_tile = math.prod(t[i] for i in c.output) * out_b
    # C double-buffered when two fit, else single-buffered, else infeasible
    free = dev.memory_bytes(computes[0]) - 1024 - 2 * sum(tiles)
    depth = 2 if free >= 2 * out_tile else 1 if free >= out_tile else 0
    if not depth:
        return None
    mems = dev.tiles("mem")
    level = big if mems else {i: s[i] * t[i] if i in c.output else t[i] for i in t}  # broadcast per grid block
    if mems:
        n_mem = min(cols_used, len(mems))
        blocks = [math.prod(big[i] for i in x) * dt.bytes for x, dt in zip(c.inputs, c.in_dtypes, strict=True)]
        staging = math.prod(s[i] * t[i] for i in c.output) * out_b
        if 2 * sum(blocks) + 2 * staging > n_mem * dev.memory_bytes(mems[0]):
            return None
        if sum(math.prod(s[i] for i in x if i in c.output) for x in c.inputs) > 6 * n_mem:
            return None
    bw = dev.stream_bits / 8
    shims = [x for x in dev.tiles("shim") if dev.is_noc_shim(x)]
    if not mems:  # one shim channel per input stream (group of cores sharing a tile) and per core's output
        if sum(math.prod(s[i] for i in x if i in c.output) for x in c.inputs) > sum(
                dev.dma_channels(x, "mm2s") for x in shims):
            return None
        if cores > sum(dev.dma_channels(x, "s2mm") for x in shims):
            return None
    ch = 2 * max(1, min(cols_used, len(shims)))
    terms = [c.macs / (cores * dev.macs_per_cycle(c.in_dtypes[0])), c.numel(c.output) * out_b / cores / bw]
    ddr_in = 0.0
    for x, dt in zip(c.inputs, c.in_dtypes, strict=True):
        size = c.numel(x) * dt.bytes
        lacking = [j for j in c.output if j not in x]
        per_core = size / math.prod(s[i] for i in x if i in c.output) * math.prod(c.sizes[j] / (s[j] * t[j]) for j in lacking)
        terms.append(per_core / bw)
        ddr_in += size * math.prod(c.sizes[j] / level[j] for j in lacking) / (ch * shim_rate(dev, x, t, c, dt.bytes))
    covers = all(big[i] == s[i] * t[i] for i in c.output) or all(big[r] == c.sizes[r] for r in c.reduction) or not mems
    factor = 1.0 if covers else 2 * math.prod(c.sizes[r] / big[r] for r in c.reduction) - 1
    terms += [ddr_in, c.numel(c.output) * out_b * factor / (ch * shim_rate(dev, c.output, t, c, out_b))]
    terms.append(scalar_kernel_term(c, dev, t, s, depth))
    return max(terms)


def scalar_kernel_term(c, dev, t, s, depth=2):
    """The per-call term written out for one candidate (tiling_calls.py's docstring, with the shared constants)."""
    macs = dev.macs_per_cycle(c.in_dtypes[0])
    m0, _, n0 = costs.intrinsic_shape(macs)
    reg = dict(zip(c.output, (m0, n0), strict=False))  # m0 and n0 for the first two output indices
    two = len(c.inputs) == 2
    blocks = {j: math.ceil(t[j] / (costs.MATMUL_REG_BLOCK * reg.get(j, 1))) if two else 1 for j in c.output}
    steps = math.prod(c.sizes[r] // t[r] for r in c.reduction)
    out_bytes = math.prod(t[i] for i in c.output) * c.out_dtype.bytes
    inputs = 0
    ports = costs.core_ports(dev.arch.name)
    bank = 0.0  # each operand in a bank of its own: one access of the bank's width per cycle
    for x, dt in zip(c.inputs, c.in_dtypes, strict=True):
        moved = math.prod(t[i] for i in x) * dt.bytes * math.prod(blocks[j] for j in c.output if j not in x)
        inputs += moved
        bank = max(bank, moved / ports.bank_bytes)
    fixed = math.prod(blocks.values()) * costs.MATMUL_BLOCK_OVERHEAD if two else 0
    # the loop's pipeline fill: a load's, a multiply-accumulate's and a store's latency, less one cycle
    lat = costs.PIPELINE_LATENCY[dev.arch.name]
    mac = costs.FLOAT_UNITS[dev.arch.name].latency if c.in_dtypes[0].is_float else lat.int_multiply
    fixed += lat.load + mac + lat.store - 1

    def call(loads, c_accesses):
        busiest = max(loads / ports.load_bytes, out_bytes / ports.store_bytes,
                      math.prod(t.values()) / macs, bank, c_accesses * out_bytes / ports.bank_bytes)
        return costs.CALL_OVERHEAD + math.ceil(fixed + busiest)

    bw = dev.stream_bits / 8
    feed = max(costs.BD_SETUP_CYCLES + math.prod(t[i] for i in x) * dt.bytes / bw
               for x, dt in zip(c.inputs, c.in_dtypes, strict=True))
    drain = costs.BD_SETUP_CYCLES + out_bytes / bw
    out_tiles = math.prod(c.sizes[i] // (s[i] * t[i]) for i in c.output)
    hops = 2 if dev.tiles("mem") else 1
    # the first call of an output tile writes it, the others also read it to accumulate
    work = max(call(inputs, 1), feed) + (steps - 1) * max(call(inputs + out_bytes, 2), feed)
    if depth == 1:
        # one C buffer: the core waits for each tile's drain (to the memtile) before starting the next;
        # the last tile's first drain hop is inside its step already
        return out_tiles * (work + drain) + hops * feed + (hops - 1) * drain
    return out_tiles * max(work, drain) + hops * (feed + drain)


@pytest.mark.parametrize("device, dtype", [("npu1", tl.bf16), ("npu2", tl.i8), ("xcvc1902", tl.i16)])
def test_vectorised_model_matches_scalar_model(device, dtype):
    dev = tl.device(device)
    c = parse("mk,kn->mn", {"m": 512, "k": 256, "n": 1024}, dtype)
    sp = space(c, dev, len(dev.tiles("compute")))
    ev = evaluate(c, dev, sp, len(dev.tiles("compute")))
    rng = random.Random(0)
    feasible = np.flatnonzero(ev.feasible)
    picks = rng.sample(range(ev.estimate.size), 150) + rng.sample(list(feasible), min(150, feasible.size))
    for flat in picks:
        t, s, big = ev.choice(sp, flat)
        want = scalar_estimate(c, dev, t, s, big)
        if want is None:
            assert not ev.feasible[flat]
        elif ev.feasible[flat]:
            assert ev.estimate[flat] == pytest.approx(want)


def test_granularity_roles():
    c = parse("mk,kn->mn", GEMM, tl.i8)
    assert granularity(c, tl.device("npu1")) == {"m": 4, "k": 8, "n": 8}
    assert granularity(c, tl.device("npu2")) == {"m": 8, "k": 8, "n": 8}


@pytest.mark.parametrize(
    "args, message",
    [
        (("mk,kn", GEMM, tl.i8, "npu1"), "spec must look like"),
        (("mk,kn->mz", GEMM, tl.i8, "npu1"), r"output indices \['z'\] appear in no input"),
        (("mk,kn->mn", {"m": 4096, "k": 4096}, tl.i8, "npu1"), r"sizes\['n'\] must be a positive int"),
        (("mk,kn->mn", {"m": 4098, "k": 4096, "n": 4096}, tl.i8, "npu1"), "index 'm' of extent 4098 has no core tile"),
        (("mk,kn->mn", GEMM, "q8", "npu1"), "unknown dtype 'q8'"),
        (("mk,kn->mn", GEMM, tl.bf16, "xcvc1902"), "xcvc1902 cores have no bf16 datapath"),
    ],
)
def test_bad_input(args, message):
    with pytest.raises(PlanError, match=message):
        tile_contraction(*args)


def test_impossible_core_grid():
    # three core rows cannot split m = 64 into whole tiles of a multiple of 4
    with pytest.raises(PlanError, match="cannot be split over 3 cores"):
        tile_contraction("mk,kn->mn", {"m": 64, "k": 64, "n": 64}, tl.i8, "npu1", cores=(3, 1))


@pytest.mark.parametrize("device", ["npu1", "npu2"])
@pytest.mark.parametrize("out", [tl.f32, tl.bf16])
@pytest.mark.parametrize("tile", [(64, 8, 64), (64, 32, 64), (32, 32, 32), (32, 128, 32), (16, 64, 32)])
def test_call_cycles_match_the_simulators_kernel_cost(tile, out, device):
    """The tiler's per-call cycles are the simulator's for the library's two matmul kernels (the first k-step's,
    which writes C, and the accumulating one), each operand in a bank of its own."""
    from simulator import cost
    from tilelang.plan.tiling_calls import call_cycles

    dev = tl.device(device)
    tiling = dict(zip("mkn", tile, strict=True))
    d = tl.library.matmul(256, 256, 256, out_dtype=out, device=dev, cores=(4, 4), tiling=tiling)
    kernels = {k.name: k for k in d.kernels}
    c = parse("mk,kn->mn", {"m": 256, "k": 256, "n": 256}, (tl.bf16, tl.bf16, out))
    t = {i: np.array(float(x)) for i, x in zip("mkn", tile, strict=True)}
    apart = {"a": 0, "b": 1, "c": 2}
    assert float(call_cycles(c, dev, t, accumulate=True)) == cost.call_timing(kernels["matmul_acc"], dev, apart).cycles
    assert float(call_cycles(c, dev, t, accumulate=False)) == cost.call_timing(kernels["matmul_first"], dev,
                                                                               apart).cycles


def _simulated_cycles(tiling):
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-4, 5, (256, 256)).astype(np.float32) for _ in range(2))
    d = tl.library.matmul(256, 256, 256, device="npu1", cores=(4, 4), tiling=tiling)
    res = tl.simulate(tl.plan(d, strategy="greedy"), A=a, B=b)
    assert np.array_equal(res.outputs["C"], a.astype(np.float64) @ b)
    return res.cycles


def test_auto_tiling_simulates_near_the_best_of_a_sweep():
    """At 256^3 on npu1's 4 x 4 cores, tiling="auto" is no slower than 32^3 tiles and within 10% of the
    best of a sweep of plausible tiles, in simulation (the per-call costs decide this size)."""
    sweep = [(32, 32, 32), (64, 32, 64), (64, 64, 64), (32, 64, 64), (64, 64, 32), (32, 128, 32), (64, 8, 64)]
    best = min(_simulated_cycles(dict(zip("mkn", t, strict=True))) for t in sweep)
    auto = _simulated_cycles("auto")
    assert auto <= _simulated_cycles({"m": 32, "k": 32, "n": 32})
    assert auto <= 1.10 * best


def scalar_brute_force(spec, sizes, dtypes, device, grid):
    """The least scalar-model estimate over every (core tile, memtile block) of a small problem on a
    fixed core grid, and its core tile and output depth."""
    dev = tl.device(device)
    c = parse(spec, sizes, dtypes)
    cores = grid[0] * grid[1]
    sp = space(c, dev, cores, dict(zip(c.output, grid, strict=True)))
    best = None
    for pos in np.ndindex(*(len(a) for a in sp.t)):
        t = {i: int(sp.t[k][p]) for k, (i, p) in enumerate(zip(sp.indices, pos, strict=True))}
        s = {i: int(sp.s[k][p]) for k, (i, p) in enumerate(zip(sp.indices, pos, strict=True))}
        big = {i: int(sp.big[k][p]) for k, (i, p) in enumerate(zip(sp.indices, pos, strict=True))}
        if math.prod(s[i] for i in c.output) > cores:
            continue
        est = scalar_estimate(c, dev, t, s, big)
        if est is not None and (best is None or est < best[0]):
            best = (est, t)
    return best


@pytest.mark.parametrize("out", [tl.f32, tl.bf16])
def test_ilp_matches_scalar_brute_force_with_single_buffered_outputs(out):
    """At 512^3 bf16 on 2 x 2 npu1 cores, the ILP's optimum equals the scalar model's brute force over
    every candidate. With an f32 C that optimum is a tile whose C fits only single-buffered (a tiler
    that dropped such tiles would miss it); with a bf16 C, a double-buffered one."""
    from tilelang.devices.abi import STACK_BYTES

    dtypes = (tl.bf16, tl.bf16, out)
    sizes = {"m": 512, "k": 512, "n": 512}
    want, tile = scalar_brute_force("mk,kn->mn", sizes, dtypes, "npu1", (2, 2))
    got = tile_contraction("mk,kn->mn", sizes, dtypes, "npu1", cores=(2, 2))
    assert got.estimate == pytest.approx(want)
    assert got.core == tile
    m, k, n = tile["m"], tile["k"], tile["n"]
    double = 2 * (2 * m * k + 2 * k * n + out.bits // 8 * m * n) + STACK_BYTES
    dev = tl.device("npu1")
    fits_double = double <= dev.memory_bytes(dev.tiles("compute")[0])
    assert got.out_depth == (2 if fits_double else 1)
    assert fits_double is (out is tl.bf16)


def test_single_buffered_output_tiles_are_candidates_and_pay_their_drain():
    """64 x 64 x 64 with an f32 C needs 2 x 16 KiB (A, B) + 2 x 16 KiB (C) + 1 KiB > 64 KiB: it is
    feasible only with one C buffer, and its kernel term then adds every tile's unoverlapped drain."""
    from tilelang.plan.tiling_calls import kernel_term

    dev = tl.device("npu1")
    c = parse("mk,kn->mn", {"m": 1024, "k": 1024, "n": 1024}, (tl.bf16, tl.bf16, tl.f32))
    sp = space(c, dev, 16, {"m": 4, "n": 4})
    ev = evaluate(c, dev, sp, 16)
    picks = [f for f in range(ev.estimate.size)
             if ev.choice(sp, f)[0] == {"m": 64, "k": 64, "n": 64} and ev.feasible[f]]
    assert picks and all(ev.out_depth[f] == 1 for f in picks)
    assert all(ev.core_bytes[f] == 2 * 2 * 64 * 64 * 2 + 64 * 64 * 4 + 1024 for f in picks)
    t = {i: np.array(64.0) for i in "mkn"}
    s = {"m": np.array(4.0), "k": np.array(1.0), "n": np.array(4.0)}
    drain = costs.BD_SETUP_CYCLES + 64 * 64 * 4 / (dev.stream_bits / 8)
    one, two = (float(kernel_term(c, dev, t, s, 2, d)) for d in (1, 2))
    # 16 output tiles per core, each waiting for its drain; the final drain's first hop is in the last tile
    steps = float(kernel_term(c, dev, t, s, 2, 2)) - 2 * drain  # depth 2: drains hidden behind compute
    assert one == pytest.approx(steps + 16 * drain + drain)
    assert one > two
    chosen = tile_contraction("mk,kn->mn", {"m": 1024, "k": 1024, "n": 1024}, (tl.bf16, tl.bf16, tl.f32), "npu1",
                              cores=(4, 4))
    assert chosen.estimate == pytest.approx(float(ev.estimate[ev.feasible].min()))


@pytest.mark.parametrize("out", [tl.f32, tl.bf16])
def test_library_auto_builds_the_c_depth_the_tiler_assumed(out):
    sizes = {"m": 1024, "k": 1024, "n": 1024}
    t = tile_contraction("mk,kn->mn", sizes, (tl.bf16, tl.bf16, out), "npu1", cores=(4, 4), blocks="grid")
    d = tl.library.matmul(1024, 1024, 1024, out_dtype=out, device="npu1", cores=(4, 4), tiling="auto")
    (mac,) = [k for k in d.kernels if k.name == "matmul_acc"]
    a, b = (p.type.shape for p in mac.params[:2])
    assert {"m": a[0], "k": a[1], "n": b[1]} == t.core
    depths = {f.depth for f in d.fifos if f.name.startswith("c_l1_")}
    assert depths == {t.out_depth}
    # f32 C: the 64^3 tile with one C buffer wins; bf16 C: a double-buffered C
    assert t.out_depth == (1 if out is tl.f32 else 2)
    if out is tl.f32:
        assert t.core == {"m": 64, "k": 64, "n": 64}


def _aie1_cycles(tiling):
    rng = np.random.default_rng(1)
    a, b = (rng.integers(-4, 5, (256, 256)).astype(np.int16) for _ in range(2))
    d = tl.library.matmul(256, 256, 256, in_dtype=tl.i16, out_dtype=tl.i32, device="xcvc1902", tiling=tiling,
                          layout="streams")
    res = tl.simulate(tl.plan(d, strategy="greedy"), trace=False, **tl.library.pack_streams(d, a, b))
    assert np.array_equal(tl.library.unpack_streams(d, res.outputs["C"]), a.astype(np.int32) @ b.astype(np.int32))
    return res.cycles


def test_auto_tiling_on_aie1_simulates_near_the_best_of_a_sweep():
    """Without memtiles each shim stream is broadcast to a row (A) or column (B) of cores: tiling="auto" must
    price DDR per grid block, or it trades the kernel's efficiency for DDR traffic the design never reads."""
    sweep = [(64, 8, 64), (64, 16, 64), (32, 32, 32), (32, 64, 32), (16, 64, 16)]
    best = min(_aie1_cycles(dict(zip("mkn", t, strict=True))) for t in sweep)
    assert _aie1_cycles("auto") <= 1.10 * best


def test_grid_blocks_read_ddr_per_core_grid_block():
    """blocks="grid" (what tl.library.matmul streams): no memtile block beyond the core grid's, so the
    estimate counts A re-read per column block and B per row block; a bad value is named."""
    sizes = {"m": 256, "k": 256, "n": 256}
    grid = tile_contraction("mk,kn->mn", sizes, tl.bf16, "npu1", cores=(4, 4), blocks="grid")
    assert grid.memtile == {i: grid.spatial[i] * grid.core[i] if i in "mn" else grid.core[i] for i in "mkn"}
    free = tile_contraction("mk,kn->mn", sizes, tl.bf16, "npu1", cores=(4, 4))
    assert free.estimate <= grid.estimate
    with pytest.raises(tl.PlanError, match='blocks must be "memtile" or "grid"'):
        tile_contraction("mk,kn->mn", sizes, tl.bf16, "npu1", blocks="l3")
