"""tilelang: a Python DSL for tiled spatial accelerators (AMD AI Engine style).

``import tilelang as tl``; see API.md-style documentation in docs/.
"""

from __future__ import annotations

# The subpackages tilelang.plan and tilelang.devices share their names with the
# API functions tl.plan and tl.devices: import them first, so that binding the
# functions below is final (a later first import of a submodule would rebind it).
import tilelang.devices
import tilelang.plan  # noqa: F401
from tilelang import backends, ir, library, passes
from tilelang.api import emit_mlir, plan, read_mlir, route, simulate, tile_contraction
from tilelang.devices import Device, device, devices
from tilelang.errors import (
    DeadlockError,
    DesignError,
    KernelError,
    ParseError,
    PlanError,
    PlanWarning,
    SimulationError,
    TileLangError,
)
from tilelang.explore import Exploration, Space, Trial, explore
from tilelang.frontend.design import buffer, cascade, core, design, dma, fifo, join, range, split
from tilelang.frontend.kernel import (
    abs,
    exp,
    extern_kernel,
    kernel,
    matmul,
    max,
    maximum,
    min,
    minimum,
    relu,
    rsqrt,
    sqrt,
    sum,
    tanh,
    where,
)
from tilelang.ir.dtypes import bf16, f32, i8, i16, i32
from tilelang.ir.multiplan import MultiPlan
from tilelang.ir.pattern import AccessPattern, pattern, tiles
from tilelang.ir.plan import Plan
from tilelang.ir.types import Tensor, TensorType, Tile, TileType
from tilelang.passes import optimize
from tilelang.plan.routing import Routing
from tilelang.plan.tiling import Tiling
from tilelang.tenancy import colocate, fuse, serve

__version__ = "0.1.0"

__all__ = [
    "MultiPlan",
    "colocate",
    "fuse",
    "serve",
    "Routing",
    "Tiling",
    "Plan",
    "tile_contraction",
    "simulate",
    "route",
    "optimize",
    "passes",
    "plan",
    "emit_mlir",
    "read_mlir",
    "Exploration",
    "Space",
    "Trial",
    "explore",
    "backends",
    "AccessPattern",
    "DeadlockError",
    "DesignError",
    "Device",
    "KernelError",
    "ParseError",
    "PlanError",
    "PlanWarning",
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
    "buffer",
    "cascade",
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
    "min",
    "minimum",
    "pattern",
    "range",
    "relu",
    "rsqrt",
    "split",
    "sqrt",
    "sum",
    "tanh",
    "tiles",
    "where",
]
