"""Kernel IR -> one ``func.func`` in upstream dialects (linalg, arith, math, memref).

The lowering is a table of rules keyed by op kind (as JAX Pallas'
``register_lowering_rule``): ``RULES[kind](lowering, op) -> value``. Elementwise
kinds share one rule that builds a fused :class:`~values.Expr` from the scalar
rules in ``scalar_rules.py``; memory, contraction and reduction kinds have
their own. Tile parameters are ``memref``s with the identity layout; scalar
parameters are plain values. The function returns nothing and writes its
results into its tile parameters, as the kernel does.

Where MLIR cannot match ``semantics.py`` bit for bit (documented in
docs/mlir_backend.md): float matmuls and sums accumulate in f32 in loop order
(numpy sums in f64 and rounds once), and ``math.exp`` is the host libm's
``expf``; results agree within docs/ir.md's tolerance (1e-5 relative for f32,
1e-2 for bf16). Everything else, integers included, is exact.
"""

from __future__ import annotations

from tilelang.backends.mlir import compute_rules, memory_rules  # noqa: F401 - they register the rules
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.lowering import KernelLowering
from tilelang.backends.mlir.types import scalar_type, tile_memref_type
from tilelang.ir.kernel import Kernel, Param
from tilelang.ir.types import TileType


def function_type(kernel: Kernel) -> object:
    """``(memref<...>, ..., scalar, ...) -> ()`` for a kernel's parameters."""
    ir = mlir().ir
    return ir.FunctionType.get([param_type(p) for p in kernel.params], [])


def param_type(p: Param) -> object:
    """The MLIR type a parameter is passed as."""
    return tile_memref_type(p.type) if isinstance(p.type, TileType) else scalar_type(p.type)


def lower_kernel(kernel: Kernel, c_interface: bool = False) -> object:
    """Build ``func.func @<kernel.name>`` at the current insertion point.

    Args:
        kernel: a traced kernel.
        c_interface: add ``llvm.emit_c_interface`` (for host execution).

    Returns:
        The ``func.FuncOp``.

    Raises:
        KernelError: for an op kind without a lowering rule.
    """
    m = mlir()
    if not c_interface:
        fn = m.func.FuncOp(kernel.name, function_type(kernel))
    else:
        # On the host a bf16 scalar crosses the C interface as its 16-bit pattern and is bitcast inside:
        # a bf16 passed by value would need the host's bf16 calling convention, which LLVM's x86 back end
        # meets with a call to __truncsfbf2 that the JIT cannot resolve.
        host = [m.ir.IntegerType.get_signless(16) if _bf16_scalar(p) else param_type(p) for p in kernel.params]
        fn = m.func.FuncOp(kernel.name, m.ir.FunctionType.get(host, []))
        fn.attributes["llvm.emit_c_interface"] = m.ir.UnitAttr.get()
    block = fn.add_entry_block()
    with m.ir.InsertionPoint(block):
        args = list(block.arguments)
        if c_interface:
            args = [m.arith.BitcastOp(param_type(p), a).result if _bf16_scalar(p) else a
                    for p, a in zip(kernel.params, args, strict=True)]
        KernelLowering(kernel, args).run()
        m.func.ReturnOp([])
    return fn


def _bf16_scalar(p: Param) -> bool:
    return not isinstance(p.type, TileType) and p.type.name == "bf16"


def declare_extern(name: str, params: tuple[Param, ...], object_file: str | None = None) -> object:
    """``func.func private @name(...)``: a vendor kernel the toolchain links (no body).

    With ``object_file``, the declaration carries ``link_with`` (mlir-aie's current form: its
    ``aie-assign-core-link-files`` pass gives each core calling it that file in ``link_files``).
    """
    m = mlir()
    ftype = m.ir.FunctionType.get([param_type(p) for p in params], [])
    fn = m.func.FuncOp(name, ftype, visibility="private")
    if object_file:
        fn.attributes["link_with"] = m.ir.StringAttr.get(object_file)
    return fn


def stack_bytes(fn: object) -> int:
    """Bytes of ``memref.alloca`` temporaries in an emitted kernel function (they live on the core's stack)."""
    total = 0

    def visit(op: object) -> object:
        nonlocal total
        if op.operation.name == "memref.alloca":
            t = op.operation.results[0].type
            total += _memref_bytes(t)
        return mlir().ir.WalkResult.ADVANCE

    fn.operation.walk(visit)
    return total


def _memref_bytes(t: object) -> int:
    ir = mlir().ir
    mt = ir.MemRefType(t)
    n = 1
    for d in mt.shape:
        n *= d
    et = mt.element_type
    width = et.width if isinstance(et, ir.IntegerType) else 16 if isinstance(et, ir.BF16Type) else 32
    return n * max(1, width // 8)


__all__ = ["declare_extern", "function_type", "lower_kernel", "param_type", "stack_bytes"]
