"""Backends that consume a Plan: ``tilelang.backends.mlir`` emits mlir-aie MLIR.

Importing this package never imports the MLIR Python bindings; they are
loaded on first use, so ``import tilelang`` works without the ``mlir`` extra.
"""

from tilelang.backends import mlir

__all__ = ["mlir"]
