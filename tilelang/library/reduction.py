"""``tl.library.reduction``: the sum, maximum or minimum of a vector over many cores.

mlir-aie's ``vector_reduce_max`` multi-column design: every core reduces its
own share of the input to one partial result, held in its output fifo's
element across the whole run (IRON keeps it in a ``LocalBuffer``); then the
partials are combined. Here they are combined along a chain: core ``i``
waits for core ``i - 1``'s partial, folds it into its own and passes the
result on, so every core receives at most one partial (a core has two S2MM
channels, AIE_FACTS "DMA channels": its input and the partial) and the last
core sends the result to the host. Inputs are dealt as in
:func:`~tilelang.library.elementwise`: chunk ``b * cores + i`` to core ``i``.
"""

from __future__ import annotations

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.builder import FifoRef
from tilelang.frontend.design import core, dma, fifo
from tilelang.frontend.design import range as tl_range
from tilelang.frontend.kernel import max as tl_max
from tilelang.frontend.kernel import maximum, minimum
from tilelang.frontend.kernel import min as tl_min
from tilelang.frontend.kernel import sum as tl_sum
from tilelang.ir.design import Design
from tilelang.ir.dtypes import DType, i32
from tilelang.ir.kernel import Kernel
from tilelang.ir.types import Tensor, Tile
from tilelang.library._common import build_design, build_kernel, check_args, divide, resolve_device
from tilelang.library._movement import ShimLimits, column_groups, issue, scatter
from tilelang.library.elementwise import chunk_grid

OPS = ("sum", "max", "min")
#: the order-keeping reductions: the result is one of the inputs, in their dtype
_PICK = {"max": (tl_max, maximum), "min": (tl_min, minimum)}


def _kernels(op: str, tile: int, dtype: DType, out: DType) -> tuple[Kernel, Kernel, Kernel]:
    """(first: partial = reduce(x), step: partial = combine(partial, reduce(x)), merge: partial = combine(partial, p))."""
    x_t, p_t = Tile[(tile,), dtype], Tile[(1,), out]

    def reduce(x: object) -> object:
        if op in _PICK:
            return _PICK[op][0](x)
        return tl_sum(x if out == dtype else x.astype(out))  # type: ignore[attr-defined]

    def combine(a: object, b: object) -> object:
        return _PICK[op][1](a, b) if op in _PICK else a + b  # type: ignore[operator]

    def first(x: object, acc: object) -> None:
        acc[...] = reduce(x)  # type: ignore[index]

    def step(x: object, acc: object) -> None:
        acc[...] = combine(acc, reduce(x))  # type: ignore[index]

    def merge(p: object, acc: object) -> None:
        acc[...] = combine(acc, p)  # type: ignore[index]

    tag = f"{op}_{dtype}"
    return (build_kernel(f"{tag}_first", {"x": x_t, "acc": p_t}, first),
            build_kernel(f"{tag}_step", {"x": x_t, "acc": p_t}, step),
            build_kernel(f"{tag}_merge", {"p": p_t, "acc": p_t}, merge))


def reduction(op: str, n: int, dtype: DType = i32, device: str | Device = "npu1",
              cores: int | tuple[int, int] | None = 1, tile: int = 1024, out_dtype: DType | None = None,
              depth: int = 2) -> Design:
    """A design reducing tensor A (n,) to C (1,): ``C[0] = sum(A)``, ``max(A)`` or ``min(A)``.

    Args:
        op: "sum", "max" or "min".
        n: length of A; a multiple of ``cores x tile``.
        dtype: dtype of A.
        device: device name or model.
        cores: None (the grid with the most cores, then rows, the shims feed and ``n`` splits over:
            :func:`~tilelang.library.elementwise.chunk_grid`), a count, or (rows, cols).
        tile: elements per chunk (one kernel call).
        out_dtype: dtype of C and of the partial results (default ``dtype``; a
            wider type such as i32 or f32 makes a sum accumulate in it). Integer
            sums wrap in it; float sums round once per chunk and once per combine.
        depth: buffers per input fifo.

    Returns:
        The traced design.

    Raises:
        DesignError: an unknown op, a max or min with a different out_dtype, a result narrower than a DMA
            word (a max or min of i8, i16 or bf16: reduce i32 or f32 data), or sizes the grid does not divide.
    """
    check_args("reduction", {"n": n, "tile": tile, "depth": depth}, {"dtype": dtype, "out_dtype": out_dtype})
    if op not in OPS:
        raise DesignError(f"reduction: op must be one of {list(OPS)}, got {op!r}")
    out = out_dtype or dtype
    if op in _PICK and out != dtype:
        raise DesignError(f"reduction: a {op} keeps its dtype; out_dtype={out} differs from dtype={dtype}")
    if out.kind != dtype.kind:
        raise DesignError(f"reduction: out_dtype {out} and dtype {dtype} must both be integer or both float")
    dev = resolve_device(device)
    _check_result_moves(op, dtype, out, dev)
    grid = chunk_grid(dev, cores, "reduction", 1, 0, n, tile, extra=(0, 1))  # one more S2MM: C
    rounds = divide(n, grid.cores * tile, f"reduction: n must be a multiple of cores x tile ({grid.cores} x {tile}); n")
    first, step, merge = _kernels(op, tile, dtype, out)
    groups = column_groups(dev, grid, 1, 0)[0]
    blocked = not groups and ShimLimits.of(dev).linear_only  # the reduction takes the chunks in any order

    def body(A: object, C: object) -> None:  # noqa: N803 - the tensors' API names
        ins, fills = scatter(A, Tile[(tile,), dtype], grid, rounds, "a", groups, depth, blocked)  # type: ignore[arg-type]
        partials = [fifo(Tile[(1,), out], depth=1, name=f"partial_{i}") for i in range(grid.cores)]
        for i in range(grid.cores):
            before = partials[i - 1] if i else None
            _worker(f"core_{i}", ins[i], partials[i], before, (first, step, merge), rounds)
        issue(fills, dev)
        dma(partials[-1], C, name="drain_c")

    tensors = {"A": Tensor[(n,), dtype], "C": Tensor[(1,), out]}
    return build_design(f"reduce_{op}_{n}", dev, tensors, body)


def _check_result_moves(op: str, dtype: DType, out: DType, dev: Device) -> None:
    """C is one element, moved to the host by a DMA, which moves whole words (``Device.dma_word_bytes``).

    Raises:
        DesignError: the result is narrower than a word, saying which dtype to use instead.
    """
    shim = next(t for t in dev.tiles("shim") if dev.is_noc_shim(t))
    word = dev.dma_word_bytes(shim)
    if out.bytes % word == 0:
        return
    wide = "tl.f32" if out.is_float else "tl.i32"
    fix = (f"pass out_dtype={wide}" if op == "sum" else
           f"a {op} keeps its input's dtype, so pass dtype={wide} and widen A")
    raise DesignError(
        f"reduction: the {op} result C is one {out} element ({out.bytes} B), but DMAs move whole {word}-byte words "
        f"({dev.name}), so it cannot be written back to the host; {fix}"
    )


def _worker(name: str, x_in: FifoRef, mine: FifoRef, before: FifoRef | None, kernels: tuple, rounds: int) -> None:
    first, step, merge = kernels

    @core(name=name)
    def worker() -> None:
        acc = mine.acquire()
        x = x_in.acquire()
        first(x, acc)
        x_in.release()
        if rounds > 1:
            for _ in tl_range(rounds - 1):
                x = x_in.acquire()
                step(x, acc)
                x_in.release()
        if before is not None:
            p = before.acquire()
            merge(p, acc)
            before.release()
        mine.release()


__all__ = ["OPS", "reduction"]
