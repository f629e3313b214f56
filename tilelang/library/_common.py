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


#: Why a grid cannot work (a sentence naming the problem), or None when it can.
GridCheck = Callable[[Grid], str | None]
#: The shim DMA channels a grid's host moves take: (MM2S, S2MM, what takes them, for messages).
GridMoves = Callable[[Grid], tuple[int, int, str]]


@dataclass(frozen=True)
class ShimReach:
    """The columns ``cores=None`` keeps a grid to, and the NoC shim channels its host moves may take there.

    Attributes:
        first: the run's first column.
        cols: its columns.
        mm2s: MM2S channels of the NoC shims in it.
        s2mm: S2MM channels of the NoC shims in it.
        whole: whether that is the whole array and every NoC shim.
    """

    first: int
    cols: int
    mm2s: int
    s2mm: int
    whole: bool


def shim_reach(dev: Device) -> ShimReach:
    """The columns, and the NoC shims' channels, ``cores=None`` sizes a grid to: a rule of the device's layout.

    A memtile with no east or west stream links (AIE-ML's, AIE_FACTS "Stream switch") reaches a NoC shim
    only down its own column and along the shim row. On a device whose NoC shims sit in only some columns
    (the Versal AIE-ML parts), host moves of many columns then crowd the shim row and the vertical links of
    the NoC shims' columns. The rule: the widest run of consecutive columns each at most one column from a
    NoC shim's column (the westmost on a tie), and only the channels of the NoC shims in that run; xcve2302:
    columns 1-12 and all 6 NoC shims, xcve2802: columns 1-8 and 4 of its 12 (grids its 24 + 24 channels
    allow, 4 x 16 and 2 x 16 GEMMs, did not route: docs/library.md "Default grids"). Elsewhere (a NoC shim in
    every column, or no memtiles: AIE1's cores route east and west) the whole array and every NoC shim.
    """
    cols = sorted({c for c, _ in dev.tiles("compute")})
    shims = [t for t in dev.tiles("shim") if dev.is_noc_shim(t)]
    whole = ShimReach(cols[0], len(cols), shim_channels(dev, "mm2s"), shim_channels(dev, "s2mm"), True)
    noc = {c for c, _ in shims}
    links = set(dev.links())
    sideways = any(((c, r), (c + d, r)) in links for c, r in dev.tiles("mem") for d in (-1, 1))
    if not has_memtiles(dev) or sideways or noc >= set(cols):
        return whole
    near = [c for c in cols if any(abs(c - s) <= 1 for s in noc)]
    runs: list[list[int]] = []
    for c in near:
        if runs and runs[-1][-1] == c - 1:
            runs[-1].append(c)
        else:
            runs.append([c])
    run = max(runs, key=len)  # the first of the widest
    inside = [t for t in shims if run[0] <= t[0] <= run[-1]]
    return ShimReach(run[0], len(run), sum(dev.dma_channels(t, "mm2s") for t in inside),
                     sum(dev.dma_channels(t, "s2mm") for t in inside), False)


def candidate_grids(dev: Device, max_rows: int | None = None, max_cores: int | None = None,
                    max_cols: int | None = None) -> list[Grid]:
    """Every grid of at most ``max_rows`` rows, ``max_cols`` columns and ``max_cores`` cores that fits the
    compute array, in the order ``cores=None`` tries them: most cores first, then most rows (fewer columns,
    so fewer per-column host moves)."""
    rows, cols = compute_shape(dev)
    cap_rows, cap_cols = min(rows, max_rows or rows), min(cols, max_cols or cols)
    cap_cores = max_cores or rows * cols
    grids = [Grid(r, q) for r in range(1, cap_rows + 1) for q in range(1, cap_cols + 1) if r * q <= cap_cores]
    return sorted(grids, key=lambda g: (-g.cores, -g.rows))


def choose_grid(dev: Device, cores: int | tuple[int, int] | None, what: str, max_rows: int | None = None,
                max_cores: int | None = None, moves: GridMoves | None = None, splits: GridCheck | None = None) -> Grid:
    """The core grid a factory uses.

    ``cores=None`` takes the first of :func:`candidate_grids` (most cores first, then most rows), within
    :func:`shim_reach`'s columns, whose host moves (``moves``) fit :func:`shim_reach`'s channels and whose
    sizes split over it (``splits``): a rule of the device and the arguments only, the same on every machine.

    Args:
        dev: the device.
        cores: None (the rule above), a core count (the most rows that divide it), or (rows, cols).
        what: the factory's name, for messages.
        max_rows: most cores per column the factory's data movement allows.
        max_cores: most cores in all the factory's data movement allows.
        moves: the shim DMA channels the factory's host moves take on a grid (one per fifo each); an
            explicit grid needing more than the device's NoC shims have is a DesignError.
        splits: why the factory's sizes do not split over a grid (None: they do); checked for ``cores=None``
            only (an explicit grid's sizes are checked, with the factory's own message, when it is built).

    Returns:
        The grid.

    Raises:
        DesignError: when the request does not fit the device or the limits, or (``cores=None``) no grid does,
            saying why.
    """
    rows, cols = compute_shape(dev)
    cap_rows = min(rows, max_rows or rows)
    cap_cores = max_cores or rows * cols
    if cores is None:
        reach = shim_reach(dev)

        def feeds(g: Grid) -> str | None:
            return shim_problem(dev, *moves(g), reach) if moves else None

        return _first_grid(dev, what, candidate_grids(dev, max_rows, max_cores, reach.cols), feeds, splits)
    if isinstance(cores, tuple):
        if len(cores) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in cores):
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
        why = (f"the memtile serving a column has {memtile_channels(dev, 'mm2s')} MM2S and "
               f"{memtile_channels(dev, 's2mm')} S2MM channels" if has_memtiles(dev) else
               f"{dev.name} has no memtiles to split or join a column's data")
        raise DesignError(f"{what}: {r} cores per column is more than this design's data movement allows "
                          f"({cap_rows}: {why}); use fewer rows")
    if r * q > cap_cores:
        raise DesignError(f"{what}: {r * q} cores need more shim DMA channels than {dev.name} has "
                          f"({shim_channels(dev, 'mm2s')} MM2S, {shim_channels(dev, 's2mm')} S2MM); use at most "
                          f"{cap_cores} cores")
    grid = Grid(r, q)
    why = shim_problem(dev, *moves(grid)) if moves else None
    if why:
        raise DesignError(f"{what}: {why}; use fewer rows or columns (cores=None keeps to grids whose host moves fit)")
    return grid


def _first_grid(dev: Device, what: str, grids: list[Grid], feeds: GridCheck, splits: GridCheck | None) -> Grid:
    """The first of ``grids`` that ``feeds`` and ``splits`` accept.

    Raises:
        DesignError: none does; naming why the largest and the smallest grid were refused.
    """
    refused: list[tuple[Grid, str]] = []
    for grid in grids:
        why = feeds(grid) or (splits(grid) if splits else None)
        if not why:
            return grid
        refused.append((grid, why))
    ends = refused[:1] + refused[1:][-1:]
    reasons = "; ".join(f"{g.rows} x {g.cols}: {why}" for g, why in ends)
    raise DesignError(f"{what}: no core grid on {dev.name} works ({reasons}); change the sizes")


def shim_problem(dev: Device, mm2s: int, s2mm: int, moves: str, reach: ShimReach | None = None) -> str | None:
    """Why host moves needing ``mm2s`` shim MM2S and ``s2mm`` S2MM channels (one each: a channel carries one
    fifo's moves) cannot all have one, naming ``moves`` (what needs them); None when they can.

    Against every NoC shim of ``dev``, or the NoC shims of ``reach`` (:func:`shim_reach`) when it is given and
    not the whole array.
    """
    near = reach is not None and not reach.whole
    have = {"MM2S": reach.mm2s if near else shim_channels(dev, "mm2s"),
            "S2MM": reach.s2mm if near else shim_channels(dev, "s2mm")}
    over = [(d, need, have[d]) for d, need in (("MM2S", mm2s), ("S2MM", s2mm)) if need > have[d]]
    if not over:
        return None
    whose = (f"the NoC shims of {dev.name}'s columns {reach.first}-{reach.first + reach.cols - 1} have" if near
             else f"{dev.name}'s NoC shims have")
    if len(over) == 1:
        (d, need, n), = over
        return f"{moves}: {need} shim {d} channels; {whose} {n}"
    (_, n_in, h_in), (_, n_out, h_out) = over
    return f"{moves}: {n_in} shim MM2S and {n_out} S2MM channels; {whose} {h_in} MM2S and {h_out} S2MM"


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
    "ShimReach",
    "build_design",
    "build_kernel",
    "candidate_grids",
    "choose_grid",
    "compute_shape",
    "divide",
    "has_memtiles",
    "memtile_channels",
    "resolve_device",
    "shim_channels",
    "shim_problem",
    "shim_reach",
    "zero_of",
]
