"""``@tl.design``, ``@tl.core``, ``tl.fifo``, ``tl.dma``, ``tl.split``, ``tl.join``, ``tl.range``.

A design function runs once at decoration over tensor proxies. ``tl.fifo``
and ``tl.dma`` record entities in the current :class:`DesignBuilder`;
``@tl.core`` traces its body at once into core statements. Whether a core
produces or consumes a fifo is inferred from the kernel parameters its
elements are passed to (written parameters mean produce), or, for elements no
kernel touches, from the fifo's other ends.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Iterator, Sequence

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import DesignError
from tilelang.frontend.builder import (
    BufferRef,
    CascadeRef,
    CoreBuilder,
    DesignBuilder,
    FifoRef,
    TensorArg,
    _design,
    _state,
    current_core,
)
from tilelang.frontend.source import annotations_of, definition_location, located, user_location
from tilelang.ir.design import Cascade, Design, Dma, Endpoint, EndpointKind, Fifo, Link, LinkKind, TensorDecl
from tilelang.ir.pattern import AccessPattern, Tiles, contiguous
from tilelang.ir.types import TensorType, TileType
from tilelang.ir.verify import at, check_core_tile, check_pattern, verify_design
from tilelang.ir.verify_sizes import MAX_TRACED


def fifo(elem_type: TileType, depth: int = 2, name: str | None = None) -> FifoRef:
    """An on-chip channel of ``depth`` buffers of ``elem_type`` (depth 2: double buffering)."""
    d = _design()
    loc = user_location()
    if d.core is not None:
        raise DesignError(located("declare fifos in the design body, not inside a core", loc))
    try:
        f = Fifo(d.fresh("fifo", name, loc), elem_type, depth, loc=loc)
    except DesignError as e:
        raise DesignError(located(str(e), loc)) from None
    ref = FifoRef(f)
    d.fifos.append(ref)
    return ref


def cascade(elem_type: TileType, name: str | None = None) -> CascadeRef:
    """A cascade stream between two neighbouring cores (mlir-aie ``aie.cascade_flow``; docs/cascade.md).

    Pass it to a kernel call inside one core as a written tile parameter (that core sends each tile the call
    leaves there) and inside another as a read-only tile parameter (that core takes the next tile before the
    call). The planner places the two cores where the device's cascade runs from one to the other.

    Args:
        elem_type: ``tl.Tile[shape, dtype]`` of one tile; whole cascade words of the device (48 B on AIE1,
            64 B on AIE-ML and later).
        name: the cascade's name (unique in the design); ``cascade<i>`` by default.

    Returns:
        The cascade, to pass to kernel calls.

    Raises:
        DesignError: inside a core body, or for a type that is not a tile.
    """
    d = _design()
    loc = user_location()
    if d.core is not None:
        raise DesignError(located("declare cascades in the design body, not inside a core", loc))
    try:
        c = Cascade(d.fresh("cascade", name, loc), elem_type, loc=loc)
    except DesignError as e:
        raise DesignError(located(str(e), loc)) from None
    ref = CascadeRef(c)
    d.cascades.append(ref)
    return ref


def buffer(tile_type: TileType, name: str | None = None) -> BufferRef:
    """A core-private scratch tile inside a ``@tl.core`` body (IRON's LocalBuffer).

    Pass it to kernels like an acquired element. It keeps its content from
    call to call and starts undefined: some call must write it whole before
    one reads it. Buffers whose lifetimes do not overlap may share memory
    (``tl.plan`` packs them).

    Args:
        tile_type: ``tl.Tile[shape, dtype]``.
        name: the buffer's name (unique in the design); ``<core>_buf<i>`` by default.

    Raises:
        DesignError: outside a core body, or for a type that is not a tile.
    """
    d = _design()
    loc = user_location()
    if d.core is None:
        raise DesignError(located("tl.buffer is only valid inside a @tl.core body", loc))
    return d.core.buffer(tile_type, name)


def core(fn: Callable | None = None, *, name: str | None = None, tile: tuple[int, int] | None = None):
    """Trace a core program: ``@tl.core`` or ``@tl.core(name=..., tile=(col, row))``."""

    def wrap(f: Callable) -> CoreBuilder:
        d = _design()
        loc = definition_location(f)
        if d.core is not None:
            raise DesignError(located("cores cannot be nested; declare each @tl.core in the design body", loc))
        required = [p.name for p in inspect.signature(f).parameters.values() if p.default is p.empty]
        if required:
            raise DesignError(
                located(f"core {f.__name__!r} is called with no arguments; parameters {required} need defaults", loc)
            )
        if tile is not None:
            check_core_tile(name or f.__name__, tile, d.device, loc)
        b = CoreBuilder(d, d.fresh("core", name or f.__name__, loc), tile, loc)
        d.core = b
        try:
            f()
        finally:
            d.core = None
        if len(b.bodies) != 1:
            raise DesignError(located(f"core {b.name!r}: a tl.range loop was left open", loc))
        d.cores.append(b)
        return b

    return wrap(fn) if fn is not None else wrap


def range(start: int, stop: int | None = None, step: int = 1) -> Iterator:  # noqa: A001
    """An IR loop inside a core body (its body is traced once); elsewhere a Python range."""
    if stop is None:
        start, stop = 0, start
    c = current_core()
    if c is None:
        return iter(builtins.range(start, stop, step))
    return c.loop(start, stop, step)


def _resolve_pattern(pattern: object, tensor: TensorArg, loc: str | None) -> AccessPattern:
    if pattern is None:
        return contiguous(tensor.decl.type.numel)
    if isinstance(pattern, Tiles):
        try:
            return pattern.resolve(tensor.shape)
        except DesignError as e:
            raise DesignError(located(f"tensor {tensor.name!r}: {e}", loc)) from None
    if isinstance(pattern, AccessPattern):
        return pattern
    raise DesignError(located(f"pattern must be tl.tiles(...) or tl.pattern(...), got {pattern!r}", loc))


def dma(src: object, dst: object, pattern: object = None, name: str | None = None, plio: bool | int = False) -> None:
    """An explicit data movement: tensor -> fifo(s), fifo -> tensor, or fifo -> fifo (through a memtile).

    Args:
        src: a design tensor or a fifo.
        dst: a design tensor, a fifo, or a list of fifos (a broadcast).
        pattern: access pattern on the tensor side (``tl.tiles`` or ``tl.pattern``);
            for fifo -> fifo, a re-layout of each element at the memtile.
        name: the move's name.
        plio: move the tensor through a PL shim's PL I/O stream (from or to the programmable
            logic) instead of a NoC shim's DMA from DDR: ``True`` for the device's default
            width, or a width in bits (docs/plio.md). Host moves only, one fifo each.

    Raises:
        DesignError: for unsupported endpoints or a bad pattern, or PLIO on a device without it.
    """
    d = _design()
    loc = user_location()
    if d.core is not None:
        raise DesignError(located("tl.dma belongs in the design body, not inside a core", loc))
    width = _plio_width(d, plio, loc)
    dsts = list(dst) if isinstance(dst, list | tuple) else [dst]
    if not dsts:
        raise DesignError(located("tl.dma needs at least one destination", loc))
    for e in [src, *dsts]:
        if not isinstance(e, TensorArg | FifoRef):
            raise DesignError(located(f"tl.dma endpoints are design tensors or fifos, got {e!r}", loc))
    if all(isinstance(e, FifoRef) for e in dsts):
        _once(dsts, "tl.dma", loc)
    if isinstance(src, FifoRef) and all(isinstance(e, FifoRef) for e in dsts):
        if width:
            raise DesignError(located("plio applies to host moves (a tensor and a fifo), not fifo -> fifo links", loc))
        _forward(d, src, dsts, pattern, name, loc)
        return
    tensor = src if isinstance(src, TensorArg) else dsts[0]
    if not isinstance(tensor, TensorArg) or (isinstance(src, TensorArg) and not all(isinstance(e, FifoRef) for e in dsts)):
        raise DesignError(located("tl.dma moves between a tensor and fifos; tensor -> tensor is not supported", loc))
    if isinstance(src, FifoRef) and len(dsts) != 1:
        raise DesignError(located("tl.dma from a fifo writes exactly one tensor", loc))
    pat = _resolve_pattern(pattern, tensor, loc)
    ends = [Endpoint(EndpointKind.TENSOR if isinstance(e, TensorArg) else EndpointKind.FIFO, e.name) for e in dsts]
    src_end = Endpoint(EndpointKind.TENSOR if isinstance(src, TensorArg) else EndpointKind.FIFO, src.name)
    if width and len(dsts) != 1:
        raise DesignError(located("a PLIO move feeds one fifo (one PL stream); give each fifo its own tl.dma", loc))
    mv = Dma(d.fresh("dma", name, loc), src_end, tuple(ends), pat, loc=loc, plio=width)
    for f in [e for e in [src, *dsts] if isinstance(e, FifoRef)]:
        check_pattern(pat, tensor.decl, f.fifo, d.device, f"dma {mv.name!r}{at(loc)}", d.checked)
    if len(d.dmas) >= MAX_TRACED:
        raise DesignError(located(
            f"design {d.name!r} has traced {MAX_TRACED} host moves (tilelang.ir.verify_sizes.MAX_TRACED): a Python "
            f"loop around tl.dma runs while the design is traced; move larger tiles, or fewer", loc))
    d.dmas.append(mv)


def _plio_width(d: DesignBuilder, plio: object, loc: str | None) -> int:
    """The PLIO width in bits ``tl.dma(..., plio=...)`` asks for (0: no PLIO), checked against the device."""
    if plio is False or plio is None:
        return 0
    if plio is not True and (isinstance(plio, bool) or not isinstance(plio, int)):
        raise DesignError(located(f"plio is True or a width in bits, got {plio!r}", loc))
    try:
        return d.device.plio_width(None if plio is True else plio)
    except DesignError as e:
        raise DesignError(located(f"tl.dma(plio={plio!r}): {e}", loc)) from None


def _link_name(d: DesignBuilder, preferred: str, name: str | None, loc: str | None) -> str:
    """``name``, or one that says which fifos the link joins (``split_<src>``, ``join_<dst>``, ``<src>_to_<dst>``),
    numbered only when that is taken."""
    if name is not None or preferred not in d.names:
        return d.fresh(preferred, name if name is not None else preferred, loc)
    return d.fresh(preferred + "_", None, loc)


def _forward(d: DesignBuilder, src: FifoRef, dsts: list, pattern: object, name: str | None, loc: str | None) -> None:
    if len(dsts) != 1:
        raise DesignError(located("a fifo -> fifo move has one destination; use tl.split to distribute", loc))
    if pattern is not None and not isinstance(pattern, AccessPattern | Tiles):
        raise DesignError(located(f"pattern must be tl.tiles(...) or tl.pattern(...), got {pattern!r}", loc))
    pat = pattern.resolve(src.elem.shape) if isinstance(pattern, Tiles) else pattern
    d.links.append(Link(_link_name(d, f"{src.name}_to_{dsts[0].name}", name, loc), LinkKind.FORWARD, (src.name,), (dsts[0].name,), (), pat, loc=loc))


def _offsets(parts: Sequence[FifoRef], offsets: Sequence[int] | None, loc: str | None) -> tuple[int, ...]:
    if offsets is None:
        out, at = [], 0
        for p in parts:
            out.append(at)
            at += p.elem.numel
        return tuple(out)
    if len(offsets) != len(parts) or not all(isinstance(o, int) for o in offsets):
        raise DesignError(located(f"offsets must be one int per fifo ({len(parts)}), got {offsets!r}", loc))
    return tuple(offsets)


def _once(fifos: Sequence[FifoRef], what: str, loc: str | None) -> None:
    """Each fifo at most once in a list of destinations (or sources): a fifo is one stream."""
    names = [f.name for f in fifos]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DesignError(located(f"{what} lists fifo {twice[0]!r} {names.count(twice[0])} times; a fifo is one "
                                  f"stream: give each part its own fifo", loc))


def split(src: FifoRef, dsts: Sequence[FifoRef], offsets: Sequence[int] | None = None, name: str | None = None) -> None:
    """Distribute each element of ``src`` over ``dsts`` through a memtile (IRON's split).

    ``offsets`` (elements) say where each destination's part starts; by default
    the parts are consecutive.
    """
    d = _design()
    loc = user_location()
    if not isinstance(src, FifoRef) or not dsts or not all(isinstance(x, FifoRef) for x in dsts):
        raise DesignError(located("tl.split(src_fifo, [dst_fifos]) takes fifos", loc))
    _once(dsts, "tl.split", loc)
    offs = _offsets(dsts, offsets, loc)
    d.links.append(Link(_link_name(d, f"split_{src.name}", name, loc), LinkKind.SPLIT, (src.name,), tuple(x.name for x in dsts), offs, loc=loc))


def join(srcs: Sequence[FifoRef], dst: FifoRef, offsets: Sequence[int] | None = None, name: str | None = None,
         pattern: object = None) -> None:
    """Gather elements of ``srcs`` into each element of ``dst`` through a memtile (IRON's join).

    ``pattern`` (``tl.pattern`` or ``tl.tiles`` over one part) re-lays each part out as the memtile sends
    the joined element on: the parts in order of offset, each walked by the pattern within itself (IRON's
    ``dims_to_stream`` on a join's output, as mlir-aie lowers it: one BD per part with those dimensions).
    The parts are then one size.
    """
    d = _design()
    loc = user_location()
    if not isinstance(dst, FifoRef) or not srcs or not all(isinstance(x, FifoRef) for x in srcs):
        raise DesignError(located("tl.join([src_fifos], dst_fifo) takes fifos", loc))
    _once(srcs, "tl.join", loc)
    offs = _offsets(srcs, offsets, loc)
    if pattern is not None and not isinstance(pattern, AccessPattern | Tiles):
        raise DesignError(located(f"pattern must be tl.tiles(...) or tl.pattern(...), got {pattern!r}", loc))
    pat = pattern.resolve(srcs[0].elem.shape) if isinstance(pattern, Tiles) else pattern
    d.links.append(Link(_link_name(d, f"join_{dst.name}", name, loc), LinkKind.JOIN, tuple(x.name for x in srcs),
                        (dst.name,), offs, pat, loc=loc))


def design(fn: Callable | None = None, *, device: str | Device = "npu1"):
    """Trace a spatial design: ``@tl.design(device="npu1")``.

    The function's parameters are annotated ``tl.Tensor[shape, dtype]``; its body
    declares fifos, cores and moves. It runs once, at decoration.

    Returns:
        The :class:`~tilelang.ir.design.Design` (callable on numpy arrays: plan + simulate).

    Raises:
        DesignError: for an unknown device or an invalid design, naming the line.
    """

    def wrap(f: Callable) -> Design:
        loc = definition_location(f)
        try:
            dev = lookup_device(device)
        except DesignError as e:
            raise DesignError(located(str(e), loc)) from None
        b = DesignBuilder(f.__name__, dev)
        args = []
        try:
            hints = annotations_of(f)
        except Exception as e:  # noqa: BLE001 - any failure evaluating user annotations
            raise DesignError(located(f"design {f.__name__!r}: cannot evaluate annotations: {e}", loc)) from None
        for p in inspect.signature(f).parameters.values():
            t = hints.get(p.name)
            if not isinstance(t, TensorType):
                raise DesignError(
                    located(f"design {f.__name__!r}: parameter {p.name!r} needs an annotation tl.Tensor[shape, dtype]", loc)
                )
            decl = TensorDecl(b.fresh("", p.name, loc), t)
            b.tensors.append(decl)
            args.append(TensorArg(decl))
        outer = getattr(_state, "design", None)
        _state.design = b
        try:
            result = f(*args)
        except RecursionError:
            raise DesignError(located(
                f"design {f.__name__!r}: tracing recursed past Python's limit (a helper that calls itself without "
                f"end?); recursion in a design must stop on Python values such as sizes", loc)) from None
        finally:
            _state.design = outer
        if result is not None:
            raise DesignError(located(f"design {f.__name__!r} returns a value; designs describe moves, return nothing", loc))
        built = b.finish(loc)
        verify_design(built, checked=b.checked)  # each move's pattern was checked at its tl.dma
        return built

    return wrap(fn) if fn is not None else wrap


__all__ = ["core", "current_core", "design", "dma", "fifo", "join", "range", "split"]
