"""tilelang: a Python DSL for tiled spatial accelerators (AMD AI Engine style).

``import tilelang as tl``; see API.md-style documentation in docs/.
"""

from __future__ import annotations

from tilelang import ir, library
from tilelang.devices import Device, device, devices
from tilelang.errors import (
    DeadlockError,
    DesignError,
    KernelError,
    ParseError,
    PlanError,
    SimulationError,
    TileLangError,
)
from tilelang.frontend.design import core, design, dma, fifo, join, range, split
from tilelang.frontend.kernel import abs, exp, extern_kernel, kernel, matmul, max, maximum, minimum, relu, sum, where
from tilelang.ir.dtypes import bf16, f32, i8, i16, i32
from tilelang.ir.pattern import AccessPattern, pattern, tiles
from tilelang.ir.types import Tensor, TensorType, Tile, TileType

__version__ = "0.1.0"

__all__ = [
    "AccessPattern",
    "DeadlockError",
    "DesignError",
    "Device",
    "KernelError",
    "ParseError",
    "PlanError",
    "SimulationError",
    "Tensor",
    "TensorType",
    "Tile",
    "TileLangError",
    "TileType",
    "abs",
    "bf16",
    "core",
    "design",
    "device",
    "devices",
    "dma",
    "exp",
    "extern_kernel",
    "f32",
    "fifo",
    "i8",
    "i16",
    "i32",
    "ir",
    "library",
    "join",
    "kernel",
    "matmul",
    "max",
    "maximum",
    "minimum",
    "pattern",
    "range",
    "relu",
    "split",
    "sum",
    "tiles",
    "where",
]
