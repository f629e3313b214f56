"""The tilelang command: each subcommand on the example designs, and user errors without tracebacks."""

import argparse
import json
from pathlib import Path

import pytest

from tilelang.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "designs.py"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_devices_json_lists_every_model(capsys):
    code, out, _ = run(capsys, "devices", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0
    assert rows["npu1"]["compute"] == 16 and rows["npu1"]["memtiles"] == 4
    assert rows["xcvc1902"]["compute"] == 400 and rows["xcvc1902"]["peak_bf16_tflops"] is None


def test_print_is_the_ir_text(capsys):
    code, out, _ = run(capsys, "print", f"{EXAMPLES}:vector_scalar_mul")
    assert code == 0 and out.startswith("kernel @scale(") and "design @vector_scalar_mul(" in out


def test_plan_json_roundtrips(capsys, tmp_path):
    import tilelang as tl

    code, out, _ = run(capsys, "plan", f"{EXAMPLES}:vector_scalar_mul", "--json", "-o", tmp_path / "p.json")
    assert code == 0
    plan = tl.Plan.from_json(out)
    assert plan.placement == tl.Plan.from_json((tmp_path / "p.json").read_text()).placement
    assert set(plan.placement) == {"worker"}


def test_simulate_reports_cycles_and_writes_outputs(capsys, tmp_path):
    import numpy as np

    a = np.arange(4096, dtype=np.int32)
    np.savez(tmp_path / "in.npz", A=a)
    code, out, _ = run(capsys, "simulate", f"{EXAMPLES}:vector_scalar_mul", "--inputs", tmp_path / "in.npz",
                       "--outputs", tmp_path / "out.npz", "--trace", tmp_path / "t.json", "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["cycles"] > 0 and set(summary["cores"]) == {"worker"}
    assert sum(sh["cycles"] for sh in summary["explain"]["shares"]) == summary["cycles"]
    # the runtime sequence: a push of A and one of C, each costing its issue time
    assert summary["sequence"]["pushes"] == 2 and summary["sequence"]["push_cycles"] > 0
    with np.load(tmp_path / "out.npz") as res:
        np.testing.assert_array_equal(res["C"], a * 3)
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]


def test_report_writes_pictures_and_page(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    code, out, _ = run(capsys, "report", f"{EXAMPLES}:vector_scalar_mul", "-o", tmp_path)
    assert code == 0
    for name in ("array.png", "timeline.png", "utilisation.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "report.html").read_text()
    assert "data:image/png;base64," in page
    verdict = next(line[len("verdict: "):] for line in out.splitlines() if line.startswith("verdict: "))
    assert page.index(verdict.split(":")[0]) < page.index("<img")  # the page opens with the verdict


@pytest.mark.parametrize(
    "argv, message",
    [
        (["print", "nowhere.py:x"], "no such file: nowhere.py"),
        (["print", f"{EXAMPLES}:nothing"], "has no 'nothing'"),
        (["print", f"{EXAMPLES}"], "defines 0 designs"),
    ],
)
def test_user_errors_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 1 and message in err and "Traceback" not in err and err.count("\n") == 1


def test_the_api_command_line_example(capsys):
    vmul = EXAMPLES.parent / "vmul.py"
    code, out, _ = run(capsys, "simulate", f"{vmul}:vector_scalar_mul", "--json")
    assert code == 0 and json.loads(out)["cycles"] > 0
    code, out, _ = run(capsys, "emit", f"{vmul}:vector_scalar_mul")
    assert code == 0 and '"aie.objectfifo"' in out


def test_python_dash_m_tilelang_is_the_command_line() -> None:
    import subprocess
    import sys

    from tilelang import __version__

    res = subprocess.run([sys.executable, "-m", "tilelang", "--version"], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == f"tilelang {__version__}"
    res = subprocess.run([sys.executable, "-m", "tilelang", "simulate", "nowhere.py:x"], capture_output=True, text=True)
    assert res.returncode == 1 and "no such file: nowhere.py" in res.stderr


def test_version_and_every_option_has_help(capsys) -> None:
    from tilelang import __version__
    from tilelang.cli import build_parser

    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"tilelang {__version__}"
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, cmd in sub.choices.items():
        assert cmd.description, f"tilelang {name} has no description"
        for action in cmd._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"tilelang {name} {action.option_strings[0]} has no help"


@pytest.mark.parametrize(
    "source, spec, message",
    [
        ("import tilelang as tl\ndef f(:\n    pass\n", "f", r"importing .*bad\.py failed at .*bad\.py:2: SyntaxError"),
        ('raise RuntimeError("at import")\n', "f", r"failed at .*bad\.py:1 \(in <module>\): RuntimeError: at import"),
        ('def f():\n    raise ValueError("boom")\n', "f", r"bad\.py:f\(\) failed at .*bad\.py:2 \(in f\): ValueError: boom"),
        ("import sys\nsys.exit(3)\n", "f", r"failed at .*bad\.py:2 \(in <module>\): SystemExit: 3"),
    ],
)
def test_a_failing_user_file_is_one_error_naming_its_line(capsys, tmp_path, source, spec, message):
    import re

    (tmp_path / "bad.py").write_text(source)
    for command in ("print", "simulate", "emit", "optimize"):
        code, _, err = run(capsys, command, f"{tmp_path / 'bad.py'}:{spec}")
        assert code == 1 and re.search(message, err) and "Traceback" not in err and err.count("\n") == 1, err


def test_unreadable_inputs_and_files_are_usage_errors(capsys, tmp_path):
    import numpy as np

    vmul = f"{EXAMPLES.parent / 'vmul.py'}:vector_scalar_mul"
    np.save(tmp_path / "a.npy", np.zeros(4096, np.int32))
    (tmp_path / "t.npz").write_bytes(b"PK\x03\x04garbage")
    (tmp_path / "bin.tl").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "p.json").write_text("{}")
    for argv, message in (
        (["simulate", vmul, "--inputs", tmp_path / "a.npy"], "holds one array, not an .npz file"),
        (["simulate", vmul, "--inputs", tmp_path / "t.npz"], "cannot read .* as an .npz file: BadZipFile"),
        (["simulate", vmul, "--functional", "--trace", tmp_path / "t.json"], "--trace needs timing"),
        (["print", tmp_path / "bin.tl"], "cannot read .*bin.tl: 'utf-8' codec"),
        (["optimize", tmp_path / "p.json"], "takes the design, not its plan"),
    ):
        code, _, err = run(capsys, *argv)
        assert code == 1 and __import__("re").search(message, err) and "Traceback" not in err, err


@pytest.mark.parametrize("argv", [["simulate", "x.py:f", "--seed", "-1"], ["report", "x.py:f", "--seed", str(2**32)],
                                  ["explore", "library:matmul", "--param", "cores=1x1", "--seed", "-1"],
                                  ["explore", "library:matmul", "--param", "cores=1x1", "--top", "0"]])
def test_out_of_range_seeds_and_counts_are_refused_by_the_parser(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2 and "error: argument" in capsys.readouterr().err
