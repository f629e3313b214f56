"""Cascade streams: frontend, IR text, verifier, placement rule per architecture, simulation, MLIR.

The placement rule is checked against the rule as mlir-aie and AMD write it, restated here apart from
tilelang.devices.cascade_rules: AIE-ML/AIE2 (UG1603 "directed from west to east or north to south";
mlir-aie AIEDialect.cpp ConfigureCascadeOp::verify: input North or West, output South or East) and AIE1
(mlir-aie mlir_tutorials/tutorial-8: odd rows west to east, even rows east to west, a row's last tile
into the tile north of it).
"""

from __future__ import annotations

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
