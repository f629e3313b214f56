"""mlir-aie's decisions beside tilelang's: each library design lowered at both levels by mlir-aie's own tools.

Run: ``.venv/bin/python benchmarks/vendor_bench.py [--sizes small|bench] [--devices npu1,npu2,xcvc1902]``

At the objectfifo level mlir-aie chooses buffer addresses (its bank-aware allocator), BD ids and routes (its
Pathfinder); at the physical level every one of those is tilelang's plan (buffers, banks, BD chains and switchbox
connections), which mlir-aie lowers unchanged. Both modules are taken through the same flow
(``tilelang.backends.mlir.vendor``) and the numbers below are read from mlir-aie's own output after lowering:

- wirelength: switchbox connections that drive a neighbour link (North/South/East/West masters), summed over
  switchboxes: the links used, counted per flow (a broadcast counts each branch);
- busiest: the most used directed link as channels used / channels it has;
- buffer KiB: the largest total of buffers on one compute tile; banks: memory banks that tile's buffers occupy;
- BDs: buffer descriptors in the tile/memtile/shim DMA programs (the runtime sequence's excluded);
- seconds: wall time of the whole flow (lowering, routing, NPU/CDO or xaie, cores to LLVM IR).

A design mlir-aie's Pathfinder does not route within the tool time limit is shown as such.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import library_bench as lb  # noqa: E402
import local_buffers  # noqa: E402

import tilelang as tl  # noqa: E402
from tilelang.backends.mlir import vendor  # noqa: E402

_TILE = re.compile(r"(%[\w.]+) = aie\.tile\((\d+), (\d+)\)")
_SWITCHBOX = re.compile(r"aie\.switchbox\((%[\w.]+)\) \{(.*?)\n\s*\}", re.S)
_CONNECT = re.compile(r"aie\.connect<(\w+) : (\d+), (\w+) : (\d+)>")
_BUFFER = re.compile(r"aie\.buffer\((%[\w.]+)\)(?: \{[^}]*\})? : memref<([^>]*)>")
_BANK = re.compile(r"aie\.buffer\((%[\w.]+)\) \{[^}]*mem_bank = (\d+)")
_DMA_BLOCK = re.compile(r"aie\.(mem|memtile_dma|shim_dma)\((%[\w.]+)\) \{(.*?)\n    \}", re.S)
_BYTES = {"i8": 1, "i16": 2, "bf16": 2, "i32": 4, "f32": 4}
_STEP = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}


def _memref_bytes(spec: str) -> int:
    *dims, elem = spec.split(",")[0].split("x")
    n = 1
    for d in dims:
        n *= int(d)
    return n * _BYTES.get(elem.strip(), 4)


def decisions(lowered: str, device: tl.devices.Device) -> dict:
    """Routes, buffers and BDs as mlir-aie's lowered module (custom form) holds them."""
    tiles = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in _TILE.finditer(lowered)}
    use: Counter = Counter()
    for m in _SWITCHBOX.finditer(lowered):
        at = tiles[m.group(1)]
        for c in _CONNECT.finditer(m.group(2)):
            if c.group(3) in _STEP:
                dc, dr = _STEP[c.group(3)]
                to = (at[0] + dc, at[1] + dr)
                if device.link_capacity(at, to):  # not a shim's South master, which feeds its own DMA
                    use[(at, to)] += 1
    busiest = max((n / device.link_capacity(a, b), n, device.link_capacity(a, b))
                  for (a, b), n in use.items()) if use else (0.0, 0, 0)
    per_tile: Counter = Counter()
    for m in _BUFFER.finditer(lowered):
        if device.tile_kind(tiles[m.group(1)]) == "compute":
            per_tile[tiles[m.group(1)]] += _memref_bytes(m.group(2))
    banks: dict = defaultdict(set)
    for m in _BANK.finditer(lowered):
        banks[tiles[m.group(1)]].add(int(m.group(2)))
    fullest = max(per_tile, key=lambda t: (per_tile[t], t)) if per_tile else None
    bds = sum(block.group(3).count("aie.dma_bd(") for block in _DMA_BLOCK.finditer(lowered))
    return {
        "wirelength": sum(use.values()),
        "busiest": f"{busiest[1]}/{busiest[2]}" if use else "-",
        "buffer_kib": per_tile[fullest] / 1024 if fullest else 0.0,
        "banks": len(banks.get(fullest, ())) if fullest else 0,
        "bds": bds,
    }


def measure(case: lb.Case, strategy: str) -> list[dict]:
    """The design through mlir-aie's flow at both levels."""
    plan = tl.plan(case.build(), strategy=strategy)
    rows = []
    for level in vendor.LEVELS:
        row = {"design": case.design, "device": case.device, "label": case.label, "level": level}
        t0 = time.perf_counter()
        try:
            res = vendor.compile_text(tl.emit_mlir(plan, level=level), level)
        except vendor.VendorFlowError as e:
            row.update(error=f"{e.stage}: {e.tool_message.splitlines()[0][:60]}", seconds=time.perf_counter() - t0)
            rows.append(row)
            continue
        placed = res.modules["route"] if level == "objectfifo" else res.modules["lower"]
        row.update(decisions(placed, plan.device), seconds=time.perf_counter() - t0)
        rows.append(row)
    return rows


def local_cases(small: bool) -> list[lb.Case]:
    """The core-local buffer designs of examples/local_buffers.py on npu1 (kernel_pipeline's buffers packed)."""
    sizes = {"fused_matmul_relu": (64, 64, 64) if small else (), "attention_step": (64, 32, 32) if small else (),
             "kernel_pipeline": (2048, 512) if small else (), "branches": (4096, 1024) if small else ()}
    out = []
    for name, args in sizes.items():
        factory = getattr(local_buffers, name)
        out.append(lb.Case(f"local_buffers.{name}", "npu1", "tl.buffer", lambda f=factory, a=args: f(*a),
                           lambda rng: {}, lambda x, d: {}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", choices=["small", "bench"], default="small",
                    help="small: the sizes the tests use; bench: library_bench's default sizes")
    ap.add_argument("--devices", default="npu1,npu2,xcvc1902")
    ap.add_argument("--strategy", choices=["ilp", "greedy"], default="ilp", help="tilelang's planner strategy")
    args = ap.parse_args(argv)
    reason = vendor.missing_tools_reason()
    if reason:
        print(f"vendor_bench: skipped: {reason}")
        return 0
    small = args.sizes == "small"
    devices = set(args.devices.split(","))
    cases = lb.gemm_cases(256 if small else 1024) + lb.matvec_cases(small) + lb.conv_cases(small)
    cases += lb.stream_cases(small) + lb.attention_cases(small) + local_cases(small)
    cases = [c for c in cases if c.device in devices]
    head = (f"{'design':<44} {'device':<9} {'level':<10} {'wirelength':>10} {'busiest':>8} "
            f"{'buffer KiB':>10} {'banks':>5} {'BDs':>5} {'seconds':>8}")
    print(f"mlir-aie's flow at both levels ({vendor.find_tools().aie_opt}); tilelang plans: {args.strategy}")
    print("objectfifo: mlir-aie places buffers and routes (Pathfinder); physical: tilelang's plan, lowered unchanged")
    print(head)
    print("-" * len(head))
    for case in cases:
        for row in measure(case, args.strategy):
            name = f"{row['design']} {row['label']}"[:44]
            if "error" in row:
                print(f"{name:<44} {row['device']:<9} {row['level']:<10} failed after {row['seconds']:.1f} s: "
                      f"{row['error']}", flush=True)
                continue
            print(f"{name:<44} {row['device']:<9} {row['level']:<10} {row['wirelength']:>10} {row['busiest']:>8} "
                  f"{row['buffer_kib']:>10.1f} {row['banks']:>5} {row['bds']:>5} {row['seconds']:>8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
