"""tl.library.matmul(..., cascade=L): output tiles computed by cascade chains on AIE1 (xcvc1902).

Numbers against numpy; placements against the AIE1 cascade rule as mlir-aie's tutorial-8 states it
(restated in tests/test_cascade.py, not tilelang's table); the emitted module through mlir-aie.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_cascade import rule_aie1

import tilelang as tl

DEV = "xcvc1902"


def _design(M, K, N, cores, chain, **kw):  # noqa: N803
    return tl.library.matmul(M, K, N, in_dtype=tl.i16, out_dtype=tl.i32, device=DEV, cores=cores,
                             layout="streams", cascade=chain, **kw)


def _run(d, M, K, N, seed=0):  # noqa: N803
    rng = np.random.default_rng(seed)
    a = rng.integers(-50, 50, (M, K)).astype(np.int16)
    b = rng.integers(-50, 50, (K, N)).astype(np.int16)
    p = tl.plan(d, strategy="greedy")
    res = tl.simulate(p, **tl.library.pack_streams(d, a, b))
    return p, res, tl.library.unpack_streams(d, res.outputs["C"]), a.astype(np.int32) @ b.astype(np.int32)


@pytest.mark.parametrize(("M", "K", "N", "cores", "chain", "tiling"), [
    (48, 64, 48, (1, 1), 2, None),                           # one k-step per core, whole cascade words
    (64, 128, 32, (2, 1), 2, {"m": 32, "k": 32, "n": 32}),   # 32 x 32 i32 is not whole 48 B words: padded
    (96, 384, 96, (2, 2), 3, {"m": 48, "k": 32, "n": 16}),   # head, middle and tail cores, four k-steps each
])
def test_equals_numpy(M, K, N, cores, chain, tiling):  # noqa: N803
    d = _design(M, K, N, cores, chain, **({"tiling": tiling} if tiling else {}))
    assert len(d.cores) == cores[0] * cores[1] * chain and len(d.cascades) == cores[0] * cores[1] * (chain - 1)
    p, res, c, want = _run(d, M, K, N)
    np.testing.assert_array_equal(c, want)
    dev = tl.device(DEV)
    for cas in d.cascades:  # the chain sits along AIE1's fixed cascade
        r, q, j = cas.name.split("_")[1:]
        src, dst = p.placement[f"core_{r}_{q}_{j}"], p.placement[f"core_{r}_{q}_{int(j) + 1}"]
        assert rule_aie1(tuple(src), tuple(dst), dev.cols), (cas.name, src, dst)
    assert sum(res.stats.cascades[c.name].bytes for c in d.cascades) > 0


def test_64_cores_equal_numpy():
    M = K = N = 256
    d = _design(M, K, N, (4, 4), 4)
    assert len(d.cores) == 64
    _, res, c, want = _run(d, M, K, N, seed=1)
    np.testing.assert_array_equal(c, want)
    assert res.explain().verdict


def test_default_grid_fills_the_shim_channels():
    d = _design(256, 256, 256, None, 4)
    dev = tl.device(DEV)
    fifos_in = sum(1 for f in d.fifos if f.name.startswith(("a_", "b_")))
    assert len(d.cores) == 64 and fifos_in <= 32  # 16 NoC shims x 2 MM2S channels (AIE_FACTS)
    assert len(dev.tiles("compute")) == 400


def test_pack_round_trip():
    d = _design(96, 192, 96, (2, 2), 2, tiling={"m": 48, "k": 16, "n": 48})
    rng = np.random.default_rng(2)
    c = rng.integers(0, 100, (96, 96)).astype(np.int32)
    packed = tl.library.pack_streams(d, np.zeros((96, 192), np.int16), np.zeros((192, 96), np.int16), C=c)
    np.testing.assert_array_equal(tl.library.unpack_streams(d, packed["C"]), c)


@pytest.mark.parametrize(("kw", "words"), [
    ({"device": "npu1"}, "without memtiles"),
    ({"layout": "row-major"}, "streams"),
    ({"cores": (4, 8)}, "MM2S"),
    ({"cascade": 0}, "positive int"),
    ({"cascade": 3}, "K % 3"),
    ({"tiling": {"m": 64, "k": 64, "n": 64}}, "smaller tiles"),
])
def test_bad_requests_raise_design_errors(kw, words):
    args = {"in_dtype": tl.i16, "out_dtype": tl.i32, "device": DEV, "cores": (2, 2), "layout": "streams",
            "cascade": 4, **kw}
    with pytest.raises(tl.DesignError, match=words):
        tl.library.matmul(256, 256, 256, **args)


def test_default_unchanged():
    a = tl.library.matmul(256, 256, 256, in_dtype=tl.i16, out_dtype=tl.i32, device=DEV, layout="streams")
    b = tl.library.matmul(256, 256, 256, in_dtype=tl.i16, out_dtype=tl.i32, device=DEV, layout="streams", cascade=1)
    assert tl.ir.print(a) == tl.ir.print(b) and not a.cascades


@pytest.mark.parametrize(("M", "K", "N", "cores", "chain"), [(48, 96, 48, (1, 1), 3), (256, 256, 256, (4, 4), 4)])
def test_mlir_aie_accepts_the_physical_module(M, K, N, cores, chain):  # noqa: N803
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    p = tl.plan(_design(M, K, N, cores, chain), strategy="greedy")
    text = tl.emit_mlir(p, level="physical")
    res = vendor.compile_text(text, "physical")
    assert "llvm.aie.put.mcd" in res.modules["cores"] and "llvm.aie.get.scd" in res.modules["cores"]


def test_mlir_aie_routes_a_small_objectfifo_module():
    """The objectfifo level through the whole flow (routing included) for one chain of three; mlir-aie's
    Pathfinder does not route the 64-core module within its 300 s limit."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    p = tl.plan(_design(48, 96, 48, (1, 1), 3), strategy="greedy")
    res = vendor.compile_text(tl.emit_mlir(p, level="objectfifo"), "objectfifo")
    assert "route" in res.modules and "llvm.aie.put.mcd" in res.modules["cores"]


# -- fed by PLIO streams (docs/plio.md) ------------------------------------------------------------


def test_plio_fed_chains_equal_numpy_and_read_no_ddr():
    M = K = N = 96
    d = _design(M, K, N, (2, 2), 3, tiling={"m": 48, "k": 32, "n": 16}, plio=True)
    assert {m.plio for m in d.dmas} == {tl.device(DEV).plio.default_bits}
    p, res, c, want = _run(d, M, K, N)
    np.testing.assert_array_equal(c, want)
    dev = tl.device(DEV)
    hosts = [end.tile for fp in p.fifos.values() for end in (fp.producer, *fp.consumers) if end.agent == "host"]
    assert hosts and all(dev.is_pl_shim(tuple(t)) for t in hosts)
    assert res.stats.ddr_bytes_read == 0 and res.stats.ddr_bytes_written == 0


def test_plio_takes_the_chains_past_the_noc_shims():
    """128 cores (4 x 8 chains of 4) need 48 A and B streams: more than the NoC shims' 32 MM2S channels,
    within the PL shims' PLIO streams; the plan holds and timing mode runs it."""
    with pytest.raises(tl.DesignError, match="shim MM2S"):
        _design(512, 512, 512, (4, 8), 4)
    d = _design(512, 512, 512, (4, 8), 4, plio=True)
    assert len(d.cores) == 128
    res = tl.simulate(tl.plan(d, strategy="greedy"), mode="timing")
    assert res.cycles > 0 and res.stats.ddr_bytes_read == 0


def test_plio_needs_cascade_chains_and_a_device_with_plio():
    with pytest.raises(tl.DesignError, match="cascade"):
        tl.library.matmul(64, 64, 64, device="npu1", plio=True)
    with pytest.raises(tl.DesignError, match="PLIO"):
        _design(96, 96, 96, (1, 1), 3, plio=48)


def test_mlir_aie_accepts_the_plio_fed_physical_module():
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    p = tl.plan(_design(48, 96, 48, (1, 1), 3, plio=True), strategy="greedy")
    res = vendor.compile_text(tl.emit_mlir(p, level="physical"), "physical")
    assert "llvm.aie.put.mcd" in res.modules["cores"]


# -- the large PLIO-fed grids: 256 and 384 of the VC1902's 400 cores -------------------------------


def _check_routes_fit(p):
    """Every route a tree reaching its fifo's tiles; no link carrying more routes than the device's channels."""
    dev = tl.device(DEV)
    use: dict = {}
    for r in p.routes.values():
        assert set(map(tuple, r.dests)) <= set(map(tuple, r.reaches()))
        for link in r.links:
            use[link] = use.get(link, 0) + 1
    assert all(n <= dev.link_capacity(*link) for link, n in use.items())


@pytest.mark.parametrize(("rows", "cols"), [(8, 8), pytest.param(10, 8, marks=pytest.mark.slow),
                                            pytest.param(12, 8, marks=pytest.mark.slow), (10, 10)])
def test_plio_large_grids_plan_route_and_equal_numpy(rows, cols):
    """8 x 8, 10 x 8, 12 x 8 and 10 x 10 chains of 4 (256, 320, 384 and all 400 cores): up to 80 + 100 PLIO
    streams, the broadcasts spread over the 34 PL shims so that the routes fit every link; C equals numpy."""
    M, K, N = rows * 16, 32, cols * 16  # noqa: N806
    d = _design(M, K, N, (rows, cols), 4, plio=True)
    assert len(d.cores) == rows * cols * 4
    p, res, c, want = _run(d, M, K, N, seed=3)
    np.testing.assert_array_equal(c, want)
    dev = tl.device(DEV)
    hosts = [end.tile for fp in p.fifos.values() for end in (fp.producer, *fp.consumers) if end.agent == "host"]
    assert len(hosts) == (rows + cols) * 4 + rows * cols and all(dev.is_pl_shim(tuple(t)) for t in hosts)
    assert len({tuple(t)[0] for t in hosts}) > 8  # spread over many PL shims' columns, not crowded on a few
    for cas in d.cascades:
        r, q, j = cas.name.split("_")[1:]
        src, dst = p.placement[f"core_{r}_{q}_{j}"], p.placement[f"core_{r}_{q}_{int(j) + 1}"]
        assert rule_aie1(tuple(src), tuple(dst), dev.cols), (cas.name, src, dst)
    _check_routes_fit(p)
    assert res.stats.ddr_bytes_read == 0


@pytest.mark.slow
def test_plio_256_cores_plan_is_deterministic():
    d = _design(128, 32, 128, (8, 8), 4, plio=True)
    assert tl.plan(d, strategy="greedy").to_json() == tl.plan(d, strategy="greedy").to_json()


@pytest.mark.parametrize(("rows", "cols"), [pytest.param(8, 8, marks=pytest.mark.slow),
                                            pytest.param(12, 8, marks=pytest.mark.slow),
                                            pytest.param(10, 10, marks=pytest.mark.slow)])
def test_mlir_aie_accepts_the_large_plio_fed_physical_modules(rows, cols):
    """The physical module of 256, all 400 (and, marked slow, 384) PLIO-fed cascade cores through mlir-aie's flow:
    its switchboxes hold every planned route, its cores compile with the cascade intrinsics."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    p = tl.plan(_design(rows * 16, 32, cols * 16, (rows, cols), 4, plio=True), strategy="greedy")
    res = vendor.compile_text(tl.emit_mlir(p, level="physical"), "physical")
    assert "llvm.aie.put.mcd" in res.modules["cores"] and "llvm.aie.get.scd" in res.modules["cores"]


@pytest.mark.slow
def test_plio_256_cores_plan_with_the_default_strategy():
    """The placement ILP (about a minute here; a time limit far above it, so that no safety net fires) keeps
    the host ends within every boundary's channels and every shim's links to the array: its own placement
    routes (no greedy fallback, no PlanWarning), C equals numpy, and a second plan is the same JSON."""
    M, K, N = 128, 32, 128  # noqa: N806
    d = _design(M, K, N, (8, 8), 4, plio=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", tl.PlanWarning)
        p = tl.plan(d, time_limit=900)
        again = tl.plan(d, time_limit=900)
    place = p.solves["placement"]
    assert place.method == "ilp-neighbourhood" and place.status == "feasible", place
    assert p.to_json() == again.to_json()
    _check_routes_fit(p)
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, (M, K)).astype(np.int16)
    b = rng.integers(-50, 50, (K, N)).astype(np.int16)
    res = tl.simulate(p, **tl.library.pack_streams(d, a, b))
    np.testing.assert_array_equal(tl.library.unpack_streams(d, res.outputs["C"]), a.astype(np.int32) @ b.astype(np.int32))
