"""``tl.join(..., pattern=...)``: each part re-laid out as the memtile sends the joined element on (IRON's
``dims_to_stream`` on a join's output), checked against numpy and against mlir-aie's own lowering."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import tilelang as tl
from tilelang.backends.mlir import vendor
from tilelang.cli.check import reference_outputs
from tilelang.errors import DesignError
from tilelang.ir.design import Link, LinkKind
from tilelang.ir.verify import verify_design

needs_aie_opt = pytest.mark.skipif(bool(vendor.missing_tools_reason()), reason=vendor.missing_tools_reason())


@tl.kernel
def bump(a: tl.Tile[(4, 8), tl.i32], c: tl.Tile[(4, 8), tl.i32]):
    c[...] = a + 1


def joined(pattern=None):  # noqa: ANN001, ANN202 - a pattern in, a Design out
    """Two cores each add one to 4 x 8 blocks of A; their blocks joined into 8 x 8 elements of C."""
    parts = ((4, 8), (4, 8))
    rows = sum(p[0] for p in parts)

    @tl.design(device="npu1")
    def join_layout(A: tl.Tensor[(2 * rows, 8), tl.i32], C: tl.Tensor[(2 * rows, 8), tl.i32]):
        ins = [tl.fifo(tl.Tile[p, tl.i32], name=f"in{i}") for i, p in enumerate(parts)]
        outs = [tl.fifo(tl.Tile[p, tl.i32], name=f"out{i}") for i, p in enumerate(parts)]
        whole = tl.fifo(tl.Tile[(rows, 8), tl.i32], name="whole")
        for i in range(len(parts)):
            @tl.core(name=f"w{i}")
            def w(i=i):
                for _ in tl.range(2):
                    a, c = ins[i].acquire(), outs[i].acquire()
                    bump(a, c)
                    ins[i].release()
                    outs[i].release()
        tl.join(outs, whole, pattern=pattern)
        for j in range(2):
            at = 0
            for i, p in enumerate(parts):
                tl.dma(A, ins[i], pattern=tl.pattern((j * rows + at) * 8, [p[0], 8], [8, 1]))
                at += p[0]
        tl.dma(whole, C)

    return join_layout


TRANSPOSE = tl.pattern(0, [8, 4], [1, 8])  # each 4 x 8 part sent column by column


def expected(a: np.ndarray) -> np.ndarray:
    """numpy: per 8 x 8 element of C, each 4 x 8 block of A plus one, transposed, the blocks one after another."""
    blocks = [np.concatenate([(a[j * 8 + i * 4 : j * 8 + i * 4 + 4] + 1).T.ravel() for i in range(2)]).reshape(8, 8)
              for j in range(2)]
    return np.concatenate(blocks)


def test_each_part_is_re_laid_out_in_simulation_and_in_the_reference_path() -> None:
    d = joined(TRANSPOSE)
    a = np.arange(128, dtype=np.int32).reshape(16, 8)
    for strategy in ("greedy", "ilp"):
        res = tl.simulate(tl.plan(d, strategy=strategy), A=a)
        assert np.array_equal(res.outputs["C"], expected(a))
    assert np.array_equal(reference_outputs(d, {"A": a})["C"], expected(a))
    # without the pattern the blocks stay as they are
    plain = tl.simulate(tl.plan(joined()), A=a).outputs["C"]
    assert np.array_equal(plain, a + 1)


@needs_aie_opt
def test_mlir_aie_lowers_the_layout_to_one_bd_per_part_as_the_physical_level_emits_it() -> None:
    plan = tl.plan(joined(TRANSPOSE), strategy="greedy")
    lowered = vendor.pretty(vendor.compile_text(tl.emit_mlir(plan), level="objectfifo").modules["lower"])
    theirs = sorted(re.findall(r"aie\.dma_bd\(%whole\w*_(\d) : memref<8x8xi32>, (\d+), 32, (\[<size = 8.*?\])\)",
                               lowered))
    assert theirs == [(b, off, "[<size = 8, stride = 1>, <size = 4, stride = 8>, <size = 1, stride = 1>]")
                      for b in "01" for off in ("0", "32")]
    phys = tl.emit_mlir(plan, level="physical")
    vendor.compile_text(phys, level="physical")  # mlir-aie's flow takes it
    ours = sorted(re.findall(r"aie\.dma_bd\(%whole\w*_(\d) : memref<8x8xi32>, (\d+), 32, (\[<size = 8.*?\])\)",
                             vendor.pretty(phys)))
    assert ours == theirs


def test_a_module_with_a_join_layout_reads_back() -> None:
    plan = tl.plan(joined(TRANSPOSE), strategy="greedy")
    back = tl.read_mlir(tl.emit_mlir(plan), kernels={"bump": bump})
    a = np.arange(128, dtype=np.int32).reshape(16, 8)
    res = tl.simulate(tl.plan(back, strategy="greedy"), arg0=a)
    assert np.array_equal(res.outputs["arg1"], expected(a))
    assert res.cycles == tl.simulate(plan, A=a).cycles


def test_bad_join_layouts_are_named() -> None:
    with pytest.raises(DesignError, match="must walk exactly the 32 elements"):
        joined(tl.pattern(0, [8, 8], [1, 8]))
    with pytest.raises(DesignError, match="parts of one size"):
        @tl.design(device="npu1")
        def uneven(A: tl.Tensor[(48,), tl.i32], C: tl.Tensor[(48,), tl.i32]):
            p0, p1 = tl.fifo(tl.Tile[(32,), tl.i32], name="p0"), tl.fifo(tl.Tile[(16,), tl.i32], name="p1")
            whole = tl.fifo(tl.Tile[(48,), tl.i32], name="whole")
            tl.join([p0, p1], whole, pattern=tl.pattern(0, [8, 4], [1, 8]))
            tl.dma(A, p0, pattern=tl.pattern(0, [32], [1]))
            tl.dma(A, p1, pattern=tl.pattern(32, [16], [1]))
            tl.dma(whole, C)
    d = joined()
    split = Link("s", LinkKind.SPLIT, ("whole",), ("out0", "out1"), (0, 32), TRANSPOSE)
    with pytest.raises(DesignError, match="a split takes no pattern"):
        verify_design(dataclasses.replace(d, links=(split,)))
