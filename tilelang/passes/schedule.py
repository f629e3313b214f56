"""``tl.passes.schedule_memory``: reorder independent kernel calls to lower a core's peak live memory.

Serenity (Ahn et al., MLSys 2020) schedules a graph's operations by dynamic
programming over the sets of operations already run: the memory held after
running a set does not depend on the order within it, so the best peak of a
set is the best over its last operation. Here the graph is each *block* of a
core body, a run of consecutive calls with no acquire, release or loop between
them (those stay where they are, and so does every call relative to them):

- two calls depend on each other when one writes a local buffer or fifo
  element the other reads or writes (read after write, write after read,
  write after write); only orders that keep each dependent pair keep results;
- after the calls ``S`` of a block have run, a local buffer is live when a
  call outside ``S`` reads its current value (no call outside ``S`` defines
  it anew first: dependences keep such calls in written order, so "first" is
  the written order) or it is live out of the block and no call outside ``S``
  defines it anew; while call ``c`` runs, those live after it plus everything
  ``c`` touches hold their bytes (``ir/liveness.py``);
- ``best(S + c) = min over c of max(best(S), bytes during c)``, exact, over
  subsets of blocks of up to ``EXACT_CALLS`` calls; longer blocks take the
  ready call that holds the fewest bytes, first in program order on ties.

The written order is kept whenever it is already optimal for its block.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from tilelang.errors import DesignError
from tilelang.ir.design import BufArg, Call, CascadeArg, Core, Design, ElemArg, Loop, Stmt
from tilelang.ir.kernel import AnyKernel
from tilelang.ir.liveness import call_access, liveness
from tilelang.ir.verify import verify_design

#: Blocks of at most this many calls are scheduled exactly (2^n subsets); longer ones greedily.
EXACT_CALLS = 14


@dataclass(frozen=True)
class _Effect:
    """One call as the scheduler sees it."""

    uses: frozenset[str]  # local buffers whose previous content it reads
    kills: frozenset[str]  # local buffers it defines whole
    touched: frozenset[str]  # local buffers it passes
    reads: frozenset[object]  # everything it reads: buffers and fifo elements
    writes: frozenset[object]  # everything it writes


def _effect(call: Call, kernel: AnyKernel) -> _Effect:
    acc = call_access(call, kernel)
    reads: set[object] = set(acc.uses)
    writes: set[object] = set(acc.writes) | set(acc.kills)
    for p, a in zip(kernel.params, call.args, strict=True):
        if isinstance(a, ElemArg):
            (writes if p.name in kernel.written else reads).add(("elem", a.fifo, a.index))
        elif isinstance(a, BufArg) and p.name not in kernel.written:
            reads.add(a.buffer)
    for a in call.args:  # cascade tiles move in call order: two calls on one cascade never swap
        if isinstance(a, CascadeArg):
            writes.add(("cascade", a.cascade))
    touched = frozenset(a.buffer for a in call.args if isinstance(a, BufArg))
    return _Effect(acc.uses, acc.kills, touched, frozenset(reads), frozenset(writes))


def _depends(a: _Effect, b: _Effect) -> bool:
    return bool(a.writes & (b.reads | b.writes) or b.writes & a.reads)


class _Block:
    """One run of calls: their effects, dependences and the bytes each order holds."""

    def __init__(self, calls: list[Call], kernels: Mapping[str, AnyKernel], live_out: frozenset[str],
                 sizes: Mapping[str, int]) -> None:
        self.calls = calls
        self.fx = [_effect(c, kernels[c.kernel]) for c in calls]
        n = len(calls)
        self.preds = [sum(1 << j for j in range(i) if _depends(self.fx[j], self.fx[i])) for i in range(n)]
        self.live_out = live_out
        self.sizes = sizes
        self.names = sorted(set(live_out).union(*(f.touched for f in self.fx)))

    def live_after(self, done: int) -> frozenset[str]:
        """Local buffers live once the calls in bitmask ``done`` have run: those whose current value a call
        still to run reads (no call still to run defines it anew before that read: dependences keep those
        in written order), and those live out of the block that no call still to run defines anew."""
        n = len(self.calls)
        todo = [i for i in range(n) if not done >> i & 1]
        live = set()
        for b in self.names:
            first_kill = next((k for k in todo if b in self.fx[k].kills), None)
            if any(b in self.fx[c].uses and (first_kill is None or c < first_kill) for c in todo):
                live.add(b)
            elif b in self.live_out and first_kill is None:
                live.add(b)
        return frozenset(live)

    def held(self, done: int, i: int) -> int:
        """Bytes held while call ``i`` runs after the calls in ``done``."""
        return sum(self.sizes[b] for b in self.live_after(done | 1 << i) | self.fx[i].touched)

    def peak(self, order: list[int]) -> int:
        done, top = 0, 0
        for i in order:
            top = max(top, self.held(done, i))
            done |= 1 << i
        return top

    def ready(self, done: int, i: int) -> bool:
        return not done >> i & 1 and self.preds[i] & done == self.preds[i]

    def exact(self) -> list[int]:
        n = len(self.calls)
        best: dict[int, tuple[int, tuple[int, ...]]] = {0: (0, ())}
        for size in range(n):
            layer = sorted(m for m in best if bin(m).count("1") == size)
            for done in layer:
                peak, order = best[done]
                for i in range(n):
                    if self.ready(done, i):
                        cand = (max(peak, self.held(done, i)), (*order, i))
                        key = done | 1 << i
                        if key not in best or cand < best[key]:
                            best[key] = cand
        return list(best[(1 << n) - 1][1])

    def greedy(self) -> list[int]:
        n, done, order = len(self.calls), 0, []
        while len(order) < n:
            i = min((i for i in range(n) if self.ready(done, i)), key=lambda i: (self.held(done, i), i))
            order.append(i)
            done |= 1 << i
        return order

    def schedule(self) -> list[int]:
        written = list(range(len(self.calls)))
        if len(self.calls) < 2:
            return written
        order = self.exact() if len(self.calls) <= EXACT_CALLS else self.greedy()
        return order if self.peak(order) < self.peak(written) else written


def _blocks(body: tuple[Stmt, ...]) -> list[list[int]]:
    """Positions in ``body`` of each run of two or more consecutive calls."""
    runs, cur = [], []
    for i, s in enumerate(body):
        if isinstance(s, Call):
            cur.append(i)
        else:
            if len(cur) > 1:
                runs.append(cur)
            cur = []
    if len(cur) > 1:
        runs.append(cur)
    return runs


class _CoreScheduler:
    def __init__(self, core: Core, kernels: Mapping[str, AnyKernel]) -> None:
        self.kernels = kernels
        self.sizes = {b.name: b.nbytes for b in core.buffers}
        self.after = liveness(core, kernels).after  # per call, in pre-order

    def body(self, body: tuple[Stmt, ...], first: int) -> tuple[tuple[Stmt, ...], int]:
        """``body`` with its blocks scheduled; ``first``: the pre-order number of its first call.
        Returns the new body and the number after its last call."""
        out = list(body)
        number: dict[int, int] = {}  # position in body -> pre-order number of the call there
        at = first
        for i, s in enumerate(body):
            if isinstance(s, Call):
                number[i] = at
                at += 1
            elif isinstance(s, Loop):
                inner, at = self.body(s.body, at)
                out[i] = dataclasses.replace(s, body=inner)
        for run in _blocks(body):
            calls: list[Call] = [body[i] for i in run]  # type: ignore[misc]
            block = _Block(calls, self.kernels, self.after[number[run[-1]]], self.sizes)
            for pos, k in zip(run, block.schedule(), strict=True):
                out[pos] = calls[k]
        return tuple(out), at


def schedule_memory(design: Design) -> Design:
    """Reorder independent calls in each core body to lower its peak live local memory.

    Args:
        design: a verified design.

    Returns:
        A new Design computing the same results (only calls with no dependence between them
        change places, and only within runs of calls); the same design when nothing helps.

    Raises:
        DesignError: ``design`` is not a Design or does not verify.
    """
    if not isinstance(design, Design):
        raise DesignError(f"schedule_memory takes a design, got {type(design).__name__}")
    verify_design(design)
    kernels = {k.name: k for k in design.kernels}
    cores = []
    for c in design.cores:
        if not c.buffers:
            cores.append(c)
            continue
        body, _ = _CoreScheduler(c, kernels).body(c.body, 0)
        cores.append(dataclasses.replace(c, body=body))
    return dataclasses.replace(design, cores=tuple(cores))


__all__ = ["EXACT_CALLS", "schedule_memory"]
