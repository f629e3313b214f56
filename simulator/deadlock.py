"""Explain a design that cannot progress.

When no event is left but some core or host move has not finished, every
blocked agent is named with the fifo and state it waits on, and the cycle of
waits is found in the wait-for graph (an agent waits for whoever can wake it:
the writers of a ring it needs data from, the readers of a ring it needs room
in, the flow holding a channel it needs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.dma import Channel
from simulator.engine import Process
from simulator.host import HostQueue
from simulator.memory import Ring

if TYPE_CHECKING:
    from simulator.host import Host, HostMove


def _wakers(proc: Process, host: Host) -> list[str]:
    """Agents that could wake ``proc`` from what it sleeps on."""
    sig = proc.waiting
    if sig is None:
        return []
    owner = sig.owner
    if isinstance(owner, Ring):
        sides = owner.writers if sig is owner.data else owner.readers
        return [s.agent for s in sides]
    if isinstance(owner, Channel):
        return [f"dma:{owner.user}"] if owner.user else []
    if isinstance(owner, HostQueue):
        return _host_wakers(owner, host)
    if hasattr(owner, "wakers"):  # a cascade (simulator/cascade.py)
        return owner.wakers(sig)
    return []


def _host_wakers(q: HostQueue, host: Host) -> list[str]:
    if q.head >= len(q.moves):
        return []
    m = q.moves[q.head]
    if m.issued_at is None:
        return [f"dma:{f}" for p in m.waiting_on if not p.complete for f in p.dma.fifos]
    return [f"dma:{f}" for f in m.dma.fifos if f != q.fifo]


def _find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One cycle of the graph (its nodes in order, first repeated last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in graph.get(n, []):
            if m not in graph:
                continue
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in graph:
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def _relevant(proc: Process, nodes: set[str], wakers: list[str]) -> bool:
    """Whether a blocked process is part of the jam (a DMA idle after its producer finished is not)."""
    if proc.kind != "dma" or proc.waiting is None:
        return True
    owner = proc.waiting.owner
    if isinstance(owner, Ring) and proc.waiting is owner.data:
        return any(w in nodes for w in wakers)
    if isinstance(owner, HostQueue):
        return owner.head < len(owner.moves) or bool(getattr(proc.obj, "holding", False))
    return True


def explain(now: int, procs: list[Process], host: Host, tiles: dict[str, object]) -> str:
    """The deadlock message: blocked cores, DMAs and moves, and the cycle of waits.

    Args:
        now: the cycle nothing could progress after.
        procs: every core and flow process.
        host: the runtime sequence.
        tiles: agent name -> tile, for the report.
    """
    blocked = [p for p in procs if not p.done and p.waiting is not None]
    wakers = {p.name: _wakers(p, host) for p in blocked}
    nodes = {p.name for p in blocked}
    shown = [p for p in blocked if _relevant(p, nodes, wakers[p.name])]
    graph = {p.name: [w for w in wakers[p.name] if w != p.name] for p in shown}
    cores = [p for p in shown if p.kind == "core"]
    dmas = [p for p in shown if p.kind == "dma"]
    moves: list[HostMove] = [m for m in host.moves if not m.complete]
    lines = [f"deadlock at cycle {now}: nothing can progress; {len(cores)} core(s), {len(dmas)} DMA(s) and "
             f"{len(moves)} host move(s) are blocked"]
    for p in cores:
        lines.append(f"  core {p.name[5:]!r} on tile {tiles.get(p.name)}: {p.reason()}")
    for p in dmas:
        lines.append(f"  DMA of fifo {p.name[4:]!r}: {p.reason()}")
    unpushed = [m for m in moves if m.issued_at is None and not m.pushed]
    for m in moves:
        if m.issued_at is not None or m.pushed:
            lines.append(f"  host move {m.dma.name!r} ({_move_text(m)}): {_move_state(m)}")
    if unpushed:
        names = ", ".join(repr(m.dma.name) for m in unpushed[:4]) + (", ..." if len(unpushed) > 4 else "")
        lines.append(f"  {len(unpushed)} host move(s) not yet pushed by the runtime sequence: {names}")
    if host.waiting is not None:
        w = host.waiting
        later = host.commands_left() - 1
        lines.append(f"  runtime sequence: dma_wait for dma {w.dma.name!r} (fifo {w.fifo!r}, shim channel "
                     f"{w.channel}) to complete; {later} later command(s) not run. The wait frees a buffer "
                     f"descriptor for the channel's next move (a channel holds {host.ring_of(w.channel)} moves at "
                     f"once); fewer, larger moves on fifo {w.fifo!r} need none")
    cycle = _find_cycle(graph)
    if cycle:
        lines.append("wait cycle: " + " -> ".join(cycle))
        by_name = {p.name: p for p in shown}
        for a, b in zip(cycle, cycle[1:], strict=False):
            lines.append(f"  {a} waits for {_waited(by_name[a])} from {b}")
    return "\n".join(lines)


def _waited(proc: Process) -> str:
    """What a blocked process waits for, in a few words (one edge of the wait cycle)."""
    sig = proc.waiting
    owner = sig.owner if sig is not None else None
    if isinstance(owner, Ring):
        what = "data" if sig is owner.data else "a free buffer"
        return f"{what} of fifo {owner.fifo!r}"
    if isinstance(owner, Channel):
        return f"DMA channel {owner.name}"
    if isinstance(owner, HostQueue):
        return f"a host move on fifo {owner.fifo!r}"
    return sig.name if sig is not None else "nothing"


def _move_text(m: HostMove) -> str:
    d = m.dma
    if d.to_device:
        return f"{d.tensor} -> {', '.join(d.fifos)}"
    return f"{d.fifos[0]} -> {d.tensor}"


def _move_state(m: HostMove) -> str:
    if m.issued_at is None:
        return "not issued: waits for " + ", ".join(repr(p.dma.name) for p in m.waiting_on if not p.complete)
    if m.dma.to_device:
        sent = ", ".join(f"{f} {n}" for f, n in m.sent.items())
        return f"sent {sent} of {m.total} elements"
    return f"received {m.landed} of {m.total} elements"
