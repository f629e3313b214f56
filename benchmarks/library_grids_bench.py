"""tl.library's default grids (``cores=None``) on every registered device: plan, simulate, compare with numpy.

Run: ``.venv/bin/python benchmarks/library_grids_bench.py [--devices xcve2302,xcve2802] [--only matmul,conv2d]
[--strategy ilp|greedy] [--cores "(4, 16)"]``

For every device, factory and size: build with ``cores=None`` (or ``--cores``), plan (``tl.plan``, the ILPs by
default, as users call it), simulate in timed mode with random data and compare the result with numpy
(integers bit-exactly, f32 softmax within 1e-5 relative). Prints one markdown row per case: the grid the rule
chose, the plan's wall seconds, whether a wall-clock safety net fired (a PlanWarning: the plan may differ on
another machine), the simulated cycles and whether the result equals numpy; a case that does not build or
plan prints the error instead. docs/library.md "Default grids" shows this table.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tilelang as tl  # noqa: E402
from tilelang.ir.design import Design  # noqa: E402

AIE1 = "xcvc1902"

#: Sizes per factory: small enough to plan and simulate in seconds, chosen to divide differently.
SIZES: dict[str, list[tuple[int, ...]]] = {
    "matmul": [(256, 256, 256), (384, 384, 384), (512, 512, 512)],
    "conv2d": [(32, 32, 16, 16), (34, 34, 8, 16), (18, 18, 8, 8)],
    "elementwise": [(65536,), (49152,)],
    "reduction": [(65536,), (98304,)],
    "softmax": [(256, 256), (96, 128)],
    "matvec": [(2048, 256), (768, 128)],
}
#: AIE1's linear-only shim DMA moves matvec's A tiles only as whole rows (k = K = 32).
AIE1_SIZES = {"matvec": [(2048, 32), (768, 32)]}

Check = Callable[[dict[str, np.ndarray]], bool]


def case(factory: str, dev: str, size: tuple[int, ...], cores: object,
         rng: np.random.Generator) -> tuple[Design, dict[str, np.ndarray], Check]:
    """The design, its inputs and a check of its outputs against numpy."""

    def ints(shape: tuple[int, ...], dt: type, lo: int = -100, hi: int = 100) -> np.ndarray:
        return rng.integers(lo, hi, shape).astype(dt)

    if factory == "matmul":
        M, K, N = size  # noqa: N806
        if dev == AIE1:
            d = tl.library.matmul(M, K, N, in_dtype=tl.i16, out_dtype=tl.i32, device=dev, cores=cores,
                                  layout="streams")
            a, b = ints((M, K), np.int16), ints((K, N), np.int16)
            want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
            return (d, tl.library.pack_streams(d, a, b),
                    lambda out: np.array_equal(tl.library.unpack_streams(d, out["C"]), want))
        d = tl.library.matmul(M, K, N, device=dev, cores=cores)
        a, b = ints((M, K), np.float32, -3, 4), ints((K, N), np.float32, -3, 4)  # exact in bf16 and f32
        want = a.astype(np.float64) @ b.astype(np.float64)
        return d, {"A": a, "B": b}, lambda out: np.array_equal(out["C"], want)
    if factory == "conv2d":
        H, W, ci, co = size  # noqa: N806
        d = tl.library.conv2d(H, W, ci, co, device=dev, cores=cores)
        a, w = ints((H, ci, W), np.int16), ints((co, 3, 3, ci), np.int16)
        ho, wo = H - 2, W - 2
        want = np.zeros((ho, co, wo), np.int64)
        for dy in range(3):
            for dx in range(3):
                want += np.einsum("oi,yix->yox", w[:, dy, dx, :].astype(np.int64),
                                  a[dy:dy + ho, :, dx:dx + wo].astype(np.int64))
        return d, {"A": a, "W": w}, lambda out: np.array_equal(out["C"], want.astype(np.int32))
    if factory == "elementwise":
        (n,) = size
        d = tl.library.elementwise("add", n, device=dev, cores=cores)
        a, b = ints((n,), np.int32), ints((n,), np.int32)
        return d, {"A": a, "B": b}, lambda out: np.array_equal(out["C"], a + b)
    if factory == "reduction":
        (n,) = size
        d = tl.library.reduction("sum", n, device=dev, cores=cores)
        a = ints((n,), np.int32)
        want = np.array([a.astype(np.int64).sum()]).astype(np.int32)
        return d, {"A": a}, lambda out: np.array_equal(out["C"], want)
    if factory == "softmax":
        r, c = size
        d = tl.library.softmax(r, c, dtype=tl.f32, device=dev, cores=cores)
        a = rng.standard_normal((r, c)).astype(np.float32)
        x = a.astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
        return d, {"A": a}, lambda out: bool(np.all(np.abs(out["C"] - want) <= 1e-5 * np.abs(want)))
    if factory == "matvec":
        M, K = size  # noqa: N806
        d = tl.library.matvec(M, K, device=dev, cores=cores)
        a, b = ints((M, K), np.int16), ints((K,), np.int16)
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
        return d, {"A": a, "B": b}, lambda out: np.array_equal(out["C"], want)
    raise ValueError(f"unknown factory {factory!r}")


def grid_text(d: Design) -> str:
    """``rows x cols`` of a ``core_<r>_<q>`` design, else ``n cores``."""
    parts = [c.name.split("_") for c in d.cores]
    if all(len(p) == 3 for p in parts):
        return f"{len({p[1] for p in parts})} x {len({p[2] for p in parts})}"
    return f"{len(parts)} cores"


def row(factory: str, dev: str, size: tuple[int, ...], cores: object, strategy: str) -> str:
    """One markdown row: device, design, size, grid, plan s, safety net, cycles, numpy."""
    label = f"| {dev} | {factory} | {'x'.join(map(str, size))} |"
    try:
        d, arrays, check = case(factory, dev, size, cores, np.random.default_rng(7))
    except tl.DesignError as e:
        return f"{label} - | - | - | - | DesignError: {e} |"
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            plan = tl.plan(d, strategy=strategy)
        except tl.PlanError as e:
            return f"{label} {grid_text(d)} | {time.perf_counter() - start:.1f} | - | - | PlanError: {e} |"
    seconds = time.perf_counter() - start
    nets = [w for w in caught if issubclass(w.category, tl.PlanWarning)]
    res = tl.simulate(plan, **arrays)
    equal = "yes" if check(res.outputs) else "NO"
    return (f"{label} {grid_text(d)} | {seconds:.1f} | {'yes (' + str(len(nets)) + ')' if nets else 'no'} | "
            f"{res.cycles:,} | {equal} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default=",".join(tl.devices()), help="comma-separated device names")
    ap.add_argument("--only", default=",".join(SIZES), help="comma-separated factories")
    ap.add_argument("--strategy", default="ilp", choices=["ilp", "greedy"])
    ap.add_argument("--cores", default="None", help="the cores= argument for every design (default None)")
    args = ap.parse_args()
    cores = ast.literal_eval(args.cores)
    print("| device | design | size | grid | plan s | safety net | cycles | = numpy |")
    print("|---|---|---|---|---|---|---|---|")
    for dev in args.devices.split(","):
        for factory in args.only.split(","):
            for size in (AIE1_SIZES.get(factory, SIZES[factory]) if dev == AIE1 else SIZES[factory]):
                print(row(factory, dev, size, cores, args.strategy), flush=True)


if __name__ == "__main__":
    main()
