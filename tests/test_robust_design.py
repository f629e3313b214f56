"""Errors that say what is wrong: pinned cores, library requests that cannot work, moves of part of a DMA word."""

import re

import pytest

import tilelang as tl


@tl.kernel
def _copy(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
    c[...] = a


def _pinned(tile):
    @tl.design(device="npu1")
    def pinned(A: tl.Tensor[(64,), tl.i32], C: tl.Tensor[(64,), tl.i32]):
        a = tl.fifo(tl.Tile[(64,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(64,), tl.i32], name="c")

        @tl.core(name="w", tile=tile)
        def w():
            x, y = a.acquire(), c.acquire()
            _copy(x, y)
            a.release()
            c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    return pinned


@pytest.mark.parametrize("tile, kind", [((0, 0), "shim"), ((2, 1), "mem")])
def test_a_core_pinned_on_a_shim_or_memtile_names_the_core_and_the_kind(tile, kind):
    with pytest.raises(tl.DesignError, match=rf"core 'w' \(at .*test_robust_design\.py:\d+\) is pinned to "
                                             rf"{re.escape(str(tile))}, a {kind} tile of npu1, which runs no core "
                                             rf"program; pin it to a compute tile \(rows 2-5\)"):
        _pinned(tile)


def test_a_parsed_design_pinning_a_core_on_a_shim_fails_verification():
    text = tl.ir.print(_pinned((0, 2))).replace("{tile = [0, 2]}", "{tile = [0, 0]}")
    with pytest.raises(tl.DesignError, match=r"core 'w' is pinned to \(0, 0\), a shim tile of npu1"):
        tl.ir.parse(text)
    with pytest.raises(tl.DesignError, match=r"core 'w' is pinned off the array: tile \(7, 2\) is off the npu1 array"):
        tl.ir.parse(text.replace("{tile = [0, 0]}", "{tile = [7, 2]}"))


def test_matmul_sizes_no_tiling_fits_are_a_design_error_as_documented():
    # docs/library.md: "A request that cannot work raises tl.DesignError saying why"
    with pytest.raises(tl.DesignError, match=r"matmul 100x100x100 on a 4x4 core grid: no tiling fits \(index 'm' of "
                                             r"extent 100 cannot be split over 4 cores in whole tiles\)"):
        tl.library.matmul(100, 100, 100)


def test_a_host_move_of_part_of_a_dma_word_is_rejected_before_planning():
    @tl.kernel
    def cp3(a: tl.Tile[(3,), tl.i8], c: tl.Tile[(3,), tl.i8]):
        c[...] = a

    with pytest.raises(tl.DesignError, match=r"dma 'in3'.*fifo 'a' holds tile<3xi8> = 3 B per element, not a whole "
                                             r"number of the DMA's 4-byte words; .*multiple of 4 elements"):
        @tl.design(device="npu1")
        def odd(A: tl.Tensor[(12,), tl.i8], C: tl.Tensor[(12,), tl.i8]):
            a = tl.fifo(tl.Tile[(3,), tl.i8], name="a")
            c = tl.fifo(tl.Tile[(3,), tl.i8], name="c")

            @tl.core(name="w")
            def w():
                for _ in tl.range(4):
                    x, y = a.acquire(), c.acquire()
                    cp3(x, y)
                    a.release()
                    c.release()

            tl.dma(A, a, name="in3")
            tl.dma(c, C)


def test_a_pattern_starting_mid_word_is_rejected():
    @tl.kernel
    def cp(a: tl.Tile[(8,), tl.i16], c: tl.Tile[(8,), tl.i16]):
        c[...] = a

    with pytest.raises(tl.DesignError, match=r"the pattern starts at element 1 of tensor 'A' \(byte 2\), not on a "
                                             r"4-byte DMA word"):
        @tl.design(device="npu1")
        def shifted(A: tl.Tensor[(16,), tl.i16], C: tl.Tensor[(8,), tl.i16]):
            a = tl.fifo(tl.Tile[(8,), tl.i16], name="a")
            c = tl.fifo(tl.Tile[(8,), tl.i16], name="c")

            @tl.core(name="w")
            def w():
                x, y = a.acquire(), c.acquire()
                cp(x, y)
                a.release()
                c.release()

            tl.dma(A, a, pattern=tl.pattern(1, (8,), (1,)))
            tl.dma(c, C)


def test_reduction_max_of_i16_is_rejected_up_front_with_the_reason():
    # it used to plan and simulate, then fail at emit: C is one 2-byte element, DMAs move 4-byte words
    with pytest.raises(tl.DesignError, match=r"reduction: the max result C is one i16 element \(2 B\), but DMAs move "
                                             r"whole 4-byte words \(npu1\).*pass dtype=tl.i32"):
        tl.library.reduction("max", 4096, dtype=tl.i16)
    d = tl.library.reduction("max", 4096, dtype=tl.i32)  # the suggested form plans and emits
    assert "aie.objectfifo" in tl.emit_mlir(tl.plan(d, strategy="greedy"))
