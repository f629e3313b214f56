"""``tilelang simulate --check``: the design's outputs by a reference path, beside the simulator's.

The reference evaluates the design as a network of sequential processes in the IR's own numpy
semantics (``tilelang.ir.semantics``, what ``kernel(*arrays)`` runs), with no plan, no timing and
unbounded fifos: the host moves gather their elements along their access patterns, every core runs
its program (loops, acquires, releases, kernel calls), every memtile link forwards, splits or joins
whole elements, and the moves into tensors scatter what arrives. A Kahn network's outputs do not
depend on timing or buffer capacity, so a correct simulation of a design that does not deadlock gives
the same arrays. It shares with the simulator only the IR and the kernels' numpy semantics, not the
plan, the rings, the DMA model or the compiled kernels.

Host moves read the input arrays as given (a move that reads a tensor an earlier move wrote is not
modelled).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from dataclasses import dataclass, field

import numpy as np

from tilelang.errors import SimulationError
from tilelang.ir.calls import host_value, run_extern
from tilelang.ir.design import (
    Acquire,
    AffineArg,
    BufArg,
    Call,
    CascadeArg,
    ConstArg,
    Design,
    ElemArg,
    EndpointKind,
    LinkKind,
    Loop,
    LoopVarArg,
    Port,
    Release,
    staging_name,
)
from tilelang.ir.kernel import Kernel
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.semantics import run as run_kernel

Process = Generator[None, None, None]


@dataclass
class _Reader:
    """One consumer's side of a fifo: elements delivered and not yet acquired, and those it holds."""

    queue: deque = field(default_factory=deque)
    held: list = field(default_factory=list)


@dataclass
class _Fifo:
    """A fifo's producer ring (its buffers keep their contents, as the hardware's do) and its readers."""

    slots: list[np.ndarray]
    readers: dict[str, _Reader]
    next_slot: int = 0
    held: list = field(default_factory=list)

    def acquire_produce(self, n: int) -> None:
        for _ in range(n):
            self.held.append(self.slots[self.next_slot % len(self.slots)])
            self.next_slot += 1

    def release_produce(self, n: int) -> None:
        for elem in self.held[:n]:
            self.publish(elem)
        del self.held[:n]

    def publish(self, elem: np.ndarray) -> None:
        for r in self.readers.values():
            r.queue.append(elem.copy())


class _Network:
    def __init__(self, design: Design, arrays: dict[str, np.ndarray]) -> None:
        self.design = design
        self.kernels = {k.name: k for k in design.kernels}
        self.elem = {f.name: f.elem for f in design.fifos}
        readers: dict[str, list[str]] = {f.name: [] for f in design.fifos}
        for c in design.cores:
            for fifo, port in _acquires(c.body):
                if port is Port.CONSUME and c.name not in readers[fifo]:
                    readers[fifo].append(c.name)
        for ln in design.links:
            for s in ln.srcs:
                readers[s].append(f"link:{ln.name}")
        for d in design.dmas:
            if not d.to_device and "host" not in readers[d.src.name]:
                readers[d.src.name].append("host")
        self.fifos = {
            f.name: _Fifo([np.zeros(f.elem.shape, f.elem.dtype.numpy) for _ in range(f.depth)],
                          {r: _Reader() for r in readers[f.name]})
            for f in design.fifos
        }
        self.outputs = {t.name: np.zeros(t.type.shape, t.type.dtype.numpy) for t in design.params
                        if t.name in design.outputs}
        self.inputs = arrays
        self.steps = 0
        self.cascades: dict[str, deque] = {c.name: deque() for c in design.cascades}  # tiles sent, not yet taken

    # -- host moves ------------------------------------------------------------------------

    def host_in(self) -> None:
        """Every move into the device, in program order: its elements published on each of its fifos."""
        for d in self.design.dmas:
            if not d.to_device:
                continue
            flat = np.ascontiguousarray(self.inputs[d.tensor]).reshape(-1)
            for dst in d.dsts:
                elem = self.elem[dst.name]
                walked = flat[_walk(d.pattern)].astype(elem.dtype.numpy)
                for part in walked.reshape(-1, *elem.shape) if elem.shape else walked.reshape(-1):
                    self.fifos[dst.name].publish(np.array(part).reshape(elem.shape))

    def host_out(self, fifo: str) -> Process:
        """The moves out of ``fifo``, in program order: each scatters its elements along its pattern."""
        reader = self.fifos[fifo].readers["host"]
        for d in self.design.dmas:
            if d.to_device or d.src.name != fifo:
                continue
            out = self.outputs[d.tensor].reshape(-1)
            idx = _walk(d.pattern)
            numel = max(1, int(np.prod(self.elem[fifo].shape)))
            for k in range(len(idx) // numel):
                while not reader.queue:
                    yield
                out[idx[k * numel : (k + 1) * numel]] = reader.queue.popleft().reshape(-1)
                self.steps += 1

    # -- links -----------------------------------------------------------------------------

    def link(self, ln) -> Process:  # noqa: ANN001 - tilelang.ir.design.Link
        me = f"link:{ln.name}"
        srcs = [self.fifos[s].readers[me] for s in ln.srcs]
        while True:
            while not all(r.queue for r in srcs):
                if self._sources_done(ln.srcs):
                    return
                yield
            parts = [r.queue.popleft().reshape(-1) for r in srcs]
            self.steps += 1
            if ln.kind is LinkKind.JOIN:
                dst = self.elem[ln.dsts[0]]
                whole = np.zeros(max(1, int(np.prod(dst.shape))), dst.dtype.numpy)
                for part, off in zip(parts, ln.offsets, strict=True):
                    whole[off : off + part.size] = part
                if ln.pattern is not None:  # the memtile sends each part re-laid out, by offset
                    whole = whole[ln.join_indices()]
                self.fifos[ln.dsts[0]].publish(whole.reshape(dst.shape))
                continue
            offsets = ln.offsets if ln.kind is LinkKind.SPLIT else (0,) * len(ln.dsts)
            for dst, off in zip(ln.dsts, offsets, strict=True):
                t = self.elem[dst]
                n = max(1, int(np.prod(t.shape)))
                row = parts[0]
                got = row[ln.pattern.indices()] if ln.pattern is not None else row[off : off + n]
                self.fifos[dst].publish(got.reshape(t.shape))

    def _sources_done(self, srcs: tuple[str, ...]) -> bool:
        return all(name in self.finished_producers for name in srcs)

    # -- cores -----------------------------------------------------------------------------

    def core(self, core) -> Process:  # noqa: ANN001 - tilelang.ir.design.Core
        bufs = {b.name: np.zeros(b.elem.shape, b.elem.dtype.numpy) for b in core.buffers}
        yield from self._stmts(core.name, core.body, [], bufs)

    def _stmts(self, me: str, stmts: tuple, loopvars: list[int], bufs: dict[str, np.ndarray]) -> Process:
        for s in stmts:
            if isinstance(s, Loop):
                for i in range(s.start, s.stop, s.step):
                    yield from self._stmts(me, s.body, [*loopvars, i], bufs)
            elif isinstance(s, Acquire):
                f = self.fifos[s.fifo]
                if s.port is Port.PRODUCE:
                    f.acquire_produce(s.n)
                else:
                    r = f.readers[me]  # acquire(n): hold n elements (a sliding window keeps what it did not release)
                    while len(r.held) < s.n:
                        if not r.queue:
                            yield
                            continue
                        r.held.append(r.queue.popleft())
                self.steps += 1
            elif isinstance(s, Release):
                f = self.fifos[s.fifo]
                if s.port is Port.PRODUCE:
                    f.release_produce(s.n)
                else:
                    del f.readers[me].held[: s.n]
                self.steps += 1
            elif isinstance(s, Call):
                k = self.kernels[s.kernel]
                takes = [a.cascade for p, a in zip(k.params, s.args, strict=True)
                         if isinstance(a, CascadeArg) and p.name not in k.written]
                while any(not self.cascades[c] for c in takes):  # a cascade tile is taken before the call
                    yield
                self._call(me, s, loopvars, bufs)

    def _call(self, me: str, call: Call, loopvars: list[int], bufs: dict[str, np.ndarray]) -> None:
        kernel = self.kernels[call.kernel]
        values = []
        sent: list[tuple[str, np.ndarray]] = []
        for p, a in zip(kernel.params, call.args, strict=True):
            if isinstance(a, ElemArg):
                f = self.fifos[a.fifo]
                held = f.readers[me].held if me in f.readers else f.held
                v: object = held[a.index]
            elif isinstance(a, BufArg):
                v = bufs[a.buffer]
            elif isinstance(a, CascadeArg):  # taken: the next tile sent; sent: a fresh tile, queued after the call
                # a sending call writes the core's staging buffer (bytes it leaves keep their old value)
                v = self.cascades[a.cascade].popleft() if p.name not in kernel.written else \
                    bufs[staging_name(a.cascade, Port.PRODUCE)]
                if p.name in kernel.written:
                    sent.append((a.cascade, v))
            elif isinstance(a, ConstArg):
                v = a.value
            elif isinstance(a, LoopVarArg):
                v = a.dtype.wrap(loopvars[a.depth])
            elif isinstance(a, AffineArg):
                v = a.wrapped(loopvars)
            else:  # pragma: no cover - the IR has no other argument kinds
                raise SimulationError(f"reference: unknown argument {a!r} of {call.kernel}")
            values.append(host_value(kernel, p, v))
        if isinstance(kernel, Kernel):
            run_kernel(kernel, {p.name: v for p, v in zip(kernel.params, values, strict=True)})
        else:
            run_extern(kernel, values)
        for name, tile in sent:
            self.cascades[name].append(tile.copy())
        self.steps += 1

    # -- the scheduler -----------------------------------------------------------------------

    def run(self) -> dict[str, np.ndarray]:
        self.finished_producers: set[str] = set()
        producers = _producers(self.design)
        self.host_in()
        for f, who in producers.items():
            if who == "host":
                self.finished_producers.add(f)
        procs: dict[str, Process] = {f"core:{c.name}": self.core(c) for c in self.design.cores}
        procs.update({f"link:{ln.name}": self.link(ln) for ln in self.design.links})
        procs.update({f"host:{f}": self.host_out(f) for f in sorted({d.src.name for d in self.design.dmas
                                                                     if not d.to_device})})
        while procs:
            before, ended = self.steps, False
            for name in list(procs):
                try:
                    next(procs[name])
                except StopIteration:
                    del procs[name]
                    ended = True
                    self.finished_producers.update(f for f, who in producers.items() if who == name)
            if procs and self.steps == before and not ended:
                raise SimulationError(f"reference evaluation of {self.design.name} cannot progress: "
                                      f"{', '.join(sorted(procs))} wait for data that never comes")
        return self.outputs


def _acquires(stmts: tuple) -> list[tuple[str, Port]]:
    out = []
    for s in stmts:
        if isinstance(s, Loop):
            out += _acquires(s.body)
        elif isinstance(s, Acquire):
            out.append((s.fifo, s.port))
    return out


def _producers(design: Design) -> dict[str, str]:
    """fifo -> its producing agent: "host", a link "link:<name>" or a core's name."""
    who: dict[str, str] = {}
    for d in design.dmas:
        if d.to_device:
            for e in d.dsts:
                if e.kind is EndpointKind.FIFO:
                    who[e.name] = "host"
    for ln in design.links:
        for f in ln.dsts:
            who[f] = f"link:{ln.name}"
    for c in design.cores:
        for fifo, port in _acquires(c.body):
            if port is Port.PRODUCE:
                who[fifo] = f"core:{c.name}"
    return who


def _walk(pattern: AccessPattern) -> np.ndarray:
    """The flat tensor offsets a move visits, repeats included."""
    return np.tile(pattern.indices(), pattern.repeat_count)


def reference_outputs(design: Design, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor the design writes, by the reference path (see the module docstring).

    Args:
        design: a verified design.
        arrays: an array for every tensor the design reads.

    Returns:
        tensor name -> array, for every tensor some move writes.

    Raises:
        SimulationError: the network cannot progress (a deadlock even with unbounded fifos).
        KernelError: a kernel call's arguments do not fit its parameters.
    """
    return _Network(design, arrays).run()


@dataclass(frozen=True)
class Comparison:
    """One output tensor, simulated beside the reference."""

    tensor: str
    match: bool
    max_abs_error: float
    elements: int
    differing: int


def compare(simulated: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> list[Comparison]:
    """Each output bit for bit (NaNs equal where both have them), with the largest absolute difference."""
    rows = []
    for name in sorted(reference):
        got, want = simulated[name], reference[name]
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        diff = np.abs(g - w)
        err = float(np.nanmax(np.where(same, 0.0, diff))) if diff.size else 0.0
        rows.append(Comparison(name, bool(same.all()), err if np.isfinite(err) else float("inf"),
                               int(same.size), int(same.size - np.count_nonzero(same))))
    return rows
