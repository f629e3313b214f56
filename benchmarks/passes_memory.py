"""Lifetime packing of local buffers and ``schedule_memory``: the memory tables of the passes benchmark.

Run: ``.venv/bin/python benchmarks/passes_memory.py`` (also part of ``benchmarks/passes_bench.py``)

1. Packing: for each design of examples/local_buffers.py (npu1), the bytes of its core's local
   buffers laid apart, by first fit, by the offset MIP, and the lower bound (the most bytes
   resident during one call); the MIP's solve time; whether the design plans without packing
   (the PlanError quoted when not) and with it; the simulated output checked against numpy.
2. Scheduling: each design's peak live bytes (local buffers and held fifo elements during one
   call) and packed local bytes before and after ``tl.passes.schedule_memory``, against the
   brute-force least peak over every order of each block's calls that keeps dependences
   (blocks of at most 8 calls); the scheduled design's output checked against numpy.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

import local_buffers as lb  # noqa: E402

import tilelang as tl  # noqa: E402
from tilelang.devices.abi import align  # noqa: E402
from tilelang.ir.design import Call, Core  # noqa: E402
from tilelang.ir.liveness import liveness  # noqa: E402
from tilelang.passes.schedule import _Block, _blocks  # noqa: E402
from tilelang.plan.packing import _extent, _first_fit, _mip  # noqa: E402
from tilelang.report.tables import text_table  # noqa: E402

#: design name -> (factory, numpy answer from the inputs, output tensor, tolerance)
DESIGNS = {
    "fused_matmul_relu": (lb.fused_matmul_relu, lambda x: lb.fused_reference(x["A"], x["B"]), "C", 1e-4),
    "attention_step": (lb.attention_step, lambda x: lb.attention_reference(x["Q"], x["KT"], x["V"]), "Out", 2e-2),
    "kernel_pipeline": (lb.kernel_pipeline, lambda x: lb.pipeline_reference(x["A"]), "C", 0.0),
    "branches": (lb.branches, lambda x: lb.branches_reference(x["A"]), "C", 0.0),
}


def _check(design: object, plan: object, name: str) -> str:
    """'exact' / 'within TOL' / 'MISMATCH' of the simulated output against numpy."""
    _, answer, out, tol = DESIGNS[name]
    x = lb.inputs(design)
    got = tl.simulate(plan, **x).outputs[out].astype(np.float64)
    want = np.asarray(answer(x)).astype(np.float64)
    err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1.0)))
    if err == 0.0:
        return "exact"
    return f"within {tol:g}" if err <= tol else f"MISMATCH ({err:.3g})"


def packing_table() -> list[str]:
    rows = []
    for name, (factory, *_) in DESIGNS.items():
        d = factory()
        core = next(c for c in d.cores if c.buffers)
        kernels = {k.name: k for k in d.kernels}
        live = liveness(core, kernels)
        sizes = {b.name: align(b.nbytes) for b in core.buffers}
        bound = max(sum(sizes[b] for b in s) for s in live.resident)
        ff = _first_fit(sizes, live.interference())
        t0 = time.perf_counter()
        mip, info = _mip(sizes, live.interference(), ff, "cbc", 30.0) if len(sizes) > 1 else (ff, None)
        seconds = time.perf_counter() - t0
        try:
            tl.plan(d, pack=False, strategy="greedy")
            apart_plans = "plans"
        except tl.PlanError as e:
            apart_plans = f"PlanError: {e}"
        plan = tl.plan(d)
        rows.append([name, str(len(sizes)), str(sum(sizes.values())), str(_extent(ff, sizes)),
                     str(_extent(mip, sizes) if mip else "-"), str(bound),
                     f"{seconds:.2f}" if info else "-", "no" if apart_plans != "plans" else "yes",
                     _check(d, plan, name)])
        if apart_plans != "plans":
            rows[-1].append(apart_plans)
    lines = ["Packing local buffers by lifetime (npu1; bytes of one core's local buffers)", ""]
    lines += text_table(["design", "buffers", "apart", "first fit", "MIP", "bound", "MIP s", "plans apart",
                         "output vs numpy"], [r[:9] for r in rows], right=(1, 2, 3, 4, 5, 6))
    for r in rows:
        if len(r) > 9:
            lines.append(f"  {r[0]} without packing: {r[9]}")
    return [*lines, ""]


def _core_blocks(core: Core, kernels: dict) -> list[_Block]:
    """Every run of two or more calls of ``core``, as the scheduler sees it."""
    live = liveness(core, kernels)
    sizes = {b.name: b.nbytes for b in core.buffers}
    out: list[_Block] = []

    def visit(body: tuple, first: int) -> int:
        number, at = {}, first
        for i, s in enumerate(body):
            if isinstance(s, Call):
                number[i] = at
                at += 1
            elif hasattr(s, "body"):
                at = visit(s.body, at)
        out.extend(_Block([body[i] for i in run], kernels, live.after[number[run[-1]]], sizes) for run in _blocks(body))
        return at

    visit(core.body, 0)
    return out


def _brute_force_peak(core: Core, kernels: dict) -> int:
    """The largest, over blocks (<= 8 calls), of a block's least peak of local bytes over every order of its calls
    that keeps dependences."""
    top = 0
    for block in _core_blocks(core, kernels):
        n = len(block.calls)
        if n > 8:
            raise ValueError(f"a block of {n} calls: brute force stops at 8")
        orders = [list(p) for p in itertools.permutations(range(n))
                  if all(block.preds[k] & ~sum(1 << j for j in p[: p.index(k)]) == 0 for k in p)]
        top = max(top, min(block.peak(o) for o in orders))
    return top


def schedule_table() -> list[str]:
    rows = []
    for name, (factory, *_) in DESIGNS.items():
        d = factory()
        s = tl.passes.schedule_memory(d)
        kernels = {k.name: k for k in d.kernels}
        fifos = {f.name: f for f in d.fifos}
        core, new = d.cores[0], s.cores[0]
        before, after = liveness(core, kernels, fifos), liveness(new, kernels, fifos)
        p0, p1 = tl.plan(d), tl.plan(s)
        key = f"packing_{core.name}"
        brute = _brute_force_peak(core, kernels)
        block_peak = _block_peak(new, kernels)
        none = not _core_blocks(core, kernels)
        rows.append([name, str(before.peak()), str(after.peak()), str(before.peak_local()), str(after.peak_local()),
                     "-" if none else str(brute),
                     "(no run of calls)" if none else "yes" if block_peak == brute else f"NO ({block_peak})",
                     str(int(p0.solves[key].objective)), str(int(p1.solves[key].objective)), _check(s, p1, name)])
    lines = ["schedule_memory: peak live bytes during one call (local buffers + held fifo elements; local only), "
             "before -> after", ""]
    lines += text_table(["design", "peak", "after", "local peak", "after", "brute force", "= brute",
                         "packed", "after", "output vs numpy"], rows, right=(1, 2, 3, 4, 5, 7, 8))
    return [*lines, ""]


def random_table(seed: int = 0, trials: int = 20) -> list[str]:
    """First fit against the offset MIP on random interference graphs (the designs above all reach the bound)."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in (6, 10, 14):
        worse, excess, secs, optimal = 0, [], [], 0
        for _ in range(trials):
            names = [f"b{i}" for i in range(n)]
            sizes = {b: 16 * int(rng.integers(1, 64)) for b in names}
            meet = {(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if rng.random() < 0.4}
            meet = {(min(a, b), max(a, b)) for a, b in meet}
            ff = _first_fit(sizes, meet)
            t0 = time.perf_counter()
            mip, info = _mip(sizes, meet, ff, "cbc", 30.0)
            secs.append(time.perf_counter() - t0)
            best = min(_extent(ff, sizes), _extent(mip, sizes) if mip else _extent(ff, sizes))
            optimal += info.status == "optimal"
            worse += _extent(ff, sizes) > best
            excess.append(_extent(ff, sizes) / best - 1)
        rows.append([str(n), str(trials), str(worse), f"{100 * np.mean(excess):.1f}%", f"{100 * max(excess):.1f}%",
                     f"{optimal}/{trials}", f"{np.mean(secs):.2f}", f"{max(secs):.2f}"])
    lines = [f"First fit vs the offset MIP on random graphs (edge probability 0.4, sizes 16-1008 B, seed {seed})", ""]
    lines += text_table(["buffers", "graphs", "FF worse", "mean FF excess", "max", "MIP optimal", "mean s", "max s"],
                        rows, right=(0, 1, 2, 3, 4, 6, 7))
    return [*lines, ""]


def _block_peak(core: Core, kernels: dict) -> int:
    """The largest peak over the blocks of ``core`` as written (what brute force is compared with)."""
    return max((b.peak(list(range(len(b.calls)))) for b in _core_blocks(core, kernels)), default=0)


TABLES = [packing_table, random_table, schedule_table]


def main() -> int:
    for table in TABLES:
        print("\n".join(table()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
