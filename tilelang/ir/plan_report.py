"""``Plan.report()``: a readable text summary of every decision."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tilelang.ir.core_grid import grid_note

if TYPE_CHECKING:
    from tilelang.ir.plan import Plan


def natural_key(name: str) -> tuple:
    """Sort key reading digit runs as numbers: ``w_core2`` before ``w_core10``."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name) if p)


def _table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return []
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [title, line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return [*out, ""]


def _natural(items: object) -> list:
    """(name, value) pairs in natural name order."""
    return sorted(items, key=lambda kv: natural_key(kv[0]))  # type: ignore[arg-type]


def _t(tile: tuple[int, int] | None) -> str:
    return "-" if tile is None else f"({tile[0]},{tile[1]})"


def _covered(spans: list[tuple[int, int]]) -> int:
    """Bytes covered by the union of ``spans``."""
    total, end = 0, -1
    for lo, hi in sorted(spans):
        if hi > end:
            total += hi - max(lo, end)
            end = hi
    return total


def onchip_bytes(plan: Plan) -> int:
    """Bytes of tile memory the plan's buffers cover (packed buffers counted once; stacks not included)."""
    spans: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for b in plan.buffers.values():
        spans.setdefault(b.tile, []).append((b.offset, b.end))
    return sum(_covered(s) for s in spans.values())


def memory_rows(plan: Plan) -> list[list[str]]:
    """Per tile holding buffers: bytes allocated (stack included), its capacity, the core's local buffers packed
    and apart, and the core's peak live bytes."""
    from tilelang.devices.abi import STACK_BYTES, align
    from tilelang.ir.liveness import liveness

    d = plan.design
    kernels = {k.name: k for k in d.kernels}
    fifos = {f.name: f for f in d.fifos}
    on_tile = {t: c for c, t in plan.placement.items()}
    spans: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for b in plan.buffers.values():
        spans.setdefault(b.tile, []).append((b.offset, b.end))
    rows = []
    for tile in sorted(spans):
        core = d.core(on_tile[tile]) if tile in on_tile else None
        stack = STACK_BYTES if core is not None else 0
        local = [plan.buffers[b.name] for b in core.buffers] if core is not None else []
        packed = _covered([(b.offset, b.end) for b in local])
        apart = sum(align(b.nbytes) for b in core.buffers) if core is not None else 0
        peak = liveness(core, kernels, fifos).peak() if core is not None else 0
        rows.append([_t(tile), core.name if core is not None else "-", str(_covered(spans[tile]) + stack),
                     str(d.device.memory_bytes(tile)), str(packed) if local else "-", str(apart) if local else "-",
                     str(peak) if core is not None else "-"])
    return rows


def render(plan: Plan) -> str:
    d = plan.design
    lines = [f"plan of {d.name} on {d.device.name} ({d.device.cols}x{d.device.rows})", ""]
    lines += _table("cores", ["core", "tile"], [[c, _t(t)] for c, t in _natural(plan.placement.items())])
    note = grid_note(plan.placement)
    if note:
        lines[-1:] = [note, ""]
    lines += _table("links", ["link", "memtile"], [[k, _t(t)] for k, t in _natural(plan.link_tiles.items())])
    rows = []
    for _, f in _natural(plan.fifos.items()):
        cons = ", ".join(f"{c.agent}@{_t(c.tile)}" + (f" ch{c.channel}" if c.channel is not None else "") for c in f.consumers)
        prod = f"{f.producer.agent}@{_t(f.producer.tile)}" + (
            f" ch{f.producer.channel}" if f.producer.channel is not None else ""
        )
        rows.append([f.name, prod, cons, f"shared {_t(f.shared_tile)}" if f.shared else "streamed"])
    lines += _table("fifos", ["fifo", "producer", "consumers", "carried"], rows)
    from tilelang.ir.cascade import cascade_ends

    cascades = [[n, f"core:{e.producer}@{_t(plan.placement.get(e.producer))}",
                 f"core:{e.consumer}@{_t(plan.placement.get(e.consumer))}", str(e.sent)]
                for n, e in _natural(cascade_ends(d).items())]
    lines += _table("cascades", ["cascade", "producer", "consumer", "tiles"], cascades)
    lines += _table(
        "buffers",
        ["buffer", "tile", "bank", "offset", "bytes"],
        [[n, _t(b.tile), str(b.bank), str(b.offset), str(b.size)] for n, b in _natural(plan.buffers.items())],
    )
    lines += _table("memory (bytes; peak live: the most a core's program holds during one call, its local buffers "
                    "and the fifo elements it has acquired)",
                    ["tile", "core", "allocated", "capacity", "local packed", "local apart", "peak live"],
                    memory_rows(plan))
    lines += _table(
        "routes",
        ["flow", "source", "dests", "links"],
        [[n, _t(r.source), " ".join(_t(x) for x in r.dests), str(len(r.links))] for n, r in _natural(plan.routes.items())],
    )
    usage = plan.link_usage()
    if usage:
        worst = max(usage.values())
        lines.append(f"links used: {len(usage)}, wirelength {sum(len(r.links) for r in plan.routes.values())}, "
                     f"most used link carries {worst} flow(s)")
        lines.append("")
    lines += _table(
        "solves",
        ["decision", "method", "status", "seconds", "objective", "gap"],
        [
            [k, s.method, s.status, f"{plan.timings.get(k, s.seconds):.3f}", "-" if s.objective is None else f"{s.objective:g}",
             "-" if s.gap is None else f"{s.gap:.3g}"]
            for k, s in plan.solves.items()
        ],
    )
    notes = [f"{k} ({s.status}): {s.message}" for k, s in plan.solves.items() if s.message]
    if notes:
        lines += ["solve notes", *notes, ""]
    return "\n".join(lines).rstrip() + "\n"
