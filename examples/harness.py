"""What every example script does after building its design: plan, simulate, check, report, emit.

Each example builds a design and the numpy answer, then calls :func:`run`:

1. ``tl.plan`` (the ILPs unless ``--strategy greedy``),
2. ``tl.simulate`` with the real input arrays,
3. compares every output with numpy (bit-exact, or within a stated tolerance)
   and returns 1 on a mismatch (the script's exit status),
4. prints the simulated cycles, time at the device clock and mean core
   utilisation,
5. writes the plan's MLIR (mlir-aie dialects) to ``<out>/<name>.mlir``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import tilelang as tl


@dataclass(frozen=True)
class Tolerance:
    """Elementwise ``|got - want| <= atol + rtol * |want|``; zeros mean bit-exact."""

    rtol: float = 0.0
    atol: float = 0.0

    def check(self, got: np.ndarray, want: np.ndarray) -> tuple[bool, str]:
        if got.shape != want.shape:
            return False, f"shape {got.shape}, expected {want.shape}"
        g, w = got.astype(np.float64), np.asarray(want).astype(np.float64)
        if self.rtol == 0.0 and self.atol == 0.0:
            bad = int(np.count_nonzero(g != w))
            return bad == 0, f"{bad} of {g.size} elements differ"
        err = np.abs(g - w)
        bad = int(np.count_nonzero(err > self.atol + self.rtol * np.abs(w)))
        return bad == 0, f"{bad} of {g.size} elements outside rtol={self.rtol} atol={self.atol} (max error {err.max():.3g})"


EXACT = Tolerance()


def arguments(description: str, argv: Sequence[str] | None) -> argparse.Namespace:
    """The common command line: ``--small`` (CI sizes), ``--out DIR``, ``--strategy``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--small", action="store_true", help="small sizes (seconds; what the tests run)")
    ap.add_argument("--out", default="out", help="directory for the emitted MLIR (default: out)")
    ap.add_argument("--strategy", default="ilp", choices=["ilp", "greedy"], help="planner strategy")
    ap.add_argument("--trace", default=None, help="also write a Perfetto trace to this file")
    return ap.parse_args(list(argv) if argv is not None else None)


def run(name: str, design: object, inputs: dict[str, np.ndarray], expected: dict[str, np.ndarray],
        args: argparse.Namespace, tolerance: Tolerance = EXACT, macs: int = 0) -> int:
    """Plan, simulate, check against numpy, report and emit; the script's exit status.

    Args:
        name: the example's name (``<out>/<name>.mlir``).
        design: the design.
        inputs: input arrays by tensor name.
        expected: the numpy answer by output tensor name.
        args: from :func:`arguments`.
        tolerance: how close the outputs must be.
        macs: multiply-accumulates of the whole run, to report MAC efficiency (0: not a MAC design).

    Returns:
        0 when every output matches, 1 otherwise.
    """
    plan = tl.plan(design, strategy=args.strategy)
    res = tl.simulate(plan, **inputs)
    status = 0
    for tensor, want in expected.items():
        ok, why = tolerance.check(res.outputs[tensor], want)
        print(f"{name}: output {tensor} {'matches numpy' if ok else 'MISMATCH: ' + why}")
        status |= 0 if ok else 1
    dev = plan.device
    print(f"{name}: {res.cycles} cycles ({res.cycles / dev.clock_hz * 1e6:.2f} us at {dev.clock_hz / 1e9:g} GHz), "
          f"{len(design.cores)} core{'s' if len(design.cores) != 1 else ''}, mean core utilisation {res.stats.utilisation():.1%}")
    if macs:
        peak = len(design.cores) * dev.macs_per_cycle(_mac_dtype(design))
        print(f"{name}: {macs / res.cycles:.1f} MACs/cycle = {macs / (res.cycles * peak):.1%} of the cores' peak")
    if args.trace:
        res.trace.save(args.trace)
    _emit(name, plan, Path(args.out))
    return status


def _mac_dtype(design: object) -> object:
    """The input dtype of the first matmul-like kernel parameter (the A operand)."""
    first = design.params[0]  # type: ignore[attr-defined]
    return first.dtype


def _emit(name: str, plan: object, out: Path) -> None:
    try:
        text = tl.emit_mlir(plan)
    except (ImportError, AttributeError) as e:
        print(f"{name}: MLIR emission skipped: the MLIR backend is not available ({e})")
        return
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.mlir"
    path.write_text(text)
    print(f"{name}: MLIR written to {path} ({len(text.splitlines())} lines)")


__all__ = ["EXACT", "Tolerance", "arguments", "run"]
