"""``tl.optimize`` and ``tilelang optimize``: every step keeps the outputs; the command's table is what it measured."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang as tl
from tilelang.cli import main

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import designs  # noqa: E402
import local_buffers as lb  # noqa: E402


@pytest.mark.parametrize("make", [lambda: lb.branches(4096, 1024), lambda: designs.vector_scalar_mul(2048, 512),
                                  lambda: tl.library.matvec(64, 64, device="npu1")])
def test_every_step_keeps_the_outputs(make):
    d = make()
    x = lb.inputs(d, seed=3)
    want = tl.simulate(tl.plan(d, strategy="greedy"), mode="functional", **x).outputs
    steps = tl.passes.optimize_steps(d)
    assert [n for n, _ in steps] == ["input", "eliminate_redundant_transfers", "schedule_memory", "double_buffer"]
    assert tl.ir.print(tl.optimize(d)) == tl.ir.print(steps[-1][1])
    for name, step in steps[1:]:
        got = tl.simulate(tl.plan(step, strategy="greedy"), mode="functional", **x).outputs
        for k, v in want.items():
            assert np.array_equal(np.ascontiguousarray(got[k]).view(np.uint8), np.ascontiguousarray(v).view(np.uint8)), (name, k)


def test_the_command_prints_each_step_and_writes_the_design(tmp_path, capsys):
    out = tmp_path / "opt.tl"
    assert main(["optimize", f"{ROOT}/examples/local_buffers.py:branches", "--json", "-o", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    steps = {s["step"]: s for s in doc["steps"]}
    assert steps["schedule_memory"]["changed"] is True
    assert steps["schedule_memory"]["onchip_bytes"] < steps["input"]["onchip_bytes"]
    assert steps["schedule_memory"]["peak_live_bytes"] < steps["input"]["peak_live_bytes"]
    assert tl.ir.print(tl.ir.parse(out.read_text())) == out.read_text()
    assert main(["optimize", f"{ROOT}/examples/local_buffers.py:branches"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split() == ["step", "changed", "cycles", "DDR", "bytes", "on-chip", "bytes", "peak",
                                            "live", "bytes"]
    assert "branches: cycles" in text


def test_optimize_names_bad_input():
    with pytest.raises(tl.DesignError, match="tl.optimize takes a design"):
        tl.optimize(42)
