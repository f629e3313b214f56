"""PL I/O (PLIO) host moves on AIE1: frontend, IR text, verifier, device data, and the layers that refuse them.

The rates are checked against the published figures restated here apart from tilelang.devices: UG1483
"Specifying PLIO Frequency" (AIE 32 bit a cycle matched by PL 64 bit at 500 MHz or 128 bit at 250 MHz),
UG1079 "AI Engine to PL Interface Performance" (8 PL -> AIE and 6 AIE -> PL 64-bit channels per PL column).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang as tl

N = 256


@tl.kernel
def triple(a: tl.Tile[(N,), tl.i32], c: tl.Tile[(N,), tl.i32]):
    c[...] = a * 3


def build(device: str = "xcvc1902", plio_in: object = True, plio_out: object = 64, reps: int = 4):
    @tl.design(device=device)
    def plio_triple(X: tl.Tensor[(reps * N,), tl.i32], C: tl.Tensor[(reps * N,), tl.i32]):
        a = tl.fifo(tl.Tile[(N,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(N,), tl.i32], name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(reps):
                x, y = a.acquire(), c.acquire()
                triple(x, y)
                a.release()
                c.release()

        tl.dma(X, a, plio=plio_in)
        tl.dma(c, C, plio=plio_out)

    return plio_triple


def test_text_round_trip_and_width():
    d = build(plio_in=True, plio_out=128)
    text = tl.ir.print(d)
    assert "dma @dma0(%X -> @a) {pattern = pattern<offset = 0, sizes = [1024], strides = [1], repeat = 1>, plio = 64}" in text
    assert "plio = 128}" in text
    assert tl.ir.print(tl.ir.parse(text)) == text
    plain = tl.ir.print(build(plio_in=False, plio_out=False))
    assert "plio =" not in plain
    assert tl.ir.print(tl.ir.parse(plain)) == plain


def test_text_errors():
    text = tl.ir.print(build())
    with pytest.raises(tl.ParseError, match="plio is a PLIO width"):
        tl.ir.parse(text.replace("plio = 64", "plio = 0", 1))
    with pytest.raises(tl.DesignError, match="PLIO widths are \\[32, 64, 128\\] bits, not 96"):
        tl.ir.parse(text.replace("plio = 64", "plio = 96", 1))
    with pytest.raises(tl.DesignError, match="has no PL shims"):
        tl.ir.parse(text.replace('"xcvc1902"', '"npu1"'))
    mixed = text.replace(", plio = 64}", "}", 1)
    assert tl.ir.print(tl.ir.parse(mixed)).count("plio =") == 1  # one move by PLIO, one by the shim DMA: legal


def test_frontend_errors():
    with pytest.raises(tl.DesignError, match="npu1 has no PL shims with PLIO streams"):
        build("npu1")
    with pytest.raises(tl.DesignError, match="not 48"):
        build(plio_out=48)
    with pytest.raises(tl.DesignError, match="plio is True or a width in bits"):
        build(plio_in="yes")


def test_one_fifo_one_way():
    def two_ways(X: tl.Tensor[(2 * N,), tl.i32], C: tl.Tensor[(N,), tl.i32]):
        a = tl.fifo(tl.Tile[(N,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(N,), tl.i32], name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(2):
                x, y = a.acquire(), c.acquire()
                triple(x, y)
                a.release()
                c.release()

        tl.dma(X, a, pattern=tl.pattern(offset=0, sizes=[N], strides=[1]), plio=True)
        tl.dma(X, a, pattern=tl.pattern(offset=N, sizes=[N], strides=[1]))
        tl.dma(c, C)

    with pytest.raises(tl.DesignError, match="fifo 'a' is moved by PLIO 64 bits in dma 'dma0' and by the shim DMA here"):
        tl.design(device="xcvc1902")(two_ways)


def test_device_data():
    vc = tl.device("xcvc1902")
    # PL shims are the shim columns without a NoC connection (mlir-aie VC1902TargetModel).
    assert vc.is_pl_shim((0, 0)) and not vc.is_pl_shim((2, 0)) and not vc.is_pl_shim((0, 1))
    assert sum(vc.is_pl_shim(t) for t in vc.tiles("shim")) == 50 - 16
    assert vc.plio.channels_in == 8 and vc.plio.channels_out == 6
    # UG1483: 64 bits at 500 MHz = 4 GB/s; at the VC1902's 1.25 GHz that is 3.2 bytes per AIE cycle.
    assert vc.plio_bytes_per_cycle(64) == pytest.approx(64 / 8 * 500e6 / 1.25e9)
    assert vc.plio_bytes_per_cycle(32) == pytest.approx(1.6)
    # 128 bits at 500 MHz (8 GB/s) exceed the 32-bit stream at 1.25 GHz (5 GB/s) it is sequentialised into.
    assert vc.plio_bytes_per_cycle(128) == pytest.approx(4.0)
    with pytest.raises(tl.DesignError, match="has no PL shims"):
        tl.device("npu1").plio_bytes_per_cycle(64)


def test_later_layers_refuse_plio():
    d = build()
    x = np.arange(4 * N, dtype=np.int32)
    with pytest.raises(tl.PlanError, match="dma 'dma0'.*fifo 'a'.*64-bit PLIO.*not supported by the planner"):
        tl.plan(d)
    with pytest.raises(tl.PlanError, match="not supported by the planner"):
        tl.simulate(d, x)


def test_plan_text_with_plio_refused():
    """A plan whose design gains a PLIO move (edited text) is refused by the plan verifier."""
    plain = build(plio_in=False, plio_out=False)
    p = tl.plan(plain, strategy="greedy")
    text = tl.ir.print(p)
    edited = text.replace("repeat = 1>}", "repeat = 1>, plio = 64}", 1)
    assert edited != text
    with pytest.raises(tl.ParseError, match="plan @plio_triple: dma 'dma0'.*not supported by the planner"):
        tl.ir.parse(edited)
