"""``emit_mlir(plan)``: the entry point of the MLIR backend.

Builds the module with the upstream bindings in a context that allows
unregistered dialects, verifies it (``verify.py``) and returns it as generic-form
text or as an ``mlir.ir.Module``.
"""

from __future__ import annotations

from tilelang.backends.mlir._mlir import mlir
from tilelang.errors import TileLangError
from tilelang.ir.plan import Plan

LEVELS = ("objectfifo", "physical")


def emit_mlir(plan: Plan, as_module: bool = False, level: str = "objectfifo") -> str | object:
    """The plan as an mlir-aie module.

    Args:
        plan: a Plan (``tl.plan(design)``).
        as_module: return the ``mlir.ir.Module`` instead of its text.
        level: ``"objectfifo"`` (IRON's level: mlir-aie allocates buffers, locks,
            DMA programs and routes) or ``"physical"`` (the plan's buffers, locks,
            BD chains and routes, explicit).

    Returns:
        The verified module, as generic-form text (``str``) or as a Module.

    Raises:
        TileLangError: a bad ``level`` or argument, or the MLIR extra is missing.
        PlanError: the plan asks for something the hardware cannot encode
            (a BD field overflow, too many BDs or locks on a tile, ...).
    """
    if not isinstance(plan, Plan):
        raise TileLangError(f"emit_mlir takes a Plan (tl.plan(design)), got {type(plan).__name__}")
    if level not in LEVELS:
        raise TileLangError(f"unknown MLIR level {level!r}; choose one of {list(LEVELS)}")
    m = mlir()
    from tilelang.backends.mlir.device import open_device
    from tilelang.backends.mlir.verify import verify_module

    ctx = m.ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx, m.ir.Location.unknown():
        module = m.ir.Module.create()
        dm = open_device(plan, module)
        with m.ir.InsertionPoint(dm.block):
            if level == "objectfifo":
                from tilelang.backends.mlir.spatial import build_objectfifo_level

                build_objectfifo_level(dm)
            else:
                from tilelang.backends.mlir.physical import build_physical_level

                build_physical_level(dm)
        verify_module(module)
        if as_module:
            return module
        return module.operation.get_asm(print_generic_op_form=True)


def emit_kernel_functions(design: object, as_module: bool = False) -> str | object:
    """The design's kernels alone, as a module upstream ``mlir-opt`` verifies and lowers.

    The same ``func.func``s the device module carries (extern kernels as private
    declarations), outside ``aie.device``: a user lowers them with upstream
    passes (docs/mlir_backend.md) before handing the device to aiecc.

    Args:
        design: a Design or a Plan.
        as_module: return the ``mlir.ir.Module`` instead of its text.

    Raises:
        TileLangError: not a design, a failed verification, or no MLIR extra.
    """
    from tilelang.backends.mlir.kernels import declare_extern, lower_kernel
    from tilelang.ir.design import Design
    from tilelang.ir.kernel import ExternKernel

    if isinstance(design, Plan):
        design = design.design
    if not isinstance(design, Design):
        raise TileLangError(f"emit_kernel_functions takes a Design or a Plan, got {type(design).__name__}")
    m = mlir()
    with m.ir.Context(), m.ir.Location.unknown():
        module = m.ir.Module.create()
        with m.ir.InsertionPoint(module.body):
            for k in design.kernels:
                if isinstance(k, ExternKernel):
                    declare_extern(k.name, k.params, k.object_file)
                else:
                    lower_kernel(k)
        try:
            module.operation.verify()
        except m.ir.MLIRError as e:
            raise TileLangError(f"the emitted kernel functions failed verification (a tilelang bug): {e}") from None
        if as_module:
            return module
        return module.operation.get_asm(print_generic_op_form=True)
