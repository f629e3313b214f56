"""Every relative link and file reference in README.md and docs/*.md resolves inside a clone.

Checked: markdown links ``[text](target)`` (relative to the page), backticked repository paths
(```docs/x.md```, ```benchmarks/y.py```, ```tilelang/ir/plan.py```; ```ir/plan.py``` and ```devices/costs.py```
are read under ``tilelang/``), and every ``Name.md`` the text mentions. A page may not point outside the
repository (an absolute path, ``../``): a clone has only what is in it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
_TICKED = re.compile(r"`([^`\s]+)`")
_MD_NAME = re.compile(r"(?<![\w/.-])([\w-]+\.md)\b")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
#: Where a backticked path without a repository prefix may live (``ir/plan.py`` is ``tilelang/ir/plan.py``).
_BASES = (ROOT, ROOT / "tilelang")


#: Directories the commands the docs show create (not in a clone until run).
GENERATED = ("build", "report", "out")


def _top_level() -> set[str]:
    return {p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name == ".ci"} | set(GENERATED)


def _is_ours(path: str) -> bool:
    """A backticked token names a file of this repository (not mlir-aie's ``python/compiler/...``)."""
    first = path.split("/")[0]
    return first in _top_level() or (ROOT / "tilelang" / first).is_dir()


def references(page: Path) -> list[tuple[int, str, str]]:
    """(line, kind, target) of every reference on ``page`` that must resolve."""
    refs: list[tuple[int, str, str]] = []
    text = page.read_text()
    prose = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # code blocks are code, not references
    for n, line in enumerate(prose.splitlines(), 1):
        for target in _LINK.findall(line):
            if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
                refs.append((n, "link", target.split("#")[0]))
        for token in _TICKED.findall(line):
            token = token.rstrip(".,:;")
            if re.match(r"(/\w|\.\./|~)", token):
                refs.append((n, "outside", token))
            elif "/" in token and not token.startswith(("-", "$")) and not re.search(r"[*<]", token) \
                    and _is_ours(token):
                refs.append((n, "path", token.split(":")[0]))
        for name in _MD_NAME.findall(line):
            refs.append((n, "page", name))
    for n, line in enumerate(text.splitlines(), 1):
        for bad in re.findall(r"(?:/work/|\.\./shared)[^\s`'\")]*", line):
            refs.append((n, "outside", bad))
    return refs


def _resolves(page: Path, kind: str, target: str) -> bool:
    if kind == "outside":
        return False
    if kind == "link":
        return (page.parent / target).resolve().is_relative_to(ROOT) and (page.parent / target).exists()
    if kind == "page":
        return any((d / target).is_file() for d in (page.parent, ROOT, ROOT / "docs"))
    # what the commands shown write: their output directories (examples and benchmarks write under out/)
    generated = target.rstrip("/").split("/")[0] in GENERATED
    # ``tests/fuzz_support.plan_violations``: a name in a module
    module = re.sub(r"\.\w+$", ".py", target) if not target.endswith((".py", ".md", ".json")) else target
    return generated or any((base / t).exists() for base in _BASES for t in (target, module))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_reference_resolves(page: Path) -> None:
    broken = [f"{page.relative_to(ROOT)}:{n}: {kind} {target}" for n, kind, target in references(page)
              if not _resolves(page, kind, target)]
    assert not broken, "references that do not resolve in a clone:\n" + "\n".join(broken)


def test_the_checker_sees_broken_references(tmp_path: Path) -> None:
    page = tmp_path / "x.md"
    page.write_text("See [a](missing.md), `docs/nope.md`, `tilelang/ir/plan.py`, AIE_FACTS.md and `/work/shared/x`.\n"
                    "```python\nprint('`docs/in_code.md`')\n```\n")
    got = {(kind, target): _resolves(page, kind, target) for _, kind, target in references(page)}
    assert got == {("link", "missing.md"): False, ("path", "docs/nope.md"): False, ("path", "tilelang/ir/plan.py"): True,
                   ("page", "missing.md"): False, ("page", "AIE_FACTS.md"): False, ("outside", "/work/shared/x"): False}
