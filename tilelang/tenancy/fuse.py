"""``tl.fuse``: horizontal fusion of independent designs into one design for one device.

The i-th design's tensors, fifos, cores, links, moves and traced kernels are
renamed ``d{i}_<name>`` and placed side by side in one Design; its runtime
sequence interleaves the designs' moves round robin (tilelang/ir/rename.py,
``merge_designs``). A move waits only on earlier moves sharing a fifo with it
(docs/simulator.md, "host"), and the renamed designs share no fifo, so every
move of the fused design waits on exactly what it waited on alone: the fusion
adds no dependency and cannot deadlock where the designs did not.

``connect=[(i, "C", j, "A")]`` turns design i's output C into design j's input A
through an on-chip fifo (Rammer's inter-operator scheduling, in space): i's
fifo that drained C feeds j's consumers of the fifo that was filled from A, and
both moves and both tensors go. It is allowed only when the producer writes the
tensor in exactly the order the consumer reads it (one move each, the same
access pattern, equal fifo elements); otherwise tl.fuse says why and refuses,
since within one runtime sequence a read of DDR cannot wait for another
design's write (moves wait only on moves sharing a fifo): such designs keep the
DDR round trip by running one after another.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import DesignError
from tilelang.ir.design import Design, Dma
from tilelang.ir.rename import merge_designs, prefix_design, replace_fifo

#: A connection: (producer design index, tensor it writes, consumer design index, tensor it reads).
Connection = tuple[int, str, int, str]


def _check(designs: Sequence[Design], dev: Device) -> None:
    if not designs:
        raise DesignError("tl.fuse needs at least one design")
    for i, d in enumerate(designs):
        if not isinstance(d, Design):
            raise DesignError(f"tl.fuse: item {i} is a {type(d).__name__}, not a Design")
        if d.device.name != dev.name:
            raise DesignError(f"tl.fuse: design {i} ({d.name!r}) targets {d.device.name}, not {dev.name}; "
                              f"build it for {dev.name} (library designs take device=...)")
    cores = 0
    for i, d in enumerate(designs):
        cores += len(d.cores)
        if cores > len(dev.tiles("compute")):
            raise DesignError(f"tl.fuse: design {i} ({d.name!r}) brings the fused design to {cores} cores; "
                              f"{dev.name} has {len(dev.tiles('compute'))} compute tiles")
    pins: dict[tuple[int, int], str] = {}
    for i, d in enumerate(designs):
        for c in d.cores:
            if c.tile is not None:
                if c.tile in pins:
                    raise DesignError(f"tl.fuse: design {i} ({d.name!r}) pins core {c.name!r} to {c.tile}, which "
                                      f"{pins[c.tile]} also pins; leave one unpinned")
                pins[c.tile] = f"core {c.name!r} of an earlier design"


def _only_move(d: Design, tensor: str, to_device: bool, who: str) -> Dma:
    moves = [m for m in d.dmas if m.tensor == tensor and m.to_device == to_device]
    if tensor not in d.tensors:
        raise DesignError(f"tl.fuse: {who} has no tensor {tensor!r}; its tensors are {list(d.tensors)}")
    if len(moves) != 1:
        verb = "reads" if to_device else "writes"
        raise DesignError(f"tl.fuse: {who} {verb} {tensor!r} in {len(moves)} moves; an on-chip connection needs "
                          f"exactly one (the tensor keeps its DDR round trip: run the designs one after another)")
    return moves[0]


def _connect(designs: list[Design], c: Connection) -> tuple[str, str, str, str]:
    """Check one connection; return (producer fifo, consumer fifo, producer move, consumer move), prefixed.

    Raises:
        DesignError: the connection cannot be an on-chip fifo (the message says why; the designs must then
            run one after another, through DDR).
    """
    i, t, j, u = c
    if not (_index(i) and _index(j) and 0 <= i < j < len(designs)):
        raise DesignError(f"tl.fuse: connection {c!r}: the producer must be an earlier design than the consumer "
                          f"(indexes into the {len(designs)} designs)")
    pd, cd = designs[i], designs[j]
    out = _only_move(pd, t, False, f"design {i} ({pd.name!r})")
    inp = _only_move(cd, u, True, f"design {j} ({cd.name!r})")
    pf, cf = out.src.name, inp.dsts[0].name
    why = []
    if len(inp.dsts) != 1:
        why.append(f"its read of {u!r} feeds {len(inp.dsts)} fifos")
    if pd.tensors[t].type != cd.tensors[u].type:
        why.append(f"{t!r} is {pd.tensors[t].type} but {u!r} is {cd.tensors[u].type}")
    if pd.fifo(pf).elem != cd.fifo(cf).elem:
        why.append(f"the fifos' elements differ ({pd.fifo(pf).elem} written, {cd.fifo(cf).elem} read)")
    if out.pattern != inp.pattern:
        why.append(f"the producer writes {t!r} in another order than the consumer reads {u!r} "
                   f"({out.pattern} vs {inp.pattern})")
    if any(m is not out and pf in m.fifos for m in pd.dmas) or any(m is not inp and cf in m.fifos for m in cd.dmas):
        why.append("another host move uses one of the two fifos")
    if why:
        raise DesignError(f"tl.fuse: design {i}'s {t!r} cannot feed design {j}'s {u!r} on chip: " + "; ".join(why)
                          + ". Through DDR the consumer must start after the producer ends: run them one after another")
    return f"d{i}_{pf}", f"d{j}_{cf}", f"d{i}_{out.name}", f"d{j}_{inp.name}"


def _index(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_connect(connect: object) -> list[Connection]:
    """``connect`` as a list of ``(i, "C", j, "A")`` connections, each consumer input fed once.

    Raises:
        DesignError: not a list of such 4-tuples, an input connected twice, or one output feeding two inputs
            of one design (one fifo cannot be two of a core's inputs).
    """
    if isinstance(connect, str | bytes) or not isinstance(connect, Sequence) or (
            len(connect) == 4 and _index(connect[0])):
        raise DesignError(f"tl.fuse: connect takes a list of (i, 'C', j, 'A') connections, got {connect!r}")
    inputs: dict[tuple[int, str], Connection] = {}
    feeds: dict[tuple[int, str, int], Connection] = {}
    for c in connect:
        if not (isinstance(c, tuple | list) and len(c) == 4 and _index(c[0]) and _index(c[2])
                and isinstance(c[1], str) and isinstance(c[3], str)):
            raise DesignError(f"tl.fuse: connection {c!r} is not (i, 'C', j, 'A'): design i's output tensor C "
                              f"feeds design j's input tensor A (i, j indexes into the designs)")
        i, t, j, u = c
        if (j, u) in inputs:
            raise DesignError(f"tl.fuse: connections {inputs[(j, u)]!r} and {c!r} both feed design {j}'s {u!r}; "
                              f"an input takes one producer")
        if (i, t, j) in feeds:
            raise DesignError(f"tl.fuse: connections {feeds[(i, t, j)]!r} and {c!r} both feed design {i}'s {t!r} "
                              f"into design {j}: one on-chip fifo cannot be two of its inputs (read it once there)")
        inputs[(j, u)] = feeds[(i, t, j)] = tuple(c)  # type: ignore[assignment]
    return [tuple(c) for c in connect]  # type: ignore[misc]


def _wire(renamed: list[Design], designs: list[Design], connect: Sequence[Connection]) -> list[Design]:
    """The renamed designs with each connection's two moves dropped and the consumer's fifo made the producer's."""
    for c in connect:
        pf, cf, out, inp = _connect(designs, c)
        i, t, j, u = c
        depth = max(renamed[i].fifo(pf).depth, renamed[j].fifo(cf).depth)
        p = renamed[i]
        renamed[i] = dataclasses.replace(
            p, fifos=tuple(dataclasses.replace(f, depth=depth) if f.name == pf else f for f in p.fifos),
            dmas=tuple(m for m in p.dmas if m.name != out))
        q = replace_fifo(renamed[j], cf, pf)
        renamed[j] = dataclasses.replace(q, dmas=tuple(m for m in q.dmas if m.name != inp))
    for k, d in enumerate(renamed):  # tensors no move touches any more are on chip now
        used = {m.tensor for m in d.dmas}
        renamed[k] = dataclasses.replace(d, params=tuple(t for t in d.params if t.name in used))
    return renamed


def fuse(designs: Sequence[Design], device: str | Device = "npu1", name: str = "fused",
         connect: Sequence[Connection] = ()) -> Design:
    """One design computing every design of ``designs`` side by side (API.md "Tenancy and fusion").

    Args:
        designs: designs, each built for ``device``.
        device: the device they share.
        name: the fused design's name.
        connect: ``(i, "C", j, "A")`` makes design i's output C design j's input A through an on-chip
            fifo instead of DDR (i before j). Allowed when i writes C in one move and j reads A in one
            move, with equal tensor types, equal fifo elements and the same access pattern (the
            producer writes in the order the consumer reads); the two moves and both tensors go,
            and i's fifo feeds j's consumers directly.

    Returns:
        A Design whose i-th design's tensor ``A`` is ``d{i}_A`` (likewise fifos,
        cores, links, moves and traced kernels; extern kernels keep their symbol).

    Raises:
        DesignError: a design targets another device, the designs together need
            more cores than the device has or pin one tile twice (naming the design),
            or two different extern kernels share a name; a connection that cannot be an on-chip
            fifo (the message says why: such designs must run one after another). A fused design that cannot
            be planned raises the planner's PlanError when planned.
    """
    dev = lookup_device(device)
    if isinstance(designs, Design) or isinstance(designs, str | bytes) or not isinstance(designs, Sequence):
        raise DesignError(f"tl.fuse takes a list of Designs, got {type(designs).__name__}")
    designs = list(designs)
    _check(designs, dev)
    connect = _check_connect(connect)
    renamed = [prefix_design(d, f"d{i}_") for i, d in enumerate(designs)]
    if connect:
        renamed = _wire(renamed, designs, connect)
    fused = merge_designs(name, dev, renamed)
    from tilelang.ir.verify import verify_design

    verify_design(fused)
    return fused
