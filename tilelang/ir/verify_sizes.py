"""Size limits of a design: what would make planning, simulation or emission run without end.

A design parsed from edited text can declare any integer. Every stage does
work in proportion to some declared size (a simulator steps a core through
its loops and moves every element a host move names; the emitter factors
pattern sizes; the planner counts buffers), so absurd sizes are rejected
here, before any stage runs, with the limit named:

- loop bounds and steps fit a 32-bit signed integer (a core's loop counter
  is a 32-bit register: AIE cores are 32-bit scalar processors, AM009/AM020
  "scalar unit"); a loop may have zero trips (Python's ``range``, which
  ``tl.range`` mirrors, and the printer/parser keep such loops as written);
- a core executes at most ``MAX_CORE_STEPS`` statements over a run (its
  statements times the enclosing trip counts): the simulator takes a few
  microseconds per statement, so this bounds a timed simulation to about two minutes;
- a host move carries at most ``MAX_MOVE_ELEMENTS`` elements, repeats
  included (the simulator holds the element offsets of a move in memory);
- a fifo's ``depth`` buffers fit in the largest data memory of any tile of
  the device, which is where its buffers would have to go, and its locks fit the
  device's: a semaphore lock counts to the depth (AIE-ML: at most 63), a binary
  lock guards one buffer (AIE1: a tile's 16 locks), as ``descriptors.set_locks`` counts them.
"""

from __future__ import annotations

from tilelang.devices import Device
from tilelang.errors import DesignError
from tilelang.ir.design import Core, Design, Loop, Stmt
from tilelang.ir.source import at

#: Loop bounds and steps: a 32-bit signed loop counter.
LOOP_LIMIT = 2**31 - 1
#: Statements one core may execute over a run, loops unrolled: the timed simulator takes about 10 us a
#: statement (vector_scalar_mul, 16-element tiles, 100,000 iterations: 4.8 s), so under two minutes.
#: The library's designs at benchmark sizes need at most 689 (benchmarks/library_bench.py).
MAX_CORE_STEPS = 10**7
#: Elements one host move may carry, repeats included: the simulator, and the verifier's race checks,
#: hold 8 bytes of offset per element (512 MiB at the limit). The library's designs at benchmark sizes
#: move at most 524,288.
MAX_MOVE_ELEMENTS = 2**26
#: Statements a core body may hold as traced, and host moves a design may hold: Python loops unroll while a
#: design is traced (``tl.range`` makes an IR loop), so a ``while True`` would trace without end. The
#: library's 8192^3 npu2 GEMM issues 33,408 host moves; its cores hold about 20 statements.
MAX_TRACED = 200_000


def verify_sizes(design: Design) -> None:
    """Reject sizes that no stage could handle in bounded time and memory.

    Raises:
        DesignError: naming the entity, its size and the limit.
    """
    for c in design.cores:
        _check_loops(c, c.body)
        steps = core_steps(c.body)
        if steps > MAX_CORE_STEPS:
            raise DesignError(
                f"core {c.name!r}{at(c.loc)}: its loops execute {steps} statements over a run, more than the limit of "
                f"{MAX_CORE_STEPS} (tilelang.ir.verify_sizes.MAX_CORE_STEPS) a simulation can step through; "
                f"use fewer or shorter loops (larger tiles)"
            )
    for d in design.dmas:
        n = d.pattern.numel
        if n > MAX_MOVE_ELEMENTS:
            raise DesignError(
                f"dma {d.name!r}{at(d.loc)}: moves {n} elements (sizes {list(d.pattern.sizes)} x repeat {d.pattern.repeat_count}), "
                f"more than the limit of {MAX_MOVE_ELEMENTS} (tilelang.ir.verify_sizes.MAX_MOVE_ELEMENTS); "
                f"use a smaller pattern or repeat"
            )
    _check_depths(design)


def core_steps(body: tuple[Stmt, ...]) -> int:
    """Statements a body executes, each loop's body counted once per trip (the loop itself once)."""
    total = 0
    for s in body:
        total += 1
        if isinstance(s, Loop):
            total += s.trip_count * core_steps(s.body)
    return total


def _check_loops(core: Core, body: tuple[Stmt, ...]) -> None:
    for s in body:
        if not isinstance(s, Loop):
            continue
        for what, v in (("start", s.start), ("stop", s.stop), ("step", s.step)):
            if not -LOOP_LIMIT - 1 <= v <= LOOP_LIMIT:
                raise DesignError(
                    f"core {core.name!r}{at(core.loc)}: loop {what} {v} is outside the 32-bit range "
                    f"[{-LOOP_LIMIT - 1}, {LOOP_LIMIT}] of a core's loop counter"
                )
        _check_loops(core, s.body)


def _check_depths(design: Design) -> None:
    dev = design.device
    largest = max(dev.memory_bytes(t) for t in dev.tiles())
    limit = depth_limit(dev)
    for f in design.fifos:
        need = f.depth * f.elem.nbytes
        if need > largest:
            raise DesignError(
                f"fifo {f.name!r}{at(f.loc)}: depth {f.depth} x {f.elem.nbytes} B = {need} B, more than the largest data memory "
                f"of any tile of {dev.name} ({largest} B), where its buffers would have to go; reduce the depth"
            )
        if f.depth > limit:
            raise DesignError(f"fifo {f.name!r}{at(f.loc)}: depth {f.depth} is more than {dev.name} allows, at most "
                              f"{limit}: {_lock_rule(dev)}; reduce the depth to {limit} or less")


def depth_limit(device: Device) -> int:
    """The deepest fifo ``device``'s locks can synchronise: a semaphore lock's largest count, or with binary
    locks (one per buffer, on the tile holding the buffers) the most locks any tile with data memory has."""
    if device.lock_max > 1:
        return device.lock_max
    return max(device.locks(t) for t in device.tiles() if device.tile_kind(t) != "shim")


def _lock_rule(device: Device) -> str:
    """Why :func:`depth_limit` is what it is, for a message."""
    if device.lock_max > 1:
        return (f"its buffers are counted by a semaphore lock, and {device.name}'s locks count to at most "
                f"{device.lock_max}")
    return (f"{device.name}'s locks are binary, one per buffer on the tile holding the buffers, and a tile has at "
            f"most {depth_limit(device)} locks")
