"""Fuzzing at length: counts by outcome over mutated IR text and generated designs.

Run: ``.venv/bin/python benchmarks/fuzz_bench.py [--mutants 5000] [--designs 300] [--modules 300] [--seed 0]
[--timeout 60]``

Mutants: the printed text of every zoo design (tests/mlir/zoo.py, at small sizes, on each device it
supports) and of the design of every script in examples/ (``--small``), or of their greedy plans for
``--plan-share`` of them, with 1-3 random edits (integers set to 0, -1, 1, neighbours, doubles or
huge values; names swapped or replaced; lines dropped or duplicated), then parsed, planned (greedy;
a parsed plan as it is), simulated in both modes and emitted at both MLIR levels. Generated designs: random pipelines
(tests/fuzz_support.py) planned with two sets of fifo depths and a pinned placement, each simulated
in both modes and compared with numpy. Modules: mlir-aie modules with the same random edits, read by
``tl.read_mlir`` (the objectfifo-level modules tilelang emits for the example scripts' designs, given their
kernels, and the hand-written modules of tests/data, custom assembly through aie-opt where it is found),
planned (greedy) and simulated in timing mode (extern kernels given 100 cycles a call).

Each case runs in a forked child killed after ``--timeout`` seconds, so a hang is counted, not
waited on. Outcomes: ``ok``; a tilelang error by class; ``hang``; ``raw`` (any other exception,
by type); ``mode-dependent`` (timed and functional outputs differ); ``accepted-invalid`` (a parsed
plan that breaks a rule tests/fuzz_support.plan_violations checks from the device data);
``mismatch`` (a generated design's outputs differ from numpy in some mode, depth or placement).
The first few cases of every bad outcome are listed below the table.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_support import (  # noqa: E402
    bounded,
    check_design,
    example_designs,
    module_sources,
    mutate,
    specs,
    through_pipeline,
    through_reader,
)
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from zoo_support import CASES, zoo  # noqa: E402

import tilelang as tl  # noqa: E402

BAD = ("hang", "raw", "mode-dependent", "accepted-invalid", "mismatch")


def sources(which: str = "all") -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(label, printed text) of every zoo case and every example script's design (--small), and of their
    greedy plans; ``which``: "all", "zoo" or "examples"."""
    designs = [(f"{name}/{device}", zoo.ZOO[name][0](device=device)) for name, device in CASES]
    if which == "examples":
        designs = []
    if which != "zoo":
        designs += [(f"examples/{stem}", d) for stem, d in example_designs().items()]
    texts, plans = [], []
    for label, d in designs:
        texts.append((label, tl.ir.print(d)))
        try:
            plans.append((f"{label} plan", tl.ir.print(tl.plan(d, strategy="greedy"))))
        except tl.TileLangError as e:
            print(f"(no plan text for {label}: {type(e).__name__})", file=sys.stderr)
    return texts, plans


def classify(result: tuple) -> str:
    kind = result[0]
    if kind == "ok":
        return result[1].split(":")[0]
    if kind == "error":
        return result[1]
    if kind == "raw":
        return f"raw {result[1]}"
    return kind


def run_mutants(n: int, seed: int, timeout: float, plan_share: float, which: str = "all") -> tuple[Counter, dict]:
    rng = random.Random(seed)
    designs, plans = sources(which) if n > 0 else ([], [])

    def draw() -> tuple[str, str, tuple]:
        label, text = rng.choice(plans if rng.random() < plan_share else designs)
        mutant = mutate(text, rng)
        return label, mutant, (mutant,)

    return _mutated(n, timeout, draw, through_pipeline, "mutants")


def run_modules(n: int, seed: int, timeout: float) -> tuple[Counter, dict]:
    rng = random.Random(seed)
    found = module_sources() if n > 0 else []

    def draw() -> tuple[str, str, tuple]:
        label, text, kernels = rng.choice(found)
        mutant = mutate(text, rng)
        return label, mutant, (mutant, kernels)

    return _mutated(n, timeout, draw, through_reader, "modules")


def _mutated(n: int, timeout: float, draw, fn, what: str) -> tuple[Counter, dict]:  # noqa: ANN001 - callables
    """Counts by outcome of ``n`` cases ``draw()`` makes ((label, mutant, args of ``fn``)), each run bounded."""
    counts: Counter = Counter()
    examples: dict[str, list] = {}
    for _ in range(n):
        label, mutant, args = draw()
        result = bounded(fn, args, timeout)
        key = classify(result)
        counts[key] += 1
        if key.split(" ")[0] in BAD:
            examples.setdefault(key, []).append((label, result, mutant))
        progress(what, counts)
    return counts, examples


def progress(what: str, counts: Counter, every: int = 250) -> None:
    """A running tally on stderr every ``every`` cases, so a cut-short run still says where it got."""
    done = sum(counts.values())
    if done % every == 0:
        tally = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        print(f"[{what} {done}] {tally}", file=sys.stderr, flush=True)


def drawn_specs(n: int, seed: int) -> list[tuple]:
    """``n`` generated specs with a seed each, drawn by hypothesis (deterministic for a given n)."""
    out: list[tuple] = []
    if n <= 0:
        return out

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(specs(), st.integers(0, 2**32 - 1))
    def collect(spec, s):  # noqa: ANN001, ANN202
        out.append((spec, (s + seed) % 2**32))

    collect()
    return out[:n]


def run_designs(n: int, seed: int, timeout: float) -> tuple[Counter, dict]:
    counts: Counter = Counter()
    examples: dict[str, list] = {}
    for spec, s in drawn_specs(n, seed):
        result = bounded(check_design, (spec, s), timeout)
        if result[0] == "ok":
            checked, problems = result[1]
            key = "mismatch" if problems else ("ok" if checked else "PlanError (every variant)")
            if problems:
                result = ("mismatch", problems[0])
        else:
            key = classify(result)
        counts[key] += 1
        if key.split(" ")[0] in BAD:
            examples.setdefault(key, []).append((repr(spec), result, ""))
        progress("designs", counts, 50)
    return counts, examples


def table(title: str, counts: Counter, total: int, seconds: float) -> None:
    print(f"\n{title}: {total} cases in {seconds:.0f} s")
    print(f"  {'outcome':<34} {'count':>6} {'share':>7}")
    for key, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {key:<34} {c:>6} {100 * c / max(total, 1):>6.1f}%")
    bad = {k: sum(c for key, c in counts.items() if key.split(" ")[0] == k) for k in BAD}
    print("  " + ", ".join(f"{k}: {v}" for k, v in bad.items()))


def show(examples: dict, limit: int) -> None:
    for key, cases in sorted(examples.items()):
        print(f"\n-- {key}: {len(cases)} case(s); first {min(limit, len(cases))}")
        for label, result, mutant in cases[:limit]:
            detail = str(result[-1]).strip().splitlines()
            print(f"   {label}: {detail[-1] if detail else ''}")
            if mutant and "--text" in sys.argv:
                print("      " + mutant.replace("\n", "\n      "))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=5000)
    ap.add_argument("--designs", type=int, default=300)
    ap.add_argument("--modules", type=int, default=300, help="mutated mlir-aie modules read by tl.read_mlir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case before it counts as a hang")
    ap.add_argument("--plan-share", type=float, default=0.25, help="share of mutants made from printed plans")
    ap.add_argument("--sources", choices=("all", "zoo", "examples"), default="all",
                    help="what to mutate: the zoo designs, the example scripts' designs, or both")
    ap.add_argument("--examples", type=int, default=5, help="cases listed per bad outcome")
    ap.add_argument("--text", action="store_true", help="also print the mutated text of each listed case")
    args = ap.parse_args()

    print(f"fuzz_bench: {args.mutants} mutants ({args.sources}), {args.designs} generated designs, {args.modules} "
          f"modules, seed {args.seed}, {args.timeout:g} s per case")
    t0 = time.perf_counter()
    m_counts, m_examples = run_mutants(args.mutants, args.seed, args.timeout, args.plan_share, args.sources)
    table(f"mutated IR text ({args.sources}: designs and plans)", m_counts, args.mutants, time.perf_counter() - t0)
    t1 = time.perf_counter()
    d_counts, d_examples = run_designs(args.designs, args.seed, args.timeout)
    table("generated designs (3 variants each vs numpy)", d_counts, args.designs, time.perf_counter() - t1)
    t2 = time.perf_counter()
    r_counts, r_examples = run_modules(args.modules, args.seed, args.timeout)
    table("mutated mlir-aie modules (tl.read_mlir, planned, timing mode)", r_counts, args.modules,
          time.perf_counter() - t2)
    show({**m_examples, **{f"design {k}": v for k, v in d_examples.items()},
          **{f"module {k}": v for k, v in r_examples.items()}}, args.examples)
    bad = sum(c for k, c in (m_counts + d_counts + r_counts).items() if k.split(" ")[0] in BAD)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
