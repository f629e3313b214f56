"""Property tests of tl.plan on generated designs (hypothesis).

Each generated design is a set of parallel chains of cores fed from the host
(directly or through a memtile split), optionally with a broadcast fifo to
every chain head, drained to the host (directly or through a memtile join),
with random element sizes, depths and pins. Every plan must be legal
(test_plan_checks.check_plan) or fail with a PlanError; greedy plans are
deterministic byte for byte.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_support import quick_and_slow
from test_plan_checks import check_plan

import tilelang as tl
from tilelang.errors import PlanError
from tilelang.plan import plan


def _kernels(n: int):
    def copy(a, c):
        c[...] = a

    def add(a, b, c):
        c[...] = a + b

    copy.__annotations__ = {"a": tl.Tile[(n,), tl.i32], "c": tl.Tile[(n,), tl.i32]}
    add.__annotations__ = {"a": tl.Tile[(n,), tl.i32], "b": tl.Tile[(n,), tl.i32], "c": tl.Tile[(n,), tl.i32]}
    return tl.kernel(copy), tl.kernel(add)


def _stage(name, src, dst, kernel, pin, extra=None, add=None):
    def work():
        x, y = src.acquire(), dst.acquire()
        if extra is not None:
            z = extra.acquire()
            add(x, z, y)
            extra.release()
        else:
            kernel(x, y)
        src.release()
        dst.release()

    tl.core(name=name, tile=pin)(work)


def build(device: str, width: int, length: int, n: int, depths: list[int], via_memtile: bool, bcast: bool, pin):
    """A generated design (see the module docstring)."""
    copy, add = _kernels(n)
    mem = via_memtile and bool(tl.device(device).tiles("mem")) and width > 1

    def body(A, B, C):
        heads = [tl.fifo(tl.Tile[(n,), tl.i32], depth=depths[0], name=f"in{w}") for w in range(width)]
        tails = [tl.fifo(tl.Tile[(n,), tl.i32], depth=depths[-1], name=f"out{w}") for w in range(width)]
        extra = tl.fifo(tl.Tile[(n,), tl.i32], depth=depths[0], name="bcast") if bcast else None
        for w in range(width):
            chain = [heads[w]]
            chain += [tl.fifo(tl.Tile[(n,), tl.i32], depth=depths[1 + i], name=f"m{w}_{i}") for i in range(length - 1)]
            chain.append(tails[w])
            for i in range(length):
                _stage(f"c{w}_{i}", chain[i], chain[i + 1], copy, pin if (w, i) == (0, 0) else None,
                       extra if i == 0 else None, add)
        if mem:
            whole_in = tl.fifo(tl.Tile[(n * width,), tl.i32], name="whole_in")
            whole_out = tl.fifo(tl.Tile[(n * width,), tl.i32], name="whole_out")
            tl.split(whole_in, heads)
            tl.join(tails, whole_out)
            tl.dma(A, whole_in)
            tl.dma(whole_out, C)
        else:
            for w in range(width):
                tl.dma(A, heads[w], pattern=tl.pattern(w * n, [n], [1]))
                tl.dma(tails[w], C, pattern=tl.pattern(w * n, [n], [1]))
        if extra is not None:
            tl.dma(B, extra)

    body.__name__ = "generated"
    body.__annotations__ = {
        "A": tl.Tensor[(n * width,), tl.i32],
        "B": tl.Tensor[(n,), tl.i32],
        "C": tl.Tensor[(n * width,), tl.i32],
    }
    return tl.design(device=device)(body)


@st.composite
def designs(draw):
    device = draw(st.sampled_from(["npu1", "npu2", "xcve2302", "xcvc1902"]))
    width = draw(st.integers(1, 4))
    length = draw(st.integers(1, 4))
    n = draw(st.sampled_from([16, 256, 1024, 2048]))
    depths = draw(st.lists(st.integers(1, 3), min_size=length + 1, max_size=length + 1))
    via_memtile = draw(st.booleans())
    bcast = draw(st.booleans())
    computes = tl.device(device).tiles("compute")
    pin = draw(st.one_of(st.none(), st.sampled_from(computes)))
    return build(device, width, length, n, depths, via_memtile, bcast, pin)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(designs())
def test_greedy_plans_are_legal_and_deterministic(d):
    try:
        p = plan(d, strategy="greedy")
    except PlanError as e:
        assert str(e)  # a resource ran out; the message says which
        return
    check_plan(p)
    assert plan(d, strategy="greedy").to_json() == p.to_json()


def _ilp_plan_is_legal(d):
    try:
        p = plan(d, strategy="ilp", time_limit=8)
    except PlanError as e:
        assert str(e)
        return
    check_plan(p)
    assert p.solves["routing"].gap is None or 0.0 <= p.solves["routing"].gap <= 1.0


test_ilp_plans_are_legal, test_more_ilp_plans_are_legal = quick_and_slow(4, 12, given(designs()), _ilp_plan_is_legal)
