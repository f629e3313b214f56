"""Every design benchmarks/library_bench.py measures (at its --small sizes) emits MLIR at both levels.

The emitter refuses what mlir-aie could not build (stack temporaries beyond the core's stack, BD fields,
locks); a design the library builds and the simulator runs must not be one of those.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tilelang as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import library_bench as lb  # noqa: E402

pytest.importorskip("mlir.ir")

CASES = lb.gemm_cases(256) + lb.matvec_cases(True) + lb.conv_cases(True) + lb.stream_cases(True) + lb.attention_cases(True)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.design}-{c.device}-{c.label}" for c in CASES])
def test_library_design_emits_at_both_levels(case):
    design = case.build()
    plan = tl.plan(design, strategy="greedy")
    for level in ("objectfifo", "physical"):
        text = tl.emit_mlir(plan, level=level)
        assert text.count('"aie.core"') == len(design.cores)
