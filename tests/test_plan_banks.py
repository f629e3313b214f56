"""Bank placement against contention: weights worked out by hand, the ILP against brute force, and
the simulated effect on a bf16 GEMM.

The weights (tilelang/plan/bank_weights.py) are bytes per run: a pair one call
uses together counts 4 x (both buffers' bytes) per call; a buffer a DMA moves
while a call uses another counts 2 x (the moved bytes) per call. The phases
are bank cycles per call: a call's loads and stores of a parameter at 32 bytes
per cycle, a DMA beside it at 16 bytes per cycle, against the call's busiest
slot; the cycles they predict a plan's calls lose must be the cycles the
simulator's calls lose.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simulator
import tilelang as tl
from tilelang.plan.bank_fit import UNPLACED, bank_cost, first_fit_banks
from tilelang.plan.bank_ilp import build_bank_model, distinct, ilp_banks
from tilelang.plan.bank_weights import Phase, contention, contention_weights
from tilelang.plan.buffers import BankProblem, Item, TileMemory

N = 256  # i32 elements: 1 KiB tiles


@tl.kernel
def add(a: tl.Tile[(N,), tl.i32], b: tl.Tile[(N,), tl.i32], c: tl.Tile[(N,), tl.i32]):
    c[...] = a + b


def adder(trips: int, unrolled: bool = False, depth: int = 2):
    """One core: c = a + b over ``trips`` elements of each fifo, in an IR loop or unrolled."""

    def body(A, B, C):
        a = tl.fifo(tl.Tile[(N,), tl.i32], depth=depth, name="a")
        b = tl.fifo(tl.Tile[(N,), tl.i32], depth=depth, name="b")
        c = tl.fifo(tl.Tile[(N,), tl.i32], depth=depth, name="c")

        def step():
            x, y, z = a.acquire(), b.acquire(), c.acquire()
            add(x, y, z)
            a.release()
            b.release()
            c.release()

        @tl.core(name="w")
        def w():
            if unrolled:
                for _ in range(trips):
                    step()
            else:
                for _ in tl.range(trips):
                    step()

        tl.dma(A, a)
        tl.dma(B, b)
        tl.dma(c, C)

    body.__name__ = "adder"
    body.__annotations__ = {k: tl.Tensor[(N * trips,), tl.i32] for k in "ABC"}
    return tl.design(device="npu1")(body)


# -- the weights -------------------------------------------------------------------------------


def test_weights_of_a_double_buffered_call_by_hand() -> None:
    w = contention_weights(adder(4), shared=set())
    kib = 1024
    # Calls use slots 0, 1, 0, 1: each slot pair (a_i, b_i) twice, together: 2 x 4 x 2 KiB.
    assert w[("a_w_0", "b_w_0")] == 2 * 4 * 2 * kib
    assert w[("a_w_0", "c_w_0")] == 2 * 4 * 2 * kib
    # Calls 2-4 each run while the DMAs move the three buffers the previous call released (2 x 1 KiB each):
    # call 2 uses the slot-1 buffers beside the slot-0 ones, call 3 the reverse, call 4 like call 2.
    beside = 3 * 2 * kib
    assert w[("a_w_0", "a_w_1")] == beside  # a double buffer's halves
    assert w[("a_w_1", "b_w_0")] == beside  # slot 1 of one input vs slot 0 of the other
    assert w[("a_w_0", "b_w_1")] == beside
    assert w[("b_w_0", "c_w_1")] == beside
    assert len(w) == 15  # every pair of the six buffers
    # Together outweighs beside: a call's own buffers contend hardest.
    assert w[("a_w_0", "b_w_0")] > w[("a_w_0", "b_w_1")]


@pytest.mark.parametrize("trips", [1, 2, 3, 7, 12])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_loops_weigh_as_their_unrolled_bodies(trips: int, depth: int) -> None:
    looped = contention_weights(adder(trips, depth=depth), shared=set())
    unrolled = contention_weights(adder(trips, unrolled=True, depth=depth), shared=set())
    assert looped == unrolled


def test_long_loops_are_multiplied_out_not_walked() -> None:
    # 100,000 trips of 1 KiB tiles: 25.6 M elements a move, under the verifier's MAX_MOVE_ELEMENTS
    w = contention_weights(adder(100_000), shared=set())
    assert w[("a_w_0", "b_w_0")] == 50_000 * 4 * 2 * 1024


def test_phases_of_a_double_buffered_call_by_hand() -> None:
    _, phases = contention(adder(4), shared=set())
    # add on 1 KiB i32 tiles: loads 2 KiB at 64 B/cycle = 32, stores 1 KiB at 32 B/cycle = 32, so the busiest
    # slot takes 32 cycles; each parameter costs its bank 1 KiB / 32 B = 32 cycles, a DMA moving a 1 KiB
    # buffer beside the call 1 KiB / 16 B = 64.
    first = Phase(32.0, (("a_w_0", 32.0), ("b_w_0", 32.0), ("c_w_0", 32.0)))
    odd = Phase(64.0, tuple(sorted([(f"{f}_w_1", 32.0) for f in "abc"] + [(f"{f}_w_0", 64.0) for f in "abc"])))
    even = Phase(64.0, tuple(sorted([(f"{f}_w_0", 32.0) for f in "abc"] + [(f"{f}_w_1", 64.0) for f in "abc"])))
    assert phases == {first: 1, odd: 2, even: 1}
    # All in one bank the first call needs 96 bank cycles against 32; spread, it loses nothing.
    assert first.worst() == 64.0
    assert first.lost({"a_w_0": 0, "b_w_0": 1, "c_w_0": 2}) == 0.0
    assert odd.lost({"a_w_1": 0, "a_w_0": 0, "b_w_1": 1, "c_w_1": 2}) == 32.0  # 32 + 64 in bank 0, floor 64


@pytest.mark.parametrize("trips", [3, 12])
def test_loop_phases_count_as_their_unrolled_bodies(trips: int) -> None:
    assert contention(adder(trips), shared=set())[1] == contention(adder(trips, unrolled=True), shared=set())[1]


def test_phases_predict_the_cycles_the_simulator_charges() -> None:
    """A bf16 GEMM core cannot keep A, B, C and the DMAs beside them in separate banks (six buffers, four
    banks): the cycles its calls lose in simulation are the cycles the phases predict for the plan's banks,
    and no other assignment of one core's buffers to banks loses fewer."""
    d = tl.library.matmul(256, 256, 256, in_dtype=tl.bf16, out_dtype=tl.bf16,
                          tiling={"m": 64, "k": 64, "n": 64}, cores=(2, 2))
    p = tl.plan(d)
    _, phases = contention(d, set())
    banks = {n: b.bank for n, b in p.buffers.items()}
    predicted = sum(n * ph.lost(banks) for ph, n in phases.items())
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-3, 4, (256, 256)).astype(np.float32) for _ in range(2))
    res = simulator.simulate(p, A=a, B=b)
    alone = {k.name: simulator.cost.kernel_cycles(k, d.device) for k in d.kernels}
    calls = [(name, dur) for _, name, _, dur in res.trace.spans() if name in alone]
    assert len(calls) == 4 * 4 * 4  # cores x C tiles each (2 x 2 blocks) x k steps
    assert predicted > 0
    assert sum(dur - alone[name] for name, dur in calls) == predicted
    # the simulator's own account of it, per core, and the plan's
    assert sum(c.banks for c in res.stats.cores.values()) == predicted
    assert p.solves["buffers"].objective == predicted
    # One core's six 8 KiB buffers over four 16 KiB banks (bank 0 holds the 1 KiB stack), every way.
    tile = p.placement["core_0_0"]
    mine = sorted(n for n, b in p.buffers.items() if b.tile == tile)
    assert len(mine) == 6

    def lost(assign: dict[str, int]) -> float:
        return sum(n * ph.lost(assign) for ph, n in phases.items())

    best = min(
        lost(dict(zip(mine, choice, strict=True)))
        for choice in itertools.product(range(4), repeat=6)
        if all(choice.count(k) <= (1 if k == 0 else 2) for k in range(4))
    )
    assert lost({n: banks[n] for n in mine}) == best


# -- the ILP against brute force ---------------------------------------------------------------


def _problem(sizes: list[int], sets: list[int], free: list[int], pairs: list[tuple[int, int, float]],
             phases: tuple = ()) -> BankProblem:
    mem = TileMemory((0, 2), 4 * 16384, 4, 0, ())
    idx = {}
    items = []
    for i, (size, sid) in enumerate(zip(sizes, sets, strict=True)):
        idx[sid] = idx.get(sid, -1) + 1
        items.append(Item(f"x{i}", f"f{sid}", idx[sid], size, sid))
    named = tuple(sorted((f"x{min(i, j)}", f"x{max(i, j)}", w) for i, j, w in pairs))
    return BankProblem(mem, tuple(items), tuple(free), named, phases)


def _brute_force(bp: BankProblem) -> float:
    best = float("inf")
    for choice in itertools.product([*range(bp.mem.banks), None], repeat=len(bp.items)):
        load = [0] * bp.mem.banks
        banks = {}
        for it, k in zip(bp.items, choice, strict=True):
            if k is not None:
                load[k] += it.size
                banks[it.name] = k
        if all(load[k] <= bp.free[k] for k in range(bp.mem.banks)):
            best = min(best, bank_cost([bp], banks))
    return best


@st.composite
def bank_problems(draw, small: bool = False):
    n = draw(st.integers(2, 5))
    # small: the buffers together fit any bank, so every bank is alike to the model (its symmetry breaking
    # then orders all four)
    sizes = draw(st.lists(st.sampled_from([64, 256] if small else [4096, 8192, 12288]), min_size=n, max_size=n))
    sets = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    free = draw(st.lists(st.sampled_from([8192, 15360, 16384]), min_size=4, max_size=4))
    pairs = [(i, j, draw(st.sampled_from([0.0, 1.0, 7.5, 40.0]))) for i in range(n) for j in range(i + 1, n)]
    phases = []
    for _ in range(draw(st.integers(0, 3))):
        used = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=n, unique=True))
        demand = tuple(sorted((f"x{i}", float(draw(st.sampled_from([256, 512, 2048])))) for i in used))
        floor = float(draw(st.sampled_from([512, 2176])))
        phases.append((float(draw(st.sampled_from([1, 30, 500]))), Phase(floor, demand)))
    return _problem(sorted(sizes, reverse=True), sets, free, [p for p in pairs if p[2] > 0], tuple(phases))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bank_problems())
def test_the_bank_ilp_finds_the_brute_force_optimum(bp: BankProblem) -> None:
    best = _brute_force(bp)
    choose, record = ilp_banks("cbc", 20)
    got = choose([bp])
    assert bank_cost([bp], got) == pytest.approx(best)
    assert bank_cost([bp], first_fit_banks([bp])) >= best - 1e-9
    for k in range(bp.mem.banks):
        assert sum(it.size for it in bp.items if got.get(it.name) == k) <= bp.free[k]
    assert record.method in ("ilp", "first-fit", "ilp->first-fit")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bank_problems(small=True))
def test_the_bank_ilp_keeps_the_optimum_when_every_bank_is_alike(bp: BankProblem) -> None:
    best = _brute_force(bp)
    choose, _ = ilp_banks("cbc", 20)
    assert bank_cost([bp], choose([bp])) == pytest.approx(best)


@pytest.mark.slow
def test_a_dozen_alike_buffers_are_solved_to_optimality() -> None:
    """A core holding a block resident (``eliminate_redundant_transfers``): twelve 64-byte buffers in four
    banks. Without ordering the interchangeable banks the solver spent its whole time share proving
    optimality (status "time-limited", a PlanWarning that the banks may differ on another machine)."""
    from test_passes_redundant import repeated_blocks

    from tilelang.passes import eliminate_redundant_transfers

    p = tl.plan(eliminate_redundant_transfers(repeated_blocks(2, 3, 3, 3, 16, False)))
    info = p.solves["buffers"]
    assert (info.method, info.status) == ("ilp", "optimal")


def test_identical_tiles_are_solved_once() -> None:
    pairs = [(0, 1, 5.0), (1, 2, 1.0)]
    a = _problem([8192, 8192, 4096], [0, 0, 1], [15360, 16384, 16384, 16384], pairs)
    b = replace(a, mem=TileMemory((1, 2), 4 * 16384, 4, 0, ()))
    c = _problem([8192, 8192, 4096], [0, 0, 1], [8192, 16384, 16384, 16384], pairs)
    reps, of = distinct([a, b, c])
    assert len(reps) == 2 and of == [0, 0, 1]
    prob, _ = build_bank_model(reps)
    assert len(prob.variables()) < 2 * 3 * (4 + 1) + 2 * len(pairs) + 1


def test_unplaced_buffers_cost_more_than_any_sharing() -> None:
    bp = _problem([16384, 16384], [0, 1], [16384, 16384, 0, 0], [(0, 1, 100.0)])
    assert bank_cost([bp], {"x0": 0}) == UNPLACED
    assert bank_cost([bp], {"x0": 0, "x1": 1}) == 0


# -- the effect on a bf16 GEMM -----------------------------------------------------------------


def _matmul():
    return tl.library.matmul(128, 128, 128, tiling={"m": 32, "k": 32, "n": 32}, cores=(2, 2))


def test_a_gemm_call_never_shares_a_bank_with_its_own_operands() -> None:
    d = _matmul()
    p = tl.plan(d)
    for core in d.cores:
        tile = p.placement[core.name]
        mine = {n: b.bank for n, b in p.buffers.items() if b.tile == tile}
        for i in range(2):
            a = next(v for n, v in mine.items() if n.startswith("a_") and n.endswith(f"_{i}"))
            b = next(v for n, v in mine.items() if n.startswith("b_") and n.endswith(f"_{i}"))
            cs = {v for n, v in mine.items() if n.startswith("c_")}
            assert a != b and a not in cs and b not in cs, (core.name, mine)


def test_contention_aware_banks_simulate_faster_than_operands_sharing_a_bank() -> None:
    d = _matmul()
    p = tl.plan(d)
    # The layout first fit used to give: slot i of A and slot i of B in one bank, C's halves apart.
    old = {("c", 0): 1, ("c", 1): 2, ("a", 0): 3, ("b", 0): 3, ("a", 1): 0, ("b", 1): 0}
    worse = dict(p.buffers)
    floors: dict = {}
    for n, b in sorted(p.buffers.items(), key=lambda nb: (nb[1].tile, -nb[1].size, nb[0])):
        if p.device.tile_kind(b.tile) != "compute":
            continue
        bank = old[(n[0], b.index)]
        floor = floors.get((b.tile, bank), bank * 16384 + (1024 if bank == 0 else 0))
        worse[n] = replace(b, bank=bank, offset=floor)
        floors[(b.tile, bank)] = floor + b.size
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 128)).astype(np.float32)
    good = simulator.simulate(p, A=a, B=b, trace=False)
    bad = simulator.simulate(replace(p, buffers=worse), A=a, B=b, trace=False)
    np.testing.assert_array_equal(good.outputs["C"], bad.outputs["C"])
    # The run is bound by DDR (the shim reads 32x32 bf16 tiles in 64-byte runs; docs/simulator.md,
    # "DDR as the shim DMA sees it"), so the cores' time in kernel calls, which bank conflicts
    # lengthen, shows the difference; the run is no slower either.
    def busy(r: simulator.SimResult) -> int:
        return sum(c.busy for c in r.stats.cores.values())

    assert busy(good) < 0.95 * busy(bad), (busy(good), busy(bad))
    assert good.cycles <= bad.cycles, (good.cycles, bad.cycles)


def test_greedy_buffers_that_fragment_the_banks_are_laid_end_to_end() -> None:
    """A 3-core f32 cascade chain with 32^3 tiles on AIE1 needs 29,952 B of a core's 32,768: the bank layout
    leaves no gap for the buffer larger than a bank, so the greedy plan lays that tile's buffers end to end
    (it was a PlanError before, where the ILP planned). The buffers do not overlap, C equals numpy, and
    mlir-aie accepts the physical module."""
    d = tl.library.matmul(64, 96, 64, in_dtype=tl.f32, out_dtype=tl.f32, device="xcvc1902", cores=(1, 1),
                          layout="streams", cascade=3, tiling={"m": 32, "k": 32, "n": 32})
    p = tl.plan(d, strategy="greedy")
    by_tile: dict = {}
    for b in p.buffers.values():
        by_tile.setdefault(b.tile, []).append((b.offset, b.offset + b.size))
    for tile, spans in by_tile.items():
        spans.sort()
        assert spans[-1][1] <= p.device.memory_bytes(tile)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), (tile, spans)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((96, 64)).astype(np.float32)
    res = tl.simulate(p, **tl.library.pack_streams(d, a, b))
    np.testing.assert_allclose(tl.library.unpack_streams(d, res.outputs["C"]), a @ b, rtol=1e-4, atol=1e-4)
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    vendor.compile_text(tl.emit_mlir(p, level="physical"), "physical")
