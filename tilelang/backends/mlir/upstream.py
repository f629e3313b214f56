"""What upstream MLIR can verify of an emitted module: the *upstream view*, the module with its symbol scope made explicit.

Upstream ``mlir-opt`` cannot verify an emitted module as it stands, nor
mlir-aie's own reference modules (docs/mlir_backend.md, "Verification", has
the commands and messages). A ``func.call`` checks its callee
(``CallOp::verifySymbolUses``) through ``SymbolTable::getNearestSymbolTable``,
which gives up on reaching an operation with one region and no dialect
(``isPotentiallyUnknownSymbolTable`` in mlir/lib/IR/SymbolTable.cpp): an
unregistered op of one region might be a symbol table of its own, whose
symbols upstream cannot know. ``aie.core`` and ``aie.device`` are such ops,
so every call in a core fails with ``'func.call' op 'scale' does not reference
a valid function``, and parsing, which verifies, fails with it. aie-opt
registers ``aie.device`` as the symbol table (``AIE_DeviceOp`` has the
``SymbolTable`` trait) and resolves the call to the device's ``func.func``.

The upstream view says the same to upstream, and changes nothing else:

- ``aie.device`` becomes ``builtin.module`` (a registered symbol table) with
  the same ``sym_name`` and body; its other attributes keep their values
  under a dialect prefix (``aie.device = 4 : i32``), as a nested module's
  attributes must have;
- every other unregistered op with one region (``aie.core``, ``aie.mem``,
  ``aie.memtile_dma``, ``aie.shim_dma``, ``aie.switchbox``, ``aie.shim_mux``,
  ``aie.runtime_sequence``) keeps its name, operands, attributes, results and
  region, and gets a second, empty region, so upstream no longer takes it for
  a symbol table of unknown contents.

Upstream then verifies the view whole: every registered op where it sits
(kernel bodies, core loops, ``func.call`` against its callee's type), and
symbol names unique in the device. It is for verification only; the module
for aie-opt is the emitted one.
"""

from __future__ import annotations

from tilelang.backends.mlir._mlir import mlir

#: Prefix of the device op's attributes on the nested module (which takes only dialect attributes).
DEVICE_ATTR_PREFIX = "aie."


def upstream_view(module: object) -> object:
    """A copy of an emitted module that upstream MLIR verifies whole (see the module docstring).

    Args:
        module: an emitted ``mlir.ir.Module`` (``emit_mlir(..., as_module=True)``).

    Returns:
        The view, a ``builtin.module`` operation in the module's context.
    """
    view = module.operation.clone()
    singles: list[object] = []
    devices: list[object] = []

    def collect(op: object) -> object:
        o = op.operation
        if o.name == "aie.device":
            devices.append(o)
        elif len(o.regions) == 1 and not _registered(o):
            singles.append(o)
        return mlir().ir.WalkResult.ADVANCE

    view.walk(collect)
    for o in singles:
        _add_empty_region(o)
    for d in devices:
        _as_nested_module(d)
    return view


def upstream_view_text(module: object) -> str:
    """The upstream view of an emitted module, in generic form (what ``mlir-opt --verify-each`` takes)."""
    return upstream_view(module).get_asm(print_generic_op_form=True)


def _registered(op: object) -> bool:
    return op.context.is_registered_operation(op.name)


def _replace(old: object, name: str, attrs: dict[str, object], regions: int) -> object:
    """A new op in ``old``'s place, taking over its operands, results' uses and its region's blocks."""
    ir = mlir().ir
    with ir.InsertionPoint(old), old.location:
        new = ir.Operation.create(
            name,
            results=[r.type for r in old.results],
            operands=list(old.operands),
            attributes=attrs,
            regions=regions,
        )
    for block in list(old.regions[0].blocks):
        block.append_to(new.regions[0])
    for a, b in zip(old.results, new.results, strict=True):
        a.replace_all_uses_with(b)
    old.erase()
    return new


def _attrs(op: object) -> dict[str, object]:
    return {name: op.attributes[name] for name in op.attributes}


def _add_empty_region(op: object) -> None:
    _replace(op, op.name, _attrs(op), regions=2)


def _as_nested_module(device: object) -> None:
    attrs = {(k if k == "sym_name" else DEVICE_ATTR_PREFIX + k): v for k, v in _attrs(device).items()}
    _replace(device, "builtin.module", attrs, regions=1)


__all__ = ["DEVICE_ATTR_PREFIX", "upstream_view", "upstream_view_text"]
