"""Emitted PLIO code, run: physical-level modules with PLIO streams executed by tests/mlir/interp.py.

The PL side is not in any module (mlir-aie's PLIO designs hold only the array); the interpreter is given it
as a testbench gives each PLIO port its data (``pl_side_of(plan)``: each PLIO move's elements, in walk
order, at the PL shim port the plan put it on). Everything between those ports is what the module says:
the PL shims' South ports, the switchboxes, the cores' DMAs and locks and code. The results are checked
against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang as tl

pytest.importorskip("mlir.ir")

from test_mlir_physical import load_interp  # noqa: E402 - after the skip: it loads the MLIR bindings

N = 256


@tl.kernel
def triple(a: tl.Tile[(N,), tl.i32], c: tl.Tile[(N,), tl.i32]):
    c[...] = a * 3


def _triple(plio_in: object, plio_out: object, reps: int = 4, reverse: bool = False, device: str = "xcvc1902"):
    """``reps`` tiles through one core; with ``reverse`` the input's tiles are moved last first (one PLIO move
    a tile)."""

    @tl.design(device=device)
    def plio_triple(X: tl.Tensor[(reps * N,), tl.i32], C: tl.Tensor[(reps * N,), tl.i32]):
        a = tl.fifo(tl.Tile[(N,), tl.i32], name="a")
        c = tl.fifo(tl.Tile[(N,), tl.i32], name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(reps):
                x, y = a.acquire(), c.acquire()
                triple(x, y)
                a.release()
                c.release()

        if reverse:
            for j in range(reps):
                tl.dma(X, a, plio=plio_in, pattern=tl.pattern((reps - 1 - j) * N, [N], [1]))
        else:
            tl.dma(X, a, plio=plio_in)
        tl.dma(c, C, plio=plio_out)

    return plio_triple


def _run(d, inputs, seed=0):
    interp = load_interp()
    p = tl.plan(d, strategy="greedy")
    module = tl.emit_mlir(p, level="physical", as_module=True)
    return interp.run_physical(module, d, inputs, seed=seed, pl_side=interp.pl_side_of(p)), p


@pytest.mark.parametrize(("plio_in", "plio_out"), [(True, True), (True, False), (False, 128)])
def test_plio_streams_run_to_numpy(plio_in, plio_out):
    """PLIO in and out, PLIO in with a NoC shim DMA out, and a NoC shim DMA in with PLIO out."""
    x = (np.arange(4 * N) * 7 % 1000 - 500).astype(np.int32)
    for seed in (0, 1):
        got, p = _run(_triple(plio_in, plio_out), {"X": x}, seed)
        np.testing.assert_array_equal(got["C"], x * 3)
    ends = [p.fifos["a"].producer.tile, next(e.tile for e in p.fifos["c"].consumers)]
    assert [tl.device("xcvc1902").is_pl_shim(t) for t in ends] == [bool(plio_in), bool(plio_out)]


@pytest.mark.parametrize("device", ["xcve2802", "xcve2302"])
def test_aie_ml_plio_streams_run_to_numpy(device):
    """AIE-ML's PL shims (8 PLIO streams in, 6 out, AM020): the physical module takes the stream on the PL
    shim switch's South port, with no shim mux setting; run, it computes numpy's result."""
    x = (np.arange(4 * N) * 7 % 1000 - 500).astype(np.int32)
    for plio_in, plio_out in ((True, True), (True, False), (False, 64)):
        got, p = _run(_triple(plio_in, plio_out, device=device), {"X": x})
        np.testing.assert_array_equal(got["C"], x * 3)
        ends = [p.fifos["a"].producer.tile, next(e.tile for e in p.fifos["c"].consumers)]
        assert [p.device.is_pl_shim(t) for t in ends] == [bool(plio_in), bool(plio_out)]
        if plio_in and plio_out:  # both ends PL shims: no shim DMA, so no mux setting at all
            assert "aie.shim_mux" not in tl.emit_mlir(p, level="physical")


def test_pl_side_walks_each_moves_pattern():
    """Four PLIO moves, the last tile of X first: the stream carries the moves in the design's order, so C
    holds X's tiles last first."""
    x = np.arange(4 * N, dtype=np.int32)
    got, _ = _run(_triple(True, True, reverse=True), {"X": x})
    np.testing.assert_array_equal(got["C"], x.reshape(4, N)[::-1].reshape(-1) * 3)


def test_the_pl_side_must_match_the_module():
    """A PL side on a port the module does not route from is refused, not silently dropped."""
    interp = load_interp()
    d = _triple(True, True)
    p = tl.plan(d, strategy="greedy")
    module = tl.emit_mlir(p, level="physical", as_module=True)
    side = interp.pl_side_of(p)
    (tile, _, ch), moves = next((k, v) for k, v in side.items() if k[1] == "in")
    wrong = {**{k: v for k, v in side.items() if k[1] == "out"}, (tile, "in", ch + 1): moves}
    with pytest.raises(interp.Deadlock, match="routes nothing from the PLIO port"):
        interp.run_physical(module, d, {"X": np.zeros(4 * N, np.int32)}, pl_side=wrong)


def test_plio_fed_cascade_gemm_runs_to_numpy():
    """tl.library.matmul's cascade chains fed and drained by PLIO (docs/plio.md): 2 x 2 chains of 3 cores,
    the emitted cores' cascade code and the PLIO routes executed."""
    M, K, N_ = 96, 96, 32  # noqa: N806
    d = tl.library.matmul(M, K, N_, in_dtype=tl.i16, out_dtype=tl.i32, device="xcvc1902", cores=(2, 2),
                          layout="streams", cascade=3, tiling={"m": 48, "k": 32, "n": 16}, plio=True)
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, (M, K)).astype(np.int16)
    b = rng.integers(-50, 50, (K, N_)).astype(np.int16)
    got, _ = _run(d, tl.library.pack_streams(d, a, b))
    np.testing.assert_array_equal(tl.library.unpack_streams(d, got["C"]), a.astype(np.int32) @ b.astype(np.int32))
