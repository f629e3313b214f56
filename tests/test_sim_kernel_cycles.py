"""``tl.simulate(..., kernel_cycles={name: cycles})``: measured cycles per call instead of the cost model's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang as tl
from tilelang.cli import main as cli
from tilelang.errors import SimulationError
from tilelang.ir.kernel_cost import kernel_cycles

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import designs  # noqa: E402
import matrix_multiplication_extern as mme  # noqa: E402


@pytest.fixture(scope="module")
def vsm() -> tuple[object, dict]:
    d = designs.vector_scalar_mul(16384, 1024)
    return tl.plan(d, strategy="greedy"), {"A": np.arange(16384, dtype=np.int32)}


def test_a_call_given_its_cycles_takes_exactly_them(vsm) -> None:
    plan, arrays = vsm
    calls = 16
    runs = {g: tl.simulate(plan, kernel_cycles={"scale": g}, **arrays) for g in (20_000, 50_000)}
    for g, res in runs.items():
        core = res.stats.cores["worker"]
        assert core.calls == calls and core.busy == calls * g and core.banks == 0
        assert np.array_equal(res.outputs["C"], arrays["A"] * 3)  # the numbers are the kernel's still
    # compute bound at both: the run grows by exactly the calls' extra cycles, the rest (fill, drain) fixed
    assert runs[50_000].cycles - runs[20_000].cycles == calls * 30_000


def test_timing_mode_gives_the_timed_runs_cycles_and_statistics(vsm) -> None:
    plan, arrays = vsm
    given = {"scale": 777}
    timed = tl.simulate(plan, kernel_cycles=given, trace=False, **arrays)
    timing = tl.simulate(plan, mode="timing", kernel_cycles=given, trace=False)
    assert timing.cycles == timed.cycles and timing.stats == timed.stats
    assert timed.kernel_cycles == given == timing.kernel_cycles


def test_a_gemm_with_bank_conflicts_is_charged_none_for_a_given_kernel() -> None:
    d = tl.library.matmul(128, 128, 128, in_dtype=tl.bf16, device="npu1", tiling={"m": 32, "k": 32, "n": 32})
    plan = tl.plan(d, strategy="greedy")
    names = [k.name for k in d.kernels]
    model = tl.simulate(plan, mode="timing", trace=False)
    given = {n: kernel_cycles(k, d.device) for n, k in zip(names, d.kernels, strict=True)}
    res = tl.simulate(plan, mode="timing", trace=False, kernel_cycles=given)
    assert any(s.banks for s in model.stats.cores.values())  # the model's run has conflicts to leave out
    calls = {c: s.calls for c, s in res.stats.cores.items()}
    assert calls == {c: s.calls for c, s in model.stats.cores.items()}
    for c, s in res.stats.cores.items():
        assert s.banks == 0
        assert s.busy == model.stats.cores[c].busy - model.stats.cores[c].banks  # the model's calls less their conflicts


def test_traced_kernels_given_cycles_run_as_extern_kernels_declaring_them() -> None:
    """Two paths to one timing: extern kernels' declared cycles and traced kernels' given cycles (both
    without bank effects) give the same run, and the numbers of both equal numpy's."""
    t = 32
    c_t, a_t = tl.Tile[(t, t), tl.f32], tl.Tile[(t, t), tl.bf16]

    @tl.kernel
    def zero(c: c_t):
        c[...] = 0.0

    @tl.kernel
    def mac(a: a_t, b: a_t, c: c_t):
        c[...] += a @ b

    def zero_ref(c: np.ndarray) -> None:
        c[...] = 0

    def mac_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        c[...] += a.astype(np.float32) @ b.astype(np.float32)

    ext_zero = tl.extern_kernel("zero", [("c", c_t)], reference=zero_ref, cycles=321)
    ext_mac = tl.extern_kernel("mac", [("a", a_t), ("b", a_t), ("c", c_t)], reference=mac_ref, cycles=4321)
    rng = np.random.default_rng(0)
    arrays = {"A": rng.integers(-4, 5, (128, 128)).astype(np.float32),
              "B": rng.integers(-4, 5, (128, 128)).astype(np.float32)}
    given = tl.simulate(tl.plan(mme.build(128, t, kernels=(zero, mac)), strategy="greedy"),
                        kernel_cycles={"zero": 321, "mac": 4321}, **arrays)
    declared = tl.simulate(tl.plan(mme.build(128, t, kernels=(ext_zero, ext_mac)), strategy="greedy"), **arrays)
    assert given.cycles == declared.cycles and given.stats == declared.stats
    for res in (given, declared):
        assert np.array_equal(res.outputs["C"], arrays["A"] @ arrays["B"])


def test_an_extern_kernels_declared_cycles_are_replaced() -> None:
    design = mme.build(64, 32)
    plan = tl.plan(design, strategy="greedy")
    res = tl.simulate(plan, mode="timing", trace=False,
                      kernel_cycles={"zero_scalar_f32": 10, "matmul_scalar_bf16_f32": 100_000})
    core = res.stats.cores["mm"]
    assert core.busy == 4 * 10 + 8 * 100_000  # 2 x 2 C tiles, each zeroed once and 2 K steps
    assert "matmul_scalar_bf16_f32 (extern kernel: 100000 cycles per call, given)" in res.explain().text()


def test_explain_says_the_cycles_were_given(vsm) -> None:
    plan, arrays = vsm
    text = tl.simulate(plan, kernel_cycles={"scale": 50_000}, **arrays).explain().text()
    assert "scale: 50000 cycles per call (given)" in text
    assert "floor: 800000 cycles (core worker's kernel calls, each at its given cycles)" in text


@pytest.mark.parametrize(("given", "message"), [
    ({"nope": 3}, r"calls no kernel\(s\) \['nope'\]; its kernels are \['scale'\]"),
    ({"scale": 1.5}, r"kernel_cycles\['scale'\] must be a whole number of cycles"),
    ({"scale": -1}, r"kernel_cycles\['scale'\] must be a whole number of cycles"),
    ({"scale": True}, r"kernel_cycles\['scale'\] must be a whole number of cycles"),
    ({"scale": 2**41}, r"kernel_cycles\['scale'\] must be a whole number of cycles"),
    ([("scale", 3)], r"kernel_cycles must be a dict"),
])
def test_bad_kernel_cycles_are_refused_by_name(vsm, given, message) -> None:
    plan, arrays = vsm
    with pytest.raises(SimulationError, match=message):
        tl.simulate(plan, kernel_cycles=given, **arrays)


def test_numpy_integers_are_cycles(vsm) -> None:
    plan, _ = vsm
    assert tl.simulate(plan, mode="timing", kernel_cycles={"scale": np.int64(5000)}).stats.cores["worker"].busy == 80_000


def test_functional_mode_and_several_tenants_refuse_them(vsm) -> None:
    plan, arrays = vsm
    with pytest.raises(SimulationError, match="mode='functional' counts none"):
        tl.simulate(plan, mode="functional", kernel_cycles={"scale": 3}, **arrays)
    mp = tl.colocate({"a": designs.vector_scalar_mul(4096, 1024), "b": designs.vector_scalar_mul(4096, 1024)})
    with pytest.raises(SimulationError, match="kernel_cycles is taken for one plan"):
        tl.simulate(mp, mode="timing", kernel_cycles={"scale": 3})


def test_the_command_line_takes_them(capsys, tmp_path) -> None:
    spec = f"{ROOT / 'examples' / 'designs.py'}:vector_scalar_mul"
    assert cli(["simulate", spec, "--strategy", "greedy", "--json", "--kernel-cycles", "scale=5000"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cores"]["worker"]["busy"] == doc["cores"]["worker"]["calls"] * 5000
    assert cli(["simulate", spec, "--strategy", "greedy", "--kernel-cycles", "scale=1", "--kernel-cycles",
                "scale=2"]) == 1
    assert "gives kernel 'scale' twice" in capsys.readouterr().err
    assert cli(["simulate", spec, "--functional", "--kernel-cycles", "scale=1"]) == 1
    assert "--functional skips" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli(["simulate", spec, "--kernel-cycles", "scale"])
    assert "expected NAME=CYCLES" in capsys.readouterr().err
    assert cli(["report", spec, "--strategy", "greedy", "-o", str(tmp_path / "r"), "--kernel-cycles",
                "scale=5000"]) == 0
    assert "scale: 5000 cycles per call (given)" in capsys.readouterr().out
