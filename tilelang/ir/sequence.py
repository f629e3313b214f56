"""The host runtime sequence as the command processor runs it: pushes, BD ids and waits.

On a device with a runtime sequence (``Device.host_sequence``: the NPUs), the host's
moves reach the shim DMAs as commands run one after another by the array's
command processor: a push writes a transfer's buffer descriptor and puts its task
on a channel's queue (``aiex.npu.dma_memcpy_nd``); a wait stops the processor
until a transfer that issued a token has completed (``aiex.npu.dma_wait``, which
mlir-aie lowers to ``npu.sync``). This module decides those commands once, from
the plan; the MLIR emitter writes them and the simulator runs them, so the cycles
the simulator reports are those of the sequence the module holds.

The rules (device data: ``Device.buffer_descriptors`` and the ``host_memory``'s
``task_queue``):

- one transfer per move and shim channel (a move into several fifos the plan
  feeds from one channel is sent once, the route broadcasts it), or, at mlir-aie's
  objectfifo level, one per move and fifo;
- each shim channel draws BD ids from its own ring: the shim's BDs shared out
  among the channels used there, and no longer than the channel's task queue, so
  a push never finds the queue full (AM020: "queue depth is four tasks per
  channel"); a push that reuses a ring slot first waits for the transfer that
  held it, and so for every earlier transfer of the channel, which completes in
  order;
- the fifos advance together: a transfer is pushed at the point of the sequence
  that is as far into every fifo's host traffic as it is into its own (program
  order where they tie). A wait is then only ever for a
  transfer whose data the cores needed before the one being pushed, so it does
  not stall the moves that would let it complete, as program order can (a design
  writing all of one column's B transfers before the next column's waits on B
  data that cannot drain while the next column starves the A broadcast they share);
- at the end the sequence waits for the last transfer of every channel.

A device without a runtime sequence (AIE1: static shim BD chains) has every move
pushed at the start, in program order, with no waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tilelang.errors import PlanError
from tilelang.ir.design import Dma
from tilelang.ir.plan import FifoEnd, Plan
from tilelang.ir.verify import HOST

Coord = tuple[int, int]
Channel = tuple[Coord, str, int]  # (shim tile, "mm2s" | "s2mm", channel index)


@dataclass(frozen=True)
class Transfer:
    """One transfer of a move: the fifos it feeds or drains through one shim channel.

    Attributes:
        order: its index in program order among the sequence's transfers.
        dma: the move.
        fifos: the move's fifos this transfer carries.
        channel: the shim channel.
    """

    order: int
    dma: Dma
    fifos: tuple[str, ...]
    channel: Channel

    @property
    def fifo(self) -> str:
        """Its first fifo (the only one at the objectfifo level)."""
        return self.fifos[0]


@dataclass(frozen=True)
class Push:
    """Write ``transfer``'s BD ``bd`` and push its task; ``token``: it reports its completion
    (a later :class:`Wait` takes the report)."""

    transfer: Transfer
    bd: int
    token: bool


@dataclass(frozen=True)
class Wait:
    """Stop the command processor until ``transfer`` (and every earlier transfer of its channel) completed."""

    transfer: Transfer


@dataclass(frozen=True)
class HostSequence:
    """The runtime sequence: its transfers in program order and the commands that run them."""

    transfers: tuple[Transfer, ...]
    commands: tuple[Push | Wait, ...]
    ring: dict[Channel, int]

    def pushes(self) -> list[Push]:
        return [c for c in self.commands if isinstance(c, Push)]


def host_end(plan: Plan, fifo: str, to_device: bool) -> FifoEnd:
    """The host's end of ``fifo`` in the plan.

    Raises:
        PlanError: the plan has no host end with a DMA channel for it.
    """
    fp = plan.fifos[fifo]
    ends = [fp.producer] if to_device else list(fp.consumers)
    for e in ends:
        if e.agent == HOST:
            if e.channel is None:
                raise PlanError(f"the plan gives the host end of fifo {fifo!r} no shim DMA channel")
            return e
    raise PlanError(f"the plan has no host end for fifo {fifo!r}")


def host_transfers(plan: Plan, per_channel: bool = True) -> list[Transfer]:
    """Every transfer of the runtime sequence, in program order (PLIO moves have none: the PL side moves them).

    Args:
        plan: the plan.
        per_channel: one transfer per shim channel a move uses; else one per fifo
            (mlir-aie's objectfifo level, where every objectfifo has its own channel).

    Raises:
        PlanError: a fifo has no host end with a channel.
    """
    out: list[Transfer] = []
    for d in plan.design.dmas:
        if d.plio:
            continue
        direction = "mm2s" if d.to_device else "s2mm"
        by_channel: dict[Channel, list[str]] = {}
        for f in d.fifos:
            end = host_end(plan, f, d.to_device)
            ch: Channel = (end.tile, direction, end.channel)  # type: ignore[assignment]
            if per_channel:
                by_channel.setdefault(ch, []).append(f)
            else:
                out.append(Transfer(len(out), d, (f,), ch))
        for ch, fifos in by_channel.items():
            out.append(Transfer(len(out), d, tuple(fifos), ch))
    return out


def bd_rings(plan: Plan, transfers: list[Transfer]) -> tuple[dict[Channel, int], dict[Channel, int]]:
    """(first BD id, ring size) of every channel: each shim's BDs shared out among its channels,
    each share no longer than a channel's task queue.

    Raises:
        PlanError: a shim has more channels in use than BDs.
    """
    queue = plan.device.host_memory.task_queue if plan.device.host_memory is not None else 0
    by_tile: dict[Coord, list[Channel]] = {}
    for t in transfers:
        chans = by_tile.setdefault(t.channel[0], [])
        if t.channel not in chans:
            chans.append(t.channel)
    base: dict[Channel, int] = {}
    size: dict[Channel, int] = {}
    for tile, chans in by_tile.items():
        bds = plan.device.buffer_descriptors(tile)
        share = bds // len(chans)
        if share < 1:
            raise PlanError(f"shim {tile} has {bds} buffer descriptors for {len(chans)} channels")
        for i, ch in enumerate(sorted(chans, key=lambda c: (c[1], c[2]))):
            base[ch], size[ch] = i * share, min(share, queue) if queue else share
    return base, size


def issue_order(transfers: list[Transfer]) -> list[Transfer]:
    """The order the sequence pushes transfers: every fifo advances at its own pace, together.

    A transfer's place is how far into its fifo's host traffic it starts (the elements the
    fifo's earlier transfers move, over all of them): a quarter of the way into A is pushed
    with a quarter of the way into B and into C. Transfers starting at the same point go
    in program order.
    """
    total: dict[str, int] = {}
    for t in transfers:
        total[t.fifo] = total.get(t.fifo, 0) + t.dma.pattern.numel
    done: dict[str, int] = {}
    keyed = []
    for t in transfers:
        start = done.get(t.fifo, 0)
        done[t.fifo] = start + t.dma.pattern.numel
        keyed.append((Fraction(start, total[t.fifo]), t.order, t))
    keyed.sort(key=lambda k: k[:2])
    return [k[2] for k in keyed]


def host_sequence(plan: Plan, per_channel: bool = True) -> HostSequence:
    """The plan's runtime sequence (module docstring).

    Raises:
        PlanError: a fifo has no host end with a channel, or a shim has more channels than BDs.
    """
    transfers = host_transfers(plan, per_channel)
    if not plan.device.host_sequence:
        commands = tuple(Push(t, -1, False) for t in transfers)
        return HostSequence(tuple(transfers), commands, {})
    base, ring = bd_rings(plan, transfers)
    pushes: list[tuple[Transfer, int]] = []
    waits_before: dict[int, Transfer] = {}  # push index -> the transfer waited for just before it
    history: dict[Channel, list[Transfer]] = {}
    waited: dict[Channel, int] = {}  # transfers of the channel known complete
    for t in issue_order(transfers):
        past = history.setdefault(t.channel, [])
        n, r = len(past), ring[t.channel]
        if n >= r and waited.get(t.channel, 0) <= n - r:
            waits_before[len(pushes)] = past[n - r]
            waited[t.channel] = n - r + 1
        pushes.append((t, base[t.channel] + n % r))
        past.append(t)
    final = [h[-1] for ch, h in history.items() if waited.get(ch, 0) < len(h)]
    final.sort(key=lambda t: t.order)
    tokens = {id(t) for t in waits_before.values()} | {id(t) for t in final}
    commands: list[Push | Wait] = []
    for i, (t, bd) in enumerate(pushes):
        if i in waits_before:
            commands.append(Wait(waits_before[i]))
        commands.append(Push(t, bd, id(t) in tokens))
    commands.extend(Wait(t) for t in final)
    return HostSequence(tuple(transfers), tuple(commands), ring)


__all__ = ["Channel", "HostSequence", "Push", "Transfer", "Wait", "bd_rings", "host_end", "host_sequence",
           "host_transfers", "issue_order"]
