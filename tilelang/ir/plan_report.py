"""``Plan.report()``: a readable text summary of every decision."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilelang.ir.plan import Plan


def _table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return []
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [title, line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return [*out, ""]


def _t(tile: tuple[int, int] | None) -> str:
    return "-" if tile is None else f"({tile[0]},{tile[1]})"


def render(plan: Plan) -> str:
    d = plan.design
    lines = [f"plan of {d.name} on {d.device.name} ({d.device.cols}x{d.device.rows})", ""]
    lines += _table("cores", ["core", "tile"], [[c, _t(t)] for c, t in plan.placement.items()])
    lines += _table("links", ["link", "memtile"], [[k, _t(t)] for k, t in plan.link_tiles.items()])
    rows = []
    for f in plan.fifos.values():
        cons = ", ".join(f"{c.agent}@{_t(c.tile)}" + (f" ch{c.channel}" if c.channel is not None else "") for c in f.consumers)
        prod = f"{f.producer.agent}@{_t(f.producer.tile)}" + (
            f" ch{f.producer.channel}" if f.producer.channel is not None else ""
        )
        rows.append([f.name, prod, cons, f"shared {_t(f.shared_tile)}" if f.shared else "streamed"])
    lines += _table("fifos", ["fifo", "producer", "consumers", "carried"], rows)
    lines += _table(
        "buffers",
        ["buffer", "tile", "bank", "offset", "bytes"],
        [[n, _t(b.tile), str(b.bank), str(b.offset), str(b.size)] for n, b in plan.buffers.items()],
    )
    lines += _table(
        "routes",
        ["flow", "source", "dests", "links"],
        [[n, _t(r.source), " ".join(_t(x) for x in r.dests), str(len(r.links))] for n, r in plan.routes.items()],
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
