"""Buffers that fit no single bank: spilled across a bank boundary into a gap of their own tile.

AIE1 data memory is 4 banks of 8 KiB (tilelang.devices); five buffers of 5 KiB and a 1 KiB stack need 26 KiB
of its 32 KiB, but only one such buffer fits a bank. The fifth must span two banks: stacking odd banks from
the top leaves the top of bank 2i and the bottom of bank 2i + 1 free as one gap.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang as tl
from tilelang.devices.abi import STACK_BYTES

E = 2560  # i16 elements: 5120 B


@tl.kernel
def add(a: tl.Tile[(E,), tl.i16], b: tl.Tile[(E,), tl.i16], c: tl.Tile[(E,), tl.i16]):
    c[...] = a + b


def _five_buffers():
    @tl.design(device="xcvc1902")
    def five(A: tl.Tensor[(4 * E,), tl.i16], B: tl.Tensor[(4 * E,), tl.i16], C: tl.Tensor[(4 * E,), tl.i16]):
        a = tl.fifo(tl.Tile[(E,), tl.i16], depth=2, name="a")
        b = tl.fifo(tl.Tile[(E,), tl.i16], depth=2, name="b")
        c = tl.fifo(tl.Tile[(E,), tl.i16], depth=1, name="c")

        @tl.core(name="w", tile=(3, 2))
        def w():
            for _ in tl.range(4):
                x, y, z = a.acquire(), b.acquire(), c.acquire()
                add(x, y, z)
                a.release()
                b.release()
                c.release()

        tl.dma(A, a)
        tl.dma(B, b)
        tl.dma(c, C)

    return five


def _assert_apart(plan) -> None:
    """No two buffers of one tile overlap, none meets the core stack, all lie in the tile's memory."""
    dev = plan.device
    by_tile: dict = {}
    for name, b in plan.buffers.items():
        by_tile.setdefault(b.tile, []).append((b.offset, b.offset + b.size, name))
    for tile, spans in by_tile.items():
        spans.sort()
        stack = STACK_BYTES if tile in set(plan.placement.values()) else 0
        assert spans[0][0] >= stack, (tile, spans[0])
        assert spans[-1][1] <= dev.memory_bytes(tile), (tile, spans[-1])
        for (_, hi, n1), (lo, _, n2) in zip(spans, spans[1:], strict=False):
            assert hi <= lo, f"{n1} and {n2} overlap on {tile}"


def test_a_buffer_spans_two_banks_when_no_bank_holds_it():
    p = tl.plan(_five_buffers(), strategy="greedy")
    _assert_apart(p)
    bank = 8192
    spanning = [b for b in p.buffers.values() if b.offset // bank != (b.offset + b.size - 1) // bank]
    assert len(spanning) == 1
    x = np.arange(4 * E, dtype=np.int16)
    y = (np.arange(4 * E) % 7).astype(np.int16)
    np.testing.assert_array_equal(tl.simulate(p, A=x, B=y).outputs["C"], x + y)


def test_spills_see_only_their_own_tiles_buffers():
    """The 4 x 8 whole-array i16 GEMM at 640^3 spills on several tiles; a gap is free on its own tile
    whatever other tiles hold at those offsets."""
    d = tl.library.matmul(640, 640, 640, in_dtype=tl.i16, out_dtype=tl.i32, device="xcvc1902", cores=(4, 8),
                          layout="streams")
    _assert_apart(tl.plan(d, strategy="greedy"))


def test_mlir_aie_accepts_a_spanning_buffer_at_both_levels():
    """Physical level: the planned addresses, kept by basic-sequential. Objectfifo level: mlir-aie places the
    buffers itself with its default (bank-aware, then basic-sequential on the tile where no bank holds one)."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    p = tl.plan(_five_buffers(), strategy="greedy")
    for level in ("physical", "objectfifo"):
        res = vendor.compile_text(tl.emit_mlir(p, level=level), level)
        assert res.modules["lower"].count("aie.buffer(%tile_3_2)") == 5, level  # every buffer placed
