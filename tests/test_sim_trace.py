"""The Perfetto trace: on every track, no two spans overlap (Perfetto would hide one of them)."""

from __future__ import annotations

import json

import numpy as np
from test_sim_support import hand_plan

import simulator
import tilelang as tl


def _overlaps(res) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    """Pairs of overlapping spans per track (spans come sorted by start within a track)."""
    bad = []
    last: dict[str, tuple[int, int]] = {}
    for track, _, start, dur in res.trace.spans():
        prev = last.get(track)
        if prev is not None and start < prev[0] + prev[1]:
            bad.append((track, prev, (start, dur)))
        if prev is None or start + dur >= prev[0] + prev[1]:
            last[track] = (start, dur)
    return bad


def test_no_overlap_in_a_planned_gemm_with_joins_splits_and_dispatch(tmp_path):
    d = tl.library.matmul(128, 128, 128, in_dtype=tl.i16, out_dtype=tl.i32, tiling={"m": 32, "k": 32, "n": 32})
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 4, (128, 128)).astype(np.int16)
    b = rng.integers(-4, 4, (128, 128)).astype(np.int16)
    res = simulator.simulate(tl.plan(d), dispatch_overhead=True, A=a, B=b)
    assert np.array_equal(res.outputs["C"], (a.astype(np.int64) @ b).astype(np.int32))
    assert _overlaps(res) == []
    tracks = {t for t, *_ in res.trace.spans()}
    assert "dispatch" in tracks
    assert any(t.startswith("moves on ") for t in tracks)
    # A memtile link's fifos in and out each have a track of their own.
    links = [t for t in tracks if t.endswith(" in") or t.endswith(" out")]
    assert any(t.endswith(" in") for t in links) and any(t.endswith(" out") for t in links)
    # In the Chrome JSON every track is its own thread id.
    res.trace.save(tmp_path / "t.json")
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    names = [e["args"]["name"] for e in events if e["name"] == "thread_name"]
    assert len(names) == len(set(names))


def test_concurrent_host_moves_get_separate_tracks():
    @tl.design(device="npu1")
    def fw(A: tl.Tensor[(2048,), tl.i32], B: tl.Tensor[(2048,), tl.i32], C: tl.Tensor[(2048,), tl.i32],
           D: tl.Tensor[(2048,), tl.i32]):
        f1 = tl.fifo(tl.Tile[(512,), tl.i32], name="f1")
        f2 = tl.fifo(tl.Tile[(512,), tl.i32], name="f2")
        g1 = tl.fifo(tl.Tile[(512,), tl.i32], name="g1")
        g2 = tl.fifo(tl.Tile[(512,), tl.i32], name="g2")
        tl.dma(f1, f2, name="fw")
        tl.dma(g1, g2, name="gw")
        tl.dma(A, f1)
        tl.dma(B, g1)
        tl.dma(f2, C)
        tl.dma(g2, D)

    plan = hand_plan(fw, {}, link_tiles={"fw": (0, 1), "gw": (1, 1)},
                     host_tiles={"f1": (0, 0), "f2": (0, 0), "g1": (1, 0), "g2": (1, 0)})
    x = np.arange(2048, dtype=np.int32)
    res = simulator.simulate(plan, A=x, B=x + 1)
    assert np.array_equal(res.outputs["C"], x) and np.array_equal(res.outputs["D"], x + 1)
    assert _overlaps(res) == []
    moves = {t for t, *_ in res.trace.spans() if t.startswith("moves on ")}
    assert moves == {"moves on f1", "moves on g1", "moves on f2", "moves on g2"}
