"""Design IR: host tensors, fifos, core programs, DMA moves and memtile links.

What the user described stays apart from where it is placed: a core's
``tile`` is only a pin the user asked for (None = the planner chooses), and
every placement decision lives in the Plan, never here.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import AnyKernel
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.types import TensorType, TileType

Coord = tuple[int, int]


def _check_name(name: str, what: str) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise DesignError(f"{what} name {name!r} is not an identifier")


class Port(enum.Enum):
    """Which side of a fifo a core holds (mlir-aie's ObjectFifoPort)."""

    PRODUCE = "produce"
    CONSUME = "consume"


@dataclass(frozen=True)
class TensorDecl:
    """A host (DDR) tensor argument of a design."""

    name: str
    type: TensorType

    def __post_init__(self) -> None:
        _check_name(self.name, "tensor")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> DType:
        return self.type.dtype


@dataclass(frozen=True)
class Fifo:
    """An on-chip channel of ``depth`` buffers of ``elem``."""

    name: str
    elem: TileType
    depth: int = 2
    loc: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name, "fifo")
        if not isinstance(self.elem, TileType) or self.elem.shape == ():
            raise DesignError(f"fifo {self.name!r}: element type must be tl.Tile[shape, dtype], got {self.elem!r}")
        if not isinstance(self.depth, int) or isinstance(self.depth, bool) or self.depth < 1:
            raise DesignError(f"fifo {self.name!r}: depth must be a positive int, got {self.depth!r}")


@dataclass(frozen=True)
class Cascade:
    """A cascade stream from one core to a neighbouring core (mlir-aie ``aie.cascade_flow``).

    The producer passes it to a written tile parameter of a kernel call: the tile the call leaves in the
    producer's staging buffer is sent over the cascade after the call. The consumer passes it to a read-only
    tile parameter: the next tile is taken into the consumer's staging buffer before the call. The staging
    buffers are local buffers of the two cores named by :func:`staging_name`. Which cores may be
    connected is device data (``tilelang.devices.cascade_rules``).
    """

    name: str
    elem: TileType
    loc: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name, "cascade")
        if not isinstance(self.elem, TileType) or self.elem.shape == ():
            raise DesignError(f"cascade {self.name!r}: element type must be tl.Tile[shape, dtype], got {self.elem!r}")


def staging_name(cascade: str, port: Port) -> str:
    """The local buffer through which a core sends (``PRODUCE``: ``<cascade>_put``) or takes a cascade tile."""
    return f"{cascade}_put" if port is Port.PRODUCE else f"{cascade}_get"


# -- core programs -----------------------------------------------------------------


@dataclass(frozen=True)
class ElemArg:
    """Element ``index`` of the window a core holds of ``fifo``."""

    fifo: str
    index: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or isinstance(self.index, bool) or self.index < 0:
            raise DesignError(
                f"element index {self.index!r} of fifo {self.fifo!r}: elements are counted from 0, the oldest "
                f"one held (@{self.fifo}[0]); negative indexes are not supported"
            )


@dataclass(frozen=True)
class ConstArg:
    """A scalar constant argument."""

    value: int | float
    dtype: DType


@dataclass(frozen=True)
class LoopVarArg:
    """The induction variable of the enclosing loop at nesting ``depth`` (0 = outermost)."""

    depth: int
    dtype: DType


@dataclass(frozen=True)
class AffineArg:
    """``offset + sum(coeff * %i<depth>)`` over enclosing loops' induction variables, as an integer ``dtype``.

    The sum is exact; the argument is its value wrapped to ``dtype`` (two's complement), as a
    C cast of a wider integer. ``terms`` are ``(depth, coeff)`` pairs, depths ascending and
    distinct, coefficients non-zero.
    """

    terms: tuple[tuple[int, int], ...]
    offset: int
    dtype: DType

    def __post_init__(self) -> None:
        depths = [d for d, _ in self.terms]
        ok = all(isinstance(d, int) and isinstance(c, int) and not isinstance(c, bool) and d >= 0 and c != 0
                 for d, c in self.terms)
        if not ok or depths != sorted(set(depths)) or not isinstance(self.offset, int) or isinstance(self.offset, bool):
            raise DesignError(f"affine argument: terms must be (depth, non-zero int) pairs by ascending depth and the "
                              f"offset an int, got {self.terms!r} + {self.offset!r}")

    def value(self, loopvars: Sequence[int]) -> int:
        """The exact (unwrapped) value for the induction variables ``loopvars`` (outermost first)."""
        return self.offset + sum(c * loopvars[d] for d, c in self.terms)

    def wrapped(self, loopvars: Sequence[int]) -> int:
        """The value as ``dtype`` holds it (two's complement wrap)."""
        return self.dtype.wrap(self.value(loopvars))


@dataclass(frozen=True)
class CascadeArg:
    """The cascade ``cascade`` (``tl.cascade``): sent after the call (written parameter) or taken before it.

    The tile passes through the calling core's staging buffer ``staging_name(cascade, port)``, a local
    buffer of that core (see :class:`Cascade`).
    """

    cascade: str


@dataclass(frozen=True)
class BufArg:
    """The core-local buffer ``buffer`` (``tl.buffer``) of the calling core."""

    buffer: str


Arg = ElemArg | ConstArg | LoopVarArg | AffineArg | BufArg | CascadeArg


@dataclass(frozen=True)
class Acquire:
    """Make ``n`` elements of ``fifo`` held (IRON: acquiring only the difference)."""

    fifo: str
    port: Port
    n: int = 1
    loc: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or self.n < 1:
            raise DesignError(f"acquire of {self.fifo!r}: n must be a positive int, got {self.n!r}")


@dataclass(frozen=True)
class Release:
    """Give back the ``n`` oldest held elements of ``fifo``."""

    fifo: str
    port: Port
    n: int = 1
    loc: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or self.n < 1:
            raise DesignError(f"release of {self.fifo!r}: n must be a positive int, got {self.n!r}")


@dataclass(frozen=True)
class Call:
    """A kernel invocation."""

    kernel: str
    args: tuple[Arg, ...]
    loc: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Loop:
    """``for i in tl.range(start, stop, step)``: an IR loop."""

    start: int
    stop: int
    step: int
    body: tuple[Stmt, ...]

    def __post_init__(self) -> None:
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (self.start, self.stop, self.step)):
            raise DesignError("tl.range bounds must be Python ints")
        if self.step == 0:
            raise DesignError("tl.range step must not be zero")

    @property
    def trip_count(self) -> int:
        # arithmetic, not len(range(...)): that overflows a C ssize_t for bounds past 2**63
        span, step = (self.stop - self.start, self.step) if self.step > 0 else (self.start - self.stop, -self.step)
        return max(0, -(-span // step))


Stmt = Acquire | Release | Call | Loop


@dataclass(frozen=True)
class LocalBuffer:
    """A core-private scratch tile (``tl.buffer``; IRON's LocalBuffer, mlir-aie's ``aie.buffer``).

    Its content persists from call to call of its core and starts undefined:
    a call must write it whole before any call reads it (``verify.check_locals``).
    """

    name: str
    elem: TileType
    loc: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name, "buffer")
        if not isinstance(self.elem, TileType) or self.elem.shape == ():
            raise DesignError(f"buffer {self.name!r}: type must be tl.Tile[shape, dtype], got {self.elem!r}")

    @property
    def nbytes(self) -> int:
        return self.elem.nbytes


@dataclass(frozen=True)
class Core:
    """A core program; ``tile`` pins it to a compute tile (None: the planner places it).

    ``buffers`` are its local scratch tiles, which its calls reach through :class:`BufArg`.
    """

    name: str
    body: tuple[Stmt, ...]
    tile: Coord | None = None
    buffers: tuple[LocalBuffer, ...] = ()
    loc: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name, "core")
        if self.tile is not None:
            t = self.tile
            if not (isinstance(t, tuple) and len(t) == 2 and all(isinstance(x, int) for x in t)):
                raise DesignError(f"core {self.name!r}: tile must be (col, row), got {t!r}")


def walk(body: tuple[Stmt, ...]):
    """Every statement of ``body``, loops included, in program order (pre-order)."""
    for s in body:
        yield s
        if isinstance(s, Loop):
            yield from walk(s.body)


def call_counts(body: tuple[Stmt, ...], times: int = 1, out: dict[str, int] | None = None) -> dict[str, int]:
    """Calls per kernel name that ``times`` runs of ``body`` make (loops multiplied out)."""
    out = {} if out is None else out
    for s in body:
        if isinstance(s, Call):
            out[s.kernel] = out.get(s.kernel, 0) + times
        elif isinstance(s, Loop):
            call_counts(s.body, times * s.trip_count, out)
    return out


def released(body: tuple[Stmt, ...], fifo: str) -> int:
    """Elements of ``fifo`` that one run of ``body`` gives back (loops multiplied out)."""
    n = 0
    for s in body:
        if isinstance(s, Release) and s.fifo == fifo:
            n += s.n
        elif isinstance(s, Loop):
            n += s.trip_count * released(s.body, fifo)
    return n


# -- data movement -----------------------------------------------------------------


class EndpointKind(enum.Enum):
    TENSOR = "tensor"
    FIFO = "fifo"


@dataclass(frozen=True)
class Endpoint:
    kind: EndpointKind
    name: str

    def __str__(self) -> str:
        return ("%" if self.kind is EndpointKind.TENSOR else "@") + self.name


@dataclass(frozen=True)
class Dma:
    """A host move: tensor -> fifo(s) or fifo -> tensor, one entry of the runtime sequence.

    ``pattern`` walks the tensor. Moves are issued in program order; moves on
    one fifo complete one after another. ``plio``: 0 for a move through a NoC shim's
    DMA from DDR, else the width in bits of the PL I/O stream of a PL shim that carries
    it (docs/plio.md).
    """

    name: str
    src: Endpoint
    dsts: tuple[Endpoint, ...]
    pattern: AccessPattern
    loc: str | None = field(default=None, compare=False)
    plio: int = 0

    def __post_init__(self) -> None:
        _check_name(self.name, "dma")
        if isinstance(self.plio, bool) or not isinstance(self.plio, int) or self.plio < 0:
            raise DesignError(f"dma {self.name!r}: plio is a stream width in bits (0: no PLIO), got {self.plio!r}")
        if not self.dsts:
            raise DesignError(f"dma {self.name!r} has no destination")
        to_tensor = any(d.kind is EndpointKind.TENSOR for d in self.dsts)
        if self.src.kind is EndpointKind.TENSOR and to_tensor:
            raise DesignError(f"dma {self.name!r}: tensor to tensor moves are not supported; stage through a fifo")
        if self.src.kind is EndpointKind.FIFO and not to_tensor:
            raise DesignError(f"dma {self.name!r}: fifo to fifo moves are links; use tl.dma(fifo, fifo) through the frontend")
        if to_tensor and len(self.dsts) != 1:
            raise DesignError(f"dma {self.name!r}: a move into a tensor has exactly one destination")

    @property
    def tensor(self) -> str:
        """The host tensor this move reads or writes."""
        return self.src.name if self.src.kind is EndpointKind.TENSOR else self.dsts[0].name

    @property
    def fifos(self) -> tuple[str, ...]:
        ends = (self.src, *self.dsts)
        return tuple(e.name for e in ends if e.kind is EndpointKind.FIFO)

    @property
    def to_device(self) -> bool:
        """True for host -> device (shim MM2S), False for device -> host (shim S2MM)."""
        return self.src.kind is EndpointKind.TENSOR


class LinkKind(enum.Enum):
    FORWARD = "forward"
    SPLIT = "split"
    JOIN = "join"


@dataclass(frozen=True)
class Link:
    """A static memtile link (mlir-aie ``aie.objectfifo.link``).

    forward: one fifo into another (optionally re-laid out by ``pattern``
    within an element); split: parts of each source element (at ``offsets``)
    into each destination; join: the reverse, each part optionally re-laid out
    by ``pattern`` as the memtile sends the joined element on (the parts in
    order of offset, each walked by the pattern within itself: mlir-aie's
    ``dimensionsToStream`` on a join's output).
    """

    name: str
    kind: LinkKind
    srcs: tuple[str, ...]
    dsts: tuple[str, ...]
    offsets: tuple[int, ...] = ()
    pattern: AccessPattern | None = None
    loc: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name, "link")
        if not self.srcs or not self.dsts:
            raise DesignError(f"{self.kind.value} {self.name!r} needs sources and destinations")
        if self.kind is not LinkKind.JOIN and len(self.srcs) != 1:
            raise DesignError(f"{self.kind.value} {self.name!r} has exactly one source fifo")
        if self.kind is not LinkKind.SPLIT and len(self.dsts) != 1:
            raise DesignError(f"{self.kind.value} {self.name!r} has exactly one destination fifo")
        many = len(self.dsts) if self.kind is LinkKind.SPLIT else len(self.srcs)
        if self.kind is not LinkKind.FORWARD and len(self.offsets) != many:
            raise DesignError(f"{self.kind.value} {self.name!r}: {many} fifos but {len(self.offsets)} offsets")

    @property
    def fifos(self) -> tuple[str, ...]:
        return self.srcs + self.dsts

    def join_indices(self) -> np.ndarray:
        """A join with a pattern: the joined element's values in the order the memtile sends them (each
        part, by offset, walked by the pattern within itself)."""
        idx = self.pattern.indices()  # type: ignore[union-attr]
        return np.concatenate([off + idx for off in sorted(self.offsets)]).astype(idx.dtype)


# -- the design --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Design:
    """A whole spatial program on one device.

    Attributes:
        name: the design's name.
        device: the device model it targets.
        params: host tensors, in argument order.
        kernels: every kernel the cores call, by first use.
        fifos: on-chip channels.
        cores: core programs.
        links: static memtile links (forward, split, join).
        dmas: host moves, the runtime sequence in program order.
        cascades: cascade streams between neighbouring cores.
    """

    name: str
    device: Device
    params: tuple[TensorDecl, ...]
    kernels: tuple[AnyKernel, ...] = ()
    fifos: tuple[Fifo, ...] = ()
    cores: tuple[Core, ...] = ()
    links: tuple[Link, ...] = ()
    dmas: tuple[Dma, ...] = ()
    loc: str | None = field(default=None, compare=False)
    cascades: tuple[Cascade, ...] = ()

    def __post_init__(self) -> None:
        _check_name(self.name, "design")
        seen: dict[str, str] = {}
        groups = [
            ("tensor", self.params),
            ("fifo", self.fifos),
            ("cascade", self.cascades),
            ("core", self.cores),
            ("link", self.links),
            ("dma", self.dmas),
            ("kernel", self.kernels),
            ("buffer", tuple(b for c in self.cores for b in c.buffers)),
        ]
        for what, items in groups:
            for x in items:
                if x.name in seen:
                    raise DesignError(f"design {self.name!r}: the name {x.name!r} is used by a {seen[x.name]} and a {what}")
                seen[x.name] = what

    @property
    def tensors(self) -> dict[str, TensorDecl]:
        """Host tensors by name, in argument order."""
        return {t.name: t for t in self.params}

    def plio_of(self, fifo: str) -> int:
        """The PLIO width in bits of ``fifo``'s host moves (0: none, or moved by a NoC shim's DMA)."""
        return self._plio_widths.get(fifo, 0)

    @cached_property
    def _plio_widths(self) -> dict[str, int]:
        """Each fifo's PLIO width, its first host move's (one pass over the moves; a design is immutable)."""
        widths: dict[str, int] = {}
        for d in self.dmas:
            for name in d.fifos:
                widths.setdefault(name, d.plio)
        return widths

    def fifo(self, name: str) -> Fifo:
        return self._fifos_by_name[name]

    @cached_property
    def _fifos_by_name(self) -> dict[str, Fifo]:
        return {f.name: f for f in self.fifos}

    def cascade(self, name: str) -> Cascade:
        for c in self.cascades:
            if c.name == name:
                return c
        raise KeyError(name)

    def kernel(self, name: str) -> AnyKernel:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)

    def core(self, name: str) -> Core:
        for c in self.cores:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def inputs(self) -> tuple[str, ...]:
        """Tensors read by some move, in argument order."""
        read = {d.tensor for d in self.dmas if d.to_device}
        return tuple(t.name for t in self.params if t.name in read)

    @property
    def outputs(self) -> tuple[str, ...]:
        """Tensors written by some move, in argument order."""
        written = {d.tensor for d in self.dmas if not d.to_device}
        return tuple(t.name for t in self.params if t.name in written)

    def __call__(self, *arrays: object, **named: object) -> object:
        """Plan and simulate on numpy arrays; return the written tensors (one array, or a tuple)."""
        from tilelang.ir.calls import run_design  # the runner tilelang.api registers

        return run_design(self, arrays, named)

    def __repr__(self) -> str:
        cores = f"{len(self.cores)} core" + ("" if len(self.cores) == 1 else "s")
        fifos = f"{len(self.fifos)} fifo" + ("" if len(self.fifos) == 1 else "s")
        return f"<design {self.name} on {self.device.name}: {cores}, {fifos}>"

    def __str__(self) -> str:
        """The design's IR text (``tl.ir.print``): its kernels, fifos, core programs and moves."""
        from tilelang.ir.printer import print_ir  # the printer imports this module

        return print_ir(self)
