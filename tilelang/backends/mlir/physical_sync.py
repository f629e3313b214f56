"""Core synchronisation at the physical level: ``aie.use_lock`` on the plan's locks, elements as the plan's buffers.

Element ``i`` of a window is buffer ``(released + i) mod depth``, where
``released`` counts the elements given back so far (affine in the loops'
iteration numbers, see core_program.Count). When that index is not a constant
the buffer is picked with ``scf.index_switch``, and on AIE1 (one binary lock
per buffer) so is the lock; nothing is unrolled.

Lock protocol (resources.py): a writer acquires free slots on the producer
lock and releases filled ones on the consumer lock; a reader the reverse.
"""

from __future__ import annotations

import math

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.core_program import CoreEmitter, Count
from tilelang.backends.mlir.enums import LOCK_ACTION
from tilelang.backends.mlir.resources import BufferSet, Resources
from tilelang.backends.mlir.types import tile_memref_type
from tilelang.ir.design import Port


def use_lock(lock: object, action: str, value: int) -> None:
    """``aie.use_lock`` (blocking)."""
    attrs = {"acq_en": aie_ops.boolean(True), "action": aie_ops.i32(LOCK_ACTION[action]), "value": aie_ops.i32(value)}
    aie_ops.create("aie.use_lock", [lock], attrs)


def acquire_free(bs: BufferSet, part: str | None, n: int) -> None:
    """A writer takes ``n`` free slots (AIE2)."""
    use_lock(bs.pairs[part][0], "AcquireGreaterEqual", n)


def release_filled(bs: BufferSet, part: str | None, n: int) -> None:
    """A writer publishes ``n`` filled slots (AIE2)."""
    use_lock(bs.pairs[part][1], "Release", n)


def acquire_filled(bs: BufferSet, part: str | None, n: int) -> None:
    """A reader takes ``n`` filled slots (AIE2)."""
    use_lock(bs.pairs[part][1], "AcquireGreaterEqual", n)


def release_free(bs: BufferSet, part: str | None, n: int) -> None:
    """A reader frees ``n`` slots (AIE2)."""
    use_lock(bs.pairs[part][0], "Release", n)


def binary_acquire(lock: object, writer: bool) -> None:
    """AIE1: a writer waits for an empty buffer (0), a reader for a full one (1)."""
    use_lock(lock, "Acquire", 0 if writer else 1)


def binary_release(lock: object, writer: bool) -> None:
    """AIE1: a writer marks the buffer full (1), a reader empty (0)."""
    use_lock(lock, "Release", 1 if writer else 0)


#: Unrolling a steady loop up to this many iterations per step to make every
#: buffer (and AIE1 lock) index a constant; beyond it indices are computed.
MAX_UNROLL = 8


class PhysicalSync:
    """The :class:`~core_program.SyncLowering` of the physical level for one core."""

    def __init__(self, resources: Resources, core: str) -> None:
        self.res = resources
        self.agent = f"core:{core}"
        self.emitter: CoreEmitter | None = None

    def bind(self, emitter: CoreEmitter) -> None:
        self.emitter = emitter

    def _set(self, fifo: str) -> BufferSet:
        return self.res.core_side(fifo, self.agent)

    def _index(self, c: Count, depth: int) -> int | object:
        assert self.emitter is not None
        return self.emitter.count_value(c, depth)

    def acquire(self, fifo: str, port: Port, n: int, new: int, acquired: Count) -> None:
        if new == 0:
            return
        bs, writer = self._set(fifo), port is Port.PRODUCE
        if bs.binary:
            for t in range(new):
                self._each_lock(bs, acquired.plus(t), lambda lock, w=writer: binary_acquire(lock, w))
        elif writer:
            acquire_free(bs, None, new)
        else:
            acquire_filled(bs, None, new)

    def release(self, fifo: str, port: Port, n: int, released: Count) -> None:
        bs, writer = self._set(fifo), port is Port.PRODUCE
        if bs.binary:
            for t in range(n):
                self._each_lock(bs, released.plus(t), lambda lock, w=writer: binary_release(lock, w))
        elif writer:
            release_filled(bs, None, n)
        else:
            release_free(bs, None, n)

    def element(self, fifo: str, port: Port, index: int, released: Count, held: int) -> object:
        bs = self._set(fifo)
        at = self._index(released.plus(index), bs.depth)
        if isinstance(at, int):
            return bs.buffers[at]
        m = mlir()
        memref = tile_memref_type(bs.elem)
        switch = m.scf.IndexSwitchOp([memref], at, list(range(bs.depth)))
        with m.ir.InsertionPoint(switch.default_block):
            m.scf.YieldOp([bs.buffers[0]])  # unreachable: the index is taken modulo the depth
        for i in range(bs.depth):
            with m.ir.InsertionPoint(switch.case_block(i)):
                m.scf.YieldOp([bs.buffers[i]])
        return switch.results[0]

    def _each_lock(self, bs: BufferSet, count: Count, action: object) -> None:
        """Apply ``action`` to the lock of buffer ``count mod depth`` (an ``scf.index_switch`` when dynamic)."""
        at = self._index(count, bs.depth)
        if isinstance(at, int):
            action(bs.binary[at])  # type: ignore[operator]
            return
        m = mlir()
        switch = m.scf.IndexSwitchOp([], at, list(range(bs.depth)))
        with m.ir.InsertionPoint(switch.default_block):
            m.scf.YieldOp([])
        for i in range(bs.depth):
            with m.ir.InsertionPoint(switch.case_block(i)):
                action(bs.binary[i])  # type: ignore[operator]
                m.scf.YieldOp([])

    def unroll_factor(self, released_per_iteration: dict[str, int]) -> int:
        """Iterations after which every fifo's buffer rotation repeats (1 if that is more than MAX_UNROLL)."""
        u = 1
        for fifo, r in released_per_iteration.items():
            depth = self._set(fifo).depth
            u = math.lcm(u, depth // math.gcd(r, depth))
        return u if u <= MAX_UNROLL else 1

    def enter_loop(self, touched: set[str]) -> None:
        return None

    def exit_loop(self, touched: set[str]) -> None:
        return None
