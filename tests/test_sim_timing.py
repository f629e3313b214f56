"""Cycle counts of small designs, worked out by hand from the model's constants.

Notation: T = BD setup + bytes / 4 (one element over a 32-bit stream), L = 4
cycles per stream switch on the route (hops + 1 switches), K = a kernel call,
ISSUE = the runtime sequence's cycles to issue one host move (moves are issued one
after another in program order), D = a to-device move's first-data latency;
H = ISSUE + D: when the first move's data starts.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_sim_support import copy_kernel, hand_plan, pipeline_design, timed_extern, two_input_add, two_stage_plan

import simulator
import tilelang as tl
from simulator import cost
from simulator.engine import Engine, Process, Signal
from simulator.memory import Ddr
from simulator.network import Network
from tilelang.ir.plan import Route


def T(nbytes: int) -> int:
    return cost.BD_SETUP_CYCLES + math.ceil(nbytes / 4)


def L(hops: int) -> int:
    return cost.SWITCH_LATENCY * (hops + 1)


ISSUE, _QUEUE, D = cost.host_sequence_cycles(tl.device("npu1"))
H = ISSUE + D


# -- the engine ---------------------------------------------------------------------------


def test_engine_orders_by_time_then_priority_then_sequence():
    eng = Engine()
    seen = []
    eng.schedule(5, lambda: seen.append("b"))
    eng.schedule(5, lambda: seen.append("c"))
    eng.schedule(5, lambda: seen.append("a"), priority=-1)
    eng.schedule(1, lambda: seen.append("first"))
    eng.run()
    assert seen == ["first", "a", "b", "c"]
    assert eng.now == 5 and eng.events == 4


def test_signal_wakes_waiting_process_at_the_notify_time():
    eng = Engine()
    sig = Signal(eng, "s")
    log = []

    def waiter(proc):
        yield sig
        log.append(("woke", eng.now))

    def notifier(proc):
        yield 7
        sig.notify()
        log.append(("notified", eng.now))

    Process(eng, "w", "core", waiter)
    Process(eng, "n", "core", notifier)
    eng.run()
    assert log == [("notified", 7), ("woke", 7)]


def test_wakes_of_a_cycle_follow_its_timeouts_in_heap_order():
    # Wake-ups skip the heap (a queue for the current cycle) but keep its order: timeouts of the
    # cycle first, then wakes in the order made; a zero-delay timeout made by a wake runs before
    # the wakes still queued (its priority is lower), as the heap alone would order them.
    eng = Engine()
    sig = Signal(eng, "s")
    seen = []

    def waiter(name):
        def body(proc):
            yield sig
            seen.append((name, eng.now))
            if name == "w1":
                eng.schedule(0, lambda: seen.append(("timeout from w1", eng.now)))
        return body

    for name in ("w1", "w2", "w3"):
        Process(eng, name, "core", waiter(name))
    eng.schedule(4, sig.notify)
    eng.schedule(4, lambda: seen.append(("timeout at 4", eng.now)))
    eng.run()
    assert seen == [("timeout at 4", 4), ("w1", 4), ("timeout from w1", 4), ("w2", 4), ("w3", 4)]
    assert eng.events == 3 + 2 + 3 + 1  # process starts, the two timeouts, three wakes, w1's timeout


def test_simulation_is_deterministic():
    from tilelang.plan import plan as make_plan

    d = tl.library.matmul(128, 128, 128, tiling={"m": 32, "k": 32, "n": 32})
    p = make_plan(d, strategy="greedy")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 128))
    r1, r2 = simulator.simulate(p, A=a, B=b), simulator.simulate(p, A=a, B=b)
    assert r1.cycles == r2.cycles and r1.stats.events == r2.stats.events
    assert r1.outputs["C"].tobytes() == r2.outputs["C"].tobytes()
    assert r1.trace.spans() == r2.trace.spans()
    assert r1.stats.report() == r2.stats.report()


# -- one DMA, one kernel -----------------------------------------------------------------


def test_one_dma_through_a_memtile_forward():
    @tl.design(device="npu1")
    def fwd(A: tl.Tensor[(512,), tl.i32], C: tl.Tensor[(512,), tl.i32]):
        f1 = tl.fifo(tl.Tile[(512,), tl.i32], depth=1, name="f1")
        f2 = tl.fifo(tl.Tile[(512,), tl.i32], depth=1, name="f2")
        tl.dma(f1, f2, name="fw")
        tl.dma(A, f1)
        tl.dma(f2, C)

    plan = hand_plan(fwd, {}, link_tiles={"fw": (0, 1)})
    a = np.arange(512, dtype=np.int32)
    res = simulator.simulate(plan, A=a)
    assert np.array_equal(res.outputs["C"], a)
    t = T(2048)
    # f1: shim -> memtile (1 hop); f2: memtile -> shim (1 hop) once f1's element landed.
    assert res.cycles == H + t + L(1) + t + L(1)
    assert res.stats.links["fw"].bytes == 2 * 2048
    assert res.stats.moves["dma0"]["completed"] == H + t


def test_one_kernel_vector_scalar_mul_cycles():
    @tl.kernel
    def scale(a: tl.Tile[(1024,), tl.i16], c: tl.Tile[(1024,), tl.i16], f: tl.i16):
        c[...] = a * f

    # store-bound (2048 B / 32 B = 64) + its loop's fill (load 7, integer multiply 5, store 1, less one) +
    # the call's own cycle: 77 ([PG4c] measured 72 for a Chess build, [KC] 78 for Peano's)
    k = cost.kernel_cycles(scale, tl.device("npu1"))
    assert k == cost.CALL_OVERHEAD + 64 + 12 == 77

    @tl.design(device="npu1")
    def vsm(A: tl.Tensor[(1024,), tl.i16], C: tl.Tensor[(1024,), tl.i16]):
        a_in = tl.fifo(tl.Tile[(1024,), tl.i16], depth=2, name="a_in")
        c_out = tl.fifo(tl.Tile[(1024,), tl.i16], depth=2, name="c_out")

        @tl.core(name="worker")
        def worker():
            a = a_in.acquire()
            c = c_out.acquire()
            scale(a, c, 3)
            a_in.release()
            c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)

    plan = hand_plan(vsm, {"worker": (0, 2)})
    a = np.arange(1024, dtype=np.int16)
    res = simulator.simulate(plan, A=a)
    assert np.array_equal(res.outputs["C"], a * 3)
    assert res.cycles == H + T(2048) + L(2) + k + T(2048) + L(2)
    assert res.stats.cores["worker"].busy == k
    assert res.stats.cores["worker"].stalls == {"a_in": H + T(2048) + L(2)}


# -- pipelines and buffering --------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2])
def test_single_vs_double_buffering(depth):
    n, elems, k = 512, 6, 300
    kern = timed_extern("inc", n, k)
    d = pipeline_design(n, elems, depth, kern)
    plan = hand_plan(d, {"worker": (0, 3)})
    a = np.arange(n * elems, dtype=np.int32)
    res = simulator.simulate(plan, A=a)
    assert np.array_equal(res.outputs["C"], a + 1)
    t, lat = T(4 * n), L(3)
    if depth == 1:
        # Every step waits for the previous one: input, latency, kernel.
        expected = H + elems * (t + lat + k) + t + lat
    else:
        # Input streams back to back (t > k): the core keeps pace, the output trails by one.
        expected = H + (elems + 1) * t + 2 * lat + k
    assert res.cycles == expected


def test_double_buffering_is_faster_than_single():
    kern = timed_extern("inc", 256, 200)
    a = np.arange(256 * 8, dtype=np.int32)
    cyc = {}
    for depth in (1, 2, 3):
        d = pipeline_design(256, 8, depth, kern, name=f"p{depth}")
        cyc[depth] = simulator.simulate(hand_plan(d, {"worker": (0, 2)}), A=a).cycles
    assert cyc[1] > cyc[2] >= cyc[3]


def test_two_stage_pipeline_is_bound_by_its_slowest_stage():
    n, elems = 256, 8
    k1, k2 = 400, 1500  # the second stage dominates (t = 260 < k1 < k2)
    plan = two_stage_plan(n, elems, k1, k2)
    x = np.arange(n * elems, dtype=np.int32)
    res = simulator.simulate(plan, A=x)
    assert np.array_equal(res.outputs["C"], x * 2 + 5)
    t = T(4 * n)
    # b is shared memory: no DMA, no latency. The second core starts when the first's
    # first call ends, then runs back to back.
    first_done = H + t + L(2) + k1
    assert res.cycles == first_done + elems * k2 + t + L(3)
    assert res.stats.cores["second"].busy == elems * k2
    assert res.stats.cores["first"].stalls.get("b", 0) > 0  # the fast stage waits for room


def test_broadcast_is_paced_by_the_slowest_consumer():
    n, elems = 128, 5
    fast, slow = timed_extern("fast", n, 50), timed_extern("slow", n, 900)

    @tl.design(device="npu1")
    def bcast(A: tl.Tensor[(n * elems,), tl.i32], C1: tl.Tensor[(n * elems,), tl.i32],
              C2: tl.Tensor[(n * elems,), tl.i32]):
        a = tl.fifo(tl.Tile[(n,), tl.i32], depth=1, name="a")
        o1 = tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name="o1")
        o2 = tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name="o2")

        for nm, out, k in (("c_fast", o1, fast), ("c_slow", o2, slow)):
            @tl.core(name=nm)
            def body(out=out, k=k):
                for _ in tl.range(elems):
                    x, y = a.acquire(), out.acquire()
                    k(x, y)
                    a.release()
                    out.release()

        tl.dma(A, a)
        tl.dma(o1, C1)
        tl.dma(o2, C2)

    plan = hand_plan(bcast, {"c_fast": (0, 2), "c_slow": (0, 3)})
    x = np.arange(n * elems, dtype=np.int32)
    res = simulator.simulate(plan, A=x)
    assert np.array_equal(res.outputs["C1"], x + 1) and np.array_equal(res.outputs["C2"], x + 1)
    t = T(4 * n)
    # depth 1: element i+1 moves only once both consumers released element i; the
    # slow core (3 hops away) releases last.
    period = t + L(3) + 900
    assert res.cycles == H + elems * period + t + L(3)
    assert res.stats.cores["c_fast"].stalls["a"] > res.stats.cores["c_slow"].stalls["a"]


# -- contention ----------------------------------------------------------------------------




def test_flows_sharing_a_dma_channel_serialise():
    n = 1024
    add, d = two_input_add(n)
    k = cost.kernel_cycles(add, tl.device("npu1"))
    a, b = np.arange(n, dtype=np.int32), np.full(n, 7, dtype=np.int32)
    apart = simulator.simulate(hand_plan(d, {"w": (0, 2)}), A=a, B=b)
    same = {("fa", "host"): 0, ("fb", "host"): 0, ("fa", "core:w"): 0, ("fb", "core:w"): 0}
    shared = simulator.simulate(hand_plan(d, {"w": (0, 2)}, channels=same), A=a, B=b)
    for r in (apart, shared):
        assert np.array_equal(r.outputs["C"], a + b)
    t, lat = T(4 * n), L(2)
    # B's move is issued second (ISSUE later): apart, its data starts at 2 ISSUE + D; shared, it
    # follows A's transfer on the channel (ISSUE < t).
    assert ISSUE < t
    assert apart.cycles == 2 * ISSUE + D + t + lat + k + t + lat
    assert shared.cycles == H + 2 * t + lat + k + t + lat
    assert shared.stats.channels["compute (0,2) s2mm 0"].bytes == 2 * 4 * n
    assert shared.stats.channels["compute (0,2) s2mm 0"].busy == 2 * t


def test_oversubscribed_link_is_time_shared():
    _, d = two_input_add(64)
    plan = hand_plan(d, {"w": (0, 2)})
    # A hand-made plan putting 8 flows on the 6-channel link (0,1)->(0,2).
    link = ((0, 1), (0, 2))
    routes = dict(plan.routes)
    for i in range(6):
        routes[f"extra{i}"] = Route((0, 1), ((0, 2),), (link,))
    crowded = type(plan)(plan.design, plan.placement, plan.link_tiles, plan.fifos, plan.buffers, routes)
    net = Network(crowded)
    assert net.usage[link] == 8
    assert net.flow("fa", (0, 0), [(0, 2)]).share == pytest.approx(6 / 8)
    assert Network(plan).flow("fa", (0, 0), [(0, 2)]).share == 1.0


def test_ddr_bandwidth_is_shared_by_shim_channels():
    ddr = Ddr(bytes_per_cycle=8.0)
    ends = [ddr.reserve(0, 800, True) for _ in range(3)]
    assert ends == [100.0, 200.0, 300.0]
    assert ddr.reserve(1000, 80, False) == 1010.0
    assert ddr.bytes_read == 2400 and ddr.bytes_written == 80


def test_dispatch_overhead_adds_the_published_host_cost():
    d = pipeline_design(256, 2, 2, copy_kernel((256,)))
    plan = hand_plan(d, {"worker": (0, 2)})
    a = np.zeros(512, np.int32)
    base = simulator.simulate(plan, A=a).cycles
    with_dispatch = simulator.simulate(plan, dispatch_overhead=True, A=a)
    assert with_dispatch.cycles == base + cost.dispatch_cycles(tl.device("npu1"))
    # [I3793]: about 450 us per invocation, at the npu1 clock (1.6 GHz).
    assert cost.dispatch_cycles(tl.device("npu1")) == round(450e-6 * 1.6e9)
    assert with_dispatch.seconds == pytest.approx(with_dispatch.cycles / 1.6e9)


# -- the event trace ---------------------------------------------------------------------


def test_trace_spans_of_a_pipeline(tmp_path):
    kern = timed_extern("inc", 256, 100)
    d = pipeline_design(256, 3, 2, kern)
    res = simulator.simulate(hand_plan(d, {"worker": (0, 2)}), A=np.zeros(768, np.int32))
    t, lat = T(1024), L(2)
    calls = [s for s in res.trace.spans() if s[1] == "inc"]
    assert [(s[2], s[3]) for s in calls] == [(H + t + lat, 100), (H + 2 * t + lat, 100), (H + 3 * t + lat, 100)]
    ins = [s[2] for s in res.trace.spans("shim (0,0) mm2s 0")]
    assert ins == [H, H + t, H + 2 * t]
    path = tmp_path / "t.json"
    res.trace.save(path)
    import json

    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X"}
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"worker (0, 2)", "shim (0,0) mm2s 0", "compute (0,2) s2mm 0", "moves on a_in", "moves on c_out"} <= names
    x = [e for e in events if e["ph"] == "X"]
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in x)


def test_trace_of_a_planned_multicore_design_is_valid_chrome_json(tmp_path):
    import json

    from tilelang.plan import plan as make_plan

    d = tl.library.matmul(128, 128, 128, tiling={"m": 32, "k": 32, "n": 32})
    zeros = {n: np.zeros(d.tensors[n].shape, d.tensors[n].dtype.numpy) for n in d.inputs}
    res = simulator.simulate(make_plan(d, strategy="greedy"), **zeros)
    path = tmp_path / "gemm.json"
    res.trace.save(path)
    doc = json.loads(path.read_text())  # parses as JSON
    events = doc["traceEvents"]
    assert doc["otherData"]["clock_hz"] == tl.device("npu1").clock_hz
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    names = set(threads.values())
    # A track per core and per DMA channel, each in its group.
    for core in res.stats.cores:
        assert any(n.startswith(f"{core} (") for n in names), core
    assert set(res.stats.channels) <= names
    by_name = {n: pid for (pid, _), n in threads.items()}
    assert {processes[by_name[c]] for c in res.stats.channels} == {"DMA channels"}
    spans = [e for e in events if e["ph"] == "X"]
    end_us = res.cycles * 1e6 / tl.device("npu1").clock_hz
    for e in spans:
        assert (e["pid"], e["tid"]) in threads
        assert e["dur"] >= 0 and e["ts"] >= 0 and e["ts"] + e["dur"] <= end_us + 1e-9
    busy_tracks = {threads[(e["pid"], e["tid"])] for e in spans}
    for core in res.stats.cores:  # every core ran kernels
        assert any(t.startswith(f"{core} (") for t in busy_tracks), core
    for name, ch in res.stats.channels.items():  # every channel that moved data shows its transfers
        assert (name in busy_tracks) == (ch.transfers > 0), name
