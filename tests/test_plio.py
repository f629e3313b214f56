"""PL I/O (PLIO) host moves on AIE1: frontend, IR text, verifier, device data, and the layers that refuse them.

The rates are checked against the published figures restated here apart from tilelang.devices: UG1483
"Specifying PLIO Frequency" (AIE 32 bit a cycle matched by PL 64 bit at 500 MHz or 128 bit at 250 MHz),
UG1079 "AI Engine to PL Interface Performance" (8 PL -> AIE and 6 AIE -> PL 64-bit channels per PL column).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang as tl

N = 256


@tl.kernel
def triple(a: tl.Tile[(N,), tl.i32], c: tl.Tile[(N,), tl.i32]):
    c[...] = a * 3


def build(device: str = "xcvc1902", plio_in: object = True, plio_out: object = 64, reps: int = 4):
    @tl.design(device=device)
    def plio_triple(X: tl.Tensor[(reps * N,), tl.i32], C: tl.Tensor[(reps * N,), tl.i32]):
        a = tl.fifo(tl.Tile[(N,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(N,), tl.i32], name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(reps):
                x, y = a.acquire(), c.acquire()
                triple(x, y)
                a.release()
                c.release()

        tl.dma(X, a, plio=plio_in)
        tl.dma(c, C, plio=plio_out)

    return plio_triple


def test_text_round_trip_and_width():
    d = build(plio_in=True, plio_out=128)
    text = tl.ir.print(d)
    assert "dma @dma0(%X -> @a) {pattern = pattern<offset = 0, sizes = [1024], strides = [1], repeat = 1>, plio = 64}" in text
    assert "plio = 128}" in text
    assert tl.ir.print(tl.ir.parse(text)) == text
    plain = tl.ir.print(build(plio_in=False, plio_out=False))
    assert "plio =" not in plain
    assert tl.ir.print(tl.ir.parse(plain)) == plain


def test_text_errors():
    text = tl.ir.print(build())
    with pytest.raises(tl.ParseError, match="plio is a PLIO width"):
        tl.ir.parse(text.replace("plio = 64", "plio = 0", 1))
    with pytest.raises(tl.DesignError, match="PLIO widths are \\[32, 64, 128\\] bits, not 96"):
        tl.ir.parse(text.replace("plio = 64", "plio = 96", 1))
    with pytest.raises(tl.DesignError, match="has no PL shims"):
        tl.ir.parse(text.replace('"xcvc1902"', '"npu1"'))
    mixed = text.replace(", plio = 64}", "}", 1)
    assert tl.ir.print(tl.ir.parse(mixed)).count("plio =") == 1  # one move by PLIO, one by the shim DMA: legal


def test_frontend_errors():
    with pytest.raises(tl.DesignError, match="npu1 has no PL shims with PLIO streams"):
        build("npu1")
    with pytest.raises(tl.DesignError, match="not 48"):
        build(plio_out=48)
    with pytest.raises(tl.DesignError, match="plio is True or a width in bits"):
        build(plio_in="yes")


def test_one_fifo_one_way():
    def two_ways(X: tl.Tensor[(2 * N,), tl.i32], C: tl.Tensor[(N,), tl.i32]):
        a = tl.fifo(tl.Tile[(N,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(N,), tl.i32], name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(2):
                x, y = a.acquire(), c.acquire()
                triple(x, y)
                a.release()
                c.release()

        tl.dma(X, a, pattern=tl.pattern(offset=0, sizes=[N], strides=[1]), plio=True)
        tl.dma(X, a, pattern=tl.pattern(offset=N, sizes=[N], strides=[1]))
        tl.dma(c, C)

    with pytest.raises(tl.DesignError, match="fifo 'a' is moved by PLIO 64 bits in dma 'dma0' and by the shim DMA here"):
        tl.design(device="xcvc1902")(two_ways)


def test_device_data():
    vc = tl.device("xcvc1902")
    # PL shims are the shim columns without a NoC connection (mlir-aie VC1902TargetModel).
    assert vc.is_pl_shim((0, 0)) and not vc.is_pl_shim((2, 0)) and not vc.is_pl_shim((0, 1))
    assert sum(vc.is_pl_shim(t) for t in vc.tiles("shim")) == 50 - 16
    assert vc.plio.channels_in == 8 and vc.plio.channels_out == 6
    # UG1483: 64 bits at 500 MHz = 4 GB/s; at the VC1902's 1.25 GHz that is 3.2 bytes per AIE cycle.
    assert vc.plio_bytes_per_cycle(64) == pytest.approx(64 / 8 * 500e6 / 1.25e9)
    assert vc.plio_bytes_per_cycle(32) == pytest.approx(1.6)
    # 128 bits at 500 MHz (8 GB/s) exceed the 32-bit stream at 1.25 GHz (5 GB/s) it is sequentialised into.
    assert vc.plio_bytes_per_cycle(128) == pytest.approx(4.0)
    with pytest.raises(tl.DesignError, match="has no PL shims"):
        tl.device("npu1").plio_bytes_per_cycle(64)


def test_aie_ml_device_data():
    """AM020: "six streams from AIE-ML to PL and eight streams from PL to each AIE-ML column", "32 GB/s from PL
    to each AIE-ML column" at the nominal 1 GHz: 4 GB/s a stream, one 32-bit word a cycle."""
    for name in ("xcve2802", "xcve2302"):
        ve = tl.device(name)
        assert ve.plio.channels_in == 8 and ve.plio.channels_out == 6
        assert ve.plio.channels_in * ve.plio_bytes_per_cycle(64) * ve.clock_hz == pytest.approx(32e9)
        assert ve.plio.channels_out * ve.plio_bytes_per_cycle(64) * ve.clock_hz == pytest.approx(24e9)
        assert all(ve.is_pl_shim(t) == (t[0] not in ve.noc_columns) for t in ve.tiles("shim"))
    with pytest.raises(tl.DesignError, match="npu2 has no PL shims"):
        build("npu2")


def test_aie_ml_plio_physical_level_through_mlir_aie():
    """On AIE-ML the physical level goes through mlir-aie's flow (the PL stream enters the PL shim switch's
    South port, no shim mux setting) and runs to numpy in the simulator; the objectfifo level is refused with
    the reason, which the next test shows in mlir-aie itself."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    p = tl.plan(build("xcve2802"), strategy="greedy")
    assert p.device.is_pl_shim(p.fifos["a"].producer.tile)
    x = np.arange(4 * N, dtype=np.int32)
    assert np.array_equal(tl.simulate(p, X=x).outputs["C"], x * 3)
    phys = vendor.compile_text(tl.emit_mlir(p, level="physical"), "physical")
    col = p.fifos["a"].producer.tile[0]
    assert f"%shim_pl_tile_{col}_0 = aie.tile({col}, 0)" in phys.modules["lower"]
    with pytest.raises(tl.PlanError, match="PLIO streams on xcve2802: mlir-aie's flow crashes .* emit level='physical'"):
        tl.emit_mlir(p, level="objectfifo")


def test_mlir_aie_objectfifo_flow_fails_on_an_aie_ml_pl_shim():
    """Why the objectfifo level refuses AIE-ML PLIO: mlir-aie's own flow fails on an xcve2802 module that only
    declares a PL shim tile (its column control overlay, then the router), and passes with a NoC shim instead.
    If mlir-aie learns to, this test fails and the refusal can go."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())

    def module(col: int) -> str:
        return (f"module {{\n  aie.device(xcve2802) {{\n    %s = aie.tile({col}, 0)\n    %t = aie.tile(2, 3)\n"
                f"    aie.runtime_sequence(%a: memref<16xi32>) {{\n    }}\n  }}\n}}\n")

    ve = tl.device("xcve2802")
    assert ve.is_pl_shim((1, 0)) and ve.is_noc_shim((2, 0))
    vendor.compile_text(module(2), "objectfifo")
    with pytest.raises(vendor.VendorFlowError, match="route stage failed"):
        vendor.compile_text(module(1), "objectfifo")


@pytest.mark.parametrize(("plio_in", "plio_out"), [(True, False), (False, 64)])
def test_ilp_places_a_plio_end_beside_a_dma_end(plio_in, plio_out):
    """The placement ILP with one host end on a PL shim and one on a NoC shim (it raised a KeyError: a shim's
    constraint asked every fifo's choice of that shim, and a PLIO fifo has no NoC shim to choose)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = tl.plan(build(plio_in=plio_in, plio_out=plio_out))
    assert p.solves["placement"].method.startswith("ilp") and "greedy" not in p.solves["placement"].method
    dev = p.device
    assert dev.is_pl_shim(p.fifos["a"].producer.tile) == bool(plio_in)
    assert dev.is_pl_shim(p.fifos["c"].consumers[0].tile) == bool(plio_out)
    x = np.arange(4 * N, dtype=np.int32)
    assert np.array_equal(tl.simulate(p, X=x).outputs["C"], x * 3)


def test_placement_on_pl_shims():
    d = build()
    for strategy in ("greedy", "ilp"):
        p = tl.plan(d, strategy=strategy)
        for name in ("a", "c"):
            fp = p.fifos[name]
            host = fp.producer if fp.producer.agent == "host" else fp.consumers[0]
            col, row = host.tile
            # a PL shim: row 0, a column mlir-aie's VC1902 model gives no NoC
            assert row == 0 and col not in (2, 3, 6, 7, 10, 11, 18, 19, 26, 27, 34, 35, 42, 43, 46, 47), (strategy, name)
        text = tl.ir.print(p)
        assert tl.ir.print(tl.ir.parse(text)) == text
    plain = tl.plan(build(plio_in=False, plio_out=False), strategy="greedy")
    assert tl.device("xcvc1902").is_noc_shim(plain.fifos["a"].producer.tile)


def _moved_host_end(text: str, fifo: str, old: str, new: str) -> str:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"fifo @{fifo} ") and "host" in ln)
    assert old in line, line
    return text.replace(line, line.replace(old, new, 1), 1)


def test_plan_verifier_checks_plio_ends():
    p = tl.plan(build(), strategy="greedy")
    text = tl.ir.print(p)
    tile = "({}, {})".format(*p.fifos["a"].producer.tile)
    with pytest.raises(tl.ParseError, match="not a PL shim tile; the fifo's host moves are 64-bit PLIO streams"):
        tl.ir.parse(_moved_host_end(text, "a", tile, "(2, 0)"))
    plain = tl.plan(build(plio_in=False, plio_out=False), strategy="greedy")
    ptext = tl.ir.print(plain)
    ptile = "({}, {})".format(*plain.fifos["a"].producer.tile)
    with pytest.raises(tl.ParseError, match="not a NoC shim tile"):
        tl.ir.parse(_moved_host_end(ptext, "a", ptile, "(0, 0)"))


@pytest.mark.slow
def test_too_many_plio_streams_is_a_plan_error():
    """More PL -> array streams than every PL shim has (34 x 8) cannot be placed; the error names a move."""
    @tl.kernel
    def add(a: tl.Tile[(8,), tl.i32], c: tl.Tile[(8,), tl.i32]):
        c[...] = a + 1

    def many(X: tl.Tensor[(8 * 300,), tl.i32], C: tl.Tensor[(8 * 300,), tl.i32]):
        for i in range(300):
            a = tl.fifo(tl.Tile[(8,), tl.i32], name=f"a{i}")
            c = tl.fifo(tl.Tile[(8,), tl.i32], name=f"c{i}")

            def body(a=a, c=c):
                x, y = a.acquire(), c.acquire()
                add(x, y)
                a.release()
                c.release()

            tl.core(name=f"w{i}")(body)
            tl.dma(X, a, pattern=tl.pattern(offset=8 * i, sizes=[8], strides=[1]), plio=True)
            tl.dma(c, C, pattern=tl.pattern(offset=8 * i, sizes=[8], strides=[1]))

    d = tl.design(device="xcvc1902")(many)
    with pytest.raises(tl.PlanError, match="PLIO stream channels.*host move into a"):
        tl.plan(d, strategy="greedy")


def _busy_per_transfer(width: int) -> float:
    p = tl.plan(build(plio_in=width, plio_out=width), strategy="greedy")
    res = tl.simulate(p, X=np.arange(4 * N, dtype=np.int32))
    assert np.array_equal(res.outputs["C"], np.arange(4 * N, dtype=np.int32) * 3)
    assert res.stats.ddr_bytes_read == 0 and res.stats.ddr_bytes_written == 0  # the PL side, not DDR
    s = res.stats.fifos["a"]
    return s.busy / s.transfers


def test_simulation_numbers_and_plio_rate():
    """A tile of 1 KiB takes 1024 / (width / 8 x 500 MHz / 1.25 GHz) cycles (at most 4 B a cycle, the
    32-bit stream): 320 at 64 bits, 640 at 32, 256 at 128. Differences cancel the route's latency."""
    b32, b64, b128 = (_busy_per_transfer(w) for w in (32, 64, 128))
    assert b64 - b128 == pytest.approx(1024 / (8 * 0.4) - 1024 / 4)
    assert b32 - b128 == pytest.approx(1024 / (4 * 0.4) - 1024 / 4)


def test_timing_mode_equals_timed():
    p = tl.plan(build(), strategy="greedy")
    x = np.arange(4 * N, dtype=np.int32)
    timed = tl.simulate(p, X=x)
    timing = tl.simulate(p, mode="timing", X=x)
    assert timed.cycles == timing.cycles
    noc = tl.simulate(tl.plan(build(plio_in=False, plio_out=False), strategy="greedy"), X=x)
    assert noc.stats.ddr_bytes_read == 4 * N * 4


def _first_to_device(res, kind: str) -> int:
    """The cycle the first to-device transfer on a ``kind`` ("plio" or "shim") channel started."""
    return min(sp[2] for name in res.stats.channels if name.startswith(kind) and "mm2s" in name
               for sp in res.trace.spans(name))


def test_plio_move_waits_for_no_ddr_burst():
    """A PLIO stream comes from the PL side, not DDR: its first tile moves at cycle 0, where a NoC shim
    DMA's first tile waits for DDR's first-burst latency (the device's ``host_memory.latency_ns``)."""
    x = np.arange(4 * N, dtype=np.int32)
    pl = tl.simulate(tl.plan(build(), strategy="greedy"), X=x)
    assert np.array_equal(pl.outputs["C"], x * 3)
    assert _first_to_device(pl, "plio") == 0
    p = tl.plan(build(plio_in=False, plio_out=False), strategy="greedy")
    noc = tl.simulate(p, X=x)
    dev = p.device
    assert _first_to_device(noc, "shim") >= round(dev.host_memory.latency_ns * 1e-9 * dev.clock_hz) > 0
    assert pl.cycles < noc.cycles


def test_mlir_accepted_by_aie_opt():
    """Both levels go through mlir-aie's flow (objectfifo lowering, routing, buffer addresses): the
    objectfifo level's fifos carry plio = true, which mlir-aie lowers to flows from and to the PL shim's
    PLIO port and PLIO shim allocations; the physical level's switchboxes take the PL shim's South ports."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    p = tl.plan(build(), strategy="greedy")
    col = p.fifos["a"].producer.tile[0]
    obj = vendor.compile_text(tl.emit_mlir(p, level="objectfifo"), "objectfifo")
    lowered = obj.modules["lower"]
    assert f"aie.flow(%shim_pl_tile_{col}_0, PLIO : 0," in lowered
    assert f"aie.shim_dma_allocation @a_shim_alloc(%shim_pl_tile_{col}_0, MM2S, 0) {{plio = true}}" in lowered
    assert "aie.external_buffer" not in lowered  # the PL side holds the tensors, not DDR
    phys = vendor.compile_text(tl.emit_mlir(p, level="physical"), "physical")
    assert f"%shim_pl_tile_{col}_0 = aie.tile({col}, 0)" in phys.modules["lower"]
    assert "aie.shim_dma" not in phys.modules["lower"]


def test_pl_shims_are_mlir_aies():
    """Every shim tilelang takes as a PL shim is one mlir-aie's VC1902 model names ``shim_pl_tile`` (its
    isShimPLTile), every other one ``shim_noc_tile``."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    vc = tl.device("xcvc1902")
    tiles = "\n".join(f"    %t{c} = aie.tile({c}, 0)" for c in range(vc.cols))
    text = vendor.pretty(f"module {{\n  aie.device(xcvc1902) {{\n{tiles}\n  }}\n}}\n")
    for c in range(vc.cols):
        kind = "pl" if vc.is_pl_shim((c, 0)) else "noc"
        assert f"%shim_{kind}_tile_{c}_0 = aie.tile({c}, 0)" in text, c


def test_plan_json_round_trip():
    p = tl.plan(build(plio_in=True, plio_out=32), strategy="greedy")
    back = tl.ir.plan.Plan.from_json(p.to_json())
    assert back.to_json() == p.to_json()
    assert back.design.plio_of("a") == 64 and back.design.plio_of("c") == 32


def test_explain_names_plio():
    p = tl.plan(build(plio_in=32, plio_out=32), strategy="greedy")
    res = tl.simulate(p, X=np.arange(4 * N, dtype=np.int32))
    col = p.fifos["a"].producer.tile[0]
    assert f"plio ({col},0) mm2s 0" in res.stats.channels
    text = str(res.explain())
    assert "DDR" not in text
    assert "plio (" in text


def test_many_plio_streams_through_aie_opt():
    """48 PLIO streams (three on some PL shims): the physical level, which uses the planned PLIO channels,
    passes mlir-aie's flow; the objectfifo level, whose lowering numbers PLIO ends as the shim DMA's two
    channels, is a PlanError naming the shim (aie-opt itself rejects a third: 'output DMA channel exceeded')."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "plio_bench.py"
    spec = importlib.util.spec_from_file_location("plio_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    p = tl.plan(bench.streams(48, 64), strategy="greedy")
    per_shim = {}
    for name, fp in p.fifos.items():
        if name.startswith("a"):
            per_shim[fp.producer.tile] = per_shim.get(fp.producer.tile, 0) + 1
    assert max(per_shim.values()) > 2
    vendor.compile_text(tl.emit_mlir(p, level="physical"), "physical")
    with pytest.raises(tl.PlanError, match="PL shim \\(\\d+, 0\\) ends 3 PLIO fifos in MM2S.*level='physical'"):
        tl.emit_mlir(p, level="objectfifo")
