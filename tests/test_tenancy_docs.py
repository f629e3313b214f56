"""docs/tenancy.md's worked example runs as written and prints what the page shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "tenancy.md"


def test_worked_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("mlir.ir")
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(DOC), "exec"), {})
    out = capsys.readouterr().out
    shown = text.split("It prints:\n\n```\n", 1)[1].split("```", 1)[0]
    assert out == shown
