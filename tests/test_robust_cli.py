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
    # the saved plan is simulated as it is (not planned again): the same cycles
    saved = tilelang("simulate", tmp_path / "plan.json", "--json")
    assert saved.returncode == 0, saved.stderr
    assert json.loads(saved.stdout)["cycles"] == json.loads(s.stdout)["cycles"]


def test_emit_prints_only_the_module_and_emit_json_is_json():
    e = tilelang("emit", VMUL, "--solver", "highs")
    assert e.returncode == 0, e.stderr
    assert "HiGHS" not in e.stdout
    from tilelang.backends.mlir import vendor

    if vendor.find_tools() is not None:  # mlir-aie's own parser: any stray line on stdout fails here
        vendor.pretty(e.stdout)
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


def test_a_closed_pipe_ends_quietly():
    code = "import sys; from tilelang.cli import main; sys.exit(main(sys.argv[1:]))"
    p = subprocess.Popen([sys.executable, "-c", code, "emit", VMUL], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before anything is written, as with '| head' on long output
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 1
    assert err == "", err


# -- command-line errors, in process (no C-level output involved) ---------------------------

from tilelang.cli import main  # noqa: E402

TOO_BIG = '''
import tilelang as tl

@tl.kernel
def copy(a: tl.Tile[(16384,), tl.i32], c: tl.Tile[(16384,), tl.i32]):
    c[...] = a

@tl.design(device="npu1")
def too_big(A: tl.Tensor[(16384,), tl.i32], C: tl.Tensor[(16384,), tl.i32]):
    a_in = tl.fifo(tl.Tile[(16384,), tl.i32], name="a_in")
    c_out = tl.fifo(tl.Tile[(16384,), tl.i32], name="c_out")

    @tl.core(name="w")
    def w():
        a, c = a_in.acquire(), c_out.acquire()
        copy(a, c)
        a_in.release()
        c_out.release()

    tl.dma(A, a_in)
    tl.dma(c_out, C)

def make_small(n=1024):
    return too_big

def needs_size(n):
    return too_big
'''


@pytest.fixture
def unplannable(tmp_path):
    """A file whose design cannot be planned (four 64 KiB buffers on one 64 KiB tile): an error about a
    path can only come first if the path was checked before planning."""
    f = tmp_path / "big.py"
    f.write_text(TOO_BIG)
    return f


def one_line_error(capsys, *argv):
    """The command's error: exit 1, one 'error:' line, no traceback (one-line 'warning:'s may precede it)."""
    code = main([str(a) for a in argv])
    lines = capsys.readouterr().err.splitlines()
    errors = [ln for ln in lines if not ln.startswith("warning: ")]
    assert code == 1 and len(errors) == 1 and errors[0].startswith("error: "), lines
    return errors[0]


def test_the_design_really_is_unplannable(capsys, unplannable):
    assert "needs" in one_line_error(capsys, "plan", f"{unplannable}:too_big")


@pytest.mark.parametrize("argv, message", [
    (["simulate", "--inputs", "{tmp}/nope.npz"], "--inputs: no such file: {tmp}/nope.npz"),
    (["simulate", "--outputs", "{tmp}/missing/out.npz"], "--outputs: cannot write {tmp}/missing/out.npz: "
                                                         "directory {tmp}/missing does not exist"),
    (["simulate", "--trace", "{tmp}"], "--trace: {tmp} is a directory"),
    (["plan", "-o", "{tmp}/missing/p.json"], "-o: cannot write {tmp}/missing/p.json"),
    (["emit", "-o", "{tmp}/missing/x.mlir"], "-o: cannot write {tmp}/missing/x.mlir"),
    (["report", "-o", "{tmp}/big.py"], "-o: {tmp}/big.py exists and is not a directory"),
])
def test_paths_are_checked_before_planning(capsys, unplannable, argv, message):
    tmp = unplannable.parent
    cmd, *rest = argv
    err = one_line_error(capsys, cmd, f"{unplannable}:too_big", *(a.format(tmp=tmp) for a in rest))
    assert message.format(tmp=tmp) in err


def test_inputs_that_are_not_npz_or_name_no_tensor(capsys, tmp_path):
    import numpy as np

    (tmp_path / "junk.npz").write_text("not a zip")
    err = one_line_error(capsys, "simulate", VMUL, "--inputs", tmp_path / "junk.npz")
    assert f"--inputs: cannot read {tmp_path / 'junk.npz'} as an .npz file" in err
    np.savez(tmp_path / "b.npz", B=np.zeros(4096, np.int32))
    err = one_line_error(capsys, "simulate", VMUL, "--inputs", tmp_path / "b.npz")
    assert "holds ['B'], which are not tensors of vector_scalar_mul ['A', 'C']" in err
    np.savez(tmp_path / "c.npz", C=np.zeros(4096, np.int32))
    err = one_line_error(capsys, "simulate", VMUL, "--inputs", tmp_path / "c.npz")
    assert "c.npz lacks ['A'], which vector_scalar_mul reads" in err
    np.savez(tmp_path / "t.npz", A=np.zeros((64, 64), np.int32))
    err = one_line_error(capsys, "simulate", VMUL, "--inputs", tmp_path / "t.npz")
    assert "tensor 'A' has shape (4096,), the array has shape (64, 64)" in err


def test_an_unknown_name_lists_designs_and_factories(capsys, unplannable):
    err = one_line_error(capsys, "print", f"{unplannable}:nonexistent")
    assert "has no 'nonexistent' (designs found: too_big; factories callable with no arguments: make_small)" in err
    err = one_line_error(capsys, "print", f"{unplannable}:needs_size")
    assert "needs arguments ['n']" in err
