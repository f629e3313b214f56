"""``tilelang simulate --check``: the reference path against numpy, and the command's verdict and exit status.

The reference (``tilelang.cli.check``) evaluates a design without plan or timing. Every example script's
design is run through it on the example's own inputs and compared with the example's own numpy answer,
at the example's tolerance: sliding windows, splits, joins, broadcasts, transposing patterns, extern
kernels and AIE1's stream layouts included.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang as tl
from tilelang.cli import main
from tilelang.cli.check import compare, reference_outputs

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py") if "__main__" in p.read_text())
sys.path.insert(0, str(EXAMPLES))


def _load(stem: str):
    name = f"tilelang_check_example_{stem}"
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("stem", SCRIPTS)
def test_the_reference_computes_every_examples_numpy_answer(stem, monkeypatch):
    import harness

    seen = {}

    def capture(name, design, inputs, expected, args, tolerance=harness.EXACT, macs=0):
        seen.update(design=design, inputs=inputs, expected=expected, tolerance=tolerance)
        return 0

    monkeypatch.setattr(harness, "run", capture)
    mod = _load(stem)
    monkeypatch.setattr(mod.harness if hasattr(mod, "harness") else harness, "run", capture)
    assert mod.main(["--small"]) == 0
    got = reference_outputs(seen["design"], seen["inputs"])
    for tensor, want in seen["expected"].items():
        ok, why = seen["tolerance"].check(got[tensor], want)
        assert ok, f"{stem}: {tensor}: {why}"


def test_compare_finds_a_changed_element():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = a.copy()
    b[1, 2] += 0.5
    (same,) = compare({"C": a}, {"C": a})
    (diff,) = compare({"C": b}, {"C": a})
    assert same.match and same.max_abs_error == 0.0
    assert not diff.match and diff.max_abs_error == 0.5 and diff.differing == 1 and diff.elements == 12


def test_simulate_check_reports_a_match(capsys):
    code = main(["simulate", f"{EXAMPLES / 'designs.py'}:vector_scalar_mul", "--check"])
    out = capsys.readouterr().out
    assert code == 0
    assert "check against the reference" in out and "C: match, max abs error 0" in out


def test_simulate_check_fails_on_a_wrong_simulation(capsys, monkeypatch):
    real = tl.simulate

    def off_by_one(plan, **kw):
        res = real(plan, **kw)
        res.outputs["C"][7] += 1
        return res

    monkeypatch.setattr(tl, "simulate", off_by_one)
    code = main(["simulate", f"{EXAMPLES / 'designs.py'}:vector_scalar_mul", "--check", "--functional"])
    out = capsys.readouterr().out
    assert code == 1
    assert "C: MISMATCH in 1 of 4096 elements, max abs error 1" in out


def test_simulate_check_json(capsys):
    import json

    code = main(["simulate", f"{EXAMPLES / 'designs.py'}:vector_scalar_mul", "--check", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["check"] == [{"tensor": "C", "match": True, "max_abs_error": 0.0, "elements": 4096, "differing": 0}]
