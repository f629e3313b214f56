"""Tracing state of a design: proxies for tensors, fifos and elements, and the builders.

``tl.fifo``/``tl.dma``/``@tl.core`` (frontend/design.py) record into the
current :class:`DesignBuilder`; a core body is recorded by a :class:`CoreBuilder`.
Whether a core produces or consumes a fifo is inferred from the kernel
parameters its elements are passed to (written parameters mean produce), or,
for elements no kernel touches, from the fifo's other ends.
"""


from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterator
from typing import NoReturn

import numpy as np

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.frontend.source import located, user_location
from tilelang.ir.design import (
    Acquire,
    AffineArg,
    Arg,
    BufArg,
    Call,
    Cascade,
    CascadeArg,
    ConstArg,
    Core,
    Design,
    Dma,
    ElemArg,
    Fifo,
    Link,
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
from tilelang.ir.kernel import AnyKernel
from tilelang.ir.types import TileType
from tilelang.ir.verify import check_call
from tilelang.ir.verify_sizes import LOOP_LIMIT, MAX_TRACED

_state = threading.local()


def _design() -> DesignBuilder:
    b = getattr(_state, "design", None)
    if b is None:
        raise DesignError(located("this is only valid inside a @tl.design function", user_location()))
    return b


def current_core() -> CoreBuilder | None:
    """The core being traced, if any (kernel calls then record invocations)."""
    b = getattr(_state, "design", None)
    return b.core if b is not None else None


# -- proxies ------------------------------------------------------------------------------


class TensorArg:
    """A design argument: a host tensor."""

    def __init__(self, decl: TensorDecl) -> None:
        self.decl = decl
        self.name = decl.name
        self.shape = decl.shape
        self.dtype = decl.dtype

    def __repr__(self) -> str:
        return f"<tensor {self.name}: {self.decl.type}>"

    def __getitem__(self, index: object) -> NoReturn:
        # A host tensor has no values at trace time; a part of it is moved by an access pattern.
        raise DesignError(
            located(
                f"host tensor {self.name!r} cannot be indexed or sliced in a design ({self.name}[{index!r}]): "
                f"move a part of it with an access pattern, tl.dma({self.name}, fifo, "
                f"pattern=tl.pattern(offset, sizes, strides)), the offset and strides in elements",
                user_location(),
            )
        )

    def __setitem__(self, index: object, value: object) -> NoReturn:
        self.__getitem__(index)


class Affine:
    """An integer affine expression of ``tl.range`` loop variables, ``offset + sum(coeff * var)``.

    Loop variables support ``+``, ``-`` and ``*`` by Python ints (and ``+``/``-`` with each other);
    the result can be passed to a kernel's integer scalar parameter (``AffineArg`` in the IR).
    Anything else (``//``, ``%``, a product of two variables, a float) is not affine and raises.
    """

    def __init__(self, terms: dict[int, int], offset: int) -> None:
        self.terms = {d: c for d, c in terms.items() if c}
        self.offset = offset

    @staticmethod
    def _of(x: object) -> Affine | None:
        if isinstance(x, Affine):
            return x
        if isinstance(x, int) and not isinstance(x, bool):
            return Affine({}, x)
        return None

    def _combine(self, other: object, sign: int, op: str) -> Affine:
        o = Affine._of(other)
        if o is None:
            self._no(op, other)
        terms = dict(self.terms)
        for d, c in o.terms.items():
            terms[d] = terms.get(d, 0) + sign * c
        return Affine(terms, self.offset + sign * o.offset)

    def __add__(self, other: object) -> Affine:
        return self._combine(other, 1, "+")

    __radd__ = __add__

    def __sub__(self, other: object) -> Affine:
        return self._combine(other, -1, "-")

    def __rsub__(self, other: object) -> Affine:
        return (-self)._combine(other, 1, "-")

    def __neg__(self) -> Affine:
        return Affine({d: -c for d, c in self.terms.items()}, -self.offset)

    def __mul__(self, other: object) -> Affine:
        if not isinstance(other, int) or isinstance(other, bool):
            self._no("*", other)
        return Affine({d: c * other for d, c in self.terms.items()}, self.offset * other)

    __rmul__ = __mul__

    def _no(self, op: str, other: object = None) -> NoReturn:
        what = f"{op} {other!r}" if other is not None else op
        raise DesignError(
            located(f"tl.range loop variables combine with +, - and * by ints into kernel arguments; "
                    f"{self!r} {what} is not supported", user_location())
        )

    def __floordiv__(self, other: object) -> NoReturn:
        self._no("//", other)

    __rfloordiv__ = __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __floordiv__

    # A loop variable has no value at trace time: the body is traced once, for every iteration.
    # Python control flow on it would silently take one branch for all of them, so each way of
    # asking for its value raises, saying what to write instead.

    def _kind(self) -> str:
        return "a tl.range loop variable" if isinstance(self, LoopVar) else "an expression of tl.range loop variables"

    def _branch(self, what: str) -> NoReturn:
        raise DesignError(
            located(
                f"{what} {self._kind()} ({self!r}) in Python: the core body is traced once for every "
                f"iteration, so Python cannot branch on it. Instead branch inside a kernel with tl.where on a value "
                f"passed as an integer argument (affine arguments such as i * 64 + j are allowed), or peel the "
                f"special iteration out of the loop (do iteration 0 before 'for k in tl.range(1, n)')",
                user_location(),
            )
        )

    def _value(self, what: str) -> NoReturn:
        raise DesignError(
            located(
                f"{what} {self._kind()} ({self!r}) as a Python int: its value is only known on the device. "
                f"Instead pass it to a kernel's integer parameter, alone or as an affine expression such as "
                f"i * 64 + j, or unroll with a Python 'for' loop when each iteration needs different Python objects",
                user_location(),
            )
        )

    def __eq__(self, other: object) -> NoReturn:  # type: ignore[override]
        self._branch("'==' compares")

    def __ne__(self, other: object) -> NoReturn:  # type: ignore[override]
        self._branch("'!=' compares")

    def __lt__(self, other: object) -> NoReturn:
        self._branch("'<' compares")

    def __le__(self, other: object) -> NoReturn:
        self._branch("'<=' compares")

    def __gt__(self, other: object) -> NoReturn:
        self._branch("'>' compares")

    def __ge__(self, other: object) -> NoReturn:
        self._branch("'>=' compares")

    def __bool__(self) -> NoReturn:
        self._branch("'if'/'while'/bool() tests")

    def __index__(self) -> NoReturn:
        self._value("indexing (a list, range() or slice) uses")

    def __int__(self) -> NoReturn:
        self._value("int() uses")

    def __float__(self) -> NoReturn:
        self._value("float() uses")

    def __hash__(self) -> NoReturn:  # type: ignore[override]
        self._value("a dict or set lookup uses")

    def __repr__(self) -> str:
        parts = [f"%i{d}" if c == 1 else f"{c} * %i{d}" for d, c in sorted(self.terms.items())]
        if self.offset or not parts:
            parts.append(str(self.offset))
        return "<" + " + ".join(parts) + ">"


class LoopVar(Affine):
    """The induction variable of a ``tl.range`` loop; an integer kernel argument, alone or in an
    affine expression (``i * 64 + j``, see :class:`Affine`)."""

    def __init__(self, depth: int) -> None:
        super().__init__({depth: 1}, 0)
        self.depth = depth

    def __repr__(self) -> str:
        return f"<loop variable %i{self.depth}>"


def _hold_only(what: str, value: object) -> NoReturn:
    """Refuse ``what`` done to an element, window or buffer in a core body, at the user's line."""
    raise DesignError(
        located(
            f"{what} {value!r} in a core body: a core body acquires, releases and calls kernels, and runs once on "
            f"the host while the design is traced, so it cannot compute on the data it holds. Instead do the "
            f"computation inside a @tl.kernel and call that kernel with the element (kernel(x, y, ...))",
            user_location(),
        )
    )


def _refused(symbol: str) -> Callable[[object, object], NoReturn]:
    """A binary operator method of :class:`_Held` that refuses ``symbol``."""

    def op(self: object, other: object) -> NoReturn:
        _hold_only(f"arithmetic ({symbol}) on", self)

    return op


class _Held:
    """What a core body holds (an element, a window, a buffer): arithmetic, indexing and numpy on it are refused."""

    __add__ = __radd__ = _refused("+")
    __sub__ = __rsub__ = _refused("-")
    __mul__ = __rmul__ = _refused("*")
    __truediv__ = __rtruediv__ = _refused("/")
    __floordiv__ = __rfloordiv__ = _refused("//")
    __mod__ = __rmod__ = _refused("%")
    __pow__ = __rpow__ = _refused("**")
    __matmul__ = __rmatmul__ = _refused("@")

    def __neg__(self) -> NoReturn:
        _hold_only("arithmetic (unary -) on", self)

    def __abs__(self) -> NoReturn:
        _hold_only("abs() of", self)

    def __array__(self, *a: object, **k: object) -> NoReturn:
        _hold_only("numpy use of", self)

    def __array_function__(self, func: object, types: object, args: object, kwargs: object) -> NoReturn:
        _hold_only(f"numpy's np.{getattr(func, '__name__', func)} of", self)

    def __array_ufunc__(self, ufunc: object, method: str, *inputs: object, **kwargs: object) -> NoReturn:
        _hold_only(f"numpy's np.{getattr(ufunc, '__name__', ufunc)} of", self)


class Element(_Held):
    """Element ``index`` of the window a core holds of a fifo; pass it to kernels as a tile."""

    def __init__(self, fifo: FifoRef, index: int, record: _AcqRecord) -> None:
        self.fifo = fifo
        self.index = index
        self.record = record

    @property
    def shape(self) -> tuple[int, ...]:
        return self.fifo.elem.shape

    @property
    def dtype(self) -> DType:
        return self.fifo.elem.dtype

    def __getitem__(self, index: object) -> NoReturn:
        _hold_only(f"indexing ([{index!r}]) of", self)

    def __setitem__(self, index: object, value: object) -> NoReturn:
        _hold_only(f"assigning to a part ([{index!r}] = ...) of", self)

    def __getattr__(self, name: str) -> NoReturn:
        # Only reached when normal lookup fails: a numpy method (x.sum()) or a tile attribute it lacks.
        if name.startswith("__"):
            raise AttributeError(name)
        _hold_only(f".{name} of", self)

    def __repr__(self) -> str:
        return f"<{self.fifo.name}[{self.index}]>"


class BufferRef(_Held):
    """What ``tl.buffer`` returns inside a core body: pass it to kernels as a tile."""

    def __init__(self, buffer: LocalBuffer) -> None:
        self.buffer = buffer
        self.name = buffer.name
        self.elem = buffer.elem

    def __repr__(self) -> str:
        return f"<buffer {self.name}: {self.elem}>"


class CascadeRef:
    """What ``tl.cascade`` returns: pass it to a kernel call inside a core, as a written tile (the core
    sends the tile over the cascade after the call) or a read tile (the core takes a tile before the call)."""

    def __init__(self, cascade: Cascade) -> None:
        self.cascade = cascade
        self.name = cascade.name
        self.elem = cascade.elem

    def __repr__(self) -> str:
        return f"<cascade {self.name}: {self.elem}>"


class Window(_Held, tuple):
    """The elements returned by ``fifo.acquire(n)`` for n > 1; index it (``w[0]`` is the oldest held)."""

    def __getitem__(self, index: object) -> Element | Window:  # type: ignore[override]
        if isinstance(index, slice):
            return Window(tuple.__getitem__(self, index))
        n = len(self)
        if isinstance(index, int | np.integer) and not isinstance(index, bool) and -n <= index < n:
            return tuple.__getitem__(self, int(index))
        first = tuple.__getitem__(self, 0)
        raise DesignError(
            located(
                f"fifo {first.fifo.name!r}: element [{index!r}] of a window of {n} acquired elements (acquire({n}) at "
                f"{first.record.loc}); index it with an int from 0 to {n - 1} (0 is the oldest), or acquire more",
                user_location(),
            )
        )


class _AcqRecord:
    def __init__(self, fifo: str, n: int, port: Port | None, loc: str | None, release: bool = False) -> None:
        self.fifo, self.n, self.port, self.loc, self.release = fifo, n, port, loc, release


class FifoRef:
    """What ``tl.fifo`` returns: acquire and release it inside core bodies."""

    def __init__(self, fifo: Fifo) -> None:
        self.fifo = fifo
        self.name = fifo.name
        self.elem = fifo.elem
        self.depth = fifo.depth

    def acquire(self, n: int = 1, port: str | None = None) -> Element | Window:
        """Hold ``n`` elements (only the difference to what is held is acquired).

        Args:
            n: elements to hold.
            port: "produce" or "consume"; inferred from use when None.

        Returns:
            The element (n == 1) or a window of n elements.
        """
        core = _core("fifo.acquire")
        rec = core.acquire(self, n, _port(port))
        els = [Element(self, i, rec) for i in builtins.range(n)]
        return els[0] if n == 1 else Window(els)

    def release(self, n: int = 1) -> None:
        """Give back the ``n`` oldest held elements."""
        _core("fifo.release").release(self, n)

    def __repr__(self) -> str:
        return f"<fifo {self.name}: {self.elem} x{self.depth}>"


def _port(port: str | None) -> Port | None:
    if port is None:
        return None
    try:
        return Port(port)
    except ValueError:
        raise DesignError(located(f"port must be 'produce' or 'consume', got {port!r}", user_location())) from None


def _core(what: str) -> CoreBuilder:
    core = current_core()
    if core is None:
        raise DesignError(located(f"{what} is only valid inside a @tl.core body", user_location()))
    return core


# -- builders -----------------------------------------------------------------------------


class CoreBuilder:
    """Records one core's statements while its body is traced."""

    def __init__(self, design: DesignBuilder, name: str, tile: tuple[int, int] | None, loc: str) -> None:
        self.design, self.name, self.tile, self.loc = design, name, tile, loc
        self.bodies: list[list] = [[]]
        self.ports: dict[str, tuple[Port, str | None]] = {}
        self.buffers: list[LocalBuffer] = []
        self.traced = 0  # statements recorded so far, every body (bounded: Python loops unroll)

    def _add(self, item: object, loc: str | None) -> None:
        """Record one statement in the innermost body, within ``MAX_TRACED``."""
        self.traced += 1
        if self.traced > MAX_TRACED:
            raise DesignError(located(
                f"core {self.name!r} has traced {MAX_TRACED} statements (tilelang.ir.verify_sizes.MAX_TRACED): a "
                f"Python loop (for ... in range, while) in a core body runs while the design is traced, unrolled; "
                f"use tl.range for a loop of the core program", loc))
        self.bodies[-1].append(item)

    def buffer(self, elem: TileType, name: str | None) -> BufferRef:
        loc = user_location()
        try:
            b = LocalBuffer(self.design.fresh(f"{self.name}_buf", name, loc), elem, loc=loc)
        except DesignError as e:
            raise DesignError(located(str(e), loc)) from None
        self.buffers.append(b)
        return BufferRef(b)

    def _set_port(self, fifo: str, port: Port, loc: str | None) -> None:
        old = self.ports.get(fifo)
        if old is not None and old[0] is not port:
            raise DesignError(
                located(
                    f"core {self.name!r} {'writes' if port is Port.PRODUCE else 'reads'} fifo {fifo!r} here but "
                    f"{'writes' if old[0] is Port.PRODUCE else 'reads'} it at {old[1]}; a core is one end of a fifo",
                    loc,
                )
            )
        self.ports.setdefault(fifo, (port, loc))

    def acquire(self, fifo: FifoRef, n: int, port: Port | None) -> _AcqRecord:
        loc = user_location()
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise DesignError(located(f"acquire of {fifo.name!r}: n must be a positive int, got {n!r}", loc))
        if n > fifo.depth:
            raise DesignError(located(
                f"core {self.name!r} acquires {n} elements of fifo {fifo.name!r}, whose depth is {fifo.depth}; this "
                f"can never be granted: acquire at most {fifo.depth}, or declare the fifo with depth={n}", loc))
        if port is not None:
            self._set_port(fifo.name, port, loc)
        rec = _AcqRecord(fifo.name, n, port, loc)
        self._add(rec, loc)
        return rec

    def release(self, fifo: FifoRef, n: int) -> None:
        loc = user_location()
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise DesignError(located(f"release of {fifo.name!r}: n must be a positive int, got {n!r}", loc))
        self._add(_AcqRecord(fifo.name, n, None, loc, release=True), loc)

    def call(self, kernel: AnyKernel, values: list[object]) -> None:
        loc = user_location()
        args: list[Arg] = []
        for p, v in zip(kernel.params, values, strict=True):
            args.append(self._arg(kernel, p.name, p.type, v, loc))
            if isinstance(v, Element):
                self._set_port(v.fifo.name, Port.PRODUCE if p.name in kernel.written else Port.CONSUME, loc)
        self.design.use_kernel(kernel, loc)
        call = Call(kernel.name, tuple(args), loc=loc)
        fifos = {f.name: f.fifo for f in self.design.fifos}
        cascades = {c.name: c.cascade for c in self.design.cascades}
        check_call(call, kernel, fifos, len(self.bodies) - 1, self.name, {b.name: b for b in self.buffers}, cascades)
        self._add(call, loc)

    def _arg(self, kernel: AnyKernel, pname: str, ptype: object, v: object, loc: str | None) -> Arg:
        what = f"core {self.name!r}: call of {kernel.name!r}, parameter {pname!r}"
        if isinstance(v, Element):
            return ElemArg(v.fifo.name, v.index)
        if isinstance(v, BufferRef):
            if v.buffer not in self.buffers:
                raise DesignError(located(f"{what}: buffer {v.name!r} belongs to another core; a tl.buffer is "
                                          f"private to the core that declares it", loc))
            return BufArg(v.name)
        if isinstance(v, CascadeRef):
            return self._cascade_arg(kernel, pname, ptype, v, loc, what)
        if isinstance(v, FifoRef):
            raise DesignError(located(f"{what}: pass an acquired element (x = {v.name}.acquire()), not the fifo", loc))
        if isinstance(v, Window):
            raise DesignError(located(f"{what}: pass one element of the acquired window (w[0] is the oldest), not "
                                      f"the window {v!r}", loc))
        if isinstance(ptype, TileType):
            raise DesignError(located(f"{what} is a tile {ptype}; pass an element acquired from a fifo or a tl.buffer", loc))
        assert isinstance(ptype, DType)
        if isinstance(v, Affine):
            if not ptype.is_int:
                raise DesignError(located(f"{what} is {ptype}; a tl.range variable expression is an integer", loc))
            if v.offset == 0 and len(v.terms) == 1 and next(iter(v.terms.values())) == 1:
                return LoopVarArg(next(iter(v.terms)), ptype)
            return AffineArg(tuple(sorted(v.terms.items())), v.offset, ptype)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise DesignError(located(f"{what}: expected a {ptype} constant or a tl.range variable, got {v!r}", loc))
        if ptype.is_int:
            if float(v) != int(v):
                raise DesignError(located(f"{what} is {ptype}; got {v!r}", loc))
            return ConstArg(int(v), ptype)
        return ConstArg(float(v), ptype)

    def _cascade_arg(self, kernel: AnyKernel, pname: str, ptype: object, v: CascadeRef, loc: str | None,
                     what: str) -> CascadeArg:
        """The cascade argument; records this core as the cascade's sender or taker and its staging buffer."""
        if not isinstance(ptype, TileType):
            raise DesignError(located(f"{what} is a scalar {ptype}; cascade {v.name!r} carries tiles", loc))
        port = Port.PRODUCE if pname in kernel.written else Port.CONSUME
        ends = self.design.cascade_ends.setdefault(v.name, {})
        other = Port.CONSUME if port is Port.PRODUCE else Port.PRODUCE
        if other in ends and ends[other][0] == self.name:
            raise DesignError(located(f"cascade {v.name!r}: core {self.name!r} both sends and takes it (at "
                                      f"{ends[other][1]} and here); a cascade connects two neighbouring cores", loc))
        if port in ends and ends[port][0] != self.name:
            verb = "sends" if port is Port.PRODUCE else "takes"
            raise DesignError(located(f"cascade {v.name!r}: core {ends[port][0]!r} already {verb} it (at "
                                      f"{ends[port][1]}); core {self.name!r} cannot also {verb[:-1]} it: a cascade "
                                      f"has one producer and one consumer core", loc))
        ends.setdefault(port, (self.name, loc))
        staging = staging_name(v.name, port)
        if not any(b.name == staging for b in self.buffers):
            if staging in self.design.names:
                raise DesignError(located(f"cascade {v.name!r} needs the name {staging!r} for its staging buffer "
                                          f"in core {self.name!r}, but it is already used; rename that entity", loc))
            self.design.names.add(staging)
            self.buffers.append(LocalBuffer(staging, v.elem, loc=loc))
        return CascadeArg(v.name)

    def loop(self, start: int, stop: int, step: int) -> Iterator[LoopVar]:
        loc = user_location()
        for x in (start, stop, step):
            if not isinstance(x, int) or isinstance(x, bool):
                raise DesignError(located(f"tl.range bounds must be Python ints, got {x!r}", loc))
            if not -LOOP_LIMIT - 1 <= x <= LOOP_LIMIT:
                raise DesignError(located(f"tl.range bound {x} is outside the 32-bit range [{-LOOP_LIMIT - 1}, "
                                          f"{LOOP_LIMIT}] of a core's loop counter", loc))
        if step == 0:
            raise DesignError(located("tl.range step must not be zero", loc))
        self.bodies.append([])
        try:
            yield LoopVar(len(self.bodies) - 2)
        finally:
            body = self.bodies.pop()
            self._add(("loop", start, stop, step, body), loc)

    def finish(self, ports: dict[str, Port]) -> Core:
        def freeze(items: list) -> tuple[Stmt, ...]:
            out: list[Stmt] = []
            for it in items:
                if isinstance(it, _AcqRecord):
                    port = ports[it.fifo]
                    kind = Release if it.release else Acquire
                    out.append(kind(it.fifo, port, it.n, loc=it.loc))
                elif isinstance(it, tuple):
                    _, start, stop, step, body = it
                    out.append(Loop(start, stop, step, freeze(body)))
                else:
                    out.append(it)
            return tuple(out)

        return Core(self.name, freeze(self.bodies[0]), self.tile, tuple(self.buffers), loc=self.loc)

    def fifos_used(self) -> list[str]:
        seen: list[str] = []

        def scan(items: list) -> None:
            for it in items:
                if isinstance(it, _AcqRecord) and it.fifo not in seen:
                    seen.append(it.fifo)
                elif isinstance(it, tuple):
                    scan(it[4])

        scan(self.bodies[0])
        return seen


class DesignBuilder:
    """Collects a design's entities while its function runs."""

    def __init__(self, name: str, device: Device) -> None:
        self.name, self.device = name, device
        self.tensors: list[TensorDecl] = []
        self.fifos: list[FifoRef] = []
        self.cascades: list[CascadeRef] = []
        self.cascade_ends: dict[str, dict[Port, tuple[str, str | None]]] = {}
        self.cores: list[CoreBuilder] = []
        self.links: list[Link] = []
        self.dmas: list[Dma] = []
        self.kernels: dict[str, AnyKernel] = {}
        self.core: CoreBuilder | None = None
        self.names: set[str] = set()
        self.checked: set[tuple] = set()  # host-move pattern checks passed (``ir.verify.check_pattern``)

    def fresh(self, prefix: str, name: str | None, loc: str | None) -> str:
        if name is not None:
            if not isinstance(name, str) or not name.isidentifier():
                raise DesignError(located(f"name {name!r} is not an identifier", loc))
            if name in self.names:
                raise DesignError(located(f"the name {name!r} is already used in design {self.name!r}", loc))
            self.names.add(name)
            return name
        i = 0
        while f"{prefix}{i}" in self.names:
            i += 1
        self.names.add(f"{prefix}{i}")
        return f"{prefix}{i}"

    def use_kernel(self, kernel: AnyKernel, loc: str | None) -> None:
        old = self.kernels.setdefault(kernel.name, kernel)
        if old is not kernel:
            raise DesignError(located(f"two different kernels are named {kernel.name!r}; rename one", loc))

    def finish(self, loc: str) -> Design:
        ports = self._resolve_ports()
        cores = tuple(c.finish(ports[c.name]) for c in self.cores)
        return Design(
            self.name,
            self.device,
            tuple(self.tensors),
            tuple(self.kernels.values()),
            tuple(f.fifo for f in self.fifos),
            cores,
            tuple(self.links),
            tuple(self.dmas),
            loc=loc,
            cascades=tuple(c.cascade for c in self.cascades),
        )

    def _resolve_ports(self) -> dict[str, dict[str, Port]]:
        """Each core's port per fifo: from its kernel calls, else from the fifo's other ends."""
        hosts_in = {e.name for d in self.dmas if d.to_device for e in d.dsts} | {f for ln in self.links for f in ln.dsts}
        hosts_out = {d.src.name for d in self.dmas if not d.to_device} | {f for ln in self.links for f in ln.srcs}
        out: dict[str, dict[str, Port]] = {}
        for c in self.cores:
            ports = {f: p for f, (p, _) in c.ports.items()}
            for f in c.fifos_used():
                if f in ports:
                    continue
                if f in hosts_in and f not in hosts_out:
                    ports[f] = Port.CONSUME
                elif f in hosts_out and f not in hosts_in:
                    ports[f] = Port.PRODUCE
                else:
                    raise DesignError(
                        located(
                            f"core {c.name!r}: cannot tell whether it produces or consumes fifo {f!r} (no kernel call "
                            f"uses its elements); pass port='produce' or port='consume' to acquire",
                            c.loc,
                        )
                    )
            out[c.name] = ports
        return out


# -- user-facing functions ----------------------------------------------------------------


