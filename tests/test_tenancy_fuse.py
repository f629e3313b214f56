"""tl.fuse: independent designs side by side in one design (API.md "Tenancy and fusion").

The fused design is planned and simulated; every output equals numpy and the design's own
simulation; the printed IR parses back; the design emits at both MLIR levels, and mlir-aie's
flow takes the emitted module when its tools are present.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang as tl
from tilelang.backends.mlir import vendor
from tilelang.tenancy import fuse


def _designs(device: str = "npu1") -> list:
    return [
        tl.library.elementwise("add", 1024, tl.i32, device=device, cores=1),
        tl.library.matmul(64, 64, 64, tl.i16, tl.i32, device=device, cores=1),
        tl.library.reduction("sum", 2048, tl.i32, device=device, cores=1),
    ]


def _inputs(rng: np.random.Generator) -> list[dict]:
    return [
        {"A": rng.integers(-100, 100, 1024).astype(np.int32), "B": rng.integers(-100, 100, 1024).astype(np.int32)},
        {"A": rng.integers(-8, 8, (64, 64)).astype(np.int16), "B": rng.integers(-8, 8, (64, 64)).astype(np.int16)},
        {"A": rng.integers(-100, 100, 2048).astype(np.int32)},
    ]


def _expected(ins: list[dict]) -> list[np.ndarray]:
    a, m, r = ins
    return [a["A"] + a["B"], m["A"].astype(np.int32) @ m["B"].astype(np.int32), np.array([r["A"].sum()], np.int32)]


@pytest.fixture(scope="module")
def fused_plan():
    designs = _designs()
    fused = fuse(designs, device="npu1")
    return designs, fused, tl.plan(fused)


def test_names_are_prefixed_and_each_design_keeps_its_move_order(fused_plan) -> None:
    designs, fused, _ = fused_plan
    assert list(fused.tensors) == [f"d{i}_{t}" for i, d in enumerate(designs) for t in d.tensors]
    assert [c.name for c in fused.cores] == [f"d{i}_{c.name}" for i, d in enumerate(designs) for c in d.cores]
    assert [f.name for f in fused.fifos] == [f"d{i}_{f.name}" for i, d in enumerate(designs) for f in d.fifos]
    for i, d in enumerate(designs):
        mine = [m.name for m in fused.dmas if m.name.startswith(f"d{i}_")]
        assert mine == [f"d{i}_{m.name}" for m in d.dmas]
    # moves are interleaved, not concatenated: the second design's first move comes before the first's last
    names = [m.name for m in fused.dmas]
    assert names.index(f"d1_{designs[1].dmas[0].name}") < names.index(f"d0_{designs[0].dmas[-1].name}")


def test_fused_outputs_equal_numpy_and_separate_runs(fused_plan) -> None:
    designs, fused, plan = fused_plan
    ins = _inputs(np.random.default_rng(1))
    arrays = {f"d{i}_{k}": v for i, x in enumerate(ins) for k, v in x.items()}
    res = tl.simulate(plan, **arrays)
    for i, (d, x, want) in enumerate(zip(designs, ins, _expected(ins), strict=True)):
        got = res.outputs[f"d{i}_C"]
        np.testing.assert_array_equal(got, want)
        alone = tl.simulate(d, **x)
        np.testing.assert_array_equal(got, alone.outputs["C"])
        assert res.cycles >= alone.cycles * 0.5  # same device, same cost model: fusion cannot halve a design's time


def test_fused_ir_round_trips(fused_plan) -> None:
    _, fused, plan = fused_plan
    text = tl.ir.print(fused)
    assert tl.ir.print(tl.ir.parse(text)) == text
    ptext = tl.ir.print(plan)
    assert tl.ir.print(tl.ir.parse(ptext)) == ptext


@pytest.mark.parametrize("level", ["objectfifo", "physical"])
def test_fused_design_emits(fused_plan, level: str) -> None:
    pytest.importorskip("mlir.ir")
    _, fused, plan = fused_plan
    text = tl.emit_mlir(plan, level=level)
    for c in fused.cores:
        col, row = plan.placement[c.name]
        assert f"col = {col} : i32, row = {row} : i32" in text
    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    res = vendor.compile_text(text, level)
    assert res.npu_insts


def test_fuse_refuses_another_device_naming_the_design() -> None:
    d = tl.library.elementwise("add", 1024, tl.i32, device="npu2", cores=1)
    with pytest.raises(tl.DesignError, match=r"design 1 \('elementwise_add_i32'\) targets npu2, not npu1"):
        fuse([_designs()[0], d], device="npu1")


def test_fuse_refuses_more_cores_than_the_device_has() -> None:
    big = tl.library.elementwise("add", 4096, tl.i32, device="npu1_1col", cores=2)
    with pytest.raises(tl.DesignError, match=r"design 2 \('elementwise_add_i32'\) brings the fused design to 6 cores"):
        fuse([big, big, big], device="npu1_1col")


def test_fuse_refuses_nothing() -> None:
    with pytest.raises(tl.DesignError, match="at least one design"):
        fuse([], device="npu1")


@tl.kernel
def relu32(a: tl.Tile[(32, 32), tl.i16], c: tl.Tile[(32, 32), tl.i16]):
    c[...] = tl.relu(a)


def _chain() -> list:
    gemm = {"device": "npu1", "cores": 1, "tiling": {"m": 32, "k": 32, "n": 32}}
    return [tl.library.matmul(32, 32, 32, tl.i16, tl.i16, **gemm),
            tl.library.elementwise(relu32, 32, device="npu1", cores=1),
            tl.library.matmul(32, 32, 32, tl.i16, tl.i32, **gemm)]


def test_connected_designs_fuse_through_an_on_chip_fifo() -> None:
    """GEMM -> relu -> GEMM: the two intermediate tensors leave DDR; the result still equals numpy."""
    fused = fuse(_chain(), device="npu1", connect=[(0, "C", 1, "A"), (1, "C", 2, "A")])
    assert list(fused.tensors) == ["d0_A", "d0_B", "d2_B", "d2_C"]
    rng = np.random.default_rng(2)
    a, b, b2 = (rng.integers(-4, 4, (32, 32)).astype(np.int16) for _ in range(3))
    res = tl.simulate(tl.plan(fused), d0_A=a, d0_B=b, d2_B=b2)
    hidden = np.maximum((a.astype(np.int32) @ b.astype(np.int32)).astype(np.int16), 0)  # i16 C wraps
    np.testing.assert_array_equal(res.outputs["d2_C"], hidden.astype(np.int32) @ b2.astype(np.int32))
    assert res.stats.ddr_bytes_read == 2 * 3 * 32 * 32 and res.stats.ddr_bytes_written == 4 * 32 * 32


def test_a_connection_in_another_order_keeps_ddr_and_says_so() -> None:
    gemm = _chain()[0]
    flat = tl.library.elementwise("relu", 1024, tl.i16, device="npu1", cores=1)
    with pytest.raises(tl.DesignError, match=r"cannot feed design 1's 'A' on chip: 'C' is tensor<32x32xi16> but "
                                             r"'A' is tensor<1024xi16>.*run them one after another"):
        fuse([gemm, flat], device="npu1", connect=[(0, "C", 1, "A")])
    with pytest.raises(tl.DesignError, match="producer must be an earlier design"):
        fuse([gemm, flat], device="npu1", connect=[(1, "C", 0, "A")])


@pytest.mark.parametrize("connect, match", [
    ([(0, "C", 1, "A"), (0, "C", 1, "A")], "both feed design 1's 'A'; an input takes one producer"),
    ([(0, "C", 1, "A"), (0, "C", 1, "B")], "one on-chip fifo cannot be two of its inputs"),
    ([(True, "C", 2, "A")], r"connection \(True, 'C', 2, 'A'\) is not \(i, 'C', j, 'A'\)"),
    ([(0, "C", 1)], r"connection \(0, 'C', 1\) is not"),
    ((0, "C", 1, "A"), "connect takes a list of"),
])
def test_malformed_connections_are_named(connect, match) -> None:
    adds = [tl.library.elementwise("add", 1024, tl.i32, device="npu1", cores=1) for _ in range(3)]
    with pytest.raises(tl.DesignError, match=match):
        fuse(adds, device="npu1", connect=connect)
    with pytest.raises(tl.DesignError, match="takes a list of Designs, got Design"):
        fuse(adds[0], device="npu1")


def test_one_output_feeds_two_designs() -> None:
    adds = [tl.library.elementwise("add", 1024, tl.i32, device="npu1", cores=1) for _ in range(3)]
    fused = fuse(adds, device="npu1", connect=[(0, "C", 1, "A"), (0, "C", 2, "A")])
    rng = np.random.default_rng(3)
    ins = {n: rng.integers(-50, 50, fused.tensors[n].shape).astype(np.int32) for n in fused.inputs}
    res = tl.simulate(tl.plan(fused), **ins)
    c0 = ins["d0_A"] + ins["d0_B"]
    np.testing.assert_array_equal(res.outputs["d1_C"], c0 + ins["d1_B"])
    np.testing.assert_array_equal(res.outputs["d2_C"], c0 + ins["d2_B"])
