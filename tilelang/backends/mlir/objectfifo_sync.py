"""Core synchronisation at the objectfifo level: ``aie.objectfifo.acquire`` / ``subview.access`` / ``release``.

An element is read through the subview of the latest acquire of its fifo that
is in scope, at index ``i + (elements released since that acquire)``. Where no
such subview is in scope (after a loop that acquired or released the fifo, or
at the top of such a loop's body) a fresh ``acquire`` of exactly the held
count gives one: mlir-aie acquires only the difference, so it takes nothing new.
"""

from __future__ import annotations

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir.core_program import Count
from tilelang.backends.mlir.enums import OBJECTFIFO_PORT
from tilelang.backends.mlir.types import tile_memref_type
from tilelang.ir.design import Design, Port


class ObjectFifoSync:
    """The :class:`~core_program.SyncLowering` of the objectfifo level."""

    def __init__(self, design: Design, symbols: dict[str, str]) -> None:
        self.design = design
        self.symbols = symbols  # fifo name -> its aie.objectfifo symbol
        # Innermost scope last: fifo -> (subview, elements released since), or None when stale.
        self.scopes: list[dict[str, tuple[object, int] | None]] = [{}]

    def _types(self, fifo: str) -> tuple[object, object]:
        memref = tile_memref_type(self.design.fifo(fifo).elem)
        return memref, aie_ops.subview_type(memref)

    def _attrs(self, fifo: str, port: Port, n: int) -> dict[str, object]:
        return {
            "objFifo_name": aie_ops.symbol(self.symbols[fifo]),
            "port": aie_ops.i32(OBJECTFIFO_PORT[port.value]),
            "size": aie_ops.i32(n),
        }

    def _lookup(self, fifo: str) -> tuple[object, int] | None:
        for scope in reversed(self.scopes):
            if fifo in scope:
                return scope[fifo]
        return None

    def acquire(self, fifo: str, port: Port, n: int, new: int, acquired: Count) -> None:
        _, sv_type = self._types(fifo)
        sv = aie_ops.create("aie.objectfifo.acquire", attrs=self._attrs(fifo, port, n), results=[sv_type]).result
        self.scopes[-1][fifo] = (sv, 0)

    def release(self, fifo: str, port: Port, n: int, released: Count) -> None:
        aie_ops.create("aie.objectfifo.release", attrs=self._attrs(fifo, port, n))
        hit = self._lookup(fifo)
        if hit is not None:
            self.scopes[-1][fifo] = (hit[0], hit[1] + n)

    def element(self, fifo: str, port: Port, index: int, released: Count, held: int) -> object:
        hit = self._lookup(fifo)
        if hit is None:
            self.acquire(fifo, port, held, 0, Count())
            hit = self._lookup(fifo)
        assert hit is not None
        sv, since = hit
        memref, _ = self._types(fifo)
        op = aie_ops.create("aie.objectfifo.subview.access", [sv], {"index": aie_ops.i32(index + since)}, [memref])
        return op.result

    def enter_loop(self, touched: set[str]) -> None:
        self.scopes.append(dict.fromkeys(touched))

    def unroll_factor(self, released_per_iteration: dict[str, int]) -> int:
        return 1  # mlir-aie's objectfifo lowering unrolls as it needs

    def exit_loop(self, touched: set[str]) -> None:
        self.scopes.pop()
        for f in touched:
            self.scopes[-1][f] = None
