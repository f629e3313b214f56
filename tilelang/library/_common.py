"""What every library factory shares: the core grid, and building designs and kernels from parts.

A factory knows its tensors and kernels only when it is called (their shapes
come from the arguments), so it cannot write ``def f(A: tl.Tensor[...])``
with literal annotations. :func:`build_design` and :func:`build_kernel` give a
generated function the signature and annotations ``@tl.design`` and
``@tl.kernel`` read, so a library design is traced by the same frontend, and
verified by the same checks, as one written by hand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import DesignError
from tilelang.frontend.design import design
from tilelang.frontend.kernel import kernel
from tilelang.ir.design import Design
from tilelang.ir.dtypes import USER_DTYPES, DType
from tilelang.ir.kernel import Kernel
from tilelang.ir.types import TensorType, TileType


@dataclass(frozen=True)
class Grid:
    """``rows`` x ``cols`` cores; core ``index(r, q) = q * rows + r`` (column-major, as IRON numbers workers).

    Column-major numbering keeps the cores one memtile serves (one column)
    consecutive, so a column's share of a tensor is one contiguous run.
    """

    rows: int
    cols: int

    @property
    def cores(self) -> int:
        return self.rows * self.cols

    def index(self, r: int, q: int) -> int:
        """The core number of row ``r``, column ``q``."""
        return q * self.rows + r

    def cells(self) -> Iterator[tuple[int, int]]:
        """(row, column) of every core, in core-number order."""
        for q in range(self.cols):
            for r in range(self.rows):
                yield r, q


def resolve_device(device: str | Device) -> Device:
    """A Device from a name or a Device.

    Raises:
        DesignError: for an unknown name (listing the known ones).
    """
    return lookup_device(device)


def check_args(what: str, sizes: dict[str, object] | None = None, dtypes: dict[str, object] | None = None) -> None:
    """A factory's size and dtype arguments, before anything is built from them.

    Args:
        what: the factory's name, for the message.
        sizes: arguments that must be positive ints.
        dtypes: arguments that must be tilelang dtypes (None allowed: "the default").

    Raises:
        DesignError: naming the argument, the value and what is accepted.
    """
    for name, v in (sizes or {}).items():
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise DesignError(f"{what}: {name} must be a positive int, got {v!r}")
    for name, v in (dtypes or {}).items():
        if v is None or isinstance(v, DType):
            continue
        names = ", ".join(f"tl.{d.name}" for d in USER_DTYPES)
        raise DesignError(f"{what}: {name} must be a tilelang dtype ({names}), got {_dtype_text(v)}")


def _dtype_text(v: object) -> str:
    """``v`` as a user wrote it, and the tilelang dtype it means when there is one (np.float32 -> tl.f32)."""
    try:
        np_dt = np.dtype(v)  # type: ignore[call-overload]
    except TypeError:
        return repr(v)
    same = [d for d in USER_DTYPES if np.dtype(d.numpy) == np_dt]
    return f"numpy {np_dt}" + (f" (write tl.{same[0].name})" if same else ", which no AIE core computes in")


def has_memtiles(dev: Device) -> bool:
    """Whether ``dev`` has memory tiles (AIE-ML / AIE2 / AIE2P do, AIE1 does not)."""
    return bool(dev.tiles("mem"))


def compute_shape(dev: Device) -> tuple[int, int]:
    """(rows, columns) of the compute-tile array."""
    compute = dev.tiles("compute")
    return len({r for _, r in compute}), len({c for c, _ in compute})


def mac_step(kernel: object, a_in: object, b_in: object, acc: object) -> None:
    """One k-step of a GEMM core (call inside a core body): take an A and a B tile, run ``kernel(a, b, acc)``,
    release both."""
    a, b = a_in.acquire(), b_in.acquire()  # type: ignore[attr-defined]
    kernel(a, b, acc)  # type: ignore[operator]
    a_in.release()  # type: ignore[attr-defined]
    b_in.release()  # type: ignore[attr-defined]


def shim_channels(dev: Device, direction: str) -> int:
    """DMA channels in ``direction`` ("mm2s" out of DDR, "s2mm" into DDR) over every NoC shim."""
    return sum(dev.dma_channels(t, direction) for t in dev.tiles("shim") if dev.is_noc_shim(t))


def memtile_channels(dev: Device, direction: str) -> int:
    """DMA channels in ``direction`` of one memory tile (0 on devices without them)."""
    mems = dev.tiles("mem")
    return dev.dma_channels(mems[0], direction) if mems else 0


def choose_grid(dev: Device, cores: int | tuple[int, int] | None, what: str, max_rows: int | None = None,
                max_cores: int | None = None) -> Grid:
    """The core grid a factory uses.

    Args:
        dev: the device.
        cores: None (as many as fit: ``max_rows`` rows of every column, capped by
            ``max_cores``), a core count (the most rows that divide it), or (rows, cols).
        what: the factory's name, for messages.
        max_rows: most cores per column the factory's data movement allows.
        max_cores: most cores in all the factory's data movement allows.

    Returns:
        The grid.

    Raises:
        DesignError: when the request does not fit the device or the limits, saying why.
    """
    rows, cols = compute_shape(dev)
    cap_rows = min(rows, max_rows or rows)
    cap_cores = max_cores or rows * cols
    if cores is None:
        r = max(1, min(cap_rows, cap_cores))
        return Grid(r, max(1, min(cols, cap_cores // r)))
    if isinstance(cores, tuple):
        if len(cores) != 2 or not all(isinstance(x, int) and x > 0 for x in cores):
            raise DesignError(f"{what}: cores must be a positive int or (rows, cols), got {cores!r}")
        r, q = cores
    elif isinstance(cores, int) and not isinstance(cores, bool) and cores > 0:
        r = next((d for d in range(cap_rows, 0, -1) if cores % d == 0 and cores // d <= cols), 0)
        if not r:
            raise DesignError(f"{what}: {cores} cores do not fit {dev.name}'s {cols} columns of at most {cap_rows} "
                              f"cores each")
        q = cores // r
    else:
        raise DesignError(f"{what}: cores must be None, a positive int or (rows, cols), got {cores!r}")
    if r > rows or q > cols:
        raise DesignError(f"{what}: a {r} x {q} core grid does not fit {dev.name}'s {rows} x {cols} compute tiles")
    if r > cap_rows:
        raise DesignError(f"{what}: {r} cores per column is more than this design's data movement allows "
                          f"({cap_rows}: the memtile serving a column has {memtile_channels(dev, 'mm2s')} MM2S and "
                          f"{memtile_channels(dev, 's2mm')} S2MM channels); use fewer rows")
    if r * q > cap_cores:
        raise DesignError(f"{what}: {r * q} cores need more shim DMA channels than {dev.name} has "
                          f"({shim_channels(dev, 'mm2s')} MM2S, {shim_channels(dev, 's2mm')} S2MM); use at most "
                          f"{cap_cores} cores")
    return Grid(r, q)


def divide(total: int, part: int, what: str) -> int:
    """``total // part``, which must be exact.

    Raises:
        DesignError: naming ``what`` when ``part`` does not divide ``total``.
    """
    if part <= 0 or total % part:
        raise DesignError(f"{what}: {total} is not a multiple of {part}")
    return total // part


def build_design(name: str, dev: Device, tensors: dict[str, TensorType], body: Callable[..., None]) -> Design:
    """Trace ``body(*tensor proxies)`` as ``@tl.design`` would a function with these tensor parameters.

    Args:
        name: the design's name (an identifier).
        dev: the device.
        tensors: parameter name -> ``tl.Tensor[...]``, in argument order.
        body: called once with one proxy per tensor; declares fifos, cores and moves.

    Returns:
        The traced, verified design.
    """

    def traced(*args: object) -> None:
        body(*args)

    traced.__name__ = traced.__qualname__ = name
    traced.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in tensors]
    )
    traced.__annotations__ = dict(tensors)
    return design(traced, device=dev)


def build_kernel(name: str, params: dict[str, TileType | DType], body: Callable[..., None]) -> Kernel:
    """Trace ``body(*parameter proxies)`` as ``@tl.kernel`` would a function with these parameters.

    Used where the number of parameters depends on the arguments (a k-row
    sliding window has k row parameters).
    """

    def traced(*args: object) -> None:
        body(*args)

    traced.__name__ = traced.__qualname__ = name
    traced.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in params]
    )
    traced.__annotations__ = dict(params)
    return kernel(traced)


def zero_of(dt: DType) -> int | float:
    """The Python constant 0 of a dtype (kernel constants take the operand's kind)."""
    return 0.0 if dt.is_float else 0


__all__ = [
    "Grid",
    "build_design",
    "build_kernel",
    "choose_grid",
    "compute_shape",
    "divide",
    "has_memtiles",
    "memtile_channels",
    "resolve_device",
    "shim_channels",
    "zero_of",
]
