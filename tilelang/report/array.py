"""Drawing a Plan on its device: tiles by kind, placed cores and links, routes shaded by use."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tilelang.ir.plan import Plan

_KIND_COLOUR = {"shim": "#d9d9d9", "mem": "#c6dbef", "compute": "#f7f7f7"}
_KIND_NAME = {"shim": "shim", "mem": "memory", "compute": "compute"}
#: Widest figure drawn, inches (a 50-column array would otherwise be 65 inches wide).
_MAX_WIDTH_IN = 30.0


def draw_array(plan: Plan) -> Figure:
    """A figure of the array: one square per tile (shim row at the bottom), each placed
    core and link labelled, memory use per tile as a bar, and every used link as an
    arrow whose colour and width grow with the channels it carries.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    dev = plan.device
    c0, c1 = _used_columns(plan)
    ncols = c1 - c0 + 1
    # Wide arrays (the 50-column VC1902) get a bounded figure and smaller, shorter labels.
    width = min(max(6.0, ncols * 1.3), _MAX_WIDTH_IN)
    per_col = width / max(1, ncols)
    fontsize = 7 if per_col >= 1.0 else 5
    fig, ax = plt.subplots(figsize=(width, max(4.0, dev.rows * min(1.1, max(0.6, per_col)) + 1.2)))
    labels = _labels(plan, 3 if per_col >= 1.0 else 2, None if per_col >= 1.0 else 8)
    used = _memory_use(plan)
    for c, r in dev.tiles():
        if not c0 <= c <= c1:
            continue
        kind = dev.tile_kind((c, r))
        ax.add_patch(Rectangle((c, r), 0.9, 0.9, facecolor=_KIND_COLOUR[kind], edgecolor="#555555", lw=0.8))
        text = labels.get((c, r))
        if text:
            ax.text(c + 0.45, r + 0.5, text, ha="center", va="center", fontsize=fontsize, wrap=True)
        cap = dev.memory_bytes((c, r))
        if cap and (c, r) in used:
            frac = min(1.0, used[(c, r)] / cap)
            ax.add_patch(Rectangle((c + 0.05, r + 0.05), 0.8 * frac, 0.08, facecolor="#3182bd"))
    usage = plan.link_usage()
    cmap = plt.get_cmap("viridis")
    for (a, b), n in usage.items():
        cap = max(1, dev.link_capacity(a, b))
        # offset the two directions of a link so both stay visible
        dx, dy = b[0] - a[0], b[1] - a[1]
        off = 0.12 if (dx, dy) in ((1, 0), (0, 1)) else -0.12
        start = (a[0] + 0.45 + dx * 0.45 - dy * off, a[1] + 0.45 + dy * 0.45 + dx * off)
        end = (b[0] + 0.45 - dx * 0.45 - dy * off, b[1] + 0.45 - dy * 0.45 + dx * off)
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=8,
                                     color=cmap(min(1.0, n / cap)), lw=0.8 + 2.0 * n / cap))
    _legend(fig, ax, cmap, 3 if width >= 10 else 1)
    ax.set_xlim(c0 - 0.2, c1 + 1.1)
    ax.set_ylim(-0.2, dev.rows + 0.1)
    ax.set_aspect("equal")
    step = 1 if per_col >= 0.5 else 5  # every column's number while it stays readable
    ax.set_xticks([c + 0.45 for c in range(c0, c1 + 1, step)], [str(c) for c in range(c0, c1 + 1, step)],
                  fontsize=fontsize + 1)
    ax.set_yticks([r + 0.45 for r in range(dev.rows)], [str(r) for r in range(dev.rows)])
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    worst = max(usage.values(), default=0)
    sep = " " if width >= 10 else "\n"  # a narrow figure takes the title on two lines
    ax.set_title(f"{plan.design.name} on {dev.name}:{sep}{len(plan.placement)} cores, {len(plan.routes)} flows, "
                 f"busiest link {worst} channel(s)", fontsize=9)
    fig.tight_layout()
    return fig


def _legend(fig: Figure, ax: object, cmap: object, ncol: int) -> None:
    """What the colours mean: tile kinds, the memory bar, and link arrows by channels used."""
    import matplotlib as mpl
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, edgecolor="#555555", label=f"{_KIND_NAME[k]} tile") for k, c in _KIND_COLOUR.items()]
    handles.append(Patch(facecolor="#3182bd", label="memory used (bar: fraction of the tile's)"))
    handles.append(Line2D([0], [0], color=cmap(1.0), lw=2.8, label="stream link (colour, width: channels used / capacity)"))  # type: ignore[operator]
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=ncol, fontsize=7,  # type: ignore[attr-defined]
              frameon=False)
    sm = mpl.cm.ScalarMappable(cmap=cmap, norm=mpl.colors.Normalize(0.0, 1.0))
    fig.colorbar(sm, ax=ax, fraction=0.025, pad=0.01, label="link channels used / capacity")


def _used_columns(plan: Plan) -> tuple[int, int]:
    """The columns worth drawing: every used tile's, plus one on each side, within the array."""
    cols = [t[0] for t in plan.placement.values()] + [t[0] for t in plan.link_tiles.values()]
    cols += [t[0] for r in plan.routes.values() for link in r.links for t in link]
    cols += [b.tile[0] for b in plan.buffers.values()]
    if not cols:
        return 0, plan.device.cols - 1
    return max(0, min(cols) - 1), min(plan.device.cols - 1, max(cols) + 1)


def _labels(plan: Plan, most: int = 3, chars: int | None = None) -> dict[tuple[int, int], str]:
    """Per tile, the names placed there: at most ``most`` of them, each cut to ``chars``."""
    out: dict[tuple[int, int], list[str]] = {}
    for core, tile in plan.placement.items():
        out.setdefault(tile, []).append(core)
    for link, tile in plan.link_tiles.items():
        out.setdefault(tile, []).append(link)

    def cut(name: str) -> str:
        return name if chars is None or len(name) <= chars else name[: chars - 1] + "~"

    return {t: "\n".join([cut(n) for n in names[:most]] + (["..."] if len(names) > most else []))
            for t, names in out.items()}


def _memory_use(plan: Plan) -> dict[tuple[int, int], int]:
    used: dict[tuple[int, int], int] = {}
    for b in plan.buffers.values():
        used[b.tile] = used.get(b.tile, 0) + b.size
    return used
