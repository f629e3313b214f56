"""The imports follow the one-way data flow of DESIGN.md, so that no back edge can return.

frontend -> ir -> plan -> (simulator | backends), with devices and errors below all.
Every ``import`` and ``from ... import`` statement of every module is read with
``ast`` (module level and inside functions, where lazy imports hide), resolved to
the module it names, and checked against the layers each package may use.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tilelang", "simulator")

#: What each layer may import besides itself. The pipeline stages meet only through the IR:
#: the frontend produces it, the planner consumes a Design and produces a Plan, the simulator and
#: the MLIR emitter consume a Plan; none imports another stage.
BELOW = {
    "errors": set(),
    "devices": {"errors", "dtypes"},
    "dtypes": set(),
    "ir": {"devices", "errors", "dtypes"},
    "frontend": {"ir", "devices", "errors", "dtypes"},
    "plan": {"ir", "devices", "errors", "dtypes"},
    "simulator": {"ir", "devices", "errors", "dtypes"},
    "backends": {"ir", "devices", "errors", "dtypes"},
}
#: Consumers of the whole pipeline: they may import any layer, and nothing below imports them
#: (``__main__``: ``python -m tilelang``, the command line).
TOP = {"tilelang", "api", "cli", "__main__", "library", "report", "explore", "passes", "tenancy"}


def layer(module: str) -> str:
    """The layer of a module of this project (``tilelang.ir.dtypes`` is the element types' leaf:
    devices state their rates per dtype, so the leaf sits below devices)."""
    parts = module.split(".")
    if parts[0] == "simulator":
        return "simulator"
    if len(parts) == 1:
        return "tilelang"
    if parts[1:3] == ["ir", "dtypes"]:
        return "dtypes"
    return parts[1]


def modules() -> list[tuple[str, Path]]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append((".".join(parts), path))
    return out


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imported(module: str, path: Path) -> list[tuple[str, int]]:
    """(module imported, line) for every import statement of ours in ``path``."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for a in node.names:  # `from tilelang import errors` imports the module tilelang.errors
                sub = f"{source}.{a.name}"
                found.append((sub if is_module(sub) else source, node.lineno))
    return [(m, line) for m, line in found if m.split(".")[0] in PACKAGES]


ALL = modules()


def test_every_package_has_a_layer():
    unknown = sorted({layer(m) for m, _ in ALL} - set(BELOW) - TOP)
    assert not unknown, f"packages with no layer: {unknown}; add each to BELOW or TOP in tests/test_layers.py"


@pytest.mark.parametrize("module,path", ALL, ids=[m for m, _ in ALL])
def test_imports_follow_the_data_flow(module, path):
    own = layer(module)
    if own in TOP:
        return
    allowed = BELOW[own] | {own}
    bad = [f"{path.relative_to(ROOT)}:{line} imports {target} ({layer(target)})"
           for target, line in sorted(set(imported(module, path)), key=lambda x: x[1]) if layer(target) not in allowed]
    assert not bad, f"{own} may import only {sorted(allowed)}:\n" + "\n".join(bad)


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    """The checker itself: a function-level import and a relative import are both resolved."""
    src = tmp_path / "x.py"
    src.write_text("from . import calls\n\ndef f():\n    from tilelang.plan import plan\n    import simulator\n")
    got = imported("tilelang.frontend.x", src)
    assert ("tilelang.frontend.calls", 1) in got
    assert ("tilelang.plan", 4) in got
    assert ("simulator", 5) in got
