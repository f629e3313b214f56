"""DDR as the shim DMA sees it: bursts per contiguous run, the in-flight limit, the host
sequence's issue cost, task queue and first-burst latency (simulator/memory.py Ddr,
simulator/host.py), against hand-worked figures from the device data.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest
from test_sim_support import ddr_fill_plan, hand_plan, two_input_add

import simulator
import tilelang as tl
from simulator import cost
from simulator.engine import Engine
from simulator.host import Host, HostMove, contiguous_run
from simulator.memory import Ddr
from tilelang.devices.spec import HostMemory
from tilelang.errors import SimulationError
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.sequence import HostSequence, Push, Transfer, Wait


def T(nbytes: int, rate: float = 4.0) -> int:
    return cost.BD_SETUP_CYCLES + math.ceil(nbytes / rate)


# -- device data ---------------------------------------------------------------------------


def test_every_device_has_host_memory_data():
    for name in tl.devices():
        hm = tl.device(name).host_memory
        assert hm is not None and hm.bytes_per_second > 0
        # mlir-aie getShimBurstEncodingsAndLengths: 64/128/256 B, and 512 B on npu2
        assert hm.burst_bytes == ((64, 128, 256, 512) if name.startswith("npu2") else (64, 128, 256))
        assert tl.device(name).to_dict()["host_memory"]["shim_burst_bytes"] == list(hm.burst_bytes)
    # AM020: "queue depth is four tasks per channel" (NPU runtime sequence); AIE1 BDs are static
    assert tl.device("npu1").host_memory.task_queue == 4
    assert tl.device("xcvc1902").host_memory.task_queue == 0
    assert tl.device("npu2").host_memory.bytes_per_second != tl.device("npu1").host_memory.bytes_per_second


def test_host_memory_rejects_bad_numbers():
    with pytest.raises(ValueError, match="burst"):
        HostMemory(1e9, (), 64, 500, 16, 4, 100)
    with pytest.raises(ValueError, match="outstanding"):
        HostMemory(1e9, (64,), 64, 500, 0, 4, 100)


def test_host_sequence_cycles_come_from_the_device_clock():
    npu1, aie1 = tl.device("npu1"), tl.device("xcvc1902")
    hm = npu1.host_memory
    issue, queue, latency = cost.host_sequence_cycles(npu1)
    assert issue == round(hm.task_issue_ns * 1.6) and queue == 4 and latency == round(hm.latency_ns * 1.6)
    issue, queue, latency = cost.host_sequence_cycles(aie1)
    assert issue == 0 and queue == 0 and latency == round(aie1.host_memory.latency_ns * 1.25)


def test_npu2_bf16_datapaths():
    npu2, npu1 = tl.device("npu2"), tl.device("npu1")
    # The cost model's bf16 rate on npu2 is the bfp16-emulated path (docs/simulator.md).
    assert npu2.macs_per_cycle(tl.bf16) == 256 and npu2.macs_per_cycle("bf16", "default") == 256
    assert npu2.mac_modes(tl.bf16) == {"default": 256.0, "bfp16": 512.0, "native": 128.0}
    assert npu2.macs_per_cycle(tl.bf16, "bfp16") == npu2.macs_per_cycle(tl.i8)  # Block FP16 at the int8 rate
    assert npu1.mac_modes(tl.bf16) == {"default": 128.0}
    assert npu2.to_dict()["mac_modes"]["bf16"]["native"] == 128.0
    with pytest.raises(tl.DesignError, match="no bf16 MAC mode 'fp8'"):
        npu2.macs_per_cycle(tl.bf16, "fp8")
    with pytest.raises(tl.DesignError, match="no f32 MAC mode"):
        npu1.macs_per_cycle(tl.f32, "bfp16")


def test_arch_spec_rejects_modes_of_unknown_dtypes():
    arch = tl.device("npu2").arch
    with pytest.raises(ValueError, match="mac_modes"):
        dataclasses.replace(arch, mac_modes=(("f8", "fast", 1.0),))
    with pytest.raises(ValueError, match="positive"):
        dataclasses.replace(arch, mac_modes=(("bf16", "slow", 0.0),))


# -- runs and bursts -----------------------------------------------------------------------


@pytest.mark.parametrize("sizes,strides,run", [
    ((64, 64), (1024, 1), 64),  # a 64x64 tile of a 1024-wide row-major matrix: one run per row
    ((64, 64), (64, 1), 4096),  # the whole tile is contiguous
    ((64, 64), (1, 1024), 1),  # a transposed walk: every element its own run
    ((4, 1, 8), (64, 99, 1), 8),  # a size-1 dimension does not break the run
    ((2, 3, 4), (12, 4, 1), 24),
])
def test_contiguous_run_of_a_pattern(sizes, strides, run):
    assert contiguous_run(AccessPattern(0, sizes, strides)) == run


def test_burst_cost_and_in_flight_limit():
    ddr = Ddr(bytes_per_cycle=8.0, access_bytes=64, max_burst=256, latency=100, outstanding=4)
    # 16-byte runs: each costs a whole 64-byte access; 4 bursts of 16 B in flight per 100 cycles.
    assert ddr.cost(1024, 16) == (64 * 64, 4 * 16 / 100)
    # a run longer than the transfer: the transfer is one run of 4 full bursts
    assert ddr.cost(1024, 4096) == (1024, 4 * 256 / 100)
    # 320-byte runs: a 256-byte burst and a 64-byte one; 3.2 runs per transfer
    assert ddr.cost(1024, 320) == pytest.approx((1024, 4 * 160 / 100))
    # 300-byte runs: the 44-byte rest costs a whole access
    assert ddr.cost(1024, 300) == pytest.approx((1024 / 300 * (256 + 64), 4 * 150 / 100))
    assert Ddr(8.0).cost(1024, 1) == (1024, math.inf)  # no burst model: bytes as they are




def test_short_runs_slow_a_shim_read_to_its_in_flight_limit():
    dev = tl.device("npu1")
    hm = dev.host_memory
    latency = round(hm.latency_ns * 1e-9 * dev.clock_hz)
    a = np.arange(16 * 4096, dtype=np.int32)
    for run_elems in (4, 4096):
        plan = ddr_fill_plan(run_elems)
        res = simulator.simulate(plan, A=a)
        runs = a.reshape(4096 // run_elems, -1)[:, :run_elems].reshape(-1)
        assert np.array_equal(res.outputs["C"], runs)
        run = 4 * run_elems
        bursts = math.ceil(run / hm.max_burst)
        rate = min(4.0, hm.outstanding * (run / bursts) / latency)
        (span,) = res.trace.spans("shim (0,0) mm2s 0")
        assert span[3] == T(4 * 4096, rate)
    # the same in timing mode (shared code)
    assert simulator.simulate(ddr_fill_plan(4), mode="timing").cycles == simulator.simulate(ddr_fill_plan(4), A=a).cycles


def test_ddr_time_is_charged_per_access():
    # Enough 16-byte-run reads at once that the DDR, at 64 B per 16 B read, binds before the channels.
    ddr = Ddr(bytes_per_cycle=16.0, access_bytes=64, max_burst=256, latency=1, outstanding=1 << 20)
    charged, _ = ddr.cost(1600, 16)
    ends = [ddr.reserve(0, 1600, True, charged) for _ in range(2)]
    assert ends == [400.0, 800.0]  # 1600 B as 100 accesses of 64 B at 16 B per cycle, one after another
    assert ddr.bytes_read == 3200  # the bytes moved, not the DDR time charged


# -- the runtime sequence --------------------------------------------------------------------


def _two_inputs(n: int = 256):
    _, two_in = two_input_add(n)
    return hand_plan(two_in, {"w": (0, 2)})


def test_moves_are_issued_one_after_another_then_wait_their_first_burst():
    issue, _, latency = cost.host_sequence_cycles(tl.device("npu1"))
    res = simulator.simulate(_two_inputs(), A=np.arange(256, dtype=np.int32), B=np.ones(256, np.int32))
    assert np.array_equal(res.outputs["C"], np.arange(256) + 1)
    (a,) = res.trace.spans("shim (0,0) mm2s 0")
    (b,) = res.trace.spans("shim (0,0) mm2s 1")
    assert (a[2], b[2]) == (issue + latency, 2 * issue + latency)
    # a move's span on its fifo begins when its issue began
    assert res.stats.moves["dma0"]["issued"] == 0 and res.stats.moves["dma1"]["issued"] == issue


def test_moves_queued_on_one_channel_stream_on_without_a_new_latency():
    n, elems = 256, 6

    @tl.design(device="npu1")
    def many(A: tl.Tensor[(n * elems,), tl.i32], C: tl.Tensor[(n * elems,), tl.i32]):
        # deep enough that the memtile forward never holds the input back
        f1 = tl.fifo(tl.Tile[(n,), tl.i32], depth=4, name="f1")
        f2 = tl.fifo(tl.Tile[(n,), tl.i32], depth=4, name="f2")
        tl.dma(f1, f2, name="fw")
        tl.dma(f2, C)  # first, so that the results drain while the inputs are issued
        for i in range(elems):
            tl.dma(A, f1, pattern=tl.pattern(i * n, [n], [1]))

    a = np.arange(n * elems, dtype=np.int32)
    res = simulator.simulate(hand_plan(many, {}, link_tiles={"fw": (0, 1)}), A=a)
    assert np.array_equal(res.outputs["C"], a)
    issue, queue, latency = cost.host_sequence_cycles(tl.device("npu1"))
    t = T(4 * n)
    # Pushes (every `issue` cycles, four moves ahead on f1) stay ahead of the channel, so after
    # the output's and the first input's issue and the first burst the six moves stream back
    # to back; the fifth and sixth are pushed when the first and second complete.
    assert issue < t * (queue - 2)
    starts = [s[2] for s in res.trace.spans("shim (0,0) mm2s 0")]
    assert starts == [2 * issue + latency + k * t for k in range(elems)]


def _move(name: str, fifo: str) -> HostMove:
    dma = SimpleNamespace(name=name, fifos=(fifo,), to_device=True, plio=0,
                          pattern=AccessPattern(0, (4,), (1,)))
    return HostMove(dma, None, 4, 16)  # type: ignore[arg-type]


def test_a_wait_stops_the_command_processor_until_its_transfer_completes():
    eng = Engine()
    host = Host(eng, lambda m: None, issue=10, queue_depth=2, latency=0)
    m0, m1, m2, other = _move("m0", "f"), _move("m1", "f"), _move("m2", "f"), _move("g0", "g")
    for m in (m0, m1, m2, other):
        host.add(m)
    ch_f, ch_g = ((0, 0), "mm2s", 0), ((0, 0), "mm2s", 1)
    t0, t1, t2, tg = (Transfer(i, m.dma, m.fifos, ch) for i, (m, ch) in
                      enumerate(((m0, ch_f), (m1, ch_f), (m2, ch_f), (other, ch_g))))
    # f's ring is two deep: its third push waits for its first transfer, and so does every later command
    host.follow(HostSequence((t0, t1, t2, tg), (Push(t0, 0, True), Push(t1, 1, False), Wait(t0), Push(t2, 0, False),
                                                Push(tg, 2, False)), {ch_f: 2, ch_g: 2}))
    eng.schedule(0, host.start)
    eng.schedule(100, lambda: host.complete(m0))
    eng.run()
    assert [m.issue_start for m in (m0, m1, m2, other)] == [0, 10, 100, 110]
    assert host.waiting is None and host.commands_left() == 0
    # m2 starts once m1, before it on f, completes
    assert m2.pushed and m2.issued_at is None
    eng.schedule(0, lambda: host.complete(m1))
    eng.run()
    assert m2.issued_at == eng.now and m2.ready


def test_a_push_onto_a_full_queue_is_an_error():
    eng = Engine()
    host = Host(eng, lambda m: None, issue=10, queue_depth=1, latency=0)
    m0, m1 = _move("m0", "f"), _move("m1", "f")
    for m in (m0, m1):
        host.add(m)
    ch = ((0, 0), "mm2s", 0)
    t0, t1 = Transfer(0, m0.dma, m0.fifos, ch), Transfer(1, m1.dma, m1.fifos, ch)
    host.follow(HostSequence((t0, t1), (Push(t0, 0, False), Push(t1, 1, False)), {ch: 1}))
    eng.schedule(0, host.start)
    with pytest.raises(SimulationError, match="holding 1 uncompleted tasks; its queue holds 1"):
        eng.run()
