"""Buffer descriptors and locks: the planner counts them as the physical MLIR emitter builds them.

A split into P parts at depth D needs D x P BDs on the whole fifo's memtile
channel and D on each part's; memtile BDs come in two pools by channel
parity (even channels BDs 0-23, odd 24-47, AIE_FACTS). Hand-worked cases,
then the property: every plan the planner accepts is accepted by
``tl.emit_mlir(plan, level="physical")``, on generated split/join designs.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_support import quick_and_slow

import tilelang as tl
from tilelang.errors import PlanError
from tilelang.ir.descriptors import bd_pool, end_bds, set_locks
from tilelang.plan.channels import assign_channels


def split_join(parts: int, depth: int, *, split: bool = True, join: bool = True, n: int = 64,
               device: str = "npu1", dtype=tl.i32, core_depth: int = 2):
    """Host -> [split into ``parts``] -> one core per part -> [join] -> host; whole fifos ``depth`` deep."""

    @tl.kernel
    def inc(a: tl.Tile[(n,), dtype], c: tl.Tile[(n,), dtype]):
        c[...] = a + 1

    def body(A, C):
        heads = [tl.fifo(tl.Tile[(n,), dtype], depth=core_depth, name=f"in{k}") for k in range(parts)]
        tails = [tl.fifo(tl.Tile[(n,), dtype], depth=core_depth, name=f"out{k}") for k in range(parts)]
        for k in range(parts):

            def work(h=heads[k], t=tails[k]):
                for _ in tl.range(2):
                    x, y = h.acquire(), t.acquire()
                    inc(x, y)
                    h.release()
                    t.release()

            tl.core(name=f"w{k}")(work)
        if split:
            whole_in = tl.fifo(tl.Tile[(n * parts,), dtype], depth=depth, name="whole_in")
            tl.split(whole_in, heads)
            tl.dma(A, whole_in)
        else:
            for k, h in enumerate(heads):
                tl.dma(A, h, pattern=tl.pattern(k * 2 * n, [2 * n], [1]))
        if join:
            whole_out = tl.fifo(tl.Tile[(n * parts,), dtype], depth=depth, name="whole_out")
            tl.join(tails, whole_out)
            tl.dma(whole_out, C)
        else:
            for k, t in enumerate(tails):
                tl.dma(t, C, pattern=tl.pattern(k * 2 * n, [2 * n], [1]))

    body.__name__ = "split_join"
    body.__annotations__ = {"A": tl.Tensor[(2 * n * parts,), dtype], "C": tl.Tensor[(2 * n * parts,), dtype]}
    return tl.design(device=device)(body)


# -- the counting rule, by hand ------------------------------------------------------------------


def test_bd_counts_of_a_split_and_a_join() -> None:
    d = split_join(4, 3)
    assert end_bds(d, "whole_in", "link:split_whole_in") == 12  # 3 buffers x 4 parts
    assert end_bds(d, "in2", "link:split_whole_in") == 3  # one per buffer of the whole fifo
    assert end_bds(d, "whole_out", "link:join_whole_out") == 12
    assert end_bds(d, "out1", "link:join_whole_out") == 3
    assert end_bds(d, "in2", "core:w2") == 2
    assert end_bds(d, "whole_in", "host") == 1
    npu1 = tl.device("npu1")
    assert set_locks(npu1, 3, parts=4) == 8  # a semaphore pair per part
    assert set_locks(tl.device("xcvc1902"), 3) == 3  # AIE1: one binary lock per buffer
    with pytest.raises(PlanError, match="count to 63"):
        set_locks(npu1, 64)


def test_bd_pools_match_the_facts() -> None:
    npu1 = tl.device("npu1")
    assert [bd_pool(npu1, (0, 1), ch) for ch in range(6)] == [(0, 24), (24, 24)] * 3
    assert bd_pool(npu1, (0, 2), 1) == (0, 16)
    assert bd_pool(npu1, (0, 0), 1) == (0, 16)


def test_channels_are_dealt_over_the_pools_when_plain_numbering_overfills_one() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class E:
        fifo: str
        agent: str
        tile: tuple
        direction: str
        bds: int

    dev, m = tl.device("npu1"), (1, 1)
    # Plain numbering puts both 16-BD chains on channel 0 (even): 32 > 24.
    ends = [E("a", "link:x", m, "s2mm", 16), E("b", "link:x", m, "mm2s", 16), E("c", "link:x", m, "mm2s", 4)]
    got = assign_channels(dev, ends)
    assert got[("a", "link:x")] % 2 != got[("b", "link:x")] % 2
    loads = {0: 0, 1: 0}
    for e in ends:
        loads[got[(e.fifo, e.agent)] % 2] += e.bds
    assert max(loads.values()) == 20
    # When the plain numbering fits, it is kept.
    fits = [E("a", "link:x", m, "s2mm", 8), E("b", "link:x", m, "mm2s", 8)]
    assert assign_channels(dev, fits) == {("a", "link:x"): 0, ("b", "link:x"): 0}


def test_a_split_too_deep_for_one_memtile_channel_is_refused_before_placement() -> None:
    with pytest.raises(PlanError, match=r"link 'split_whole_in' needs 64 buffer descriptors .* 8 buffers x 4 parts = 32.*"
                                        r"give 'whole_in' depth 4 or less"):
        tl.plan(split_join(4, 8, join=False), strategy="greedy")
    with pytest.raises(PlanError, match=r"the fullest pool would need 25\): give 'whole_in' depth 4 or less"):
        tl.plan(split_join(4, 5, join=False), strategy="greedy")


def test_links_sharing_a_memtile_are_checked_per_pool() -> None:
    """Two 3-part links at depth 8 (48 BDs each) cannot share a memtile; npu1 has four."""
    p = tl.plan(split_join(3, 8), strategy="greedy")
    assert p.link_tiles["split_whole_in"] != p.link_tiles["join_whole_out"]
    tl.emit_mlir(p, level="physical")
    # On a one-column device both links must share the memtile: 96 BDs of 48.
    with pytest.raises(PlanError, match=r"memtile \(0,1\)|needs .* buffer descriptors"):
        tl.plan(split_join(3, 8, device="npu1_1col"), strategy="greedy")


def test_planned_memtile_channels_respect_the_pools() -> None:
    p = tl.plan(split_join(4, 4), strategy="greedy")
    dev = p.device
    for link, tile in p.link_tiles.items():
        loads: dict[tuple[int, int], int] = {}
        for f in p.fifos.values():
            for e in (f.producer, *f.consumers):
                if e.tile == tile and e.agent.startswith("link:"):
                    pool = bd_pool(dev, tile, e.channel)
                    loads[pool] = loads.get(pool, 0) + end_bds(p.design, f.name, e.agent)
        assert all(v <= size for (_, size), v in loads.items()), (link, loads)
    tl.emit_mlir(p, level="physical")


# -- the property ------------------------------------------------------------------------------


@st.composite
def link_designs(draw):
    parts = draw(st.integers(1, 4))
    depth = draw(st.integers(1, 8))
    split = draw(st.booleans())
    join = draw(st.booleans()) or not split
    device = draw(st.sampled_from(["npu1", "npu1_1col", "npu2", "xcve2802"]))
    dtype = draw(st.sampled_from([tl.i32, tl.bf16, tl.i8]))
    core_depth = draw(st.integers(1, 3))
    return split_join(parts, depth, split=split, join=join, device=device, dtype=dtype, core_depth=core_depth)


def _a_plan_the_planner_accepts_the_emitter_accepts(design, strategy) -> None:
    try:
        p = tl.plan(design, strategy=strategy, time_limit=20)
    except PlanError as e:
        assert "buffer descriptors" in str(e) or "DMA channels" in str(e) or "locks" in str(e), str(e)
        return
    tl.emit_mlir(p, level="physical")


test_a_plan_the_planner_accepts_the_emitter_accepts, test_more_plans_the_planner_accepts_the_emitter_accepts = \
    quick_and_slow(8, 30, given(link_designs(), st.sampled_from(["greedy", "ilp"])),
                   _a_plan_the_planner_accepts_the_emitter_accepts)


# -- AIE1 shim chains: one BD per host move ----------------------------------------------------


def _aie1_moves(pieces: tuple[int, ...], n: int = 256):
    """A core on the xcvc1902 adding inputs each moved in ``pieces[i]`` host moves of one tile."""
    reps = max(pieces)
    assert all(reps % p == 0 for p in pieces)

    @tl.kernel
    def add(a: tl.Tile[(n,), tl.i32], b: tl.Tile[(n,), tl.i32], c: tl.Tile[(n,), tl.i32]):
        c[...] = a + b

    @tl.design(device="xcvc1902")
    def chains(X: tl.Tensor[(reps * n,), tl.i32], Y: tl.Tensor[(reps * n,), tl.i32],
               C: tl.Tensor[(reps * n,), tl.i32]):
        x = tl.fifo(tl.Tile[(n,), tl.i32], name="x")
        y = tl.fifo(tl.Tile[(n,), tl.i32], name="y")
        c = tl.fifo(tl.Tile[(n,), tl.i32], name="c")

        @tl.core(name="w", tile=(24, 1))
        def w():
            for _ in tl.range(reps):
                a, b, o = x.acquire(), y.acquire(), c.acquire()
                add(a, b, o)
                x.release()
                y.release()
                c.release()

        for fifo, tensor, k in ((x, X, pieces[0]), (y, Y, pieces[1])):
            step = reps // k * n
            for j in range(k):
                tl.dma(tensor, fifo, pattern=tl.pattern(j * step, [step], [1]))
        tl.dma(c, C)

    return chains


def test_aie1_host_ends_share_a_shim_only_within_its_bds() -> None:
    """Two fifos of 10 moves each (10 BDs each on AIE1's static chains) cannot share a 16-BD shim: the
    placement ILP puts them on different shims by itself (no fallback to the greedy placement, no warning)."""
    import warnings

    import numpy as np

    d = _aie1_moves((10, 10))
    for strategy in ("ilp", "greedy"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            p = tl.plan(d, strategy=strategy)
        assert p.fifos["x"].producer.tile != p.fifos["y"].producer.tile, strategy
        assert "greedy" not in p.solves["placement"].method or strategy == "greedy"
    x, y = np.arange(10 * 256, dtype=np.int32), np.arange(10 * 256, dtype=np.int32)[::-1].copy()
    assert np.array_equal(tl.simulate(p, X=x, Y=y).outputs["C"], x + y)


def test_aie1_fifo_moved_in_more_pieces_than_a_shim_has_bds_is_refused_before_placement() -> None:
    import warnings

    for strategy in ("ilp", "greedy"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a clear error, not a fallback's warning first
            with pytest.raises(PlanError, match=r"fifo 'y': its 20 host moves need 20 buffer descriptors on one shim "
                                                r".*a shim has 16: move it in at most 16 moves"):
                tl.plan(_aie1_moves((2, 20)), strategy=strategy)


# -- memtile BD pools during the link placement --------------------------------------------------------


@pytest.mark.slow
def test_links_whose_bds_fit_a_memtile_but_no_channel_numbering_go_apart() -> None:
    """A 4-way split and join per pipeline copy (fuzz-generated, fifos of depth 2-5): a split and a join fit a
    memtile's 48 BDs together but no numbering of its channels keeps each parity's pool within 24, so the
    greedy link placement puts them on different memtiles (it placed them together by the 48 alone, and the
    plan failed with a PlanError on the odd pool)."""
    import fuzz_support as fs
    import numpy as np

    from tilelang.ir.descriptors import pools_fit

    spec = fs.Spec(device="npu2", elem=32, tiles=3, inputs="repeat", outputs="tiles",
                   stages=(fs.Stage("split", ((-1, -7), (-2, 3), (3, -16), (-2, 12))),), copies=2)
    d = fs.build(spec, [3, 4, 2, 5, 5, 3, 2, 2, 2, 5, 4, 2, 3, 4, 4, 3, 2, 4, 3, 2])
    p = tl.plan(d, strategy="greedy")
    dev = p.device
    for tile in set(p.link_tiles.values()):
        ends = {"mm2s": [], "s2mm": []}
        for f, fp in p.fifos.items():
            for e, direction in ((fp.producer, "mm2s"), *((c, "s2mm") for c in fp.consumers)):
                if e.tile == tile and e.agent.startswith("link:"):
                    ends[direction].append(end_bds(d, f, e.agent))
        assert pools_fit(dev, tile, ends)
    a = fs.inputs_for(spec, 4)
    assert np.array_equal(tl.simulate(p, A=a).outputs["C"], fs.reference(spec, a))
    # The placement ILP counts the 48 alone: its links do not fit, so its cores keep their tiles and the links
    # and host ends are placed around them as the greedy placement places them (no fallback, no warning).
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        q = tl.plan(d)
    assert not [w for w in caught if str(w.message).startswith("placement:")]
    assert q.solves["placement"].method.endswith(", links and host ends greedy")
    assert "its cores keep their tiles" in q.solves["placement"].message
    assert np.array_equal(tl.simulate(q, A=a).outputs["C"], fs.reference(spec, a))


def test_pools_fit_against_every_channel_numbering() -> None:
    """``pools_fit`` against brute force over every assignment of ends to distinct channels (npu1 memtile:
    6 channels a direction, pools of 24 by parity)."""
    import itertools
    import random
    from types import SimpleNamespace

    from tilelang.backends.mlir import spatial
    from tilelang.ir.descriptors import pools_fit

    dev = tl.device("npu1")
    m = dev.tiles("mem")[0]
    rng = random.Random(0)
    for _ in range(150):
        ends = {d: [rng.choice([1, 2, 3, 4, 6, 8, 12, 16]) for _ in range(rng.randint(0, 4))] for d in ("mm2s", "s2mm")}

        def brute(ends: dict[str, list[int]], compact: bool) -> bool:
            # every assignment of distinct channels: any of the 6, or (compact) channels 0..k-1 of each direction
            def choices(direction: str):  # noqa: ANN202
                k = len(ends[direction])
                return itertools.permutations(range(k)) if compact else itertools.permutations(range(6), k)

            for a in choices("mm2s"):
                for b in choices("s2mm"):
                    load = [0, 0]
                    for ch, n in (*zip(a, ends["mm2s"], strict=True), *zip(b, ends["s2mm"], strict=True)):
                        load[ch % 2] += n
                    if max(load) <= 24:
                        return True
            return False

        assert pools_fit(dev, m, ends) == brute(ends, compact=False), ends
        # the objectfifo emitter's split of ends numbered from 0 (mlir-aie's own numbering)
        by_dir = {d: [(k, f"{d}{k}", n) for k, n in enumerate(ends[d])] for d in ends}
        split = spatial._parity_split(SimpleNamespace(device=dev), m, by_dir)
        assert (split is not None) == brute(ends, compact=True), ends
