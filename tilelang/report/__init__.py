"""Pictures of a plan and its simulation: PNG files and one self-contained HTML page."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from tilelang.report.array import draw_array
from tilelang.report.timeline import draw_timeline, draw_utilisation

__all__ = ["draw_array", "draw_timeline", "draw_utilisation", "write_report"]


def _png(fig: object) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[arg-type]
    return buf.getvalue()


def write_report(plan: object, result: object, directory: str | Path) -> list[Path]:
    """Write array.png, timeline.png, utilisation.png and report.html (images inlined) to ``directory``.

    Returns:
        The paths written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    images = {
        "array": _png(draw_array(plan)),  # type: ignore[arg-type]
        "timeline": _png(draw_timeline(result)),
        "utilisation": _png(draw_utilisation(result)),
    }
    paths = []
    for name, data in images.items():
        p = out / f"{name}.png"
        p.write_bytes(data)
        paths.append(p)
    design = plan.design  # type: ignore[attr-defined]
    from simulator.explain import explain  # the simulator's consumer: imported when a report is written

    ex = explain(result, plan)  # type: ignore[arg-type]
    body = "".join(
        f'<h2>{name}</h2><img alt="{name}" src="data:image/png;base64,{base64.b64encode(data).decode()}">'
        for name, data in images.items()
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(design.name)} on {html.escape(design.device.name)}</title>"
        "<style>body{font-family:sans-serif;margin:2em} img{max-width:100%} pre{background:#f4f4f4;padding:1em}</style>"
        f"</head><body><h1>{html.escape(design.name)} on {html.escape(design.device.name)}</h1>"
        f"<p><b>{html.escape(ex.verdict)}</b></p>"
        f"<p>{result.cycles} cycles ({result.seconds * 1e6:.1f} us at {design.device.clock_hz / 1e9:.2f} GHz)</p>"  # type: ignore[attr-defined]
        f"<h2>where the cycles went</h2><pre>{html.escape(ex.text())}</pre>"
        f"{body}<h2>plan</h2><pre>{html.escape(plan.report())}</pre>"  # type: ignore[attr-defined]
        f"<h2>statistics</h2><pre>{html.escape(result.stats.report())}</pre></body></html>"  # type: ignore[attr-defined]
    )
    page_path = out / "report.html"
    page_path.write_text(page)
    paths.append(page_path)
    return paths
