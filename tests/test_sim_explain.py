"""``SimResult.explain()``: the critical path's shares per cause, checked on designs worked out by hand.

Notation as in test_sim_timing.py: T = BD setup + bytes / 4, L = 4 cycles per switch
(hops + 1), K = a kernel call's cycles.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_sim_support import copy_kernel, hand_plan, pipeline_design, two_stage_plan

import simulator
import tilelang as tl
from simulator import cost
from tilelang.errors import SimulationError


def T(nbytes: int) -> int:
    return cost.BD_SETUP_CYCLES + math.ceil(nbytes / 4)


# ISSUE: cycles to issue a host move, D: a to-device move's first-data latency (the runtime
# sequence; docs/simulator.md); H: when the first move's data starts.
ISSUE, _QUEUE, D = cost.host_sequence_cycles(tl.device("npu1"))
H = ISSUE + D


def L(hops: int) -> int:
    return cost.SWITCH_LATENCY * (hops + 1)


def _passthrough(dispatch: bool = False):
    n, elems = 1024, 8
    d = pipeline_design(n, elems, 2, copy_kernel((n,)))
    plan = hand_plan(d, {"worker": (0, 2)})
    a = np.arange(n * elems, dtype=np.int32)
    res = simulator.simulate(plan, A=a, dispatch_overhead=dispatch)
    assert np.array_equal(res.outputs["C"], a)
    return res, n, elems


def test_dma_bound_passthrough_is_input_stream_bound():
    res, n, elems = _passthrough()
    ex = res.explain()
    t, lat = T(4 * n), L(2)
    k = cost.kernel_cycles(copy_kernel((n,)), tl.device("npu1"))
    assert k < t  # the core keeps pace with the stream: it waits on its input
    # Input back to back; the core's first call once the first element landed; the last
    # output element leaves after the last call.
    assert res.cycles == H + (elems + 1) * t + 2 * lat + k
    assert ex.share("fill") == H + t + lat
    assert ex.share("kernel compute") == elems * k == res.stats.cores["worker"].busy
    assert ex.share("waiting on fifo a_in (input)") == (elems - 1) * (t - k)
    assert ex.share("drain") == t + lat
    assert sum(s.cycles for s in ex.shares) == res.cycles
    util = res.stats.channels["shim (0,0) mm2s 0"].utilisation
    assert util == elems * t / res.cycles
    assert ex.verdict.startswith(f"input-stream bound: shim (0,0) mm2s 0 at {util:.0%}")
    assert ex.device_peak is None and ex.kernel_peak is None  # a copy does no MACs
    assert "utilisation = busy cycles / run cycles" in ex.text()


def test_dispatch_is_a_share_of_its_own():
    res, _, _ = _passthrough(dispatch=True)
    base, _, _ = _passthrough()
    ex, ex0 = res.explain(), base.explain()
    d = cost.dispatch_cycles(tl.device("npu1"))
    assert ex.share("host dispatch") == d
    assert res.cycles == base.cycles + d
    # Every other share is the run without dispatch, shifted.
    assert [(s.cause, s.cycles) for s in ex.shares[1:]] == [(s.cause, s.cycles) for s in ex0.shares]
    assert ex.verdict.startswith("dispatch bound: host dispatch")


def _matmul_design(tiles: int, ks: int, t: int = 64):
    @tl.kernel
    def zero(c: tl.Tile[(t, t), tl.i32]):
        c[...] = 0

    @tl.kernel
    def mac(a: tl.Tile[(t, t), tl.i16], b: tl.Tile[(t, t), tl.i16], c: tl.Tile[(t, t), tl.i32]):
        c[...] += a @ b

    @tl.design(device="npu1")
    def mm(A: tl.Tensor[(tiles * ks * t, t), tl.i16], B: tl.Tensor[(tiles * ks * t, t), tl.i16],
           C: tl.Tensor[(tiles * t, t), tl.i32]):
        a_in = tl.fifo(tl.Tile[(t, t), tl.i16], name="a_in")
        b_in = tl.fifo(tl.Tile[(t, t), tl.i16], name="b_in")
        c_out = tl.fifo(tl.Tile[(t, t), tl.i32], depth=1, name="c_out")

        @tl.core(name="worker")
        def worker():
            for _ in tl.range(tiles):
                c = c_out.acquire()
                zero(c)
                for _ in tl.range(ks):
                    x, y = a_in.acquire(), b_in.acquire()
                    mac(x, y, c)
                    a_in.release()
                    b_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(B, b_in)
        tl.dma(c_out, C)

    return mm, mac, zero


def test_compute_bound_single_core_matmul():
    tiles, ks, t = 2, 4, 64
    d, mac, zero = _matmul_design(tiles, ks, t)
    plan = hand_plan(d, {"worker": (0, 2)})
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, (tiles * ks * t, t)).astype(np.int16)
    b = rng.integers(-4, 4, (tiles * ks * t, t)).astype(np.int16)
    res = simulator.simulate(plan, A=a, B=b)
    ref = np.stack([sum(a[(j * ks + i) * t:(j * ks + i + 1) * t].astype(np.int64)
                        @ b[(j * ks + i) * t:(j * ks + i + 1) * t].astype(np.int64) for i in range(ks))
                    for j in range(tiles)]).reshape(tiles * t, t)
    assert np.array_equal(res.outputs["C"], ref.astype(np.int32))
    ex = res.explain()
    dev = tl.device("npu1")
    k_mac, k_zero = cost.kernel_cycles(mac, dev), cost.kernel_cycles(zero, dev)
    assert k_mac > T(t * t * 2)  # a call outlasts the transfer of its next A and B tiles
    core = res.stats.cores["worker"]
    assert core.busy == tiles * (ks * k_mac + k_zero)
    assert ex.share("kernel compute") == core.busy - core.banks
    assert sum(s.cycles for s in ex.shares) == res.cycles
    assert ex.verdict.startswith("compute bound: core worker (0,2)")
    # The kernel alone: 64^3 MACs at 64 per cycle over its cycles.
    assert ex.kernel_peak == pytest.approx(t**3 / dev.macs_per_cycle(tl.i16) / k_mac)
    assert f"kernel alone {ex.kernel_peak:.0%} of MAC peak" in ex.verdict
    # The design: every call's MACs over what the 16 cores could do in the run.
    macs = tiles * ks * t**3 / dev.macs_per_cycle(tl.i16)
    assert ex.device_peak == pytest.approx(macs / (res.cycles * len(dev.tiles("compute"))))
    # The waits: the fill (the first A and B tiles, while the first zero runs); C has one
    # buffer, so the second tile waits for the first to leave the tile; then the drain.
    # B's first move is issued ISSUE after A's, so the first call waits ISSUE more for b_in.
    assert ex.share("fill") == H + T(t * t * 2) + L(2) - k_zero
    assert ex.share("waiting on fifo b_in (input)") == ISSUE
    assert ex.share("waiting on fifo c_out (output)") == T(t * t * 4)
    assert ex.share("waiting on fifo") == T(t * t * 4) + ISSUE  # no wait for A or B after the first
    assert ex.share("drain") == T(t * t * 4) + L(2)


def test_waiting_on_a_slow_upstream_core_names_it():
    n, elems, k1, k2 = 256, 8, 1500, 400  # the first stage dominates
    plan = two_stage_plan(n, elems, k1, k2)
    x = np.arange(n * elems, dtype=np.int32)
    res = simulator.simulate(plan, A=x)
    ex = res.explain()
    assert ex.path == "core second (0,3)"
    # The second core waits k1 - k2 for each element after its first.
    assert ex.share("waiting on fifo b (input)") == (elems - 1) * (k1 - k2)
    assert ex.share("fill") == H + T(4 * n) + L(2) + k1
    util = res.stats.cores["first"].busy / res.cycles
    assert ex.verdict.startswith(f"upstream-core bound: core first (0,2) at {util:.0%}")
    assert sum(s.cycles for s in ex.shares) == res.cycles


def test_design_without_cores_is_data_movement():
    @tl.design(device="npu1")
    def fw(A: tl.Tensor[(2048,), tl.i32], C: tl.Tensor[(2048,), tl.i32]):
        f1 = tl.fifo(tl.Tile[(512,), tl.i32], name="f1")
        f2 = tl.fifo(tl.Tile[(512,), tl.i32], name="f2")
        tl.dma(f1, f2, name="fw")
        tl.dma(A, f1)
        tl.dma(f2, C)

    plan = hand_plan(fw, {}, link_tiles={"fw": (0, 1)})
    res = simulator.simulate(plan, A=np.arange(2048, dtype=np.int32))
    ex = res.explain()
    assert [(s.cause, s.cycles) for s in ex.shares] == [("data movement", res.cycles)]
    assert ex.verdict.startswith("data-movement bound:")


def test_explain_needs_a_timed_run():
    d = pipeline_design(64, 2, 2, copy_kernel((64,)))
    res = simulator.simulate(hand_plan(d, {"worker": (0, 2)}), mode="functional", A=np.arange(128, dtype=np.int32))
    with pytest.raises(SimulationError, match="explain\\(\\) needs a timed run"):
        res.explain()


def test_timing_mode_explains_the_same():
    d = pipeline_design(256, 4, 2, copy_kernel((256,)))
    plan = hand_plan(d, {"worker": (0, 2)})
    a = np.arange(1024, dtype=np.int32)
    timed = simulator.simulate(plan, A=a).explain()
    timing = simulator.simulate(plan, mode="timing", A=a).explain()
    assert timing == timed


def test_a_wait_on_a_core_fed_fifo_names_the_busiest_resource_behind_the_cores_upstream():
    """Attention's output core waits on P from the softmax core, which mostly waits itself (on the scores, which
    wait on the K^T blocks): the wait, and the verdict, name the busiest resource anywhere upstream (the shim
    channel reading K^T), not the idle core next to it; a pipeline's fill names it likewise."""
    plan = tl.plan(tl.library.attention(8, 2048, 64, block_q=8), strategy="greedy")
    res = tl.simulate(plan, mode="timing")
    ex = res.explain()
    wait = next(s for s in ex.shares if s.cause == "waiting on fifo p_0 (input)")
    kt = plan.fifos["kt"].producer
    kt_channel = f"shim ({kt.tile[0]},{kt.tile[1]}) mm2s {kt.channel}"
    assert wait.resource == kt_channel
    assert wait.utilisation == pytest.approx(res.stats.channels[kt_channel].utilisation)
    assert wait.utilisation > res.stats.cores["sm_0"].busy / res.cycles
    assert ex.verdict.startswith(f"input-stream bound: {kt_channel}")
    fill = next(s for s in ex.shares if s.cause == "fill")
    assert fill.resource == kt_channel
    split = tl.simulate(tl.library.attention(8, 2048, 64, block_q=8, split_kv=2), mode="timing").explain()
    assert split.path.startswith("core combine") and "the first input through shim" in split.verdict


def test_a_core_waiting_on_a_busier_shim_channel_is_input_stream_bound():
    """A core in kernel calls for 60% of the run, waiting the rest on a shim channel busy all the run: its
    largest share is compute, but the channel bounds it (given cycles set the calls' length)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    import designs

    plan = tl.plan(designs.vector_scalar_mul(65536, 1024), strategy="greedy")
    a = np.zeros(65536, np.int32)
    fast = tl.simulate(plan, mode="timing", kernel_cycles={"scale": 1})
    shim = max((c for c in fast.stats.channels if c.startswith("shim") and "mm2s" in c),
               key=lambda c: fast.stats.channels[c].busy)
    period = fast.stats.channels[shim].busy // 64  # the shim's cycles per 1024-value element
    res = tl.simulate(plan, kernel_cycles={"scale": int(0.6 * period)}, A=a)
    ex = res.explain()
    compute = sum(s.cycles for s in ex.shares if s.cause == "kernel compute")
    waits = sum(s.cycles for s in ex.shares if s.cause.endswith("(input)"))
    assert compute > waits  # the largest share is the core's own calls ...
    assert res.stats.channels[shim].busy / res.cycles > compute / res.cycles  # ... yet the shim is busier
    assert ex.verdict.startswith(f"input-stream bound: {shim} at"), ex.verdict
