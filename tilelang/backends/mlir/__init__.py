"""The MLIR backend: a Plan as an mlir-aie module, kernels as upstream ``func.func``s.

``emit_mlir(plan)`` builds the module with the upstream MLIR Python bindings
(imported lazily: without the ``mlir`` extra, calling these raises a
``TileLangError`` saying what to install). ``run_kernel(kernel, *arrays)``
executes one kernel's emitted function on the host. See docs/mlir_backend.md.
"""

from __future__ import annotations


def run_kernel(kernel, *arrays, **named):  # noqa: ANN001, ANN201 - documented in run.run_kernel
    """Execute ``kernel``'s emitted MLIR on the host through the ExecutionEngine.

    See :func:`tilelang.backends.mlir.run.run_kernel`.
    """
    from tilelang.backends.mlir.run import run_kernel as run

    return run(kernel, *arrays, **named)


def kernel_mlir(kernel, generic: bool = False) -> str:  # noqa: ANN001
    """The verified MLIR module text of one kernel's ``func.func``."""
    from tilelang.backends.mlir.run import kernel_module_text

    return kernel_module_text(kernel, generic=generic)


__all__ = ["kernel_mlir", "run_kernel"]
