"""docs/tutorial.md runs as written and prints what it shows.

Every ```python block is followed by a ```text block holding what the block prints. The blocks run in
order in one namespace (as one interpreter session would) and each block's standard output must equal its
text block line for line. The one documented exception: ``...`` in a shown line stands for text that depends
on the machine (the wall-clock seconds of the plan's solves); cycles, placements and bytes are deterministic
and must match exactly.

``python tests/test_tutorial.py --write`` reruns the page and rewrites its text blocks (keeping a shown
line that has ``...`` while it still matches).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "tutorial.md"
_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)


def blocks(text: str) -> list[tuple[str, str, tuple[int, int] | None]]:
    """(python code, shown output, span of the output block's body in ``text``) of every python block."""
    found = list(_BLOCK.finditer(text))
    out = []
    for i, m in enumerate(found):
        if m.group(1) != "python":
            continue
        nxt = found[i + 1] if i + 1 < len(found) else None
        between = text[m.end() : nxt.start()] if nxt else ""
        if nxt is not None and nxt.group(1) == "text" and not between.strip():
            out.append((m.group(2), nxt.group(2), nxt.span(2)))
        else:
            out.append((m.group(2), "", None))
    return out


def run(code_blocks: list[str]) -> list[str]:
    """Each block's standard output, the blocks run in order in one namespace."""
    namespace: dict = {"__name__": "__tutorial__"}
    outputs = []
    for i, code in enumerate(code_blocks):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, f"docs/tutorial.md block {i + 1}", "exec"), namespace)  # noqa: S102 - our own docs
        outputs.append(buf.getvalue())
    return outputs


def line_matches(shown: str, printed: str) -> bool:
    """``shown`` equals ``printed``, ``...`` in ``shown`` standing for any text within the line."""
    if "..." not in shown:
        return shown == printed
    parts = re.split(r" *\.\.\. *", shown)  # the blanks around ``...`` pad a column: the value's width varies
    return re.fullmatch(".*".join(re.escape(p) for p in parts), printed) is not None


def mismatches(shown: str, printed: str) -> list[str]:
    """The lines where ``printed`` differs from ``shown`` (empty when they agree)."""
    a, b = shown.rstrip("\n").split("\n"), printed.rstrip("\n").split("\n")
    bad = [f"line {n + 1}: shown {s!r}, printed {p!r}" for n, (s, p) in enumerate(zip(a, b, strict=False)) if not line_matches(s, p)]
    if len(a) != len(b):
        bad.append(f"shown {len(a)} lines, printed {len(b)}")
    return bad


def test_every_python_block_shows_its_output():
    missing = [i + 1 for i, (_, _, span) in enumerate(blocks(PAGE.read_text())) if span is None]
    assert not missing, f"python blocks {missing} have no ```text block with their output right after them"


def test_the_tutorial_prints_what_it_shows():
    pytest.importorskip("tilelang.backends.mlir.emit", reason="section 7 emits MLIR: the mlir extra")
    found = blocks(PAGE.read_text())
    printed = run([code for code, _, _ in found])
    for i, ((_, shown, _), got) in enumerate(zip(found, printed, strict=True)):
        bad = mismatches(shown, got)
        assert not bad, f"docs/tutorial.md block {i + 1}:\n" + "\n".join(bad[:10])


def test_figures_the_prose_quotes_are_printed():
    """A number the prose quotes in backticks (`5965 76.0%`) is one the page prints."""
    text = PAGE.read_text()
    shown = "\n".join(out for _, out, _ in blocks(text))
    prose = _BLOCK.sub("", text)
    quoted = re.findall(r"`(\d[\d .%]*(?: lines| cycles)?)`", prose)
    assert quoted, "the prose reads some printed figure"
    assert not [q for q in quoted if q not in shown], "quoted figures no block shows"


def test_ellipsis_only_spans_a_line():
    assert line_matches("placement  ilp  optimal  ...  600", "placement  ilp  optimal  0.061  600")
    assert line_matches("buffers  ilp  ...      256  0", "buffers  ilp  12.345   256  0")
    assert not line_matches("placement  ilp  optimal  ...  600", "placement  ilp  optimal  0.061  601")
    assert not line_matches("5965 76.0%", "5966 76.0%")
    assert mismatches("a\nb\n", "a\n") == ["shown 2 lines, printed 1"]


def write() -> None:
    """Rewrite the page's text blocks with what the blocks print now."""
    text = PAGE.read_text()
    found = blocks(text)
    printed = run([code for code, _, _ in found])
    for (_, shown, span), got in reversed(list(zip(found, printed, strict=True))):
        old = shown.rstrip("\n").split("\n")
        new = got.rstrip("\n").split("\n")
        elided = [o for o in old if "..." in o]
        keep = [next((o for o in elided if line_matches(o, p)), p) for p in new]
        body = "\n".join(keep) + "\n"
        if span is None:
            raise SystemExit("a python block has no ```text block after it; add an empty one first")
        text = text[: span[0]] + body + text[span[1] :]
    PAGE.write_text(text)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        raise SystemExit("usage: python tests/test_tutorial.py --write")
