"""``mode="timing"`` gives exactly the cycles and statistics of ``mode="timed"`` without moving data.

Checked on every example script's design (at its ``--small`` sizes, captured where the script hands it
to the harness) and on every design benchmarks/library_bench.py measures at its small sizes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang as tl
from tilelang.errors import SimulationError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import library_bench as lb  # noqa: E402
from test_examples import SCRIPTS, load  # noqa: E402

LIBRARY = lb.gemm_cases(256) + lb.matvec_cases(True) + lb.conv_cases(True) + lb.stream_cases(True) + lb.attention_cases(True)


def assert_same_timing(plan: object, inputs: dict[str, np.ndarray]) -> None:
    timed = tl.simulate(plan, mode="timed", trace=False, **inputs)
    timing = tl.simulate(plan, mode="timing", trace=False)
    assert timed.cycles > 0
    assert timing.cycles == timed.cycles
    assert timing.stats == timed.stats
    assert timing.outputs == {} and timing.mode == "timing"


def captured_design(stem: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[object, dict]:
    """The design and inputs example ``stem`` builds at its small sizes (the harness is not run)."""
    mod = load(stem)
    seen: dict[str, object] = {}

    def capture(name, design, inputs, expected, args, **kw):  # noqa: ANN001, ANN202 - harness.run's signature
        seen["design"], seen["inputs"] = design, inputs
        return 0

    monkeypatch.setattr(sys.modules["harness"], "run", capture)
    assert mod.main(["--small", "--out", str(tmp_path), "--strategy", "greedy"]) == 0
    return seen["design"], seen["inputs"]  # type: ignore[return-value]


@pytest.mark.parametrize("stem", SCRIPTS)
def test_timing_mode_equals_timed_on_every_example(stem, monkeypatch, tmp_path):
    design, inputs = captured_design(stem, monkeypatch, tmp_path)
    assert_same_timing(tl.plan(design, strategy="greedy"), inputs)


@pytest.mark.parametrize("case", LIBRARY, ids=[f"{c.design}-{c.device}-{c.label}" for c in LIBRARY])
def test_timing_mode_equals_timed_on_every_library_design(case):
    design = case.build()
    inputs = case.inputs(np.random.default_rng(0))
    assert_same_timing(tl.plan(design, strategy="greedy"), inputs)


def test_timing_mode_needs_no_arrays_but_rejects_unknown_names():
    plan = tl.plan(tl.library.matmul(64, 64, 64, cores=1, tiling={"m": 32, "k": 32, "n": 32}), strategy="greedy")
    assert tl.simulate(plan, mode="timing").cycles > 0
    with pytest.raises(SimulationError, match="no tensor"):
        tl.simulate(plan, mode="timing", X=np.zeros(4))
    with pytest.raises(SimulationError, match="mode must be one of"):
        tl.simulate(plan, mode="timings")


# Flows into several cores' buffers (a broadcast), into one core's and out of one core's, each in buffers of
# more than one bank.
BANK_CASES = [c for c in LIBRARY if c.device == "npu1" and (c.design in ("matvec", "elementwise") or (
    c.design == "matmul" and c.label.endswith("bf16->bf16 tiling=auto")))]


@pytest.mark.parametrize("case", BANK_CASES, ids=lambda c: f"{c.design}-{c.device}-{c.label}")
def test_flow_bank_tables_match_the_buffers_banks(case):
    """A flow looks its transfer's banks up in a table built when it starts (simulator.dma.Flow._banks_of):
    every (sink slots, source slot) gives the watched compute-tile banks of those buffers, as read from the
    rings' banks directly."""
    from itertools import product

    from simulator.build import World
    from simulator.dma import RingSink, RingSource

    plan = tl.plan(case.build(), strategy="greedy")
    world = World(plan, {}, timed=True, trace=None, data=False)
    watched = world.contention.watched
    checked = 0
    for flow in world.flows:
        if flow.contention is None:
            continue
        banks_of = flow._banks_of()
        src = flow.source
        src_side = src.side if isinstance(src, RingSource) else None
        ring_sinks = [s if isinstance(s, RingSink) else None for s in flow.sinks]
        if banks_of is None:
            assert src_side is None or not any(src_side.ring.banks or ()), flow.fifo
            continue
        sink_ranges = [range(s.side.ring.depth) if s is not None else range(1) for s in ring_sinks]
        for slots in product(*sink_ranges):
            for j in range(src_side.ring.depth if src_side is not None else 1):
                if src_side is not None:
                    src_side.consumed = j  # the source's slot 0 is the one the transfer reads
                want = [s.side.ring.banks[i] for s, i in zip(ring_sinks, slots, strict=True)
                        if s is not None and s.side.ring.banks is not None]
                if src_side is not None and src_side.ring.banks is not None:
                    want.append(src_side.ring.banks[j])
                got = [bank for bank, _ in banks_of(list(slots))]  # (bank, its contention record) pairs
                assert got == [b for b in want if b is not None and b in watched], flow.fifo
                checked += len(set(want)) > 1
    assert checked > 0  # some lookups tell buffers in different banks apart
