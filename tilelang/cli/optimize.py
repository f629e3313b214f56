"""``tilelang optimize FILE.py:DESIGN``: the passes in order, with each one's effect measured.

Each step's design is planned and simulated (``mode="timing"``: cycles, no
data) and measured: cycles, bytes moved to and from DDR, bytes of on-chip
buffers, and the most bytes one core holds during a call (its local buffers
and the fifo elements it has acquired).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tilelang.cli.load import UsageError, check_writable, load_design


def add_parser(sub: Any) -> None:
    """The ``optimize`` subcommand's arguments."""
    o = sub.add_parser("optimize", help="run the passes (tl.optimize) and show what each one changed",
                       description="Run tl.optimize's passes in order (eliminate_redundant_transfers, "
                       "schedule_memory, double_buffer) and print a table: cycles, DDR bytes, on-chip bytes and "
                       "peak live bytes before and after each pass.")
    o.add_argument("design", help="file.py:name or file.tl")
    o.add_argument("-o", "--output", default=None, help="write the optimized design's IR text to this file")
    o.add_argument("--strategy", choices=["ilp", "greedy"], default="greedy",
                   help="planner strategy for measuring each step (default: greedy, fast)")
    o.add_argument("--json", action="store_true", help="print the table as JSON")


def measure(design: object, strategy: str) -> dict[str, int]:
    """Cycles, DDR bytes, on-chip buffer bytes and the peak live bytes of any core, of one design."""
    import tilelang as tl
    from tilelang.ir.liveness import liveness
    from tilelang.ir.plan_report import onchip_bytes
    from tilelang.passes.redundant import ddr_bytes

    plan = tl.plan(design, strategy=strategy)  # type: ignore[arg-type]
    res = tl.simulate(plan, mode="timing", trace=False)
    kernels = {k.name: k for k in design.kernels}  # type: ignore[attr-defined]
    fifos = {f.name: f for f in design.fifos}  # type: ignore[attr-defined]
    peak = max((liveness(c, kernels, fifos).peak() for c in design.cores), default=0)  # type: ignore[attr-defined]
    return {"cycles": int(res.cycles), "ddr_bytes": ddr_bytes(design), "onchip_bytes": onchip_bytes(plan),
            "peak_live_bytes": peak}


def run(args: argparse.Namespace) -> int:
    """Optimize; the table (or JSON) on standard output, the design's IR to ``-o``."""
    import tilelang as tl
    from tilelang.passes import optimize_steps
    from tilelang.report.tables import text_table

    if args.output is not None:
        check_writable(args.output, "-o")
    design = load_design(args.design)
    if not isinstance(design, tl.ir.design.Design):
        raise UsageError(f"{args.design} is not a design")
    steps = optimize_steps(design)
    rows = []
    for i, (name, d) in enumerate(steps):
        changed = i > 0 and tl.ir.print(d) != tl.ir.print(steps[i - 1][1])
        rows.append({"step": name, "changed": changed, **measure(d, args.strategy)})
    if args.output is not None:
        Path(args.output).write_text(tl.ir.print(steps[-1][1]))
    if args.json:
        print(json.dumps({"design": design.name, "steps": rows}, indent=1))
        return 0
    keys = ["cycles", "ddr_bytes", "onchip_bytes", "peak_live_bytes"]
    table = [[r["step"], "-" if r["step"] == "input" else ("yes" if r["changed"] else "no"),
              *(str(r[k]) for k in keys)] for r in rows]
    lines = text_table(["step", "changed", "cycles", "DDR bytes", "on-chip bytes", "peak live bytes"], table,
                       right=(2, 3, 4, 5))
    first, last = rows[0], rows[-1]
    lines.append("")
    lines.append(f"{design.name}: cycles {first['cycles']} -> {last['cycles']}, DDR bytes {first['ddr_bytes']} -> "
                 f"{last['ddr_bytes']}, on-chip bytes {first['onchip_bytes']} -> {last['onchip_bytes']}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
