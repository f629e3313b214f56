"""The MLIR backend: a Plan as an mlir-aie module, kernels as upstream ``func.func``s.

- ``emit_mlir(plan, as_module=False, level="objectfifo" | "physical")``: the
  verified module (generic-form text, or an ``mlir.ir.Module``).
- ``run_kernel(kernel, *arrays)``: one kernel's emitted function lowered to
  LLVM and run on the host through the ExecutionEngine.
- ``kernel_mlir(kernel)``, ``emit_kernel_functions(design)``: kernel functions
  alone, for upstream ``mlir-opt``.
- ``upstream_view_text(module)``: an emitted module as upstream ``mlir-opt``
  verifies it whole (its symbol scope made explicit; see ``upstream.py``).

The upstream MLIR Python bindings are imported on first use: without the
``mlir`` extra these raise a ``TileLangError`` saying what to install. See
docs/mlir_backend.md.
"""

from __future__ import annotations


def emit_mlir(plan, as_module: bool = False, level: str = "objectfifo"):  # noqa: ANN001, ANN201
    """The plan as a verified mlir-aie module; see :func:`tilelang.backends.mlir.emit.emit_mlir`."""
    from tilelang.backends.mlir.emit import emit_mlir as emit

    return emit(plan, as_module=as_module, level=level)


def run_kernel(kernel, *arrays, **named) -> None:  # noqa: ANN001
    """Execute ``kernel``'s emitted MLIR on the host; see :func:`tilelang.backends.mlir.run.run_kernel`."""
    from tilelang.backends.mlir.run import run_kernel as run

    run(kernel, *arrays, **named)


def kernel_mlir(kernel, generic: bool = False) -> str:  # noqa: ANN001
    """The verified module text holding one kernel's ``func.func``."""
    from tilelang.backends.mlir.run import kernel_module_text

    return kernel_module_text(kernel, generic=generic)


def emit_kernel_functions(design, as_module: bool = False):  # noqa: ANN001, ANN201
    """A design's kernel functions as a module upstream mlir-opt verifies and lowers."""
    from tilelang.backends.mlir.emit import emit_kernel_functions as emit

    return emit(design, as_module=as_module)


def upstream_view_text(module) -> str:  # noqa: ANN001
    """The upstream view of an emitted module; see :func:`tilelang.backends.mlir.upstream.upstream_view_text`."""
    from tilelang.backends.mlir.upstream import upstream_view_text as view

    return view(module)


__all__ = ["emit_kernel_functions", "emit_mlir", "kernel_mlir", "run_kernel", "upstream_view_text"]
