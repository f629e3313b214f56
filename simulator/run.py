"""``simulate``: run a Plan on input arrays and return outputs, cycles, stats and a trace."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from simulator.build import World
from simulator.core import CoreStats
from simulator.cost import dispatch_cycles
from simulator.deadlock import explain
from simulator.engine import Process
from simulator.host import HostMove
from simulator.result import SimResult, Stats, Trace, TransferStats
from tilelang.errors import DeadlockError, KernelError, SimulationError
from tilelang.ir.calls import convert
from tilelang.ir.design import Design
from tilelang.ir.kernel import CYCLES_LIMIT
from tilelang.ir.plan import Plan

MODES = ("timed", "functional", "timing")


def simulate(plan: Plan | Design, mode: str = "timed", dispatch_overhead: bool = False, trace: bool = True,
             kernel_cycles: Mapping[str, int] | None = None, **arrays: np.ndarray) -> SimResult:
    """Run ``plan`` with real numbers: outputs, total cycles, statistics and a trace.

    Args:
        plan: a Plan (``tl.simulate`` also takes a Design and plans it first).
        mode: "timed" (the cost model; default), "functional" (numbers only, no timing) or
            "timing" (the cycles and statistics of "timed" without moving or computing any
            data: arrays are not needed, outputs are empty; for design-space exploration).
        dispatch_overhead: add the host's per-invocation dispatch (about 450 us on npu1)
            before anything starts.
        trace: record a Perfetto trace (timed and timing modes).
        kernel_cycles: cycles per call of kernels by name (measured on hardware, or by the vendor's
            simulator), used instead of the kernel cost model's (timed and timing modes). Such a call
            takes exactly these cycles: memory-bank effects are taken to be in the measurement.
        **arrays: arrays by tensor name, each in the tensor's shape. Every tensor a move
            reads must be given; tensors only written may be omitted (they start as zeros).
            float32 arrays for bf16 tensors are rounded to bf16 (nearest even).

    Returns:
        A :class:`SimResult`: ``outputs`` holds a fresh array for every tensor some
        move writes; ``cycles`` the total; ``stats`` per core, DMA channel and link;
        ``trace.save(path)`` writes the Chrome/Perfetto JSON.

    Raises:
        SimulationError: a bad mode, a missing input, unknown or ill-shaped arrays, or a
            plan the simulator cannot follow.
        DeadlockError: the design cannot progress; the message names every blocked
            core and DMA, what each waits on, and the cycle of waits.
    """
    if mode not in MODES:
        raise SimulationError(f"mode must be one of {MODES}, got {mode!r}")
    for name, flag in (("trace", trace), ("dispatch_overhead", dispatch_overhead)):
        if not isinstance(flag, bool | np.bool_):
            raise SimulationError(f"{name} must be True or False, got {flag!r}")
    if isinstance(plan, Design):
        raise SimulationError(f"simulator.simulate takes a Plan; plan design {plan.name!r} first (tl.simulate does)")
    if not isinstance(plan, Plan):
        raise SimulationError(f"simulate takes a Plan, got {type(plan).__name__}")
    timed = mode != "functional"
    data = mode != "timing"
    given = given_kernel_cycles(plan.design, kernel_cycles, mode)
    tensors = _tensors(plan.design, arrays) if data else _no_tensors(plan.design, arrays)
    tr = Trace(plan.device.clock_hz)
    world = World(plan, tensors, timed, tr if (timed and trace) else None, data, given)
    procs, end = _start(world, timed and dispatch_overhead)
    with np.errstate(all="ignore"):  # the kernel IR's semantics ignore floating-point warnings
        world.engine.run()
    if timed:
        _settle(world)
    if end["left"] > 0:
        raise DeadlockError(explain(world.engine.now, procs, world.host, _tiles(world)))
    cycles = end["at"] if timed else 0
    stats = _stats(world, cycles)
    outputs = {name: tensors[name] for name in plan.design.outputs} if data else {}
    return SimResult(outputs, cycles, stats, tr, mode, plan.device.clock_hz, plan=plan, kernel_cycles=given)


def given_kernel_cycles(design: Design, kernel_cycles: object, mode: str) -> dict[str, int]:
    """``kernel_cycles`` checked against ``design``: a dict of whole cycles by the name of a kernel it calls.

    Raises:
        SimulationError: not a mapping, a name of no kernel of the design, a value that is not a whole
            number of cycles from 0 to the kernels' limit, or any given in functional mode (it has no cycles).
    """
    if kernel_cycles is None:
        return {}
    if not isinstance(kernel_cycles, Mapping):
        raise SimulationError(f"kernel_cycles must be a dict {{kernel name: cycles per call}}, got "
                              f"{type(kernel_cycles).__name__}")
    if not kernel_cycles:
        return {}
    if mode == "functional":
        raise SimulationError("kernel_cycles sets the cycles of timed and timing runs; mode='functional' counts none")
    names = [k.name for k in design.kernels]
    unknown = sorted(str(n) for n in kernel_cycles if n not in names)
    if unknown:
        raise SimulationError(f"kernel_cycles: design {design.name!r} calls no kernel(s) {unknown}; its kernels are "
                              f"{names}")
    out: dict[str, int] = {}
    for name, c in kernel_cycles.items():
        if isinstance(c, bool | np.bool_) or not isinstance(c, int | np.integer) or not 0 <= c <= CYCLES_LIMIT:
            raise SimulationError(f"kernel_cycles[{name!r}] must be a whole number of cycles from 0 to "
                                  f"{CYCLES_LIMIT}, got {c!r}")
        out[name] = int(c)
    return out


def _no_tensors(design: Design, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Timing mode moves no data: arrays are optional, but must name tensors of the design."""
    unknown = sorted(set(arrays) - set(design.tensors))
    if unknown:
        raise SimulationError(f"design {design.name!r} has no tensor(s) {unknown}; its tensors are {list(design.tensors)}")
    return {}


def _tensors(design: Design, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A fresh array per tensor: every tensor a move reads must be given, in its exact shape;
    tensors only written (outputs) start as zeros when omitted."""
    decls = design.tensors
    unknown = sorted(set(arrays) - set(decls))
    if unknown:
        raise SimulationError(f"design {design.name!r} has no tensor(s) {unknown}; its tensors are {list(decls)}")
    missing = [n for n in design.inputs if arrays.get(n) is None]
    if missing:
        wanted = ", ".join(f"{n}=<{decls[n].shape} {decls[n].dtype}>" for n in missing)
        raise SimulationError(
            f"design {design.name!r} reads tensor(s) {missing} but no array was given for them; "
            f"pass {wanted} (np.zeros for zeros)"
        )
    out: dict[str, np.ndarray] = {}
    for name, t in decls.items():
        if name not in arrays or arrays[name] is None:
            out[name] = np.zeros(t.shape, dtype=t.dtype.numpy)
            continue
        a = np.asarray(arrays[name])
        if a.shape != t.shape:
            # Even with the right size, another shape (A.T for A) would be silently re-read in the wrong order.
            raise SimulationError(
                f"tensor {name!r} has shape {t.shape}; the array given has shape {a.shape} (reshape it yourself "
                f"if its elements are already in row-major order)"
            )
        try:
            a = convert(a, t.dtype, f"tensor {name!r}")
        except KernelError as e:
            raise SimulationError(str(e)) from None
        # row-major, whatever order the given array has: moves walk tensors as flat row-major views
        out[name] = np.array(a, dtype=t.dtype.numpy, copy=True, order="C")
    return out


def _start(world: World, dispatch: bool) -> tuple[list[Process], dict[str, int]]:
    """Create the processes; the run ends when every core and host move has finished."""
    engine = world.engine
    offset = dispatch_cycles(world.device) if dispatch else 0
    end = {"left": len(world.cores) + len(world.host.moves), "at": offset}

    def finished(_: object = None) -> None:
        end["left"] -= 1
        if end["left"] == 0:
            end["at"] = engine.now
            engine.stop()

    world.host.on_complete = lambda m: finished(m)
    procs: list[Process] = []
    for runner in world.cores:
        p = Process(engine, f"core:{runner.core.name}", "core",
                    lambda proc, r=runner: r.run(proc, engine), delay=offset)
        p.on_done = lambda proc, r=runner: _core_done(r, proc, finished)
        procs.append(p)
    for flow in world.flows:
        fp = Process(engine, f"dma:{flow.fifo}", "dma", lambda proc, f=flow: f.run(proc, engine, world.timed, world.data))
        fp.obj = flow
        procs.append(fp)
    if world.trace is not None and offset:
        world.host_track = world.trace.track("host", "dispatch")
        world.trace.add(world.host_track, "dispatch", 0, offset)
    engine.schedule(offset, world.host.start)
    if end["left"] == 0:
        engine.schedule(offset, engine.stop)
    return procs, end


def _settle(world: World) -> None:
    """Busy time of every channel and link, and the trace spans of every transfer, from the flows' records."""
    tr = world.trace
    for flow in world.flows:
        starts = np.frombuffer(flow.starts, np.int64)
        ends = np.frombuffer(flow.ends, np.int64)
        for b in (flow.stats, *(c.stats for c in flow.channels), *flow.route.links, *flow.link_stats):
            b.add(starts, ends, flow.nbytes)
        if tr is not None:
            label = tr.name_id(f"{flow.fifo} {flow.nbytes} B")
            for t in flow.tracks:
                tr.add_spans(t, label, starts, ends - starts)
    busies = [f.stats for f in world.flows] + [c.stats for c in world.channels.values()]
    busies += list(world.link_busy.values()) + list(world.network.links.values())
    for b in busies:
        b.close()


def _core_done(runner: object, proc: Process, finished: object) -> None:
    runner.stats.finished_at = proc.finished_at  # type: ignore[attr-defined]
    finished()  # type: ignore[operator]


def _tiles(world: World) -> dict[str, object]:
    tiles: dict[str, object] = {f"core:{c}": t for c, t in world.plan.placement.items()}
    return tiles


def _transfer(b: object, cycles: int) -> TransferStats:
    """Bytes, busy cycles and utilisation (busy cycles / run cycles, the one definition used)."""
    busy = b.cycles  # type: ignore[attr-defined]
    util = busy / cycles if cycles else 0.0
    return TransferStats(b.bytes, busy, b.transfers, util)  # type: ignore[attr-defined]


def _stats(world: World, cycles: int) -> Stats:
    cores: dict[str, CoreStats] = {}
    for r in world.cores:
        cores[r.core.name] = r.stats
    stream_links = {
        f"({a[0]},{a[1]})->({b[0]},{b[1]})": _transfer(busy, cycles) for (a, b), busy in world.network.links.items()
    }
    moves = {m.dma.name: _move(m) for m in world.host.moves}
    if world.trace is not None:
        _trace_moves(world.trace, world.host.moves)
        _trace_sequence(world.trace, world.host.log)
    return Stats(
        cycles=cycles,
        cores=cores,
        channels={c.name: _transfer(c.stats, cycles) for c in world.channels.values()},
        links={name: _transfer(b, cycles) for name, b in world.link_busy.items()},
        stream_links=stream_links,
        fifos={f.fifo: _transfer(f.stats, cycles) for f in world.flows},
        moves=moves,
        ddr_bytes_read=world.ddr.bytes_read,
        ddr_bytes_written=world.ddr.bytes_written,
        events=world.engine.events,
        cascades={name: _transfer(c.settle(world.trace), cycles) for name, c in world.cascades.items()},
        sequence=_sequence(world.host.log),
    )


def _sequence(log: list[tuple[str, int, int]]) -> dict[str, object]:
    """The command processor's pushes and waits, summed (``Stats.sequence``)."""
    if not log:
        return {}
    pushes = [c for what, _, c in log if what.startswith("push ")]
    # the waits that held a later push back (the sequence's closing waits hold nothing back)
    last = max(i for i, (what, _, _) in enumerate(log) if what.startswith("push "))
    waits = [(c, what.split(" ", 1)[1]) for what, _, c in log[:last] if what.startswith("dma_wait ")]
    longest = max(waits, key=lambda w: (w[0], w[1]), default=(0, ""))
    return {"pushes": len(pushes), "push_cycles": sum(pushes), "waits": len(waits),
            "wait_cycles": sum(c for c, _ in waits), "longest": longest[1], "longest_cycles": longest[0]}


def _trace_moves(trace: Trace, moves: list[HostMove]) -> None:
    """One track per fifo a move starts on: moves sharing a fifo run one after another
    (host.py), so the spans of one track never overlap."""
    tracks: dict[str, int] = {}
    for m in moves:
        if m.issued_at is None or m.completed_at is None:
            continue
        fifo = m.dma.fifos[0]
        if fifo not in tracks:
            tracks[fifo] = trace.track("host", f"moves on {fifo}")
        trace.add(tracks[fifo], f"{m.dma.name} {_move_label(m)}", m.issued_at, m.completed_at - m.issued_at)


def _trace_sequence(trace: Trace, log: list[tuple[str, int, int]]) -> None:
    """The command processor's track: its pushes and the waits that stopped it, one after another."""
    if not log:
        return
    track = trace.track("host", "runtime sequence")
    for what, start, cycles in log:
        trace.add(track, what, start, cycles)


def _move_label(m: HostMove) -> str:
    d = m.dma
    return f"{d.tensor} -> {','.join(d.fifos)}" if d.to_device else f"{d.fifos[0]} -> {d.tensor}"


def _move(m: HostMove) -> dict:
    pushed = m.issue_start if m.pushed else None
    return {"pushed": pushed, "issued": m.issued_at, "completed": m.completed_at, "bytes": m.nbytes,
            "elements": m.total}
