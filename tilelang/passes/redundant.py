"""``tl.passes.eliminate_redundant_transfers``: host moves that carry data already on chip, made resident.

A host fifo's element stream is the concatenation of what its moves read, in
order. When that stream is ``U_0^R U_1^R ... U_{G-1}^R`` (each block of ``c * e``
elements read ``R`` times in a row: the vector B of matvec once per row block,
an A row block of GEMM once per block column, the B column strips once per
block row) and every core consuming it takes ``e`` elements per iteration of
one loop of ``G * R * c`` iterations, the block can stay in the cores'
memory instead: each core acquires the block's ``c * e`` elements as its
first pass over them needs them, keeps them over ``R`` iterations and
releases them after (``tilelang/passes/loops.py``), and the host reads each
block once (stride-0 dimensions and whole-walk repeats dropped from the
moves, or repeated identical moves dropped). The fifo gets ``c * e`` buffers
plus the written depth minus one (what the producer could fill ahead), or
exactly ``c * e`` when that does not plan.

Every rewrite is checked, not assumed: the new moves' element stream must
equal the old one with the repeats taken out (compared address by address),
the design must pass the verifier and plan. A candidate that fails any check
is left as written and :func:`find_redundant` says why.

DDR bytes re-read that no rewrite here removes (e.g. conv2d's overlapping
row bands, which go to different core columns in different orders) are
counted by :func:`redundant_bytes` and reported with the reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tilelang.errors import DesignError
from tilelang.ir.design import Core, Design, Dma, LinkKind, Loop, Port, released, walk
from tilelang.ir.pattern import AccessPattern
from tilelang.passes.loops import CannotHoist, hoist, touches
from tilelang.passes.trial import why_not

#: Inner loops (and copies of the hoisted loop) unrolled at most this many times: the core's program grows with them.
UNROLL = 16
#: Streams longer than this many addresses are not compared (the check enumerates every address).
MAX_ADDRESSES = 1 << 24


@dataclass(frozen=True)
class Finding:
    """A host fifo whose stream re-reads DDR, and what the pass did about it.

    Attributes:
        fifo: the host fifo.
        tensor: the tensor its moves read.
        bytes: DDR bytes the repeats re-read.
        rewritten: whether the pass removed them.
        reason: what was done, or why not.
    """

    fifo: str
    tensor: str
    bytes: int
    rewritten: bool
    reason: str


# -- streams ------------------------------------------------------------------------------------------


def _walk(p: AccessPattern) -> np.ndarray:
    return np.tile(p.indices(), p.repeat_count)


def _moves_into(design: Design, fifo: str) -> list[Dma]:
    return [m for m in design.dmas if m.to_device and fifo in m.fifos]


def _stream(moves: list[Dma], numel: int) -> np.ndarray | None:
    """(elements, numel) addresses, or None when too long or not whole elements."""
    if sum(m.pattern.numel for m in moves) > MAX_ADDRESSES:
        return None
    flat = np.concatenate([_walk(m.pattern) for m in moves]) if moves else np.zeros(0, np.int64)
    if flat.size % numel:
        return None
    return flat.reshape(-1, numel)


def ddr_bytes(design: Design) -> int:
    """Bytes every host move reads from or writes to DDR."""
    return sum(m.pattern.numel * design.tensors[m.tensor].dtype.bytes for m in design.dmas)


def _tensor_redundant(design: Design, name: str) -> int:
    moves = [m for m in design.dmas if m.to_device and m.tensor == name]
    reads = sum(m.pattern.numel for m in moves)
    if reads > MAX_ADDRESSES or not moves:
        return 0
    distinct = np.unique(np.concatenate([_walk(m.pattern) for m in moves])).size
    return (reads - distinct) * design.tensors[name].dtype.bytes


def redundant_bytes(design: Design) -> int:
    """Bytes of input tensors read from DDR more than once (reads beyond the first of each element)."""
    return sum(_tensor_redundant(design, name) for name in design.inputs)


# -- matching a fifo's consumers -----------------------------------------------------------------


@dataclass(frozen=True)
class _Site:
    """The loop of one core through which the core takes the fifo: its position and trip count."""

    core: str
    index: int  # position of the loop in the core's top-level body
    loop: Loop
    per: int  # elements of the fifo per iteration


def _site(core: Core, fifo: str) -> _Site | str:
    """The top-level loop holding every use of ``fifo`` in ``core`` (or why there is none)."""
    at = [i for i, s in enumerate(core.body) if touches((s,), fifo)]
    if len(at) != 1 or not isinstance(core.body[at[0]], Loop):
        return f"core {core.name!r} does not take {fifo!r} inside one top-level loop"
    loop = core.body[at[0]]
    per = released(loop.body, fifo) if isinstance(loop, Loop) else 0
    if per == 0:
        return f"core {core.name!r} gives back no element of {fifo!r} per iteration"
    return _Site(core.name, at[0], loop, per)


def _core_fifo(design: Design, host: str) -> tuple[str, list[str]] | str:
    """The fifo the cores take ``host``'s elements from (``host`` itself or a forward link's destination),
    and those cores."""
    links = [lk for lk in design.links if host in lk.fifos]
    fifo = host
    if links:
        lk = links[0]
        if len(links) > 1 or lk.kind is not LinkKind.FORWARD or lk.srcs != (host,):
            return f"{host!r} feeds a {lk.kind.value} link; only forwards are followed"
        fifo = lk.dsts[0]
        if any(fifo in other.fifos for other in design.links if other is not lk):
            return f"{fifo!r} feeds a further link"
    if any(fifo in m.fifos for m in design.dmas if not m.to_device):
        return f"{fifo!r} is also drained to the host"
    users = []
    for c in design.cores:
        for s in walk(c.body):
            if getattr(s, "fifo", None) == fifo:
                if s.port is Port.PRODUCE:
                    return f"core {c.name!r} produces into {fifo!r}"
                users.append(c.name)
                break
    if not users:
        return f"no core takes {fifo!r}"
    return fifo, users


# -- choosing the repeats ---------------------------------------------------------------------------


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _periodic(stream: np.ndarray, groups: int, reps: int) -> bool:
    s = stream.reshape(groups, reps, -1)
    return bool(np.all(s == s[:, :1]))


def _choices(stream: np.ndarray, trips: int, per: int) -> list[tuple[int, int, int]]:
    """(G, R, c) with the stream ``U_g^R`` in blocks of ``c * per`` elements, best saving first."""
    out = []
    for c in _divisors(trips):
        if c > UNROLL:
            break
        for reps in _divisors(trips // c):
            groups = trips // (c * reps)
            if reps > 1 and _periodic(stream, groups, reps):
                out.append((groups, reps, c))
    return sorted(out, key=lambda x: (-x[1], x[2]))


# -- rewriting the host moves ----------------------------------------------------------------------


def _no_repeats(p: AccessPattern) -> AccessPattern:
    dims = [(n, s) for n, s in zip(p.sizes, p.strides, strict=True) if s != 0 or n == 1] or [(1, 1)]
    return AccessPattern(p.offset, tuple(n for n, _ in dims), tuple(s for _, s in dims))


def _drop_duplicates(moves: list[Dma]) -> list[Dma]:
    out: list[Dma] = []
    for m in moves:
        if not out or (m.tensor, m.pattern) != (out[-1].tensor, out[-1].pattern):
            out.append(m)
    return out


def _new_moves(moves: list[Dma], want: np.ndarray, numel: int) -> list[Dma] | None:
    """Moves reading exactly ``want`` (elements x numel addresses): repeats dropped, or duplicates, or both."""
    stripped = [dataclasses.replace(m, pattern=_no_repeats(m.pattern)) for m in moves]
    for cand in (stripped, _drop_duplicates(moves), _drop_duplicates(stripped)):
        got = _stream(cand, numel)
        if got is not None and got.shape == want.shape and np.array_equal(got, want):
            return cand
    return None


# -- one candidate -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rewrite:
    design: Design
    saved: int
    note: str


def _rewrite(design: Design, host: str) -> _Rewrite | str:
    """``design`` with ``host``'s repeats held on chip, or why not."""
    moves = _moves_into(design, host)
    if any(len(m.dsts) != 1 for m in moves):
        return f"a move into {host!r} also feeds other fifos"
    tensors = {m.tensor for m in moves}
    if len(tensors) != 1 or next(iter(tensors)) in design.outputs:
        return f"the moves into {host!r} read several tensors, or one the design also writes"
    found = _core_fifo(design, host)
    if isinstance(found, str):
        return found
    fifo, users = found
    sites = [_site(design.core(c), fifo) for c in users]
    bad = [s for s in sites if isinstance(s, str)]
    if bad:
        return bad[0]
    shapes = {(s.loop.trip_count, s.per) for s in sites if isinstance(s, _Site)}
    if len(shapes) != 1:
        return f"the cores taking {fifo!r} loop over it differently"
    trips, per = next(iter(shapes))
    numel = design.fifo(host).elem.numel
    stream = _stream(moves, numel)
    if stream is None or stream.shape[0] != trips * per:
        return f"{host!r} carries {0 if stream is None else stream.shape[0]} elements; the cores take {trips * per}"
    choices = _choices(stream, trips, per)
    if not choices:
        return f"{host!r}'s stream has no block read again in the consuming loop's iterations"
    why = ""
    for groups, reps, c in choices:
        out = _apply(design, host, fifo, moves, stream, [s for s in sites if isinstance(s, _Site)], groups, reps, c)
        if isinstance(out, _Rewrite):
            return out
        why = out
    return why


def _apply(design: Design, host: str, fifo: str, moves: list[Dma], stream: np.ndarray, sites: list[_Site],
           groups: int, reps: int, c: int) -> _Rewrite | str:
    numel = stream.shape[1]
    want = stream.reshape(groups, reps, c * sites[0].per, numel)[:, 0].reshape(-1, numel)
    new_moves = _new_moves(moves, want, numel)
    if new_moves is None:
        return f"no rewrite of the moves into {host!r} reads each block once"
    cores = {}
    for s in sites:
        core = design.core(s.core)
        try:
            # the loop is at the top level of its core (``_site``): nesting depth 0
            replaced = hoist(s.loop, 0, fifo, groups, reps, c, UNROLL)
        except CannotHoist as e:
            return f"core {s.core!r}: {e}"
        cores[s.core] = dataclasses.replace(core, body=core.body[: s.index] + tuple(replaced) + core.body[s.index + 1:])
    keep = {id(m) for m in moves}
    renamed = {m.name: m for m in new_moves}
    dmas: list[Dma] = []
    for m in design.dmas:
        if id(m) in keep:
            if m.name in renamed:
                dmas.append(renamed.pop(m.name))
        else:
            dmas.append(m)
    held = c * sites[0].per
    base = dataclasses.replace(design, cores=tuple(cores.get(x.name, x) for x in design.cores), dmas=tuple(dmas))
    saved = int((stream.shape[0] - want.shape[0]) * numel * design.tensors[moves[0].tensor].dtype.bytes)
    old = design.fifo(fifo).depth
    for depth in dict.fromkeys((held + max(0, old - 1), held)):
        out = dataclasses.replace(base, fifos=tuple(dataclasses.replace(f, depth=max(f.depth, depth))
                                                    if f.name == fifo else f for f in base.fifos))
        problem = why_not(out, "greedy")
        if problem is None:
            note = (f"{held} elements of {fifo!r} held over {reps} iterations" + (f" in {groups} groups" if groups > 1
                                                                                 else "") + f", depth {depth}")
            return _Rewrite(out, saved, note)
    return f"holding {held} elements of {fifo!r} does not plan: {problem}"


# -- the pass ------------------------------------------------------------------------------------------


def _host_fifos(design: Design) -> list[str]:
    seen: dict[str, None] = {}
    for m in design.dmas:
        if m.to_device:
            for f in m.fifos:
                seen.setdefault(f)
    return list(seen)


def _repeated_bytes(design: Design, host: str) -> tuple[str, int]:
    """The tensor a host fifo reads and the bytes its stream reads more than once (0 when it cannot tell)."""
    moves = _moves_into(design, host)
    stream = _stream(moves, design.fifo(host).elem.numel)
    if stream is None or not moves:
        return "", 0
    distinct = np.unique(stream, axis=0).shape[0]
    return moves[0].tensor, int((stream.shape[0] - distinct) * stream.shape[1] * design.tensors[moves[0].tensor].dtype.bytes)


def _across_fifos(design: Design, within: dict[str, int]) -> list[Finding]:
    """Re-reads of a tensor by different fifos (bytes beyond the fifos' own repeats): found, not rewritten."""
    out = []
    for name in design.inputs:
        fifos = [f for f in _host_fifos(design) if any(m.tensor == name for m in _moves_into(design, f))]
        extra = _tensor_redundant(design, name) - sum(within.get(f, 0) for f in fifos)
        if extra > 0 and len(fifos) > 1:
            out.append(Finding(", ".join(fifos), name, extra, False, _why_apart(design, fifos)))
    return out


def _why_apart(design: Design, fifos: list[str]) -> str:
    streams = [_stream(_moves_into(design, f), design.fifo(f).elem.numel) for f in fifos]
    for i, a in enumerate(streams):
        for j in range(i + 1, len(streams)):
            b = streams[j]
            if a is not None and b is not None and a.shape == b.shape and np.array_equal(a, b):
                return (f"{fifos[i]!r} and {fifos[j]!r} read the same elements in the same order; merging them "
                        f"into one broadcast fifo is not implemented")
    return ("different fifos read overlapping regions in different element streams; one broadcast fifo would carry "
            "every fifo's elements to every consumer (not rewritten)")


def _run(design: Design) -> tuple[Design, list[Finding]]:
    if not isinstance(design, Design):
        raise DesignError(f"eliminate_redundant_transfers takes a Design, got {type(design).__name__}")
    findings: list[Finding] = []
    within: dict[str, int] = {}
    current = design
    accepted: list[tuple[Design, int]] = []  # (design before the rewrite, index of its finding)
    for host in _host_fifos(design):
        tensor, repeated = _repeated_bytes(design, host)
        within[host] = repeated
        if not repeated:
            continue
        out = _rewrite(current, host)
        if isinstance(out, _Rewrite):
            accepted.append((current, len(findings)))
            current = out.design
            findings.append(Finding(host, tensor, out.saved, True, out.note))
        else:
            findings.append(Finding(host, tensor, repeated, False, out))
    # candidates were tried with the greedy planner; what is returned must plan with tl.plan's default
    while accepted and (problem := why_not(current)) is not None:
        current, at = accepted.pop()
        f = findings[at]
        findings[at] = dataclasses.replace(f, bytes=within[f.fifo], rewritten=False, reason=f"does not plan: {problem}")
    return current, findings + _across_fifos(design, within)


def rewrite_report(design: Design) -> tuple[Design, list[Finding]]:
    """:func:`eliminate_redundant_transfers` and :func:`find_redundant` in one run: (the new design, the findings).

    Raises:
        DesignError: ``design`` is not a Design.
    """
    return _run(design)


def find_redundant(design: Design) -> list[Finding]:
    """Every host fifo whose stream re-reads DDR: bytes, whether the pass removes them, and how or why not.

    Raises:
        DesignError: ``design`` is not a Design.
    """
    return _run(design)[1]


def eliminate_redundant_transfers(design: Design) -> Design:
    """Host moves that re-read data already on chip made resident in the cores (API.md "Passes (v1)").

    Args:
        design: the design.

    Returns:
        A new Design (the same one when nothing is removed) computing the same outputs with fewer DDR bytes.

    Raises:
        DesignError: ``design`` is not a Design.
    """
    return _run(design)[0]


__all__ = ["Finding", "ddr_bytes", "eliminate_redundant_transfers", "find_redundant", "redundant_bytes", "rewrite_report"]
