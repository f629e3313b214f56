"""Plain-text tables for the command line: aligned headers, natural name order, the busiest rows first.

Tables are plain text (no box drawing, no terminal-width truncation), so a device name or a buffer
name is never cut, whatever the terminal's width.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tilelang.ir.plan_report import natural_key

__all__ = ["natural_key", "stats_report", "text_table"]

#: Rows per table ``tilelang simulate`` shows unless asked for ``--all``.
TOP_ROWS = 20


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """Lines of a table whose headers sit over their columns (right-aligned columns get right-aligned headers).

    Args:
        header: column titles.
        rows: cells, as text.
        right: indexes of right-aligned (numeric) columns.

    Returns:
        The header line and one line per row, trailing blanks removed.
    """
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        out = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(out).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _limited(rows: list[list[str]], limit: int | None, what: str) -> tuple[list[list[str]], list[str]]:
    if limit is None or len(rows) <= limit:
        return rows, []
    hidden = len(rows) - limit
    return rows[:limit], [f"({hidden} more {what} not shown, the least utilised; --all shows every row)"]


def stats_report(stats: object, limit: int | None = TOP_ROWS) -> str:
    """The simulation statistics as tables, each sorted by utilisation (busiest first, then by name).

    Args:
        stats: a :class:`simulator.result.Stats`.
        limit: rows shown per table (None: every row); a line says how many were left out.

    Returns:
        The report text.
    """
    s = stats
    lines = [f"total cycles: {s.cycles}   events: {s.events}   mean core utilisation: {s.utilisation():.1%}",  # type: ignore[attr-defined]
             "utilisation = busy cycles / run cycles",
             "  (core: in kernel calls; DMA channel, memtile link, stream link: moving data)", ""]
    cores = sorted(s.cores.items(), key=lambda kv: (-kv[1].busy, natural_key(kv[0])))  # type: ignore[attr-defined]
    rows = []
    for name, c in cores:
        on = ", ".join(f"{f} {n}" for f, n in sorted(c.stalls.items(), key=lambda kv: (-kv[1], natural_key(kv[0]))))
        rows.append([name, str(c.busy), str(c.banks), str(c.stall), f"{c.utilisation(s.cycles):.1%}", on])  # type: ignore[attr-defined]
    shown, note = _limited(rows, limit, "cores")
    lines += [*text_table(["core", "busy", "of which banks", "stall", "util", "stalled on"], shown, (1, 2, 3, 4)), *note]
    for title, table in (("DMA channel", s.channels), ("memtile link", s.links),  # type: ignore[attr-defined]
                         ("stream link", s.stream_links)):  # type: ignore[attr-defined]
        if not table:
            continue
        ordered = sorted(table.items(), key=lambda kv: (-kv[1].utilisation, natural_key(kv[0])))
        rows = [[name, str(t.bytes), str(t.busy), f"{t.utilisation:.1%}"] for name, t in ordered]
        shown, note = _limited(rows, limit, f"{title}s")
        lines += ["", *text_table([title, "bytes", "busy", "util"], shown, (1, 2, 3)), *note]
    return "\n".join(lines)


def width(text: str) -> int:
    """The longest line of ``text`` (ANSI colour codes not counted)."""
    return max((len(re.sub(r"\x1b\[[0-9;]*m", "", ln)) for ln in text.splitlines()), default=0)
