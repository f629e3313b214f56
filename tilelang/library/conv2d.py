"""``tl.library.conv2d``: a 2-D convolution as a line-buffer stencil, im2col-free.

Data layout (mlir-aie's conv2d uses the blocked ``YCXC8``; this is its
unblocked form ``YCX``): the input A is ``(H, Cin, W)``, one image row of all
channels after another; the weights W are ``(Cout, k, k, Cin)``; the output C
is ``(H - k + 1, Cout, W - k + 1)`` (a "valid" convolution, stride 1: pad on
the host for "same").

Each core keeps a sliding window of ``k`` input rows, as IRON's vision
``filter2d`` kernels do: per output row it acquires ``k`` rows of the input
fifo (after the first row only the difference, one new row, is acquired),
computes one output row as ``k*k`` matmuls ``W[:, dy, dx, :] @ row_dy[:, dx:]``
and releases the oldest row.

The grid is ``groups x bands``: each core column handles one band of output
rows (its input rows, with the ``k - 1`` row halo, come from its own shim and
are broadcast to the column's cores); the cores of a column split the output
channels (group ``g`` has its own weights, broadcast across the bands) and
their rows are joined in the column's memtile into whole output rows. On
AIE1 (no memtiles) there is one group.
"""

from __future__ import annotations

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.builder import FifoRef, TensorArg
from tilelang.frontend.design import core, fifo, join
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import matmul as tile_matmul
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, accumulator, i16
from tilelang.ir.kernel import Kernel
from tilelang.ir.pattern import pattern
from tilelang.ir.types import Tensor, Tile
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
)
from tilelang.library._movement import Move, issue


def _row_kernel(k: int, cin: int, width: int, cc: int, dtype: DType, out: DType) -> Kernel:
    """One output row of ``cc`` channels from ``k`` input rows: ``sum_{dy,dx} w[:, dy, dx, :] @ r_dy[:, dx:dx+Wo]``."""
    wo = width - k + 1
    params: dict = {f"r{dy}": Tile[(cin, width), dtype] for dy in range(k)}
    params["w"] = Tile[(cc, k, k, cin), dtype]
    params["y"] = Tile[(cc, wo), out]

    def body(*args: object) -> None:
        rows, w, y = args[:k], args[k], args[k + 1]
        # accumulate tap by tap into y itself: one (cc, wo) product at a time, no temporaries
        # beyond it (a core's stack is 1 KiB; docs/planner.md "Resource model")
        for dy in range(k):
            for dx in range(k):
                term = tile_matmul(w[:, dy, dx, :], rows[dy][:, dx:dx + wo], acc=out)  # type: ignore[index]
                if dy == dx == 0:
                    y[...] = term  # type: ignore[index]
                else:
                    y[...] += term  # type: ignore[index]

    return build_kernel(f"conv{k}x{k}_row", params, body)


def conv2d(H: int, W: int, cin: int, cout: int, kernel_size: int = 3, dtype: DType = i16,  # noqa: N803
           out_dtype: DType | None = None, device: str | Device = "npu1",
           cores: int | tuple[int, int] | None = 1) -> Design:
    """A "valid" ``kernel_size x kernel_size`` convolution, stride 1, tensors in YCX layout.

    Tensors: A ``(H, cin, W)`` input, W ``(cout, k, k, cin)`` weights,
    C ``(H - k + 1, cout, W - k + 1)`` output:
    ``C[y, o, x] = sum_{dy, dx, i} W[o, dy, dx, i] * A[y + dy, i, x + dx]``.

    Args:
        H, W: input height and width.
        cin, cout: input and output channels.
        kernel_size: k (the window is k x k).
        dtype: dtype of A and W.
        out_dtype: dtype of C, the accumulator (default i32 for integers, f32 for floats).
        device: device name or model.
        cores: 1, a count, (groups, bands): output-channel groups per column x row bands, or None: the
            grid with the most cores (then the most groups) the shims' DMA channels feed and the output
            rows and channels split over (see :func:`_grid`).

    Returns:
        The traced design.

    Raises:
        DesignError: sizes the grid does not divide, or a grid the device cannot feed.
    """
    check_args("conv2d", {"H": H, "W": W, "cin": cin, "cout": cout}, {"dtype": dtype, "out_dtype": out_dtype})
    k = kernel_size
    if not isinstance(k, int) or k < 1 or k > min(H, W):
        raise DesignError(f"conv2d: kernel_size must be an int in [1, min(H, W)], got {kernel_size!r}")
    dev = resolve_device(device)
    out = out_dtype or accumulator(dtype)
    ho, wo = H - k + 1, W - k + 1
    grid = _grid(dev, cores, ho, cout)
    band = divide(ho, grid.cols, f"conv2d: the {ho} output rows must split evenly into {grid.cols} bands")
    cc = divide(cout, grid.rows, f"conv2d: the {cout} output channels must split evenly into {grid.rows} groups")
    row = _row_kernel(k, cin, W, cc, dtype, out)

    def body(A: TensorArg, Wt: TensorArg, C: TensorArg) -> None:  # noqa: N803 - the tensors' API names
        xs = [fifo(Tile[(cin, W), dtype], depth=k + 1, name=f"rows_{q}") for q in range(grid.cols)]
        ws = [fifo(Tile[(cc, k, k, cin), dtype], depth=1, name=f"weights_{g}") for g in range(grid.rows)]
        ys, drains = _outputs(C, grid, cc, cout, wo, band, out)
        for g, q in grid.cells():
            _worker(f"core_{g}_{q}", xs[q], ws[g], ys[g][q], row, k, band)
        fills = [Move(A, xs[q], pattern(q * band * cin * W, ((band + k - 1) * cin * W,), (1,)), True, f"fill_a_{q}")
                 for q in range(grid.cols)]
        fills += [Move(Wt, ws[g], pattern(g * cc * k * k * cin, (cc * k * k * cin,), (1,)), True, f"fill_w_{g}")
                  for g in range(grid.rows)]
        issue(fills + drains, dev)

    tensors = {"A": Tensor[(H, cin, W), dtype], "W": Tensor[(cout, k, k, cin), dtype], "C": Tensor[(ho, cout, wo), out]}
    return build_design(f"conv2d_{k}x{k}_{H}x{W}", dev, tensors, body)


def _grid(dev: Device, cores: int | tuple[int, int] | None, out_rows: int, cout: int) -> Grid:
    """Groups (rows) are joined in a column's memtile (S2MM: one per group); without memtiles, one group.

    Host moves: one input-row fill per band (column) and one weight fill per group (row) in, one drain per
    band out. ``cores=None`` takes the grid with the most cores (then the most groups) whose moves have a
    shim DMA channel each within the columns and NoC shims of :func:`~tilelang.library._common.shim_reach`,
    whose bands split the ``out_rows`` output rows and whose groups split the ``cout`` output channels.
    """

    def moves(g: Grid) -> tuple[int, int, str]:
        return (g.cols + g.rows, g.cols, f"a {g.rows} x {g.cols} core grid fills input rows once per band (column) "
                f"and weights once per group (row), and drains once per band")

    def splits(g: Grid) -> str | None:
        if out_rows % g.cols or cout % g.rows:
            return (f"the {out_rows} output rows do not split into {g.cols} bands or the {cout} output channels "
                    f"into {g.rows} groups")
        return None

    rows = min(memtile_channels(dev, "s2mm"), 4) if has_memtiles(dev) else 1
    return choose_grid(dev, cores, "conv2d", max_rows=rows, moves=moves, splits=splits)


def _outputs(C: TensorArg, grid: Grid, cc: int, cout: int, wo: int, band: int,  # noqa: N803
             out: DType) -> tuple[list[list[FifoRef]], list[Move]]:
    """Per core output-row fifos (``[group][band]``) and the drains: joined per column when there are groups."""
    ys = [[fifo(Tile[(cc, wo), out], depth=2, name=f"out_{g}_{q}") for q in range(grid.cols)] for g in range(grid.rows)]
    drains = []
    for q in range(grid.cols):
        walk = pattern(q * band * cout * wo, (band * cout * wo,), (1,))
        if grid.rows == 1:
            drains.append(Move(C, ys[0][q], walk, False, f"drain_c_{q}"))
            continue
        whole = fifo(Tile[(cout, wo), out], depth=2, name=f"out_l2_{q}")
        join([ys[g][q] for g in range(grid.rows)], whole, offsets=[g * cc * wo for g in range(grid.rows)],
             name=f"join_out_{q}")
        drains.append(Move(C, whole, walk, False, f"drain_c_{q}"))
    return ys, drains


def _worker(name: str, rows_in: FifoRef, w_in: FifoRef, y_out: FifoRef, row: Kernel, k: int, band: int) -> None:
    @core(name=name)
    def worker() -> None:
        w = w_in.acquire()
        for _ in tl_range(band):
            window = rows_in.acquire(k)
            y = y_out.acquire()
            row(*(window if k > 1 else (window,)), w, y)
            rows_in.release(1)
            y_out.release()
        if k > 1:
            rows_in.release(k - 1)
        w_in.release()


__all__ = ["conv2d"]
