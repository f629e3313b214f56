"""``tl.library.elementwise``: one kernel applied chunk by chunk over tensors, on a grid of cores.

The data-parallel pattern of mlir-aie's ``vector_vector_add``, ``eltwise_*``
and ``relu`` examples: every tensor is cut into equal contiguous chunks
(one fifo element each); core ``i`` of ``cores`` takes chunks ``i, i + cores,
...``, calls the kernel once per chunk and sends its results back. On devices
with memory tiles each core column is fed by one memtile split and drained by
one join (one shim channel per tensor per column); on AIE1 every core has its
own shim moves. See docs/library.md.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.design import core
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import abs as tl_abs
from tilelang.frontend.kernel import exp, maximum, minimum, relu, rsqrt, sqrt, tanh
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, i32
from tilelang.ir.kernel import ExternKernel, Kernel
from tilelang.ir.types import Tensor, Tile, TileType
from tilelang.library._common import (
    Grid,
    build_design,
    build_kernel,
    check_args,
    choose_grid,
    divide,
    has_memtiles,
    memtile_channels,
    resolve_device,
    shim_channels,
)
from tilelang.library._movement import ShimLimits, column_groups, gather, issue, scatter

#: sqrt(2 / pi), gelu's tanh approximation (Hendrycks and Gimpel; mlir-aie aie_kernels/activation/gelu.cc).
_GELU_SCALE = 0.7978845608028654


def sigmoid(a: object) -> object:
    """1 / (1 + exp(-a)) as 0.5 + 0.5 tanh(a / 2) (mlir-aie aie_kernels/activation/sigmoid.cc)."""
    return tanh(a * 0.5) * 0.5 + 0.5


def silu(a: object) -> object:
    """a * sigmoid(a) (mlir-aie aie_kernels/activation/silu.cc)."""
    return a * sigmoid(a)


def gelu(a: object) -> object:
    """0.5 a (1 + tanh(sqrt(2 / pi) (a + 0.044715 a^3))), the tanh approximation."""
    return a * 0.5 * (tanh((a + a * a * a * 0.044715) * _GELU_SCALE) + 1.0)


#: The named operations: name -> (arity, function of traced tiles).
OPS: dict[str, tuple[int, Callable[..., object]]] = {
    "copy": (1, lambda a: a),
    "neg": (1, lambda a: -a),
    "abs": (1, tl_abs),
    "relu": (1, relu),
    "exp": (1, exp),
    "sqrt": (1, sqrt),
    "rsqrt": (1, rsqrt),
    "tanh": (1, tanh),
    "sigmoid": (1, sigmoid),
    "silu": (1, silu),
    "gelu": (1, gelu),
    "add": (2, lambda a, b: a + b),
    "sub": (2, lambda a, b: a - b),
    "mul": (2, lambda a, b: a * b),
    "div": (2, lambda a, b: a / b),
    "max": (2, maximum),
    "min": (2, minimum),
}


#: The named ops of float tiles only.
FLOAT_OPS = frozenset({"exp", "sqrt", "rsqrt", "tanh", "sigmoid", "silu", "gelu"})


def _kernel_from(op: str | Callable[..., object], tile: int, dtype: DType) -> tuple[Kernel, dict[str, str]]:
    """A kernel over ``(tile,)`` chunks for a named op or a callable, and its tensor names."""
    if isinstance(op, str):
        if op not in OPS:
            raise DesignError(f"elementwise: unknown op {op!r}; named ops are {sorted(OPS)}, or pass a tl.kernel "
                              f"or a function of tiles")
        if op in FLOAT_OPS and not dtype.is_float:
            raise DesignError(f"elementwise: {op!r} needs a float dtype (dtype=tl.bf16 or tl.f32), got {dtype}")
        arity, fn = OPS[op]
        inputs, name = ["a", "b"][:arity], op
    else:
        fn = op
        try:
            inputs = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            raise DesignError(f"elementwise: cannot read the parameters of {op!r}; pass a tl.kernel") from None
        name = getattr(fn, "__name__", "fn")
        name = name if name.isidentifier() and name != "<lambda>" else "fn"
        if "c" in inputs or not inputs:
            raise DesignError(f"elementwise: a function of tiles takes one or more inputs, none named 'c' (the "
                              f"output); got parameters {inputs}. Write a tl.kernel for anything else")
    t = Tile[(tile,), dtype]
    params: dict[str, TileType | DType] = {p: t for p in inputs}
    params["c"] = t

    def body(*tiles: object) -> None:
        out = tiles[-1]
        out[...] = fn(*tiles[:-1])  # type: ignore[index]

    kern = build_kernel(f"{name}_{dtype}", params, body)
    return kern, {p: p.upper() for p in params}


def _check_kernel(kern: Kernel | ExternKernel, scalars: Mapping[str, object]) -> tuple[TileType, dict[str, str]]:
    """The common tile type of a user kernel's tile parameters and its tensor names."""
    tiles = [p for p in kern.params if p.is_tile]
    shapes = {p.type for p in tiles}
    if len(shapes) != 1:
        listed = ", ".join(f"{p.name}: {p.type}" for p in tiles)
        raise DesignError(f"elementwise: kernel {kern.name!r} must take tiles of one type (each call handles one "
                          f"chunk of every tensor); it takes {listed}")
    names = {p.name: p.name.upper() for p in tiles}
    if len(set(names.values())) != len(names):
        raise DesignError(f"elementwise: kernel {kern.name!r}'s tile parameters {sorted(names)} name the tensors "
                          f"(upper-cased); two of them coincide")
    missing = [p.name for p in kern.params if not p.is_tile and p.name not in scalars]
    if missing:
        raise DesignError(f"elementwise: kernel {kern.name!r} has scalar parameters {missing}; give their values "
                          f"with scalars={{...}}")
    unknown = set(scalars) - {p.name for p in kern.params if not p.is_tile}
    if unknown:
        raise DesignError(f"elementwise: scalars {sorted(unknown)} are not scalar parameters of {kern.name!r}")
    if not kern.written:
        raise DesignError(f"elementwise: kernel {kern.name!r} writes no tile")
    return next(iter(shapes)), names


def row_limits(dev: Device, n_in: int, n_out: int) -> tuple[int | None, int | None]:
    """(most cores per column, most cores) the chunked data movement fits on ``dev``.

    With memtiles a column's memtile serves ``n_in`` splits of ``rows`` parts
    and ``n_out`` joins: MM2S ``n_in * rows + n_out`` and S2MM ``n_in + n_out *
    rows`` channels. Without, every core needs ``n_in`` shim MM2S and ``n_out``
    shim S2MM channels of its own.
    """
    if has_memtiles(dev):
        mm2s, s2mm = memtile_channels(dev, "mm2s"), memtile_channels(dev, "s2mm")
        rows = [r for r in range(1, 9) if n_in * r + n_out <= mm2s and n_in + n_out * r <= s2mm]
        return (max(rows) if rows else 1), None
    return None, min(shim_channels(dev, "mm2s") // max(n_in, 1), shim_channels(dev, "s2mm") // max(n_out, 1))


def host_moves(dev: Device, grid: Grid, n_in: int, n_out: int) -> tuple[int, int]:
    """(shim MM2S, shim S2MM) channels the chunked moves of ``n_in`` scattered and ``n_out`` gathered tensors
    take on ``grid``: one per memtile group (:func:`~tilelang.library._movement.column_groups`) and tensor, or
    one per core and tensor where cores are fed straight from the shims."""
    g_in, g_out = column_groups(dev, grid, n_in, n_out)
    return (n_in * (g_in * grid.cols if g_in else grid.cores), n_out * (g_out * grid.cols if g_out else grid.cores))


def chunk_grid(dev: Device, cores: int | tuple[int, int] | None, name: str, n_in: int, n_out: int, n: int,
               chunk: int, extra: tuple[int, int] = (0, 0)) -> Grid:
    """The grid of a chunked design: ``cores`` as :func:`~tilelang.library._common.choose_grid` takes it.

    ``cores=None`` takes the grid with the most cores (then the most rows) whose memtiles have the
    channels (:func:`row_limits`), whose host moves (:func:`host_moves`, plus ``extra`` (MM2S, S2MM) of the
    design's own) have a shim DMA channel each within the columns and NoC shims of
    :func:`~tilelang.library._common.shim_reach`, and over which the ``n`` rows of each tensor split into
    whole chunks of ``chunk`` rows (``n`` a multiple of cores x ``chunk``).
    """
    max_rows, max_cores = row_limits(dev, n_in, n_out)

    def moves(g: Grid) -> tuple[int, int, str]:
        mm2s, s2mm = host_moves(dev, g, n_in, n_out)
        return (mm2s + extra[0], s2mm + extra[1],
                f"{n_in} input and {n_out} output tensors dealt to a {g.rows} x {g.cols} core grid")

    def splits(g: Grid) -> str | None:
        return None if n % (g.cores * chunk) == 0 else f"n={n} is not a multiple of {g.cores} cores x {chunk}"

    return choose_grid(dev, cores, name, max_rows=max_rows, max_cores=max_cores, moves=moves, splits=splits)


def chunked_design(name: str, kern: Kernel | ExternKernel, tensors: dict[str, str], n: int, dev: Device,
                   cores: int | tuple[int, int] | None, scalars: Mapping[str, object], depth: int = 2) -> Design:
    """A design calling ``kern`` once per chunk of every tensor, chunks dealt round-robin to the cores.

    Args:
        name: the design's name.
        kern: the kernel; its tile parameters share one type ``(r, *rest)``.
        tensors: tile parameter name -> tensor name; each tensor has shape ``(n, *rest)``.
        n: length of every tensor's first axis (a multiple of ``cores * r``).
        dev: the device.
        cores: the grid request (see :func:`~tilelang.library._common.choose_grid`).
        scalars: values of the kernel's scalar parameters.
        depth: buffers per fifo.
    """
    tile = next(p.type for p in kern.params if p.is_tile)
    inputs = [p for p in kern.params if p.is_tile and p.name not in kern.written]
    outputs = [p for p in kern.params if p.is_tile and p.name in kern.written]
    grid = chunk_grid(dev, cores, name, len(inputs), len(outputs), n, tile.shape[0])
    rounds = divide(n, grid.cores * tile.shape[0], f"{name}: n must be a multiple of cores x chunk rows "
                    f"({grid.cores} x {tile.shape[0]}); n")
    g_in, g_out = column_groups(dev, grid, len(inputs), len(outputs))
    # chunk i of a tensor meets chunk i of the others on one core whichever core that is: on a linear-only
    # shim DMA each core gets one contiguous run (one move each instead of one per round)
    blocked = not g_in and not g_out and ShimLimits.of(dev).linear_only
    shape = (n, *tile.shape[1:])
    types = {tensors[p.name]: Tensor[shape, p.type.dtype] for p in kern.params if p.is_tile}

    def body(*args: object) -> None:
        by_name = dict(zip(types, args, strict=True))
        fifos: dict[str, list] = {}
        moves_in, moves_out = [], []
        for p in inputs:
            fifos[p.name], m = scatter(by_name[tensors[p.name]], tile, grid, rounds, p.name, g_in, depth, blocked)
            moves_in += m
        for p in outputs:
            fifos[p.name], m = gather(by_name[tensors[p.name]], tile, grid, rounds, p.name, g_out, depth, blocked)
            moves_out += m
        for i in range(grid.cores):
            _worker(kern, {k: v[i] for k, v in fifos.items()}, scalars, rounds, f"core_{i}")
        issue(moves_in + moves_out, dev)

    return build_design(name, dev, types, body)


def _worker(kern: Kernel | ExternKernel, fifos: dict, scalars: Mapping[str, object], rounds: int, name: str) -> None:
    @core(name=name)
    def worker() -> None:
        for _ in tl_range(rounds):
            held = {p: f.acquire() for p, f in fifos.items()}
            kern(*[held[p.name] if p.is_tile else scalars[p.name] for p in kern.params])
            for f in fifos.values():
                f.release()


def elementwise(op: str | Kernel | ExternKernel | Callable[..., object], n: int, dtype: DType | None = None,
                device: str | Device = "npu1", cores: int | tuple[int, int] | None = 1, tile: int | None = None,
                scalars: Mapping[str, object] | None = None, depth: int = 2) -> Design:
    """A design applying ``op`` chunk by chunk over tensors of length ``n`` on ``cores`` cores.

    Args:
        op: what each chunk computes, one of
            - a named op: unary ``"copy" "neg" "abs" "relu" "exp" "sqrt" "rsqrt" "tanh"
              "sigmoid" "silu" "gelu"`` (the last three float only: docs/library.md) (tensors A -> C)
              or binary ``"add" "sub" "mul" "div" "max" "min"`` (A, B -> C);
            - a function of traced tiles, ``lambda a, b: tl.maximum(a, b) * 2``
              (inputs named after its parameters upper-cased, output C);
            - a ``tl.kernel`` (or extern kernel) whose tile parameters all have
              one type ``(r, *rest)``: the parameters it writes are outputs, the
              others inputs; tensors are named after the parameters upper-cased
              and have shape ``(n, *rest)``.
        n: length of every tensor's first axis; a multiple of ``cores x chunk``.
        dtype: element type for named ops and functions (default i32); ignored
            (it must match if given) for kernels.
        device: device name or model.
        cores: None (the grid with the most cores, then rows, the shims feed and ``n`` splits over:
            :func:`chunk_grid`), a count, or (rows, cols).
        tile: chunk length for named ops and functions (default 1024); a kernel's
            tile parameters give it otherwise.
        scalars: values of a kernel's scalar parameters, by name.
        depth: buffers per fifo (2: double buffering).

    Returns:
        The traced design.

    Raises:
        DesignError: for an unknown op, a kernel whose tiles differ, missing
            scalars, sizes the grid does not divide, or a grid the device's DMA
            channels cannot feed.
    """
    check_args("elementwise", {"n": n, "depth": depth} | ({} if tile is None else {"tile": tile}), {"dtype": dtype})
    dev = resolve_device(device)
    scalars = dict(scalars or {})
    if isinstance(op, Kernel | ExternKernel):
        tile_type, names = _check_kernel(op, scalars)
        if dtype is not None and dtype != tile_type.dtype:
            raise DesignError(f"elementwise: dtype={dtype} but kernel {op.name!r} works on {tile_type.dtype}")
        if tile is not None and tile != tile_type.shape[0]:
            raise DesignError(f"elementwise: tile={tile} but kernel {op.name!r} takes chunks of {tile_type.shape}")
        return chunked_design(f"elementwise_{op.name}", op, names, n, dev, cores, scalars, depth)
    if scalars:
        raise DesignError("elementwise: scalars= is for a tl.kernel's scalar parameters; bind constants in the op")
    kern, names = _kernel_from(op, tile or 1024, dtype or i32)
    return chunked_design(f"elementwise_{kern.name}", kern, names, n, dev, cores, {}, depth)


__all__ = ["OPS", "chunk_grid", "chunked_design", "elementwise", "host_moves", "row_limits"]
