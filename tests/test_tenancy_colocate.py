"""tl.colocate: tenants on disjoint column partitions, simulated together, emitted one aie.device each."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tilelang as tl
from tilelang.backends.mlir import vendor
from tilelang.ir.plan_verify import verify_plan
from tilelang.tenancy.colocate import Candidates, best_split


def _add(device: str = "npu1") -> tl.ir.design.Design:
    return tl.library.elementwise("add", 1024, tl.i32, device=device, cores=1)


def _sum(device: str = "npu1") -> tl.ir.design.Design:
    return tl.library.reduction("sum", 2048, tl.i32, device=device, cores=1)


@pytest.fixture(scope="module")
def mp() -> tl.MultiPlan:
    return tl.colocate({"a": _add(), "b": _sum()}, device="npu1", columns={"a": (0, 1), "b": (2, 2)})


def _arrays(rng: np.random.Generator) -> tuple[dict, dict]:
    a = {"A": rng.integers(-99, 99, 1024).astype(np.int32), "B": rng.integers(-99, 99, 1024).astype(np.int32)}
    b = {"A": rng.integers(-99, 99, 2048).astype(np.int32)}
    return a, b


def test_each_tenant_is_confined_to_its_columns(mp: tl.MultiPlan) -> None:
    assert mp.columns == {"a": (0, 1), "b": (2, 2)}
    assert mp.tenants["b"].local.device.name == "npu1_2col"
    for name, (first, width) in mp.columns.items():
        plan = mp.plans[name]
        assert plan.device.name == "npu1"
        tiles = list(plan.placement.values()) + [b.tile for b in plan.buffers.values()]
        tiles += [e.tile for f in plan.fifos.values() for e in (f.producer, *f.consumers)]
        tiles += [t for r in plan.routes.values() for link in r.links for t in link]
        assert tiles and all(first <= c < first + width for c, _ in tiles), name
    # the moved plan is the local plan shifted east, nothing else
    local, moved = mp.tenants["b"].local, mp.plans["b"]
    assert {k: (c + 2, r) for k, (c, r) in local.placement.items()} == moved.placement
    assert sorted(local.buffers) == sorted(moved.buffers)


def test_joint_simulation_equals_numpy_and_each_tenant_alone(mp: tl.MultiPlan) -> None:
    a, b = _arrays(np.random.default_rng(3))
    res = tl.simulate(mp, a=a, b=b)
    np.testing.assert_array_equal(res["a"].outputs["C"], a["A"] + a["B"])
    np.testing.assert_array_equal(res["b"].outputs["C"], [b["A"].sum()])
    assert res.makespan == max(res["a"].cycles, res["b"].cycles) > 0
    alone_a = tl.simulate(mp.tenants["a"].local, **a)
    alone_b = tl.simulate(mp.tenants["b"].local, **b)
    # sharing DDR can only delay a tenant
    assert res["a"].cycles >= alone_a.cycles and res["b"].cycles >= alone_b.cycles
    assert res["a"].stats.ddr_bytes_read == alone_a.stats.ddr_bytes_read
    assert res["a"].stats.ddr_bytes_written == alone_a.stats.ddr_bytes_written
    assert set(res["a"].stats.cores) == {c.name for c in mp.tenants["a"].local.design.cores}


def test_simulation_is_deterministic(mp: tl.MultiPlan) -> None:
    a, b = _arrays(np.random.default_rng(4))
    one, two = tl.simulate(mp, a=a, b=b, trace=False), tl.simulate(mp, a=a, b=b, trace=False)
    assert [one[t].cycles for t in "ab"] == [two[t].cycles for t in "ab"]


def test_search_picks_the_split_brute_force_finds() -> None:
    """best_split against every assignment of widths, on made-up cycle tables (no planning)."""
    rng = np.random.default_rng(7)
    dev = tl.device("npu2")
    for _ in range(20):
        names = ["a", "b", "c"]
        table = {(n, w): int(rng.integers(100, 1000)) // w for n in names for w in range(1, 9)}
        cand = Candidates(dev, dict.fromkeys(names), lambda d: d, lambda p: p)
        cand.plan = lambda n, w: None  # type: ignore[method-assign]
        cand.predicted = lambda n, w, t=table: t[(n, w)]  # type: ignore[method-assign]
        widths, worst = best_split(cand, names)
        brute = min(max(table[(n, w)] for n, w in zip(names, s, strict=True))
                    for s in np.ndindex(8, 8, 8) if sum(x + 1 for x in s) <= 8
                    for s in [tuple(x + 1 for x in s)])
        assert worst == brute and sum(widths) <= 8


def test_colocate_chooses_columns_when_not_given() -> None:
    mp = tl.colocate({"a": _add(), "b": _sum()}, device="npu1")
    firsts = [mp.columns[t][0] for t in "ab"]
    assert firsts[0] == 0 and firsts[1] == mp.columns["a"][1]
    assert "exact search" in mp.how and "a" in mp.report()


def test_a_tenant_that_does_not_fit_is_named() -> None:
    big = tl.library.elementwise("add", 8192, tl.i32, device="npu1", cores=8)
    with pytest.raises(tl.PlanError, match=r"tenant 'big' does not fit 1 column"):
        tl.colocate({"small": _add(), "big": big}, device="npu1", columns={"small": (0, 1), "big": (1, 1)})


def test_overlapping_columns_are_refused() -> None:
    with pytest.raises(tl.PlanError, match="both hold column 1"):
        tl.colocate({"a": _add(), "b": _sum()}, device="npu1", columns={"a": (0, 2), "b": (1, 1)})


def test_unknown_tenant_arrays_are_refused(mp: tl.MultiPlan) -> None:
    with pytest.raises(tl.SimulationError, match=r"no tenant\(s\) \['c'\]"):
        tl.simulate(mp, c={})
    a, _ = _arrays(np.random.default_rng(0))
    with pytest.raises(tl.SimulationError, match=r"tenant 'b' reads tensor\(s\) \['A'\] but no array was given"):
        tl.simulate(mp, a=a)
    assert tl.simulate(mp, mode="timing").makespan > 0  # timing mode needs no arrays


@pytest.mark.parametrize("level", ["objectfifo", "physical"])
def test_one_device_per_tenant_mlir_aie_accepts(mp: tl.MultiPlan, level: str) -> None:
    pytest.importorskip("mlir.ir")
    text = tl.emit_mlir(mp, level=level)
    assert text.count('"aie.device"') == 2
    assert 'sym_name = "a"' in text and 'sym_name = "b"' in text
    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    tools = vendor.require_tools()
    custom = vendor.run_tool(tools.aie_opt, [], text, "verify")
    assert "aie.device(npu1_1col) @a" in custom and "aie.device(npu1_2col) @b" in custom
    for name, t in mp.tenants.items():  # each partition through mlir-aie's whole flow, as any design
        res = vendor.compile_text(tl.emit_mlir(t.local, level=level), level)
        assert res.npu_insts, name


def test_partition_picture_names_every_tenant(mp: tl.MultiPlan, tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip("matplotlib")
    from tilelang.tenancy.picture import draw_partitions

    fig = draw_partitions(mp)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "a (npu1_1col)" in texts and "b (npu1_2col)" in texts
    fig.savefig(tmp_path / "parts.png")
    assert (tmp_path / "parts.png").stat().st_size > 0


def test_moved_and_joint_plans_pass_the_plan_verifier_and_pins_move_too() -> None:
    d = _add()
    pinned = dataclasses.replace(d, cores=tuple(dataclasses.replace(c, tile=(0, 3)) for c in d.cores))
    mp = tl.colocate({"s": _sum(), "p": pinned}, device="npu1", columns={"s": (0, 1), "p": (2, 1)})
    core = pinned.cores[0].name
    assert mp.tenants["p"].local.placement[core] == (0, 3)
    assert mp.plans["p"].placement[core] == (2, 3) and mp.plans["p"].design.core(core).tile == (2, 3)
    for plan in (*mp.plans.values(), mp.joint):
        verify_plan(plan)
    text = tl.ir.print(mp.joint)
    assert tl.ir.print(tl.ir.parse(text)) == text


@pytest.mark.parametrize("cols", [(0,), (0, 0), ("0", 1), (3, 2)])
def test_malformed_columns_are_refused(cols: tuple) -> None:
    with pytest.raises(tl.PlanError, match="columns"):
        tl.colocate({"a": _add()}, device="npu1", columns={"a": cols})
