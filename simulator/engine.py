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
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from heapq import heappop, heappush

#: Priority of a process woken by a signal: after timeouts of the same cycle,
#: so a producer's release at cycle t is seen by a consumer waking at t.
WAKE = 1
#: Priority of an ordinary timeout.
TIMEOUT = 0

ProcessGen = Generator[object, None, None]


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
        schedule = self.engine.schedule
        for p in waiters:
            schedule(0, p.step, WAKE)


class Process:
    """A generator driven by the engine.

    Attributes:
        name: the agent's name ("core:worker", "dma:a_in", ...).
        kind: "core", "dma" or "host": what the deadlock report calls it.
        waiting: the signal it sleeps on, or None while running or sleeping on time.
        why: a sentence saying what it waits for (set by the process before yielding).
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
        self.why = ""
        self.done = False
        self.finished_at = 0
        self.on_done: Callable[[Process], None] | None = None
        self.obj: object = None
        engine.schedule(delay, self.step, TIMEOUT)

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
            self.engine.schedule(what, self.step, TIMEOUT)  # type: ignore[arg-type]
        else:
            self.waiting = what  # type: ignore[assignment]
            what.add(self)  # type: ignore[union-attr]


class Engine:
    """The event heap and the simulated clock (in cycles).

    Attributes:
        now: the current cycle.
        events: events processed so far.
    """

    __slots__ = ("_heap", "_seq", "_stop", "events", "now")

    def __init__(self) -> None:
        self.now = 0
        self.events = 0
        self._heap: list[tuple[int, int, int, Callable[[], None]]] = []
        self._seq = 0
        self._stop = False

    def schedule(self, delay: int, callback: Callable[[], None], priority: int = TIMEOUT) -> None:
        """Call ``callback`` ``delay`` cycles from now."""
        self._seq += 1
        heappush(self._heap, (self.now + delay, priority, self._seq, callback))

    def stop(self) -> None:
        """End :meth:`run` after the current event."""
        self._stop = True

    def run(self) -> None:
        """Process events in (time, priority, sequence) order until none is left or :meth:`stop`."""
        heap = self._heap
        n = 0
        while heap and not self._stop:
            t, _, _, callback = heappop(heap)
            self.now = t
            callback()
            n += 1
        self.events += n
