"""Verifying an emitted module: upstream's verifier where it applies, and the checks it cannot make.

Upstream MLIR verifies every registered op inside ``aie.device`` (the kernel
functions, ``scf``/``arith``/``func.call`` in core bodies) when the device op
is verified. It cannot resolve a ``func.call`` inside ``aie.core``: to upstream
an unregistered single-region op may be a symbol table of its own, so symbol
lookup from inside it gives up (``SymbolTable::getNearestSymbolFrom``), and
verifying the whole ``builtin.module`` fails on every such call. aie-opt knows
``aie.device`` is the symbol table and resolves them there; so do the checks
below: every symbol use in the device names a symbol the device defines, and a
call's operand types match its callee's. A failure is a tilelang bug and
raises rather than printing an unverified module.
"""

from __future__ import annotations

from tilelang.backends.mlir._mlir import mlir
from tilelang.errors import TileLangError

#: Attributes of aie/aiex ops that name symbols of the device.
SYMBOL_ATTRS = ("objFifo_name", "metadata", "symbol", "fifoIns", "fifoOuts", "callee")
#: aie ops whose region ends in ``aie.end``.
ENDED = ("aie.device", "aie.core", "aie.mem", "aie.memtile_dma", "aie.shim_dma", "aie.switchbox", "aie.shim_mux")


def verify_module(module: object) -> None:
    """Verify an emitted module.

    Raises:
        TileLangError: the module is malformed (a tilelang bug), with upstream's diagnostics.
    """
    m = mlir()
    for op in module.body.operations:
        try:
            op.operation.verify()
        except m.ir.MLIRError as e:
            raise TileLangError(f"the emitted MLIR failed verification (a tilelang bug): {e}") from None
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
        if o.name == "func.call":
            _check_call(o, defined, problems)
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


def _check_call(call: object, defined: dict[str, object], problems: list[str]) -> None:
    ir = mlir().ir
    name = call.attributes["callee"].value
    fn = defined.get(name)
    if fn is None or fn.name != "func.func":
        return  # reported as an undefined symbol
    ftype = ir.FunctionType(fn.attributes["function_type"].value)
    got = [str(v.type) for v in call.operands]
    want = [str(t) for t in ftype.inputs]
    if got != want:
        problems.append(f"func.call @{name} passes ({', '.join(got)}), the function takes ({', '.join(want)})")
