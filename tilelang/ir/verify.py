"""Whole-design checks: run after tracing and after parsing.

Each check names what is wrong and, when the design came from Python, the
user's line. The single-entity checks here are also called by the frontend at
the point of use, so a user sees an error at the line that caused it.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass, field

from tilelang.devices.dma_rules import zero_stride_problem
from tilelang.errors import DesignError
from tilelang.ir.cascade import check_call_arg, core_uses, verify_cascades
from tilelang.ir.design import (
    Acquire,
    AffineArg,
    BufArg,
    Call,
    CascadeArg,
    ConstArg,
    Core,
    Design,
    Dma,
    ElemArg,
    Fifo,
    Link,
    LinkKind,
    LocalBuffer,
    Loop,
    LoopVarArg,
    Port,
    Release,
    Stmt,
    TensorDecl,
    staging_name,
)
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import AnyKernel, Kernel, KOp, OpKind
from tilelang.ir.liveness import must_read
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.source import at
from tilelang.ir.types import TileType
from tilelang.ir.verify_sizes import verify_sizes

HOST = "host"


@dataclass
class FifoEnds:
    """Who writes and who reads one fifo: ``host``, ``core:<name>`` or ``link:<name>``."""

    producers: list[str] = field(default_factory=list)
    consumers: list[str] = field(default_factory=list)


def fifo_ends(design: Design) -> dict[str, FifoEnds]:
    """Producers and consumers of every fifo, each agent once, in a stable order."""
    ends: dict[str, FifoEnds] = {f.name: FifoEnds() for f in design.fifos}

    def add(fifo: str, agent: str, produce: bool) -> None:
        if fifo not in ends:
            return
        side = ends[fifo].producers if produce else ends[fifo].consumers
        if agent not in side:
            side.append(agent)

    for c in design.cores:
        for fifo, port in core_ports(c).items():
            add(fifo, f"core:{c.name}", port is Port.PRODUCE)
    for ln in design.links:
        for s in ln.srcs:
            add(s, f"link:{ln.name}", False)
        for d in ln.dsts:
            add(d, f"link:{ln.name}", True)
    for d in design.dmas:
        if d.to_device:
            for e in d.dsts:
                add(e.name, HOST, True)
        else:
            add(d.src.name, HOST, False)
    return ends


def core_ports(core: Core) -> dict[str, Port]:
    """The port a core holds on each fifo it touches (first use wins; conflicts are checked elsewhere)."""
    ports: dict[str, Port] = {}
    for s in _walk(core.body):
        if isinstance(s, Acquire | Release):
            ports.setdefault(s.fifo, s.port)
    return ports


def _walk(body: tuple[Stmt, ...]):
    for s in body:
        yield s
        if isinstance(s, Loop):
            yield from _walk(s.body)


# -- single-entity checks, shared with the frontend ------------------------------------


def shim_pattern_dims(device: object) -> int:
    """Dimensions a host move's pattern may have after merging contiguous ones.

    A shim BD walks ``dma_dims`` dimensions; where BDs have an iteration field
    (AIE2: the host command's fourth, outermost dimension; AIE_FACTS.md
    "shim 3-d + repeat") one more dimension is free.
    """
    return _per_device(device, "dims", _shim_pattern_dims)


def _shim_pattern_dims(device: object) -> int:
    shims = [t for t in device.tiles("shim") if device.is_noc_shim(t)]  # type: ignore[attr-defined]
    shim = shims[0]
    extra = 1 if device.bd_field_bits(shim).get("iteration", 0) > 0 else 0  # type: ignore[attr-defined]
    return device.dma_dims(shim) + extra  # type: ignore[attr-defined]


def _shim_word_bytes(device: object) -> int:
    shim = next(t for t in device.tiles("shim") if device.is_noc_shim(t))  # type: ignore[attr-defined]
    return device.dma_word_bytes(shim)  # type: ignore[attr-defined]


#: (id(device), what) -> (device, value): facts derived from a device's (frozen) tables, asked for on
#: every host move. The device is held so that its id is not reused while the entry lives.
_DEVICE_FACTS: dict[tuple[int, str], tuple[object, int]] = {}


def _per_device(device: object, what: str, derive) -> int:  # noqa: ANN001
    hit = _DEVICE_FACTS.get((id(device), what))
    if hit is not None and hit[0] is device:
        return hit[1]
    value = derive(device)
    if len(_DEVICE_FACTS) > 256:
        _DEVICE_FACTS.clear()
    _DEVICE_FACTS[(id(device), what)] = (device, value)
    return value


def check_pattern(
    pattern: AccessPattern, tensor: TensorDecl, fifo: Fifo, design_device: object, what: str,
    checked: set[tuple] | None = None,
) -> None:
    """A host move's pattern: inside the tensor, whole fifo elements, within the shim DMA's dimensions.

    Args:
        pattern: the move's pattern over ``tensor``.
        tensor: the host tensor.
        fifo: a fifo the move fills or drains.
        design_device: the design's device.
        what: names the move in errors.
        checked: inputs that passed this check before (one design's build): identical inputs are not checked
            again, and inputs that pass are added.

    Raises:
        DesignError: naming the move, the tensor and the limit broken.
    """
    key = (pattern, tensor, fifo, id(design_device), what) if checked is not None else None
    if key is not None and key in checked:  # type: ignore[operator]
        return
    if tensor.dtype != fifo.elem.dtype:
        raise DesignError(
            f"{what}: tensor {tensor.name!r} holds {tensor.dtype} but fifo {fifo.name!r} holds {fifo.elem.dtype}"
        )
    lo, hi = pattern.extent()
    if hi >= tensor.type.numel:
        raise DesignError(
            f"{what}: the pattern reads element {hi} of tensor {tensor.name!r}, which has {tensor.type.numel} "
            f"elements (shape {tensor.shape}); pattern {pattern}"
        )
    if pattern.numel % fifo.elem.numel:
        raise DesignError(
            f"{what}: the pattern moves {pattern.numel} elements, not a multiple of fifo {fifo.name!r}'s "
            f"element of {fifo.elem.numel} ({fifo.elem})"
        )
    device = design_device
    _check_words(pattern, tensor, fifo, device, what)
    limit = shim_pattern_dims(device)
    walk = _with_repeat(pattern)
    _check_zero_strides(pattern, what, walk)
    rank = len(walk[0])
    if rank > limit:
        raise DesignError(
            f"{what}: the pattern has {rank} dimensions after merging contiguous ones (a repeat counts as one), the shim DMA of "
            f"{device.name} supports {limit}; split the move into several tl.dma calls"  # type: ignore[attr-defined]
        )
    if key is not None:
        checked.add(key)  # type: ignore[union-attr]


def _with_repeat(pattern: AccessPattern) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(sizes, strides) of the canonical pattern with its repeat as an outer stride-0 dimension (a BD's view)."""
    p = pattern.canonical()
    sizes, strides = p.sizes, p.strides
    if pattern.repeat_count > 1:
        if strides[0] == 0 and sizes[0] > 1:
            sizes = (sizes[0] * pattern.repeat_count, *sizes[1:])
        else:
            sizes, strides = (pattern.repeat_count, *sizes), (0, *strides)
    return sizes, strides


def _check_zero_strides(pattern: AccessPattern, what: str,
                        walk: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> None:
    """A pattern repeats (stride 0) only in its outermost dimension (``devices.dma_rules``).

    ``walk``: ``_with_repeat(pattern)`` when the caller has it.

    Raises:
        DesignError: naming the move, the dimension and what to write instead.
    """
    problem = zero_stride_problem(*(walk if walk is not None else _with_repeat(pattern)))
    if problem:
        raise DesignError(f"{what}: pattern {pattern}: {problem}")


def _check_words(pattern: AccessPattern, tensor: TensorDecl, fifo: Fifo, device: object, what: str) -> None:
    """A host move in whole DMA words: the fifo element, the pattern's start, contiguous runs and strides.

    The shim DMA and the tile DMA at the fifo's other end address memory in words
    (``Device.dma_word_bytes``), so a transfer of part of a word cannot be described
    to them; the emitter would fail on it, so it is rejected here, before planning.
    """
    word = _per_device(device, "word", _shim_word_bytes)
    nbytes = tensor.dtype.bytes
    per_word = max(1, word // nbytes)
    elem = fifo.elem.numel * nbytes
    if elem % word:
        raise DesignError(
            f"{what}: fifo {fifo.name!r} holds {fifo.elem} = {elem} B per element, not a whole number of the DMA's "
            f"{word}-byte words; DMAs move whole words, so make the element a multiple of {per_word} elements"
        )
    p = pattern.canonical()
    if p.offset * nbytes % word:
        raise DesignError(
            f"{what}: the pattern starts at element {p.offset} of tensor {tensor.name!r} (byte {p.offset * nbytes}), "
            f"not on a {word}-byte DMA word; start at a multiple of {per_word} elements"
        )
    inner_size, inner_stride = p.sizes[-1], p.strides[-1]
    run = inner_size if inner_stride == 1 else 1
    if run * nbytes % word:
        raise DesignError(
            f"{what}: the pattern moves runs of {run} contiguous {tensor.dtype} elements ({run * nbytes} B) of tensor "
            f"{tensor.name!r}, not whole {word}-byte DMA words; make each run a multiple of {per_word} elements"
        )
    strides = p.strides[:-1] if inner_stride == 1 else p.strides
    for st in strides:
        if st * nbytes % word:
            raise DesignError(
                f"{what}: the pattern steps {st} elements ({st * nbytes} B) through tensor {tensor.name!r}, not a whole "
                f"number of {word}-byte DMA words; use strides that are multiples of {per_word} elements"
            )


def check_core_tile(core: str, tile: object, device: object, loc: str | None = None) -> None:
    """A core's pinned tile: a (col, row) pair on the array, of a compute tile.

    Raises:
        DesignError: naming the core, the tile and its kind (a shim or memory tile runs no core program).
    """
    what = f"core {core!r}{at(loc)}"
    ok = isinstance(tile, tuple) and len(tile) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in tile)
    if not ok:
        raise DesignError(f"{what}: tile= must be a (col, row) pair of ints, got {tile!r}")
    try:
        kind = device.tile_kind(tile)  # type: ignore[attr-defined]
    except DesignError as e:
        raise DesignError(f"{what} is pinned off the array: {e}") from None
    if kind != "compute":
        rows = sorted({r for _, r in device.tiles("compute")})  # type: ignore[attr-defined]
        raise DesignError(
            f"{what} is pinned to {tile}, a {kind} tile of {device.name}, which runs no core program; "  # type: ignore[attr-defined]
            f"pin it to a compute tile (rows {rows[0]}-{rows[-1]})"
        )


def check_call(
    call: Call,
    kernel: AnyKernel,
    fifos: dict[str, Fifo],
    loop_depth: int,
    core: str,
    buffers: dict[str, LocalBuffer] | None = None,
    cascades: dict | None = None,
) -> None:
    """A kernel call's arguments against the kernel's parameters.

    ``buffers``: the core's local buffers; ``cascades``: the design's cascades by name.
    """
    what = f"core {core!r}: call of {kernel.name!r}{at(call.loc)}"
    if len(call.args) != len(kernel.params):
        raise DesignError(f"{what}: {len(kernel.params)} arguments expected, got {len(call.args)}")
    passed = [a.cascade for a in call.args if isinstance(a, CascadeArg)]
    if len(passed) != len(set(passed)):
        raise DesignError(f"{what}: cascade {sorted(passed)[0]!r} is passed twice; a call sends or takes one "
                          f"tile of a cascade")
    for p, a in zip(kernel.params, call.args, strict=True):
        if isinstance(a, CascadeArg):
            if not isinstance(p.type, TileType):
                raise DesignError(f"{what}: parameter {p.name!r} is a scalar {p.type}; cascade {a.cascade!r} was "
                                  f"passed")
            check_call_arg(cascades or {}, kernel, p.name, p.type, a.cascade, what)
            continue
        if isinstance(a, BufArg):
            b = (buffers or {}).get(a.buffer)
            if b is None:
                raise DesignError(f"{what}: unknown buffer {a.buffer!r} (tl.buffer of this core)")
            if not isinstance(p.type, TileType):
                raise DesignError(f"{what}: parameter {p.name!r} is a scalar {p.type}; buffer {a.buffer!r} was passed")
            if b.elem != p.type:
                raise DesignError(f"{what}: parameter {p.name!r} expects {p.type}, buffer {a.buffer!r} is {b.elem}")
            continue
        if isinstance(p.type, TileType):
            if not isinstance(a, ElemArg):
                raise DesignError(f"{what}: parameter {p.name!r} is a tile {p.type}; pass a fifo element or a tl.buffer")
            f = fifos.get(a.fifo)
            if f is None:
                raise DesignError(f"{what}: unknown fifo {a.fifo!r}")
            if f.elem != p.type:
                raise DesignError(f"{what}: parameter {p.name!r} expects {p.type}, fifo {a.fifo!r} holds {f.elem}")
            continue
        dt: DType = p.type
        if isinstance(a, ElemArg):
            raise DesignError(f"{what}: parameter {p.name!r} is a scalar {dt}; a fifo element was passed")
        if a.dtype != dt:
            raise DesignError(f"{what}: parameter {p.name!r} is {dt}, the argument is {a.dtype}")
        if isinstance(a, LoopVarArg):
            if not dt.is_int:
                raise DesignError(f"{what}: a loop variable is an integer; parameter {p.name!r} is {dt}")
            if a.depth >= loop_depth:
                raise DesignError(f"{what}: loop variable %i{a.depth} is not in scope")
        elif isinstance(a, AffineArg):
            if not dt.is_int:
                raise DesignError(f"{what}: an expression of loop variables is an integer; parameter {p.name!r} is {dt}")
            for d, _ in a.terms:
                if d >= loop_depth:
                    raise DesignError(f"{what}: loop variable %i{d} is not in scope")
        elif isinstance(a, ConstArg):
            _check_const(a, what, p.name)


def _check_const(a: ConstArg, what: str, pname: str) -> None:
    import numpy as np

    if a.dtype.is_int:
        if not isinstance(a.value, int):
            raise DesignError(f"{what}: parameter {pname!r} is {a.dtype}, got {a.value!r}")
        info = np.iinfo(a.dtype.numpy)
        if not info.min <= a.value <= info.max:
            raise DesignError(f"{what}: {a.value} does not fit parameter {pname!r} of type {a.dtype}")
    elif not isinstance(a.value, float):
        raise DesignError(f"{what}: parameter {pname!r} is {a.dtype}, constant {a.value!r} must be a float")


def check_sync(core: Core, fifos: dict[str, Fifo]) -> None:
    """Acquire/release discipline of one core, by walking its program.

    ``acquire(n)`` makes n elements held (acquiring only the difference, as
    IRON does), so it never holds more than ``n``; it fails when n exceeds
    the fifo's depth. A release gives back held elements; a call may use
    held elements only. Loops are walked until a trip leaves the held counts
    unchanged (their steady state), every trip if it never does.
    """
    held: dict[str, int] = defaultdict(int)

    def run(body: tuple[Stmt, ...]) -> None:
        for s in body:
            if isinstance(s, Acquire):
                f = fifos[s.fifo]
                if s.n > f.depth:
                    raise DesignError(
                        f"core {core.name!r}{at(s.loc)}: acquires {s.n} elements of fifo {f.name!r}, whose depth is "
                        f"{f.depth}; this can never be granted (raise depth=)"
                    )
                held[s.fifo] = max(held[s.fifo], s.n)
            elif isinstance(s, Release):
                if s.n > held[s.fifo]:
                    raise DesignError(
                        f"core {core.name!r}{at(s.loc)}: releases {s.n} elements of fifo {s.fifo!r} while holding "
                        f"{held[s.fifo]}; release at most what the core holds (acquire first)"
                    )
                held[s.fifo] -= s.n
            elif isinstance(s, Call):
                for a in s.args:
                    if isinstance(a, ElemArg) and a.index >= held[a.fifo]:
                        raise DesignError(
                            f"core {core.name!r}: call of {s.kernel!r}{at(s.loc)} uses element {a.index} of fifo "
                            f"{a.fifo!r} while holding {held[a.fifo]}; acquire it first"
                        )
            elif isinstance(s, Loop):
                # Each trip maps the held counts through the same monotone, bounded function, so the
                # counts settle (then every later trip repeats) or fail within a fifo's depth + 1 trips:
                # the walk is bounded by the depths, however many trips the loop declares.
                for _ in range(s.trip_count):
                    before = dict(held)
                    run(s.body)
                    if all(held[f] == before.get(f, 0) for f in held):
                        break

    run(core.body)


def check_locals(core: Core, kernels: dict[str, AnyKernel]) -> None:
    """Every local buffer is written by a call before any call reads it.

    A buffer starts undefined (memory is not cleared), so reading it first
    would compute on whatever the tile held. Control flow is static (every
    loop's trip count is known), so walking the program with each loop that
    runs entered once visits every first use in execution order.
    """
    written: set[str] = set()

    def run(body: tuple[Stmt, ...]) -> None:
        for s in body:
            if isinstance(s, Loop):
                if s.trip_count > 0:
                    run(s.body)
            elif isinstance(s, Call):
                k = kernels[s.kernel]
                for p, a in zip(k.params, s.args, strict=True):
                    if isinstance(a, BufArg) and a.buffer not in written and must_read(k, p.name):
                        raise DesignError(
                            f"core {core.name!r}: call of {k.name!r}{at(s.loc)} reads buffer {a.buffer!r} "
                            f"(parameter {p.name!r}) before any call writes it; a tl.buffer starts undefined, "
                            f"so write it whole first (e.g. a kernel storing zeros)"
                        )
                written.update(a.buffer for p, a in zip(k.params, s.args, strict=True)
                               if isinstance(a, BufArg) and p.name in k.written)

    staging = {staging_name(name, port) for name, port in core_uses(core, kernels)}
    for b in core.buffers:
        if b.name in staging:
            continue
        if not any(isinstance(a, BufArg) and a.buffer == b.name for s in _walk(core.body) if isinstance(s, Call)
                   for a in s.args):
            raise DesignError(f"core {core.name!r}: buffer {b.name!r}{at(b.loc)} is never passed to a kernel")
    run(core.body)


# -- whole design -----------------------------------------------------------------------


#: Designs that passed :func:`verify_design`. A Design is immutable (a frozen dataclass of frozen parts,
#: compared by identity), so one that passed passes again: ``tl.plan`` and the passes verify the
#: design they are given, which is most often one ``tl.design`` has just verified while building it.
_VERIFIED: weakref.WeakSet[Design] = weakref.WeakSet()


def verify_design(design: Design, *, checked: set[tuple] | None = None) -> None:
    """Check everything about ``design`` that does not need a plan.

    Args:
        design: the design.
        checked: host-move pattern checks already passed while the design was built
            (``check_pattern``'s ``checked``), so that each move's pattern is checked once.

    Raises:
        DesignError: naming the entity, what is wrong and what to do.
    """
    if design in _VERIFIED:
        return
    verify_sizes(design)  # first: the checks below may walk loops and patterns
    fifos = {f.name: f for f in design.fifos}
    kernels = {k.name: k for k in design.kernels}
    tensors = design.tensors
    _verify_cores(design, fifos, kernels)
    verify_cascades(design)
    for d in design.dmas:
        _verify_dma(design, d, fifos, tensors, checked)
    _verify_plio(design)
    for ln in design.links:
        _verify_link(design, ln, fifos)
    _verify_ends(design)
    _verify_writes(design)
    _verify_read_write(design)
    _VERIFIED.add(design)


def _verify_cores(design: Design, fifos: dict[str, Fifo], kernels: dict[str, AnyKernel]) -> None:
    pins: dict[tuple[int, int], str] = {}
    checked: set[str] = set()
    for c in design.cores:
        if c.tile is not None:
            check_core_tile(c.name, c.tile, design.device, c.loc)
            if c.tile in pins:
                raise DesignError(f"cores {pins[c.tile]!r} and {c.name!r}{at(c.loc)} are both pinned to tile {c.tile}")
            pins[c.tile] = c.name
        ports: dict[str, Port] = {}
        for s in _walk(c.body):
            if isinstance(s, Acquire | Release):
                if s.fifo not in fifos:
                    raise DesignError(f"core {c.name!r} uses unknown fifo {s.fifo!r}")
                if ports.setdefault(s.fifo, s.port) is not s.port:
                    raise DesignError(f"core {c.name!r} both produces and consumes fifo {s.fifo!r}")
        _check_calls(c, c.body, 0, fifos, kernels, ports, {x.name: x for x in design.cascades})
        _check_datapaths(design, c, c.body, kernels, checked)
        check_sync(c, fifos)
        check_locals(c, kernels)


#: Ops that move or name data without computing on it: any dtype the device can store.
_DATA_OPS = frozenset({OpKind.LOAD, OpKind.STORE, OpKind.SLICE, OpKind.CONST})


def _check_datapaths(design: Design, core: Core, body: tuple[Stmt, ...], kernels: dict[str, AnyKernel],
                     checked: set[str]) -> None:
    """Every traced kernel a core calls computes only in dtypes the device's cores have a datapath for (an AIE1
    core has none for bf16): refused here, so that no mode simulates or emits what the hardware cannot run.
    ``checked``: the kernels already found fine (each is read once per design)."""
    dev = design.device
    for s in body:
        if isinstance(s, Loop):
            _check_datapaths(design, core, s.body, kernels, checked)
            continue
        k = kernels.get(s.kernel) if isinstance(s, Call) else None
        if not isinstance(k, Kernel) or k.name in checked:
            continue
        checked.add(k.name)
        for op in k.body:
            if op.kind in _DATA_OPS:
                continue
            types = [op.type, *(x.type if isinstance(x, KOp) else getattr(x, "value_type", None) for x in op.operands)]
            for t in types:
                dt = t.dtype if isinstance(t, TileType) else t
                if isinstance(dt, DType) and dt.name != "i1" and not dev.supports_dtype(dt):
                    raise DesignError(
                        f"core {core.name!r}: kernel {k.name!r}{at(s.loc)} computes in {dt.name} ({op.kind.value}), "
                        f"but {dev.name} ({dev.family}) cores have no {dt.name} datapath; compute in one of "
                        f"{', '.join(sorted(dev.arch.macs_table()))} (data may still be moved as {dt.name})")


def _check_calls(core: Core, body: tuple[Stmt, ...], depth: int, fifos, kernels, ports: dict[str, Port],
                 cascades: dict | None = None) -> None:
    for s in body:
        if isinstance(s, Loop):
            _check_calls(core, s.body, depth + 1, fifos, kernels, ports, cascades)
        elif isinstance(s, Call):
            k = kernels.get(s.kernel)
            if k is None:
                raise DesignError(f"core {core.name!r} calls unknown kernel {s.kernel!r}")
            check_call(s, k, fifos, depth, core.name, {b.name: b for b in core.buffers}, cascades)
            for p, a in zip(k.params, s.args, strict=True):
                if not isinstance(a, ElemArg):
                    continue
                want = Port.PRODUCE if p.name in k.written else Port.CONSUME
                if ports.get(a.fifo) is not want:
                    verb = "writes" if want is Port.PRODUCE else "only reads"
                    raise DesignError(
                        f"core {core.name!r}: kernel {k.name!r}{at(s.loc)} {verb} parameter {p.name!r}, but the core "
                        f"holds fifo {a.fifo!r} as a {ports.get(a.fifo, Port.CONSUME).value}r"
                    )


def _verify_dma(design: Design, d: Dma, fifos: dict[str, Fifo], tensors: dict[str, TensorDecl],
                checked: set[tuple] | None = None) -> None:
    what = f"dma {d.name!r}{at(d.loc)}"
    if d.tensor not in tensors:
        raise DesignError(f"{what}: unknown tensor {d.tensor!r}")
    for f in d.fifos:
        if f not in fifos:
            raise DesignError(f"{what}: unknown fifo {f!r}")
        check_pattern(d.pattern, tensors[d.tensor], fifos[f], design.device, what, checked)
    if len({fifos[f].elem for f in d.fifos}) > 1:
        raise DesignError(f"{what}: a broadcast needs fifos of one element type")
    if d.plio:
        try:
            design.device.plio_width(d.plio)  # type: ignore[attr-defined]
        except DesignError as e:
            raise DesignError(f"{what}: {e}") from None
        if len(d.fifos) != 1:
            raise DesignError(f"{what}: a PLIO move feeds or drains one fifo (one PL stream); give each fifo its own move")


def _verify_plio(design: Design) -> None:
    """Every host move of one fifo goes the same way: a fifo's host end is one shim tile, a NoC shim's
    DMA or a PL shim's PLIO stream of one width."""
    way: dict[str, tuple[int, Dma]] = {}
    for d in design.dmas:
        for f in d.fifos:
            first = way.setdefault(f, (d.plio, d))
            if first[0] != d.plio:
                def how(w: int) -> str:
                    return f"PLIO {w} bits" if w else "the shim DMA"
                raise DesignError(
                    f"dma {d.name!r}{at(d.loc)}: fifo {f!r} is moved by {how(first[0])} in dma {first[1].name!r} and by "
                    f"{how(d.plio)} here; a fifo's host moves all go one way")


def _verify_link(design: Design, ln: Link, fifos: dict[str, Fifo]) -> None:
    what = f"{ln.kind.value} {ln.name!r}{at(ln.loc)}"
    if not design.device.tiles("mem"):
        raise DesignError(f"{what}: {design.device.name} has no memtiles, which links need")
    for f in ln.fifos:
        if f not in fifos:
            raise DesignError(f"{what}: unknown fifo {f!r}")
    dtypes = {fifos[f].elem.dtype for f in ln.fifos}
    if len(dtypes) > 1:
        raise DesignError(f"{what}: fifos hold different dtypes {sorted(map(str, dtypes))}")
    if ln.kind is LinkKind.FORWARD:
        a, b = fifos[ln.srcs[0]], fifos[ln.dsts[0]]
        if a.elem.numel != b.elem.numel:
            raise DesignError(f"{what}: {a.name!r} holds {a.elem.numel} elements per buffer, {b.name!r} {b.elem.numel}")
        if ln.pattern is not None:
            _check_relayout(design, what, ln.pattern, a.elem.numel)
        return
    whole = fifos[ln.srcs[0]] if ln.kind is LinkKind.SPLIT else fifos[ln.dsts[0]]
    if ln.pattern is not None:
        if ln.kind is LinkKind.SPLIT:
            raise DesignError(f"{what}: a split takes no pattern (re-lay its parts out with a forward each)")
        # mlir-aie applies a join's output layout to each part's transfer ("out of bounds access in join
        # input ... in transfer of length <part>"): the parts are one size, and the pattern walks one part
        sizes = {fifos[p].elem.numel for p in ln.srcs}
        if len(sizes) != 1:
            raise DesignError(f"{what}: a join that re-lays out its parts needs parts of one size, got {sorted(sizes)}")
        _check_relayout(design, what, ln.pattern, sizes.pop())
    parts = ln.dsts if ln.kind is LinkKind.SPLIT else ln.srcs
    for part, off in zip(parts, ln.offsets, strict=True):
        n = fifos[part].elem.numel
        if off < 0 or off + n > whole.elem.numel:
            raise DesignError(
                f"{what}: {part!r} ({n} elements) at offset {off} does not fit in {whole.name!r}'s buffer of "
                f"{whole.elem.numel} elements"
            )
    _check_cover(what, ln, whole, [(off, off + fifos[p].elem.numel, p) for p, off in zip(parts, ln.offsets, strict=True)])


def _check_relayout(design: Design, what: str, p: AccessPattern, numel: int) -> None:
    """A memtile re-layout of one element of ``numel`` values: it walks each exactly once, in the dimensions a
    memtile DMA has."""
    if p.numel != numel or p.extent()[1] >= numel:
        raise DesignError(f"{what}: the pattern must walk exactly the {numel} elements of one buffer")
    mem = design.device.tiles("mem")[0]
    _check_zero_strides(p, what)
    if p.canonical().rank > design.device.dma_dims(mem):
        raise DesignError(f"{what}: the pattern has more dimensions than a memtile DMA supports")


def _check_cover(what: str, ln: Link, whole: Fifo, spans: list[tuple[int, int, str]]) -> None:
    """The parts of a split or join cover the whole element; a join's parts also do not overlap.

    An uncovered range of a join would reach the consumer as stale memory, of a split it
    would be dropped silently; two join parts writing one range race.
    """
    verb = "sends" if ln.kind is LinkKind.SPLIT else "fills"
    reach = 0
    prev = ""
    for lo, hi, part in sorted(spans):
        if lo > reach:
            raise DesignError(
                f"{what}: elements [{reach}, {lo}) of the {whole.elem.numel}-element buffer of fifo "
                f"{whole.name!r} are covered by no fifo, so the {ln.kind.value} {verb} only part of each element; "
                f"give offsets that cover it all"
            )
        if ln.kind is LinkKind.JOIN and lo < reach:
            raise DesignError(
                f"{what}: {prev!r} and {part!r} both write elements [{lo}, {min(reach, hi)}) of the buffer "
                f"of fifo {whole.name!r}; give the joined fifos disjoint offsets"
            )
        if hi > reach:
            reach, prev = hi, part
    if reach < whole.elem.numel:
        raise DesignError(
            f"{what}: elements [{reach}, {whole.elem.numel}) of the {whole.elem.numel}-element buffer of "
            f"fifo {whole.name!r} are covered by no fifo, so the {ln.kind.value} {verb} only part of each element; "
            f"give offsets that cover it all"
        )


def _verify_ends(design: Design) -> None:
    for name, e in fifo_ends(design).items():
        f = design.fifo(name)
        if not e.producers:
            raise DesignError(f"fifo {name!r}{at(f.loc)} has no producer: nothing writes it (a dma into it, a core writing it, or a link)")
        if len(e.producers) > 1:
            raise DesignError(
                f"fifo {name!r}{at(f.loc)} has {len(e.producers)} producers ({', '.join(e.producers)}); a fifo has one"
            )
        if not e.consumers:
            raise DesignError(f"fifo {name!r}{at(f.loc)} has no consumer: nothing reads it")
        both = set(e.producers) & set(e.consumers)
        if both:
            raise DesignError(f"fifo {name!r}{at(f.loc)} is produced and consumed by {sorted(both)[0]}")
        for c in e.consumers:
            if c.startswith("link:") and any(x.startswith("link:") for x in e.consumers if x != c):
                raise DesignError(f"fifo {name!r}{at(f.loc)} feeds two links; use one split")


def _verify_writes(design: Design) -> None:
    """No two host moves from different fifos write the same element of a tensor.

    Moves draining one fifo complete in program order, so their overlaps have a
    defined result; moves from different fifos run concurrently and would race.
    """
    import numpy as np

    by_tensor: dict[str, list[Dma]] = defaultdict(list)
    for d in design.dmas:
        if not d.to_device:
            by_tensor[d.tensor].append(d)
    for tensor, moves in by_tensor.items():
        if len({d.src.name for d in moves}) < 2:
            continue
        fifo_ids = {name: k for k, name in enumerate(dict.fromkeys(d.src.name for d in moves))}
        fifo_of = np.asarray([fifo_ids[d.src.name] for d in moves])
        owner = np.full(design.tensors[tensor].type.numel, -1, dtype=np.int32)
        for i, d in enumerate(moves):
            idx = _written(d.pattern)
            prev = owner[idx]
            clash = (prev >= 0) & (fifo_of[prev] != fifo_of[i])
            if clash.any():
                other = moves[int(prev[clash][0])]
                first = int(idx[clash].min())
                raise DesignError(
                    f"dma {other.name!r}{at(other.loc)} (from fifo {other.src.name!r}) and dma {d.name!r}{at(d.loc)} "
                    f"(from fifo {d.src.name!r}) both write tensor {tensor!r} (element {first} and "
                    f"{int(clash.sum()) - 1} more); moves from different fifos run concurrently, so the result would "
                    f"depend on timing: give them disjoint patterns"
                )
            owner[idx] = i


def _verify_read_write(design: Design) -> None:
    """No host move writes an element of a tensor that a host move reads.

    A move into the device and a move out of it serve different fifos, so they run
    concurrently: whether the read sees the old or the new value would depend on
    timing (fifo depths, placement, the simulation mode).
    """
    import numpy as np

    reads: dict[str, list[Dma]] = defaultdict(list)  # tensor -> the moves reading it, in program order
    for d in design.dmas:
        if d.to_device:
            reads[d.tensor].append(d)
    for w in design.dmas:
        if w.to_device or w.tensor not in reads:
            continue  # (the element walk below costs time and memory in proportion to the move)
        written = _written(w.pattern)
        for r in reads[w.tensor]:
            both = np.intersect1d(written, _written(r.pattern), assume_unique=True)
            if both.size:
                raise DesignError(
                    f"dma {w.name!r}{at(w.loc)} writes tensor {w.tensor!r} where dma {r.name!r}{at(r.loc)} reads it "
                    f"(element {int(both[0])} and {both.size - 1} more); the two moves run concurrently, so what "
                    f"the read sees would depend on timing: write the result to another tensor"
                )


def _written(pattern: AccessPattern):
    """The distinct element offsets a pattern touches, ascending (repeats and zero strides add none)."""
    import numpy as np

    dims = sorted((st, n) for n, st in zip(pattern.sizes, pattern.strides, strict=True) if st and n > 1)
    reach = 0  # the farthest offset the dimensions of smaller strides reach
    for st, n in dims:
        if st <= reach:
            break
        reach += (n - 1) * st
    else:
        # Each stride steps past all the smaller ones reach: every offset is hit once, and walking the largest
        # stride outermost visits them in ascending order, so no sorting or deduplicating is needed.
        idx = np.asarray([pattern.offset], dtype=np.int64)
        for st, n in reversed(dims):
            idx = (idx[:, None] + np.arange(n, dtype=np.int64) * st).reshape(-1)
        return idx
    idx = np.asarray([pattern.offset], dtype=np.int64)
    for n, st in zip(pattern.sizes, pattern.strides, strict=True):
        if st and n > 1:
            idx = np.unique((idx[:, None] + np.arange(n, dtype=np.int64) * st).reshape(-1))
    return idx
