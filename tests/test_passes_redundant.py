"""tl.passes.eliminate_redundant_transfers: repeated host reads made resident, the same outputs bit for bit.

Every rewritten design is simulated beside the original on the same inputs (outputs equal bit for bit) and
checked against numpy; the DDR bytes removed are compared with a count made from the design's sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_support import quick_and_slow
from test_sim_support import small_int_inputs

import tilelang as tl
from tilelang.errors import DesignError
from tilelang.ir.design import Acquire, Loop, Port, Release
from tilelang.passes.redundant import (
    ddr_bytes,
    eliminate_redundant_transfers,
    find_redundant,
    redundant_bytes,
    rewrite_report,
)


def _outputs(design: tl.Design, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return tl.simulate(tl.plan(design), **inputs).outputs


def _same(before: tl.Design, after: tl.Design, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    ob, oa = _outputs(before, inputs), _outputs(after, inputs)
    assert set(ob) == set(oa)
    for name in ob:
        assert ob[name].dtype == oa[name].dtype and np.array_equal(ob[name], oa[name]), name
    return oa


def repeated_blocks(groups: int, reps: int, copies: int, per: int, n: int, split_moves: bool) -> tl.Design:
    """A core whose loop of ``groups * reps * copies`` iterations takes ``per`` tiles of V each and writes
    ``t * sum(tiles)`` for iteration t; the host sends each block of ``copies * per`` tiles ``reps`` times
    (one move per block with a stride-0 dimension, or ``reps`` identical moves)."""
    trips, block = groups * reps * copies, copies * per * n

    @tl.kernel
    def zero(y: tl.Tile[(n,), tl.i32]):
        y[...] = 0

    @tl.kernel
    def acc(b: tl.Tile[(n,), tl.i32], y: tl.Tile[(n,), tl.i32], t: tl.i32):
        y[...] += b * t

    @tl.design(device="npu1")
    def repeated(V: tl.Tensor[(groups * block,), tl.i32], Y: tl.Tensor[(trips * n,), tl.i32]):  # noqa: N803
        b = tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name="b")
        y = tl.fifo(tl.Tile[(n,), tl.i32], depth=2, name="y")

        @tl.core(name="worker")
        def worker():
            for t in tl.range(trips):
                yy = y.acquire()
                zero(yy)
                for _ in tl.range(per):
                    bb = b.acquire()
                    acc(bb, yy, t)
                    b.release()
                y.release()

        for g in range(groups):  # a DMA repeats (stride 0) only in its outermost dimension
            if split_moves:
                for _ in range(reps):
                    tl.dma(V, b, pattern=tl.pattern(g * block, (block,), (1,)))
            else:
                tl.dma(V, b, pattern=tl.pattern(g * block, (reps, block), (0, 1)))
        tl.dma(y, Y, pattern=tl.tiles((n,)))

    return repeated


def _repeated_answer(v: np.ndarray, groups: int, reps: int, copies: int, per: int, n: int) -> np.ndarray:
    blocks = v.astype(np.int64).reshape(groups, copies * per, n)
    out = []
    for t in range(groups * reps * copies):
        g, j = t // (reps * copies), t % copies
        out.append(t * blocks[g, j * per:(j + 1) * per].sum(axis=0))
    return np.concatenate(out).astype(np.int32)


def _repeated_blocks_are_read_once_with_the_same_outputs(groups, reps, copies, per, split_moves, seed):
    n = 16
    d = repeated_blocks(groups, reps, copies, per, n, split_moves)
    out = eliminate_redundant_transfers(d)
    x = small_int_inputs(d, seed)
    got = _same(d, out, x)
    assert np.array_equal(got["Y"], _repeated_answer(x["V"], groups, reps, copies, per, n))
    removed = (reps - 1) * groups * copies * per * n * 4
    assert redundant_bytes(d) == removed and redundant_bytes(out) == 0
    assert ddr_bytes(d) - ddr_bytes(out) == removed
    [f] = find_redundant(d)
    assert f.rewritten and f.bytes == removed and f.tensor == "V"


test_repeated_blocks_are_read_once_with_the_same_outputs, test_more_repeated_blocks_are_read_once = \
    quick_and_slow(3, 10, given(groups=st.integers(1, 2), reps=st.integers(2, 3), copies=st.integers(1, 3),
                                per=st.integers(1, 3), split_moves=st.booleans(), seed=st.integers(0, 3)),
                   _repeated_blocks_are_read_once_with_the_same_outputs)


def test_the_hoisted_loop_holds_the_block():
    d = repeated_blocks(2, 3, 2, 2, 16, False)
    body = eliminate_redundant_transfers(d).core("worker").body
    # for g in 0..2: (for r in 0..3: 2 unrolled copies of the body, acquiring b's block up to 1, 2, 3, 4); release 4
    assert len(body) == 1 and isinstance(body[0], Loop) and body[0].trip_count == 2
    inner = body[0].body
    assert isinstance(inner[0], Loop) and inner[0].trip_count == 3 and inner[1] == Release("b", Port.CONSUME, 4)
    assert [s.n for s in inner[0].body if isinstance(s, Acquire) and s.fifo == "b"] == [1, 2, 3, 4]
    assert not any(isinstance(s, Release) and s.fifo == "b" for s in inner[0].body)


@pytest.mark.parametrize(("M", "K", "tiling"), [(64, 32, {"m": 32, "k": 32}), (128, 64, {"m": 32, "k": 16})])
def test_matvec_reads_the_vector_once(M, K, tiling):  # noqa: N803
    d = tl.library.matvec(M, K, device="npu1", cores=1, tiling=tiling)
    out = eliminate_redundant_transfers(d)
    blocks = M // tiling["m"]
    assert ddr_bytes(d) - ddr_bytes(out) == (blocks - 1) * K * 2  # B (i16) read once instead of once per block
    x = small_int_inputs(d)
    got = _same(d, out, x)
    assert np.array_equal(got["C"], (x["A"].astype(np.int64) @ x["B"].astype(np.int64)).astype(np.int32))


@pytest.mark.slow
def test_whole_array_gemm_holds_its_repeated_operands():
    d = tl.library.matmul(64, 64, 64, in_dtype=tl.i16, out_dtype=tl.i32, device="npu2", cores=(2, 2),
                          tiling={"m": 16, "k": 16, "n": 16})
    out, found = rewrite_report(d)
    assert {f.tensor for f in found if f.rewritten} == {"A", "B"}
    # A's row blocks were read once per block column (2), B's strips once per block row (2): each i16 operand
    # is now read once, so one copy of each (64 x 64 x 2 B) goes
    assert ddr_bytes(d) - ddr_bytes(out) == (64 * 64 + 64 * 64) * 2
    assert sum(f.bytes for f in found if f.rewritten) == ddr_bytes(d) - ddr_bytes(out)
    x = small_int_inputs(d)
    got = _same(d, out, x)
    assert np.array_equal(got["C"], (x["A"].astype(np.int64) @ x["B"].astype(np.int64)).astype(np.int32))


def test_conv2d_band_overlap_is_reported_not_rewritten():
    d = tl.library.conv2d(10, 18, 8, 16, device="npu1", cores=(1, 2))
    found = find_redundant(d)
    assert eliminate_redundant_transfers(d) is d
    # two bands of 4 output rows each: the second band's input starts 2 rows (k - 1) before the first's ends
    assert redundant_bytes(d) == 2 * 8 * 18 * 2
    [f] = found
    assert not f.rewritten and f.bytes == redundant_bytes(d) and "different element streams" in f.reason


def test_memory_limits_residency():
    """A block of 64 KiB cannot stay in a 64 KiB core: the candidate is reported with the planner's reason."""
    d = repeated_blocks(1, 2, 1, 16, 1024, False)
    assert eliminate_redundant_transfers(d) is d
    [f] = find_redundant(d)
    assert not f.rewritten and "does not plan" in f.reason


def test_no_redundancy_no_change():
    d = tl.library.matvec(64, 32, device="npu1", cores=1, tiling={"m": 64, "k": 32})
    assert find_redundant(d) == [] and eliminate_redundant_transfers(d) is d


def test_not_a_design():
    with pytest.raises(DesignError, match="takes a Design"):
        eliminate_redundant_transfers(None)  # type: ignore[arg-type]


def test_the_rewritten_design_goes_through_mlir_aies_flow():
    from tilelang.backends.mlir import vendor

    pytest.importorskip("mlir.ir")
    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    d = tl.library.matvec(128, 64, device="npu1", cores=1, tiling={"m": 32, "k": 16})
    out = eliminate_redundant_transfers(d)
    assert ddr_bytes(out) < ddr_bytes(d)
    plan = tl.plan(out)
    for level in ("objectfifo", "physical"):
        vendor.compile_text(tl.emit_mlir(plan, level=level), level)
