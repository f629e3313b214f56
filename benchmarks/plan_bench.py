"""Planner benchmark: the ILP planner against the in-project baseline (greedy placement + PathFinder).

Usage::

    .venv/bin/python benchmarks/plan_bench.py            # every case
    .venv/bin/python benchmarks/plan_bench.py --quick    # the small ones only
    .venv/bin/python benchmarks/plan_bench.py --solver highs

One table. For designs, "build s" is tracing plus placement and buffers and
"solve s" the routing; for raw flow sets (``route:``) "build s" is the
negotiated warm start and "solve s" the ILP. The baseline columns are the
greedy placement and PathFinder (negotiated congestion, McMurchie-Ebeling,
what mlir-aie's router does) on the same input; "-" where it found no legal
routing. A tiling line per GEMM follows. Numbers are from this machine.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tilelang as tl  # noqa: E402
from tilelang.errors import PlanError  # noqa: E402
from tilelang.plan import plan, route  # noqa: E402
from tilelang.plan.fabric import fabric  # noqa: E402
from tilelang.plan.negotiated import negotiate  # noqa: E402
from tilelang.plan.routing import check_flows  # noqa: E402
from tilelang.plan.tiling import tile_contraction  # noqa: E402

# -- designs -----------------------------------------------------------------------------------------


def vmul():
    @tl.kernel
    def scale(a: tl.Tile[(1024,), tl.i32], c: tl.Tile[(1024,), tl.i32], factor: tl.i32):
        c[...] = a * factor

    @tl.design(device="npu1")
    def vector_scalar_mul(A: tl.Tensor[(4096,), tl.i32], C: tl.Tensor[(4096,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(1024,), tl.i32], depth=2, name="a_in")
        c_out = tl.fifo(tl.Tile[(1024,), tl.i32], depth=2, name="c_out")

        @tl.core(name="worker")
        def worker():
            for _ in tl.range(4):
                a, c = a_in.acquire(), c_out.acquire()
                scale(a, c, 3)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in, pattern=tl.tiles((1024,)))
        tl.dma(c_out, C, pattern=tl.tiles((1024,)))

    return vector_scalar_mul


def grid_gemm(device: str, rows: int, cols: int, K: int = 4):
    """IRON's whole-array GEMM shape on a rows x cols core grid (i16 in, i32 out, 32x32 tiles).

    A goes to a memtile and is split into one fifo per core row, broadcast along the row; B comes
    through one memtile forward per column, broadcast down the column; each column's outputs are
    joined in a memtile and drained to the host.
    """

    @tl.kernel
    def mm(a: tl.Tile[(32, 32), tl.i16], b: tl.Tile[(32, 32), tl.i16], c: tl.Tile[(32, 32), tl.i32]):
        c[...] += a @ b

    def body(A, B, C):
        a_mem = tl.fifo(tl.Tile[(32 * rows, 32), tl.i16], name="a_mem")
        a = [tl.fifo(tl.Tile[(32, 32), tl.i16], name=f"a{r}") for r in range(rows)]
        tl.split(a_mem, a)
        b_mem = [tl.fifo(tl.Tile[(32, 32), tl.i16], name=f"b_mem{c}") for c in range(cols)]
        b = [tl.fifo(tl.Tile[(32, 32), tl.i16], name=f"b{c}") for c in range(cols)]
        for c in range(cols):
            tl.dma(b_mem[c], b[c])
        cc = [[tl.fifo(tl.Tile[(32, 32), tl.i32], name=f"c{r}_{c}") for c in range(cols)] for r in range(rows)]
        c_mem = [tl.fifo(tl.Tile[(32 * rows, 32), tl.i32], name=f"c_mem{c}") for c in range(cols)]
        for c in range(cols):
            tl.join([cc[r][c] for r in range(rows)], c_mem[c])
        for r in range(rows):
            for c in range(cols):

                def work(r=r, c=c):
                    out = cc[r][c].acquire()
                    for _ in tl.range(K):
                        x, y = a[r].acquire(), b[c].acquire()
                        mm(x, y, out)
                        a[r].release()
                        b[c].release()
                    cc[r][c].release()

                tl.core(name=f"core{r}_{c}")(work)
        tl.dma(A, a_mem, pattern=tl.tiles((32 * rows, 32)))
        for c in range(cols):
            tl.dma(B, b_mem[c], pattern=tl.pattern(32 * c, [K, 32, 32], [32 * 32 * cols, 32 * cols, 1]))
            tl.dma(c_mem[c], C, pattern=tl.pattern(32 * c, [32 * rows, 32], [32 * cols, 1]))

    body.__name__ = f"gemm_{rows}x{cols}"
    body.__annotations__ = {
        "A": tl.Tensor[(32 * rows, 32 * K), tl.i16],
        "B": tl.Tensor[(32 * K, 32 * cols), tl.i16],
        "C": tl.Tensor[(32 * rows, 32 * cols), tl.i32],
    }
    return tl.design(device=device)(body)


def butterfly(device: str, cols: int, rows: int, pinned: bool, n: int = 64):
    """A cols x rows butterfly of cores: two streamed inputs and two outputs each.

    Core (x, y) feeds (x+1, y) and its butterfly partner (x+1, y ^ 2^(x mod log2 rows)); column 0
    reads host fifos, each broadcast to two cores; the last column writes the host. Pinned, core
    (x, y) sits on tile (2x+1, y+1): no two communicating cores are neighbours, so every fifo is
    streamed (a routing stress test); unpinned, the planner places them.
    """

    def work2(a, b, c, d):
        c[...] = a + b
        d[...] = a - b

    t = tl.Tile[(n,), tl.i32]
    work2.__annotations__ = {"a": t, "b": t, "c": t, "d": t}
    k = tl.kernel(work2)
    bits = max(1, (rows - 1).bit_length())

    def body(A, C):
        outs = {(x, y): (tl.fifo(t, name=f"s{x}_{y}"), tl.fifo(t, name=f"p{x}_{y}")) for x in range(cols) for y in range(rows)}
        ins: dict = {(x, y): [] for x in range(cols) for y in range(rows)}
        hosts = [tl.fifo(t, name=f"h{y}") for y in range(rows)]
        for y in range(rows):
            ins[0, y].append(hosts[y])
            ins[0, (y + 1) % rows].append(hosts[y])
        for x in range(cols - 1):
            bit = 1 << (x % bits)
            for y in range(rows):
                ins[x + 1, y].append(outs[x, y][0])
                ins[x + 1, (y ^ bit) % rows].append(outs[x, y][1])
        for (x, y), (a, b) in ins.items():

            def work(a=a, b=b, c=outs[x, y][0], d=outs[x, y][1]):
                va, vb = a.acquire(), b.acquire()
                vc, vd = c.acquire(), d.acquire()
                k(va, vb, vc, vd)
                for f in (a, b, c, d):
                    f.release()

            tl.core(name=f"c{x}_{y}", tile=(2 * x + 1, y + 1) if pinned else None)(work)
        for f in hosts:
            tl.dma(A, f)
        for y in range(rows):  # each output fifo into its own part of C (two moves on one region would race)
            for i, f in enumerate(outs[cols - 1, y]):
                tl.dma(f, C, pattern=tl.pattern((2 * y + i) * n, (n,), (1,)))

    body.__name__ = f"butterfly_{cols}x{rows}"
    body.__annotations__ = {"A": tl.Tensor[(n,), tl.i32], "C": tl.Tensor[(2 * rows * n,), tl.i32]}
    return tl.design(device=device)(body)


def random_flows(device, n, span, seed, shims=True):
    rng = random.Random(seed)
    tiles = device.tiles("compute") + device.tiles("mem")
    if shims:
        tiles += [t for t in device.tiles("shim") if device.is_noc_shim(t)]
    flows = []
    for _ in range(n):
        s = rng.choice(tiles)
        k = 1 if rng.random() < 0.75 else rng.randint(2, 4)
        dests: list = []
        while len(dests) < k:
            d = rng.choice(tiles)
            if d != s and abs(d[0] - s[0]) <= span and d not in dests:
                dests.append(d)
        flows.append((s, dests))
    return flows


# -- measuring -------------------------------------------------------------------------------------


def fmt(x, spec="{:.2f}"):
    return "-" if x is None else spec.format(x)


def design_row(name, make, solver, time_limit):
    t0 = time.monotonic()
    try:
        d = make()
    except tl.TileLangError as e:  # a library design that does not build today: say so, go on
        return [f"{name} (not built: {str(e)[:40]})", "-", "-", "-", {"build": None, "solve": None, "wl": None,
                "max": None}, {"build": None, "solve": None, "wl": None, "max": None}]
    trace = time.monotonic() - t0
    p = plan(d, solver=solver, time_limit=time_limit)
    use = p.link_usage()
    ilp = {
        "build": trace + p.timings["placement"] + p.timings["buffers"],
        "solve": p.timings["routing"],
        "wl": sum(len(r.links) for r in p.routes.values()),
        "max": max(use.values(), default=0),
        "gap": p.solves["routing"].gap,
    }
    try:
        g = plan(d, strategy="greedy")
        fab = fabric(d.device)
        flows = check_flows(fab, [(r.source, list(r.dests)) for r in g.routes.values()])
        t1 = time.monotonic()
        base = negotiate(fab, flows, time_limit=time_limit)
        base_solve = time.monotonic() - t1
        occ = {}
        for t in base.trees:
            for e in t or ():
                occ[e] = occ.get(e, 0) + 1
        baseline = {
            "build": trace + g.timings["placement"] + g.timings["buffers"],
            "solve": base_solve,
            "wl": base.wirelength if base.legal else None,
            "max": max(occ.values(), default=0) if base.legal else None,
        }
    except PlanError:
        baseline = {"build": None, "solve": None, "wl": None, "max": None}
    return [name, d.device.name, len(d.cores), len(p.routes), ilp, baseline]


def route_row(name, device, flows, solver, time_limit):
    dev = tl.device(device)
    fab = fabric(dev)
    checked = check_flows(fab, flows)
    t0 = time.monotonic()
    base = negotiate(fab, checked, time_limit=time_limit)
    base_s = time.monotonic() - t0
    occ = {}
    for t in base.trees:
        for e in t or ():
            occ[e] = occ.get(e, 0) + 1
    baseline = {"build": 0.0, "solve": base_s, "wl": base.wirelength if base.legal else None,
                "max": max(occ.values(), default=0) if base.legal else None}
    t0 = time.monotonic()
    try:
        r = route(dev, flows, solver=solver, time_limit=time_limit)
        ilp = {"build": min(base_s, time.monotonic() - t0), "solve": time.monotonic() - t0 - min(base_s, time.monotonic() - t0),
               "wl": r.wirelength, "max": r.max_use, "gap": r.gap}
    except PlanError as e:
        ilp = {"build": None, "solve": time.monotonic() - t0, "wl": None, "max": None, "gap": None, "error": str(e)[:60]}
    return [name, device, "-", len(flows), ilp, baseline]


def print_table(rows):
    head = ["case", "device", "cores", "flows", "build s", "solve s", "wirelength", "max use", "gap",
            "| base build s", "base solve s", "base WL", "base max"]
    body = []
    for name, dev, cores, flows, ilp, base in rows:
        body.append([
            name, dev, str(cores), str(flows), fmt(ilp["build"]), fmt(ilp["solve"]), fmt(ilp["wl"], "{}"),
            fmt(ilp["max"], "{}"), fmt(ilp.get("gap"), "{:.2g}"), "| " + fmt(base["build"]), fmt(base["solve"]),
            fmt(base["wl"], "{}"), fmt(base["max"], "{}"),
        ])
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in body:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def tiling_lines(solver):
    print("\ntiling: 4096^3 GEMM (tl.tile_contraction), ILP vs brute force over the same candidates")
    from tilelang.plan.tiling_model import evaluate, parse, space

    for device, dtype in [("npu1", tl.i8), ("npu1", tl.bf16), ("npu2", tl.i8), ("npu2", tl.bf16),
                          ("xcvc1902", tl.i8), ("xcvc1902", tl.f32)]:
        sizes = {"m": 4096, "k": 4096, "n": 4096}
        t0 = time.monotonic()
        t = tile_contraction("mk,kn->mn", sizes, dtype, device, solver=solver)
        took = time.monotonic() - t0
        dev = tl.device(device)
        c = parse("mk,kn->mn", sizes, dtype)
        ev = evaluate(c, dev, space(c, dev, len(dev.tiles("compute"))), len(dev.tiles("compute")))
        brute = float(ev.estimate[ev.feasible].min())
        print(f"  {device:9s} {dtype.name:5s} {took:5.3f} s  estimate {t.estimate:.4g} cycles (brute force {brute:.4g}, "
              f"{'equal' if brute == t.estimate else 'DIFFERENT'})  core {t.core} split {t.spatial} bound {t.bound} "
              f"{t.candidates} candidates")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", default="cbc")
    ap.add_argument("--time-limit", type=float, default=60)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    s, tl_ = args.solver, args.time_limit
    rows = [
        design_row("vector_scalar_mul", vmul, s, tl_),
        design_row("gemm 4x4", lambda: grid_gemm("npu1", 4, 4), s, tl_),
        design_row("matmul 512^3 (tl.library)", lambda: tl.library.matmul(512, 512, 512), s, tl_),
        design_row("butterfly 4x4", lambda: butterfly("npu1", 4, 4, False), s, tl_),
        route_row("route: 45 flows, crowded", "npu1", random_flows(tl.device("npu1"), 45, 3, 127), s, tl_),
    ]
    if not args.quick:
        rows += [
            design_row("gemm 4x8", lambda: grid_gemm("npu2", 4, 8), s, tl_),
            design_row("butterfly 16x8 pinned", lambda: butterfly("xcvc1902", 16, 8, True), s, tl_),
            design_row("butterfly 16x8", lambda: butterfly("xcvc1902", 16, 8, False), s, tl_),
            route_row("route: 100 flows", "xcvc1902", random_flows(tl.device("xcvc1902"), 100, 8, 1), s, tl_),
            route_row("route: 200 flows", "xcvc1902", random_flows(tl.device("xcvc1902"), 200, 8, 2), s, tl_),
            route_row("route: 300 flows", "xcvc1902", random_flows(tl.device("xcvc1902"), 300, 8, 3), s, tl_),
            route_row("route: 360 flows, crowded", "xcvc1902", random_flows(tl.device("xcvc1902"), 360, 8, 0), s, tl_),
            route_row("route: 400 flows, infeasible", "xcvc1902", random_flows(tl.device("xcvc1902"), 400, 10, 4), s, tl_),
        ]
    print_table(rows)
    tiling_lines(s)


if __name__ == "__main__":
    main()
