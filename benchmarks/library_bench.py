"""How close each tl.library design comes to the device's peak, in simulation.

Run: ``.venv/bin/python benchmarks/library_bench.py [--small] [--devices npu1,npu2,xcvc1902] [--only matmul,...]``

For every design and device where it applies: plan (the ILPs; the greedy
planner if they fail), simulate with real random data, check the result
against numpy, and report

- MAC designs (matmul, matvec, conv2d): MACs per cycle as a fraction of the
  whole device's peak (``Device.peak_macs_per_second``) and of the peak of
  the cores the design uses;
- streaming designs (elementwise, reduction, softmax; attention's decoding rows): host bytes per cycle
  as a fraction of the DDR bandwidth the simulator models (66.6 GB/s shared
  by every shim, mlir-aie PR 2559 via simulator/cost.py);
- the limiter: "compute" when the cores are busy (with the kernel's own MAC
  efficiency under the cost model), else the fifo the cores stall on most and
  the busiest DMA channel.

The target of the project's issue: the whole-array GEMM at 1024^3 bf16 on
npu1 with a good tiling at >= 70% of peak. The 64 x 64 x 64 tiling with a
bf16 C (double-buffered) is that tiling; with an f32 C the 64 x 64 f32 tile
can only be single-buffered next to double-buffered A and B (66,560 B of
65,536), and the cores wait for each C tile to drain. tiling="auto" picks
both (the tiler prices a single-buffered C's unoverlapped drains); its rows'
numpy references use the tile the design was actually built with.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tilelang as tl  # noqa: E402
from simulator import cost  # noqa: E402


@dataclass(frozen=True)
class Case:
    """One benchmark row: a design factory call, its inputs and the numpy answer."""

    design: str
    device: str
    label: str
    build: Callable[[], object]
    inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    answer: Callable[[dict[str, np.ndarray], object], dict[str, np.ndarray]]  # (inputs, the built design)
    macs: int = 0
    mac_dtype: object = None
    rtol: float = 0.0
    atol: float = 1e-6


def _ints(rng: np.random.Generator, shape: object, dtype: object, lo: int = -4, hi: int = 5) -> np.ndarray:
    return rng.integers(lo, hi, shape).astype(dtype)


def gemm_cases(size: int) -> list[Case]:
    """Whole-array GEMMs: bf16 on the NPUs (exact: small integers), and the tilings compared."""
    def mm(dev: str, out: object, tiling: object, label: str, in_dtype: object = tl.bf16) -> Case:
        np_in = np.float32 if in_dtype is tl.bf16 else in_dtype.numpy
        return Case(
            "matmul", dev, f"{size}^3 {in_dtype}->{out} {label}",
            lambda: tl.library.matmul(size, size, size, in_dtype=in_dtype, out_dtype=out, device=dev, tiling=tiling),
            lambda rng: {"A": _ints(rng, (size, size), np_in), "B": _ints(rng, (size, size), np_in)},
            lambda x, design: {"C": _gemm(x["A"], x["B"], out, _kernel_tile(design))},
            macs=size**3, mac_dtype=in_dtype,
        )

    t64 = {"m": 64, "k": 64, "n": 64}
    return [
        mm("npu1", tl.f32, "auto", "tiling=auto"),
        mm("npu1", tl.bf16, "auto", "tiling=auto"),
        mm("npu1", tl.f32, t64, "64x64x64"),
        mm("npu1", tl.bf16, t64, "64x64x64"),
        mm("npu1", tl.i32, t64, "64x64x64", in_dtype=tl.i16),
        mm("npu2", tl.bf16, "auto", "tiling=auto"),
        mm("npu2", tl.f32, "auto", "tiling=auto"),
        *_aie1_gemm_cases(size),
    ]


def _aie1_gemm_cases(size: int) -> list[Case]:
    """Whole-array i16 GEMMs on xcvc1902: host tensors in stream layout (AIE1's shim DMA walks linear runs
    only), on the default 16 cores and on the 32 the shims' S2MM channels allow (one C stream per core)."""
    out = []
    for cores in (None, (4, 8)):
        held: dict[str, object] = {}

        def build(cores=cores, held=held) -> object:
            held["d"] = tl.library.matmul(size, size, size, in_dtype=tl.i16, out_dtype=tl.i32, device="xcvc1902",
                                          cores=cores, layout="streams")
            return held["d"]

        def inputs(rng, held=held) -> dict[str, np.ndarray]:
            held["a"], held["b"] = (_ints(rng, (size, size), np.int16) for _ in range(2))
            return tl.library.pack_streams(held["d"], held["a"], held["b"])

        def answer(_x, design, held=held) -> dict[str, np.ndarray]:
            c = held["a"].astype(np.int32) @ held["b"].astype(np.int32)
            return {"C": tl.library.pack_streams(design, held["a"], held["b"], C=c)["C"]}

        label = f"{size}^3 i16->i32 streams" + (f" {cores[0]}x{cores[1]}" if cores else "")
        out.append(Case("matmul", "xcvc1902", label, build, inputs, answer, macs=size**3, mac_dtype=tl.i16))
    return out


def _kernel_tile(design: object) -> dict[str, int]:
    """The per-core tile (m, k, n) a matmul design was built with (the tiler's choice under tiling="auto"),
    read from its accumulating kernel's operand tiles."""
    (mac,) = [k for k in design.kernels if k.name == "matmul_acc"]  # type: ignore[attr-defined]
    (m, k), (_, n) = (p.type.shape for p in mac.params[:2])
    return {"m": m, "k": k, "n": n}


def _gemm(a: np.ndarray, b: np.ndarray, out: object, tiling: dict[str, int]) -> np.ndarray:
    """A @ B as the design computes it: exact products (small integers), C rounded to bf16 after every
    k-step when C is bf16 (the kernel adds each step's product into C, so the rounding depends on k)."""
    if out is not tl.bf16:
        return a.astype(np.float64) @ b.astype(np.float64)
    k = tiling["k"]
    c = np.zeros((a.shape[0], b.shape[1]), ml_dtypes.bfloat16)
    for s in range(0, a.shape[1], k):
        step = (a[:, s:s + k].astype(np.float64) @ b[s:s + k].astype(np.float64)).astype(ml_dtypes.bfloat16)
        c = (c.astype(np.float32) + step.astype(np.float32)).astype(ml_dtypes.bfloat16)
    return c


def matvec_cases(small: bool) -> list[Case]:
    M, K = (512, 256) if small else (2048, 1024)  # noqa: N806

    def mv(dev: str, cores: object, tiling: dict, m_: int = M, k_: int = K) -> Case:
        return Case(
            "matvec", dev, f"{m_}x{k_} i16->i32",
            lambda: tl.library.matvec(m_, k_, device=dev, cores=cores, tiling=tiling),
            lambda rng: {"A": _ints(rng, (m_, k_), np.int16, -1000, 1000), "B": _ints(rng, k_, np.int16, -1000, 1000)},
            lambda x, _design: {"C": (x["A"].astype(np.int64) @ x["B"].astype(np.int64)).astype(np.int32)},
            macs=m_ * k_, mac_dtype=tl.i16,
        )

    # AIE1's shim DMA walks one dimension: an A tile must be whole rows (k = K)
    return [mv("npu1", None, {"m": 32, "k": 32}), mv("npu2", None, {"m": 16, "k": 32}),
            mv("xcvc1902", 16, {"m": 16, "k": 256}, k_=256)]


def conv_cases(small: bool) -> list[Case]:
    def cv(dev: str, cores: object, h: int, w: int, cin: int, cout: int) -> Case:
        ho, wo = h - 2, w - 2
        return Case(
            "conv2d", dev, f"{h}x{w}x{cin}->{cout} 3x3 i16",
            lambda: tl.library.conv2d(h, w, cin, cout, dtype=tl.i16, device=dev, cores=cores),
            lambda rng: {"A": _ints(rng, (h, cin, w), np.int16, -50, 50), "W": _ints(rng, (cout, 3, 3, cin), np.int16, -9, 9)},
            lambda x, _design: {"C": _conv(x["A"], x["W"])},
            macs=ho * wo * cout * 9 * cin, mac_dtype=tl.i16,
        )

    if small:
        return [cv("npu1", (2, 2), 10, 18, 8, 16)]
    # sizes whose row kernel's temporaries fit the 1 KiB core stack the MLIR backend allows
    return [cv("npu1", (4, 4), 34, 34, 8, 16), cv("npu2", (4, 8), 34, 34, 8, 16), cv("xcvc1902", (1, 8), 34, 34, 8, 8)]


def _conv(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    k = w.shape[1]
    ho, wo = a.shape[0] - k + 1, a.shape[2] - k + 1
    out = np.zeros((ho, w.shape[0], wo), np.int64)
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("oi,yix->yox", w[:, dy, dx, :].astype(np.int64), a[dy:dy + ho, :, dx:dx + wo].astype(np.int64))
    return out.astype(np.int32)


def stream_cases(small: bool) -> list[Case]:
    scale = 1 if small else 8
    out: list[Case] = []
    for dev, cores in (("npu1", 8), ("npu2", 16), ("xcvc1902", 16)):
        n = cores * 1024 * scale
        out.append(Case("elementwise", dev, f"add {n} i32",
                        lambda n=n, dev=dev, cores=cores: tl.library.elementwise("add", n, dtype=tl.i32, device=dev,
                                                                                  cores=cores, tile=1024),
                        lambda rng, n=n: {"A": _ints(rng, n, np.int32, -10**6, 10**6),
                                          "B": _ints(rng, n, np.int32, -10**6, 10**6)},
                        lambda x, _design: {"C": x["A"] + x["B"]}))
    for dev, cores in (("npu1", 16), ("npu2", 32), ("xcvc1902", 16)):
        n = cores * 1024 * scale
        out.append(Case("reduction", dev, f"max {n} i32",
                        lambda n=n, dev=dev, cores=cores: tl.library.reduction("max", n, dtype=tl.i32, device=dev,
                                                                                cores=cores, tile=1024),
                        lambda rng, n=n: {"A": _ints(rng, n, np.int32, -10**9, 10**9)},
                        lambda x, _design: {"C": np.array([x["A"].max()], np.int32)}))
    # AIE1 cores have 32 KiB: one 1024-float row per buffer. Inputs in [-2, 2]: the bf16 bound of
    # docs/library.md is (2 x 4 + 4) x 2^-8 relative
    cols = 1024
    for dev, cores, dt, per in (("npu1", 16, tl.bf16, 2), ("npu2", 32, tl.bf16, 2), ("xcvc1902", 16, tl.f32, 1)):
        rows = cores * 2 * scale
        np_dt = ml_dtypes.bfloat16 if dt is tl.bf16 else np.float32
        out.append(Case("softmax", dev, f"{rows}x{cols} {dt}",
                        lambda rows=rows, dev=dev, cores=cores, dt=dt, per=per: tl.library.softmax(
                            rows, cols, dtype=dt, device=dev, cores=cores, rows_per_tile=per),
                        lambda rng, rows=rows, np_dt=np_dt: {"A": rng.uniform(-2, 2, (rows, cols)).astype(np_dt)},
                        lambda x, _design: {"C": _softmax(x["A"])}, rtol=12 * 2.0**-8 if dt is tl.bf16 else 1e-5))
    return out


def attention_cases(small: bool) -> list[Case]:
    """``tl.library.attention`` with the most pipelines each device's columns and shims take, one causal
    design, one of grouped-query heads, and two decoding designs (8 query rows, the keys split over pipelines). Inputs in [-2, 2]: the bound of docs/library.md "attention" is
    4 x 2^-9 x max|V| for bf16 (P, each block's row sum and O rounding once each), 1e-5 x max|V| for f32."""
    scale = 1 if small else 4
    out: list[Case] = []
    for dev, dt, sq, skv, d, kw in (("npu1", tl.bf16, 256, 128, 64, {}), ("npu2", tl.bf16, 512, 128, 64, {}),
                                    ("xcvc1902", tl.f32, 128, 64, 32, {"block_q": 16}),
                                    ("npu1", tl.bf16, 256, 256, 64, {"causal": True}),
                                    ("npu2", tl.bf16, 256, 256, 64, {"causal": True, "heads": 4, "kv_heads": 2}),
                                    ("npu1", tl.bf16, 8, 512, 64, {"block_q": 8, "split_kv": 2}),
                                    ("npu2", tl.bf16, 8, 512, 64, {"block_q": 8, "split_kv": 4, "heads": 4,
                                                                   "kv_heads": 1})):
        split = kw.get("split_kv", 1)
        sq, skv = (sq, skv * scale) if split > 1 else (sq * scale, skv)  # decoding: more keys, not more queries
        causal, heads, hkv = bool(kw.get("causal")), kw.get("heads"), kw.get("kv_heads")
        skv = sq if causal else skv
        np_dt = ml_dtypes.bfloat16 if dt is tl.bf16 else np.float32
        label = (f"{sq}x{skv}x{d} {dt}" + (" causal" if causal else "") + (f" {heads}/{hkv} heads" if heads else "")
                 + (f" split_kv {split}" if split > 1 else ""))
        lead = (heads,) if heads else ()
        lead_kv = (hkv or heads,) if heads else ()
        out.append(Case("attention", dev, label,
                        lambda sq=sq, skv=skv, d=d, dev=dev, dt=dt, kw=kw: tl.library.attention(
                            sq, skv, d, dtype=dt, device=dev, **kw),
                        lambda rng, sq=sq, skv=skv, d=d, np_dt=np_dt, lead=lead, lead_kv=lead_kv: {
                            "Q": rng.uniform(-2, 2, (*lead, sq, d)).astype(np_dt),
                            "KT": rng.uniform(-2, 2, (*lead_kv, d, skv)).astype(np_dt),
                            "V": rng.uniform(-2, 2, (*lead_kv, skv, d)).astype(np_dt)},
                        lambda x, _design, c=causal: {"O": _attention(x["Q"], x["KT"], x["V"], c)},
                        # decoding is bound by reading K and V: its efficiency is the DDR's (a streaming row)
                        macs=0 if split > 1 else 2 * sq * skv * d * (heads or 1) // (2 if causal else 1), mac_dtype=dt,
                        atol=4 * 2.0**-9 * 2 if dt is tl.bf16 else 1e-5 * 2))
    return out


def _attention(q: np.ndarray, kt: np.ndarray, v: np.ndarray, causal: bool = False) -> np.ndarray:
    """numpy's attention; with a leading head axis, per query head (key/value head h // group)."""
    if q.ndim == 3:
        group = q.shape[0] // kt.shape[0]
        return np.stack([_attention(q[h], kt[h // group], v[h // group], causal) for h in range(q.shape[0])])
    s = q.astype(np.float64) @ kt.astype(np.float64) / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _plan(design: object) -> tuple[object, str]:
    try:
        return tl.plan(design), "ilp"
    except tl.PlanError:
        return tl.plan(design, strategy="greedy"), "greedy"


def limiter(design: object, res: object) -> str:
    """Where the cores' time goes: kernels (with the kernel's own MAC efficiency), the fifo they stall on
    most, and the fill/drain time outside their programs; plus the busiest DMA channel."""
    st = res.stats
    total = len(st.cores) * res.cycles
    if not total:
        busiest = max(st.channels.items(), key=lambda kv: kv[1].utilisation)
        return f"no cores; busiest DMA {busiest[0]} {busiest[1].utilisation:.0%}"
    stalls: dict[str, int] = {}
    for c in st.cores.values():
        for f, n in c.stalls.items():
            stalls[f] = stalls.get(f, 0) + n
    busy = sum(c.busy for c in st.cores.values())
    idle = total - busy - sum(stalls.values())
    parts = [f"kernels {busy / total:.0%}{_kernel_note(design, res)}"]
    if stalls:
        fifo, n = max(stalls.items(), key=lambda kv: kv[1])
        parts.append(f"waiting on {fifo} {n / total:.0%} (all fifos {sum(stalls.values()) / total:.0%})")
    parts.append(f"fill/drain {idle / total:.0%}")
    busiest = max(st.channels.items(), key=lambda kv: kv[1].utilisation, default=(None, None))
    if busiest[0]:
        parts.append(f"busiest DMA {busiest[0]} {busiest[1].utilisation:.0%}")
    return "; ".join(parts)


def _kernel_note(design: object, res: object) -> str:
    """The MAC efficiency of the design's most-called matmul kernel alone under the simulator's cost model,
    and how much longer its calls took in the run (memory-bank contention between its operands and with the
    DMAs)."""
    durations: dict[str, list[int]] = {}
    for _, name, _, d in res.trace.spans():  # type: ignore[attr-defined]
        durations.setdefault(name, []).append(d)
    best = None
    for k in design.kernels:  # type: ignore[attr-defined]
        ops = [op for op in getattr(k, "body", ()) if op.kind.value == "matmul"]
        if ops and (best is None or len(durations.get(k.name, ())) > len(durations.get(best[0].name, ()))):
            best = (k, ops)
    if best is None:
        return ""
    k, ops = best
    dev = design.device  # type: ignore[attr-defined]
    ideal = sum(op.operands[0].type.numel * op.operands[1].type.shape[1] for op in ops) \
        / dev.macs_per_cycle(ops[0].operands[0].type.dtype)
    alone = cost.kernel_cycles(k, dev)
    calls = durations.get(k.name)
    ran = f", calls took {np.mean(calls) / alone - 1:+.0%} (bank contention)" if calls else ""
    return f" ({k.name} alone at {ideal / alone:.0%} of MAC peak{ran})"


def measure(case: Case, rng: np.random.Generator) -> dict:
    t0 = time.perf_counter()
    design = case.build()
    plan, how = _plan(design)
    t1 = time.perf_counter()
    inputs = case.inputs(rng)
    res = tl.simulate(plan, trace=bool(case.macs), **inputs)  # the trace gives the kernel calls' durations
    t2 = time.perf_counter()
    ok = all(_close(res.outputs[k], v, case.rtol, case.atol) for k, v in case.answer(inputs, design).items())
    dev = plan.device
    row = {"design": case.design, "device": case.device, "label": case.label, "cores": len(design.cores),
           "cycles": res.cycles, "util": res.stats.utilisation(), "ok": ok, "plan_s": t1 - t0, "sim_s": t2 - t1,
           "planner": how, "limit": limiter(design, res)}
    if case.macs:
        per_cycle = case.macs / res.cycles
        row["rate"] = f"{per_cycle:.0f} MAC/c"
        row["device_peak"] = per_cycle * dev.clock_hz / dev.peak_macs_per_second(case.mac_dtype)
        row["cores_peak"] = per_cycle / (len(design.cores) * dev.macs_per_cycle(case.mac_dtype))
    else:
        moved = sum(a.nbytes for a in inputs.values()) + sum(a.nbytes for a in res.outputs.values())
        per_cycle = moved / res.cycles
        row["rate"] = f"{per_cycle:.1f} B/c"
        row["device_peak"] = per_cycle / cost.ddr_bytes_per_cycle(dev)
        row["cores_peak"] = None
    return row


def _close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float = 1e-6) -> bool:
    g, w = got.astype(np.float64), np.asarray(want).astype(np.float64)
    if rtol == 0 and atol <= 1e-6:
        return bool(np.array_equal(g, w))
    return bool(np.all(np.abs(g - w) <= rtol * np.abs(w) + atol))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--devices", default="npu1,npu2,xcvc1902")
    ap.add_argument("--only", default="", help="comma-separated design names (matmul, matvec, conv2d, ...)")
    ap.add_argument("--gemm-sizes", default="", help="comma-separated GEMM sizes (default 1024; 256 with --small)")
    args = ap.parse_args(argv)
    devices = set(args.devices.split(","))
    only = set(filter(None, args.only.split(",")))
    sizes = [int(x) for x in args.gemm_sizes.split(",") if x] or [256 if args.small else 1024]
    cases = [c for size in sizes for c in gemm_cases(size)] + matvec_cases(args.small) + conv_cases(args.small) \
        + stream_cases(args.small) + attention_cases(args.small)
    cases = [c for c in cases if c.device in devices and (not only or c.design in only)]
    rng = np.random.default_rng(0)
    print("efficiency = MACs/cycle over the device's peak (MAC designs) or host bytes/cycle over the modelled "
          "DDR bandwidth (streaming designs)")
    print(f"{'design':<12} {'device':<9} {'size':<30} {'cores':>5} {'cycles':>10} {'rate':>11} {'% device':>9} "
          f"{'% cores':>8} {'util':>6} {'ok':>3}  limit")
    failed = 0
    for case in cases:
        try:
            r = measure(case, rng)
        except tl.TileLangError as e:
            print(f"{case.design:<12} {case.device:<9} {case.label:<30} n/a: {type(e).__name__}: {str(e)[:150]}")
            continue
        failed += 0 if r["ok"] else 1
        cores_peak = f"{r['cores_peak']:.1%}" if r["cores_peak"] is not None else "-"
        print(f"{r['design']:<12} {r['device']:<9} {r['label']:<30} {r['cores']:>5} {r['cycles']:>10} {r['rate']:>11} "
              f"{r['device_peak']:>9.1%} {cores_peak:>8} {r['util']:>6.1%} {'yes' if r['ok'] else 'NO':>3}  "
              f"{r['limit']}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
