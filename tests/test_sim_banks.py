"""Memory-bank conflicts: a call's own parameters in one bank, and DMA transfers into a bank a call reads.

Cycle counts are worked out by hand from cost.py's constants: a bank serves
32 bytes per cycle; a tile DMA takes one bank cycle per 16 bytes it moves.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from test_sim_support import hand_plan, pipeline_design

import simulator
import tilelang as tl
from simulator import cost
from simulator.contention import Contention
from tilelang.ir.plan import BufferPlacement

NPU1 = tl.device("npu1")


def T(nbytes: int) -> int:
    return cost.BD_SETUP_CYCLES + math.ceil(nbytes / 4)


def L(hops: int) -> int:
    return cost.SWITCH_LATENCY * (hops + 1)


def _mac():
    @tl.kernel
    def mac(a: tl.Tile[(64, 64), tl.bf16], b: tl.Tile[(64, 64), tl.bf16], c: tl.Tile[(64, 64), tl.f32]):
        c[...] += a @ b

    return mac


def test_two_operands_in_one_bank_share_its_cycles():
    mac = _mac()
    apart = cost.call_timing(mac, NPU1, {"a": 0, "b": 1, "c": 2})
    assert apart.cycles == cost.kernel_cycles(mac, NPU1)  # separate banks: no conflict
    together = cost.call_timing(mac, NPU1, {"a": 0, "b": 0, "c": 2})
    # A and B are each read 8 times (64 KiB apiece, [PG4c]-style 2x2 blocking) through one bank
    # that serves 32 bytes a cycle: 4096 cycles, against 2304 of the load units.
    assert together.banks[0] == 2 * 8 * 64 * 64 * 2 / 32
    s = cost.kernel_slots(mac, NPU1)
    assert together.cycles == cost.CALL_OVERHEAD + math.ceil(s.fixed + 4096)
    unknown = cost.call_timing(mac, NPU1, {})
    assert unknown.cycles == apart.cycles and unknown.banks == {}


def test_contention_charges_overlap_once_per_pair():
    mac = _mac()
    timing = cost.call_timing(mac, NPU1, {"a": "A", "b": "B", "c": "C"})
    slack = timing.bound - timing.banks["A"]  # bank A cycles the DMA may take for free
    con = Contention({"A", "B", "C"})
    # A transfer already streaming into bank A when the call starts: charged for the overlap.
    con.transfer_started(["A"], 0, 10_000, 4.0)
    call = con.call_started(100, timing)
    per_cycle = 4.0 / cost.DMA_ACCESS_BYTES
    taken = timing.cycles * per_cycle
    assert call.extra == max(0, math.ceil(taken - slack))
    # A transfer into a bank the call does not use changes nothing; one into bank B is charged.
    before = call.extra
    con.transfer_started(["elsewhere"], 100, 200, 4.0)
    assert call.extra == before
    con.transfer_started(["B"], 200, 300, 4.0)
    assert call.dma["B"] == 100 * per_cycle
    assert call.end == 100 + timing.cycles + call.extra


def _planned(plan, banks: dict[tuple[str, str], list[int]]):
    """The hand plan with buffers placed: (fifo, agent name) -> bank of each buffer."""
    buffers = dict(plan.buffers)
    for (fifo, agent), bs in banks.items():
        tile = plan.placement[agent]
        size = plan.design.fifo(fifo).elem.nbytes
        for i, bank in enumerate(bs):
            buffers[f"{fifo}_{agent}_{i}"] = BufferPlacement(tile, bank, bank * 16384 + 1024 * i, size, fifo, i)
    return dataclasses.replace(plan, buffers=buffers)


def _copy_pipeline():
    n = 1024

    @tl.kernel
    def copy(a: tl.Tile[(n,), tl.i32], c: tl.Tile[(n,), tl.i32]):
        c[...] = a

    return n, copy, pipeline_design(n, 2, 2, copy)


def test_dma_filling_the_bank_a_kernel_reads_slows_the_kernel():
    n, copy, d = _copy_pipeline()
    base = hand_plan(d, {"worker": (0, 2)})
    a = np.arange(2 * n, dtype=np.int32)
    # Both buffers of a_in in bank 0: while the core copies element 0, the DMA fills element 1
    # in the same bank. c_out's buffers sit in banks 1 and 2.
    same = _planned(base, {("a_in", "worker"): [0, 0], ("c_out", "worker"): [1, 2]})
    apart = _planned(base, {("a_in", "worker"): [0, 3], ("c_out", "worker"): [1, 2]})
    r_base, r_same, r_apart = (simulator.simulate(p, A=a) for p in (base, same, apart))
    for r in (r_base, r_same, r_apart):
        assert np.array_equal(r.outputs["C"], a)
    t, lin, lout = T(4 * n), L(2), L(2)
    k = cost.kernel_cycles(copy, NPU1)
    # copy of 4 KiB: store-bound (4096 / 32 = 128) and bank-bound on a and c alike (4096 / 32), plus
    # its loop's fill: a load's and a store's latency less one cycle (7 + 1 - 1).
    assert k == cost.CALL_OVERHEAD + 7 + 128
    # Call 1 starts at t + lin while a_in's element 1 streams into bank 0 until 2t: the DMA takes
    # one bank cycle per 16 bytes, 4 bytes a cycle, so k / 4 cycles, all beyond the bank's slack.
    extra = math.ceil(k / 4)
    # The output's first element leaves when call 1 ends; the second waits for the channel.
    # H: the first host move's issue and first-data latency (the runtime sequence) before it all.
    issue, _, latency = cost.host_sequence_cycles(NPU1)
    H = issue + latency
    assert r_base.cycles == r_apart.cycles == H + 3 * t + lin + k + lout
    assert r_same.cycles == H + 3 * t + lin + k + extra + lout
    calls = [s for s in r_same.trace.spans() if s[1] == "copy"]
    assert [c[3] for c in calls] == [k + extra, k]
    assert r_same.stats.cores["worker"].busy == 2 * k + extra
