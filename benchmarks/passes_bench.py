"""The passes of tl.passes, measured: what each changes in cycles, DDR bytes and memory, every output checked.

Run: ``.venv/bin/python benchmarks/passes_bench.py [--only double_buffer,redundant,...]``

Tables (``TABLES``, printed in order):

- the memory tables of ``passes_memory.py`` (lifetime packing, ``schedule_memory``);
- ``double_buffer_table``: every example (``--small`` sizes) and every library design of
  library_bench.py's small set, made shallow (``depth_one``: every fifo at the least depth
  its cores' windows allow), then ``tl.passes.double_buffer``: fifos deepened, on-chip
  buffer bytes, simulated cycles shallow / after the pass / as written; the pass's output
  equal bit for bit to the shallow design's and checked against numpy;
- ``redundant_table``: matvec, conv2d and the whole-array GEMM on npu1 and npu2 before and
  after ``tl.passes.eliminate_redundant_transfers``: DDR bytes, bytes re-read, cycles, the
  outputs equal bit for bit and checked against numpy, and what each re-reading fifo got.

Cycles are ``tl.simulate``'s (mode "timed") on plans by ``tl.plan``'s default ILP strategy.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import harness  # noqa: E402
import library_bench as lb  # noqa: E402
import passes_memory  # noqa: E402

import tilelang as tl  # noqa: E402
from tilelang.passes.double_buffer import depth_one, double_buffer  # noqa: E402
from tilelang.passes.redundant import (  # noqa: E402
    ddr_bytes,
    redundant_bytes,
    rewrite_report,
)
from tilelang.report.tables import text_table  # noqa: E402

#: Modules of examples/ that are not example scripts.
HELPERS = {"designs", "harness", "vmul"}
#: (row label, design, inputs, check of the outputs against numpy)
Row = tuple[str, object, dict[str, np.ndarray], Callable[[dict[str, np.ndarray]], bool]]


def example_rows() -> list[Row]:
    """Every example script's design at ``--small`` sizes, with its inputs and numpy answer."""
    rows: list[Row] = []
    real = harness.run

    def capture(name, design, inputs, expected, args, tolerance=harness.EXACT, macs=0):  # noqa: ANN001, ANN202
        del args, macs

        def check(outputs: dict[str, np.ndarray], expected=expected, tolerance=tolerance) -> bool:  # noqa: ANN001
            return all(tolerance.check(outputs[k], want)[0] for k, want in expected.items())

        rows.append((f"example {name}", design, inputs, check))
        return 0

    harness.run = capture
    try:
        for stem in sorted(p.stem for p in (ROOT / "examples").glob("*.py") if p.stem not in HELPERS):
            with contextlib.redirect_stdout(io.StringIO()):  # the scripts' own notes
                importlib.import_module(stem).main(["--small"])
    finally:
        harness.run = real
    return rows


def library_rows() -> list[Row]:
    """library_bench.py's small cases: GEMMs, matvec, conv2d, elementwise, reduction, softmax, attention."""
    rows: list[Row] = []
    cases = lb.gemm_cases(256) + lb.matvec_cases(True) + lb.conv_cases(True) + lb.stream_cases(True) + lb.attention_cases(True)
    for case in cases:
        design = case.build()
        inputs = case.inputs(np.random.default_rng(0))
        answer = case.answer(inputs, design)

        def check(outputs: dict[str, np.ndarray], want=answer, rtol=case.rtol, atol=case.atol) -> bool:  # noqa: ANN001
            return all(lb._close(outputs[k], v, rtol, atol) for k, v in want.items())

        rows.append((f"{case.design} {case.device} {case.label}", design, inputs, check))
    return rows


def _simulate(design: object, inputs: dict[str, np.ndarray]):  # noqa: ANN202 - (plan, SimResult)
    plan = tl.plan(design)
    return plan, tl.simulate(plan, **inputs)


def _numpy_ok(outputs: dict[str, np.ndarray], answer: dict[str, np.ndarray], rtol: float) -> bool:
    for name, want in answer.items():
        got, w = outputs[name].astype(np.float64), np.asarray(want).astype(np.float64)
        if got.shape != w.shape:
            return False
        if rtol == 0 and not np.array_equal(got, w):
            return False
        if rtol and not np.all(np.abs(got - w) <= rtol * np.abs(w) + 1e-6):
            return False
    return True


def _identical(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return set(a) == set(b) and all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)


def _buffer_bytes(plan: object) -> int:
    return sum(b.size for b in plan.buffers.values())


def double_buffer_table(rows: Sequence[Row] | None = None) -> list[str]:
    """Shallow (depth-1) variants of every example and library design, before and after double_buffer."""
    rows = list(rows) if rows is not None else example_rows() + library_rows()
    out, slower, failed = [], [], []
    for label, design, inputs, check in rows:
        try:
            shallow = depth_one(design)
            passed = double_buffer(shallow)
            p0, r0 = _simulate(shallow, inputs)
            p1, r1 = _simulate(passed, inputs)
            _, rw = _simulate(design, inputs)
        except tl.TileLangError as e:
            failed.append(f"  {label}: {type(e).__name__}: {e}")
            continue
        deeper = sum(a.depth != b.depth for a, b in zip(shallow.fifos, passed.fifos, strict=True))
        same = _identical(r0.outputs, r1.outputs)
        ok = same and check(r1.outputs)
        if r1.cycles > r0.cycles:
            slower.append(label)
        out.append([label, f"{deeper}/{len(shallow.fifos)}", str(_buffer_bytes(p0)), str(_buffer_bytes(p1)),
                    str(r0.cycles), str(r1.cycles), f"{r0.cycles / r1.cycles:.2f}x", str(rw.cycles),
                    ("identical" if same else "DIFFERENT") + (", numpy ok" if ok else ", NUMPY MISMATCH")])
    lines = ["double_buffer on shallow variants (every fifo at its least depth), tl.plan + tl.simulate", ""]
    lines += text_table(["design", "deepened", "buffer B shallow", "after", "cycles shallow", "after", "speedup",
                         "as written", "outputs"], out, right=(1, 2, 3, 4, 5, 6, 7))
    lines.append("")
    lines.append(f"slower after the pass: {', '.join(slower) if slower else 'none'} (of {len(out)} designs)")
    if failed:
        lines += ["not measured:", *failed]
    return [*lines, ""]


def redundant_designs() -> list[tuple[str, Callable[[], object], Callable[[np.random.Generator, object], dict],
                                      Callable[[dict], dict]]]:
    """(label, factory, inputs, numpy answer): matvec, conv2d and the whole-array GEMM on npu1 and npu2."""
    def ints(rng: np.random.Generator, shape: object, dtype: object, lo: int = -4, hi: int = 5) -> np.ndarray:
        return rng.integers(lo, hi, shape).astype(dtype)

    def mv_in(rng, d):  # noqa: ANN001, ANN202
        return {"A": ints(rng, d.tensors["A"].shape, np.int16), "B": ints(rng, d.tensors["B"].shape, np.int16)}

    def mv_out(x):  # noqa: ANN001, ANN202
        return {"C": (x["A"].astype(np.int64) @ x["B"].astype(np.int64)).astype(np.int32)}

    def cv_in(rng, d):  # noqa: ANN001, ANN202
        return {"A": ints(rng, d.tensors["A"].shape, np.int16), "W": ints(rng, d.tensors["W"].shape, np.int16)}

    def cv_out(x):  # noqa: ANN001, ANN202
        return {"C": lb._conv(x["A"], x["W"])}

    def mm_in(rng, d):  # noqa: ANN001, ANN202
        return {"A": ints(rng, d.tensors["A"].shape, np.float32), "B": ints(rng, d.tensors["B"].shape, np.float32)}

    def mm_out(x):  # noqa: ANN001, ANN202 - small integers: exact in bf16 and f32
        return {"C": (x["A"].astype(np.float64) @ x["B"].astype(np.float64)).astype(np.float32)}

    out = []
    for dev, m in (("npu1", 32), ("npu2", 16)):
        out.append((f"matvec 2048x256 i16 {dev}", lambda dev=dev, m=m: tl.library.matvec(
            2048, 256, device=dev, cores=None, tiling={"m": m, "k": 32}), mv_in, mv_out))
    for dev, grid in (("npu1", (2, 2)), ("npu2", (2, 4))):
        out.append((f"conv2d 10x34x8->16 3x3 {dev} {grid[0]}x{grid[1]}", lambda dev=dev, grid=grid: tl.library.conv2d(
            10, 34, 8, 16, dtype=tl.i16, device=dev, cores=grid), cv_in, cv_out))
    for dev in ("npu1", "npu2"):
        out.append((f"matmul 256^3 bf16->f32 {dev} whole array", lambda dev=dev: tl.library.matmul(
            256, 256, 256, device=dev), mm_in, mm_out))
    return out


def redundant_table() -> list[str]:
    """DDR bytes and cycles before and after eliminate_redundant_transfers, with what each fifo got."""
    rows, notes = [], []
    for label, factory, make_inputs, answer in redundant_designs():
        design = factory()
        x = make_inputs(np.random.default_rng(0), design)
        after, findings = rewrite_report(design)
        _, r0 = _simulate(design, x)
        _, r1 = _simulate(after, x)
        same = _identical(r0.outputs, r1.outputs)
        ok = same and _numpy_ok(r1.outputs, answer(x), 0.0)
        rows.append([label, str(ddr_bytes(design)), str(ddr_bytes(after)), str(ddr_bytes(design) - ddr_bytes(after)),
                     str(redundant_bytes(design)), str(redundant_bytes(after)), str(r0.cycles), str(r1.cycles),
                     ("identical" if same else "DIFFERENT") + (", numpy ok" if ok else ", NUMPY MISMATCH")])
        for f in findings:
            verdict = "removed" if f.rewritten else "kept"
            notes.append(f"  {label}: {f.fifo} ({f.tensor}, {f.bytes} B) {verdict}: {f.reason}")
    lines = ["eliminate_redundant_transfers: DDR bytes (read + written) and cycles, tl.plan + tl.simulate", ""]
    lines += text_table(["design", "DDR B before", "after", "removed", "re-read before", "after", "cycles before",
                         "after", "outputs"], rows, right=(1, 2, 3, 4, 5, 6, 7))
    return [*lines, "", "per fifo that re-reads DDR:", *notes, ""]


TABLES = [*passes_memory.TABLES, double_buffer_table, redundant_table]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated substrings of table function names")
    args = ap.parse_args(argv)
    chosen = [t for t in TABLES if not args.only or any(s in t.__name__ for s in args.only.split(","))]
    for table in chosen:
        print("\n".join(table()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
