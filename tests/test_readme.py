"""The README's Python example runs as written."""

import re
from pathlib import Path


def test_readme_python_block_runs(capsys):
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has a Python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "design @vector_scalar_mul" in out and "cycles" in out and '"aie.device"' in out
