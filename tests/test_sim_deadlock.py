"""Designs that cannot progress raise tl.DeadlockError naming who waits on what (never a hang)."""

from __future__ import annotations

import numpy as np
import pytest
from test_sim_support import copy_kernel, hand_plan

import simulator
import tilelang as tl


def test_core_waiting_for_data_that_never_comes():
    copy = copy_kernel((64,))

    @tl.design(device="npu1")
    def starved(A: tl.Tensor[(64,), tl.i32], C: tl.Tensor[(128,), tl.i32]):
        a = tl.fifo(tl.Tile[(64,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(64,), tl.i32], name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(2):  # two elements wanted, the host sends one
                x, y = a.acquire(), c.acquire()
                copy(x, y)
                a.release()
                c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    plan = hand_plan(starved, {"w": (0, 2)})
    with pytest.raises(tl.DeadlockError, match=r"core 'w' on tile \(0, 2\): acquire\(1\) of fifo 'a' \(consume\) waits for data") as e:
        simulator.simulate(plan, A=np.ones(64, np.int32))
    msg = str(e.value)
    assert "host move 'dma1' (c -> C): received 1 of 2 elements" in msg
    assert isinstance(e.value, tl.SimulationError)


def _ring_of_two(shared: bool):
    copy = copy_kernel((32,))

    @tl.design(device="npu1")
    def ring(A: tl.Tensor[(32,), tl.i32], C: tl.Tensor[(32,), tl.i32]):
        ab = tl.fifo(tl.Tile[(32,), tl.i32], name="ab")
        ba = tl.fifo(tl.Tile[(32,), tl.i32], name="ba")
        src = tl.fifo(tl.Tile[(32,), tl.i32], name="src")
        out = tl.fifo(tl.Tile[(32,), tl.i32], name="out")

        @tl.core(name="x")
        def x():
            i = ba.acquire()  # waits for y, which waits for x: a cycle
            o = ab.acquire()
            copy(i, o)
            ba.release()
            ab.release()
            s = src.acquire()
            s2 = ab.acquire()
            copy(s, s2)
            src.release()
            ab.release()

        @tl.core(name="y")
        def y():
            i = ab.acquire()
            o = ba.acquire()
            copy(i, o)
            ab.release()
            ba.release()
            i2 = ab.acquire()
            o2 = out.acquire()
            copy(i2, o2)
            ab.release()
            out.release()

        tl.dma(A, src)
        tl.dma(out, C)

    shared_at = {"ab": (0, 3), "ba": (0, 3)} if shared else {}
    return hand_plan(ring, {"x": (0, 2), "y": (0, 3)}, shared=shared_at)


@pytest.mark.parametrize("shared", [True, False])
def test_cycle_of_waits_is_reported(shared):
    plan = _ring_of_two(shared)
    with pytest.raises(tl.DeadlockError) as e:
        simulator.simulate(plan, A=np.zeros(32, np.int32))
    msg = str(e.value)
    assert "core 'x'" in msg and "core 'y'" in msg
    assert "fifo 'ba' (consume) waits for data" in msg
    assert "fifo 'ab' (consume) waits for data" in msg
    assert "wait cycle: " in msg
    cycle = msg.split("wait cycle: ")[1].splitlines()[0].split(" -> ")
    assert cycle[0] == cycle[-1]
    assert {"core:x", "core:y"} <= set(cycle)
    if not shared:
        assert {"dma:ab", "dma:ba"} <= set(cycle)
    # Each edge of the cycle says what is awaited from whom.
    if shared:
        assert "core:x waits for data of fifo 'ba' from core:y" in msg
        assert "core:y waits for data of fifo 'ab' from core:x" in msg
    else:
        assert "core:x waits for data of fifo 'ba' from dma:ba" in msg
        assert "dma:ba waits for data of fifo 'ba' from core:y" in msg


def test_producer_blocked_on_a_full_fifo_names_the_buffer_state():
    copy = copy_kernel((16,))

    @tl.design(device="npu1")
    def full(A: tl.Tensor[(48,), tl.i32], C: tl.Tensor[(16,), tl.i32]):
        a = tl.fifo(tl.Tile[(16,), tl.i32], depth=1, name="a")
        c = tl.fifo(tl.Tile[(16,), tl.i32], depth=1, name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(3):  # produces 3, the host takes 1
                x, y = a.acquire(), c.acquire()
                copy(x, y)
                a.release()
                c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    plan = hand_plan(full, {"w": (0, 2)})
    with pytest.raises(tl.DeadlockError, match="fifo 'c' \\(produce\\) waits for a free buffer") as e:
        simulator.simulate(plan, A=np.arange(48, dtype=np.int32))
    assert "DMA of fifo 'c'" in str(e.value)


def test_deadlock_also_in_functional_mode():
    plan = _ring_of_two(True)
    with pytest.raises(tl.DeadlockError, match="wait cycle"):
        simulator.simulate(plan, mode="functional", A=np.zeros(32, np.int32))
