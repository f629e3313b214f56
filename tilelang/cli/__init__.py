"""The ``tilelang`` command: devices, print, plan, simulate, emit, compile, report, explore, optimize.

Each command takes a design as ``file.py:name`` (or a printed ``.tl`` IR
file, or a plan saved by ``tilelang plan -o plan.json``). Files to read and
write are checked before any work. User errors print one line and exit with
status 1; usage errors exit 2; a reader that closes the pipe early
(``| head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from tilelang.cli import commands
from tilelang.cli import compile as compile_cli
from tilelang.cli import explore as explore_cli
from tilelang.cli import optimize as optimize_cli
from tilelang.cli.load import kernel_cycles_type, seed_type
from tilelang.errors import TileLangError
from tilelang.report.tables import TOP_ROWS


def build_parser() -> argparse.ArgumentParser:
    from tilelang import __version__

    p = argparse.ArgumentParser(prog="tilelang", description="Plan, simulate and emit tiled spatial designs.")
    p.add_argument("--version", action="version", version=f"tilelang {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    d = sub.add_parser("devices", help="list the device models", description="list the device models")
    d.add_argument("--json", action="store_true", help="machine-readable output")

    pr = sub.add_parser("print", help="trace a design, verify it and print its IR text", description="trace a design, verify it and print its IR text")
    pr.add_argument("design", help="file.py:name, file.tl or a saved plan.json")

    pl = sub.add_parser("plan", help="plan a design and print every decision", description="plan a design and print every decision")
    _design_args(pl)
    pl.add_argument("-o", "--output", help="write the plan as JSON to this file")

    s = sub.add_parser("simulate", help="plan and simulate a design on random (or given) inputs", description="plan and simulate a design on random (or given) inputs")
    _design_args(s)
    s.add_argument("--inputs", help=".npz file with one array per input tensor (default: random, seeded)")
    s.add_argument("--seed", type=seed_type, default=0, help="seed of the random inputs (a non-negative int)")
    s.add_argument("--functional", action="store_true", help="compute outputs only, no timing")
    s.add_argument("--timing", action="store_true",
                   help="cycles and statistics only, no data (no inputs needed; kernels without numbers run too)")
    s.add_argument("--trace", help="write a Chrome/Perfetto trace (JSON) to this file")
    s.add_argument("--outputs", help="write the output arrays to this .npz file")
    s.add_argument("--all", action="store_true",
                   help=f"show every row of the statistics (default: the {TOP_ROWS} busiest of each table)")
    _kernel_cycles_arg(s)
    s.add_argument("--check", action="store_true",
                   help="also compute the outputs by the reference path (the IR's numpy semantics, no plan, no "
                   "timing) and compare; exit status 1 on a mismatch")

    e = sub.add_parser("emit", help="plan a design and print its MLIR (mlir-aie dialect)", description="plan a design and print its MLIR (mlir-aie dialect)")
    _design_args(e)
    e.add_argument("--level", choices=["objectfifo", "physical"], default="objectfifo",
                   help="objectfifo: fifos for mlir-aie to lower, place and route (default); "
                   "physical: the plan's buffers, locks, BD chains and routes")
    e.add_argument("-o", "--output", help="write the module to this file instead of standard output")
    e.add_argument("--pretty", action="store_true",
                   help="print mlir-aie's custom assembly (aie-opt's own printer; needs mlir-aie's aie-opt)")
    compile_cli.add_parser(sub)

    r = sub.add_parser("report", help="plan and simulate, then draw the array, timeline and utilisation", description="plan and simulate, then draw the array, timeline and utilisation")
    _design_args(r)
    r.add_argument("-o", "--output", default="report", help="directory for the PNGs and report.html")
    r.add_argument("--seed", type=seed_type, default=0, help="seed of the random inputs (a non-negative int)")
    r.add_argument("--timing", action="store_true", help="simulate cycles only, no data (see simulate --timing)")
    _kernel_cycles_arg(r)
    explore_cli.add_parser(sub)
    optimize_cli.add_parser(sub)
    return p


def _kernel_cycles_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kernel-cycles", type=kernel_cycles_type, action="append", default=[], metavar="NAME=CYCLES",
                   help="a kernel's measured cycles per call, used instead of the cost model's (repeatable)")


def _design_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("design", help="file.py:name, file.tl or a saved plan.json (not planned again)")
    p.add_argument("--solver", choices=["cbc", "highs"], default="cbc", help="ILP solver")
    p.add_argument("--time-limit", type=float, default=60.0,
                   help="safety-net seconds for the whole plan (solves stop on work limits; a plan cut by the "
                   "clock says so in a warning)")
    p.add_argument("--strategy", choices=["ilp", "greedy"], default="ilp",
                   help="ilp: the placement, buffer and routing ILPs (default); greedy: greedy placement, "
                   "first-fit buffers, shortest-path routes (fast, no optimality claim)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        runners = {"explore": explore_cli.run, "compile": compile_cli.run, "optimize": optimize_cli.run}
        code = runners.get(args.command, commands.run)(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        _discard_stdout()
        return 1
    except TileLangError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a file that became unwritable after the checks, a full disk
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: object = None, line: str | None = None) -> None:
    """A warning (a planner fallback, say) as one ``warning:`` line on stderr, without Python's source echo."""
    print(f"warning: {message}", file=sys.stderr)


def _discard_stdout() -> None:
    """Point fd 1 at the null device, so the interpreter's final flush into the closed pipe is silent."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # sys.stdout is not a file (an in-process test's capture)
        pass


if __name__ == "__main__":
    raise SystemExit(main())
