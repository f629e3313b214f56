"""A picture of a MultiPlan: the whole array with every tenant's plan, each partition outlined and named."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilelang.ir.multiplan import MultiPlan
from tilelang.report.array import draw_array

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_COLOURS = ("#e6550d", "#31a354", "#756bb1", "#3182bd", "#de2d26", "#636363", "#fd8d3c", "#74c476")


def draw_partitions(mp: MultiPlan) -> Figure:
    """The joint plan drawn by ``tilelang.report.array.draw_array``, each tenant's columns outlined
    in a colour of its own and labelled with its name, width and partition device.

    Returns:
        The matplotlib Figure (``fig.savefig(path)``).
    """
    from matplotlib.patches import Rectangle

    fig = draw_array(mp.joint)
    ax = fig.axes[0]
    rows = mp.device.rows
    ax.set_xlim(-0.2, mp.device.cols + 0.1)
    for i, (name, t) in enumerate(mp.tenants.items()):
        first, width = t.columns
        colour = _COLOURS[i % len(_COLOURS)]
        ax.add_patch(Rectangle((first - 0.05, -0.1), width, rows + 0.05, fill=False, edgecolor=colour, lw=2.5,
                               linestyle="--"))
        ax.text(first + width / 2 - 0.05, rows + 0.05, f"{name} ({t.local.device.name})", ha="center", va="bottom",
                fontsize=8, color=colour, weight="bold")
    ax.set_ylim(-0.2, rows + 0.6)
    ax.set_title(f"{len(mp.tenants)} tenants on {mp.device.name}", fontsize=9)
    return fig
