"""Verifying an emitted module: upstream's verifier on its upstream view, and the checks upstream cannot make.

Upstream MLIR cannot verify the emitted ``builtin.module`` as it stands: a
``func.call`` inside ``aie.core`` cannot resolve its callee, because to
upstream an unregistered op of one region may be a symbol table of its own
(``upstream.py`` explains it). It verifies the module's *upstream view*
whole instead (``upstream.upstream_view``: ``aie.device`` as the nested
``builtin.module`` it stands for, the other aie region ops given a second,
empty region), which checks every registered op where it sits, every
``func.call`` against its callee's type, and that the device's symbol names
are unique. Upstream verifies nothing of the unregistered aie ops themselves;
the checks below do what their verifiers would need most: every symbol an
aie op names (objectfifos, shim allocations, link ends) is one the device
defines, and every aie region ends in ``aie.end``. A failure is a tilelang
bug and raises rather than printing an unverified module.
"""

from __future__ import annotations

from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.upstream import upstream_view
from tilelang.errors import TileLangError

#: Attributes of aie/aiex ops that name symbols of the device (``func.call``'s callee upstream checks).
SYMBOL_ATTRS = ("objFifo_name", "metadata", "symbol", "fifoIns", "fifoOuts")
#: aie ops whose region ends in ``aie.end``.
ENDED = ("aie.device", "aie.core", "aie.mem", "aie.memtile_dma", "aie.shim_dma", "aie.switchbox", "aie.shim_mux")


def verify_module(module: object) -> None:
    """Verify an emitted module.

    Raises:
        TileLangError: the module is malformed (a tilelang bug), with upstream's diagnostics.
    """
    m = mlir()
    try:
        upstream_view(module).verify()
    except m.ir.MLIRError as e:
        raise TileLangError(f"the emitted MLIR failed verification (a tilelang bug): {e}") from None
    for op in module.body.operations:
        if op.operation.name == "aie.device":
            _check_device(op.operation)


def _symbols_defined(device: object) -> dict[str, object]:
    out: dict[str, object] = {}
    for op in device.regions[0].blocks[0].operations:
        attrs = op.operation.attributes
        if "sym_name" in attrs:
            name = str(attrs["sym_name"].value)
            if name in out:
                raise TileLangError(f"the emitted MLIR defines symbol @{name} twice (a tilelang bug)")
            out[name] = op.operation
    return out


def _referenced(attr: object) -> list[str]:
    ir = mlir().ir
    if isinstance(attr, ir.FlatSymbolRefAttr):
        return [attr.value]
    if isinstance(attr, ir.ArrayAttr):
        return [n for a in attr for n in _referenced(a)]
    return []


def _check_device(device: object) -> None:
    ir = mlir().ir
    defined = _symbols_defined(device)
    problems: list[str] = []

    def visit(op: object) -> object:
        o = op.operation
        for key in SYMBOL_ATTRS:
            if key in o.attributes:
                for name in _referenced(o.attributes[key]):
                    if name not in defined:
                        problems.append(f"{o.name} uses @{name}, which the device does not define")
        if o.name in ENDED:
            for region in o.regions:
                blocks = list(region.blocks)
                if blocks and (not blocks[-1].operations or _last(blocks[-1]).name != "aie.end"):
                    problems.append(f"{o.name}'s region does not end in aie.end")
        return ir.WalkResult.ADVANCE

    device.walk(visit)
    if problems:
        raise TileLangError("the emitted MLIR failed verification (a tilelang bug): " + "; ".join(problems[:5]))


def _last(block: object) -> object:
    ops = list(block.operations)
    return ops[-1].operation
