"""Spatial multi-tenancy and fusion: co-location, serving policies, horizontal fusion (docs/tenancy.md).

Run: ``.venv/bin/python benchmarks/tenancy_bench.py [--small] [--requests 1000] [--plot out/tenancy_serving.png]``

1. Co-location: four library designs (GEMM, softmax, reduction, elementwise), each a factory
   that fills the partition it is given, co-located by ``tl.colocate`` (exact search over
   widths) and simulated together (shared DDR), against one after another on the whole
   array. Every tenant's outputs are checked against numpy.
2. Serving: a mixed Poisson / bursty trace of three designs under each policy, at loads
   from 30% to 120% of the time-share capacity (``tilelang.tenancy.traces``).
3. Fusion: independent small GEMMs of different shapes fused by ``tl.fuse`` against one
   launch each, with the host's per-launch dispatch (mlir-aie issue 3793, 450 us); and a
   GEMM -> relu -> GEMM chain fused through on-chip fifos against three launches via DDR.

Cycles are the simulator's (timed mode); dispatch and reconfiguration costs are those
``tilelang.tenancy.serve`` cites. Everything is deterministic: same output on any machine.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tilelang as tl  # noqa: E402
from tilelang.tenancy import traces  # noqa: E402
from tilelang.tenancy.serve import DISPATCH_SECONDS, ServiceTimes, serve  # noqa: E402


def gemm_grid(dev: tl.Device) -> tuple[int, int]:
    """Core rows x columns of a GEMM filling a partition: as many rows as columns, up to 4 (more A streams than
    a column's two shim MM2S channels carry do not plan)."""
    return (next(r for r in (4, 2, 1) if r <= dev.cols), dev.cols)


def tenants(small: bool) -> dict:
    """The four co-located designs, as factories of the partition device."""
    g = 128 if small else 256
    n = 8192 if small else 16384

    def gemm(dev):  # noqa: ANN001, ANN202
        return tl.library.matmul(g, g, g, tl.i16, tl.i32, device=dev, cores=gemm_grid(dev))

    def softmax(dev):  # noqa: ANN001, ANN202
        return tl.library.softmax(32, 256, tl.bf16, device=dev, cores=dev.cols)

    def total(dev):  # noqa: ANN001, ANN202
        return tl.library.reduction("sum", n, tl.i32, device=dev, cores=dev.cols)

    def add(dev):  # noqa: ANN001, ANN202
        return tl.library.elementwise("add", n, tl.i32, device=dev, cores=dev.cols)

    return {"gemm": gemm, "softmax": softmax, "sum": total, "add": add}


def inputs(design: tl.ir.design.Design, rng: np.random.Generator) -> dict:
    out = {}
    for name in design.inputs:
        t = design.tensors[name]
        if t.dtype.name == "bf16":
            out[name] = rng.standard_normal(t.shape).astype(np.float32)
        else:
            out[name] = rng.integers(-8, 8, t.shape).astype(t.dtype.numpy)
    return out


def reference(kind: str, x: dict) -> np.ndarray:
    if kind == "gemm":
        return x["A"].astype(np.int32) @ x["B"].astype(np.int32)
    if kind == "softmax":
        a = x["A"].astype(np.float64)
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if kind == "sum":
        return np.array([x["A"].astype(np.int64).sum()])
    return x["A"] + x["B"]


def matches(kind: str, got: np.ndarray, want: np.ndarray) -> bool:
    if kind == "softmax":  # bf16 rounding at every op (docs/library.md)
        return bool(np.allclose(got.astype(np.float64), want, atol=2e-2, rtol=5e-2))
    return bool(np.array_equal(got.astype(np.int64), want.astype(np.int64)))


def whole_array_cycles(spec, dev: tl.Device) -> int:  # noqa: ANN001
    """Cycles of a tenant alone on the whole array (the widest partition it plans on, if not the whole)."""
    from tilelang.tenancy.colocate import partition

    for w in range(dev.cols, 0, -1):
        try:
            return tl.simulate(tl.plan(spec(partition(dev, w))), mode="timing", trace=False).cycles
        except (tl.PlanError, tl.DesignError):
            continue
    raise tl.PlanError(f"no width of {dev.name} fits {spec}")


def colocation(device: str, small: bool) -> None:
    specs = tenants(small)
    dev = tl.device(device)
    clock = dev.clock_hz
    dispatch = round(DISPATCH_SECONDS * clock)
    t0 = time.perf_counter()
    mp = tl.colocate(specs, device=device)
    rng = np.random.default_rng(0)
    arrays = {k: inputs(t.local.design, rng) for k, t in mp.tenants.items()}
    res = tl.simulate(mp, **arrays)
    print(f"\n## Co-location on {device} ({dev.cols} columns)   [{time.perf_counter() - t0:.0f} s to plan and run]")
    print(mp.report())
    print(f"{'tenant':<8} {'cols':>5} {'cycles co-located':>18} {'alone (own cols)':>17} "
          f"{'whole array alone':>18} {'= numpy':>8}")
    sequential = 0
    for name, spec in specs.items():
        t = mp.tenants[name]
        own = tl.simulate(t.local, mode="timing", trace=False).cycles
        whole = whole_array_cycles(spec, dev)
        sequential += whole
        ok = matches(name, res[name].outputs["C"], reference(name, arrays[name]))
        print(f"{name:<8} {t.columns[0]}..{t.columns[0] + t.width - 1:<2} {res[name].cycles:>18} {own:>17} "
              f"{whole:>18} {'yes' if ok else 'NO':>8}")
    n = len(specs)
    print(f"makespan co-located {res.makespan} cycles; one after another on the whole array {sequential} cycles: "
          f"{sequential / res.makespan:.2f}x")
    with_dispatch = (sequential + n * dispatch) / (res.makespan + dispatch)
    print(f"with the host dispatch (450 us per launch; co-located tenants dispatched concurrently, an estimate): "
          f"{n} launches {(sequential + n * dispatch) / clock * 1e6:.0f} us vs {(res.makespan + dispatch) / clock * 1e6:.0f}"
          f" us: {with_dispatch:.2f}x; throughput {n / ((res.makespan + dispatch) / clock):.0f} vs "
          f"{n / ((sequential + n * dispatch) / clock):.0f} designs/s")


def serving(requests: int, small: bool, plot: str | None) -> None:
    g = 64 if small else 128
    designs = {
        "gemm": lambda dev: tl.library.matmul(g, g, g, tl.i16, tl.i32, device=dev, cores=gemm_grid(dev)),
        "add": lambda dev: tl.library.elementwise("add", 4096 * dev.cols, tl.i32, device=dev, cores=dev.cols),
        "sum": lambda dev: tl.library.reduction("sum", 4096 * dev.cols, tl.i32, device=dev, cores=dev.cols),
    }
    t0 = time.perf_counter()
    svc = ServiceTimes(designs, "npu1")
    table = svc.table()
    print(f"\n## Serving on npu1: {requests} requests of {list(designs)} (equal mix), deadline 4x the isolated "
          f"service time   [{time.perf_counter() - t0:.0f} s to plan every width]")
    print("service cycles per width (timing simulation): "
          + "; ".join(f"{d} " + ", ".join(f"{w}:{c}" for w, c in t.items()) for d, t in table.items()))
    loads = (0.3, 0.6, 0.9, 1.2)
    rows = []
    print(f"{'trace':<8} {'load':>5} {'policy':<11} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'misses':>7} "
          f"{'fairness':>8} {'reconf':>7}")
    for kind, make in (("poisson", traces.poisson), ("bursty", traces.bursty)):
        for load in loads:
            tr = make(svc, requests, load, seed=1)
            for policy in ("time-share", "static", "fission"):
                r = serve(svc, tr, policy)
                rows.append((kind, load, policy, r))
                print(f"{kind:<8} {load:>5.0%} {policy:<11} {r.throughput:>8.0f} {r.p50 * 1e3:>8.3f} "
                      f"{r.p99 * 1e3:>8.3f} {r.misses:>7} {r.fairness:>8.2f} {r.reconfigurations:>7}")
    verdict(rows)
    if plot:
        draw(rows, loads, plot)


def verdict(rows: list) -> None:
    """Whether fission matches the better of the other two at every load and beats both somewhere (misses)."""
    by: dict[tuple[str, float], dict[str, int]] = {}
    for kind, load, policy, r in rows:
        by.setdefault((kind, load), {})[policy] = r.misses
    matches = all(m["fission"] <= min(m["time-share"], m["static"]) for m in by.values())
    beats = [k for k, m in by.items() if m["fission"] < min(m["time-share"], m["static"])]
    print(f"fission misses no more deadlines than the better of time-share and static at every point: "
          f"{'yes' if matches else 'no'}; fewer than both at: "
          + (", ".join(f"{k} {load:.0%}" for k, load in beats) or "nowhere"))


def draw(rows: list, loads: tuple, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, kind in zip(axes, ("poisson", "bursty"), strict=True):
        for policy in ("time-share", "static", "fission"):
            ys = [r.miss_rate * 100 for k, _, p, r in rows if k == kind and p == policy]
            ax.plot([x * 100 for x in loads], ys, marker="o", label=policy)
        ax.set_title(f"{kind} trace")
        ax.set_xlabel("load (% of time-share capacity)")
        ax.set_ylabel("deadline misses (%)")
        ax.legend()
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")


def fusion(device: str, count: int) -> None:
    shapes = [(32, 32, 32), (64, 32, 32), (32, 64, 32), (64, 64, 64), (32, 32, 64), (64, 32, 64), (32, 64, 64),
              (64, 64, 32)][:count]
    dev = tl.device(device)
    dispatch = round(DISPATCH_SECONDS * dev.clock_hz)
    designs = [tl.library.matmul(*s, tl.i16, tl.i32, device=device, cores=1) for s in shapes]
    t0 = time.perf_counter()
    print(f"\n## Fusion: {count} GEMMs of different shapes (i16 -> i32, one core each) on {device}")
    try:
        plan = tl.plan(tl.fuse(designs, device=device))
    except tl.PlanError as e:
        print(f"fused design does not fit {device}: {e}")
        return
    rng = np.random.default_rng(0)
    arrays = [inputs(d, rng) for d in designs]
    res = tl.simulate(plan, **{f"d{i}_{k}": v for i, x in enumerate(arrays) for k, v in x.items()})
    ok = all(np.array_equal(res.outputs[f"d{i}_C"], reference("gemm", x)) for i, x in enumerate(arrays))
    alone = [tl.simulate(tl.plan(d), mode="timing", trace=False).cycles for d in designs]
    one_by_one = sum(alone) + count * dispatch
    fused = res.cycles + dispatch
    print(f"shapes {', '.join('x'.join(map(str, s)) for s in shapes)}   [{time.perf_counter() - t0:.0f} s]")
    print(f"one at a time: {sum(alone)} cycles + {count} dispatches = {one_by_one / dev.clock_hz * 1e6:.0f} us; "
          f"fused: {res.cycles} cycles + 1 dispatch = {fused / dev.clock_hz * 1e6:.0f} us: "
          f"{one_by_one / fused:.2f}x (compute alone {sum(alone) / res.cycles:.2f}x); outputs = numpy: "
          f"{'yes' if ok else 'NO'}")


@tl.kernel
def relu32(a: tl.Tile[(32, 32), tl.i16], c: tl.Tile[(32, 32), tl.i16]):
    c[...] = tl.relu(a)


def chain() -> None:
    """GEMM -> relu -> GEMM (32^3, i16; the hidden tensor wraps to i16) on chip against three launches through DDR."""
    dev = tl.device("npu1")
    dispatch = round(DISPATCH_SECONDS * dev.clock_hz)
    gemm = {"device": "npu1", "cores": 1, "tiling": {"m": 32, "k": 32, "n": 32}}
    designs = [tl.library.matmul(32, 32, 32, tl.i16, tl.i16, **gemm),
               tl.library.elementwise(relu32, 32, device="npu1", cores=1),
               tl.library.matmul(32, 32, 32, tl.i16, tl.i32, **gemm)]
    rng = np.random.default_rng(0)
    a, b, b2 = (rng.integers(-4, 4, (32, 32)).astype(np.int16) for _ in range(3))
    hidden = np.maximum((a.astype(np.int32) @ b.astype(np.int32)).astype(np.int16), 0)
    want = hidden.astype(np.int32) @ b2.astype(np.int32)
    steps = [tl.simulate(designs[0], A=a, B=b)]
    steps.append(tl.simulate(designs[1], A=steps[0].outputs["C"]))
    steps.append(tl.simulate(designs[2], A=steps[1].outputs["C"], B=b2))
    fused = tl.fuse(designs, device="npu1", connect=[(0, "C", 1, "A"), (1, "C", 2, "A")])
    res = tl.simulate(tl.plan(fused), d0_A=a, d0_B=b, d2_B=b2)
    ok = np.array_equal(steps[2].outputs["C"], want) and np.array_equal(res.outputs["d2_C"], want)
    print("\n## Chain: GEMM 32^3 -> relu -> GEMM 32^3 (i16) on npu1")
    print(f"{'':<22} {'cycles':>8} {'+ dispatch us':>14} {'DDR bytes':>10}")
    ddr = sum(s.stats.ddr_bytes_read + s.stats.ddr_bytes_written for s in steps)
    cyc = sum(s.cycles for s in steps)
    print(f"{'3 launches via DDR':<22} {cyc:>8} {(cyc + 3 * dispatch) / dev.clock_hz * 1e6:>14.0f} {ddr:>10}")
    fddr = res.stats.ddr_bytes_read + res.stats.ddr_bytes_written
    print(f"{'fused, on-chip fifos':<22} {res.cycles:>8} {(res.cycles + dispatch) / dev.clock_hz * 1e6:>14.0f} "
          f"{fddr:>10}")
    print(f"outputs = numpy: {'yes' if ok else 'NO'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="smaller designs (a quicker run)")
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--plot", default=None, help="write the serving plot (PNG) here")
    args = ap.parse_args()
    warnings.simplefilter("ignore", tl.PlanWarning)  # time-limit notices go to stderr otherwise; cycles are printed
    for device in ("npu1", "npu2"):
        colocation(device, args.small)
    serving(args.requests, args.small, args.plot)
    fusion("npu1", 4)
    fusion("npu1", 8)
    fusion("npu2", 8)
    chain()


if __name__ == "__main__":
    main()
