"""tl.library's default grids (``cores=None``) on every registered device.

The rule (docs/library.md "Core grids"): among the grids a factory's memtiles allow, most cores first and
then most rows, the first whose host moves have a NoC shim DMA channel each within ``shim_reach``'s columns
and shims, and over which the sizes split. These tests check the rule from outside: they count the host
fifos of the built design and compare with the device's NoC shims, build every larger grid explicitly to
see that none would have done, and plan and simulate default designs against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang as tl
from tilelang.devices import Device
from tilelang.ir.design import Design, EndpointKind
from tilelang.library._common import candidate_grids, shim_reach

RNG = np.random.default_rng(20250301)
AIE1 = "xcvc1902"


def noc_columns(dev: Device) -> list[int]:
    return sorted({c for c, _ in dev.tiles("shim") if dev.is_noc_shim((c, _))})


def host_fifos(design: Design) -> tuple[int, int]:
    """(fifos the host fills, fifos it drains): each takes one shim DMA channel."""
    fills = {d.dsts[0].name for d in design.dmas if d.src.kind is EndpointKind.TENSOR}
    drains = {d.src.name for d in design.dmas if d.src.kind is EndpointKind.FIFO}
    return len(fills), len(drains)


def grid_of(design: Design) -> tuple[int, int] | int:
    """(rows, cols) of a ``core_<r>_<q>`` design, else the core count."""
    parts = [c.name.split("_") for c in design.cores]
    if all(len(p) == 3 for p in parts):
        return len({p[1] for p in parts}), len({p[2] for p in parts})
    return len(parts)


def build(factory: str, device: str, cores: object = None) -> Design:
    """One representative call of each factory taking ``cores``."""
    if factory == "matmul":
        extra = {"in_dtype": tl.i16, "out_dtype": tl.i32, "layout": "streams"} if device == AIE1 else {}
        return tl.library.matmul(256, 256, 256, device=device, cores=cores, **extra)
    if factory == "conv2d":
        return tl.library.conv2d(32, 32, 16, 16, device=device, cores=cores)
    if factory == "elementwise":
        return tl.library.elementwise("add", 49152, device=device, cores=cores)
    if factory == "reduction":
        return tl.library.reduction("sum", 98304, device=device, cores=cores)
    if factory == "softmax":
        return tl.library.softmax(96, 128, dtype=tl.f32, device=device, cores=cores)
    if factory == "matvec":
        return tl.library.matvec(768, 32 if device == AIE1 else 128, device=device, cores=cores)
    raise ValueError(factory)


FACTORIES = ["matmul", "conv2d", "elementwise", "reduction", "softmax", "matvec"]


def test_shim_reach_follows_the_noc_shim_columns() -> None:
    # a NoC shim in every column, or no memtiles: the whole array
    for name in ("npu1", "npu1_1col", "npu2", "npu2_5col", AIE1):
        reach = shim_reach(tl.device(name))
        assert reach.whole and reach.cols == len({c for c, _ in tl.device(name).tiles("compute")})
    # xcve2302: NoC shims at 2, 3, 6, 7, 10, 11; every column 1-12 is at most one from one
    dev = tl.device("xcve2302")
    assert noc_columns(dev) == [2, 3, 6, 7, 10, 11]
    reach = shim_reach(dev)
    assert (reach.first, reach.cols, reach.mm2s, reach.s2mm, reach.whole) == (1, 12, 12, 12, False)
    # xcve2802: runs 1-8, 13-16, 21-24, 29-36; the first of the widest, 1-8, holds the shims at 2, 3, 6, 7
    dev = tl.device("xcve2802")
    assert noc_columns(dev) == [2, 3, 6, 7, 14, 15, 22, 23, 30, 31, 34, 35]
    reach = shim_reach(dev)
    assert (reach.first, reach.cols, reach.mm2s, reach.s2mm, reach.whole) == (1, 8, 8, 8, False)


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("device", tl.devices())
def test_default_grid_is_fed_by_the_shims_within_reach(factory: str, device: str) -> None:
    d = build(factory, device)
    dev = tl.device(device)
    reach = shim_reach(dev)
    fills, drains = host_fifos(d)
    assert fills <= reach.mm2s and drains <= reach.s2mm, (fills, drains, reach)
    grid = grid_of(d)
    if isinstance(grid, tuple):
        assert grid[1] <= reach.cols


# the larger grids of these are built one by one (a tiling ILP each for matmul): a few devices suffice
@pytest.mark.parametrize(("factory", "device"), [
    ("matmul", "xcve2302"), ("matmul", "xcve2802"), ("matmul", "npu1_3col"), ("matmul", "npu2_5col"),
    ("conv2d", "npu1"), ("conv2d", "xcve2302"), ("conv2d", AIE1), ("elementwise", "npu1_3col"),
    ("reduction", "xcve2802"), ("softmax", "npu2_7col"), ("matvec", "xcve2302"),
])
def test_no_larger_grid_would_have_done(factory: str, device: str) -> None:
    """Every grid tried before the default (more cores, or as many with more rows) fails when asked for
    explicitly, or needs more shim channels than ``shim_reach`` allows."""
    d = build(factory, device)
    dev = tl.device(device)
    reach = shim_reach(dev)
    chosen = grid_of(d)
    cores = chosen[0] * chosen[1] if isinstance(chosen, tuple) else chosen
    rows = chosen[0] if isinstance(chosen, tuple) else None
    for g in candidate_grids(dev, max_cols=reach.cols):
        if g.cores < cores or (g.cores == cores and (rows is None or g.rows <= rows)):
            break
        try:
            other = build(factory, device, (g.rows, g.cols))
        except tl.DesignError:
            continue
        fills, drains = host_fifos(other)
        assert fills > reach.mm2s or drains > reach.s2mm, f"{g} works and has more cores than {chosen}"


@pytest.mark.parametrize(("device", "factory", "grid"), [
    ("xcve2302", "matmul", (2, 8)), ("xcve2802", "matmul", (4, 4)), ("npu1", "matmul", (4, 4)),
    ("npu2", "matmul", (4, 8)), ("npu1_3col", "matmul", (4, 2)), (AIE1, "matmul", (4, 4)),
    ("npu1", "conv2d", (4, 3)), ("xcve2302", "conv2d", (2, 10)), ("xcve2802", "conv2d", (4, 3)),
    (AIE1, "conv2d", (1, 30)), ("npu1_1col", "conv2d", (1, 1)),
])
def test_default_grids(device: str, factory: str, grid: tuple[int, int]) -> None:
    assert grid_of(build(factory, device)) == grid


def test_defaults_do_not_depend_on_the_call() -> None:
    for device in ("xcve2302", "xcve2802", AIE1):
        first = [grid_of(build(f, device)) for f in FACTORIES]
        assert [grid_of(build(f, device)) for f in FACTORIES] == first


@pytest.mark.parametrize(("call", "message"), [
    (lambda: tl.library.matmul(256, 256, 256, device="xcve2302", cores=(2, 17)),
     r"reads A once per row and B once per column.*19 shim MM2S and 17 S2MM channels; xcve2302's NoC shims have "
     r"12 MM2S and 12 S2MM; use fewer rows or columns"),
    (lambda: tl.library.matmul(256, 256, 256, device="xcve2802", cores=(4, 38)),
     r"42 shim MM2S and 38 S2MM channels; xcve2802's NoC shims have 24 MM2S and 24 S2MM"),
    (lambda: tl.library.conv2d(32, 32, 16, 16, device="xcve2302", cores=(2, 15)),
     r"fills input rows once per band .* 17 shim MM2S and 15 S2MM channels; xcve2302's NoC shims have 12"),
    (lambda: tl.library.elementwise("add", 34 * 1024, device="xcve2302", cores=(2, 17)),
     r"2 input and 1 output tensors dealt to a 2 x 17 core grid: 34 shim MM2S and 34 S2MM channels"),
    (lambda: tl.library.conv2d(32, 32, 16, 16, device="npu1_1col", cores=(4, 1)),
     r"5 shim MM2S channels; npu1_1col's NoC shims have 2"),
    (lambda: tl.library.matvec(2048, 256, device="xcve2802", cores=(1, 32)),
     r"fills A and drains C once per core, and B once: 33 shim MM2S and 32 S2MM channels"),
    (lambda: tl.library.elementwise("add", 1000, device="npu1", cores=None),
     r"no core grid on npu1 works \(2 x 4: .*; 1 x 1: n=1000 is not a multiple of 1 cores x 1024\)"),
])
def test_grids_that_cannot_work_are_named(call, message) -> None:  # noqa: ANN001
    with pytest.raises(tl.DesignError, match=message):
        call()


def test_the_message_about_cores_none_holds() -> None:
    """The message about an explicit grid points at cores=None, whose grid's host moves do fit."""
    with pytest.raises(tl.DesignError, match=r"cores=None keeps to grids whose host moves fit"):
        tl.library.matmul(256, 256, 256, device="xcve2302", cores=(2, 17))
    for device in ("xcve2302", "xcve2802"):
        fills, drains = host_fifos(tl.library.matmul(256, 256, 256, device=device))
        reach = shim_reach(tl.device(device))
        assert fills <= reach.mm2s and drains <= reach.s2mm


# -- plan and simulate: numbers against numpy -------------------------------------------------------


def reference(factory: str, design: Design, arrays: dict[str, np.ndarray]) -> np.ndarray:
    if factory == "matmul":
        return arrays["A"].astype(np.float64) @ arrays["B"].astype(np.float64)
    if factory == "conv2d":
        a, w = arrays["A"].astype(np.int64), arrays["W"].astype(np.int64)
        k = w.shape[1]
        ho, wo = a.shape[0] - k + 1, a.shape[2] - k + 1
        out = np.zeros((ho, w.shape[0], wo), np.int64)
        for dy in range(k):
            for dx in range(k):
                out += np.einsum("oi,yix->yox", w[:, dy, dx, :], a[dy:dy + ho, :, dx:dx + wo])
        return out.astype(np.int32)
    if factory == "elementwise":
        return arrays["A"] + arrays["B"]
    if factory == "reduction":
        return np.array([arrays["A"].astype(np.int64).sum()]).astype(np.int32)
    if factory == "softmax":
        x = arrays["A"].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    a, b = arrays["A"].astype(np.int64), arrays["B"].astype(np.int64)
    return (a @ b).astype(np.int32)


def inputs(factory: str, design: Design) -> dict[str, np.ndarray]:
    out = {}
    for name, t in design.tensors.items():
        if name == "C":
            continue
        if factory == "matmul":  # small integers: exact in bf16 and in the f32 sums
            out[name] = RNG.integers(-3, 4, t.shape).astype(np.float32)
        elif t.dtype.is_float:
            out[name] = RNG.standard_normal(t.shape).astype(np.float32)
        else:
            out[name] = RNG.integers(-100, 100, t.shape).astype(t.dtype.numpy)
    return out


def check(factory: str, device: str, strategy: str) -> None:
    d = build(factory, device)
    if factory == "matmul" and device == AIE1:
        a = RNG.integers(-100, 100, (256, 256)).astype(np.int16)
        b = RNG.integers(-100, 100, (256, 256)).astype(np.int16)
        res = tl.simulate(tl.plan(d, strategy=strategy), **tl.library.pack_streams(d, a, b))
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
        assert np.array_equal(tl.library.unpack_streams(d, res.outputs["C"]), want)
        return
    arrays = inputs(factory, d)
    res = tl.simulate(tl.plan(d, strategy=strategy), **arrays)
    want = reference(factory, d, arrays)
    if factory == "softmax":
        assert np.all(np.abs(res.outputs["C"] - want) <= 1e-5 * np.abs(want))
    else:
        assert np.array_equal(res.outputs["C"], want)


@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("device", ["npu1", "npu1_3col", "npu2_5col", "xcve2302", "xcve2802", AIE1])
def test_default_grids_plan_and_match_numpy_greedy(device: str, factory: str) -> None:
    check(factory, device, "greedy")


@pytest.mark.slow
@pytest.mark.parametrize("factory", FACTORIES)
@pytest.mark.parametrize("device", ["xcve2302", "xcve2802", AIE1])
def test_default_grids_plan_and_match_numpy(device: str, factory: str) -> None:
    """tl.plan as users call it (the ILPs); on xcve2802 the placement's safety net fires (docs/library.md)."""
    check(factory, device, "ilp")
