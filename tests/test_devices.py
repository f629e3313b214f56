"""Tests of tilelang.devices: the API.md Devices contract and hand-checked facts.

Expected numbers are worked out by hand from /work/shared/AIE_FACTS.md and
mlir-aie's AIETargetModel (see docs/devices.md), not read back from the tables.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from tilelang.devices import Device, device, devices
from tilelang.errors import DesignError
from tilelang.ir.dtypes import bf16, f32, i8, i16, i32

REQUIRED = ["npu1", "npu2", "xcvc1902", "xcve2802", "xcve2302"]
ALL = devices()


# -- the contract, for every device -------------------------------------------


def test_known_names():
    assert ALL == sorted(ALL)
    for name in REQUIRED:
        assert name in ALL
    assert {f"npu1_{c}col" for c in (1, 2, 3)} <= set(ALL)
    assert {f"npu2_{c}col" for c in range(1, 8)} <= set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_contract(name: str):
    dev = device(name)
    assert isinstance(dev, Device)
    assert dev.name == name
    assert device(dev) is dev
    assert dev.clock_hz > 0 and dev.stream_bits > 0 and dev.vector_bits > 0
    tiles = dev.tiles()
    assert tiles == sorted(tiles) and len(tiles) == dev.cols * dev.rows
    by_kind = {k: dev.tiles(k) for k in ("shim", "mem", "compute")}
    assert sorted(t for kind in by_kind.values() for t in kind) == tiles
    assert by_kind["shim"] == [(c, 0) for c in range(dev.cols)]
    for tile in tiles:
        kind = dev.tile_kind(tile)
        assert kind in ("shim", "mem", "compute")
        assert dev.memory_bytes(tile) >= 0
        assert (dev.memory_bytes(tile) == 0) == (kind == "shim")
        for n in dev.neighbours(tile):
            assert dev.link_capacity(tile, n) >= 0
    assert dev.tile_kind((0, dev.rows - 1)) == "compute"
    assert dev.macs_per_cycle(i8) > 0 and dev.macs_per_cycle(i16) > 0
    assert json.loads(json.dumps(dev.to_dict()))["name"] == name


@pytest.mark.parametrize("name", ALL)
def test_links_match_ports_both_ways(name: str):
    # mlir-aie's AIETargetModel::validate: the master ports one tile drives toward
    # a neighbour equal the slave ports the neighbour has from that side.
    dev = device(name)
    opposite = {"North": "South", "South": "North", "East": "West", "West": "East"}
    step = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}
    for a in dev.tiles():
        for bundle, (dc, dr) in step.items():
            b = (a[0] + dc, a[1] + dr)
            if not (0 <= b[0] < dev.cols and 0 <= b[1] < dev.rows):
                assert dev.link_capacity(a, b) == 0
                # A shim's South ports lead to its shim mux, not to a tile.
                if bundle != "South":
                    assert dev.ports(a, bundle, "out") == 0
                    assert dev.ports(a, bundle, "in") == 0
                continue
            out_a = dev.ports(a, bundle, "out")
            assert out_a == dev.ports(b, opposite[bundle], "in")
            assert dev.link_capacity(a, b) == out_a


@pytest.mark.parametrize("name", ALL)
def test_links_list(name: str):
    dev = device(name)
    links = dev.links()
    assert links == sorted(links) and len(set(links)) == len(links)
    for a, b in links:
        assert b in dev.neighbours(a) and dev.link_capacity(a, b) > 0
    every = {(a, b) for a in dev.tiles() for b in dev.neighbours(a) if dev.link_capacity(a, b) > 0}
    assert set(links) == every


# -- hand-checked npu1 facts ---------------------------------------------------


def test_npu1_layout():
    npu1 = device("npu1")
    assert (npu1.cols, npu1.rows, npu1.family, npu1.aie_device_id) == (4, 6, "aie2", 4)
    assert len(npu1.tiles("compute")) == 16
    assert npu1.tiles("mem") == [(0, 1), (1, 1), (2, 1), (3, 1)]
    assert npu1.tile_kind((0, 1)) == "mem" and npu1.memory_bytes((0, 1)) == 524288
    assert npu1.tile_kind((3, 5)) == "compute" and npu1.memory_bytes((3, 5)) == 65536
    assert npu1.tile_kind((2, 0)) == "shim" and npu1.memory_bytes((2, 0)) == 0
    assert all(npu1.is_noc_shim(t) for t in npu1.tiles("shim"))
    assert not npu1.is_noc_shim((0, 1))


def test_npu1_links():
    npu1 = device("npu1")
    assert npu1.link_capacity((1, 2), (1, 3)) == 6  # core North out 6, core South in 6
    assert npu1.link_capacity((1, 3), (1, 2)) == 4  # core South out 4, core North in 4
    assert npu1.link_capacity((1, 2), (2, 2)) == 4 and npu1.link_capacity((2, 2), (1, 2)) == 4
    assert npu1.link_capacity((0, 0), (0, 1)) == 6  # shim North out 6 -> memtile South in 6
    assert npu1.link_capacity((0, 1), (0, 0)) == 4  # memtile South out 4 -> shim North in 4
    assert npu1.link_capacity((0, 1), (0, 2)) == 6 and npu1.link_capacity((0, 2), (0, 1)) == 4
    assert npu1.link_capacity((0, 1), (1, 1)) == 0 and npu1.link_capacity((1, 1), (0, 1)) == 0
    assert npu1.ports((1, 1), "East", "out") == 0 and npu1.ports((1, 1), "West", "in") == 0
    assert npu1.link_capacity((0, 0), (1, 0)) == 4  # shims talk east/west
    assert npu1.link_capacity((1, 2), (2, 3)) == 0  # diagonal
    assert npu1.link_capacity((1, 2), (1, 4)) == 0  # two apart
    assert npu1.link_capacity((3, 5), (4, 5)) == 0  # off the array: 0, no error
    assert npu1.link_capacity((0, 5), (0, 6)) == 0
    # 4 columns x 5 vertical pairs x 2 directions + 5 rows (shim, 4 core rows) x 3 pairs x 2
    assert len(npu1.links()) == 40 + 30


def test_npu1_ports():
    npu1 = device("npu1")
    core, mem, shim = (1, 3), (1, 1), (1, 0)
    assert [npu1.ports(core, b, "out") for b in ("Core", "DMA", "FIFO", "Trace")] == [
        1,
        2,
        1,
        0,
    ]
    assert [npu1.ports(core, b, "in") for b in ("Core", "DMA", "FIFO", "Trace")] == [
        1,
        2,
        1,
        2,
    ]
    assert npu1.ports(mem, "DMA", "out") == 6 and npu1.ports(mem, "DMA", "in") == 6
    assert npu1.ports(shim, "South", "out") == 6 and npu1.ports(shim, "South", "in") == 8
    assert npu1.ports((0, 3), "West", "out") == 0 and npu1.ports((3, 3), "East", "in") == 0
    assert npu1.ports((2, 5), "North", "out") == 0
    assert npu1.ports(core, "north", "master") == 6  # case and master/slave spelling accepted


def test_npu1_dma_locks_bds():
    npu1 = device("npu1")
    core, mem, shim = (0, 2), (0, 1), (0, 0)
    assert [npu1.locks(t) for t in (core, mem, shim)] == [16, 64, 16]
    assert [npu1.buffer_descriptors(t) for t in (core, mem, shim)] == [16, 48, 16]
    assert [npu1.memory_banks(t) for t in (core, mem, shim)] == [4, 8, 0]
    assert [npu1.dma_channels(t, "s2mm") for t in (core, mem, shim)] == [2, 6, 2]
    assert [npu1.dma_channels(t, "mm2s") for t in (core, mem, shim)] == [2, 6, 2]
    assert [npu1.dma_dims(t) for t in (core, mem, shim)] == [3, 4, 3]
    assert npu1.bd_field_bits(core) == {
        "len": 14,
        "wrap": 8,
        "stride": 13,
        "iteration": 6,
    }
    assert npu1.bd_field_bits(mem) == {
        "len": 17,
        "wrap": 10,
        "stride": 17,
        "iteration": 6,
    }
    assert npu1.bd_field_bits(shim) == {
        "len": 32,
        "wrap": 10,
        "stride": 20,
        "iteration": 6,
    }
    npu1.bd_field_bits(core)["len"] = 99  # a fresh dict each time
    assert npu1.bd_field_bits(core)["len"] == 14


# -- hand-checked xcvc1902 / xcve facts ---------------------------------------


def test_xcvc1902():
    vc = device("xcvc1902")
    assert (vc.cols, vc.rows, vc.family, vc.aie_device_id) == (50, 9, "aie1", 1)
    assert len(vc.tiles("compute")) == 400 and vc.tiles("mem") == []
    assert vc.memory_bytes((10, 4)) == 32768 and vc.memory_banks((10, 4)) == 4
    noc = [c for c, _ in vc.tiles("shim") if vc.is_noc_shim((c, 0))]
    assert noc == [2, 3, 6, 7, 10, 11, 18, 19, 26, 27, 34, 35, 42, 43, 46, 47]
    assert vc.dma_channels((2, 0), "mm2s") == 2 and vc.dma_channels((0, 0), "mm2s") == 0
    assert vc.buffer_descriptors((0, 0)) == 0 and vc.buffer_descriptors((2, 0)) == 16
    assert vc.link_capacity((0, 0), (0, 1)) == 6 and vc.link_capacity((0, 1), (0, 0)) == 4
    assert vc.link_capacity((5, 8), (5, 9)) == 0
    assert vc.ports((5, 5), "DMA", "out") == 2 and vc.ports((5, 5), "Core", "in") == 2


def test_xcve_devices():
    ve = device("xcve2802")
    assert (ve.cols, ve.rows, ve.family, ve.aie_device_id) == (38, 11, "aieml", 3)
    assert [ve.tile_kind((0, r)) for r in range(4)] == ["shim", "mem", "mem", "compute"]
    assert len(ve.tiles("compute")) == 38 * 8
    assert ve.link_capacity((4, 1), (4, 2)) == 6 and ve.link_capacity((4, 2), (4, 1)) == 4
    assert ve.link_capacity((4, 2), (5, 2)) == 0
    small = device("xcve2302")
    assert (small.cols, small.rows, small.aie_device_id) == (17, 4, 2)
    assert small.tiles("mem") == [(c, 1) for c in range(17)]
    assert small.is_noc_shim((2, 0)) and not small.is_noc_shim((0, 0))


def test_subsets_and_ids():
    ids = {"npu1": 4, "npu1_1col": 5, "npu1_2col": 6, "npu1_3col": 7, "npu2": 8}
    ids.update({f"npu2_{c}col": 8 + c for c in range(1, 8)})
    for name, dev_id in ids.items():
        dev = device(name)
        assert dev.aie_device_id == dev_id
        assert dev.rows == 6 and dev.family == ("aie2" if name.startswith("npu1") else "aie2p")
    assert device("npu1_2col").cols == 2 and len(device("npu2_3col").tiles("compute")) == 12
    assert device("npu2").cols == 8 and len(device("npu2").tiles("compute")) == 32
    assert device("npu1_4col") is device("npu1")


# -- shared memories -----------------------------------------------------------


def test_shared_memory_aie2():
    npu1 = device("npu1")
    # own, west, north, south; a memtile south of the core is excluded
    assert npu1.shared_memory_tiles((2, 3)) == [(1, 3), (2, 2), (2, 3), (2, 4)]
    assert npu1.shared_memory_tiles((1, 2)) == [(0, 2), (1, 2), (1, 3)]
    assert npu1.shared_memory_tiles((0, 5)) == [(0, 4), (0, 5)]
    assert device("xcve2802").shared_memory_tiles((0, 3)) == [(0, 3), (0, 4)]


def test_shared_memory_aie1_checkerboard():
    vc = device("xcvc1902")
    assert vc.shared_memory_tiles((3, 2)) == [
        (3, 1),
        (3, 2),
        (3, 3),
        (4, 2),
    ]  # even row: east
    assert vc.shared_memory_tiles((3, 3)) == [
        (2, 3),
        (3, 2),
        (3, 3),
        (3, 4),
    ]  # odd row: west
    assert vc.shared_memory_tiles((0, 1)) == [(0, 1), (0, 2)]  # no west, no shim south
    assert vc.shared_memory_tiles((49, 8)) == [(49, 7), (49, 8)]  # no east at the edge


def test_shared_memory_needs_a_core():
    with pytest.raises(DesignError, match=r"compute tile.*mem tile"):
        device("npu1").shared_memory_tiles((0, 1))
    with pytest.raises(DesignError, match="off the npu1 array"):
        device("npu1").shared_memory_tiles((0, 6))


# -- compute rates ------------------------------------------------------------


def test_compute_rates():
    npu1, npu2, vc = device("npu1"), device("npu2"), device("xcvc1902")
    assert (
        npu1.macs_per_cycle(i8),
        npu1.macs_per_cycle(i16),
        npu1.macs_per_cycle(bf16),
    ) == (256, 64, 128)
    for dt in (i8, i16, bf16, i32, f32):
        assert npu2.macs_per_cycle(dt) == 2 * npu1.macs_per_cycle(dt)
    assert 0 < npu1.macs_per_cycle(f32) < npu1.macs_per_cycle(bf16)  # emulated estimate
    assert npu1.macs_per_cycle("bf16") == 128
    assert (vc.macs_per_cycle(i8), vc.macs_per_cycle(i16), vc.macs_per_cycle(f32)) == (
        128,
        32,
        8,
    )
    # Published VC1902 peaks at its 1.25 GHz (2 ops per MAC): MaxEVA "8 TFLOPs for fp32,
    # and 128 TOPs for int8"; AIE_FACTS' 1 GHz peaks (102.4 TOPS int8, 25.6 int16, 6.4
    # TFLOPS f32) scale by 1.25.
    assert vc.clock_hz == 1.25e9
    assert 2 * vc.peak_macs_per_second(i8) == pytest.approx(128e12)
    assert 2 * vc.peak_macs_per_second(i16) == pytest.approx(25.6e12 * 1.25)
    assert 2 * vc.peak_macs_per_second(f32) == pytest.approx(8e12)
    assert npu1.peak_macs_per_second(bf16) == 16 * 128 * npu1.clock_hz


def test_vector_lanes_and_bandwidth():
    npu1, vc = device("npu1"), device("xcvc1902")
    assert [npu1.vector_lanes(d) for d in (i8, i16, bf16, i32, f32)] == [
        64,
        32,
        32,
        16,
        16,
    ]
    assert [vc.vector_lanes(d) for d in (i8, i16, i32, f32)] == [32, 16, 8, 8]
    assert npu1.shim_bandwidth_bytes_per_cycle() == 4.0


def test_unsupported_dtype():
    vc = device("xcvc1902")
    assert not vc.supports_dtype(bf16) and device("npu1").supports_dtype(bf16)
    with pytest.raises(DesignError, match="no bf16"):
        vc.macs_per_cycle(bf16)
    with pytest.raises(DesignError, match="no bf16"):
        vc.vector_lanes(bf16)
    with pytest.raises(DesignError, match="unknown dtype"):
        vc.macs_per_cycle("f64")


# -- errors -------------------------------------------------------------------


def test_unknown_name_lists_known():
    with pytest.raises(DesignError, match="unknown device 'npu9'") as info:
        device("npu9")
    for name in REQUIRED:
        assert name in str(info.value)
    with pytest.raises(DesignError, match="device name or a Device"):
        device(4)  # type: ignore[arg-type]


@pytest.mark.parametrize("tile", [(4, 2), (0, 6), (-1, 0), (0, -1)])
def test_off_array_tile(tile):
    npu1 = device("npu1")
    with pytest.raises(DesignError, match=r"off the npu1 array.*4 columns x 6 rows"):
        npu1.tile_kind(tile)
    with pytest.raises(DesignError, match="off the npu1 array"):
        npu1.memory_bytes(tile)
    with pytest.raises(DesignError, match="off the npu1 array"):
        npu1.neighbours(tile)


def test_bad_arguments():
    npu1 = device("npu1")
    with pytest.raises(DesignError, match="pair of ints"):
        npu1.tile_kind((1, 2, 3))  # type: ignore[arg-type]
    with pytest.raises(DesignError, match="pair of ints"):
        npu1.link_capacity((1.0, 2), (1, 3))  # type: ignore[arg-type]
    with pytest.raises(DesignError, match="unknown stream bundle"):
        npu1.ports((1, 2), "Up", "out")
    with pytest.raises(DesignError, match="port direction"):
        npu1.ports((1, 2), "North", "sideways")
    with pytest.raises(DesignError, match="DMA direction"):
        npu1.dma_channels((1, 2), "in")
    with pytest.raises(DesignError, match="tile kind"):
        npu1.tiles("core")


# -- immutability and determinism ---------------------------------------------


def test_frozen_and_deterministic():
    npu1 = device("npu1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        npu1.cols = 5  # type: ignore[misc]
    assert device("npu1") is npu1 and hash(npu1) == hash(device("npu1"))
    assert json.dumps(npu1.to_dict(), sort_keys=True) == json.dumps(device("npu1").to_dict(), sort_keys=True)
    assert npu1.links() == npu1.links()
    assert npu1.neighbours((1, 2)) == [(0, 2), (1, 1), (1, 3), (2, 2)]
    assert repr(npu1) == "Device('npu1')"
    summary = npu1.to_dict()
    assert summary["tile_counts"] == {"shim": 4, "mem": 4, "compute": 16}
    assert summary["tile_kinds"]["mem"]["memory_bytes"] == 524288
