"""Cascade streams: frontend, IR text, verifier, placement rule per architecture, simulation, MLIR.

The placement rule is checked against the rule as mlir-aie and AMD write it, restated here apart from
tilelang.devices.cascade_rules: AIE-ML/AIE2 (UG1603 "directed from west to east or north to south";
mlir-aie AIEDialect.cpp ConfigureCascadeOp::verify: input North or West, output South or East) and AIE1
(mlir-aie mlir_tutorials/tutorial-8: odd rows west to east, even rows east to west, a row's last tile
into the tile north of it).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import tilelang as tl
from tilelang.devices.cascade_rules import cascade_ok

N = 64  # 64 x i32 = 256 B: whole 48-byte (AIE1) and 64-byte (AIE-ML) cascade words? 256 % 48 != 0
M = 96  # 96 x i32 = 384 B = 8 x 48 B = 6 x 64 B: whole words on every architecture


@tl.kernel
def first(a: tl.Tile[(M,), tl.i32], s: tl.Tile[(M,), tl.i32]):
    s[...] = a * 2


@tl.kernel
def middle(a: tl.Tile[(M,), tl.i32], s: tl.Tile[(M,), tl.i32], t: tl.Tile[(M,), tl.i32]):
    t[...] = s + a * 3


@tl.kernel
def last(a: tl.Tile[(M,), tl.i32], s: tl.Tile[(M,), tl.i32], c: tl.Tile[(M,), tl.i32]):
    c[...] = s - a


def chain(device: str, stages: int = 3, reps: int = 4, pins: dict | None = None):
    """A chain of ``stages`` cores: each adds its input times a factor to the partial result it takes."""
    pins = pins or {}

    @tl.design(device=device)
    def cascade_chain(X: tl.Tensor[(stages * reps * M,), tl.i32], C: tl.Tensor[(reps * M,), tl.i32]):
        ins = [tl.fifo(tl.Tile[(M,), tl.i32], name=f"x{i}") for i in range(stages)]
        out = tl.fifo(tl.Tile[(M,), tl.i32], name="out")
        cas = [tl.cascade(tl.Tile[(M,), tl.i32], name=f"cas{i}") for i in range(stages - 1)]
        for i in range(stages):
            def body(i=i):
                for _ in tl.range(reps):
                    x = ins[i].acquire()
                    if i == 0:
                        first(x, cas[0])
                    elif i < stages - 1:
                        middle(x, cas[i - 1], cas[i])
                    else:
                        y = out.acquire()
                        last(x, cas[i - 1], y)
                        out.release()
                    ins[i].release()
            tl.core(body, name=f"k{i}", tile=pins.get(i))
        for i in range(stages):
            tl.dma(X, ins[i], pattern=tl.pattern(i * reps * M, [reps * M], [1]))
        tl.dma(out, C)

    return cascade_chain


def reference(x: np.ndarray, stages: int, reps: int) -> np.ndarray:
    x = x.reshape(stages, reps, M).astype(np.int64)
    acc = 2 * x[0]
    for i in range(1, stages - 1):
        acc = acc + 3 * x[i]
    return (acc - x[stages - 1]).astype(np.int32).reshape(-1)


# -- the rule as the sources write it (not tilelang's table) -------------------------------------


def rule_aie2(src, dst) -> bool:
    (c, r), (c2, r2) = src, dst
    return (r2 == r and c2 == c + 1) or (c2 == c and r2 == r - 1)


def rule_aie1(src, dst, cols: int) -> bool:
    (c, r), (c2, r2) = src, dst
    if r % 2 == 1:  # odd row: west to east, the east end goes north
        return (r2 == r and c2 == c + 1) or (c == cols - 1 and (c2, r2) == (c, r + 1))
    return (r2 == r and c2 == c - 1) or (c == 0 and (c2, r2) == (c, r + 1))


@pytest.mark.parametrize("name", ["xcvc1902", "npu1", "npu2", "xcve2802"])
def test_device_rule_matches_the_sources(name):
    dev = tl.device(name)
    tiles = dev.tiles("compute")
    for a in tiles:
        for b in tiles:
            want = rule_aie1(a, b, dev.cols) if dev.family == "aie1" else rule_aie2(a, b)
            assert cascade_ok(dev, a, b) == want, (name, a, b)


# -- frontend, text, verifier --------------------------------------------------------------------


def test_round_trip_and_text():
    d = chain("npu1")
    text = tl.ir.print(d)
    assert "cascade @cas0 : tile<96xi32>" in text
    assert "buffer @cas0_put : tile<96xi32>" in text and "buffer @cas0_get : tile<96xi32>" in text
    assert tl.ir.print(tl.ir.parse(text)) == text
    p = tl.plan(d)
    pt = tl.ir.print(p)
    assert tl.ir.print(tl.ir.parse(pt)) == pt
    assert "cascades" in p.report() and f"core:k0@({p.placement['k0'][0]},{p.placement['k0'][1]})" in p.report()


def _two_cores(device="npu1", elem=(M,), producers=1):
    @tl.kernel
    def put(a: tl.Tile[(M,), tl.i32], s: tl.Tile[elem, tl.i32]):
        s[...] = a[0:elem[0]]

    @tl.design(device=device)
    def bad(A: tl.Tensor[(M,), tl.i32], C: tl.Tensor[(M,), tl.i32]):
        a = tl.fifo(tl.Tile[(M,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(M,), tl.i32], name="c")
        b = tl.fifo(tl.Tile[(M,), tl.i32], name="b")
        cas = tl.cascade(tl.Tile[(M,), tl.i32], name="cz")

        for i in range(producers):
            @tl.core(name=f"p{i}")
            def p():
                x = a.acquire()
                put(x, cas)
                a.release()

        @tl.core(name="q")
        def q():
            x = c.acquire()
            y = b.acquire()
            last(x, cas, y)
            b.release()
            c.release()

        tl.dma(A, a)
        tl.dma(A, c)
        tl.dma(b, C)

    return bad


def test_wrong_shape_names_cascade_and_line():
    with pytest.raises(tl.DesignError, match=r"test_cascade.py:\d+.*cascade 'cz' carries tile<96xi32>"):
        _two_cores(elem=(M // 2,))


def test_two_producers():
    with pytest.raises(tl.DesignError, match=r"cascade 'cz'.*already sends it.*one producer and one consumer"):
        _two_cores(producers=2)


def test_no_consumer():
    @tl.kernel
    def put(a: tl.Tile[(M,), tl.i32], s: tl.Tile[(M,), tl.i32]):
        s[...] = a

    with pytest.raises(tl.DesignError, match=r"cascade 'lonely'.*no core takes from it"):
        @tl.design(device="npu1")
        def d(A: tl.Tensor[(M,), tl.i32]):
            a = tl.fifo(tl.Tile[(M,), tl.i32], name="a")
            cas = tl.cascade(tl.Tile[(M,), tl.i32], name="lonely")

            @tl.core(name="p")
            def p():
                x = a.acquire()
                put(x, cas)
                a.release()

            tl.dma(A, a)


def test_scalar_parameter_and_dma_and_inside_core():
    @tl.kernel
    def sc(a: tl.Tile[(M,), tl.i32], k: tl.i32):
        a[...] = a * k

    with pytest.raises(tl.DesignError, match="cascade 'cw' carries tiles"):
        @tl.design(device="npu1")
        def d(A: tl.Tensor[(M,), tl.i32]):
            a = tl.fifo(tl.Tile[(M,), tl.i32], name="a")
            cas = tl.cascade(tl.Tile[(M,), tl.i32], name="cw")

            @tl.core(name="p")
            def p():
                x = a.acquire(port="produce")
                sc(x, cas)
                a.release()

            tl.dma(a, A)

    with pytest.raises(tl.DesignError, match="declare cascades in the design body"):
        @tl.design(device="npu1")
        def d2(A: tl.Tensor[(M,), tl.i32]):
            a = tl.fifo(tl.Tile[(M,), tl.i32], name="a")

            @tl.core(name="p")
            def p():
                tl.cascade(tl.Tile[(M,), tl.i32])
                x = a.acquire(port="produce")
                a.release()
                del x

            tl.dma(a, A)


def test_not_whole_words_on_aie1():
    @tl.kernel
    def put(a: tl.Tile[(N,), tl.i32], s: tl.Tile[(N,), tl.i32]):
        s[...] = a

    @tl.kernel
    def get(s: tl.Tile[(N,), tl.i32], c: tl.Tile[(N,), tl.i32]):
        c[...] = s

    def make(dev):
        @tl.design(device=dev)
        def d(A: tl.Tensor[(N,), tl.i32], C: tl.Tensor[(N,), tl.i32]):
            a = tl.fifo(tl.Tile[(N,), tl.i32], name="a")
            c = tl.fifo(tl.Tile[(N,), tl.i32], name="c")
            cas = tl.cascade(tl.Tile[(N,), tl.i32], name="cn")

            @tl.core(name="p")
            def p():
                x = a.acquire()
                put(x, cas)
                a.release()

            @tl.core(name="q")
            def q():
                y = c.acquire()
                get(cas, y)
                c.release()

            tl.dma(A, a)
            tl.dma(c, C)
        return d

    make("npu1")  # 256 B = 4 x 64 B words
    with pytest.raises(tl.DesignError, match=r"cascade 'cn'.*not a whole number of xcvc1902's 384-bit cascade words"):
        make("xcvc1902")


def test_mismatched_counts_and_pins():
    with pytest.raises(tl.DesignError, match=r"cascade 'cas0'.*not cascade neighbours"):
        chain("npu1", pins={0: (0, 2), 1: (0, 3)})  # north, not south
    chain("npu1", pins={0: (0, 3), 1: (0, 2), 2: (1, 2)})


# -- planning ------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["npu1", "xcvc1902"])
@pytest.mark.parametrize("strategy", ["ilp", "greedy"])
def test_placement_obeys_the_rule(device, strategy):
    d = chain(device, stages=4)
    p = tl.plan(d, strategy=strategy)
    dev = d.device
    pl = [p.placement[f"k{i}"] for i in range(4)]
    for a, b in zip(pl[:-1], pl[1:], strict=True):
        want = rule_aie1(a, b, dev.cols) if dev.family == "aie1" else rule_aie2(a, b)
        assert want, (device, pl)


@pytest.mark.parametrize("device, pin", [("npu1", (3, 2)), ("xcvc1902", (0, 8))])
def test_impossible_placement_is_a_plan_error(device, pin):
    # npu1 (3, 2): no compute tile east (the array's edge) or south (a memtile); xcvc1902 (0, 8): row 8 is
    # even, so it runs east to west and (0, 8) is its last core, whose cascade would go north off the array.
    d = chain(device, stages=2, pins={0: pin})
    with pytest.raises(tl.PlanError, match=r"cascade 'cas0'.*k0 -> k1"):
        tl.plan(d)


def test_parsed_plan_with_illegal_placement_is_rejected():
    d = chain("npu1")
    p = tl.plan(d)
    text = tl.ir.print(p)
    a = p.placement["k0"]
    b = p.placement["k1"]
    bad = text.replace(f"core @k0 at ({a[0]}, {a[1]})", "core @k0 at (9, 9)")
    # move k1 to a tile not reachable from k0 by swapping the two cores' tiles
    bad = text.replace(f"core @k0 at ({a[0]}, {a[1]})", f"core @k0 at ({b[0]}, {b[1]})@@").replace(
        f"core @k1 at ({b[0]}, {b[1]})", f"core @k1 at ({a[0]}, {a[1]})").replace("@@", "")
    with pytest.raises(tl.ParseError, match=r"cascade 'cas0'.*cannot send to core 'k1'"):
        tl.ir.parse(bad)


# -- simulation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["npu1", "xcvc1902", "npu2"])
def test_numbers_equal_numpy_and_timing_equals_timed(device):
    stages, reps = 4, 3
    d = chain(device, stages=stages, reps=reps)
    p = tl.plan(d)
    x = (np.arange(stages * reps * M, dtype=np.int64) * 7919 % 20011 - 10000).astype(np.int32)
    want = reference(x, stages, reps)
    timed = tl.simulate(p, X=x, C=np.zeros(reps * M, np.int32))
    func = tl.simulate(p, mode="functional", X=x, C=np.zeros(reps * M, np.int32))
    timing = tl.simulate(p, mode="timing", X=x, C=np.zeros(reps * M, np.int32))
    np.testing.assert_array_equal(timed.outputs["C"], want)
    np.testing.assert_array_equal(func.outputs["C"], want)
    assert timing.cycles == timed.cycles > 0
    assert timing.stats.cores == timed.stats.cores
    word = 48 if device == "xcvc1902" else 64
    for i in range(stages - 1):
        st = timed.stats.cascades[f"cas{i}"]
        assert st.bytes == reps * M * 4 and st.transfers == reps
        assert st.busy == reps * (M * 4 // word)  # one word a cycle
    assert "cascade" in timed.stats.report()
    assert timed.explain() is not None


def _timed_pair(producer_cycles: int, consumer_cycles: int, reps: int = 3):
    """Extern kernels of fixed cost: a producer with no input, a consumer writing to the host."""
    def fill(s):
        s[...] = 5

    def add(s, c):
        c[...] = s + 1

    put = tl.extern_kernel("put_tile", params=[("s", tl.Tile[(M,), tl.i32])], writes=["s"], reference=fill,
                           cycles=producer_cycles)
    get = tl.extern_kernel("get_tile", params=[("s", tl.Tile[(M,), tl.i32]), ("c", tl.Tile[(M,), tl.i32])],
                           writes=["c"], reference=add, cycles=consumer_cycles)

    @tl.design(device="npu1")
    def pair(C: tl.Tensor[(reps * M,), tl.i32]):
        out = tl.fifo(tl.Tile[(M,), tl.i32], name="out")
        cas = tl.cascade(tl.Tile[(M,), tl.i32], name="cp")

        @tl.core(name="p", tile=(0, 3))
        def p():
            for _ in tl.range(reps):
                put(cas)

        @tl.core(name="q", tile=(0, 2))
        def q():
            for _ in tl.range(reps):
                y = out.acquire()
                get(cas, y)
                out.release()

        tl.dma(out, C)

    return pair


def test_cycles_by_hand():
    # 96 x i32 = 384 B = 6 words of 512 bits: T = 6 cycles. Both cores start at 0 (two rounds: the output
    # fifo's two buffers hold both results, so no wait on the host). A tile's last word moves at
    # e = max(s + 6, producer start + producer compute), s = max(producer start, consumer start); each
    # call ends at max(its start + its compute, e).
    # Slow producer (100), fast consumer (10): every round ends at 100k for both; the consumer stalls 90.
    res = tl.simulate(tl.plan(_timed_pair(100, 10, reps=2)), C=np.zeros(2 * M, np.int32))
    np.testing.assert_array_equal(res.outputs["C"], np.full(2 * M, 6, np.int32))
    p, q = res.stats.cores["p"], res.stats.cores["q"]
    assert (p.busy, p.stall, p.finished_at) == (200, 0, 200)
    assert (q.busy, q.stall, q.finished_at) == (20, 180, 200)
    assert q.stalls == {"cascade cp": 180}
    # Fast producer (10), slow consumer (100): round 0: s = 0, e = max(6, 10) = 10: p ends at 10, q at 100.
    # Round 1: p sends at 10 but q starts only at 100: s = 100, e = max(106, 20) = 106: p ends at 106
    # (stalled 86 on the cascade), q at 200.
    res = tl.simulate(tl.plan(_timed_pair(10, 100, reps=2)), C=np.zeros(2 * M, np.int32))
    p, q = res.stats.cores["p"], res.stats.cores["q"]
    assert (q.busy, q.stall, q.finished_at) == (200, 0, 200)
    assert (p.busy, p.stall, p.finished_at) == (20, 86, 106)
    # Both fast (2 cycles): the cascade's 6 cycles a tile bound both: rounds end at 6 and 12.
    res = tl.simulate(tl.plan(_timed_pair(2, 2, reps=2)), C=np.zeros(2 * M, np.int32))
    assert res.stats.cores["p"].finished_at == 12 and res.stats.cores["q"].finished_at == 12
    assert res.stats.cascades["cp"].busy == 12


def test_deadlock_names_the_cascade():
    # p sends on the cascade before it writes fifo mid; q waits for mid before it takes from the cascade.
    @tl.kernel
    def put(a: tl.Tile[(M,), tl.i32], s: tl.Tile[(M,), tl.i32]):
        s[...] = a

    @tl.kernel
    def copy(a: tl.Tile[(M,), tl.i32], o: tl.Tile[(M,), tl.i32]):
        o[...] = a

    @tl.kernel
    def get2(s: tl.Tile[(M,), tl.i32], o: tl.Tile[(M,), tl.i32], c: tl.Tile[(M,), tl.i32]):
        c[...] = s + o

    @tl.design(device="npu1")
    def stuck(A: tl.Tensor[(M,), tl.i32], C: tl.Tensor[(M,), tl.i32]):
        a = tl.fifo(tl.Tile[(M,), tl.i32], name="a")
        mid = tl.fifo(tl.Tile[(M,), tl.i32], depth=1, name="mid")
        c = tl.fifo(tl.Tile[(M,), tl.i32], name="c")
        cas = tl.cascade(tl.Tile[(M,), tl.i32], name="cd")

        @tl.core(name="p")
        def p():
            x = a.acquire()
            put(x, cas)
            o = mid.acquire()
            copy(x, o)
            mid.release()
            a.release()

        @tl.core(name="q")
        def q():
            o = mid.acquire()
            y = c.acquire()
            get2(cas, o, y)
            c.release()
            mid.release()

        tl.dma(A, a)
        tl.dma(c, C)

    p = tl.plan(stuck)
    for mode in ("timed", "functional", "timing"):
        with pytest.raises(tl.DeadlockError, match=r"cascade 'cd'"):
            tl.simulate(p, mode=mode, A=np.zeros(M, np.int32), C=np.zeros(M, np.int32))


# -- MLIR: mlir-aie's aie-opt is the judge ------------------------------------------------------


def _vendor():
    from tilelang.backends.mlir import vendor

    if vendor.find_tools() is None:
        pytest.skip(vendor.missing_tools_reason())
    return vendor


@pytest.mark.parametrize("device", ["npu1", "npu2", "xcve2802", "xcvc1902"])
def test_mlir_accepted_by_aie_opt_at_both_levels(device):
    pytest.importorskip("mlir.ir")
    vendor = _vendor()
    p = tl.plan(chain(device, stages=3, reps=4))
    for level in ("objectfifo", "physical"):
        text = tl.emit_mlir(p, level=level)
        flows = text.count('"aie.cascade_flow"')
        # AIE-ML: one flow per cascade; AIE1: none (fixed chain; mlir-aie rejects configure_cascade there)
        assert flows == (0 if device == "xcvc1902" else 2)
        puts, gets = text.count('"aie.put_cascade"'), text.count('"aie.get_cascade"')
        assert puts == gets >= 2  # one word loop per call site (loops may be unrolled by the fifo depth)
        res = vendor.compile_text(text, level)
        cores = res.modules["cores"]
        arch = {"xcvc1902": "aie", "npu2": "aie2p"}.get(device, "aie2")
        want = (f"llvm.{arch}.put.mcd", f"llvm.{arch}.get.scd") if arch == "aie" else (
            f"llvm.{arch}.mcd.write.vec", f"llvm.{arch}.scd.read.vec")
        assert all(w in cores for w in want), level


def test_mlir_extern_kernels_do_their_own_cascade():
    pytest.importorskip("mlir.ir")
    vendor = _vendor()
    p = tl.plan(_timed_pair(10, 10, reps=2))
    for level in ("objectfifo", "physical"):
        text = tl.emit_mlir(p, level=level)
        assert '"aie.cascade_flow"' in text and "aie.put_cascade" not in text
        # the cascade parameter is left out of the declaration: put_tile takes nothing, get_tile one memref
        assert "function_type = () -> ()" in text and "function_type = (memref<96xi32>) -> ()" in text
        vendor.compile_text(text, level)


def test_reference_check_and_passes_keep_the_numbers():
    from tilelang.cli.check import reference_outputs

    stages, reps = 3, 4
    d = chain("npu1", stages=stages, reps=reps)
    x = (np.arange(stages * reps * M) % 1000 - 500).astype(np.int32)
    want = reference(x, stages, reps)
    np.testing.assert_array_equal(reference_outputs(d, {"X": x})["C"], want)
    opt = tl.optimize(d)
    assert len(opt.cascades) == stages - 1
    res = tl.simulate(tl.plan(opt), X=x, C=np.zeros(reps * M, np.int32))
    np.testing.assert_array_equal(res.outputs["C"], want)


def test_fused_designs_keep_their_cascades():
    a, b = chain("npu1", stages=2, reps=2), chain("npu1", stages=2, reps=2)
    fused = tl.fuse([a, b], device="npu1")
    assert [c.name for c in fused.cascades] == ["d0_cas0", "d1_cas0"]
    text = tl.ir.print(fused)
    assert tl.ir.print(tl.ir.parse(text)) == text


@pytest.mark.parametrize("device", ["npu1", "xcvc1902"])
def test_fir_example_equals_numpy_and_passes_aie_opt(device):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "cascade_fir.py"
    spec = importlib.util.spec_from_file_location("tilelang_example_cascade_fir_t", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.random.default_rng(3).integers(-100, 100, 256 + 31).astype(np.int32)
    h = mod.fir_taps(32)
    p = tl.plan(mod.cascade_fir(256, 32, 64, device, h))
    res = tl.simulate(p, X=x)
    np.testing.assert_array_equal(res.outputs["Y"], np.convolve(x, h[::-1], mode="valid").astype(np.int32))
    assert tl.simulate(p, mode="timing", X=x).cycles == res.cycles
    if importlib.util.find_spec("mlir") is None:
        pytest.skip("no MLIR bindings")
    vendor = _vendor()
    for level in ("objectfifo", "physical"):
        vendor.compile_text(tl.emit_mlir(p, level=level), level)


def _ksplit(device: str, ind, acc, t: int):
    """C = A0 @ B0 + A1 @ B1 over two cores: the first core's product travels over the cascade (2-D tile)."""

    @tl.kernel
    def part(a: tl.Tile[(t, t), ind], b: tl.Tile[(t, t), ind], s: tl.Tile[(t, t), acc]):
        s[...] = tl.matmul(a, b, acc=acc)

    @tl.kernel
    def finish(a: tl.Tile[(t, t), ind], b: tl.Tile[(t, t), ind], s: tl.Tile[(t, t), acc],
               c: tl.Tile[(t, t), acc]):
        c[...] = s
        c[...] += tl.matmul(a, b, acc=acc)  # accumulating in place keeps the emitted kernel off the stack

    @tl.design(device=device)
    def ksplit(A: tl.Tensor[(2 * t * t,), ind], B: tl.Tensor[(2 * t * t,), ind], C: tl.Tensor[(t * t,), acc]):
        a = [tl.fifo(tl.Tile[(t, t), ind], name=f"a{i}") for i in range(2)]
        b = [tl.fifo(tl.Tile[(t, t), ind], name=f"b{i}") for i in range(2)]
        c = tl.fifo(tl.Tile[(t, t), acc], name="c")
        s = tl.cascade(tl.Tile[(t, t), acc], name="partial")

        @tl.core(name="k0")
        def k0():
            x, y = a[0].acquire(), b[0].acquire()
            part(x, y, s)
            a[0].release()
            b[0].release()

        @tl.core(name="k1")
        def k1():
            x, y, z = a[1].acquire(), b[1].acquire(), c.acquire()
            finish(x, y, s, z)
            a[1].release()
            b[1].release()
            c.release()

        for i in range(2):
            tl.dma(A, a[i], pattern=tl.pattern(i * t * t, [t * t], [1]))
            tl.dma(B, b[i], pattern=tl.pattern(i * t * t, [t * t], [1]))
        tl.dma(c, C)

    return ksplit


# 32 x 32 f32 = 4096 B = 64 words of 512 bits; 24 x 24 i32 = 2304 B = 48 words of 384 bits
@pytest.mark.parametrize("device, ind, acc, t", [("npu1", tl.bf16, tl.f32, 32), ("xcvc1902", tl.i16, tl.i32, 24)])
def test_ksplit_matmul_over_a_cascade(device, ind, acc, t):
    d = _ksplit(device, ind, acc, t)
    rng = np.random.default_rng(5)
    if ind is tl.bf16:
        A = rng.uniform(-1, 1, 2 * t * t).astype(ind.numpy)
        B = rng.uniform(-1, 1, 2 * t * t).astype(ind.numpy)
    else:
        A = rng.integers(-50, 50, 2 * t * t).astype(np.int16)
        B = rng.integers(-50, 50, 2 * t * t).astype(np.int16)
    a64, b64 = A.astype(np.float64).reshape(2, t, t), B.astype(np.float64).reshape(2, t, t)
    want = (a64[0] @ b64[0]).astype(acc.numpy).astype(np.float64) + a64[1] @ b64[1]
    p = tl.plan(d)
    res = tl.simulate(p, A=A, B=B)
    np.testing.assert_allclose(res.outputs["C"].reshape(t, t).astype(np.float64), want, rtol=1e-5, atol=1e-4)
    assert tl.simulate(p, mode="timing", A=A, B=B).cycles == res.cycles
    if importlib.util.find_spec("mlir") is None:
        pytest.skip("no MLIR bindings")
    vendor = _vendor()
    for level in ("objectfifo", "physical"):
        vendor.compile_text(tl.emit_mlir(p, level=level), level)


def test_trace_has_a_track_per_cascade_without_overlaps():
    res = tl.simulate(tl.plan(_timed_pair(2, 2, reps=2)), C=np.zeros(2 * M, np.int32))
    spans = res.trace.spans("cp: p -> q")
    assert [(s[2], s[3]) for s in spans] == [(0, 6), (6, 6)]


def test_json_and_colocated_tenants():
    d = chain("npu1", stages=2, reps=2)
    p = tl.plan(d)
    assert tl.Plan.from_json(p.to_json()).placement == p.placement
    mp = tl.colocate({"a": d, "b": chain("npu1", stages=2, reps=2)}, device="npu1")
    x = (np.arange(2 * 2 * M) - 100).astype(np.int32)
    res = tl.simulate(mp, a={"X": x}, b={"X": x})
    for name in ("a", "b"):
        np.testing.assert_array_equal(res[name].outputs["C"], reference(x, 2, 2))


@pytest.mark.parametrize("device", ["npu1", "xcvc1902"])
def test_emitted_cascade_code_runs_to_numpy(device):
    """The physical-level module executed by tests/mlir/interp.py (word loops, bit casts, put and get)."""
    pytest.importorskip("mlir.ir")
    import sys
    from pathlib import Path

    if "tilelang_mlir_interp" not in sys.modules:
        spec = importlib.util.spec_from_file_location("tilelang_mlir_interp",
                                                      Path(__file__).resolve().parent / "mlir" / "interp.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["tilelang_mlir_interp"] = mod
        spec.loader.exec_module(mod)
    interp = sys.modules["tilelang_mlir_interp"]

    t = 32 if device == "npu1" else 24
    ind, acc = (tl.bf16, tl.f32) if device == "npu1" else (tl.i16, tl.i32)
    d = _ksplit(device, ind, acc, t)
    rng = np.random.default_rng(9)
    A = rng.integers(-8, 8, 2 * t * t).astype(ind.numpy)
    B = rng.integers(-8, 8, 2 * t * t).astype(ind.numpy)
    a64, b64 = A.astype(np.float64).reshape(2, t, t), B.astype(np.float64).reshape(2, t, t)
    want = (a64[0] @ b64[0] + a64[1] @ b64[1]).reshape(-1)
    module = tl.emit_mlir(tl.plan(d, strategy="greedy"), level="physical", as_module=True)
    got = interp.run_physical(module, d, {"A": A, "B": B})
    np.testing.assert_array_equal(got["C"].astype(np.float64), want)
    stages, reps = 3, 4
    d = chain(device, stages=stages, reps=reps)
    x = (np.arange(stages * reps * M) % 997 - 400).astype(np.int32)
    module = tl.emit_mlir(tl.plan(d, strategy="greedy"), level="physical", as_module=True)
    np.testing.assert_array_equal(interp.run_physical(module, d, {"X": x})["C"], reference(x, stages, reps))
