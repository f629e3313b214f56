"""Cascade streams in the simulator: a tile sent by one core's call and taken by its neighbour's call.

The model (docs/cascade.md):

- A producer's call computes its tile into its staging buffer and sends it; a consumer's call takes the next
  tile into its staging buffer and computes. Tiles move in program order, one per call.
- The words move while both calls run: kernels put and get cascade words inside their loops (the vendor
  kernels' ``put_mcd`` / ``get_scd``), and the cascade holds only a few words in flight
  (``CascadeSpec.fifo_words``: UG1079's two-deep FIFOs at each end), so a put blocks until the consumer gets
  and a get blocks until the producer puts. Words start to move when both calls have started,
  ``s = max(producer start, consumer start)``; the last word moves no earlier than ``s + T``, with
  ``T = CascadeSpec.transfer_cycles(bytes)`` (whole words at the device's words per cycle), and no
  earlier than the producer's compute ends (its last word is its last result):
  ``e = max(s + T, producer start + producer compute)``.
- Each of the two calls ends at ``max(its start + its compute cycles, e)``: the transfer overlaps both
  kernels, and a call outlasts its compute only when the other side is late or the cascade is the
  bottleneck; the time beyond compute is a stall on the cascade. So the producer blocks until the consumer
  has taken its tile.
- The consumer's computation needs the tile, so a consumer arriving before its producer waits for the
  producer's call to start (in the simulation a call's data is computed when it starts).

Every mode keeps the rendezvous (a producer waits until its tile is taken, as the hardware's few words of
buffering make it for any tile of more words than that), so a design that deadlocks does so in every mode;
functional mode moves the tiles with no time, timing mode keeps every wait and cycle of timed mode and moves
no data.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator

import numpy as np

from simulator.engine import Engine, Signal
from simulator.network import Busy


class Cascade:
    """One cascade between two cores: the tiles in flight and the transfers' records.

    Attributes:
        name: the cascade.
        nbytes: bytes of one tile.
        cycles: cycles one tile's transfer takes (the device's cascade words per cycle).
        busy: the transfers, for the statistics.
    """

    def __init__(self, engine: Engine, name: str, nbytes: int, cycles: int, producer: str, consumer: str) -> None:
        self.name = name
        self.producer, self.consumer = producer, consumer
        self.nbytes = nbytes
        self.cycles = cycles
        self.queue: deque[tuple[np.ndarray | None, int, int]] = deque()  # (tile, producer start, its compute end)
        self.sent = Signal(engine, f"cascade {name}: a tile", self)
        self.taken = Signal(engine, f"cascade {name}: the consumer", self)
        self.posted = 0
        self.starts: list[int] = []  # per tile taken: its last T cycles of transfer (busy statistics)
        self.ends: list[int] = []  # per tile taken: when its last word moved (e)
        self.busy = Busy()

    def wakers(self, sig: Signal) -> list[str]:
        """The agent that can wake a process sleeping on ``sig`` (the deadlock report's wait-for edge)."""
        return [f"core:{self.consumer}"] if sig is self.taken else [f"core:{self.producer}"]

    def state(self) -> str:
        return f"{self.posted} tiles sent, {len(self.starts)} taken"

    def settle(self, trace: object = None) -> Busy:
        """The transfers' busy cycles, and their spans on a trace track of their own (once the run is over).

        A tile's last T cycles never overlap the next tile's: its successor's transfer starts no earlier than
        the producer's next call, which starts no earlier than this tile's end.
        """
        starts, ends = np.asarray(self.starts, np.int64), np.asarray(self.ends, np.int64)
        self.busy.add(starts, ends, self.nbytes)
        if trace is not None and len(starts):
            track = trace.track("cascades", f"{self.name}: {self.producer} -> {self.consumer}")  # type: ignore[attr-defined]
            trace.add_spans(track, trace.name_id(f"{self.name} {self.nbytes} B"), starts, ends - starts)  # type: ignore[attr-defined]
        return self.busy.close()


class CascadeWait:
    """What a core blocked on a cascade waits for (the deadlock report's sentence)."""

    __slots__ = ("cascade", "sending")

    def __init__(self, cascade: Cascade, sending: bool) -> None:
        self.cascade = cascade
        self.sending = sending

    def text(self) -> str:
        c = self.cascade
        if self.sending:
            return f"sending on cascade {c.name!r} waits for the consumer to take the tile ({c.state()})"
        return f"taking from cascade {c.name!r} waits for the producer to send a tile ({c.state()})"


def take(c: Cascade, proc: object, data: bool, staging: np.ndarray | None) -> Generator[object, None, int]:
    """Before a consumer's call: wait for a tile, copy it into ``staging``; returns when its last word moved."""
    arrive = c.sent.engine.now
    if not c.queue:
        proc.why = CascadeWait(c, False)  # type: ignore[attr-defined]
        while not c.queue:
            yield c.sent
    tile, sent_at, ready = c.queue.popleft()
    if data and tile is not None and staging is not None:
        staging[...] = tile
    end = max(max(arrive, sent_at) + c.cycles, ready)
    c.starts.append(end - c.cycles)
    c.ends.append(end)
    c.taken.notify()
    return end


def send(c: Cascade, data: bool, staging: np.ndarray | None, start: int, ready: int) -> int:
    """A producer's call started at ``start`` and computes until ``ready``: queue its tile; returns its index."""
    c.queue.append((staging.copy() if data and staging is not None else None, start, ready))
    c.posted += 1
    c.sent.notify()
    return c.posted - 1


def wait_taken(c: Cascade, proc: object, index: int) -> Generator[object, None, int]:
    """A producer waits until tile ``index`` is taken; returns when its last word moved."""
    if len(c.ends) <= index:
        proc.why = CascadeWait(c, True)  # type: ignore[attr-defined]
        while len(c.ends) <= index:
            yield c.taken
    return c.ends[index]


def build_cascades(engine: Engine, design: object, device: object, runners: list) -> dict[str, Cascade]:
    """One :class:`Cascade` per cascade of ``design``, handed to the core runners of its two ends."""
    from tilelang.devices.cascade_rules import cascade_spec
    from tilelang.ir.cascade import cascade_ends

    spec = cascade_spec(device)
    ends = cascade_ends(design)  # type: ignore[arg-type]
    out = {}
    for x in design.cascades:  # type: ignore[attr-defined]
        e = ends[x.name]
        out[x.name] = Cascade(engine, x.name, x.elem.nbytes, spec.transfer_cycles(x.elem.nbytes), e.producer,
                              e.consumer)
    for r in runners:
        r.cascades = out
    return out


def cascade_call(runner: object, plan: object, name_id: int, loopvars: list[int], proc: object,
                 engine: Engine) -> Generator[object, None, None]:
    """A kernel call that sends or takes cascade tiles (see the module docstring for the timing).

    ``runner`` is the core's ``CoreRunner`` and ``plan`` the call's ``CallPlan``.
    """
    r, p = runner, plan
    stats, timed, data = r.stats, r.timed, r.data  # type: ignore[attr-defined]
    arrive = engine.now
    latest = arrive  # the transfers' ends bound the call's end
    for name, sends, staging in p.cascades:  # type: ignore[attr-defined]
        if not sends:
            c = r.cascades[name]  # type: ignore[attr-defined]
            latest = max(latest, (yield from take(c, proc, data, staging)))
    begin = engine.now
    cycles, timing = p.execute(loopvars, timed, data)  # type: ignore[attr-defined]
    running = None
    contention = r.contention  # type: ignore[attr-defined]
    if timed and timing is not None and contention is not None and timing.banks:
        running = contention.call_started(begin, timing)
    for name, sends, staging in p.cascades:  # type: ignore[attr-defined]
        if sends:
            c = r.cascades[name]  # type: ignore[attr-defined]
            k = send(c, data, staging, begin, begin + cycles)
            latest = max(latest, (yield from wait_taken(c, proc, k)))
    stats.calls += 1
    if not timed:
        return
    proc.why = "running kernel"  # type: ignore[attr-defined]
    end = max(begin + cycles, latest)
    while True:
        if running is not None:
            end = max(end, running.end)
        if end <= engine.now:
            break
        yield end - engine.now
    run = engine.now - begin
    if running is not None:  # bank cycles the DMA took count as the call's, as in CoreRunner.run
        cycles = max(cycles, min(running.end, engine.now) - begin)
    stats.busy += cycles
    if timing is not None and timing.alone:
        stats.banks += cycles - timing.alone
    waited = (engine.now - arrive) - cycles
    if waited > 0:
        stats.stall += waited
        key = f"cascade {p.cascades[0][0]}"  # type: ignore[attr-defined]
        stats.stalls[key] = stats.stalls.get(key, 0) + waited
    if r.trace is not None:  # type: ignore[attr-defined]
        if begin > arrive:
            r.trace.add(r.track, f"stall {p.cascades[0][0]}", arrive, begin - arrive)  # type: ignore[attr-defined]
        r.trace.add_span(r.track, name_id, begin, run)  # type: ignore[attr-defined]


__all__ = ["Cascade", "CascadeWait", "cascade_call", "send", "take", "wait_taken"]
