"""Simulator speed and memory on growing whole-array GEMMs (npu1, 16 cores, 64^3 bf16 kernel tiles).

Prints, per size: simulated events, simulated cycles, wall and CPU seconds of the
timed simulation with real numbers and a trace (best of ``--repeat`` runs up to
2048, one run above), events per CPU second and simulated cycles per CPU second
(CPU time of this process: the simulation is one thread, and on a shared machine
CPU time does not count the time other processes take), peak resident
memory of the simulation, the wall seconds of ``mode="functional"`` (up to
2048), and the check of C against numpy: seconds it took (not part of the
simulation time) and the largest error in units of the tolerance (<= 1
passes), and ``data s``: the CPU seconds of the run's kernel calls computing their numbers alone (each
kernel's compiled steps timed on tiles of its shapes, times its calls). Each size runs in its own
process. Last, the bare engine's cost per event on this machine (benchmarks/timing_bench.py's
``engine_floor``: processes that only sleep), to compare runs on machines of different speed, and per
size the ceiling of events per second on this machine: the run's events at the bare engine's cost plus
its kernel calls' numbers, what a model of those events costing nothing beyond the engine would reach.
Run: ``.venv/bin/python benchmarks/sim_bench.py [--min 256] [--max 4096]``.

The design follows IRON's whole_array example: each core row gets A through
its own shim column and memtile (a forward link broadcasting to the row),
each core column gets B likewise, and each column's four C blocks are joined
in its memtile on their way back to the host.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import simulator  # noqa: E402
import tilelang as tl  # noqa: E402
from tilelang.ir.design import Design, call_counts  # noqa: E402
from tilelang.ir.plan import Plan  # noqa: E402
from tilelang.plan import plan as make_plan  # noqa: E402


def whole_array_gemm(M: int, K: int, N: int, dtype=tl.bf16, t: int = 64, rows: int = 4, cols: int = 4,
                     device: str = "npu1") -> Design:
    """C = A @ B on a rows x cols core grid with t x t x t kernel tiles (IRON whole_array layout)."""
    acc = tl.f32 if dtype.is_float else tl.i32
    bi, bj, kt = M // (rows * t), N // (cols * t), K // t
    assert M % (rows * t) == 0 and N % (cols * t) == 0 and K % t == 0, "sizes must tile the grid"

    @tl.kernel
    def zero(c: tl.Tile[(t, t), acc]):
        c[...] = 0.0 if acc.is_float else 0

    @tl.kernel
    def mac(a: tl.Tile[(t, t), dtype], b: tl.Tile[(t, t), dtype], c: tl.Tile[(t, t), acc]):
        c[...] += a @ b

    @tl.design(device=device)
    def gemm(A: tl.Tensor[(M, K), dtype], B: tl.Tensor[(K, N), dtype], C: tl.Tensor[(M, N), acc]):
        a3 = [tl.fifo(tl.Tile[(t, t), dtype], name=f"a_l3_{r}") for r in range(rows)]
        a2 = [tl.fifo(tl.Tile[(t, t), dtype], name=f"a_l2_{r}") for r in range(rows)]
        b3 = [tl.fifo(tl.Tile[(t, t), dtype], name=f"b_l3_{c}") for c in range(cols)]
        b2 = [tl.fifo(tl.Tile[(t, t), dtype], name=f"b_l2_{c}") for c in range(cols)]
        cs = [[tl.fifo(tl.Tile[(t, t), acc], depth=1, name=f"c_{r}_{c}") for c in range(cols)] for r in range(rows)]
        c3 = [tl.fifo(tl.Tile[(rows * t, t), acc], name=f"c_l3_{c}") for c in range(cols)]
        for r in range(rows):
            tl.dma(a3[r], a2[r], name=f"fwd_a{r}")
        for c in range(cols):
            tl.dma(b3[c], b2[c], name=f"fwd_b{c}")
            tl.join([cs[r][c] for r in range(rows)], c3[c], name=f"join_c{c}")
        for r in range(rows):
            for c in range(cols):
                @tl.core(name=f"core_{c}_{r}", tile=(c, r + 2))
                def body(r=r, c=c):
                    for _ in tl.range(bi * bj):
                        out = cs[r][c].acquire()
                        zero(out)
                        for _ in tl.range(kt):
                            x, y = a2[r].acquire(), b2[c].acquire()
                            mac(x, y, out)
                            a2[r].release()
                            b2[c].release()
                        cs[r][c].release()
        for i in range(bi):
            for r in range(rows):
                row = (i * rows + r) * t
                tl.dma(A, a3[r], pattern=tl.pattern(row * K, [bj, kt, t, t], [0, t, K, 1]))
            for c in range(cols):
                tl.dma(B, b3[c], pattern=tl.pattern(c * t, [bj, kt, t, t], [cols * t, t * N, N, 1]))
            for c in range(cols):
                tl.dma(c3[c], C, pattern=tl.pattern(i * rows * t * N + c * t, [bj, rows * t, t], [cols * t, N, 1]))

    return gemm


def gemm_plan(d: Design, rows: int = 4, cols: int = 4) -> Plan:
    """The planner's plan, or, when it cannot place the links (it may put two joins on
    one memtile), IRON's own layout by hand: every link and host end in its column."""
    try:
        return make_plan(d, strategy="greedy")
    except tl.PlanError:
        from test_sim_support import hand_plan

        links = {f"fwd_a{r}": (r, 1) for r in range(rows)}
        links.update({f"fwd_b{c}": (c, 1) for c in range(cols)})
        links.update({f"join_c{c}": (c, 1) for c in range(cols)})
        hosts = {f"a_l3_{r}": (r, 0) for r in range(rows)}
        hosts.update({f"b_l3_{c}": (c, 0) for c in range(cols)})
        hosts.update({f"c_l3_{c}": (c, 0) for c in range(cols)})
        cores = {c.name: c.tile for c in d.cores}
        return hand_plan(d, cores, link_tiles=links, host_tiles=hosts)  # type: ignore[arg-type]


#: Tolerance of the C check: |C - ref| <= RTOL * (|A| @ |B|) elementwise, ref the f64 product of the
#: bf16-rounded inputs. docs/ir.md gives 1e-5 for f32 results; scaling by |A| @ |B| (the standard dot
#: product error bound) keeps entries that cancel to near zero from failing on f32 rounding alone.
RTOL = 1e-5


def inputs(size: int, dtype=tl.bf16) -> tuple[np.ndarray, np.ndarray]:
    """A and B: standard normal rounded to bf16 (floats), or small integers (integer dtypes)."""
    rng = np.random.default_rng(0)
    if dtype.is_float:
        return (rng.standard_normal((size, size), dtype=np.float32).astype(dtype.numpy),
                rng.standard_normal((size, size), dtype=np.float32).astype(dtype.numpy))
    return (rng.integers(-3, 4, (size, size)).astype(dtype.numpy), rng.integers(-3, 4, (size, size)).astype(dtype.numpy))


def check(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """The largest error of C against the f64 product, in units of the tolerance (<= 1 passes)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64
    bound = np.abs(a64) @ np.abs(b64)
    return float(np.max(np.abs(c.astype(np.float64) - ref) / (RTOL * bound + np.finfo(np.float64).tiny)))


def data_path_seconds(d: Design, res: simulator.SimResult, repeat: int = 5) -> float:
    """CPU seconds the run's kernel calls spend computing numbers: per kernel, its compiled steps
    (the ones the simulation runs) on arrays of its parameters' shapes, best of ``repeat`` rounds of
    100 calls, times the calls the run made of it. A lower bound on any run with the same data: the
    events around the calls are not in it."""
    from simulator.kernels import CompiledKernel

    calls: dict[str, int] = {}
    for core in d.cores:  # (each core's calls of each kernel: its statistics count all its calls together)
        per = call_counts(core.body)
        for k, n in per.items():
            calls[k] = calls.get(k, 0) + n
    assert sum(calls.values()) == sum(c.calls for c in res.stats.cores.values()), "call count mismatch"
    total = 0.0
    for name, n in calls.items():
        kernel = next(k for k in d.kernels if k.name == name)
        ck = CompiledKernel(kernel)
        args = [np.ones(p.type.shape, p.type.dtype.numpy) for p in kernel.params]
        best_s = float("inf")
        for _ in range(repeat):
            c0 = time.process_time()
            for _ in range(100):
                ck.run(args)
            best_s = min(best_s, (time.process_time() - c0) / 100)
        total += best_s * n
    return total


def run(size: int, dtype=tl.bf16, repeat: int = 1, functional: bool = True) -> dict:
    """Plan and simulate one size (best of ``repeat`` timed runs); check C against numpy; return the measurements."""
    d = whole_array_gemm(size, size, size, dtype)
    p = gemm_plan(d)
    a, b = inputs(size, dtype)
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = simulator.simulate(p, A=a, B=b)
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    # Peak resident memory of the simulation (each size runs in its own process; the check comes after).
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    f_wall = None
    if functional:
        t0 = time.perf_counter()
        f_res = simulator.simulate(p, mode="functional", A=a, B=b)
        f_wall = time.perf_counter() - t0
        assert np.array_equal(f_res.outputs["C"], res.outputs["C"]), "functional and timed outputs differ"
    t0 = time.perf_counter()
    err = check(res.outputs["C"], a, b)
    check_s = time.perf_counter() - t0
    ev = res.stats.events
    data_s = data_path_seconds(d, res)
    return {"size": size, "events": ev, "data_s": data_s, "cycles": res.cycles, "wall": wall, "cpu": cpu, "events_per_s": ev / cpu,
            "cycles_per_s": res.cycles / cpu, "peak_mib": peak / 2**20, "error": err, "ok": err <= 1.0,
            "check_s": check_s, "functional_s": f_wall, "utilisation": res.stats.utilisation()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=4096, help="largest M = K = N")
    ap.add_argument("--min", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per size up to 2048 (the best is kept)")
    ap.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        big = args.one > 2048
        print(json.dumps(run(args.one, repeat=1 if big else args.repeat, functional=not big)))
        return
    print(f"{'size':>6} {'events':>10} {'sim cycles':>12} {'wall s':>8} {'cpu s':>8} {'events/s':>10} {'cycles/s':>12} "
          f"{'peak MiB':>9} {'util':>6} {'func s':>7} {'check s':>8} {'err/tol':>8} {'data s':>7}")
    size = args.min
    rows: list[dict] = []
    while size <= args.max:
        out = subprocess.run([sys.executable, __file__, "--one", str(size), "--repeat", str(args.repeat)],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        func = f"{r['functional_s']:>7.2f}" if r["functional_s"] is not None else f"{'-':>7}"
        print(f"{r['size']:>6} {r['events']:>10} {r['cycles']:>12} {r['wall']:>8.2f} {r['cpu']:>8.2f} {r['events_per_s']:>10.0f} "
              f"{r['cycles_per_s']:>12.0f} {r['peak_mib']:>9.1f} {r['utilisation']:>6.1%} {func} "
              f"{r['check_s']:>8.2f} {r['error']:>8.3f} {r['data_s']:>7.3f}", flush=True)
        if not r["ok"]:
            raise SystemExit(f"size {size}: C differs from numpy by {r['error']:.3f} x the tolerance")
        rows.append(r)
        size *= 2
    from timing_bench import engine_floor  # (here: timing_bench imports this module)

    per_event, _ = engine_floor(args.repeat)
    print(f"engine alone: {per_event * 1e6:.2f} us per event ({1 / per_event:.0f} events/s: the same sleeps, "
          "no model)")
    for r in rows:
        ceiling = r["events"] / (r["data_s"] + r["events"] * per_event)
        print(f"ceiling at {r['size']}: {ceiling:.0f} events/s (the run's events at the engine's bare cost, plus its "
              f"kernel calls' numbers, {r['data_s']:.3f} s: any model of these events on this machine)")


if __name__ == "__main__":
    main()
