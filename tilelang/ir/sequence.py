"""The host runtime sequence as the command processor runs it: pushes, BD ids and waits.

On a device with a runtime sequence (``Device.host_sequence``: the NPUs), the host's
moves reach the shim DMAs as commands run one after another by the array's
command processor: a push writes a transfer's buffer descriptor and puts its task
on a channel's queue (``aiex.npu.dma_memcpy_nd``); a wait stops the processor
until a transfer that issued a token has completed (``aiex.npu.dma_wait``, which
mlir-aie lowers to ``npu.sync``). mlir-aie PR 2344, the runtime-sequence section of
its mini-tutorial: "Runtime sequence commands are submitted to and executed by a
dedicated command processor in order. Commands that are set to `wait` will block
the dedicated command processor until a token associated with their completion is
generated." This module decides those commands once, from
the plan; the MLIR emitter writes them and the simulator runs them, so the cycles
the simulator reports are those of the sequence the module holds (the physical
level's; the objectfifo level's is the same wherever each host move feeds one fifo).

The rules (device data: ``Device.buffer_descriptors`` and the ``host_memory``'s
``task_queue``):

- one transfer per move and shim channel (a move into several fifos the plan
  feeds from one channel is sent once, the route broadcasts it), or, at mlir-aie's
  objectfifo level, one per move and fifo;
- each shim channel draws BD ids from its own ring: the shim's BDs shared out
  among the channels used there, and no longer than the channel's task queue, so
  a push never finds the queue full (AM020: "queue depth is four tasks per
  channel"); a push that reuses a ring slot first waits for the transfer that
  held it, and so for every earlier transfer of the channel, which completes in
  order;
- transfers are pushed in the order the cores take their data (``Progress``): an
  input when its first element is first acquired, an output when its producer
  needs its first element's buffer again (at the end if it never does), each as
  a share of the core's program (loops counted, not unrolled; a core feeding
  another core runs at that core's pace) and through the memtile links in
  between, never before an earlier transfer of its fifo or channel. A wait
  is then for a transfer whose data the cores took before the one pushed after
  it, so it does not stall the moves that let it complete. Program order alone
  can hang: a design writing all of one column's B moves before the next
  column's waits for B data the cores cannot take while the next column,
  starved of B, holds the A broadcast both columns share; so can pushing every
  fifo at the same pace when a core takes one fifo wholly before another;
- at the end the sequence waits for the last transfer of every channel.

A device without a runtime sequence (AIE1: static shim BD chains) has every move
pushed at the start, in program order, with no waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tilelang.errors import PlanError
from tilelang.ir.design import Acquire, Core, Design, Dma, Loop, Port, Release, walk
from tilelang.ir.plan import FifoEnd, Plan
from tilelang.ir.verify import HOST

Coord = tuple[int, int]
Channel = tuple[Coord, str, int]  # (shim tile, "mm2s" | "s2mm", channel index)


@dataclass(frozen=True)
class Transfer:
    """One transfer of a move: the fifos it feeds or drains through one shim channel.

    Attributes:
        order: its index in program order among the sequence's transfers.
        dma: the move.
        fifos: the move's fifos this transfer carries.
        channel: the shim channel.
    """

    order: int
    dma: Dma
    fifos: tuple[str, ...]
    channel: Channel

    @property
    def fifo(self) -> str:
        """Its first fifo (the only one at the objectfifo level)."""
        return self.fifos[0]


@dataclass(frozen=True)
class Push:
    """Write ``transfer``'s BD ``bd`` and push its task; ``token``: it reports its completion
    (a later :class:`Wait` takes the report)."""

    transfer: Transfer
    bd: int
    token: bool


@dataclass(frozen=True)
class Wait:
    """Stop the command processor until ``transfer`` (and every earlier transfer of its channel) completed."""

    transfer: Transfer


@dataclass(frozen=True)
class HostSequence:
    """The runtime sequence: its transfers in program order and the commands that run them."""

    transfers: tuple[Transfer, ...]
    commands: tuple[Push | Wait, ...]
    ring: dict[Channel, int]


def host_end(plan: Plan, fifo: str, to_device: bool) -> FifoEnd:
    """The host's end of ``fifo`` in the plan.

    Raises:
        PlanError: the plan has no host end with a DMA channel for it.
    """
    fp = plan.fifos[fifo]
    ends = [fp.producer] if to_device else list(fp.consumers)
    for e in ends:
        if e.agent == HOST:
            if e.channel is None:
                raise PlanError(f"the plan gives the host end of fifo {fifo!r} no shim DMA channel")
            return e
    raise PlanError(f"the plan has no host end for fifo {fifo!r}")


def host_transfers(plan: Plan, per_channel: bool = True) -> list[Transfer]:
    """Every transfer of the runtime sequence, in program order (PLIO moves have none: the PL side moves them).

    Args:
        plan: the plan.
        per_channel: one transfer per shim channel a move uses; else one per fifo
            (mlir-aie's objectfifo level, where every objectfifo has its own channel).

    Raises:
        PlanError: a fifo has no host end with a channel.
    """
    out: list[Transfer] = []
    for d in plan.design.dmas:
        if d.plio:
            continue
        direction = "mm2s" if d.to_device else "s2mm"
        by_channel: dict[Channel, list[str]] = {}
        for f in d.fifos:
            end = host_end(plan, f, d.to_device)
            ch: Channel = (end.tile, direction, end.channel)  # type: ignore[assignment]
            if per_channel:
                by_channel.setdefault(ch, []).append(f)
            else:
                out.append(Transfer(len(out), d, (f,), ch))
        for ch, fifos in by_channel.items():
            out.append(Transfer(len(out), d, tuple(fifos), ch))
    return out


def bd_rings(plan: Plan, transfers: list[Transfer]) -> tuple[dict[Channel, int], dict[Channel, int]]:
    """(first BD id, ring size) of every channel: each shim's BDs shared out among its channels,
    each share no longer than a channel's task queue.

    Raises:
        PlanError: a shim has more channels in use than BDs.
    """
    queue = plan.device.host_memory.task_queue if plan.device.host_memory is not None else 0
    by_tile: dict[Coord, list[Channel]] = {}
    for t in transfers:
        chans = by_tile.setdefault(t.channel[0], [])
        if t.channel not in chans:
            chans.append(t.channel)
    base: dict[Channel, int] = {}
    size: dict[Channel, int] = {}
    for tile, chans in by_tile.items():
        bds = plan.device.buffer_descriptors(tile)
        share = bds // len(chans)
        if share < 1:
            raise PlanError(f"shim {tile} has {bds} buffer descriptors for {len(chans)} channels")
        for i, ch in enumerate(sorted(chans, key=lambda c: (c[1], c[2]))):
            base[ch], size[ch] = i * share, min(share, queue) if queue else share
    return base, size


class Progress:
    """Where in the design's run each fifo element is taken or made, as a fraction of its core's program.

    A core's program advances one step per acquire, release and call it runs; an element is taken
    (or, for a fifo it writes, made) at the acquire that first holds it (an acquire of n holds n
    elements, acquiring only those not already held, as IRON's objectfifo acquire does), over the
    program's steps. Loops are not unrolled: an iteration that leaves a fifo's hold as it found it
    repeats, so whole runs of iterations are counted at once. An element a memtile link passes on
    is needed when the first of its destinations needs it (a split's element k is each
    destination's element k) and made when the first of its sources made it; a fifo several agents
    take is needed by the earliest. A core whose results another core takes runs at that core's
    pace (``_time``); the others at their own, a step at its share of the program, so cores at the
    same share of their work are at the same time.
    """

    def __init__(self, design: Design) -> None:
        self.design = design
        self._memo: dict[tuple[int, str, int], tuple[int, int, int]] = {}
        # the answers of _side, _time and _find, kept: issue_order asks the same elements and steps again
        # and again (every transfer's first element, the bisections of _count), each a walk of a body
        self._sides: dict[tuple, Fraction | None] = {}
        self._times: dict[tuple, Fraction] = {}
        self._found: dict[tuple[int, str, int, int], tuple[int | None, int, int]] = {}
        self.takers: dict[str, list[tuple[str, object]]] = {}  # fifo -> ("core", Core) | ("link", Link)
        self.makers: dict[str, list[tuple[str, object]]] = {}
        for c in design.cores:
            for st in walk(c.body):
                if isinstance(st, Acquire):
                    side = self.takers if st.port is Port.CONSUME else self.makers
                    if all(x is not c for _, x in side.get(st.fifo, [])):
                        side.setdefault(st.fifo, []).append(("core", c))
        for ln in design.links:
            for f in ln.srcs:
                self.takers.setdefault(f, []).append(("link", ln))
            for f in ln.dsts:
                self.makers.setdefault(f, []).append(("link", ln))
        self.made_by: dict[str, list[str]] = {}  # core -> the fifos it makes that something on chip takes
        for f, makers in self.makers.items():
            for kind, x in makers:
                if kind == "core" and f in self.takers:
                    self.made_by.setdefault(x.name, []).append(f)

    def needed(self, fifo: str, k: int, depth: int = 0, visiting: frozenset = frozenset()) -> Fraction | None:
        """When element ``k`` of ``fifo`` is first taken (None: nothing in the design takes it)."""
        return self._side(self.takers, fifo, k, depth, True, visiting)

    def made(self, fifo: str, k: int, depth: int = 0, visiting: frozenset = frozenset()) -> Fraction | None:
        """When the producer of ``fifo`` first holds element ``k`` to write it (None: nothing makes it)."""
        return self._side(self.makers, fifo, k, depth, False, visiting)

    def _side(self, side: dict, fifo: str, k: int, depth: int, taking: bool, visiting: frozenset) -> Fraction | None:
        if depth > len(self.design.links):
            return None
        key = (taking, fifo, k, depth, visiting)
        if key in self._sides:
            return self._sides[key]
        got = self._sides[key] = self._side_walk(side, fifo, k, depth, taking, visiting)
        return got

    def _side_walk(self, side: dict, fifo: str, k: int, depth: int, taking: bool,
                   visiting: frozenset) -> Fraction | None:
        out = []
        for kind, x in side.get(fifo, []):
            if kind == "core":
                out.append(self._at(x, fifo, k, visiting))
            elif taking:  # a link takes element k of its source(s) when a destination needs its element k
                out.extend(self.needed(d, k, depth + 1, visiting) for d in x.dsts)
            else:  # it makes element k of its destination once a source has made its element k
                out.extend(self.made(f, k, depth + 1, visiting) for f in x.srcs)
        out = [x for x in out if x is not None]
        return min(out) if out else None

    def _at(self, core: Core, fifo: str, k: int, visiting: frozenset = frozenset()) -> Fraction | None:
        at, _, _ = self._find(core.body, fifo, k, 0)
        return None if at is None else self._time(core, at, visiting)

    def _time(self, core: Core, step: int, visiting: frozenset) -> Fraction:
        """When ``core`` reaches ``step`` of its program. A core whose results another core takes runs
        at that core's pace: the step is when the element it is making of such a fifo is needed there
        (the earliest over its fifos). A core whose results only go to the host, or on a loop of cores,
        runs at its own pace: the step's share of its program."""
        key = (core.name, step, visiting)
        got = self._times.get(key)
        if got is None:
            got = self._times[key] = self._pace(core, step, visiting)
        return got

    def _pace(self, core: Core, step: int, visiting: frozenset) -> Fraction:
        """:meth:`_time`, worked out."""
        own = Fraction(step, max(self._steps(core), 1))
        if core.name in visiting:
            return own
        out = []
        for f in self.made_by.get(core.name, ()):
            n = self._effect(core.body, f, 0)[1]
            k = min(self._count(core.body, f, step, n), n - 1)
            t = self.needed(f, k, 0, visiting | {core.name})
            if t is not None:
                out.append(t)
        return min(out) if out else own

    def _steps(self, core: Core) -> int:
        """Steps of one run of ``core``'s program (the same counted for any fifo)."""
        return self._effect(core.body, "", 0)[0]

    def _count(self, body: tuple, fifo: str, step: int, n: int) -> int:
        """Elements of ``fifo`` newly held at steps up to ``step`` (of ``n`` in all)."""
        lo, hi = 0, n  # the first element held after ``step``, by bisection (each is held at a later step)
        while lo < hi:
            mid = (lo + hi) // 2
            at = self._find(body, fifo, mid, 0)[0]
            if at is not None and at <= step:
                lo = mid + 1
            else:
                hi = mid
        return lo

    @staticmethod
    def _step(st: object, fifo: str, held: int) -> tuple[int, int]:
        """(elements of ``fifo`` newly held, hold after) of one statement."""
        if isinstance(st, Acquire) and st.fifo == fifo and st.n > held:
            return st.n - held, st.n
        if isinstance(st, Release) and st.fifo == fifo:
            return 0, max(0, held - st.n)
        return 0, held

    def _effect(self, body: tuple, fifo: str, held: int) -> tuple[int, int, int]:
        """(steps, elements counted, hold at the end) of one run of ``body`` entered holding ``held``."""
        key = (id(body), fifo, held)
        if key in self._memo:
            return self._memo[key]
        steps = new = 0
        for st in body:
            if isinstance(st, Loop):
                s_, n_, held = self._loop(st, fifo, held, None)[:3]
                steps += s_
                new += n_
                continue
            steps += 1
            n_, held = self._step(st, fifo, held)
            new += n_
        self._memo[key] = (steps, new, held)
        return steps, new, held

    def _loop(self, loop: Loop, fifo: str, held: int, k: int | None) -> tuple[int, int, int, int | None]:
        """(steps, elements counted, hold at the end, step of the k-th element or None) of a loop entered
        holding ``held``; iterations repeating a hold already seen are counted a period at a time."""
        trips = len(range(loop.start, loop.stop, loop.step))
        steps = new = i = 0
        seen: dict[int, tuple[int, int, int]] = {}
        while i < trips:
            if held in seen:
                j, s0, n0 = seen.pop(held)
                period, ps, pn = i - j, steps - s0, new - n0
                skip = (trips - i) // period
                if k is not None and pn:
                    skip = min(skip, (k - new) // pn)
                steps, new, i = steps + skip * ps, new + skip * pn, i + skip * period
                if i >= trips:
                    break
            seen[held] = (i, steps, new)
            s_, n_, h_ = self._effect(loop.body, fifo, held)
            if k is not None and new + n_ > k:
                at, _, _ = self._find(loop.body, fifo, k - new, held)
                return steps, new, held, steps + at
            steps, new, held, i = steps + s_, new + n_, h_, i + 1
        return steps, new, held, None

    def _find(self, body: tuple, fifo: str, k: int, held: int) -> tuple[int | None, int, int]:
        """(step of ``body`` at which it counts element ``k`` or None, steps, hold at the end)."""
        key = (id(body), fifo, k, held)
        got = self._found.get(key)
        if got is None:
            got = self._found[key] = self._find_walk(body, fifo, k, held)
        return got

    def _find_walk(self, body: tuple, fifo: str, k: int, held: int) -> tuple[int | None, int, int]:
        """:meth:`_find`, worked out."""
        at = 0
        for st in body:
            if isinstance(st, Loop):
                s_, n_, h_, found = self._loop(st, fifo, held, k)
                if found is not None:
                    return at + found, at, held
                k -= n_
                at += s_
                held = h_
                continue
            n_, held = self._step(st, fifo, held)
            if k < n_:
                return at, at, held
            k -= n_
            at += 1
        return None, at, held


def _when(progress: Progress, design: Design, fifo: str, start: int, total: int, to_device: bool) -> Fraction | None:
    """When the transfer starting at element offset ``start`` of ``fifo`` is pushed: an input when its first
    element is needed; an output when its producer needs its first element's buffer again (it holds the
    element ``depth`` later). An output whose fifo ends before that never holds its producer up: it goes at
    the end (1)."""
    decl = design.fifo(fifo)
    first = start // decl.elem.numel
    if to_device:
        return progress.needed(fifo, first)
    if first + decl.depth < total // decl.elem.numel:
        return progress.made(fifo, first + decl.depth)
    return Fraction(1)


def issue_order(transfers: list[Transfer], design: Design) -> list[Transfer]:
    """The order the sequence pushes transfers: as the cores take their data.

    A transfer into the device goes when its first element is needed, one out of it when the
    producer needs its first element's buffer again (``Progress``, ``_when``), never before an
    earlier transfer of its fifo or channel; ties, and transfers whose fifo no core or link
    reaches, go by how far into its fifo's host traffic the transfer starts (the elements its
    fifo's earlier transfers move, over all of them), then in program order.
    """
    total: dict[str, int] = {}
    for t in transfers:
        total[t.fifo] = total.get(t.fifo, 0) + t.dma.pattern.numel
    progress = Progress(design)
    done: dict[str, int] = {}
    last: dict[object, Fraction] = {}
    keyed = []
    for t in transfers:
        start = done.get(t.fifo, 0)
        done[t.fifo] = start + t.dma.pattern.numel
        share = Fraction(start, total[t.fifo])
        at = [_when(progress, design, f, start, total[t.fifo], t.dma.to_device) for f in t.fifos]
        at = [x for x in at if x is not None]
        when = min(at) if at else share
        # a channel runs its tasks in the order pushed, and a fifo's moves complete in program order: a
        # transfer never goes before an earlier one of its fifo or channel
        when = max(when, last.get(t.fifo, when), last.get(t.channel, when))
        last[t.fifo] = last[t.channel] = when
        keyed.append((when, share, t.order, t))
    keyed.sort(key=lambda k: k[:3])
    return [k[3] for k in keyed]


def host_sequence(plan: Plan, per_channel: bool = True) -> HostSequence:
    """The plan's runtime sequence (module docstring).

    Raises:
        PlanError: a fifo has no host end with a channel, or a shim has more channels than BDs.
    """
    transfers = host_transfers(plan, per_channel)
    if not plan.device.host_sequence:
        commands = tuple(Push(t, -1, False) for t in transfers)
        return HostSequence(tuple(transfers), commands, {})
    base, ring = bd_rings(plan, transfers)
    pushes: list[tuple[Transfer, int]] = []
    waits_before: dict[int, Transfer] = {}  # push index -> the transfer waited for just before it
    history: dict[Channel, list[Transfer]] = {}
    waited: dict[Channel, int] = {}  # transfers of the channel known complete
    for t in issue_order(transfers, plan.design):
        past = history.setdefault(t.channel, [])
        n, r = len(past), ring[t.channel]
        if n >= r and waited.get(t.channel, 0) <= n - r:
            waits_before[len(pushes)] = past[n - r]
            waited[t.channel] = n - r + 1
        pushes.append((t, base[t.channel] + n % r))
        past.append(t)
    final = [h[-1] for ch, h in history.items() if waited.get(ch, 0) < len(h)]
    final.sort(key=lambda t: t.order)
    tokens = {id(t) for t in waits_before.values()} | {id(t) for t in final}
    commands: list[Push | Wait] = []
    for i, (t, bd) in enumerate(pushes):
        if i in waits_before:
            commands.append(Wait(waits_before[i]))
        commands.append(Push(t, bd, id(t) in tokens))
    commands.extend(Wait(t) for t in final)
    return HostSequence(tuple(transfers), tuple(commands), ring)


__all__ = ["Channel", "HostSequence", "Push", "Transfer", "Wait", "bd_rings", "host_end", "host_sequence",
           "host_transfers", "issue_order"]
