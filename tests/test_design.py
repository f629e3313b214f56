"""@tl.design: tracing, port inference, patterns, and the errors users see."""

import sys
from pathlib import Path

import pytest

import tilelang as tl
from tilelang.ir.design import Acquire, Call, ConstArg, ElemArg, LinkKind, Loop, LoopVarArg, Port, Release
from tilelang.ir.verify import fifo_ends

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import designs  # noqa: E402


@tl.kernel
def scale(a: tl.Tile[(1024,), tl.i32], c: tl.Tile[(1024,), tl.i32], factor: tl.i32):
    c[...] = a * factor


@tl.kernel
def copy(a: tl.Tile[(1024,), tl.i32], c: tl.Tile[(1024,), tl.i32]):
    c[...] = a


def test_api_example_structure():
    d = designs.vector_scalar_mul()
    assert d.name == "vector_scalar_mul" and d.device.name == "npu1"
    assert list(d.tensors) == ["A", "C"] and d.tensors["A"].shape == (4096,)
    assert [f.name for f in d.fifos] == ["a_in", "c_out"]
    (worker,) = d.cores
    assert worker.name == "worker" and worker.tile is None
    (loop,) = worker.body
    assert isinstance(loop, Loop) and loop.trip_count == 4
    assert loop.body == (
        Acquire("a_in", Port.CONSUME, 1),
        Acquire("c_out", Port.PRODUCE, 1),
        Call("scale", (ElemArg("a_in", 0), ElemArg("c_out", 0), ConstArg(3, tl.i32))),
        Release("a_in", Port.CONSUME, 1),
        Release("c_out", Port.PRODUCE, 1),
    )
    a_move, c_move = d.dmas
    assert a_move.to_device and not c_move.to_device
    assert (a_move.pattern.offset, a_move.pattern.sizes, a_move.pattern.strides) == (0, (4096,), (1,))
    assert d.inputs == ("A",) and d.outputs == ("C",)
    assert d.kernels[0].name == "scale"


def test_gemm_moves_are_in_program_order():
    d = designs.gemm_single_core(128, 128, 128, 32)
    assert len(d.dmas) == 4 * 4 * 2 + 1
    first_a, first_b = d.dmas[0], d.dmas[1]
    assert first_a.fifos == ("a_in",) and first_b.fifos == ("b_in",)
    assert first_a.pattern.sizes == (4, 32, 32) and first_a.pattern.strides == (32, 128, 1)
    assert d.dmas[2].pattern.offset == 0 and d.dmas[3].pattern.offset == 32
    assert d.dmas[-1].pattern.sizes == (4, 4, 32, 32)
    outer = d.cores[0].body[0]
    assert isinstance(outer, Loop) and outer.trip_count == 16
    assert any(isinstance(s, Loop) and s.trip_count == 4 for s in outer.body)


def test_broadcast_design_on_xcvc1902():
    d = designs.broadcast_scale()
    assert d.device.name == "xcvc1902" and len(d.cores) == 16
    ends = fifo_ends(d)
    assert ends["w"].producers == ["host"]
    assert ends["w"].consumers == [f"core:core{i}" for i in range(16)]
    assert ends["x3"].consumers == ["core:core3"] and ends["y3"].producers == ["core:core3"]


def test_python_loops_unroll_and_tl_range_stays_a_loop():
    @tl.design(device="npu1")
    def d(A: tl.Tensor[(8192,), tl.i32], C: tl.Tensor[(8192,), tl.i32]):
        a = tl.fifo(tl.Tile[(1024,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(1024,), tl.i32], name="c")

        @tl.core
        def w():
            for _ in range(2):
                for _i in tl.range(0, 8, 2):
                    x, y = a.acquire(), c.acquire()
                    copy(x, y)
                    a.release()
                    c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    body = d.cores[0].body
    assert len(body) == 2 and all(isinstance(s, Loop) and (s.start, s.stop, s.step) == (0, 8, 2) for s in body)
    assert d.cores[0].name == "w"


def test_loop_variable_as_kernel_argument():
    @tl.design(device="npu1")
    def d(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4096,), tl.i32]):
        a = tl.fifo(tl.Tile[(1024,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(1024,), tl.i32], name="c")

        @tl.core
        def w():
            for i in tl.range(4):
                x, y = a.acquire(), c.acquire()
                scale(x, y, i)
                a.release()
                c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    call = d.cores[0].body[0].body[2]
    assert call.args[2] == LoopVarArg(0, tl.i32)


def test_split_join_and_forward_through_a_memtile():
    @tl.kernel
    def half(a: tl.Tile[(512,), tl.i32], c: tl.Tile[(512,), tl.i32]):
        c[...] = a + 1

    @tl.design(device="npu1")
    def d(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4096,), tl.i32]):
        big_in = tl.fifo(tl.Tile[(1024,), tl.i32], name="big_in")
        mid = tl.fifo(tl.Tile[(1024,), tl.i32], name="mid")
        parts = [tl.fifo(tl.Tile[(512,), tl.i32], name=f"p{i}") for i in range(2)]
        outs = [tl.fifo(tl.Tile[(512,), tl.i32], name=f"o{i}") for i in range(2)]
        big_out = tl.fifo(tl.Tile[(1024,), tl.i32], name="big_out")
        tl.dma(big_in, mid)
        tl.split(mid, parts)
        for i in range(2):

            @tl.core(name=f"w{i}")
            def w(i=i):
                for _ in tl.range(4):
                    x, y = parts[i].acquire(), outs[i].acquire()
                    half(x, y)
                    parts[i].release()
                    outs[i].release()

        tl.join(outs, big_out, offsets=[0, 512])
        tl.dma(A, big_in)
        tl.dma(big_out, C)

    kinds = [ln.kind for ln in d.links]
    assert kinds == [LinkKind.FORWARD, LinkKind.SPLIT, LinkKind.JOIN]
    assert d.links[1].offsets == (0, 512)
    ends = fifo_ends(d)
    assert ends["mid"].producers == ["link:big_in_to_mid"] and ends["mid"].consumers == ["link:split_mid"]
    assert ends["o1"].consumers == ["link:join_big_out"]


def test_tiles_pattern_walks_tiles_in_order():
    p = tl.tiles((2, 3)).resolve((4, 6))
    import numpy as np

    grid = np.arange(24).reshape(4, 6)
    want = [grid[i : i + 2, j : j + 3].reshape(-1) for i in (0, 2) for j in (0, 3)]
    np.testing.assert_array_equal(p.indices(), np.concatenate(want))
    col = tl.tiles((2, 3), order="col").resolve((4, 6))
    want = [grid[i : i + 2, j : j + 3].reshape(-1) for j in (0, 3) for i in (0, 2)]
    np.testing.assert_array_equal(col.indices(), np.concatenate(want))
    assert tl.tiles((1024,)).resolve((4096,)).sizes == (4096,)


# -- errors ---------------------------------------------------------------------------


def _one_core(device="npu1", pattern=None, tensor_shape=(4096,), elem=(1024,), tdt=tl.i32, depth=2, body=None):
    @tl.design(device=device)
    def d(A: tl.Tensor[tensor_shape, tdt], C: tl.Tensor[(4096,), tl.i32]):
        a = tl.fifo(tl.Tile[elem, tl.i32], name="a", depth=depth)
        c = tl.fifo(tl.Tile[(1024,), tl.i32], name="c")

        @tl.core
        def w():
            if body:
                body(a, c)
            else:
                x, y = a.acquire(), c.acquire()
                copy(x, y)
                a.release()
                c.release()

        tl.dma(A, a, pattern=pattern)
        tl.dma(c, C)

    return d


def test_unknown_device_lists_known_ones():
    with pytest.raises(tl.DesignError, match=r"npu1.*xcvc1902"):
        _one_core(device="npu9")


def test_pattern_outside_tensor():
    with pytest.raises(tl.DesignError, match=r"dma 'dma0'.*reads element 5119 of tensor 'A', which has 4096"):
        _one_core(pattern=tl.pattern(1024, (4096,), (1,)))


def test_pattern_not_a_multiple_of_the_element():
    with pytest.raises(tl.DesignError, match=r"moves 1000 elements, not a multiple of fifo 'a'"):
        _one_core(pattern=tl.pattern(0, (1000,), (1,)))


def test_tensor_fifo_dtype_mismatch():
    with pytest.raises(tl.DesignError, match=r"tensor 'A' holds f32 but fifo 'a' holds i32"):
        _one_core(tdt=tl.f32)


def test_too_many_pattern_dimensions_for_the_shim():
    with pytest.raises(tl.DesignError, match=r"pattern has 5 dimensions.*supports 4"):
        _one_core(pattern=tl.pattern(0, (2, 2, 2, 2, 256), (1, 2, 4, 8, 16)).repeat(1), tensor_shape=(8192,))
    with pytest.raises(tl.DesignError, match=r"pattern has 4 dimensions.*xcvc1902 supports 1"):
        _one_core(device="xcvc1902", pattern=tl.tiles((32, 32)).resolve((64, 64)), tensor_shape=(64, 64))


def test_acquire_more_than_depth():
    def body(a, c):
        x = a.acquire(3)
        y = c.acquire()
        copy(x[0], y)

    with pytest.raises(tl.DesignError, match=r"acquires 3 elements of fifo 'a', whose depth is 2"):
        _one_core(body=body)


def test_release_more_than_held():
    def body(a, c):
        x, y = a.acquire(), c.acquire()
        copy(x, y)
        a.release(2)

    with pytest.raises(tl.DesignError, match=r"releases 2 elements of fifo 'a' while holding 1"):
        _one_core(body=body)


def test_element_type_mismatch_in_call():
    def body(a, c):
        x, y = a.acquire(), c.acquire()
        copy(x, y)

    with pytest.raises(tl.DesignError, match=r"parameter 'a' expects tile<1024xi32>, fifo 'a' holds tile<512xi32>"):
        _one_core(body=body, elem=(512,))


def test_fifo_without_consumer_or_producer():
    @tl.kernel
    def fill(c: tl.Tile[(16,), tl.i32]):
        c[...] = 1

    with pytest.raises(tl.DesignError, match=r"fifo 'lonely' .*has no consumer"):

        @tl.design(device="npu1")
        def d1(C: tl.Tensor[(16,), tl.i32]):
            f = tl.fifo(tl.Tile[(16,), tl.i32], name="lonely")

            @tl.core
            def w():
                fill(f.acquire())
                f.release()

    with pytest.raises(tl.DesignError, match=r"fifo 'orphan' .*has no producer"):

        @tl.design(device="npu1")
        def d2(C: tl.Tensor[(16,), tl.i32]):
            f = tl.fifo(tl.Tile[(16,), tl.i32], name="orphan")
            tl.dma(f, C)


def test_two_producers():
    with pytest.raises(tl.DesignError, match=r"fifo 'a' .*has 2 producers \(core:w, host\)"):

        @tl.kernel
        def fill(c: tl.Tile[(1024,), tl.i32]):
            c[...] = 7

        def body(a, c):
            fill(a.acquire())
            a.release()

        _one_core(body=body)


def test_core_pinned_to_a_shim_tile():
    with pytest.raises(tl.DesignError, match=r"core 'w' .*is pinned to \(0, 0\), a shim tile of npu1"):

        @tl.design(device="npu1")
        def d(A: tl.Tensor[(1024,), tl.i32]):
            @tl.core(tile=(0, 0))
            def w():
                pass


def test_frontend_calls_outside_their_scope():
    with pytest.raises(tl.DesignError, match=r"only valid inside a @tl.design"):
        tl.fifo(tl.Tile[(16,), tl.i32])
    with pytest.raises(tl.DesignError, match=r"tl.dma belongs in the design body"):

        @tl.design(device="npu1")
        def d(A: tl.Tensor[(1024,), tl.i32]):
            f = tl.fifo(tl.Tile[(1024,), tl.i32])

            @tl.core
            def w():
                tl.dma(A, f)


def test_links_need_a_memtile():
    with pytest.raises(tl.DesignError, match=r"xcvc1902 has no memtiles"):

        @tl.design(device="xcvc1902")
        def d(A: tl.Tensor[(1024,), tl.i32], C: tl.Tensor[(1024,), tl.i32]):
            f = tl.fifo(tl.Tile[(1024,), tl.i32])
            g = tl.fifo(tl.Tile[(1024,), tl.i32])
            tl.dma(A, f)
            tl.dma(f, g)
            tl.dma(g, C)


def test_ambiguous_port_asks_for_it():
    with pytest.raises(tl.DesignError, match=r"cannot tell whether it produces or consumes fifo 'f'.*port="):

        @tl.design(device="npu1")
        def d(A: tl.Tensor[(1024,), tl.i32]):
            f = tl.fifo(tl.Tile[(1024,), tl.i32], name="f")

            @tl.core
            def w():
                f.acquire()
                f.release()


def test_non_affine_arithmetic_on_a_loop_variable_is_rejected():
    # +, - and * by ints are kernel arguments (tests/test_loop_affine.py); // is not affine
    with pytest.raises(tl.DesignError, match=r"combine with \+, - and \* by ints into kernel arguments"):

        @tl.design(device="npu1")
        def d(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4096,), tl.i32]):
            a = tl.fifo(tl.Tile[(1024,), tl.i32], name="a")
            c = tl.fifo(tl.Tile[(1024,), tl.i32], name="c")

            @tl.core
            def w():
                for i in tl.range(4):
                    x, y = a.acquire(), c.acquire()
                    scale(x, y, i // 2)

            tl.dma(A, a)
            tl.dma(c, C)


def test_fifo_inside_a_core_is_rejected():
    with pytest.raises(tl.DesignError, match=r"declare fifos in the design body"):

        @tl.design(device="npu1")
        def d(A: tl.Tensor[(1024,), tl.i32]):
            @tl.core
            def w():
                tl.fifo(tl.Tile[(16,), tl.i32])
