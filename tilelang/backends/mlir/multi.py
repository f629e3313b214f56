"""A MultiPlan as one module holding one ``aie.device`` per tenant.

Each tenant's local plan (on its partition device, npu1_Ncol / npu2_Ncol,
columns numbered from 0 as mlir-aie's virtualized target models number them)
is emitted and verified alone, then the devices are put side by side in one
``builtin.module``, each named after its tenant (``sym_name``): mlir-aie takes
several named devices in one module (``aie.device(npu1_1col) @name``, as its
``aiecc.py --device-name`` selects). The column each partition starts at is
not in the module: the xdna driver chooses it when it creates the hardware
context (docs/tenancy.md); the MultiPlan records the offset tilelang assumed.

Each emitted module's attribute aliases (``#map``, ``#map1``, ...) are renamed
with the tenant's name so that the modules' aliases cannot collide.
"""

from __future__ import annotations

import re

from tilelang.errors import TileLangError
from tilelang.ir.multiplan import MultiPlan

_HEAD = '"builtin.module"() ({'
_TAIL = "}) : () -> ()"


def _split(text: str) -> tuple[list[str], list[str]]:
    """(alias lines, body lines) of one emitted generic-form module."""
    lines = text.rstrip("\n").splitlines()
    try:
        head = next(i for i, ln in enumerate(lines) if ln.startswith(_HEAD))
    except StopIteration:
        raise TileLangError("emit_mlir: an emitted module has no builtin.module header") from None
    if lines[-1] != _TAIL:
        raise TileLangError("emit_mlir: an emitted module does not end its builtin.module")
    return lines[:head], lines[head + 1 : -1]


def _renamed(tenant: str, text: str) -> tuple[list[str], list[str]]:
    aliases, body = _split(text)
    names = [ln.split("=", 1)[0].strip()[1:] for ln in aliases if ln.startswith("#")]
    pattern = re.compile(r"#(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")

    def rename(line: str) -> str:
        return pattern.sub(lambda m: f"#{tenant}_{m.group(1)}", line) if names else line

    body = [rename(ln) for ln in body]
    last = body[-1]
    if 'sym_name = "main"' not in last:
        raise TileLangError(f"emit_mlir: tenant {tenant!r}'s device op does not end its module as expected")
    body[-1] = last.replace('sym_name = "main"', f'sym_name = "{tenant}"')
    return [rename(ln) for ln in aliases], body


def emit_multi(mp: MultiPlan, level: str = "objectfifo") -> str:
    """One module with one verified ``aie.device`` per tenant, named after it.

    Args:
        mp: the MultiPlan.
        level: "objectfifo" or "physical", as for one plan.

    Returns:
        The module text (generic form).

    Raises:
        PlanError: a tenant's plan does not fit the hardware's rules (the emitter's own checks).
    """
    from tilelang.backends.mlir.emit import emit_mlir

    aliases: list[str] = []
    bodies: list[str] = []
    for name, t in mp.tenants.items():
        a, b = _renamed(name, emit_mlir(t.local, level=level))  # type: ignore[arg-type]
        aliases += a
        bodies += b
    return "\n".join([*aliases, _HEAD, *bodies, _TAIL]) + "\n"
