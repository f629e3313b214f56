"""Tests of tl.plan: placement, carriage, buffers, routes, determinism and the PlanError messages.

Designs are written with the frontend. Expected values are worked out by hand
from the device facts (docs/devices.md): npu1 cores have 64 KiB in 4 banks of
16 KiB, 2 S2MM + 2 MM2S DMA channels; a core's stack takes the first 1 KiB.
"""

from __future__ import annotations

import pytest
from test_plan_checks import check_plan

import tilelang as tl
from tilelang.errors import PlanError
from tilelang.ir.plan import Plan
from tilelang.plan import plan
from tilelang.plan.problem import build_problem

STRATEGIES = ["greedy", "ilp"]


def copy_kernel(n: int, dtype=tl.i32):
    def copy(a, c):
        c[...] = a

    copy.__annotations__ = {"a": tl.Tile[(n,), dtype], "c": tl.Tile[(n,), dtype]}
    return tl.kernel(copy)


def vmul(n: int = 1024, device: str = "npu1", depth: int = 2, tile: tuple[int, int] | None = None):
    @tl.kernel
    def scale(a: tl.Tile[(n,), tl.i32], c: tl.Tile[(n,), tl.i32], factor: tl.i32):
        c[...] = a * factor

    def body(A, C):
        a_in = tl.fifo(tl.Tile[(n,), tl.i32], depth=depth, name="a_in")
        c_out = tl.fifo(tl.Tile[(n,), tl.i32], depth=depth, name="c_out")

        @tl.core(name="worker", tile=tile)
        def worker():
            for _ in tl.range(4):
                a, c = a_in.acquire(), c_out.acquire()
                scale(a, c, 3)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)

    body.__name__ = "vmul"
    body.__annotations__ = {"A": tl.Tensor[(4 * n,), tl.i32], "C": tl.Tensor[(4 * n,), tl.i32]}
    return tl.design(device=device)(body)


def two_stage(n: int = 256, pins=(None, None), device: str = "npu1"):
    """host -> first -> mid -> second -> host."""
    copy = copy_kernel(n)

    def body(A, C):
        a = tl.fifo(tl.Tile[(n,), tl.i32], name="a")
        mid = tl.fifo(tl.Tile[(n,), tl.i32], name="mid")
        c = tl.fifo(tl.Tile[(n,), tl.i32], name="c")
        for name, src, dst, pin in (("first", a, mid, pins[0]), ("second", mid, c, pins[1])):

            def work(src=src, dst=dst):
                x, y = src.acquire(), dst.acquire()
                copy(x, y)
                src.release()
                dst.release()

            tl.core(name=name, tile=pin)(work)
        tl.dma(A, a)
        tl.dma(c, C)

    body.__name__ = "two_stage"
    body.__annotations__ = {"A": tl.Tensor[(n,), tl.i32], "C": tl.Tensor[(n,), tl.i32]}
    return tl.design(device=device)(body)


def fan_in(k: int, n: int = 256, device: str = "npu1"):
    """One core reading ``k`` host-fed fifos (k > 2 runs out of S2MM channels)."""
    ins = copy_kernel(n)

    def body(*tensors):
        fifos = [tl.fifo(tl.Tile[(n,), tl.i32], name=f"in{i}") for i in range(k)]
        out = tl.fifo(tl.Tile[(n,), tl.i32], name="out")

        @tl.core(name="sink")
        def sink():
            y = out.acquire()
            for f in fifos:
                x = f.acquire()
                ins(x, y)
                f.release()
            out.release()

        for t, f in zip(tensors[:k], fifos, strict=True):
            tl.dma(t, f)
        tl.dma(out, tensors[k])

    names = [f"T{i}" for i in range(k + 1)]
    ns = {}
    src = f"def fan({', '.join(names)}):\n    return body({', '.join(names)})\n"
    exec(src, {"body": body}, ns)  # noqa: S102 - a design with k tensor arguments
    fan = ns["fan"]
    fan.__annotations__ = {t: tl.Tensor[(n,), tl.i32] for t in names}
    return tl.design(device=device)(fan)


# -- the contract ------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_vmul_plan_is_complete_and_legal(strategy):
    d = vmul()
    p = plan(d, strategy=strategy, time_limit=20)
    check_plan(p)
    assert set(p.placement) == {"worker"}
    worker = p.placement["worker"]
    assert d.device.tile_kind(worker) == "compute"
    a_in, c_out = p.fifos["a_in"], p.fifos["c_out"]
    assert not a_in.shared and not c_out.shared
    assert a_in.producer.agent == "host" and d.device.is_noc_shim(a_in.producer.tile)
    assert a_in.consumers[0].tile == worker and a_in.consumers[0].channel == 0
    assert c_out.producer.channel == 0 and c_out.consumers[0].agent == "host"
    # a consumer's and a producer's copy on the worker's tile, 4 KiB each, stack below
    names = sorted(n for n in p.buffers if n.startswith(("a_in_worker_", "c_out_worker_")))
    assert names == ["a_in_worker_0", "a_in_worker_1", "c_out_worker_0", "c_out_worker_1"]
    for n in names:
        b = p.buffers[n]
        assert b.tile == worker and b.size == 4096 and b.offset >= 1024
        assert b.bank == b.offset // 16384
    # the halves of each double buffer sit in different banks
    assert p.buffers["a_in_worker_0"].bank != p.buffers["a_in_worker_1"].bank
    assert p.buffers["c_out_worker_0"].bank != p.buffers["c_out_worker_1"].bank
    assert set(p.routes) == {"a_in", "c_out"}
    assert p.routes["a_in"].source == a_in.producer.tile and p.routes["a_in"].dests == (worker,)
    assert p.link_usage() and max(p.link_usage().values()) == 1


def test_ilp_routes_are_shortest_for_vmul():
    p = plan(vmul(), strategy="ilp", time_limit=20)
    w = p.placement["worker"]
    # host ends on the worker's column: a route is exactly the rows between (Manhattan)
    for r in p.routes.values():
        assert len(r.links) == abs(r.source[0] - r.dests[0][0]) + abs(r.source[1] - r.dests[0][1])
    assert p.solves["routing"].gap == 0.0
    assert w[1] == 2  # the core next to the memtile row is closest to the shims


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_neighbours_share_memory_and_need_no_route(strategy):
    # (1,3) and (1,4): the upper core reaches the lower one's memory (AIE2: own, west, north, south)
    p = plan(two_stage(pins=((1, 3), (1, 4))), strategy=strategy, time_limit=20)
    check_plan(p)
    mid = p.fifos["mid"]
    assert mid.shared and mid.shared_tile in {(1, 3), (1, 4)}
    assert mid.producer.channel is None and mid.consumers[0].channel is None
    assert "mid" not in p.routes
    assert sorted(n for n in p.buffers if n.startswith("mid_")) == ["mid_0", "mid_1"]


def test_far_apart_cores_stream():
    p = plan(two_stage(pins=((0, 2), (3, 5))), strategy="greedy")
    check_plan(p)
    mid = p.fifos["mid"]
    assert not mid.shared
    assert p.routes["mid"].source == (0, 2) and p.routes["mid"].dests == ((3, 5),)
    assert len(p.routes["mid"].links) == 3 + 3


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_ilp_places_pipeline_neighbours_to_share(strategy):
    p = plan(two_stage(), strategy=strategy, time_limit=20)
    check_plan(p)
    assert p.fifos["mid"].shared  # both strategies put the two stages next to each other


def test_pins_are_honoured():
    p = plan(vmul(tile=(3, 5)), strategy="ilp", time_limit=20)
    assert p.placement["worker"] == (3, 5)
    check_plan(p)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_plans_are_deterministic_and_round_trip(strategy):
    d = two_stage()
    a = plan(d, strategy=strategy, time_limit=20)
    b = plan(d, strategy=strategy, time_limit=20)
    assert a.to_json() == b.to_json()
    back = Plan.from_json(a.to_json())
    assert back.to_json() == a.to_json()
    assert set(a.timings) >= {"placement", "buffers", "routing", "total"}
    assert "routing" in a.report()


@pytest.mark.parametrize("design", [two_stage, lambda: fan_in(2), lambda: tl.library.matmul(256, 256, 256)])
def test_ilp_placement_no_worse_than_greedy(design):
    from tilelang.plan.greedy import greedy_placement
    from tilelang.plan.placement_model import objective_of

    d = design()
    problem = build_problem(d)
    warm = objective_of(problem, greedy_placement(problem))
    p = plan(d, strategy="ilp", time_limit=20)
    assert p.solves["placement"].objective is not None
    assert p.solves["placement"].objective <= warm + 1e-6
    gap = p.solves["placement"].gap
    assert gap is None or 0.0 <= gap <= 1.0


# -- bad input: PlanError names the resource -----------------------------------------------------


def test_memory_overflow_names_tile_and_buffers():
    # two 3-deep fifos of 8192 i32 (32 KiB each buffer) cannot fit a 64 KiB core memory
    with pytest.raises(PlanError, match=r"tile \(\d,\d\) needs \d+ B of data memory, has 65536 B: buffers a_in\[3\], c_out\[3\]"):
        plan(vmul(n=8192, depth=3), strategy="greedy")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_memory_overflow_with_ilp_too(strategy):
    with pytest.raises(PlanError, match=r"has 65536 B: buffers a_in\[3\], c_out\[3\], core stack \(1024 B\)"):
        plan(vmul(n=8192, depth=3), strategy=strategy, time_limit=10)


def test_core_dma_channels_exhausted():
    with pytest.raises(PlanError, match=r"tile \(\d,\d\) \(compute\) has 2 S2MM DMA channels, 3 needed: core sink \(in0\), core sink \(in1\), core sink \(in2\)"):
        plan(fan_in(3), strategy="greedy")


def test_shim_dma_channels_exhausted_on_one_column():
    # npu1_1col has one shim with 2 MM2S channels; three host moves into three fifos need three
    with pytest.raises(PlanError, match=r"tile \(0,0\) \(shim\) has 2 MM2S DMA channels, 3 needed: host move into in0, host move into in1, host move into in2"):
        plan(fan_in(3, device="npu1_1col"), strategy="greedy")


def test_too_many_cores():
    def body(A, C):
        fs = [tl.fifo(tl.Tile[(16,), tl.i32], name=f"f{i}") for i in range(18)]
        copy = copy_kernel(16)
        for i in range(17):

            def w(i=i):
                x, y = fs[i].acquire(), fs[i + 1].acquire()
                copy(x, y)
                fs[i].release()
                fs[i + 1].release()

            tl.core(name=f"w{i}")(w)
        tl.dma(A, fs[0])
        tl.dma(fs[17], C)

    body.__annotations__ = {"A": tl.Tensor[(16,), tl.i32], "C": tl.Tensor[(16,), tl.i32]}
    d = tl.design(device="npu1")(body)
    with pytest.raises(PlanError, match="17 cores but npu1 has 16 compute tiles"):
        plan(d, strategy="greedy")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"solver": "gurobi"}, "unknown solver 'gurobi'"),
        ({"strategy": "magic"}, "unknown strategy 'magic'"),
        ({"time_limit": 0}, "time_limit must be a positive number"),
        # beyond a year the operating system's timers overflow (OverflowError before this check)
        ({"time_limit": float("inf")}, "time_limit must be a positive number of seconds up to"),
        ({"time_limit": 1e300}, "time_limit must be a positive number of seconds up to"),
        ({"time_limit": float("nan")}, "time_limit must be a positive number"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(PlanError, match=message):
        plan(vmul(), **kwargs)


def test_not_a_design():
    with pytest.raises(PlanError, match="takes a design"):
        plan("vmul")


# -- distances -----------------------------------------------------------------------------------


def test_memtiles_of_one_row_are_further_apart_than_manhattan():
    from tilelang.plan.fabric import hops

    npu1, ve = tl.device("npu1"), tl.device("xcve2802")
    assert hops(npu1, (0, 1), (2, 1)) == 4  # memtiles have no east/west links: out a row and back
    assert hops(npu1, (0, 2), (2, 2)) == 2 and hops(npu1, (0, 0), (3, 0)) == 3
    assert hops(npu1, (0, 0), (2, 1)) == 3 and hops(npu1, (1, 1), (3, 4)) == 5
    assert hops(ve, (0, 1), (3, 2)) == 6  # two memtile rows: around through row 0 or row 3


def chained_links(n: int = 256):
    """host -> l1 (forward) -> l2 (forward) -> core -> host: a fifo between two memtiles."""
    copy = copy_kernel(n)

    def body(A, C):
        x = tl.fifo(tl.Tile[(n,), tl.i32], name="x")
        y = tl.fifo(tl.Tile[(n,), tl.i32], name="y")
        z = tl.fifo(tl.Tile[(n,), tl.i32], name="z")
        out = tl.fifo(tl.Tile[(n,), tl.i32], name="out")
        tl.dma(y, z, name="l2")

        @tl.core(name="w")
        def w():
            a, b = z.acquire(), out.acquire()
            copy(a, b)
            z.release()
            out.release()

        tl.dma(x, y, name="l1")
        tl.dma(A, x)
        tl.dma(out, C)

    body.__name__ = "chained"
    body.__annotations__ = {"A": tl.Tensor[(n,), tl.i32], "C": tl.Tensor[(n,), tl.i32]}
    return tl.design(device="npu1")(body)


def test_the_placement_objective_counts_route_hops_between_memtiles():
    from tilelang.plan.carriage import Placement
    from tilelang.plan.placement_model import objective_of, weights

    d = chained_links()
    problem = build_problem(d)
    links = {ln.name for ln in d.links}
    assert links == {"l1", "l2"}
    w = weights(problem)["y"]
    base = Placement({"w": (0, 2)}, {"l1": (0, 1), "l2": (0, 1)}, {"x": (0, 0), "out": (0, 0)})
    apart = Placement({"w": (0, 2)}, {"l1": (2, 1), "l2": (0, 1)}, {"x": (2, 0), "out": (0, 0)})
    # Moving l1 two columns away costs the y fifo 4 hops (not the Manhattan 2); x stays 1 hop from its shim.
    assert objective_of(problem, apart) - objective_of(problem, base) == pytest.approx(4 * w)
    p = plan(d)
    check_plan(p)
    assert p.link_tiles["l1"] == p.link_tiles["l2"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_links_pack_memtile_channels_exactly(strategy):
    """16 relu cores in 256-element tiles: 8 splits (1 S2MM + 2 MM2S) and 8 joins (2 S2MM + 1 MM2S) fill npu1's
    four memtiles' 6 + 6 channels exactly only as 2 splits and 2 joins each; the greedy placer used to put 3
    splits on one memtile and then find no room for a join."""
    import numpy as np
    from ml_dtypes import bfloat16

    d = tl.library.elementwise("relu", 16 * 512, dtype=tl.bf16, cores=16, tile=256)
    p = plan(d, strategy=strategy)
    check_plan(p)
    per_mem: dict = {}
    for link in d.links:
        per_mem.setdefault(p.link_tiles[link.name], []).append(link)
    for links in per_mem.values():
        assert sum(len(ln.dsts) for ln in links) <= 6 and sum(len(ln.srcs) for ln in links) <= 6
    x = np.random.default_rng(0).standard_normal(16 * 512).astype(bfloat16)
    assert np.array_equal(tl.simulate(p, mode="functional", **{d.params[0].name: x}).outputs[d.params[1].name],
                          np.maximum(x, 0))


def test_link_needs_count_the_memtile_vertical_links_by_hand():
    from tilelang.plan.carriage import link_needs, memtile_ports

    d = tl.library.matmul(128, 64, 128, in_dtype=tl.i16, out_dtype=tl.i32, tiling={"m": 16, "k": 32, "n": 16})
    problem = build_problem(d)
    # a half-join of two cores' C into one fifo the host drains
    assert {k: v for k, v in link_needs(problem, "join_c_0_1").items() if k in ("from_above", "to_above",
            "from_below", "to_below")} == {"from_above": 2, "to_above": 0, "from_below": 0, "to_below": 1}
    # A's forward: in from the host, out to a row of cores (one broadcast: one channel)
    needs = link_needs(problem, "forward_a_0")
    assert (needs["from_below"], needs["to_above"], needs["from_above"], needs["to_below"]) == (1, 1, 0, 0)
    # npu1's memtile links: 4 down from the core above, 6 up to it, 6 up from the shim, 4 down to it
    assert memtile_ports(tl.device("npu1"), (1, 1)) == {"from_above": 4, "to_above": 6, "from_below": 6,
                                                       "to_below": 4}


@pytest.mark.parametrize(("device", "strategy"), [("npu1", "ilp"), ("npu1", "greedy"), ("npu2", "greedy")])
def test_placed_links_fit_their_memtiles_vertical_links(device, strategy):
    """Two C half-joins per column put 4 core fifos into each memtile from above, its link's whole capacity;
    the placement keeps every memtile within it, so the plan routes."""
    from tilelang.plan.carriage import LINK_PORTS, link_needs, memtile_ports

    d = tl.library.matmul(256, 64, 256, in_dtype=tl.i8, out_dtype=tl.i32, device=device,
                          tiling={"m": 32, "k": 32, "n": 32})
    p = plan(d, strategy=strategy)
    check_plan(p)
    problem = build_problem(d)
    used: dict = {}
    for link in d.links:
        m = p.link_tiles[link.name]
        for k in LINK_PORTS:
            used[m, k] = used.get((m, k), 0) + link_needs(problem, link.name)[k]
    assert max(v for (_, k), v in used.items() if k == "from_above") == 4
    for (m, k), v in used.items():
        assert v <= memtile_ports(p.device, m)[k], (m, k, v)


def test_greedy_links_pack_npu2_memtiles_beyond_the_search_budget():
    """softmax on npu2's 32 cores: 16 splits (1 S2MM + 2 MM2S) and 16 joins (2 + 1) fill the eight memtiles
    only as 2 + 2 each; the depth-first search runs out of budget, the balanced fit finds it."""
    d = tl.library.softmax(64, 1024, dtype=tl.bf16, device="npu2", cores=32, rows_per_tile=2)
    p = plan(d, strategy="greedy")
    check_plan(p)
    per_mem: dict = {}
    for link in d.links:
        per_mem.setdefault(p.link_tiles[link.name], []).append(link)
    assert len(per_mem) == 8
    for links in per_mem.values():
        assert sum(len(ln.dsts) for ln in links) == 6 and sum(len(ln.srcs) for ln in links) == 6
