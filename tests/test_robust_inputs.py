"""Plausible user mistakes that used to give silently wrong results now raise, naming what is wrong."""

import numpy as np
import pytest

import tilelang as tl


@tl.kernel
def _add(a: tl.Tile[(64,), tl.i32], b: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
    c[...] = a + b


def _vector_add():
    @tl.design(device="npu1")
    def vector_add(A: tl.Tensor[(8, 32), tl.i32], B: tl.Tensor[(8, 32), tl.i32], C: tl.Tensor[(8, 32), tl.i32]):
        a_in = tl.fifo(tl.Tile[(64,), tl.i32], name="a_in")
        b_in = tl.fifo(tl.Tile[(64,), tl.i32], name="b_in")
        c_out = tl.fifo(tl.Tile[(64,), tl.i32], name="c_out")

        @tl.core(name="w")
        def w():
            for _ in tl.range(4):
                a, b, c = a_in.acquire(), b_in.acquire(), c_out.acquire()
                _add(a, b, c)
                a_in.release()
                b_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(B, b_in)
        tl.dma(c_out, C)

    return vector_add


@pytest.fixture(scope="module")
def vadd_plan():
    return tl.plan(_vector_add(), strategy="greedy")


def test_simulate_names_every_missing_input(vadd_plan):
    a = np.arange(256, dtype=np.int32).reshape(8, 32)
    with pytest.raises(tl.SimulationError, match=r"reads tensor\(s\) \['B'\] but no array was given"):
        tl.simulate(vadd_plan, A=a)
    with pytest.raises(tl.SimulationError, match=r"reads tensor\(s\) \['A', 'B'\]"):
        tl.simulate(vadd_plan, mode="functional")
    # an output may be omitted: it starts as zeros and is returned
    out = tl.simulate(vadd_plan, mode="functional", A=a, B=a).outputs["C"]
    np.testing.assert_array_equal(out, 2 * a)


def test_arrays_in_column_major_order_are_read_and_written_by_their_indices(vadd_plan):
    # an output given in Fortran order used to collect the moves' writes in a copy: all zeros came back
    rng = np.random.default_rng(4)
    a, b = (rng.integers(-9, 9, (8, 32)).astype(np.int32) for _ in range(2))
    res = tl.simulate(vadd_plan, A=np.asfortranarray(a), B=b.T.copy().T, C=np.zeros((32, 8), np.int32).T)
    np.testing.assert_array_equal(res.outputs["C"], a + b)


def test_quick_path_with_an_input_forgotten_raises():
    d = _vector_add()
    a = np.ones((8, 32), np.int32)
    with pytest.raises(tl.DesignError, match=r"vector_add\(\) is missing the input array\(s\) \['B'\].*\['C'\]"):
        d(a)
    with pytest.raises(tl.DesignError, match=r"missing the input array\(s\) \['B'\]"):
        d(A=a, C=np.zeros((8, 32), np.int32))


def test_right_size_wrong_shape_is_not_reshaped(vadd_plan):
    a = np.arange(256, dtype=np.int32).reshape(8, 32)
    with pytest.raises(tl.SimulationError, match=r"tensor 'A' has shape \(8, 32\); the array given has shape \(32, 8\)"):
        tl.simulate(vadd_plan, A=a.T, B=a)
    with pytest.raises(tl.SimulationError, match=r"tensor 'B' has shape \(8, 32\); the array given has shape \(256,\)"):
        tl.simulate(vadd_plan, A=a, B=a.reshape(-1))


def _returning_ref(a, c):
    return a + 1  # the user's mistake: the result is returned, not written into c


def test_extern_reference_that_returns_its_result_raises():
    ext = tl.extern_kernel("inc_vendor", [tl.Tile[(1024,), tl.i32], tl.Tile[(1024,), tl.i32]],
                           reference=_returning_ref, cycles=10)
    a = np.arange(1024, dtype=np.int32)
    with pytest.raises(tl.KernelError, match=r"extern kernel 'inc_vendor': reference returned a ndarray instead of "
                                             r"writing its output in place; assign into the written parameter \(p1\)"):
        ext(a, np.zeros(1024, np.int32))

    @tl.design(device="npu1")
    def uses_ext(A: tl.Tensor[(1024,), tl.i32], C: tl.Tensor[(1024,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(1024,), tl.i32], name="a_in")
        c_out = tl.fifo(tl.Tile[(1024,), tl.i32], name="c_out")

        @tl.core(name="w")
        def w():
            a, c = a_in.acquire(), c_out.acquire()
            ext(a, c)
            a_in.release()
            c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)

    with pytest.raises(tl.KernelError, match=r"extern kernel 'inc_vendor': reference returned"):
        tl.simulate(tl.plan(uses_ext, strategy="greedy"), mode="functional", A=a)


def _join_design(offsets):
    @tl.kernel
    def fill(c: tl.Tile[(256,), tl.i32]):
        c[...] = 1

    @tl.design(device="npu1")
    def gather(C: tl.Tensor[(1024,), tl.i32]):
        parts = [tl.fifo(tl.Tile[(256,), tl.i32], name=f"p{i}") for i in range(3)]
        out = tl.fifo(tl.Tile[(1024,), tl.i32], name="out")
        for i, p in enumerate(parts):
            @tl.core(name=f"w{i}")
            def w(p=p):
                c = p.acquire()
                fill(c)
                p.release()
        tl.join(parts, out, offsets=offsets, name="gather_link")
        tl.dma(out, C)

    return gather


def test_join_that_covers_part_of_the_element_is_a_design_error():
    with pytest.raises(tl.DesignError, match=r"join 'gather_link'.*elements \[768, 1024\) of the 1024-element "
                                             r"buffer of fifo 'out' are covered by no fifo"):
        _join_design(None)
    with pytest.raises(tl.DesignError, match=r"join 'gather_link'.*elements \[256, 512\) of the 1024-element buffer of fifo 'out'"):
        _join_design([0, 512, 768])
    with pytest.raises(tl.DesignError, match=r"'p0' and 'p1' both write elements \[128, 256\) of the buffer of fifo 'out'"):
        _join_design([0, 128, 512])


def test_split_that_sends_part_of_the_element_is_a_design_error():
    @tl.kernel
    def copy(a: tl.Tile[(256,), tl.i32], c: tl.Tile[(256,), tl.i32]):
        c[...] = a

    with pytest.raises(tl.DesignError, match=r"split 'scatter'.*elements \[512, 1024\) of the 1024-element buffer "
                                             r"of fifo 'src' are covered by no fifo, so the split sends only part"):
        @tl.design(device="npu1")
        def scatter(A: tl.Tensor[(1024,), tl.i32], C: tl.Tensor[(512,), tl.i32]):
            src = tl.fifo(tl.Tile[(1024,), tl.i32], name="src")
            parts = [tl.fifo(tl.Tile[(256,), tl.i32], name=f"s{i}") for i in range(2)]
            outs = [tl.fifo(tl.Tile[(256,), tl.i32], name=f"o{i}") for i in range(2)]
            for i in range(2):
                @tl.core(name=f"w{i}")
                def w(i=i):
                    a, c = parts[i].acquire(), outs[i].acquire()
                    copy(a, c)
                    parts[i].release()
                    outs[i].release()
                tl.dma(outs[i], C, pattern=tl.pattern(256 * i, (256,), (1,)))
            tl.dma(A, src)
            tl.split(src, parts, name="scatter")


def test_two_moves_from_different_fifos_writing_one_region_are_rejected():
    @tl.kernel
    def copy(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
        c[...] = a

    def build(second_offset):
        @tl.design(device="npu1")
        def two_writers(A: tl.Tensor[(128,), tl.i32], C: tl.Tensor[(128,), tl.i32]):
            ins = [tl.fifo(tl.Tile[(64,), tl.i32], name=f"i{k}") for k in range(2)]
            outs = [tl.fifo(tl.Tile[(64,), tl.i32], name=f"o{k}") for k in range(2)]
            for k in range(2):
                @tl.core(name=f"w{k}")
                def w(k=k):
                    a, c = ins[k].acquire(), outs[k].acquire()
                    copy(a, c)
                    ins[k].release()
                    outs[k].release()
                tl.dma(A, ins[k], pattern=tl.pattern(64 * k, (64,), (1,)))
            tl.dma(outs[0], C, pattern=tl.pattern(0, (64,), (1,)), name="first")
            tl.dma(outs[1], C, pattern=tl.pattern(second_offset, (64,), (1,)), name="second")

        return two_writers

    with pytest.raises(tl.DesignError, match=r"dma 'first'.*\(from fifo 'o0'\) and dma 'second'.*\(from fifo 'o1'\) "
                                             r"both write tensor 'C' \(element 32 and 31 more\)"):
        build(32)
    d = build(64)  # disjoint halves are fine
    a = np.arange(128, dtype=np.int32)
    np.testing.assert_array_equal(d(a), a)


def test_moves_from_one_fifo_may_rewrite_a_region_in_order():
    @tl.kernel
    def copy(a: tl.Tile[(64,), tl.i32], c: tl.Tile[(64,), tl.i32]):
        c[...] = a

    @tl.design(device="npu1")
    def overwrite(A: tl.Tensor[(128,), tl.i32], C: tl.Tensor[(64,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(64,), tl.i32], name="a_in")
        c_out = tl.fifo(tl.Tile[(64,), tl.i32], name="c_out")

        @tl.core(name="w")
        def w():
            for _ in tl.range(2):
                a, c = a_in.acquire(), c_out.acquire()
                copy(a, c)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)
        tl.dma(c_out, C)  # same fifo: completes after the first, so the second tile wins

    a = np.arange(128, dtype=np.int32)
    np.testing.assert_array_equal(overwrite(a), a[64:])
