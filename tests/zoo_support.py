"""The MLIR tests' design zoo (tests/mlir/zoo.py), loaded once, and its plans; FileCheck.

tests/mlir has no __init__.py (it would shadow the real ``mlir`` package), so
the zoo is loaded by path.
"""

import importlib.util
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from tilelang.plan import plan as make_plan

ZOO_PATH = Path(__file__).parent / "mlir" / "zoo.py"


def load_zoo():  # noqa: ANN201 - the zoo module
    name = "tilelang_mlir_test_zoo"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ZOO_PATH)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules[name]


zoo = load_zoo()
#: (design name, device) of every zoo case.
CASES = [(name, dev) for name, (_, devs) in zoo.ZOO.items() for dev in devs]


@cache
def planned(name: str, device: str):  # noqa: ANN201 - a Plan
    """The greedy plan of zoo design ``name`` on ``device`` (cached: plans are immutable)."""
    return make_plan(zoo.ZOO[name][0](device=device), strategy="greedy")


def filecheck(checks: str, text: str) -> None:
    """Run FileCheck ``checks`` (one pattern per line) over ``text``; fail with its report."""
    tool = Path(sys.executable).parent / "filecheck"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "checks"
        path.write_text(checks)
        res = subprocess.run([str(tool), str(path)], input=text, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def calls(body):  # noqa: ANN001, ANN201 - a core body; yields its Calls
    """Every kernel call of a core body, loops walked, in program order."""
    from tilelang.ir.design import Call, Loop

    for s in body:
        if isinstance(s, Call):
            yield s
        elif isinstance(s, Loop):
            yield from calls(s.body)


def with_args(body, args):  # noqa: ANN001, ANN201 - a core body and call arguments
    """``body`` with every kernel call's arguments replaced by ``args``."""
    from tilelang.ir.design import Call, Loop

    out = []
    for s in body:
        if isinstance(s, Call):
            s = Call(s.kernel, args)
        elif isinstance(s, Loop):
            s = Loop(s.start, s.stop, s.step, with_args(s.body, args))
        out.append(s)
    return tuple(out)
