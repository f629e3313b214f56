"""Memory-bank contention between running kernel calls and the DMA transfers on their tile.

Each data-memory bank serves one access per cycle and arbitrates round-robin
between requesters, stalling the losers for a cycle ([AM020] "Memory
Arbitration"). A kernel call's timing (``cost.call_timing``) already charges
its own accesses per bank; this module adds the DMA's. While a transfer
streams into or out of a buffer in a bank a running call also uses, the DMA
takes one bank cycle per ``DMA_ACCESS_BYTES`` it moves; when that pushes the
bank's total past the call's busiest resource, the call ends later by the
difference. The DMA is not slowed: its 32-bit stream needs the bank once every
few cycles and the stream switch's FIFOs ([AM020] "Stream Switch Buffering")
absorb a lost cycle, while a load-bound kernel has no slack.

Each (call, transfer) pair is charged once, by whichever starts second, for
the cycles their intervals overlap (the call's end as known then).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable

from simulator.cost import DMA_ACCESS_BYTES, CallTiming

#: Records kept per bank before the finished ones are dropped (finished ones only cost a
#: comparison each; dropping them at every step would cost an allocation each).
_PRUNE_AT = 4


class RunningCall:
    """A kernel call in progress and the DMA cycles charged to its banks.

    Attributes:
        start: the cycle it started.
        end: the cycle it ends, contention included so far.
        timing: its cycles without contention, bound and per-bank demand.
        extra: cycles the DMA's accesses add to it so far.
    """

    __slots__ = ("_dma", "end", "extra", "start", "timing", "worst")

    def __init__(self, start: int, timing: CallTiming) -> None:
        self.start = start
        self.end = start + timing.cycles
        self.timing = timing
        self.extra = 0
        self._dma: dict[Hashable, float] | None = None  # made at the first charge: most calls get none
        self.worst = -math.inf

    @property
    def dma(self) -> dict[Hashable, float]:
        """DMA cycles charged per bank so far."""
        return self._dma if self._dma is not None else {}

    def charge(self, bank: Hashable, cycles: float) -> None:
        """Add ``cycles`` of DMA accesses to ``bank``; the call ends later if the bank now binds."""
        dma = self._dma
        if dma is None:
            dma = self._dma = {}
        c = dma[bank] = dma.get(bank, 0.0) + cycles
        t = self.timing
        # The busiest charged bank: charges only grow (cycles > 0), so the maximum over the charged
        # banks is the old maximum or this bank's new total, each summed exactly as a full scan would.
        here = t.banks[bank] + c
        if here <= self.worst:
            return
        self.worst = here
        extra = math.ceil(here - t.bound)
        if extra > self.extra:
            self.end += extra - self.extra
            self.extra = extra


class _Bank:
    """One bank's running calls and transfers in flight (finished ones stay listed until pruned)."""

    __slots__ = ("calls", "transfers", "until")

    def __init__(self) -> None:
        self.calls: list[RunningCall] = []
        self.transfers: list[tuple[int, int, float]] = []
        #: the latest end of a transfer registered here: a call starting at or after it overlaps
        #: none, and every transfer record of the bank is finished
        self.until = 0


class Contention:
    """Running calls and transfers in flight, per memory bank.

    Attributes:
        watched: the banks some kernel call can touch; transfers elsewhere are ignored.
    """

    def __init__(self, watched: set[Hashable]) -> None:
        self.watched = watched
        #: banks some flow's buffers are in: no transfer touches any other, so a call is registered on these only
        self.dma_banks: set[Hashable] = set()
        self._banks: dict[Hashable, _Bank] = {}

    def records(self, banks: Iterable[Hashable]) -> tuple[tuple[Hashable, _Bank], ...]:
        """``(bank, its record)`` of each of ``banks``, for :meth:`call_started` and :meth:`transfer_started`:
        a caller that starts many calls or transfers on the same banks looks them up once."""
        out = []
        for bank in banks:
            rec = self._banks.get(bank)
            if rec is None:
                rec = self._banks[bank] = _Bank()
            out.append((bank, rec))
        return tuple(out)

    def call_started(self, now: int, timing: CallTiming, banks: tuple | None = None) -> RunningCall:
        """Register a call starting now; charge it for transfers already in flight on its banks
        (``banks``: :meth:`records` of those of them to watch, default all)."""
        call = RunningCall(now, timing)
        for bank, rec in self.records(timing.banks) if banks is None else banks:
            live = rec.transfers
            if live:
                if rec.until <= now:  # every transfer there has finished: drop them (they charge nothing more)
                    live.clear()
                else:
                    for _, end, per_cycle in live:
                        if end > now:  # (finished transfers stay listed until pruned)
                            ce = call.end
                            overlap = (end if end < ce else ce) - now
                            if overlap > 0:
                                call.charge(bank, overlap * per_cycle)
            running = rec.calls
            if len(running) >= _PRUNE_AT:  # (a loop, not a comprehension: no frame)
                keep = []
                for c in running:
                    if c.end > now:
                        keep.append(c)
                running[:] = keep
            running.append(call)
        return call

    def transfer_started(self, banks: Iterable[Hashable], start: int, end: int, bytes_per_cycle: float) -> None:
        """Register a transfer over ``[start, end)`` touching ``banks``; charge the calls running there (a
        transfer on a bank no call watches charges nothing)."""
        self.transfer_on(self.records(b for b in banks if b in self.watched), start, end, bytes_per_cycle)

    def transfer_on(self, banks: tuple[tuple[Hashable, _Bank], ...], start: int, end: int,
                    bytes_per_cycle: float) -> None:
        """:meth:`transfer_started` on :meth:`records` of watched banks (a flow's, looked up once)."""
        per_cycle = bytes_per_cycle / DMA_ACCESS_BYTES
        for bank, rec in banks:
            for call in rec.calls:
                ce = call.end
                if ce <= start:  # finished (stays listed until pruned)
                    continue
                cs = call.start
                overlap = (end if end < ce else ce) - (start if start > cs else cs)
                if overlap > 0:
                    call.charge(bank, overlap * per_cycle)
            live = rec.transfers
            if len(live) >= _PRUNE_AT:
                keep = []
                for t in live:
                    if t[1] > start:
                        keep.append(t)
                live[:] = keep
            live.append((start, end, per_cycle))
            if end > rec.until:
                rec.until = end
