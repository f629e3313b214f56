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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from heapq import heappop, heappush

#: Priority of a process woken by a signal: after timeouts of the same cycle,
#: so a producer's release at cycle t is seen by a consumer waking at t.
WAKE = 1
#: Priority of an ordinary timeout.
TIMEOUT = 0

ProcessGen = Generator[object, None, None]


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
        now = self.engine.now_queue
        for p in waiters:
            now.append(p.step)


class Process:
    """A generator driven by the engine.

    Attributes:
        name: the agent's name ("core:worker", "dma:a_in", ...).
        kind: "core", "dma" or "host": what the deadlock report calls it.
        waiting: the signal it sleeps on, or None while running or sleeping on time.
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
        engine.schedule(delay, self.step, TIMEOUT)

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
            eng.seq += 1
            heappush(eng.heap, (eng.now + what, TIMEOUT, eng.seq, self.step))  # type: ignore[operator]
        else:
            self.waiting = what  # type: ignore[assignment]
            what._waiters.append(self)  # type: ignore[union-attr]


class Engine:
    """The event heap and the simulated clock (in cycles).

    Attributes:
        now: the current cycle.
        events: events processed so far (timeouts and wake-ups alike).
        heap: pending ``(time, priority, sequence, callback)`` entries.
        now_queue: wake-ups of the current cycle, in the order they were made.
        seq: the tie-break counter.
    """

    __slots__ = ("_stop", "events", "heap", "now", "now_queue", "seq")

    def __init__(self) -> None:
        self.now = 0
        self.events = 0
        self.heap: list[tuple[int, int, int, Callable[[], None]]] = []
        self.now_queue: deque[Callable[[], None]] = deque()
        self.seq = 0
        self._stop = False

    def schedule(self, delay: int, callback: Callable[[], None], priority: int = TIMEOUT) -> None:
        """Call ``callback`` ``delay`` cycles from now."""
        if delay == 0 and priority == WAKE:
            self.now_queue.append(callback)
            return
        self.seq += 1
        heappush(self.heap, (self.now + delay, priority, self.seq, callback))

    def stop(self) -> None:
        """End :meth:`run` after the current event."""
        self._stop = True

    def run(self) -> None:
        """Process events in (time, priority, sequence) order until none is left or :meth:`stop`."""
        heap = self.heap
        queue = self.now_queue
        pop, popleft = heappop, queue.popleft
        n = 0
        while not self._stop:
            if heap and (not queue or (heap[0][0] == self.now and heap[0][1] <= WAKE)):
                t, _, _, callback = pop(heap)
                self.now = t
            elif queue:
                callback = popleft()
            else:
                break
            callback()
            n += 1
        self.events += n
