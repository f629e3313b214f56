"""``run_kernel``: lower one kernel's emitted function to LLVM and execute it on the host.

This is how the emitted IR is shown to mean what the kernel means: the same
``func.func`` the design module carries is lowered with upstream passes and run
through the MLIR ExecutionEngine on numpy arrays, and its results are compared
with ``tilelang/ir/semantics.py``.

bf16 on the host: arrays cross the C interface as their uint16 bit patterns
(a memref descriptor only carries a pointer), bf16 scalars as a ``c_uint16``;
the emitted kernels compute bf16 in f32 (``scalar_rules``), ``arith.extf``/``arith.truncf``
to and from bf16 are expanded into integer code by ``arith-expand{include-bf16=true}``,
and the lowered module loads, stores and selects
bf16 values as their i16 bit patterns (:func:`_bf16_as_bits`), so no bf16 support in
the host CPU or its runtime library is needed (x86 code would move a bf16 value
through an f32 register with ``__truncsfbf2``, which the JIT does not have).
"""

from __future__ import annotations

import ctypes
import weakref
from dataclasses import dataclass

import numpy as np

from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.kernels import lower_kernel
from tilelang.errors import KernelError
from tilelang.ir.calls import bind, host_value
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import ExternKernel, Kernel, Param
from tilelang.ir.types import TileType

#: The upstream pipeline from the emitted dialects to the LLVM dialect (then :func:`_bf16_as_bits`).
HOST_PIPELINE = (
    "builtin.module("
    "func.func(convert-linalg-to-loops),"
    "convert-scf-to-cf,"
    "expand-strided-metadata,"
    "lower-affine,"
    "arith-expand{include-bf16=true},"
    "convert-math-to-llvm,"
    "finalize-memref-to-llvm,"
    "convert-arith-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm,"
    "reconcile-unrealized-casts)"
)
#: After :func:`_bf16_as_bits`: ``bitcast(bitcast(x))`` back to x's type folds to x, and unused casts go.
FOLD = "builtin.module(canonicalize)"


def _bf16_as_bits(m: object, module: object) -> None:
    """Carry every bf16 value of an LLVM-dialect module as its i16 bit pattern: loads, stores and selects
    of bf16 become i16 ones (the bitcast pairs through bf16 this leaves fold away in :data:`FOLD`). The values
    are unchanged; without it x86 code moves a bf16 through an f32 register and back with ``__truncsfbf2``,
    which the JIT lacks."""
    ir = m.ir  # type: ignore[attr-defined]
    bf16, i16 = ir.BF16Type.get(), ir.IntegerType.get_signless(16)
    work: list[object] = []

    def visit(op: object) -> object:
        o = op.operation  # type: ignore[attr-defined]
        if (o.name in ("llvm.load", "llvm.select") and o.results[0].type == bf16) or (
                o.name == "llvm.store" and o.operands[0].type == bf16):
            work.append(o)
        return ir.WalkResult.ADVANCE

    def create(name: str, results: list, operands: list, like: object = None) -> object:
        attrs = {k: like.attributes[k] for k in like.attributes} if like is not None else None  # type: ignore[attr-defined]
        return ir.Operation.create(name, results=results, operands=operands, attributes=attrs)

    module.operation.walk(visit)  # type: ignore[attr-defined]
    for o in work:
        with ir.InsertionPoint(o), o.location:  # type: ignore[attr-defined]
            ops = list(o.operands)  # type: ignore[attr-defined]
            if o.name == "llvm.store":  # type: ignore[attr-defined]
                bits = create("llvm.bitcast", [i16], [ops[0]]).result
                create("llvm.store", [], [bits, *ops[1:]], o)
            else:
                if o.name == "llvm.select":  # type: ignore[attr-defined]
                    ops = [ops[0], *(create("llvm.bitcast", [i16], [x]).result for x in ops[1:])]
                bits = create(o.name, [i16], ops, o).result  # type: ignore[attr-defined]
                o.results[0].replace_all_uses_with(create("llvm.bitcast", [bf16], [bits]).result)  # type: ignore[attr-defined]
        o.erase()  # type: ignore[attr-defined]


_SCALAR_CTYPES = {
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "f32": ctypes.c_float,
    "bf16": ctypes.c_uint16,  # the bit pattern; see the module docstring
}


@dataclass(frozen=True)
class Compiled:
    """A kernel lowered to LLVM and JIT-compiled; the context must outlive the engine."""

    context: object
    module: object
    engine: object


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def kernel_module_text(kernel: Kernel, generic: bool = False) -> str:
    """The verified module holding just ``kernel``'s function, as text.

    Args:
        kernel: a traced kernel.
        generic: print in generic op form.

    Raises:
        KernelError: the kernel is an extern kernel, or lowering failed verification.
    """
    m = mlir()
    with m.ir.Context(), m.ir.Location.unknown():
        module = _kernel_module(kernel, c_interface=False)
        return module.operation.get_asm(print_generic_op_form=generic)


def _kernel_module(kernel: Kernel, c_interface: bool) -> object:
    m = mlir()
    if isinstance(kernel, ExternKernel):
        raise KernelError(
            f"extern kernel {kernel.name!r} has no MLIR body (the vendor toolchain links {kernel.object_file or 'its object'}); "
            "run_kernel needs a @tl.kernel"
        )
    if not isinstance(kernel, Kernel):
        raise KernelError(f"run_kernel needs a @tl.kernel, got {type(kernel).__name__}")
    module = m.ir.Module.create()
    with m.ir.InsertionPoint(module.body):
        lower_kernel(kernel, c_interface=c_interface)
    try:
        module.operation.verify()
    except m.ir.MLIRError as e:
        raise KernelError(
            f"the MLIR emitted for kernel {kernel.name!r} failed verification (a tilelang bug): {e}"
        ) from None
    return module


def compile_kernel(kernel: Kernel) -> Compiled:
    """Lower ``kernel`` to LLVM and JIT it (cached per kernel object).

    Raises:
        KernelError: for an extern kernel or a lowering failure.
    """
    hit = _CACHE.get(kernel)
    if hit is not None:
        return hit
    m = mlir()
    ctx = m.ir.Context()
    with ctx, m.ir.Location.unknown():
        module = _kernel_module(kernel, c_interface=True)
        try:
            m.passmanager.PassManager.parse(HOST_PIPELINE).run(module.operation)
            _bf16_as_bits(m, module)
            m.passmanager.PassManager.parse(FOLD).run(module.operation)
        except m.ir.MLIRError as e:
            raise KernelError(f"lowering kernel {kernel.name!r} to LLVM failed (a tilelang bug): {e}") from None
        engine = m.execution_engine.ExecutionEngine(module, opt_level=2)
    compiled = Compiled(ctx, module, engine)
    _CACHE[kernel] = compiled
    return compiled


def run_kernel(kernel: Kernel, *arrays: object, **named: object) -> None:
    """Execute ``kernel``'s emitted MLIR on the host, writing results into the numpy arrays.

    Arguments are passed as to the kernel itself (``kernel(a, c, 3)``): numpy
    arrays for tile parameters (written ones must already have the exact dtype,
    ``ml_dtypes.bfloat16`` for bf16), Python numbers for scalars.

    Args:
        kernel: a ``@tl.kernel``.
        *arrays: the arguments in parameter order.
        **named: or by parameter name.

    Raises:
        KernelError: wrong arguments, an extern kernel, or a lowering failure.
        TileLangError: the MLIR bindings are not installed.
    """
    values = bind(kernel, arrays, named)
    prepared = [_prepare(kernel, p, v) for p, v in zip(kernel.params, values, strict=True)]
    compiled = compile_kernel(kernel)
    keep: list[object] = []
    ptrs = [_pointer(p, host, keep) for p, (host, _) in zip(kernel.params, prepared, strict=True)]
    compiled.engine.invoke(kernel.name, *ptrs)
    for (host, user), p in zip(prepared, kernel.params, strict=True):
        if user is not None and p.name in kernel.written and host is not user:
            user[...] = host


def _prepare(kernel: Kernel, p: Param, v: object) -> tuple[np.ndarray, np.ndarray | None]:
    """(the contiguous array handed to the engine, the user's array to copy back into or None)."""
    value = host_value(kernel, p, v)
    if isinstance(p.type, TileType) and p.name in kernel.written:
        return np.ascontiguousarray(value), value
    return np.ascontiguousarray(value), None


def _pointer(p: Param, host: np.ndarray, keep: list) -> object:
    """The ctypes argument for one parameter (``keep`` holds what must stay alive for the call)."""
    runtime = mlir().runtime
    if isinstance(p.type, DType):
        raw = host.view(np.uint16) if p.type.name == "bf16" else host
        box = _SCALAR_CTYPES[p.type.name](raw.item())
        keep.append(box)
        return ctypes.pointer(box)
    raw = host.view(np.uint16) if p.type.dtype.name == "bf16" else host
    desc = runtime.get_ranked_memref_descriptor(raw)
    keep.extend((raw, desc))
    return ctypes.pointer(ctypes.pointer(desc))
