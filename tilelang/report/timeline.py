"""Drawing a simulation: a per-track timeline and utilisation bars."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_MAX_TRACKS = 48


def draw_timeline(result: object) -> Figure:
    """Spans of every core, DMA channel and memtile link over simulated time (one row per track)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    spans = result.trace.spans()  # type: ignore[attr-defined]
    tracks: list[str] = []
    for track, _, _, _ in spans:
        if track not in tracks:
            tracks.append(track)
    shown = tracks[:_MAX_TRACKS]
    fig, ax = plt.subplots(figsize=(11, max(3.0, 0.28 * len(shown) + 1.8)))
    colours = plt.get_cmap("tab20")
    names: dict[str, int] = {}
    for track, name, start, dur in spans:
        if track not in shown:
            continue
        kind = name.split("(")[0].split(" ")[0]
        colour = colours(names.setdefault(kind, len(names)) % 20)
        ax.broken_barh([(start, max(dur, 1))], (shown.index(track) - 0.4, 0.8), facecolors=colour)
    ax.set_yticks(range(len(shown)), shown, fontsize=7)
    ax.invert_yaxis()
    # one colour per kind of span (a kernel's name, "stall", a fifo's name on a DMA track)
    handles = [Patch(facecolor=colours(i % 20), label=kind) for kind, i in list(names.items())[:18]]
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=min(6, len(handles)),
                  fontsize=7, frameon=False)
    ax.set_xlabel("cycle")
    extra = f" (first {_MAX_TRACKS} of {len(tracks)} tracks)" if len(tracks) > len(shown) else ""
    ax.set_title(f"timeline: {result.cycles} cycles{extra}")  # type: ignore[attr-defined]
    fig.tight_layout()
    return fig


def draw_utilisation(result: object) -> Figure:
    """Busy (kernel calls, with the part lost to memory-bank conflicts) and stalled fraction of every core."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = result.stats  # type: ignore[attr-defined]
    cores = list(stats.cores.items())
    total = max(1, stats.cycles)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(cores) + 2), 3.5))
    xs = range(len(cores))
    banks = [getattr(c, "banks", 0) / total for _, c in cores]
    kernel = [c.busy / total - b for (_, c), b in zip(cores, banks, strict=True)]
    busy = [c.busy / total for _, c in cores]
    stall = [c.stall / total for _, c in cores]
    ax.bar(xs, kernel, label="busy", color="#31a354")
    if any(banks):
        ax.bar(xs, banks, bottom=kernel, label="busy: bank conflicts", color="#fdae6b")
    ax.bar(xs, stall, bottom=busy, label="stalled", color="#de2d26")
    ax.set_xticks(list(xs), [n for n, _ in cores], rotation=60, ha="right", fontsize=7)
    ax.set_ylim(0, 1.22)  # room above the bars for the legend
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("fraction of cycles")
    ax.set_title(f"core utilisation (mean {stats.utilisation():.1%})")
    ax.legend(loc="upper center", fontsize=7, ncol=3, frameon=False)
    fig.tight_layout()
    return fig
