"""Drawing a simulation: a per-track timeline and utilisation bars."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_MAX_TRACKS = 48


def _ordered_tracks(result: object) -> tuple[list[str], int]:
    """Track names to draw: every core first (never capped), then the other tracks in
    group order up to :data:`_MAX_TRACKS` in all; and how many tracks there are."""
    from simulator.result import GROUPS

    spans = result.trace.spans()  # type: ignore[attr-defined]
    used = {t for t, *_ in spans}
    groups = dict((name, group) for group, name in result.trace.tracks())  # type: ignore[attr-defined]
    ordered = sorted(used, key=lambda t: (GROUPS.index(groups.get(t, GROUPS[-1])), t))
    cores = [t for t in ordered if groups.get(t) == "cores"]
    others = [t for t in ordered if groups.get(t) != "cores"]
    return cores + others[: max(0, _MAX_TRACKS - len(cores))], len(ordered)


def draw_timeline(result: object) -> Figure:
    """Spans of every core (always all of them, first), then DMA channels, memtile links and
    host moves, over simulated time. Kernel calls are coloured by kernel, stalls red and
    hatched by the fifo waited on (one shade per fifo), transfers grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    shown, total = _ordered_tracks(result)
    row = {t: i for i, t in enumerate(shown)}
    groups = dict((name, group) for group, name in result.trace.tracks())  # type: ignore[attr-defined]
    fig, ax = plt.subplots(figsize=(11, max(3.0, 0.28 * len(shown) + 1.8)))
    kernel_colours, stall_colours = plt.get_cmap("tab10"), plt.get_cmap("Reds")
    kernels: dict[str, int] = {}
    stalls: dict[str, int] = {}
    moved = False
    for track, name, start, dur in result.trace.spans():  # type: ignore[attr-defined]
        if track not in row:
            continue
        hatch = None
        if name.startswith("stall "):
            i = stalls.setdefault(name, len(stalls))
            colour, hatch = stall_colours(0.45 + 0.5 * ((i * 0.37) % 1.0)), "///"
        elif groups.get(track) == "cores":
            colour = kernel_colours(kernels.setdefault(name, len(kernels)) % 10)
        else:
            colour, moved = "#9e9e9e", True
        ax.broken_barh([(start, max(dur, 1))], (row[track] - 0.4, 0.8), facecolors=colour, hatch=hatch,
                       edgecolor="#444444" if hatch else colour, linewidth=0)
    ax.set_yticks(range(len(shown)), shown, fontsize=7)
    ax.invert_yaxis()
    handles = [Patch(facecolor=kernel_colours(i % 10), label=f"kernel {k}") for k, i in kernels.items()]
    handles += [Patch(facecolor=stall_colours(0.45 + 0.5 * ((i * 0.37) % 1.0)), hatch="///", edgecolor="#444444",
                      label=k) for k, i in list(stalls.items())[:18]]
    if len(stalls) > 18:
        handles.append(Patch(facecolor="white", label=f"... {len(stalls) - 18} more stalled fifos"))
    if moved:
        handles.append(Patch(facecolor="#9e9e9e", label="transfer (DMA channel, memtile link, host move)"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22 if len(shown) < 12 else -0.06),
              ncol=min(4, len(handles)), fontsize=7, frameon=False)
    ax.set_xlabel("cycle")
    extra = f" (all cores, {len(shown)} of {total} tracks)" if total > len(shown) else ""
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
