"""A kernel is priced loop nest by loop nest, the nests its lowering emits, one after another.

The nest count is checked against the MLIR the kernel lowers to (``linalg`` ops over tiles, counted in
the emitted text), and the price of a kernel of several statements against the prices of its statements
written as kernels of their own.
"""

from __future__ import annotations

import re

import pytest

import tilelang as tl
from tilelang.frontend.kernel import exp
from tilelang.frontend.kernel import max as tl_max
from tilelang.frontend.kernel import sum as tl_sum
from tilelang.ir.kernel import Kernel
from tilelang.ir.kernel_cost import CALL_OVERHEAD, kernel_cycles, kernel_slots, loop_nests
from tilelang.library.softmax import softmax_kernel

T = tl.Tile


def emitted_nests(kernel: Kernel) -> int:
    """Loop nests over tiles in the lowered kernel: every linalg op but the fills (a fill of a scalar
    accumulator is no loop; the zeroing fill before a product is priced with the matmul)."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import kernel_mlir

    ops = re.findall(r"^\s*(?:%\S+ = )?linalg\.(\w+)", str(kernel_mlir(kernel)), re.M)
    return sum(1 for op in ops if op not in ("fill", "yield"))


def _two_statements() -> Kernel:
    @tl.kernel
    def two(a: T[(256,), tl.i32], c: T[(256,), tl.i32], d: T[(256,), tl.i32]):
        c[...] = a + 1
        d[...] = a * 2

    return two


def _scale_by_sum() -> Kernel:
    @tl.kernel
    def scale(a: T[(256,), tl.f32], c: T[(256,), tl.f32]):
        c[...] = a * tl_sum(a)

    return scale


def _row_sums() -> Kernel:
    @tl.kernel
    def rows(a: T[(16, 64), tl.i32], c: T[(16,), tl.i32]):
        c[...] = tl_sum(a, axis=1)

    return rows


def _chain() -> Kernel:
    @tl.kernel
    def chain(a: T[(512,), tl.bf16], b: T[(512,), tl.bf16], c: T[(512,), tl.bf16]):
        c[...] = exp(a - b) * a + b

    return chain


def _centre() -> Kernel:
    @tl.kernel
    def centre(a: T[(4, 128), tl.f32], c: T[(4, 128), tl.f32]):
        for i in range(4):
            c[i] = a[i] - tl_max(a[i])

    return centre


def _accumulate() -> Kernel:
    @tl.kernel
    def acc(a: T[(32, 32), tl.i16], b: T[(32, 32), tl.i16], c: T[(32, 32), tl.i32]):
        c[...] += a @ b

    return acc


@pytest.mark.parametrize(("make", "nests"), [
    (lambda: softmax_kernel(1, 1024, tl.bf16), 5),
    (lambda: softmax_kernel(2, 256, tl.f32), 10),
    (_two_statements, 2),
    (_scale_by_sum, 2),
    (_row_sums, 1),
    (_chain, 1),
    (_centre, 8),
    (_accumulate, 1),
], ids=["softmax-1row", "softmax-2rows", "two-statements", "scale-by-sum", "row-sums", "chain", "centre", "mac"])
def test_the_nests_priced_are_the_nests_the_lowering_emits(make, nests):
    k = make()
    assert len(loop_nests(k)) == nests
    assert emitted_nests(k) == nests
    slots = kernel_slots(k, tl.device("npu1"))
    assert len(slots.loops) == (nests if nests > 1 else 0)


def test_a_matmul_epilogue_is_priced_fused_where_the_lowering_uses_a_temporary():
    """The one deliberate difference: ``c = relu(a @ b)`` is one nest in the price (the epilogue runs on
    each register block, as mlir-aie's mm.cc does) and two in the lowering (the product, then the relu)."""

    @tl.kernel
    def relu_mm(a: T[(32, 32), tl.i16], b: T[(32, 32), tl.i16], c: T[(32, 32), tl.i32]):
        c[...] = tl.relu(a @ b)

    assert len(loop_nests(relu_mm)) == 1
    assert emitted_nests(relu_mm) == 2


@pytest.mark.parametrize("device", ["npu1", "npu2", "xcvc1902", "xcve2802"])
def test_statements_cost_what_they_cost_alone_one_after_another(device):
    """Two independent statements in one kernel cost the two one-statement kernels less one call overhead:
    their loops do not overlap. Each loads ``a`` itself (the lowering reads it in each loop)."""
    dev = tl.device(device)

    @tl.kernel
    def first(a: T[(1024,), tl.i16], c: T[(1024,), tl.i16]):
        c[...] = a + 1

    @tl.kernel
    def second(a: T[(1024,), tl.i16], d: T[(1024,), tl.i16]):
        d[...] = tl.maximum(a, 3)

    @tl.kernel
    def both(a: T[(1024,), tl.i16], c: T[(1024,), tl.i16], d: T[(1024,), tl.i16]):
        c[...] = a + 1
        d[...] = tl.maximum(a, 3)

    alone = kernel_cycles(first, dev) + kernel_cycles(second, dev) - CALL_OVERHEAD
    assert abs(kernel_cycles(both, dev) - alone) <= 1  # each nest's cycles are rounded up once, in the sum
    assert kernel_slots(both, dev).access["a"] == 2 * 1024 * 2


def test_a_reduction_is_a_barrier_its_users_wait_for():
    """``x - max(x)``: no subtraction can start before the last element's max; the price is the max's loop
    and then the subtraction's, never the slots of both shared as one loop."""
    k = _centre()
    dev = tl.device("npu1")
    s = kernel_slots(k, dev)
    assert len(s.loops) == 8
    assert s.busiest() == pytest.approx(sum(s.loops))
    assert s.busiest() > max(s.load, s.store, s.vector, s.mac)


@pytest.mark.parametrize("device", ["npu1", "npu2"])
def test_each_nest_pays_its_iterations_latency_once(device):
    """A loop of ``trips`` iterations ends ``(trips - 1) x II + L`` cycles after it starts, L the latency of one
    iteration's chain (llvm-aie's itineraries: a load's result in cycle 7, a float add's in 6, a store's issue 1):
    a bf16 add over twice the values costs twice the slots and the same fill."""
    dev = tl.device(device)

    def add(n):
        @tl.kernel
        def k(a: T[(n,), tl.bf16], b: T[(n,), tl.bf16], c: T[(n,), tl.bf16]):
            c[...] = a + b

        return k

    def copy(n):
        @tl.kernel
        def k(a: T[(n,), tl.i16], c: T[(n,), tl.i16]):
            c[...] = a

        return k

    fill_add = kernel_slots(add(1024), dev).fixed
    fill_copy = kernel_slots(copy(1024), dev).fixed
    assert fill_add == 7 + 6 + 1 - 1
    assert fill_copy == 7 + 1 - 1
    assert kernel_slots(add(2048), dev).fixed == fill_add
    small, large = kernel_cycles(add(1024), dev), kernel_cycles(add(2048), dev)
    assert large - small == small - CALL_OVERHEAD - fill_add  # the slots double, the fill does not
