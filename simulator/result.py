"""What a simulation returns: outputs, cycles, statistics and a Perfetto trace.

The trace is the Chrome JSON trace-event format (complete events, ``"ph":
"X"``), which ui.perfetto.dev and chrome://tracing open: one process per kind
of agent (cores, DMA channels, memtile links, host) and one track per agent.
Timestamps are microseconds at the device clock.
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tilelang.errors import SimulationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from simulator.core import CoreStats
    from simulator.explain import Explanation
    from tilelang.ir.plan import Plan

#: What "utilisation" means in every statistic and report of a simulation.
UTILISATION = ("utilisation = busy cycles / run cycles (core: in kernel calls; DMA channel, memtile link, "
               "stream link: moving data)")

#: Trace "processes", one per kind of agent, in display order.
GROUPS = ("cores", "DMA channels", "memtile links", "host", "cascades")


class Trace:
    """Spans on named tracks, stored compactly (integer arrays, plus bulk blocks).

    Spans come one at a time (:meth:`add`, :meth:`add_span`: kernel calls and
    stalls as they happen) or in blocks (:meth:`add_spans`: a flow's transfers,
    after the run). Listing them (:meth:`spans`, :meth:`events`) orders each
    track's spans by start cycle, stably.

    Attributes:
        clock_hz: converts cycles to trace microseconds.
    """

    def __init__(self, clock_hz: float) -> None:
        self.clock_hz = clock_hz
        self._tracks: list[tuple[str, str]] = []
        self._names: dict[str, int] = {}
        self._name_list: list[str] = []
        self._spans = array("q")  # (track, name id, start, duration) per span, flat: one extend per span
        self._blocks: list[tuple[int, int, np.ndarray, np.ndarray]] = []

    def track(self, group: str, name: str) -> int:
        """Register a track in ``group`` (one of :data:`GROUPS`); returns its id."""
        if group not in GROUPS:
            raise ValueError(f"unknown trace group {group!r}")
        self._tracks.append((group, name))
        return len(self._tracks) - 1

    def name_id(self, name: str) -> int:
        """The id of a span label (for :meth:`add_span` and :meth:`add_spans`)."""
        i = self._names.get(name)
        if i is None:
            i = self._names[name] = len(self._name_list)
            self._name_list.append(name)
        return i

    def add(self, track: int, name: str, start: int, dur: int) -> None:
        """One span of ``dur`` cycles from ``start`` on ``track``."""
        self.add_span(track, self.name_id(name), start, dur)

    def add_span(self, track: int, name_id: int, start: int, dur: int) -> None:
        """One span, its label given by :meth:`name_id`."""
        self._spans.extend((track, name_id, start, dur))

    def span_writer(self) -> Callable[[tuple[int, int, int, int]], None]:
        """A function taking one span as ``(track, name_id, start, dur)``: :meth:`add_span` for a
        caller that records a span per event and would otherwise pay a method call per span."""
        return self._spans.extend

    def add_spans(self, track: int, name_id: int, starts: np.ndarray, durs: np.ndarray) -> None:
        """Many spans with one label on one track."""
        if len(starts):
            self._blocks.append((track, name_id, np.asarray(starts, np.int64), np.asarray(durs, np.int64)))

    def __len__(self) -> int:
        return len(self._spans) // 4 + sum(len(b[2]) for b in self._blocks)

    def tracks(self) -> list[tuple[str, str]]:
        """(group, name) of every track, in the order they were registered."""
        return list(self._tracks)

    def _columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(track, name id, start, duration) of every span, by track then start."""
        one = np.frombuffer(self._spans, np.int64).reshape(-1, 4)
        tr, nm, st, du = [one[:, 0]], [one[:, 1]], [one[:, 2]], [one[:, 3]]
        for t, n, s, d in self._blocks:
            tr.append(np.full(len(s), t, np.int64))
            nm.append(np.full(len(s), n, np.int64))
            st.append(s)
            du.append(d)
        track, name, start, dur = (np.concatenate(c) if c else np.zeros(0, np.int64) for c in (tr, nm, st, du))
        order = np.lexsort((start, track))
        return track[order], name[order], start[order], dur[order]

    def spans(self, track_name: str | None = None) -> list[tuple[str, str, int, int]]:
        """(track, name, start cycle, duration) of every span, optionally of one track."""
        out = []
        for t, n, s, d in zip(*(c.tolist() for c in self._columns()), strict=True):
            tname = self._tracks[t][1]
            if track_name is None or tname == track_name:
                out.append((tname, self._name_list[n], s, d))
        return out

    def events(self) -> list[dict]:
        """The trace as Chrome trace-event dicts (metadata first)."""
        us = 1e6 / self.clock_hz
        out: list[dict] = []
        for pid, g in enumerate(GROUPS, start=1):
            out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": g}})
            out.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for tid, (g, name) in enumerate(self._tracks, start=1):
            pid = GROUPS.index(g) + 1
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}})
            out.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
        pids = [GROUPS.index(g) + 1 for g, _ in self._tracks]
        names = self._name_list
        for t, n, s, d in zip(*(c.tolist() for c in self._columns()), strict=True):
            out.append({"name": names[n], "ph": "X", "pid": pids[t], "tid": t + 1,
                        "ts": s * us, "dur": d * us, "args": {"cycle": s, "cycles": d}})
        return out

    def save(self, path: str | Path) -> None:
        """Write the trace as JSON (open it in ui.perfetto.dev)."""
        doc = {"traceEvents": self.events(), "displayTimeUnit": "ns",
               "otherData": {"clock_hz": self.clock_hz, "source": "tilelang simulator"}}
        Path(path).write_text(json.dumps(doc))


@dataclass
class TransferStats:
    """Bytes and busy cycles of a DMA channel, memtile link, stream link or fifo."""

    bytes: int
    busy: int
    transfers: int
    utilisation: float


@dataclass
class Stats:
    """Where the time went.

    Attributes:
        cycles: total cycles.
        cores: per core busy/stall cycles and what it stalled on.
        channels: per DMA channel ("compute (c,r) s2mm 0", ...).
        links: per memtile link (the transfers into and out of it).
        stream_links: per directed neighbour link "(c,r)->(c2,r2)"; busy while any flow
            routed over it moves data (how many of its channels the plan uses is in the
            plan's report).

    Utilisation is one thing everywhere: busy cycles over the run's cycles (:data:`UTILISATION`).
        fifos: per streamed fifo.
        moves: per host move: the cycle the runtime sequence began pushing it (``pushed``), the cycle
            its transfer began (``issued``: pushed and its fifo's earlier moves done), completion
            cycle, bytes.
        ddr_bytes_read / ddr_bytes_written: host memory traffic.
        events: simulation events processed.
        cascades: per cascade (busy while a tile moves over it).
        sequence: the runtime sequence's command processor: ``pushes``, ``push_cycles``, ``waits``
            (dma_waits that held a later push back), ``wait_cycles``, and the longest's move and cycles
            (``longest``, ``longest_cycles``); empty without a runtime sequence.
    """

    cycles: int
    cores: dict[str, CoreStats]
    channels: dict[str, TransferStats]
    links: dict[str, TransferStats]
    stream_links: dict[str, TransferStats]
    fifos: dict[str, TransferStats]
    moves: dict[str, dict]
    ddr_bytes_read: int = 0
    ddr_bytes_written: int = 0
    events: int = 0
    cascades: dict[str, TransferStats] = field(default_factory=dict)
    sequence: dict[str, object] = field(default_factory=dict)

    def sequence_line(self) -> str:
        """The runtime sequence in one line ("" without one)."""
        q = self.sequence
        if not q:
            return ""
        line = f"runtime sequence: {q['pushes']} pushes ({q['push_cycles']} cycles)"
        if q["waits"]:
            line += (f", held back {q['wait_cycles']} cycles by {q['waits']} dma_wait(s) before later pushes "
                     f"(longest: for {q['longest']}, {q['longest_cycles']} cycles)")
        return line

    def utilisation(self) -> float:
        """Mean core utilisation (busy / total cycles)."""
        if not self.cores or not self.cycles:
            return 0.0
        return sum(c.busy for c in self.cores.values()) / (len(self.cores) * self.cycles)

    def report(self) -> str:
        """A readable table of the statistics."""
        lines = [f"total cycles: {self.cycles}   events: {self.events}   mean core utilisation: "
                 f"{self.utilisation():.1%}", UTILISATION, "",
                 f"{'core':<18} {'busy':>9} {'(of which banks)':>17} {'stall':>10} {'util':>8}  stalled on"]
        for name, c in self.cores.items():
            on = ", ".join(f"{f} {n}" for f, n in sorted(c.stalls.items(), key=lambda kv: -kv[1]))
            lines.append(f"{name:<18} {c.busy:>9} {c.banks:>17} {c.stall:>10} {c.utilisation(self.cycles):>8.1%}  {on}")
        for title, table in (("DMA channel", self.channels), ("memtile link", self.links),
                             ("stream link", self.stream_links), ("cascade", self.cascades)):
            if table:
                lines += ["", f"{title:<28} {'bytes':>12} {'busy':>9} {'util':>7}"]
                for name, s in table.items():
                    lines.append(f"{name:<28} {s.bytes:>12} {s.busy:>9} {s.utilisation:>7.1%}")
        if self.sequence:
            lines += ["", self.sequence_line()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


@dataclass
class SimResult:
    """The outcome of :func:`simulator.simulate`.

    Attributes:
        outputs: a fresh array for every tensor some move writes.
        cycles: total cycles (0 in functional mode).
        stats: statistics (timing fields are zero in functional mode).
        trace: the Perfetto trace (empty in functional mode).
        mode: "timed" or "functional".
        clock_hz: the device clock, to turn cycles into seconds.
        plan: the plan simulated (for :meth:`explain`).
        kernel_cycles: the cycles per call given for kernels by name (``simulate``'s
            ``kernel_cycles``), which the run used instead of the cost model's.
    """

    outputs: dict[str, np.ndarray]
    cycles: int
    stats: Stats
    trace: Trace
    mode: str
    clock_hz: float
    extra: dict = field(default_factory=dict)
    plan: Plan | None = None
    kernel_cycles: dict[str, int] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Simulated time at the device clock."""
        return self.cycles / self.clock_hz

    def explain(self) -> Explanation:
        """Where every cycle went: the critical path's share per cause and a one-line verdict
        (:func:`simulator.explain.explain`; ``print(res.explain())`` for the table).

        Raises:
            SimulationError: the run was not timed, or the result carries no plan.
        """
        from simulator.explain import explain

        if self.plan is None:
            raise SimulationError("this result carries no plan; call simulator.explain.explain(result, plan)")
        return explain(self, self.plan)

    def __repr__(self) -> str:
        return (f"SimResult(cycles={self.cycles}, outputs={sorted(self.outputs)}, "
                f"utilisation={self.stats.utilisation():.1%}, mode={self.mode!r})")
