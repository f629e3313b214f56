"""The discrete-event kernel: a heap of ``(time, priority, sequence, callback)``.

Shaped like SimPy's core (``src/simpy/core.py``): processes are generators
that yield what they wait for, and the engine resumes them. Two things may be
yielded:

- an ``int`` delay: the process sleeps that many cycles (a kernel call or a
  DMA transfer is one such delay, never one event per cycle);
- a :class:`Signal`: the process sleeps until someone calls
  :meth:`Signal.notify`, then re-checks its own condition.

Ties are broken by priority, then by the order events were scheduled, so a
run is deterministic.

Speed: a process woken by a signal runs in the same cycle after every
timeout of that cycle; those wake-ups are by far the most common events, so
they skip the heap and wait in a first-in-first-out queue for the current
cycle. The order is exactly the heap's: at cycle ``t`` the engine runs heap
events of priority up to :data:`WAKE` (timeouts, then wakes scheduled in
earlier cycles), then queued wakes in the order they were made, re-checking
the heap after each (a wake may schedule a zero-delay timeout, which runs
first, as its lower priority says).

Each heap entry is a pair ``(key, what)``: the key packs the time, the priority
and the sequence number into one integer whose order is the tuple's (one
integer comparison per heap step instead of a tuple's), and ``what`` is a
:class:`Process` to step (the common case, stepped inline by :meth:`Engine.run`
without a call) or a callback.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from heapq import heappop, heappush
from itertools import count

from tilelang.errors import SimulationError

#: Priority of a process woken by a signal: after timeouts of the same cycle,
#: so a producer's release at cycle t is seen by a consumer waking at t.
WAKE = 1
#: Priority of an ordinary timeout.
TIMEOUT = 0

ProcessGen = Generator[object, None, None]

#: Bits of a heap key below the priority: the sequence number (2**40 events per run at most).
_SEQ_BITS = 40
#: Bits of the (offset) priority, and the offset making every allowed priority non-negative.
_PRIO_BITS = 3
_PRIO_OFFSET = 4
#: A key's time is ``key >> _TIME_SHIFT``.
_TIME_SHIFT = _SEQ_BITS + _PRIO_BITS
#: The priority bits of a timeout's key: ``_key(t, TIMEOUT, seq) == t << _TIME_SHIFT | _TIMEOUT_BITS | seq``.
_TIMEOUT_BITS = _PRIO_OFFSET << _SEQ_BITS
#: ``_key(t, WAKE + 1, 0) == t << _TIME_SHIFT | _AFTER_WAKE_BITS``: every key of cycle t up to priority WAKE is below it.
_AFTER_WAKE_BITS = (WAKE + 1 + _PRIO_OFFSET) << _SEQ_BITS


def _key(time: int, priority: int, seq: int) -> int:
    """The heap key of an event: ordered as ``(time, priority, seq)``."""
    return (((time << _PRIO_BITS) | (priority + _PRIO_OFFSET)) << _SEQ_BITS) | seq


class Waiting:
    """What a blocked process waits for, described lazily (only a deadlock report reads it).

    Subclasses say what they wait for in :meth:`text`; building the sentence
    on every block would cost more than the simulation step itself.
    """

    __slots__ = ()

    def text(self) -> str:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError


class Signal:
    """Something processes wait on; :meth:`notify` wakes every waiter once.

    Attributes:
        name: what the signal stands for, used in deadlock reports.
        owner: the object whose state the signal reports (a ring side, a channel).
    """

    __slots__ = ("_waiters", "engine", "name", "owner")

    def __init__(self, engine: Engine, name: str, owner: object = None) -> None:
        self.engine = engine
        self.name = name
        self.owner = owner
        self._waiters: list[Process] = []

    def add(self, proc: Process) -> None:
        self._waiters.append(proc)

    def notify(self) -> None:
        """Wake every waiting process (each re-checks what it waits for)."""
        if not self._waiters:
            return
        waiters, self._waiters = self._waiters, []
        self.engine.now_queue.extend(waiters)


class Process:
    """A generator driven by the engine.

    Attributes:
        name: the agent's name ("core:worker", "dma:a_in", ...).
        kind: "core", "dma" or "host": what the deadlock report calls it.
        waiting: the signal it last slept on (None before it first did): the one it sleeps on
            while blocked. Only the deadlock report reads it, when every live process is blocked;
            the engine does not clear it per step.
        why: what it waits for: a sentence, or a :class:`Waiting` that writes one
            on demand (see :meth:`reason`).
        obj: the component the process runs (a core runner, a flow), for reports.
        done: whether the generator finished.
        finished_at: the cycle it finished at.
    """

    __slots__ = ("done", "engine", "finished_at", "gen", "kind", "name", "obj", "on_done", "waiting", "why")

    def __init__(self, engine: Engine, name: str, kind: str, body: Callable[[Process], ProcessGen],
                 delay: int = 0) -> None:
        self.engine = engine
        self.name = name
        self.kind = kind
        self.gen = body(self)
        self.waiting: Signal | None = None
        self.why: str | Waiting = ""
        self.done = False
        self.finished_at = 0
        self.on_done: Callable[[Process], None] | None = None
        self.obj: object = None
        engine.schedule(delay, self, TIMEOUT)

    def reason(self) -> str:
        """What the process waits for, as a sentence."""
        why = self.why
        return why if isinstance(why, str) else why.text()

    def step(self) -> None:
        """Run the generator up to its next yield and act on what it yields."""
        self.waiting = None
        try:
            what = next(self.gen)
        except StopIteration:
            self.done = True
            self.finished_at = self.engine.now
            if self.on_done is not None:
                self.on_done(self)
            return
        if what.__class__ is int:
            eng = self.engine
            heappush(eng.heap, ((((eng.now + what) << _PRIO_BITS | _PRIO_OFFSET) << _SEQ_BITS) | next(eng.seq), self))
        else:
            self.waiting = what  # type: ignore[assignment]
            what._waiters.append(self)  # type: ignore[union-attr]


class Engine:
    """The event heap and the simulated clock (in cycles).

    Attributes:
        now: the current cycle.
        events: events processed so far (timeouts and wake-ups alike).
        heap: pending ``(key, process or callback)`` entries (key: see :func:`_key`).
        now_queue: processes woken in the current cycle, in the order they were woken, and
            zero-delay wake callbacks.
        seq: the tie-break counter.
    """

    __slots__ = ("_stop", "events", "heap", "now", "now_queue", "seq")

    def __init__(self) -> None:
        self.now = 0
        self.events = 0
        self.heap: list[tuple[int, Process | Callable[[], None]]] = []
        self.now_queue: deque[Process | Callable[[], None]] = deque()
        self.seq = count(1)
        self._stop = False

    def schedule(self, delay: int, callback: Process | Callable[[], None], priority: int = TIMEOUT) -> None:
        """Call ``callback`` (or step the process) ``delay`` cycles from now.

        Raises:
            SimulationError: a priority outside [-4, 3].
        """
        if priority == TIMEOUT:  # the common case (a flow's delayed publish), keyed inline
            heappush(self.heap, ((((self.now + delay) << _PRIO_BITS | _PRIO_OFFSET) << _SEQ_BITS) | next(self.seq),
                                 callback))
            return
        if delay == 0 and priority == WAKE:
            self.now_queue.append(callback)
            return
        if not -_PRIO_OFFSET <= priority < (1 << _PRIO_BITS) - _PRIO_OFFSET:
            raise SimulationError(f"event priority must be in [-4, 3], got {priority}")
        heappush(self.heap, (_key(self.now + delay, priority, next(self.seq)), callback))

    def stop(self) -> None:
        """End :meth:`run` after the current event."""
        self._stop = True

    def run(self) -> None:
        """Process events in (time, priority, sequence) order until none is left or :meth:`stop`.

        The body of :meth:`Process.step` is inlined here: stepping a process is most events.
        """
        heap = self.heap
        queue = self.now_queue
        pop, push, popleft, seq = heappop, heappush, queue.popleft, self.seq
        shift, timeout_bits, after_wake_bits = _TIME_SHIFT, _TIMEOUT_BITS, _AFTER_WAKE_BITS
        process, integer, step = Process, int, next
        now = self.now
        # Heap entries before ``limit`` are at the current cycle with priority up to WAKE.
        limit = _key(now, WAKE + 1, 0)
        n = 0
        while not self._stop:
            if heap and (not queue or heap[0][0] < limit):
                key, what = pop(heap)
                t = key >> shift
                if t != now:
                    now = self.now = t
                    limit = t << shift | after_wake_bits  # _key(t, WAKE + 1, 0)
            elif queue:
                what = popleft()
            else:
                break
            n += 1
            if what.__class__ is not process:
                what()  # type: ignore[operator]
                continue
            p: Process = what  # type: ignore[assignment]
            try:
                w = step(p.gen)
            except StopIteration:
                p.done = True
                p.finished_at = now
                if p.on_done is not None:
                    p.on_done(p)
                continue
            if w.__class__ is integer:  # a timeout's key: _key(now + w, TIMEOUT, next(seq))
                push(heap, ((now + w) << shift | timeout_bits | step(seq), p))  # type: ignore[operator]
            else:
                p.waiting = w  # type: ignore[assignment]
                w._waiters.append(p)  # type: ignore[union-attr]
        self.events += n
