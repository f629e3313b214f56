"""Hand-made plans and small designs for the simulator tests.

The simulator must never re-decide what a plan says, so its cycle tests use
plans built here by hand (placement, channels and routes chosen explicitly),
independent of the planner. The last test checks the helper itself.
"""

from __future__ import annotations

import tilelang as tl
from tilelang.ir.design import Design
from tilelang.ir.plan import FifoEnd, FifoPlan, Plan, Route
from tilelang.ir.verify import fifo_ends

Coord = tuple[int, int]


def xy_route(src: Coord, dst: Coord) -> list[tuple[Coord, Coord]]:
    """Vertical then horizontal, or horizontal first when the destination is a memtile (row 1),
    whose row has no east/west links."""
    links = []
    c, r = src

    def vertical() -> None:
        nonlocal r
        while r != dst[1]:
            nr = r + (1 if dst[1] > r else -1)
            links.append(((c, r), (c, nr)))
            r = nr

    def horizontal() -> None:
        nonlocal c
        while c != dst[0]:
            nc = c + (1 if dst[0] > c else -1)
            links.append(((c, r), (nc, r)))
            c = nc

    if dst[1] == 1:
        horizontal()
        vertical()
    else:
        vertical()
        horizontal()
    return links


def hand_plan(design: Design, placement: dict[str, Coord], link_tiles: dict[str, Coord] | None = None,
              shared: dict[str, Coord] | None = None, channels: dict[tuple[str, str], int] | None = None,
              shim: Coord = (0, 0), host_tiles: dict[str, Coord] | None = None) -> Plan:
    """A plan with the given placement; streamed fifos get DMA channels in order and XY routes.

    Args:
        design: the design.
        placement: core name -> compute tile.
        link_tiles: link name -> memtile.
        shared: fifo -> tile whose memory holds it (no DMA).
        channels: (fifo, agent) -> channel index, overriding the in-order choice.
        shim: the shim tile host ends use unless ``host_tiles`` names one for the fifo.
        host_tiles: fifo -> shim tile of its host end.
    """
    link_tiles = link_tiles or {}
    shared = shared or {}
    channels = channels or {}
    used: dict[tuple[Coord, str], int] = {}

    host_tiles = host_tiles or {}

    def tile(agent: str, fifo: str = "") -> Coord:
        kind, _, name = agent.partition(":")
        if kind == "core":
            return placement[name]
        return link_tiles[name] if kind == "link" else host_tiles.get(fifo, shim)

    def end(fifo: str, agent: str, direction: str) -> FifoEnd:
        t = tile(agent, fifo)
        if (fifo, agent) in channels:
            return FifoEnd(agent, t, channels[(fifo, agent)])
        ch = used.get((t, direction), 0)
        used[(t, direction)] = ch + 1
        return FifoEnd(agent, t, ch)

    fifos, routes = {}, {}
    for name, e in fifo_ends(design).items():
        prod, cons = e.producers[0], e.consumers
        if name in shared:
            fifos[name] = FifoPlan(name, FifoEnd(prod, tile(prod, name)), tuple(FifoEnd(c, tile(c, name)) for c in cons),
                                   shared[name])
            continue
        p = end(name, prod, "mm2s")
        cs = tuple(end(name, c, "s2mm") for c in cons)
        fifos[name] = FifoPlan(name, p, cs)
        links: list = []
        for c in cs:
            for link in xy_route(p.tile, c.tile):
                if link not in links:
                    links.append(link)
        routes[name] = Route(p.tile, tuple(c.tile for c in cs), tuple(links))
    return Plan(design, dict(placement), dict(link_tiles), fifos, {}, routes)


def two_input_add(n: int):
    """(the kernel, a one-core design) computing C = A + B on n i32, each operand through its own fifo."""

    @tl.kernel
    def add(a: tl.Tile[(n,), tl.i32], b: tl.Tile[(n,), tl.i32], c: tl.Tile[(n,), tl.i32]):
        c[...] = a + b

    @tl.design(device="npu1")
    def two_in(A: tl.Tensor[(n,), tl.i32], B: tl.Tensor[(n,), tl.i32], C: tl.Tensor[(n,), tl.i32]):
        fa = tl.fifo(tl.Tile[(n,), tl.i32], name="fa")
        fb = tl.fifo(tl.Tile[(n,), tl.i32], name="fb")
        fc = tl.fifo(tl.Tile[(n,), tl.i32], name="fc")

        @tl.core(name="w")
        def w():
            x, y, z = fa.acquire(), fb.acquire(), fc.acquire()
            add(x, y, z)
            fa.release()
            fb.release()
            fc.release()

        tl.dma(A, fa)
        tl.dma(B, fb)
        tl.dma(fc, C)

    return add, two_in


def ddr_fill_plan(run_elems: int, device: str = "npu1") -> Plan:
    """16 KiB from DDR through a memtile link and back, the read in runs of ``run_elems`` int32 (one shim
    channel's read rate at a run length; benchmarks/accuracy.py's calibration row uses it too)."""
    n = 4096

    @tl.design(device=device)
    def fill(A: tl.Tensor[(16 * n,), tl.i32], C: tl.Tensor[(n,), tl.i32]):
        f1 = tl.fifo(tl.Tile[(n,), tl.i32], depth=1, name="f1")
        f2 = tl.fifo(tl.Tile[(n,), tl.i32], depth=1, name="f2")
        tl.dma(f1, f2, name="fw")
        runs = n // run_elems
        tl.dma(A, f1, pattern=tl.pattern(0, [runs, run_elems], [16 * n // runs, 1]))
        tl.dma(f2, C)

    return hand_plan(fill, {}, link_tiles={"fw": (0, 1)})


def small_int_inputs(design: Design, seed: int = 0) -> dict:
    """Random small integers (-4 to 4) for every input tensor of ``design`` (f32 arrays for bf16 tensors)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = {}
    for t in design.params:
        if t.name in design.inputs:
            dt = np.float32 if t.dtype.name == "bf16" else t.dtype.numpy
            out[t.name] = rng.integers(-4, 5, t.shape).astype(dt)
    return out


def copy_kernel(shape: tuple[int, ...], dt=tl.i32):
    @tl.kernel
    def copy(a: tl.Tile[shape, dt], c: tl.Tile[shape, dt]):
        c[...] = a

    return copy


def timed_extern(name: str, n: int, cycles: int, fn=lambda a: a + 1):
    """An extern kernel over (n,) i32 tiles with declared cycles and a numpy reference."""

    def ref(a, c):
        c[...] = fn(a)

    return tl.extern_kernel(name, [tl.Tile[(n,), tl.i32], tl.Tile[(n,), tl.i32]], reference=ref, cycles=cycles)


def pipeline_design(n: int, elems: int, depth: int, kernel, name: str = "pipe") -> Design:
    """host -> a_in -> core 'worker' (kernel) -> c_out -> host, ``elems`` elements of (n,) i32."""

    def body(A: tl.Tensor[(n * elems,), tl.i32], C: tl.Tensor[(n * elems,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(n,), tl.i32], depth=depth, name="a_in")
        c_out = tl.fifo(tl.Tile[(n,), tl.i32], depth=depth, name="c_out")

        @tl.core(name="worker")
        def worker():
            for _ in tl.range(elems):
                a = a_in.acquire()
                c = c_out.acquire()
                kernel(a, c)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)

    body.__name__ = name
    return tl.design(device="npu1")(body)


def test_hand_plan_routes_reach_their_destinations():
    d = pipeline_design(256, 2, 2, copy_kernel((256,)))
    p = hand_plan(d, {"worker": (1, 4)}, shim=(0, 0))
    for name, r in p.routes.items():
        assert set(r.dests) <= r.reaches(), name
    assert p.routes["a_in"].hops_to((1, 4)) == 5
    assert p.fifos["a_in"].producer == FifoEnd("host", (0, 0), 0)


def two_stage_plan(n: int, elems: int, k1: int, k2: int) -> Plan:
    """host -> a -> core 'first' (k1 cycles, x2) -> b (shared memory) -> core 'second' (k2 cycles, +5) -> c -> host.

    Cores at (0,2) and (0,3), ``b`` in the second core's memory; the output is ``A * 2 + 5``.
    """
    s1 = timed_extern("s1", n, k1, lambda a: a * 2)
    s2 = timed_extern("s2", n, k2, lambda a: a + 5)

    @tl.design(device="npu1")
    def two(A: tl.Tensor[(n * elems,), tl.i32], C: tl.Tensor[(n * elems,), tl.i32]):
        a = tl.fifo(tl.Tile[(n,), tl.i32], name="a")
        b = tl.fifo(tl.Tile[(n,), tl.i32], name="b")
        c = tl.fifo(tl.Tile[(n,), tl.i32], name="c")

        @tl.core(name="first")
        def first():
            for _ in tl.range(elems):
                x, y = a.acquire(), b.acquire()
                s1(x, y)
                a.release()
                b.release()

        @tl.core(name="second")
        def second():
            for _ in tl.range(elems):
                x, y = b.acquire(), c.acquire()
                s2(x, y)
                b.release()
                c.release()

        tl.dma(A, a)
        tl.dma(c, C)

    return hand_plan(two, {"first": (0, 2), "second": (0, 3)}, shared={"b": (0, 3)})
