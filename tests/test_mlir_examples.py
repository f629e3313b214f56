"""Every example design (examples/*.py at --small sizes) through the MLIR backend at both levels.

The designs, inputs and numpy answers are the examples' own: each script's
``main`` is run with ``harness.run`` replaced by a recorder. Each design is
planned (greedy), emitted at the objectfifo and the physical level, its
upstream view verified by mlir-opt, and the physical module executed by the
interpreter of the emitted IR (tests/mlir/interp.py), which must give the
example's numpy answer.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import tilelang as tl
from tilelang.backends.mlir import emit_mlir
from tilelang.backends.mlir._mlir import mlir_opt_path
from tilelang.backends.mlir.upstream import upstream_view_text

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_examples import SCRIPTS  # noqa: E402 - the one list of runnable examples

INTERP_PATH = Path(__file__).parent / "mlir" / "interp.py"


def _load(path: Path, name: str):  # noqa: ANN202 - a module
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules[name]


interp = _load(INTERP_PATH, "tilelang_mlir_test_interp")


@cache
def recorded(stem: str) -> list[tuple]:
    """(name, design, inputs, expected, tolerance) of every design the example checks."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    import harness

    out: list[tuple] = []

    def record(name, design, inputs, expected, args, tolerance=harness.EXACT, macs=0):  # noqa: ANN001, ANN202
        out.append((name, design, inputs, expected, tolerance))
        return 0

    saved = harness.run
    harness.run = record
    try:
        mod = _load(EXAMPLES / f"{stem}.py", f"tilelang_mlir_example_{stem}")
        mod.main(["--small", "--strategy", "greedy"])
    finally:
        harness.run = saved
    return out


@pytest.mark.parametrize("stem", SCRIPTS)
def test_example_emits_verifies_and_runs_at_the_physical_level(stem: str, capsys: pytest.CaptureFixture) -> None:
    cases = recorded(stem)
    capsys.readouterr()
    assert cases, f"examples/{stem}.py checked no design"
    for name, design, inputs, expected, tolerance in cases:
        plan = tl.plan(design, strategy="greedy")
        for level in ("objectfifo", "physical"):
            module = emit_mlir(plan, level=level, as_module=True)
            res = subprocess.run(
                [mlir_opt_path(), "--allow-unregistered-dialect", "--verify-each", "-"],
                input=upstream_view_text(module),
                capture_output=True,
                text=True,
            )
            assert res.returncode == 0, f"{name} ({level}): {res.stderr[:2000]}"
        got = interp.run_physical(module, design, inputs)
        for tensor, want in expected.items():
            ok, why = tolerance.check(got[tensor], want)
            assert ok, f"{name}: output {tensor}: {why}"
