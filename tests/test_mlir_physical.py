"""The physical level: the plan's buffers, locks, BD chains and routes, explicit and checked.

Routes are traced back out of the emitted switchbox connections and compared
with the plan link by link; buffers with the plan's tile, bank and address;
every DMA chain with the plan's channels. BD fields that do not fit raise
PlanError.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from zoo_support import CASES, calls, filecheck, planned, with_args, zoo

import tilelang as tl
from tilelang.backends.mlir import emit_mlir
from tilelang.backends.mlir.bd import check_length, words
from tilelang.backends.mlir.enums import DMA_CHANNEL_DIR, SHIM_MUX_PORT, WIRE_BUNDLE
from tilelang.plan import plan as make_plan

BUNDLE = {v: k for k, v in WIRE_BUNDLE.items()}
STEP = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}


@cache
def physical(name: str, device: str):  # noqa: ANN201 - (plan, module)
    p = planned(name, device)
    return p, emit_mlir(p, level="physical", as_module=True)



def device_ops(module: object) -> list:
    return [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations]


def tiles_of(module: object) -> dict[str, tuple[int, int]]:
    out = {}
    for o in device_ops(module):
        if o.name == "aie.tile":
            out[o.results[0].get_name()] = (o.attributes["col"].value, o.attributes["row"].value)
    return out


def attr(o: object, key: str) -> object:
    a = o.attributes[key]
    return a.value if hasattr(a, "value") else a


# -- golden --------------------------------------------------------------------------------------


def test_vector_scalar_mul_physical_golden() -> None:
    p, _ = physical("vector_scalar_mul", "npu1")
    text = emit_mlir(p, level="physical")
    b = {n: (x.bank, x.offset) for n, x in p.buffers.items()}
    filecheck(
        f"""
CHECK-DAG: %[[SHIM:.*]] = "aie.tile"() {{col = 0 : i32, row = 0 : i32}}
CHECK-DAG: %[[MEM:.*]] = "aie.tile"() {{col = 0 : i32, row = 1 : i32}}
CHECK-DAG: %[[CORE:.*]] = "aie.tile"() {{col = 0 : i32, row = 2 : i32}}
CHECK-DAG: %[[A0:.*]] = "aie.buffer"(%[[CORE]]) {{address = {b["a_in_worker_0"][1]} : i32, mem_bank = {b["a_in_worker_0"][0]} : i32, sym_name = "a_in_worker_0"}} : (index) -> memref<1024xi32>
CHECK-DAG: %[[A1:.*]] = "aie.buffer"(%[[CORE]]) {{address = {b["a_in_worker_1"][1]} : i32, mem_bank = {b["a_in_worker_1"][0]} : i32, sym_name = "a_in_worker_1"}}
CHECK-DAG: %[[AP:.*]] = "aie.lock"(%[[CORE]]) {{init = 2 : i32, lockID = {{{{[0-9]+}}}} : i32, sym_name = "a_in_worker_prod_lock"}}
CHECK-DAG: %[[AC:.*]] = "aie.lock"(%[[CORE]]) {{init = 0 : i32, lockID = {{{{[0-9]+}}}} : i32, sym_name = "a_in_worker_cons_lock"}}
CHECK: "aie.core"(%[[CORE]])
CHECK: "scf.for"
CHECK: "aie.use_lock"(%[[AC]]) {{acq_en = true, action = 2 : i32, value = 1 : i32}}
CHECK: "func.call"(%[[A0]],
CHECK: "aie.use_lock"(%[[AP]]) {{acq_en = true, action = 1 : i32, value = 1 : i32}}
CHECK: "aie.use_lock"(%[[AC]]) {{acq_en = true, action = 2 : i32, value = 1 : i32}}
CHECK: "func.call"(%[[A1]],
CHECK: "aie.mem"(%[[CORE]]) ({{
CHECK: "aie.dma_start"()[^[[BD0:bb[0-9]+]], ^{{{{bb[0-9]+}}}}] {{channel_dir = 0 : i32, channel_index = 0 : i32, repeat_count = 0 : i32}}
CHECK: ^[[BD0]]:
CHECK-NEXT: "aie.use_lock"(%[[AP]]) {{acq_en = true, action = 2 : i32, value = 1 : i32}}
CHECK-NEXT: "aie.dma_bd"(%[[A0]]) {{bd_id = 0 : i32, len = 1024 : i32, next_bd_id = 1 : i32, offset = 0 : i32}}
CHECK-NEXT: "aie.use_lock"(%[[AC]]) {{acq_en = true, action = 1 : i32, value = 1 : i32}}
CHECK-NEXT: "aie.next_bd"()
CHECK: "aie.dma_bd"(%[[A1]]) {{bd_id = 1 : i32, len = 1024 : i32, next_bd_id = 0 : i32, offset = 0 : i32}}
CHECK: "aie.switchbox"(%[[SHIM]]) ({{
CHECK-NEXT: "aie.connect"() {{dest_bundle = 5 : i32, dest_channel = 0 : i32, source_bundle = 3 : i32, source_channel = 3 : i32}}
CHECK: "aie.shim_mux"(%[[SHIM]]) ({{
CHECK-NEXT: "aie.connect"() {{dest_bundle = 5 : i32, dest_channel = 3 : i32, source_bundle = 1 : i32, source_channel = 0 : i32}}
CHECK: "aie.shim_dma_allocation"(%[[SHIM]]) {{channel_dir = 1 : i32, channel_index = 0 : i64, plio = false, sym_name = "a_in_shim_alloc"}}
CHECK: "aiex.npu.dma_memcpy_nd"({{{{.*}}}}metadata = @a_in_shim_alloc
""",
        text,
    )


def test_sliding_window_core_takes_two_then_one_per_iteration() -> None:
    p, module = physical("sliding_window", "npu1")
    text = emit_mlir(p, level="physical")
    filecheck(
        """
CHECK: "aie.core"
CHECK-NEXT: "aie.use_lock"(%[[XC:.*]]) {acq_en = true, action = 2 : i32, value = 2 : i32}
CHECK: "aie.use_lock"(%[[XC]]) {acq_en = true, action = 2 : i32, value = 1 : i32}
CHECK: "aie.end"
""",
        text,
    )


@pytest.mark.parametrize(("name", "loops", "switches", "calls"), [("window3", 1, 0, 6), ("window3_computed", 1, 4, 2)])
def test_window_primed_in_its_loop_is_peeled_then_looped(name: str, loops: int, switches: int, calls: int) -> None:
    """The first iteration (acquire 3) runs straight, the rest is one scf.for starting from where it left the
    buffers: 4 iterations a step at depth 4 (then one left over), computed buffer indices at depth 5."""
    p, _ = physical(name, "npu1")
    text = emit_mlir(p, level="physical")
    core = text[text.index('"aie.core"') : text.index('"aie.mem"')]
    assert (core.count('"scf.for"'), core.count('"scf.index_switch"'), core.count('"func.call"')) == (
        loops,
        switches,
        calls,
    )


def test_aie1_uses_binary_locks_external_buffers_and_shim_bd_chains() -> None:
    p, _ = physical("vector_scalar_mul", "xcvc1902")
    text = emit_mlir(p, level="physical")
    filecheck(
        """
CHECK: %[[L0:.*]] = "aie.lock"({{.*}}) {init = 0 : i32, lockID = {{[0-9]+}} : i32, sym_name = "a_in_worker_lock_0"}
CHECK: "aie.core"
CHECK: "aie.use_lock"(%[[L0]]) {acq_en = true, action = 0 : i32, value = 1 : i32}
CHECK: "aie.use_lock"(%[[L0]]) {acq_en = true, action = 1 : i32, value = 0 : i32}
CHECK: %[[A:.*]] = "aie.external_buffer"() {sym_name = "A"} : () -> memref<4096xi32>
CHECK: "aie.shim_dma"
CHECK: "aie.dma_bd"(%[[A]]) {bd_id = {{[0-9]+}} : i32, len = 4096 : i32, offset = 0 : i32}
""",
        text,
    )


@pytest.mark.parametrize(("name", "device"), [c for c in CASES if c[1] == "xcvc1902"])
def test_aie1_physical_modules_have_no_npu_runtime_sequence(name: str, device: str) -> None:
    """AIE1's host runtime drives the shim BD chains; ``aiex.npu`` operations and runtime sequences are NPU-only."""
    _, module = physical(name, device)
    dev = next(op for op in module.body.operations if op.operation.name == "aie.device")
    names = {op.operation.name for op in dev.regions[0].blocks[0].operations}
    assert "aie.shim_dma" in names and "aie.external_buffer" in names
    assert not {n for n in names if n.startswith("aiex.")}
    assert not names & {"aie.runtime_sequence", "aie.shim_dma_allocation"}


# -- agreement with the plan ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "device"), CASES)
def test_buffers_are_where_the_plan_puts_them(name: str, device: str) -> None:
    p, module = physical(name, device)
    tiles = tiles_of(module)
    got = {}
    for o in device_ops(module):
        if o.name == "aie.buffer":
            got[str(attr(o, "sym_name"))] = (tiles[o.operands[0].get_name()], attr(o, "mem_bank"), attr(o, "address"))
    want = {n: (b.tile, b.bank, b.offset) for n, b in p.buffers.items()}
    assert got == want


@pytest.mark.parametrize(("name", "device"), CASES)
def test_locks_fit_their_tiles(name: str, device: str) -> None:
    p, module = physical(name, device)
    tiles = tiles_of(module)
    ids: dict[tuple[int, int], list[int]] = {}
    for o in device_ops(module):
        if o.name == "aie.lock":
            ids.setdefault(tiles[o.operands[0].get_name()], []).append(attr(o, "lockID"))
    for t, got in ids.items():
        assert len(got) == len(set(got)) and max(got) < p.device.locks(t)


def dma_chains(module: object) -> dict[tuple[tuple[int, int], str, int], list[dict]]:
    """(tile, direction, channel) -> the BDs of its chain, in chain order."""
    tiles = tiles_of(module)
    out = {}
    for o in device_ops(module):
        if o.name not in ("aie.mem", "aie.memtile_dma", "aie.shim_dma"):
            continue
        tile = tiles[o.operands[0].get_name()]
        for block in o.regions[0].blocks:
            ops = [x.operation for x in block.operations]
            if ops and ops[0].name == "aie.dma_start":
                direction = {v: k for k, v in DMA_CHANNEL_DIR.items()}[attr(ops[0], "channel_dir")]
                bds, seen, b = [], set(), ops[0].successors[0]
                while b is not None and str(b) not in seen:
                    seen.add(str(b))
                    body = [x.operation for x in b.operations]
                    bd = next((x for x in body if x.name == "aie.dma_bd"), None)
                    if bd is None:
                        break
                    bds.append({k: attr(bd, k) for k in ("bd_id", "len", "offset")})
                    b = body[-1].successors[0] if body[-1].successors else None
                out[(tile, direction, attr(ops[0], "channel_index"))] = bds
    return out


@pytest.mark.parametrize(("name", "device"), CASES)
def test_every_planned_dma_end_runs_a_chain_on_its_channel(name: str, device: str) -> None:
    p, module = physical(name, device)
    chains = dma_chains(module)
    aie1 = p.device.arch.name == "aie1"
    for f in p.design.fifos:
        fp = p.fifos[f.name]
        if fp.shared:
            continue
        for end in (fp.producer, *fp.consumers):
            if end.agent == "host" and not aie1:
                continue
            key = (end.tile, "mm2s" if end is fp.producer else "s2mm", end.channel)
            assert key in chains, f"{f.name}: {end}"
            assert chains[key], key
    by_tile = Counter()
    for (tile, _, _), bds in chains.items():
        ids = [b["bd_id"] for b in bds]
        assert len(set(ids)) == len(ids)
        by_tile[tile] += len(ids)
    for tile, n in by_tile.items():
        assert n <= p.device.buffer_descriptors(tile)


def trace_routes(module: object, plan: object) -> dict[tuple[tuple[int, int], int], set]:
    """From each source DMA channel, follow the switchbox connections: the links used and the DMA ports reached."""
    tiles = tiles_of(module)
    conns: dict[tuple[tuple[int, int], str], list] = {}
    for o in device_ops(module):
        if o.name in ("aie.switchbox", "aie.shim_mux"):
            tile = tiles[o.operands[0].get_name()]
            for c in o.regions[0].blocks[0].operations:
                c = c.operation
                if c.name != "aie.connect":
                    continue
                src = (BUNDLE[attr(c, "source_bundle")], attr(c, "source_channel"))
                dst = (BUNDLE[attr(c, "dest_bundle")], attr(c, "dest_channel"))
                conns.setdefault((tile, o.name), []).append((src, dst))
    opposite = {"North": "South", "South": "North", "East": "West", "West": "East"}
    traced = {}
    for name, r in plan.routes.items():
        ch = plan.fifos[name].producer.channel
        start = ("South", SHIM_MUX_PORT[("mm2s", ch)]) if plan.device.tile_kind(r.source) == "shim" else ("DMA", ch)
        links, reached, todo = set(), set(), [(r.source, start)]
        while todo:
            tile, port = todo.pop()
            for src, dst in conns.get((tile, "aie.switchbox"), []):
                if src != port:
                    continue
                to_mux = dst[0] == "South" and plan.device.tile_kind(tile) == "shim"
                if dst[0] in STEP and not to_mux:
                    nxt = (tile[0] + STEP[dst[0]][0], tile[1] + STEP[dst[0]][1])
                    links.add((tile, nxt))
                    todo.append((nxt, (opposite[dst[0]], dst[1])))
                else:
                    reached.add((tile, dst))
        traced[name] = (links, reached)
    return traced


@pytest.mark.parametrize(("name", "device"), CASES)
def test_switchboxes_carry_exactly_the_planned_routes(name: str, device: str) -> None:
    p, module = physical(name, device)
    traced = trace_routes(module, p)
    for name_, r in p.routes.items():
        links, reached = traced[name_]
        assert links == set(r.links)
        want = set()
        for d in r.dests:
            end = next(e for e in p.fifos[name_].consumers if e.tile == d)
            port = (
                ("South", SHIM_MUX_PORT[("s2mm", end.channel)])
                if p.device.tile_kind(d) == "shim"
                else ("DMA", end.channel)
            )
            want.add((d, port))
        assert reached == want
    usage = Counter(link for links, _ in traced.values() for link in links)
    for link, n in usage.items():
        assert n <= p.device.link_capacity(*link)


@pytest.mark.parametrize(("name", "device"), CASES)
def test_cores_only_touch_their_own_fifos_buffers(name: str, device: str) -> None:
    """Every memref a core passes to a kernel is a buffer on a tile whose memory the core can reach."""
    p, module = physical(name, device)
    tiles = tiles_of(module)
    buffer_tile = {}
    for o in device_ops(module):
        if o.name == "aie.buffer":
            buffer_tile[o.results[0].get_name()] = tiles[o.operands[0].get_name()]
    for o in device_ops(module):
        if o.name != "aie.core":
            continue
        core_tile = tiles[o.operands[0].get_name()]
        reach = set(p.device.shared_memory_tiles(core_tile))
        used = []

        def visit(op: object, used: list = used) -> object:
            if op.operation.name in ("func.call", "scf.yield"):
                used.extend(v.get_name() for v in op.operation.operands if v.get_name() in buffer_tile)
            from mlir import ir

            return ir.WalkResult.ADVANCE

        o.walk(visit)
        assert used, "the core passes no buffer to any kernel"
        assert {buffer_tile[u] for u in used} <= reach


# -- dynamic buffer choice -------------------------------------------------------------------------


def test_rotation_longer_than_the_unroll_limit_picks_buffers_with_index_switch() -> None:
    @tl.kernel
    def add(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
        c[...] = a + 1

    @tl.design(device="npu1")
    def rot(A: tl.Tensor[(64 * 30,), tl.i32], C: tl.Tensor[(64 * 30,), tl.i32]):
        x = tl.fifo(tl.Tile[(64,), tl.i32], depth=3, name="x")
        y = tl.fifo(tl.Tile[(64,), tl.i32], depth=5, name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(30):
                a = x.acquire()
                c = y.acquire()
                add(a, c)
                x.release()
                y.release()

        tl.dma(A, x, pattern=tl.tiles((64,)))
        tl.dma(y, C, pattern=tl.tiles((64,)))

    text = emit_mlir(make_plan(rot, strategy="greedy"), level="physical")
    filecheck(
        """
CHECK: "aie.core"
CHECK: "scf.for"
CHECK: %[[I:.*]] = "arith.remui"
CHECK: "scf.index_switch"(%[[I]]) <{cases = array<i64: 0, 1, 2>}>
CHECK: "scf.index_switch"({{.*}}) <{cases = array<i64: 0, 1, 2, 3, 4>}>
CHECK: "func.call"
""",
        text,
    )


# -- BD fields and counts ----------------------------------------------------------------------------


def test_bd_length_beyond_the_field_is_a_plan_error_not_a_truncation() -> None:
    bits = tl.device("npu1").bd_field_bits((0, 2))  # 14-bit length on an AIE2 core tile
    check_length((1 << 14) - 1, bits, "fits")
    with pytest.raises(tl.PlanError, match="16384 words does not fit the 14-bit length field"):
        check_length(1 << 14, bits, "one word too many")
    with pytest.raises(tl.PlanError, match="not a multiple of the DMA's 4-byte word"):
        words(3, 1, "three bytes")


def _relayout(pattern: object):  # noqa: ANN202 - a design
    """A memtile forward re-laying a (4, 1024) tile out with ``pattern``; the core sums its rows."""

    @tl.kernel
    def total(a: tl.Tile[(4, 1024), tl.i32], c: tl.Tile[(4,), tl.i32]):
        c[...] = tl.sum(a, axis=1)

    @tl.design(device="npu1")
    def wide(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4,), tl.i32]):
        x = tl.fifo(tl.Tile[(4, 1024), tl.i32], depth=1, name="x")
        y = tl.fifo(tl.Tile[(4, 1024), tl.i32], depth=1, name="y")
        z = tl.fifo(tl.Tile[(4,), tl.i32], depth=1, name="z")
        tl.dma(x, y, pattern=pattern)

        @tl.core(name="k")
        def k():
            a = y.acquire()
            c = z.acquire()
            total(a, c)
            y.release()
            z.release()

        tl.dma(A, x)
        tl.dma(z, C)

    return wide


def test_memtile_relayout_wider_than_the_wrap_field_is_a_plan_error() -> None:
    """A transpose of (2, 2, 1024) to (1024, 2, 2): its 1024-element dimension needs a split into a 5th
    dimension, and the memtile BD has 4; neither level emits a layout the memtile cannot walk."""
    p = make_plan(_relayout(tl.pattern(0, (1024, 2, 2), (1, 1024, 2048))), strategy="greedy")
    for level in ("objectfifo", "physical"):
        with pytest.raises(
            tl.PlanError,
            match="size 1024, beyond the 10-bit wrap field; splitting it into more "
            r"dimensions does not fit either \(the DMA has 4 dimensions",
        ):
            emit_mlir(p, level=level)


def test_memtile_relayout_wider_than_the_wrap_field_is_split_and_runs() -> None:
    """The (1024, 4) transpose: 1024 > 1023, so the memtile BD walks it as 2 x 512 (stride 512), then 4."""
    import numpy as np

    p = make_plan(_relayout(tl.pattern(0, (1024, 4), (1, 1024))), strategy="greedy")
    text = emit_mlir(p, level="physical")
    assert (
        "dimensions = #aie<bd_dim_layout_array[<size = 2, stride = 512>, <size = 512, stride = 1>, "
        "<size = 4, stride = 1024>, <size = 1, stride = 1>]>" in text
    )
    assert "<size = 2, stride = 512>, <size = 512, stride = 1>" in emit_mlir(p)  # dimensionsToStream alike
    a = np.random.default_rng(9).integers(-1000, 1000, 4096).astype(np.int32)
    want = a.reshape(4, 1024).T.reshape(4, 1024).sum(axis=1).astype(np.int32)
    for seed in (0, 1):
        got = interp.run_physical(emit_mlir(p, level="physical", as_module=True), p.design, {"A": a}, seed=seed)
        np.testing.assert_array_equal(got["C"], want)


def test_host_move_wider_than_the_shim_wrap_field_is_split_and_runs() -> None:
    """Rows of 1024 i32 (1024 words > the 10-bit wrap): the shim BD walks each as 2 x 512."""
    import numpy as np

    @tl.kernel
    def inc(a: tl.Tile[(1024,), tl.i32], c: tl.Tile[(1024,), tl.i32]):
        c[...] = a + 1

    @tl.design(device="npu1")
    def rows(A: tl.Tensor[(2, 4096), tl.i32], C: tl.Tensor[(2048,), tl.i32]):
        x = tl.fifo(tl.Tile[(1024,), tl.i32], depth=2, name="x")
        y = tl.fifo(tl.Tile[(1024,), tl.i32], depth=2, name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(2):
                a = x.acquire()
                c = y.acquire()
                inc(a, c)
                x.release()
                y.release()

        tl.dma(A, x, pattern=tl.pattern(0, (2, 1024), (4096, 1)))
        tl.dma(y, C)

    p = make_plan(rows, strategy="greedy")
    for level in ("objectfifo", "physical"):
        text = emit_mlir(p, level=level)
        assert "static_sizes = array<i64: 1, 2, 2, 512>, static_strides = array<i64: 0, 4096, 512, 1>" in text
    a = np.random.default_rng(10).integers(-1000, 1000, (2, 4096)).astype(np.int32)
    module = emit_mlir(p, level="physical", as_module=True)
    got = interp.run_physical(module, p.design, {"A": a})
    np.testing.assert_array_equal(got["C"], (a[:, :1024] + 1).reshape(-1))


def test_running_out_of_memtile_bds_is_a_plan_error() -> None:
    """A split into 4 parts at depth 4: the whole fifo's channel needs 16 BDs and parts on channels 0 and 2
    4 each, filling the even channels' 24; a plan (read from text or JSON, say) putting a third part on
    an even channel needs 28: the emitter counts BDs itself rather than trust the plan."""
    import dataclasses

    p = make_plan(_deep_split(depth=4), strategy="greedy")
    fp = p.fifos["in1"]
    assert fp.producer.agent == "link:split_a_mem" and fp.producer.channel == 1
    moved = dataclasses.replace(fp, producer=dataclasses.replace(fp.producer, channel=4))
    bad = dataclasses.replace(p, fifos={**p.fifos, "in1": moved})
    emit_mlir(p, level="physical")
    with pytest.raises(tl.PlanError, match="has 24 buffer descriptors for this channel"):
        emit_mlir(bad, level="physical")


def test_the_planner_refuses_a_split_whose_bds_no_channel_choice_fits() -> None:
    """At depth 8 no choice of channels fits the split's BDs: the planner says so before the emitter could."""
    with pytest.raises(tl.PlanError, match="buffer descriptors on its memtile"):
        make_plan(_deep_split(depth=8), strategy="greedy")


def _deep_split(depth: int = 8):  # noqa: ANN202
    @tl.kernel
    def add1(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
        c[...] = a + 1

    @tl.design(device="npu1")
    def deep(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4096,), tl.i32]):
        a_mem = tl.fifo(tl.Tile[(256,), tl.i32], depth=depth, name="a_mem")
        ins = [tl.fifo(tl.Tile[(64,), tl.i32], depth=2, name=f"in{i}") for i in range(4)]
        outs = [tl.fifo(tl.Tile[(64,), tl.i32], depth=2, name=f"out{i}") for i in range(4)]
        tl.split(a_mem, ins, offsets=[0, 64, 128, 192])
        for i in range(4):

            @tl.core(name=f"w{i}")
            def w(i=i):
                for _ in tl.range(16):
                    a = ins[i].acquire()
                    c = outs[i].acquire()
                    add1(a, c)
                    ins[i].release()
                    outs[i].release()

            tl.dma(outs[i], C, pattern=tl.pattern(i * 1024, (1024,), (1,)))
        tl.dma(A, a_mem)

    return deep


# -- running the emitted module ----------------------------------------------------------------------

INTERP_PATH = Path(__file__).parent / "mlir" / "interp.py"


def load_interp():  # noqa: ANN201 - the interpreter module
    name = "tilelang_mlir_test_interp"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, INTERP_PATH)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules[name]


interp = load_interp()


def assert_outputs(got: dict, want: dict, tolerance: float = 0.0) -> None:
    import numpy as np

    for k, v in want.items():
        if tolerance:
            np.testing.assert_allclose(got[k].astype(np.float64), v.astype(np.float64), rtol=tolerance, atol=tolerance)
        else:
            np.testing.assert_array_equal(got[k], v)


@pytest.mark.parametrize(("name", "device"), CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_physical_module_computes_the_design(name: str, device: str, seed: int) -> None:
    """The emitted locks, BD chains, routes and core programs, executed, give what the design computes.

    Each seed schedules the cores, DMA channels and host in a different order;
    a correct module gives the same tensors under every interleaving.
    """
    import numpy as np

    p, module = physical(name, device)
    inputs, want = zoo.oracle(name, p.design, np.random.default_rng(seed))
    got = interp.run_physical(module, p.design, inputs, seed=seed)
    assert_outputs(got, want, 1e-2 if name == "gemm" else 0.0)


def test_affine_arguments_beyond_64_bits_are_emitted_modulo_their_width() -> None:
    """Coefficients an index constant cannot hold: the argument is the sum wrapped to its dtype, so they are
    emitted wrapped to it too (fuzz_bench --seed 23 made loop_affine's i8 coefficient -2**63: a raw TypeError
    from the bindings). 2**63 + 4 and 5 - 2**63 are 4 and 5 modulo an i32's and an i8's width: numpy's oracle for
    loop_affine holds, for the executed module and the simulator alike."""
    from dataclasses import replace

    import numpy as np

    from tilelang.ir.design import AffineArg

    d = zoo.loop_affine("npu1")
    (call,) = list(calls(d.cores[0].body))
    args = (*call.args[:2], AffineArg(((0, 2**63 + 4), (1, 1)), 2**64, tl.i32),
            AffineArg(((1, 5 - 2**63),), 120 - 2**70, tl.i8))
    d2 = replace(d, cores=(replace(d.cores[0], body=with_args(d.cores[0].body, args)),))
    p = make_plan(d2, strategy="greedy")
    module = emit_mlir(p, level="physical", as_module=True)
    inputs, want = zoo.oracle("loop_affine", d, np.random.default_rng(0))
    assert_outputs(interp.run_physical(module, p.design, inputs, seed=0), want)
    np.testing.assert_array_equal(tl.simulate(p, **inputs).outputs["C"], want["C"])


def _rotation(device: str):  # noqa: ANN202
    """Fifos of depth 3 and 5 over 30 iterations: a 15-iteration rotation, beyond the unroll limit."""

    @tl.kernel
    def add(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32], i: tl.i32):
        c[...] = a + i

    @tl.design(device=device)
    def rotation(A: tl.Tensor[(64 * 30,), tl.i32], C: tl.Tensor[(64 * 30,), tl.i32]):
        x = tl.fifo(tl.Tile[(64,), tl.i32], depth=3, name="x")
        y = tl.fifo(tl.Tile[(64,), tl.i32], depth=5, name="y")

        @tl.core(name="k")
        def k():
            for i in tl.range(30):
                a = x.acquire()
                c = y.acquire()
                add(a, c, i)
                x.release()
                y.release()

        tl.dma(A, x, pattern=tl.tiles((64,)))
        tl.dma(y, C, pattern=tl.tiles((64,)))

    return rotation


@pytest.mark.parametrize("device", ["npu1", "xcvc1902"])
def test_computed_buffer_and_lock_choice_runs_correctly(device: str) -> None:
    import numpy as np

    design = _rotation(device)
    p = make_plan(design, strategy="greedy")
    module = emit_mlir(p, level="physical", as_module=True)
    text = module.operation.get_asm(print_generic_op_form=True)
    assert "scf.index_switch" in text
    a = np.arange(64 * 30, dtype=np.int32)
    want = (a.reshape(30, 64) + np.arange(30)[:, None]).reshape(-1)
    for seed in range(3):
        got = interp.run_physical(module, design, {"A": a}, seed=seed)
        np.testing.assert_array_equal(got["C"], want)


def test_the_interpreter_catches_a_missing_release() -> None:
    """Drop one lock release from a core: the run must deadlock, not pass."""
    p = planned("vector_scalar_mul", "npu1")
    module = emit_mlir(p, level="physical", as_module=True)
    core = next(o for o in device_ops(module) if o.name == "aie.core")
    releases = []

    def visit(op: object) -> object:
        from mlir import ir

        if op.operation.name == "aie.use_lock" and attr(op.operation, "action") == 1:
            releases.append(op.operation)
        return ir.WalkResult.ADVANCE

    core.walk(visit)
    releases[-1].erase()
    import numpy as np

    inputs, _ = zoo.oracle("vector_scalar_mul", p.design, np.random.default_rng(0))
    with pytest.raises(interp.Deadlock):
        interp.run_physical(module, p.design, inputs)


@pytest.mark.slow
def test_four_hundred_cores_on_xcvc1902_compute_the_design() -> None:
    """Every core of the VC1902: 25 chains of 16 stages, emitted physically and run."""
    import numpy as np

    design = zoo.chains(device="xcvc1902", n_chains=25, stages=16, n=64, iters=4)
    p = make_plan(design, strategy="greedy")
    assert len(p.placement) == 400
    module = emit_mlir(p, level="physical", as_module=True)
    inputs, want = zoo.oracle("chains", design, np.random.default_rng(7))
    assert_outputs(interp.run_physical(module, design, inputs), want)
