"""Cascade chains packed along AIE1's snake: designs whose chains fill (or nearly fill) the VC1902's 400 cores.

The snake is checked against tests/test_cascade.py's restatement of mlir-aie's tutorial-8 (``rule_aie1``), not
tilelang's table; the packing check against a brute force; the planned designs' C against numpy.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from test_cascade import rule_aie1

import tilelang as tl
from tilelang.plan.cascades import _packs, cascade_paths, place_chains
from tilelang.plan.problem import build_problem

DEV = "xcvc1902"


def _design(rows, cols, chain, M=None, K=None, N=None):  # noqa: N803
    return tl.library.matmul(M or rows * 16, K or chain * 8, N or cols * 16, in_dtype=tl.i16, out_dtype=tl.i32,
                             device=DEV, cores=(rows, cols), layout="streams", cascade=chain, plio=True)


def test_aie1_cascade_graph_is_one_snake_through_every_compute_tile():
    dev = tl.device(DEV)
    tiles = dev.tiles("compute")
    paths = cascade_paths(dev, tiles)
    assert paths is not None and len(paths) == 1
    path = paths[0]
    assert sorted(path) == sorted(tiles)
    assert all(rule_aie1(a, b, dev.cols) for a, b in itertools.pairwise(path))


@pytest.mark.parametrize("name", ["npu1", "xcve2802"])
def test_aie_ml_cascade_graph_is_not_paths(name):
    """East or south: a tile has two cascade targets, so the packing check is not used there."""
    dev = tl.device(name)
    assert cascade_paths(dev, dev.tiles("compute")) is None


def _brute_packs(lengths, runs):
    """Every assignment of chains to runs (or to none), fitting when each run's lengths add up within it."""
    for choice in itertools.product(range(len(runs)), repeat=len(lengths)):
        used = [0] * len(runs)
        for n, j in zip(lengths, choice, strict=True):
            used[j] += n
        if all(u <= r for u, r in zip(used, runs, strict=True)):
            return True
    return not lengths


def test_packing_check_equals_brute_force():
    rng = random.Random(7)
    for _ in range(400):
        lengths = [rng.randint(1, 6) for _ in range(rng.randint(0, 5))]
        runs = [rng.randint(1, 12) for _ in range(rng.randint(1, 4))]
        assert _packs(lengths, runs) == _brute_packs(lengths, runs), (lengths, runs)


@pytest.mark.parametrize(("rows", "cols", "chain"), [(10, 10, 4), (5, 20, 4), (20, 10, 2), (25, 8, 2), (5, 10, 8),
                                                     (10, 5, 8), (4, 5, 20)])
def test_chains_filling_the_array_are_placed(rows, cols, chain):
    """400 cores in chains of 2, 4, 8 or 20: every chain on consecutive tiles of the snake, no tile twice.
    (Without the packing check the chains of 2 and 8 and the 5 x 20 chains of 4 left the last chain no run.)"""
    d = _design(rows, cols, chain)
    assert len(d.cores) == 400
    problem = build_problem(d, ())
    placed = place_chains(problem, dict(problem.pins))
    dev = tl.device(DEV)
    assert len(placed) == 400 and len(set(placed.values())) == 400
    for cas in d.cascades:
        r, q, j = cas.name.split("_")[1:]
        src, dst = placed[f"core_{r}_{q}_{j}"], placed[f"core_{r}_{q}_{int(j) + 1}"]
        assert rule_aie1(src, dst, dev.cols), (cas.name, src, dst)


@pytest.mark.parametrize(("rows", "cols", "chain"), [(5, 20, 4), (5, 10, 8)])
def test_full_array_designs_plan_and_equal_numpy(rows, cols, chain):
    """Two 400-core grids whose chains did not fit before: planned (greedy), routed, and C equals numpy."""
    d = _design(rows, cols, chain)
    M, K, N = rows * 16, chain * 8, cols * 16  # noqa: N806
    rng = np.random.default_rng(5)
    a = rng.integers(-50, 50, (M, K)).astype(np.int16)
    b = rng.integers(-50, 50, (K, N)).astype(np.int16)
    p = tl.plan(d, strategy="greedy")
    res = tl.simulate(p, **tl.library.pack_streams(d, a, b))
    np.testing.assert_array_equal(tl.library.unpack_streams(d, res.outputs["C"]), a.astype(np.int32) @ b.astype(np.int32))
    assert len(set(map(tuple, p.placement.values()))) == 400
