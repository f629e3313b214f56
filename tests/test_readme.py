"""The README's Python example runs as written."""

import re
from pathlib import Path

import pytest


def test_readme_python_block_runs(capsys):
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has a Python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "design @vector_scalar_mul" in out and "cycles" in out and '"aie.device"' in out


ROOT = Path(__file__).resolve().parent.parent
_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def test_readme_counts_the_example_scripts():
    """README's "`examples/`: N runnable ..." is the number of scripts there (helpers have no ``__main__``)."""
    text = (ROOT / "README.md").read_text()
    word = re.search(r"`examples/`: (\w+) runnable", text).group(1)
    scripts = [p.name for p in (ROOT / "examples").glob("*.py") if "__main__" in p.read_text()]
    assert _NUMBERS[word] == len(scripts), (word, sorted(scripts))


def test_readme_install_lines_name_extras_that_exist():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    used = re.findall(r"pip install -e '\.\[([\w,]+)\]'", (ROOT / "README.md").read_text())
    assert {"mlir,plot", "dev"} <= set(used), used
    for group in used:
        assert set(group.split(",")) <= extras, group
