"""Renaming and moving whole designs and plans: the IR side of fusion and co-location.

:func:`prefix_design` gives every tensor, fifo, core, link, move and traced
kernel of a design a prefix (``A`` -> ``d0_A``), rewriting every reference to
them; extern kernels keep their names, which are the symbols their object
files define. :func:`shift_plan` renames a plan the same way and moves every
coordinate it holds (placement, link tiles, fifo ends, buffers, routes) east
by a number of columns onto a wider device. Both build new nodes; nothing is
changed in place.
"""

from __future__ import annotations

import dataclasses

from tilelang.devices import Device
from tilelang.ir.design import (
    Acquire,
    BufArg,
    Call,
    CascadeArg,
    Design,
    Dma,
    ElemArg,
    Endpoint,
    EndpointKind,
    Loop,
    Release,
    Stmt,
    TensorDecl,
)
from tilelang.ir.kernel import ExternKernel
from tilelang.ir.plan import BufferPlacement, FifoEnd, FifoPlan, Plan, Route

Coord = tuple[int, int]


def _stmt(s: Stmt, p: str, kernels: dict[str, str]) -> Stmt:
    if isinstance(s, Acquire | Release):
        return dataclasses.replace(s, fifo=p + s.fifo)
    if isinstance(s, Call):
        args = tuple(dataclasses.replace(a, fifo=p + a.fifo) if isinstance(a, ElemArg)
                     else BufArg(p + a.buffer) if isinstance(a, BufArg)
                     else CascadeArg(p + a.cascade) if isinstance(a, CascadeArg) else a for a in s.args)
        return dataclasses.replace(s, kernel=kernels.get(s.kernel, s.kernel), args=args)
    if isinstance(s, Loop):
        return dataclasses.replace(s, body=tuple(_stmt(b, p, kernels) for b in s.body))
    raise TypeError(f"unknown statement {s!r}")


def _end(e: Endpoint, p: str) -> Endpoint:
    return Endpoint(e.kind, p + e.name)


def kernel_names(design: Design, prefix: str) -> dict[str, str]:
    """Old -> new name of every kernel :func:`prefix_design` renames (traced kernels; externs keep theirs)."""
    return {k.name: prefix + k.name for k in design.kernels if not isinstance(k, ExternKernel)}


def prefix_design(design: Design, prefix: str, name: str | None = None, device: Device | None = None,
                  columns: int = 0) -> Design:
    """``design`` with ``prefix`` before every name it declares, and every reference rewritten.

    Args:
        design: the design.
        prefix: the prefix, such as ``"d0_"``.
        name: the new design's name (default: the old one).
        device: the new design's device (default: the old one).
        columns: how far east pinned cores move (with :func:`shift_plan`'s move of the plan).

    Returns:
        A new Design; the old one is unchanged.
    """
    p = prefix
    kn = kernel_names(design, p)
    kernels = tuple(k if isinstance(k, ExternKernel) else dataclasses.replace(k, name=kn[k.name]) for k in design.kernels)
    return Design(
        name=name or design.name,
        device=device or design.device,
        params=tuple(TensorDecl(p + t.name, t.type) for t in design.params),
        kernels=kernels,
        fifos=tuple(dataclasses.replace(f, name=p + f.name) for f in design.fifos),
        cores=tuple(dataclasses.replace(c, name=p + c.name, body=tuple(_stmt(s, p, kn) for s in c.body),
                                        buffers=tuple(dataclasses.replace(b, name=p + b.name) for b in c.buffers),
                                        tile=(c.tile[0] + columns, c.tile[1]) if c.tile else None)
                    for c in design.cores),
        links=tuple(dataclasses.replace(lk, name=p + lk.name, srcs=tuple(p + s for s in lk.srcs),
                                        dsts=tuple(p + d for d in lk.dsts)) for lk in design.links),
        dmas=tuple(dataclasses.replace(m, name=p + m.name, src=_end(m.src, p), dsts=tuple(_end(d, p) for d in m.dsts))
                   for m in design.dmas),
        loc=design.loc,
        cascades=tuple(dataclasses.replace(x, name=p + x.name) for x in design.cascades),
    )


def _agent(agent: str, p: str) -> str:
    kind, sep, name = agent.partition(":")
    return f"{kind}:{p}{name}" if sep else agent


def _tile(t: Coord, dc: int) -> Coord:
    return (t[0] + dc, t[1])


def _fifo_end(e: FifoEnd, p: str, dc: int) -> FifoEnd:
    return FifoEnd(_agent(e.agent, p), _tile(e.tile, dc), e.channel)


def _buffer_name(name: str, b: BufferPlacement, p: str) -> str:
    # <fifo>_<i> or <fifo>_<agent>_<i> (plan.py): both the fifo and the agent carry the prefix;
    # a core's local buffer (no fifo) is named as the design names it.
    if not b.fifo:
        return p + name
    rest = name[len(b.fifo) + 1 :]
    agent, sep, idx = rest.rpartition("_")
    return f"{p}{b.fifo}_{p}{agent}_{idx}" if sep else f"{p}{b.fifo}_{rest}"


def shift_plan(plan: Plan, prefix: str, columns: int, design: Design) -> Plan:
    """``plan`` renamed with ``prefix`` and moved ``columns`` columns east, as a plan of ``design``.

    Args:
        plan: a plan of some design D.
        prefix: the prefix :func:`prefix_design` gave D's names ("" keeps them).
        columns: how far east every tile moves.
        design: D renamed with ``prefix`` (on the device the moved plan is for).

    Returns:
        A new Plan; placement, link tiles, fifo ends, buffers and routes all moved.
    """
    p, dc = prefix, columns
    fifos = {
        p + k: FifoPlan(p + f.name, _fifo_end(f.producer, p, dc), tuple(_fifo_end(c, p, dc) for c in f.consumers),
                        _tile(f.shared_tile, dc) if f.shared_tile else None)
        for k, f in plan.fifos.items()
    }
    buffers = {
        _buffer_name(k, b, p): dataclasses.replace(b, tile=_tile(b.tile, dc), fifo=p + b.fifo if b.fifo else "")
        for k, b in plan.buffers.items()
    }
    routes = {
        p + k: Route(_tile(r.source, dc), tuple(_tile(d, dc) for d in r.dests),
                     tuple((_tile(a, dc), _tile(b, dc)) for a, b in r.links))
        for k, r in plan.routes.items()
    }
    return Plan(
        design=design,
        placement={p + k: _tile(t, dc) for k, t in plan.placement.items()},
        link_tiles={p + k: _tile(t, dc) for k, t in plan.link_tiles.items()},
        fifos=fifos,
        buffers=buffers,
        routes=routes,
        solves={p + k: s for k, s in plan.solves.items()},
        timings=dict(plan.timings),
    )


def merge_designs(name: str, device: Device, designs: list[Design]) -> Design:
    """One design holding every entity of ``designs`` (already renamed apart), moves interleaved.

    The runtime sequence takes the designs' moves round robin (the first move of
    each design in turn, then the second, ...). Each design's own moves keep
    their order, and no move of one design shares a fifo with another's, so every
    move waits on exactly the moves it waited on alone (moves wait only on
    earlier moves sharing a fifo, docs/simulator.md): nothing new can block.

    Raises:
        DesignError: two designs declare the same name (an extern kernel used by
            several designs may appear in each, as one object or identical text).
    """
    from tilelang.errors import DesignError
    from tilelang.ir.printer import print_ir

    kernels: dict[str, object] = {}
    for d in designs:
        for k in d.kernels:
            old = kernels.get(k.name)
            if old is None:
                kernels[k.name] = k
            elif old is not k and not (isinstance(k, ExternKernel) and print_ir(old) == print_ir(k)):
                raise DesignError(f"design {d.name!r}: kernel {k.name!r} differs from another design's kernel of that "
                                  f"name (extern kernels are linked by name, so two different ones cannot share it)")
    dmas: list[Dma] = []
    for i in range(max((len(d.dmas) for d in designs), default=0)):
        dmas += [d.dmas[i] for d in designs if i < len(d.dmas)]
    return Design(
        name=name,
        device=device,
        params=tuple(t for d in designs for t in d.params),
        kernels=tuple(kernels.values()),  # type: ignore[arg-type]
        fifos=tuple(f for d in designs for f in d.fifos),
        cores=tuple(c for d in designs for c in d.cores),
        links=tuple(lk for d in designs for lk in d.links),
        dmas=tuple(dmas),
        cascades=tuple(x for d in designs for x in d.cascades),
    )



def _fifo_stmt(s: Stmt, old: str, new: str) -> Stmt:
    if isinstance(s, Acquire | Release):
        return dataclasses.replace(s, fifo=new) if s.fifo == old else s
    if isinstance(s, Call):
        args = tuple(dataclasses.replace(a, fifo=new) if isinstance(a, ElemArg) and a.fifo == old else a
                     for a in s.args)
        return dataclasses.replace(s, args=args)
    if isinstance(s, Loop):
        return dataclasses.replace(s, body=tuple(_fifo_stmt(b, old, new) for b in s.body))
    raise TypeError(f"unknown statement {s!r}")


def replace_fifo(design: Design, old: str, new: str) -> Design:
    """``design`` with every use of fifo ``old`` (cores, links, moves) made a use of ``new``, ``old``'s declaration dropped.

    ``new`` need not be declared in ``design`` (it may live in a design this one is merged with).
    """

    def ends(e: Endpoint) -> Endpoint:
        return Endpoint(e.kind, new) if e.kind is not EndpointKind.TENSOR and e.name == old else e

    return dataclasses.replace(
        design,
        fifos=tuple(f for f in design.fifos if f.name != old),
        cores=tuple(dataclasses.replace(c, body=tuple(_fifo_stmt(s, old, new) for s in c.body)) for c in design.cores),
        links=tuple(dataclasses.replace(lk, srcs=tuple(new if s == old else s for s in lk.srcs),
                                        dsts=tuple(new if d == old else d for d in lk.dsts)) for lk in design.links),
        dmas=tuple(dataclasses.replace(m, src=ends(m.src), dsts=tuple(ends(d) for d in m.dsts)) for m in design.dmas),
    )
