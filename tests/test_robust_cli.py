"""The tilelang command as a user runs it: a separate process whose standard output is parsed.

In-process tests (tests/test_cli.py) cannot see text that C code writes to file
descriptor 1 (a solver's banner), so these run the command in a subprocess and
parse exactly what it printed. Each run costs seconds: keep them few.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "designs.py"
VMUL = f"{EXAMPLES}:vector_scalar_mul"
AIE_OPT = Path("/work/shared/tools/mlir-aie/aie-opt")


def tilelang(*argv: object, cwd: Path | None = None) -> subprocess.CompletedProcess:
    code = "import sys; from tilelang.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_plan_json_and_simulate_json_print_only_json(tmp_path):
    # solver="highs" makes a highspy.Highs, whose constructor prints a banner to fd 1
    p = tilelang("plan", VMUL, "--solver", "highs", "--json", "-o", tmp_path / "plan.json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["design"]
    s = tilelang("simulate", VMUL, "--solver", "highs", "--json")
    assert s.returncode == 0, s.stderr
    assert json.loads(s.stdout)["cycles"] > 0


def test_emit_prints_only_the_module_and_emit_json_is_json():
    e = tilelang("emit", VMUL, "--solver", "highs")
    assert e.returncode == 0, e.stderr
    assert "HiGHS" not in e.stdout
    if AIE_OPT.is_file():  # mlir-aie's own parser: any stray line on stdout fails here
        check = subprocess.run([str(AIE_OPT), "-"], input=e.stdout, capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stderr
    j = tilelang("emit", VMUL, "--json")
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout)
    assert doc["level"] == "objectfifo" and doc["mlir"] == e.stdout


def test_report_json_is_json(tmp_path):
    pytest.importorskip("matplotlib")
    r = tilelang("report", VMUL, "--json", "-o", tmp_path / "rep")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["simulation"]["cycles"] > 0
    assert {Path(f).name for f in doc["files"]} >= {"report.html", "array.png"}
    assert all(Path(f).is_file() for f in doc["files"])
