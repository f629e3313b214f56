"""Every script in examples/ runs with --small: plans, simulates, matches numpy, writes its MLIR.

The scripts run in-process (their ``main(argv)``), each writing into a
temporary directory. A script returns non-zero when an output differs from
numpy; the harness test below shows that it does.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
#: Modules in examples/ that hold shared code or designs for the command line, not runnable scripts.
HELPERS = {"designs", "harness", "vmul"}
SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py") if p.stem not in HELPERS)


def load(stem: str):
    """Import examples/<stem>.py under a unique module name."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    name = f"tilelang_example_{stem}"
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while the file executes
    spec.loader.exec_module(mod)
    return mod


def emitter_available() -> bool:
    try:
        import tilelang.backends.mlir.emit  # noqa: F401
    except ImportError:
        return False
    return True


def test_there_are_at_least_ten_examples():
    assert len(SCRIPTS) >= 10, SCRIPTS
    for stem in ("passthrough_dmas", "vector_scalar_mul", "vector_vector_add", "vector_reduce_max",
                 "matrix_multiplication_single_core", "matrix_multiplication_whole_array", "matrix_vector",
                 "relu", "softmax", "conv2d", "dma_transpose", "vision_pipeline"):
        assert stem in SCRIPTS


@pytest.mark.parametrize("stem", SCRIPTS)
def test_example_runs_small_and_matches_numpy(stem, tmp_path, capsys):
    # the greedy planner keeps this fast; the ILPs plan library designs in tests/test_library.py
    mod = load(stem)
    status = mod.main(["--small", "--out", str(tmp_path), "--strategy", "greedy"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "matches numpy" in out and "MISMATCH" not in out
    assert f"{stem}: " in out and " cycles (" in out and "mean core utilisation" in out
    if emitter_available():
        text = (tmp_path / f"{stem}.mlir").read_text()
        assert '"aie.device"' in text and '"aie.objectfifo"' in text


def test_harness_returns_non_zero_on_a_mismatch(tmp_path, capsys):
    harness = load("harness")
    mod = load("vector_vector_add")
    args = harness.arguments("t", ["--small", "--out", str(tmp_path), "--strategy", "greedy"])
    a = np.arange(4096, dtype=np.int32)
    wrong = a + a
    wrong[17] += 1
    assert harness.run("vector_vector_add", mod.vector_vector_add(4096), {"A": a, "B": a}, {"C": wrong}, args) == 1
    assert "MISMATCH: 1 of 4096 elements differ" in capsys.readouterr().out


def test_tolerance_is_elementwise():
    harness = load("harness")
    tol = harness.Tolerance(rtol=1e-2)
    ok, _ = tol.check(np.array([1.0, 100.0]), np.array([1.005, 100.9]))
    bad, why = tol.check(np.array([1.0, 100.0]), np.array([1.02, 100.0]))
    assert ok and not bad and "1 of 2" in why


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a markdown file, in order."""
    blocks, current, inside = [], [], False
    for line in path.read_text().splitlines():
        if line.strip() == "```python":
            inside, current = True, []
        elif inside and line.strip() == "```":
            inside = False
            blocks.append("\n".join(current))
        elif inside:
            current.append(line)
    return blocks


@pytest.mark.parametrize("doc", ["library.md", "iron_side_by_side.md"])  # tutorial.md: tests/test_tutorial.py
def test_every_python_block_of_the_docs_runs(doc, capsys):
    blocks = python_blocks(ROOT / "docs" / doc)
    assert blocks
    namespace: dict = {"__name__": f"doc_{doc}"}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"docs/{doc} block {i}", "exec"), namespace)  # noqa: S102 - our own docs
        except ImportError as e:
            if "mlir" not in str(e):
                raise
    capsys.readouterr()
