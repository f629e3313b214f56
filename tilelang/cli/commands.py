"""The command implementations behind ``tilelang``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from tilelang.cli.load import UsageError, check_readable, check_writable, load_target
from tilelang.ir.design import Design
from tilelang.ir.plan import Plan
from tilelang.report.tables import TOP_ROWS

_out = Console(highlight=False)
# Progress spinners go to standard error: standard output carries only what was asked for.
_progress = Console(highlight=False, stderr=True)


@contextmanager
def phase(text: str, console: Console | None = None) -> Iterator[None]:
    """A spinner naming the phase (planning, simulating, checking) with its elapsed time, on standard error.

    Shown only on a terminal, and erased when the phase ends.
    """
    console = console or _progress
    if not console.is_terminal:  # a log file or a pipe gets no spinner frames
        yield
        return
    columns = (SpinnerColumn("dots"), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        bar.add_task(text, total=None)
        yield


def run(args: argparse.Namespace) -> int:
    return {
        "devices": cmd_devices,
        "print": cmd_print,
        "plan": cmd_plan,
        "simulate": cmd_simulate,
        "emit": cmd_emit,
        "report": cmd_report,
    }[args.command](args)


def cmd_devices(args: argparse.Namespace) -> int:
    from tilelang.devices import device, devices
    from tilelang.ir.dtypes import bf16, i8

    rows = []
    for name in devices():
        d = device(name)
        peak = {dt.name: d.peak_macs_per_second(dt) * 2 / 1e12 if d.supports_dtype(dt) else None for dt in (i8, bf16)}
        rows.append({
            "name": name, "family": d.family, "cols": d.cols, "rows": d.rows,
            "compute": len(d.tiles("compute")), "memtiles": len(d.tiles("mem")), "clock_ghz": d.clock_hz / 1e9,
            "peak_int8_tops": peak["i8"], "peak_bf16_tflops": peak["bf16"],
        })
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    from tilelang.report.tables import text_table

    cells = [[r["name"], r["family"], f"{r['cols']}x{r['rows']}", str(r["compute"]), str(r["memtiles"]),
              f"{r['clock_ghz']:.2f} GHz", _num(r["peak_int8_tops"]), _num(r["peak_bf16_tflops"])] for r in rows]
    header = ["name", "family", "array", "cores", "memtiles", "clock", "int8 TOPS", "bf16 TFLOPS"]
    print("\n".join(text_table(header, cells, right=range(2, 8))))
    return 0


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def cmd_print(args: argparse.Namespace) -> int:
    from tilelang.ir import print as print_ir

    sys.stdout.write(print_ir(load_target(args.design)))
    return 0


def _plan(args: argparse.Namespace, design: Design):
    import tilelang as tl

    with phase(f"planning {design.name} on {design.device.name}"):
        return tl.plan(design, solver=args.solver, time_limit=args.time_limit, strategy=args.strategy)


def _planned(args: argparse.Namespace, target: Design | Plan) -> Plan:
    """``target`` planned, or as it is when it is already a plan (a saved ``.json``)."""
    return target if isinstance(target, Plan) else _plan(args, target)


def read_inputs(path: str, design: Design) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file, checked against the design's tensors before any planning.

    Raises:
        UsageError: an unreadable file, an array named after no tensor, an input the
            design reads that the file lacks, or an array of another shape.
    """
    try:
        data = np.load(path)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise UsageError(f"--inputs: {path} holds one array, not an .npz file of named arrays (np.savez(path, "
                             f"NAME=array, ...) writes one)")
        with data:
            arrays = {k: data[k] for k in data.files}
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001 - numpy's and zipfile's own errors for a file that is no .npz
        raise UsageError(f"--inputs: cannot read {path} as an .npz file: {type(e).__name__}: {e}") from None
    unknown = sorted(set(arrays) - set(design.tensors))
    if unknown:
        raise UsageError(f"--inputs: {path} holds {unknown}, which are not tensors of {design.name} {list(design.tensors)}")
    missing = [n for n in design.inputs if n not in arrays]
    if missing:
        raise UsageError(f"--inputs: {path} lacks {missing}, which {design.name} reads")
    for name, a in arrays.items():
        want = design.tensors[name].shape
        if a.shape != want:
            raise UsageError(f"--inputs: {path}: tensor {name!r} has shape {want}, the array has shape {a.shape}")
    return arrays


def cmd_plan(args: argparse.Namespace) -> int:
    check_writable(args.output, "-o")
    plan = _planned(args, load_target(args.design))
    if args.output:
        with open(args.output, "w") as f:
            f.write(plan.to_json())
    if args.json:
        print(plan.to_json())
    else:
        sys.stdout.write(plan.report())
    return 0


def random_inputs(design: Design, seed: int) -> dict[str, np.ndarray]:
    """Seeded random arrays for every tensor a move reads: small integers, normal floats."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for name in design.inputs:
        t = design.tensors[name]
        if t.dtype.is_int:
            arrays[name] = rng.integers(-8, 8, size=t.shape).astype(t.dtype.numpy)
        else:
            arrays[name] = rng.standard_normal(t.shape).astype(np.float32).astype(t.dtype.numpy)
    return arrays


def cmd_simulate(args: argparse.Namespace) -> int:
    import tilelang as tl

    check_readable(args.inputs, "--inputs")
    check_writable(args.outputs, "--outputs")
    check_writable(args.trace, "--trace")
    if args.trace and args.functional:
        raise UsageError("--trace needs timing, which --functional skips: drop one of them")
    if args.kernel_cycles and args.functional:
        raise UsageError("--kernel-cycles sets timing, which --functional skips: drop one of them")
    if args.timing and (args.functional or args.inputs or args.outputs or args.check):
        raise UsageError("--timing moves no data: it takes none of --functional, --inputs, --outputs, --check")
    given = _given_cycles(args)
    target = load_target(args.design)
    design = target.design if isinstance(target, Plan) else target
    arrays = {} if args.timing else read_inputs(args.inputs, design) if args.inputs else random_inputs(design, args.seed)
    plan = _planned(args, target)
    mode = "functional" if args.functional else "timing" if args.timing else "timed"
    with phase(f"simulating {design.name}"):
        res = tl.simulate(plan, mode=mode, kernel_cycles=given, **arrays)
    checked = _check(design, arrays, res.outputs) if args.check else None
    if args.trace and not args.functional:
        res.trace.save(args.trace)
    if args.outputs:
        np.savez(args.outputs, **res.outputs)
    if args.json:
        doc = summarise(res)
        if checked is not None:
            doc["check"] = [vars(c) for c in checked]
        print(json.dumps(doc, indent=1, sort_keys=True))
    elif args.functional:
        _out.print(f"{design.name}: outputs {', '.join(sorted(res.outputs))} computed (functional mode, no timing)")
    else:
        from tilelang.report.tables import stats_report

        sys.stdout.write(stats_report(res.stats, None if args.all else TOP_ROWS) + "\n\n")
        sys.stdout.write(res.explain().text() + "\n")
        _out.print(f"{res.cycles} cycles = {res.seconds * 1e6:.2f} us at {design.device.clock_hz / 1e9:.2f} GHz")
    if checked is not None and not args.json:
        sys.stdout.write(_check_text(checked))
    return 0 if checked is None or all(c.match for c in checked) else 1


def _given_cycles(args: argparse.Namespace) -> dict[str, int]:
    """``--kernel-cycles`` as a dict (a kernel named twice is a usage error)."""
    given: dict[str, int] = {}
    for name, cycles in args.kernel_cycles:
        if name in given:
            raise UsageError(f"--kernel-cycles gives kernel {name!r} twice")
        given[name] = cycles
    return given


def _check(design: Design, arrays: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> list:
    """The simulated outputs compared with the reference path's (:mod:`tilelang.cli.check`)."""
    from tilelang.cli.check import compare, reference_outputs

    with phase(f"checking {design.name} against the reference"):
        return compare(outputs, reference_outputs(design, arrays))


def _check_text(rows: list) -> str:
    lines = ["", "check against the reference (the IR's numpy semantics; no plan, no timing):"]
    for c in rows:
        verdict = "match" if c.match else f"MISMATCH in {c.differing} of {c.elements} elements"
        lines.append(f"  {c.tensor}: {verdict}, max abs error {c.max_abs_error:g}")
    return "\n".join(lines) + "\n"


def summarise(res: object) -> dict:
    """The headline numbers of a simulation, JSON-ready."""
    stats = res.stats  # type: ignore[attr-defined]
    return {
        "cycles": res.cycles,  # type: ignore[attr-defined]
        "seconds": res.seconds,  # type: ignore[attr-defined]
        "mode": res.mode,  # type: ignore[attr-defined]
        "utilisation": stats.utilisation(),
        "cores": {n: {"busy": c.busy, "banks": c.banks, "stall": c.stall, "stalls": c.stalls, "calls": c.calls}
                  for n, c in stats.cores.items()},
        "outputs": {n: {"shape": list(a.shape), "dtype": str(a.dtype)} for n, a in res.outputs.items()},  # type: ignore[attr-defined]
        "explain": _explained(res),
        "sequence": stats.sequence,
    }


def _explained(res: object) -> dict | None:
    """The critical path's shares and the verdict (None for a functional run)."""
    if res.mode == "functional":  # type: ignore[attr-defined]
        return None
    ex = res.explain()  # type: ignore[attr-defined]
    return {"path": ex.path, "verdict": ex.verdict, "device_peak": ex.device_peak, "kernel_peak": ex.kernel_peak,
            "floor": ex.floor, "floor_cause": ex.floor_cause,
            "shares": [{"cause": s.cause, "cycles": s.cycles, "detail": s.detail} for s in ex.shares]}


def cmd_emit(args: argparse.Namespace) -> int:
    import tilelang as tl

    check_writable(args.output, "-o")
    plan = _planned(args, load_target(args.design))
    design = plan.design
    text = tl.emit_mlir(plan, level=args.level, pretty=getattr(args, "pretty", False))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    if args.json:
        doc = {"design": design.name, "device": design.device.name, "level": args.level}
        doc.update({"output": args.output} if args.output else {"mlir": text})
        print(json.dumps(doc, indent=1, sort_keys=True))
    elif not args.output:
        sys.stdout.write(text)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    import tilelang as tl
    from tilelang.report import write_report

    check_writable(args.output, "-o", directory=True)
    given = _given_cycles(args)
    plan = _planned(args, load_target(args.design))
    design = plan.design
    with phase(f"simulating {design.name}"):
        if args.timing:
            res = tl.simulate(plan, mode="timing", kernel_cycles=given)
        else:
            res = tl.simulate(plan, kernel_cycles=given, **random_inputs(design, args.seed))
    paths = write_report(plan, res, args.output)
    if args.json:
        doc = {"design": design.name, "files": [str(p) for p in paths], "simulation": summarise(res)}
        print(json.dumps(doc, indent=1, sort_keys=True))
        return 0
    sys.stdout.write(res.explain().text() + "\n")
    for p in paths:
        _out.print(f"wrote {p}")
    return 0
