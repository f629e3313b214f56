"""``tilelang compile FILE.py:DESIGN -o build/``: a design through mlir-aie's own flow to its artefacts."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tilelang.cli.load import check_writable, load_target


def add_parser(sub: Any) -> None:
    """The ``compile`` subcommand's arguments."""
    c = sub.add_parser(
        "compile",
        help="plan, emit and take the module through mlir-aie's aie-opt/aie-translate",
        description=(
            "Plan the design, emit it, and run mlir-aie's flow on it: objectfifo lowering, buffer addresses, "
            "routing (objectfifo level), the NPU instruction binary and CDO (NPU devices) or the libxaie "
            "configuration (AIE1), and every core body to LLVM IR. Writes each stage's module and the "
            "artefacts into the output directory. Needs mlir-aie's aie-opt and aie-translate "
            "($AIE_OPT/$AIE_TRANSLATE, PATH, or ../shared/tools/mlir-aie)."
        ),
    )
    c.add_argument("design", help="file.py:name, file.tl or a saved plan.json (not planned again)")
    c.add_argument("-o", "--output", default="build", help="directory for the artefacts (default: build)")
    c.add_argument(
        "--level",
        choices=["objectfifo", "physical"],
        default="physical",
        help="physical: tilelang's buffers, locks, BDs and routes as planned (default); "
        "objectfifo: mlir-aie places buffers and routes itself",
    )
    c.add_argument("--solver", choices=["cbc", "highs"], default="cbc", help="ILP solver")
    c.add_argument("--time-limit", type=float, default=60.0, help="safety-net seconds for each ILP solve")
    c.add_argument("--json", action="store_true", help="print what was written as JSON")


def run(args: argparse.Namespace) -> int:
    """Compile; one line per artefact (or JSON) on standard output."""
    import tilelang as tl
    from tilelang.backends.mlir import vendor
    from tilelang.ir.plan import Plan

    check_writable(args.output, "-o", directory=True)
    vendor.require_tools()
    target = load_target(args.design)
    plan = target if isinstance(target, Plan) else tl.plan(target, solver=args.solver, time_limit=args.time_limit)
    text = tl.emit_mlir(plan, level=args.level)
    res = vendor.compile_text(text, args.level)
    written = [str(p) for p in res.write(args.output)]
    if args.level == "physical":
        moved = vendor.check_preserved(text, res)
        if moved:
            raise vendor.VendorFlowError("lower", "planned resources moved: " + "; ".join(moved[:5]))
    if args.json:
        doc = {"design": plan.design.name, "device": plan.device.name, "level": args.level, "files": written,
               "seconds": {k: round(v, 3) for k, v in res.seconds.items()}}
        print(json.dumps(doc, indent=1, sort_keys=True))
    else:
        for path in written:
            sys.stdout.write(path + "\n")
    return 0
