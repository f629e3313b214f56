"""The one place that imports the upstream MLIR Python bindings.

They are an optional extra (``pip install 'tilelang-aie[mlir]'``), imported
lazily on first use so that ``import tilelang`` works without them.
"""

from __future__ import annotations

import importlib
import os
import types
from functools import cache

from tilelang.errors import TileLangError

INSTALL_HINT = "pip install 'tilelang-aie[mlir]'"

_MODULES = (
    "ir",
    "passmanager",
    "execution_engine",
    "runtime",
    "dialects.func",
    "dialects.arith",
    "dialects.math",
    "dialects.scf",
    "dialects.memref",
    "dialects.linalg",
    "dialects.vector",
)


@cache
def mlir() -> types.SimpleNamespace:
    """The MLIR binding modules as one namespace (``m.ir``, ``m.arith``, ...).

    Raises:
        TileLangError: the bindings are not installed; the message says what to install.
    """
    loaded = {}
    for name in _MODULES:
        try:
            mod = importlib.import_module(f"mlir.{name}")
        except ImportError as e:
            raise TileLangError(
                f"the MLIR backend needs the upstream MLIR Python bindings (could not import mlir.{name}: {e}); "
                f"install them with: {INSTALL_HINT}"
            ) from None
        loaded[name.rsplit(".", 1)[-1]] = mod
    return types.SimpleNamespace(**loaded)


def mlir_opt_path() -> str:
    """Path of the ``mlir-opt`` binary shipped with the bindings (site-packages/mlir/bin).

    Raises:
        TileLangError: the binary is not there.
    """
    ir = mlir().ir
    root = os.path.dirname(os.path.abspath(ir.__file__))
    path = os.path.join(root, "bin", "mlir-opt")
    if not os.path.exists(path):
        raise TileLangError(f"mlir-opt not found at {path}; install the tools with: {INSTALL_HINT}")
    return path
