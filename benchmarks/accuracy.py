"""Simulated cycles against published measurements: a calibration set and a validation set.

Run: ``.venv/bin/python benchmarks/accuracy.py [--markdown]`` (about two minutes).

Every figure is in exactly one set:

- **calibration**: the figure set a constant of the cost model (the row names
  the constant); agreement is by construction and proves nothing;
- **validation**: nothing was fitted to the figure; these rows test the model.
  The headline is the median and the worst absolute error over them;
- **shown, not counted**: figures printed for reference that cannot test the
  model (conflicting sources, or another project's design and host stack).

Each row gives its source (URL or issue) and the figure exactly as quoted.
Error is (simulated - published) / published.

Figures and how each is reproduced:
- [PG4c] vector_scalar_mul, 1024 x int16, "72 cycles": kernel cycles of the same
  kernel (a Chess build; it set CALL_OVERHEAD until each loop nest's pipeline fill
  was priced from llvm-aie's itineraries, and is a validation row since).
- [PG4c] the same design's DMA, "512 cycles" per 1024-element chunk (the measured
  "PortRunning" span in the trace): the simulated transfer of one chunk from the shim.
- [PG4c] 64x64x64 int16 matmul, "2048 cycles = 262,144 / 64": the guide's own
  numbers give 4096 (262,144 / 64), and its 64 MACs per cycle for int16 x int16
  agrees with the AIE-API mode table and AIE_FACTS. Shown as conflicting sources.
- [I2735] whole-array GEMM kernels alone "at most ~80% utilization" across the
  issue's i16 and bf16 profiles: the MAC efficiency of one 64^3 bf16 call and of one
  64^3 i16 call. One figure: it set MATMUL_BLOCK_OVERHEAD, so both rows calibrate.
- [I2735] whole-array GEMM on npu1, "~75% for i16" and "~50% for bf16" (tiles
  m=n=k=64), at most, over sizes the issue does not state: the whole-array design of
  benchmarks/sim_bench.py (16 cores, 64^3 tiles), planned by the planner and
  simulated at 2048^3 (the model's efficiency grows with size as fill and drain
  amortise). The issue times invocations through XRT, dispatch included, which at
  these efficiencies only large sizes make negligible; the rows leave dispatch out.
- [I1198] 512^3 single-core bf16 on Phoenix, "chess ukernel: 152'000 [us]: 43% of
  peak" for 100 invocations through IREE's runtime: IREE's design and kernel, and
  each invocation pays a host dispatch the model can only take from another host
  stack ([I3793]). Shown, not counted; the simulated figure is the same GEMM on one
  core of our design, without dispatch.
- [EQueue] FIR on AIE1 (xcvc1902), from Xilinx's super-sampling-rate FIR tutorial:
  32 taps, 512 samples of 32 bits, 512 outputs; the vendor simulator gives 2276
  cycles for one kernel and 539 for four cascaded kernels of 8 taps. int32 stands in
  for the tutorial's cint16 (same 32 bits per sample, same 8 MACs per cycle on AIE1:
  [UG1079]). The four kernels stream partial sums over the cascade inside one
  invocation each; the design here does the same per chunk of outputs: four cores
  pinned along AIE1's cascade (row 1, west to east), each chunk's partial sums sent
  over ``tl.cascade`` as whole 384-bit words (padded), each stage's window of the
  input from the shim. The chunk is the design's own
  choice: the fastest simulated among 16, 32, 64 and 128 that the planner can fit (16 needs
  32 buffer descriptors on a shim tile, which has 16). The vendor design reads
  its samples from PL streams, not DDR, so the row counts from the first input
  transfer (after the DDR's first-burst latency) to the last output.
- [XD100] Vitis Tutorials, AIE-ML programming and optimization, "Performance
  Analysis" of the optimized 64x64x64 int8 matrix multiply on the VEK280's AIE-ML
  (vendor AIE simulator profile): "32 bits output 1750 58%", "16 bits output 1121
  91%" (cycles, MAC efficiency at 256 int8 MACs per cycle). The same kernel, C = A @ B
  (the tutorial's kernel computes C without reading it), on xcve2802; the i16 output
  is the i32 product cast (the tutorial's shift-round-saturate).
- [IRON172] int8 GEMM on npu2 (Strix Halo), "2048³ ≈7–8.2 TOPS", XRT-timed, with
  IRON's GEMM operator (the whole-array layout of tl.library.matmul). The issue
  does not state the tiles or columns; the row uses the operator's defaults as
  published in amd/IRON iron/operators/gemm/op.py (tile_m = tile_k = tile_n = 64;
  columns: the most that divide N, here all 8), simulated in mode="timing" at the
  npu2 clock (1.8 GHz), dispatch not added; compared with the best figure, 8.2.
- [FLM] amd/IRON's iron/operators/flm/gemm/README.md measures IRON's own GEMM
  operator (``iron.operators.GEMM``) beside its FLM GEMM, per dispatch (min of
  interleaved rounds; its ``benchmark.py`` times "the runtime's own ``npu_time``
  (device-side)", which "excludes host dispatch", but the NPU1 table's "5 interleaved
  rounds of 20 dispatches" predate that file's stored 6 rounds of 30, so what the NPU1
  figures include is not stated). On NPU1 "at its own defaults (64/64/64 over all 4
  columns)": 1024/2048/1024 "2738 us", 1024/2560/2560 "8232 us" (the table's two
  largest shapes, where a ~100 us dispatch matters least; the smaller shapes of the
  same table are left out as the same measurement of the same design). On NPU2, the
  same operator "(same emulated mode)" at M=1024 K=1536 N=6144: "3353 us". The design
  is the whole-array layout of tl.library.matmul with 64^3 tiles on every column, bf16
  in and out (IRON's GEMM converts C to bf16), simulated at the device clock. On NPU2
  the README gives the dispatch floor, "Against a ~107 us floor" (FLM_NPU2_FLOOR_US, a
  calibration row), added to the NPU2 row; it gives none for NPU1, whose rows have no
  floor added. The README's FLM GEMM rows are another design (pre-packed B, k = 512
  tiles, fused epilogue) and are not used. What the operator runs on NPU1 is what the
  row simulates: amd/IRON iron/operators/gemm/op.py at its defaults (prio_accuracy off)
  accumulates C in bf16 in place (``dtype_acc = dtype_out``), A on one MM2S channel and
  B on the other of each of the 4 shims, with mlir-aie's aie2 kernel
  (aie_kernels/linalg/mm_aie2.h ``matmul_vectorized_4x8x4_bf16_bf16``: native 4x8x4
  bf16 mmuls, 4x4 expanded; the bfp16 flag is ignored on AIE2, as the README says). Both
  npu1 rows are 2.5x slower than the model, which is bound there by the shim read
  channels at the in-flight limit (15 bursts of 128 B per 500 ns, 3.8 GB/s, 99% busy);
  the kernel alone at [KC]'s nearest measured call (64^3 bf16 -> f32, 2969 cycles) is
  512 calls a core, 0.95 ms at 1.6 GHz or 1.5 ms at 1.0 GHz, so it cannot explain 2.74
  ms. A slower npu1 in-flight limit would (6 gives +0.4% and +3.9%), but no public npu1
  figure sets it, and it would put the npu1 rows that test the same path with contiguous
  runs ([PG4c]'s DMA, [KC]'s one-core DMA rows) about 2x slow: unexplained.
- [FLM] also: reading B "in 16-byte runs" instead of pre-packed, "B is ~70% of the
  bytes a dispatch moves, so the operator ran at ~10 GB/s instead of ~47", on NPU2
  with one B shim channel per column (8): 0.7 x 10 / 8 = 0.875 GB/s per shim
  channel, derived; the simulated figure is one npu2 shim channel filling a memtile
  with 16 KiB in 16-byte runs. It set OUTSTANDING_BURSTS until the [RNL] rows below
  showed that constant 1.4x to 2.3x too fast on every GEMM with 32- to 128-byte runs;
  it is now a validation row.
- [RNL] Jonas-Augustinus-Linus/ryzen-npu-linux docs/MLIR-AIE.md measures mlir-aie's
  stock ``basic/matrix_multiplication/whole_array`` on a Strix Point (Ryzen AI 9 HX
  PRO 370, npu2) with 8 columns, mlir-aie 1.4.1 and Peano: "NPU time" is "the
  runtime's on-NPU figure (around ``kernel.wait()``), excluding host launch
  overhead". Even so it has a floor: the same page gives 94 us for mlir-aie's
  ``basic/passthrough_kernel``, a transfer of a few microseconds; that floor
  (RNL_FLOOR_US, a calibration row) is added to each GEMM row. The design is
  tl.library.matmul's layout with the row's tiles on all 8 columns, simulated at
  the npu2 clock. "bf16 via bfp16" is the cost model's bf16
  (the bfp16-emulated path); its output is taken as f32, as in the plain bf16 row
  beside it. The 2048^3 i8 row with 32^3 tiles sets OUTSTANDING_BURSTS: chosen
  before comparing as the published row the model finds most bound by one shim
  channel (73% of its run waiting on a B channel; its tiles are read in 32-byte
  runs). The plain bf16 row (no bfp16 emulation) is shown, not counted: the cost
  model prices only the emulated path.
- [PR3442] mlir-aie PR 3442 ("aie2p: round to nearest even for the bfp16 mmul
  emulation"): "Measured on Strix (npu4), 512x1024x4096 bf16 matmul, 64x32x128 tile,
  8 columns", "0.920" ms/dispatch before the change (0.923 after): the whole-array
  matmul example (tl.library.matmul's layout) with m=64, k=32, n=128 tiles on all 8
  columns, bf16 in and out, at the npu2 clock, dispatch not added.
- [XDNA] Hello XDNA (scalable-analyses/xdna, ``docs/source/xdna1_kernel.rst``): a
  hand-scheduled 32x32x32 bf16 kernel with f32 accumulation on one npu1 core, "we
  achieved 398 BF16 GFLOPS" on a Ryzen 7 8700G (Hawk Point) in turbo pmode. Its
  ``src/XDNA1.mlir`` calls the kernel 1,000,000 times per dispatch on L1-resident
  buffers and ``src/driver_kernel.cpp`` divides 2 * 32^3 * 10^6 FLOP by the host time
  of a dispatch, so dispatch is negligible. The row is C += A @ B, 32^3, bf16 in, f32
  accumulate, priced by the cost model (one call's cycles) at the npu1 clock (1.6 GHz).
- [IRON55] the same operator at 2048^3 on Strix Halo, "Throughput: 6.961237e+02
  GFLOP/s": shown, not counted. It is a question about why the figure is low, on a
  development branch; the FLM README's later measurement of the same operator on
  NPU2 runs a similar GEMM at 5.8 TFLOPS, so the two cannot both describe the same
  operator and hardware state.

- [NPUE] vegah/Npu-Embeddings (tasks/0003-m2-bf16-gemm/TASK.md), on a Strix Point (HX 370,
  npu2), mlir-aie 1.3.4 with Peano: (a) one 64x64x32 bf16 call (A 64 x 64, B 64 x 32, f32
  accumulate, the bfp16-emulated ``(8,8,8)`` mmul) traced on hardware, "954.7" cycles on
  average, priced by the cost model (clock-free); (b) mlir-aie's whole_array example copied
  with tracing added, on 8 columns, K = N = 512, 64x64x32 tiles, "npu time" over 30 runs:
  "2048 | 477.2 µs" and "4096 | 821.7 µs". The row is the time each further row of A adds,
  (821.7 - 477.2) / 2048 us, against the simulated (T(4096) - T(2048)) / 2048 at the npu2
  clock: the per-dispatch floor cancels in the difference. The same page's traced calls
  inside the whole array (923-925 cycles) are the same quantity as (a), and its absolute
  rows include the floor; neither is added.
- [XUP] Xilinx/xup_aie_training's matrix multiplication lab (VCK5000, an xcvc1902): a
  16 x 8 by 8 x 8 matmul kernel, operands and result of one dtype, one call in the AIE
  simulator, "the matmult_int16 kernel takes 72 cycles to complete", priced by the cost
  model. The lab's appendix table gives the f32, i32 and i8 kernels too (231, 168, 45):
  shown, not counted (one measurement of one source, and the table's kernel version is
  not stated).
- [AVT] mlir-aie's own unit and integration tests of its vectoriser on AIE-ML
  (``test/unit_tests/aievec_tests/aie2/*`` and ``test/Integration/Dialect/TOSA/*``): each
  lowers one 1024-element loop (a ``math`` or TOSA op) to C++ with mlir-aie's aievec
  passes, compiles it with chess and runs it in the vendor ISS (``xca_udm_dbg --aiearch
  aie-ml``); its testbench reads ``chess_cycle_count()`` around one call of the kernel,
  and the ``.mlir`` keeps that count in a ``// Cycle count:`` comment (which the test does
  not check; the same in every stored version read). Taken, decided before any was
  simulated: every such test whose computation the DSL's kernels write (sqrt, 1 / sqrt,
  abs, negate, casts, sigmoid, tanh), each test a row (a second vector width or flow of
  the same computation is a second vendor build of it; the model prices one kernel, so
  their spread is part of the error), priced on xcve2802 (AIE-ML). The sigmoid tests'
  kernel is what the flow builds for them: aievec matches the sigmoid to
  ``getSigmoidBf16`` (``aie_runtime_lib/AIE2/vec_math.h``), a clipped quadratic
  (0.5 + 0.25 x - 0.03125 x |x| on [-4, 4]); written first as 1 / (1 + exp(-x)), the
  sigmoid's own formula, the row was priced at its per-value reciprocals (+1280%),
  which is not the computation measured. The tanh test links ``lut_based_ops.cpp``'s
  table tanh, the one the model prices. Not taken: the bitwise and shift ops, ceil,
  floor and erf (no DSL op), ``float_cast_bf16`` (its ``.mlir`` casts to f16, its
  testbench to bf16), and the counts in checked-in generated ``dut.cc`` files (not of
  what the tests build); the two-input tests carry no count.
- [SMX-ML], [SMX-AIE] the Vitis tutorials' softmax of 2048 classes on one core, kernel cycles
  from the AIE simulator's profile: bf16 on a VE2802 "takes up to 8,083 cycles", f32 on a
  VC1902 "takes 25,306 cycles". The library's softmax kernel over 2048 values, priced by the
  cost model. The vendor kernels read and write their data over streams inside the kernel
  (2048 x 16 or 32 bits each way, well under the figures at a word a cycle) and compute exp
  their own way; the classification was made with those differences known.
- [GMIO] the Vitis tutorial "AI Engine GMIO Performance Profile", its 2020-2021 version
  measured on a VCK190: one kernel incrementing 256 int32 per 1 KiB window, fed by a shim
  MM2S channel and drained by an S2MM channel, 512 windows; "by AIE kernel cycles" (the
  first kernel's first cycle stamp to the last's last) "in=1,out=1) =6545.68M Bytes/s" at
  its assumed 1 GHz, i.e. 6.55 bytes in and out per AIE cycle, clock-free. The same design
  on one xcvc1902 core, counted from its first call's start to its last call's end.

- [KC] mlir-aie's nightly kernel checks, ``kernel-checks/npu1/runs/38030448219.json``
  ("Phoenix") and ``kernel-checks/npu2/runs/38030448219.json`` ("Krackan"), both "turbo",
  one CI run (2026-10-10), the newest stored: the cycles of one call of IRON's C++
  kernels traced on the core (the minimum over the calls; operands in the core's
  memory, no data movement). The row is the DSL's kernel for the same operation and
  sizes (``KC_ROWS``), priced by the cost model. Every row of an operation the DSL's
  kernels can write was taken, each size once (16- and 256-call rows give the same
  cycles; ``relu_sized`` and ``mul_sized`` rows of a size already taken are the same
  measurement); int8 stands in for uint8 in a copy. npu1's copy of 1024 int16 sets
  CALL_OVERHEAD (the simplest kernel: a load and a store per vector, whose cycles
  beyond its loop's are the call's own). npu1's exp of 1024 bf16 sets AIE-ML's
  ``FloatUnit.exp.interval``: IRON's loop of ``getExpBf16`` takes 15.3 cycles a vector
  where its instructions' counts give 8 (tilelang/devices/costs.py); its dispatch-time
  row below runs the same kernel and calibrates with it. The softmax rows, whose exp
  pass is the same ``getExpBf16`` (mlir-aie ``aie_kernels/activation/softmax_aie2.h``),
  test it. Shown, not counted: npu2's plain-bf16 matmul
  (a mode the model does not price), npu2's exp (IRON's table-lookup kernel on
  AIE2P, where the model prices the native exp2) and npu2's ``use_lut=True`` builds of
  the tanh-based activations (the model prices AIE2P's tanh as the default build's
  native vtanh). Taken by the same rule once the DSL had ``tl.sqrt``, ``tl.rsqrt`` and
  ``tl.tanh`` (rows chosen before any was simulated; no constant set from them): tanh,
  sigmoid, silu (1024 and 4096), gelu and swiglu, written as mlir-aie's
  ``aie_kernels/activation`` kernels compute them (sigmoid as 0.5 + 0.5 tanh(x/2)),
  and one row of rms_norm, layer_norm (bf16) and layer_norm_f32, tl.library's norm
  kernels (``rms_norm_eps`` and ``gelu_sized`` measure a size already taken, and
  ``layer_norm_affine_cast``'s operand roles are not stated). Not taken: exp2f and
  log (no exp2 or log), argmax, transposes, column-major operands, bfp16 and uint8
  vision or convolution kernels, ``mul_add`` and ``affine_cast`` (operand roles not
  stated), ``compute_max`` and the ``mv/8192x256`` row (their shapes not stated by the
  row's name alone), fused and attention kernels. The rows were first read from the
  run of 2026-09-30; npu2's add, mul, axpy, reductions, int32 scale and int8 matmul
  changed since (mlir-aie PR 3807's tuned AIE2P kernels), npu1's did not (one
  matrix-vector row by 2 cycles), and every row now reads the newest run. Its bf16 sum,
  clamp and exp rows are the rows the rule takes that the first run's rows lacked or
  that it had left out (exp: the table-lookup exp of ``getExpBf16`` is the model's
  exp on AIE-ML). The min reductions were taken by the same rule (cycles and dispatch rows alike)
  once the DSL had ``tl.min``, before their simulated values were computed.

- [KC] also gives each kernel's "npu_us", the device time of one dispatch of 16 and of 256 calls
  on one core (the harness of mlir-aie's ``python/iron/algorithms/kernel_design.py``: an input and
  an output ObjectFifo of one tile, depth 2, shim to core without a memtile, one fill and one
  drain). (npu_us(256) - npu_us(16)) / 240 is the time a further call adds, the dispatch floor
  cancelling; the row is the same design simulated at 16 and 256 calls (``KCD_ROWS``). Taken
  before any was simulated: every one-input, one-output kernel of the [KC] rows with both counts
  whose difference is known to 5% (the two "+-" over the difference), from the same run as the
  cycles (re-taken by the rule when the rows moved to the newest run). npu1's rows are timed at
  Phoenix's clock (PHOENIX_CLOCK_HZ, from AMD's 10 TOPS rating), the part the file names. Two npu2
  rows, DMA-bound, are calibration: they chose npu2's stream width (64 bits; 32 cannot carry them).

Considered, not added (decided before computing a simulated value; the reason is
what disqualified it):
- Hello XDNA's XDNA2 kernel ("1760 BFP16 GFLOPS"): bfp16 operands, no DSL dtype.
- ryzen-npu-linux ``relu_add`` (1 tile 8 967 us, 8 columns 1 123 us): a scalar C++
  kernel; DSL kernels are vector kernels.
- ryzen-npu-linux ``vector_scalar_mul`` (106 us, npu2): 89% of it is the page's own
  94 us floor, a calibration row.
- ryzen-npu-linux ``ml/conv2d`` (490 us npu2, ~0.9 ms npu1): one un-warmed host-timed
  ``execute()`` with buffer syncs; the convolution is about 2% of it.
- mlir-aie issue 2704 (npu2 single_core 3223 us, whole_array 3687 us): dtype not
  stated; the reporter asks why the figures are low.
- mlir-aie PR 2559 memcpy (55.5 / 66.6 GB/s): device, columns, channels and mode
  not stated.
- stream_aie CI trace cycles: device and dtype not stated.
- Vitis AIE-ML tutorial's unoptimized kernel (2092 / 2089 cycles): the same DSL
  kernel as the optimized one in [XD100]; only hand blocking differs.
- Vitis IIR tutorial (72 cycles per call, AIE1): a recursive filter bound by the
  float accumulate latency; not a DSL tile kernel.
- Estevez's peak-TOPS loop (539 cycles per iteration, npu2): a register-resident
  synthetic loop.
- mlir-aie PR 3650 (asymmetric tile buffering, bfp16): neither is in the library.
- mlir-aie PR 2414 (whole_array bf16): figures only in images. PR 2876 (softmax):
  size not stated.
- [FLM]'s flm.GEMM rows and IRON PR 195's tables: another design (pre-packed B).
- iree-amd-aie PRs 282, 415, 851, 1183, 1245, 1286, 1313: IREE's own designs and
  host runtime (as [I1198]).
- "Striking the Balance" (arXiv 2512.13282) maxima: sizes, tiles and clocks not
  readable from its abstract.
- MaxEVA, CHARM: adder-kernel reduction and PL-side buffers, not the library's
  cascade/PLIO GEMM.
- Vitis DSP library benchmark CSVs: latency and testbench-fed throughput only
  (PLIO widths and PL clock not given); kernel-only cycle counts readable only
  for complex dtypes.
- mlir-aie programming guide section 4a ("200-300 us" wall clock): a range, device
  not stated, mostly host dispatch.
- [IRON172]'s other shapes (1024x512x1024, 4096^3): the same measurement of the
  same design as its 2048^3 row (as [FLM]'s smaller npu1 shapes). amd/IRON PRs 177,
  182: modified kernels, tiles not stated.
- phoenix-npu1-iron-kernels (Hugging Face; int16 512^3 on 4x4, 264.7 GOPS): tiles not
  stated; about 90% of the run is the host path.
- GAMA (FPL 2025) and Tempus (VE2802 GEMMs): cascade chains on AIE-ML, which the library
  refuses; PL-fed.
- AMA (FPL 2024), WideSA (DATE 2024), EA4RCA, SSR (FPGA 2024), Lei et al.'s VCK190 GEMMs and
  a ViT accelerator on VCK5000: sizes, tiles or timing not readable, or end-to-end models.
- MLIR-AIR's GEMM, element-wise add and GEMV figures on npu2 (its programming examples and
  kernel registry), and mlir-air PR 1360's "IRON GEMV reference: 682us": MLIR-AIR's designs or
  a remark, host-timed per dispatch with no floor stated.
- a DiT GEMM (bf16 x bfp16ebs8) and a Q4_K dequantising GEMM on npu2: bfp16 / Q4 operands, no
  DSL dtype. An IRON fork's SpMV study: the fork's own dense design, shapes implied.
- ryzen-npu-linux's newer XDNA1 table: "wall-clock incl. host dispatch", approximate ("~").
- Vitis AIE-ML performance-analysis tutorial (z-score, bf16): kernels built with
  ``--xlopt=0`` or cascaded on AIE-ML; UG1504's Hough transform and a Hackster RGB-negative
  article: not library designs, or no cycle figure of the kernel.
- [GMIO]'s rows for 2 to 32 port pairs: the aggregate they saturate at (about 11 bytes per
  cycle) is in bytes per second of the NoC and DDR, so in cycles it depends on the clock the
  tutorial's silicon ran at, which it does not state ("assumes that AI Engine runs at 1 GHz"),
  and on xcvc1902's DDR figure, an estimate here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from sim_bench import gemm_plan, whole_array_gemm  # noqa: E402
from test_sim_support import ddr_fill_plan, hand_plan  # noqa: E402

import simulator  # noqa: E402
import tilelang as tl  # noqa: E402
from simulator import cost  # noqa: E402
from tilelang.devices.cascade_rules import cascade_spec  # noqa: E402
from tilelang.library.elementwise import gelu, sigmoid, silu  # noqa: E402

NPU1 = tl.device("npu1")
AIE1 = tl.device("xcvc1902")


def _scale_kernel():
    @tl.kernel
    def scale(a: tl.Tile[(1024,), tl.i16], c: tl.Tile[(1024,), tl.i16], f: tl.i16):
        c[...] = a * f

    return scale


def vector_scalar_mul_kernel() -> int:
    return cost.kernel_cycles(_scale_kernel(), NPU1)


def vector_scalar_mul_dma() -> int:
    """Cycles one 1024 x int16 chunk keeps the shim's MM2S channel busy in the PG4c design (4 chunks)."""
    scale = _scale_kernel()

    @tl.design(device="npu1")
    def vsm(A: tl.Tensor[(4096,), tl.i16], C: tl.Tensor[(4096,), tl.i16]):
        a_in = tl.fifo(tl.Tile[(1024,), tl.i16], depth=2, name="a_in")
        c_out = tl.fifo(tl.Tile[(1024,), tl.i16], depth=2, name="c_out")

        @tl.core(name="worker")
        def worker():
            for _ in tl.range(4):
                a, c = a_in.acquire(), c_out.acquire()
                scale(a, c, 3)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)

    plan = hand_plan(vsm, {"worker": (0, 2)})
    a = np.arange(4096, dtype=np.int16)
    res = simulator.simulate(plan, A=a)
    assert np.array_equal(res.outputs["C"], a * 3)
    spans = res.trace.spans("shim (0,0) mm2s 0")
    return int(np.median([s[3] for s in spans]))


def _mac_kernel(dt, acc, t=64):
    @tl.kernel
    def mac(a: tl.Tile[(t, t), dt], b: tl.Tile[(t, t), dt], c: tl.Tile[(t, t), acc]):
        c[...] += a @ b

    return mac


def matmul_i16_mac_bound() -> int:
    return int(cost.kernel_slots(_mac_kernel(tl.i16, tl.i32), NPU1).mac)


def bf16_kernel_efficiency() -> float:
    ideal = 64**3 / NPU1.macs_per_cycle(tl.bf16)
    return ideal / cost.kernel_cycles(_mac_kernel(tl.bf16, tl.f32), NPU1)


def i16_kernel_efficiency() -> float:
    ideal = 64**3 / NPU1.macs_per_cycle(tl.i16)
    return ideal / cost.kernel_cycles(_mac_kernel(tl.i16, tl.i32), NPU1)


def gemm_efficiency(size: int, dtype, rows: int, cols: int) -> float:
    """MACs over (cycles x peak MACs per cycle) of the simulated whole-array GEMM on npu1 (C checked)."""
    d = whole_array_gemm(size, size, size, dtype, rows=rows, cols=cols)
    p = gemm_plan(d, rows, cols)
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (size, size)).astype(np.float32 if dtype.is_float else dtype.numpy)
    b = rng.integers(-3, 4, (size, size)).astype(np.float32 if dtype.is_float else dtype.numpy)
    res = simulator.simulate(p, A=a, B=b)
    assert np.array_equal(res.outputs["C"].astype(np.float64), a.astype(np.float64) @ b.astype(np.float64))
    peak = NPU1.macs_per_cycle(dtype) * rows * cols
    return size**3 / (res.cycles * peak)


# -- FIR (EQueue / Xilinx super-sampling-rate FIR tutorial) ---------------------------------

SAMPLES, TAPS, STAGES = 512, 32, 4
PER_STAGE = TAPS // STAGES


def _fir_taps() -> np.ndarray:
    return np.random.default_rng(0).integers(-10, 10, TAPS).astype(np.int32)


def _fir_kernel(outputs: int, taps: list[int], partial: bool, name: str, width: int = 0, send: bool = False):
    """``outputs`` results of ``taps`` over a window of ``outputs + len(taps) - 1`` samples.

    The coefficients are constants of the kernel, as in the tutorial's kernels. With ``width``, the
    partial sums taken (``partial``) and sent (``send``) are ``width`` long, zero-padded past ``outputs``
    to whole cascade words.
    """
    n = len(taps)
    width = width or outputs
    out_len = width if send else outputs

    def body(x, p, y) -> None:  # noqa: ANN001 - traced tiles
        acc = x[0:outputs] * taps[0] if p is None else p[0:outputs] + x[0:outputs] * taps[0]
        for k in range(1, n):
            acc = acc + x[k : k + outputs] * taps[k]
        if out_len == outputs:
            y[...] = acc
        else:
            y[0:outputs] = acc
            y[outputs:out_len] = x[0 : out_len - outputs] * 0

    if partial:
        def fir(x: tl.Tile[(outputs + n - 1,), tl.i32], p: tl.Tile[(width,), tl.i32],
                y: tl.Tile[(out_len,), tl.i32]):
            body(x, p, y)
    else:
        def fir(x: tl.Tile[(outputs + n - 1,), tl.i32], y: tl.Tile[(out_len,), tl.i32]):
            body(x, None, y)

    fir.__name__ = name
    return tl.kernel(fir)


def fir_single() -> int:
    """One kernel: 512 outputs of 32 taps over 543 samples (512 plus the 31-sample history)."""
    h = [int(v) for v in _fir_taps()]
    return cost.kernel_cycles(_fir_kernel(SAMPLES, h, False, "fir"), AIE1)


def _fir_cascade(chunk: int, h: np.ndarray):
    """The vendor's structure: four cores on AIE1's cascade, partial sums forwarded over it (``tl.cascade``).

    The partial sums of a chunk travel as whole 384-bit cascade words (12 int32), zero-padded.
    """
    n = SAMPLES // chunk
    window = chunk + PER_STAGE - 1
    word = cascade_spec(AIE1).word_bytes // 4
    width = -(-chunk // word) * word
    ks = [_fir_kernel(chunk, [int(v) for v in h[PER_STAGE * i : PER_STAGE * (i + 1)]], i > 0, f"fir{i}", width,
                      i < STAGES - 1) for i in range(STAGES)]

    @tl.design(device="xcvc1902")
    def fir_cascade(X: tl.Tensor[(SAMPLES + TAPS - 1,), tl.i32], Y: tl.Tensor[(SAMPLES,), tl.i32]):
        xs = [tl.fifo(tl.Tile[(window,), tl.i32], depth=2, name=f"x{i}") for i in range(STAGES)]
        y = tl.fifo(tl.Tile[(chunk,), tl.i32], depth=2, name="y")
        cs = [tl.cascade(tl.Tile[(width,), tl.i32], name=f"c{i}") for i in range(STAGES - 1)]
        for i in range(STAGES):
            # row 1 is odd: AIE1's cascade runs west to east along it
            @tl.core(name=f"stage{i}", tile=(2 + i, 1))
            def body(i=i):
                for _ in tl.range(n):
                    x = xs[i].acquire()
                    if i == 0:
                        ks[0](x, cs[0])
                    elif i < STAGES - 1:
                        ks[i](x, cs[i - 1], cs[i])
                    else:
                        out = y.acquire()
                        ks[i](x, cs[i - 1], out)
                        y.release()
                    xs[i].release()

        # AIE1 shim DMAs walk one dimension: one move per window, in chunk order.
        for j in range(n):
            for i in range(STAGES):
                tl.dma(X, xs[i], pattern=tl.pattern(PER_STAGE * i + j * chunk, [window], [1]))
        tl.dma(y, Y)

    return fir_cascade


def fir_chain() -> tuple[int, int]:
    """(cycles, chunk) of the fastest chunked four-stage FIR: from the first input transfer to the last output."""
    h = _fir_taps()
    x = np.random.default_rng(1).integers(-100, 100, SAMPLES + TAPS - 1).astype(np.int32)
    best: tuple[int, int] | None = None
    for chunk in (16, 32, 64, 128):
        d = _fir_cascade(chunk, h)
        try:  # the cores are pinned along the cascade; the planner picks shims and channels
            plan = tl.plan(d)
        except tl.PlanError:  # e.g. 16-sample chunks: 32 moves a stage, more than a shim tile's 16 BDs
            continue
        res = simulator.simulate(plan, X=x)
        assert np.array_equal(res.outputs["Y"], np.convolve(x, h[::-1], mode="valid").astype(np.int32))
        # The vendor design's samples arrive on PL streams, not from DDR: count from the first
        # sample entering the array (the first shim transfer) to the last output leaving it.
        first = min(sp[2] for name in res.stats.channels if name.startswith("shim") and "mm2s" in name
                    for sp in res.trace.spans(name))
        cycles = res.cycles - first
        if best is None or cycles < best[0]:
            best = (cycles, chunk)
    assert best is not None
    return best


CALIBRATION, VALIDATION, SHOWN = "calibration", "validation", "shown, not counted"


@dataclass(frozen=True)
class Figure:
    """One published figure and how the model reproduces it.

    Attributes:
        name: what is measured.
        device: the device it was measured on.
        source: where it was published (URL or issue).
        quote: the figure exactly as quoted.
        published: the figure as a number in ``unit``.
        unit: "cycles", "%" (of the device's MAC peak), "TOPS", "GFLOP/s", "GB/s", "B/cycle" or "us" (microseconds at the device clock).
        simulate: the model's value, in ``unit``.
        role: CALIBRATION, VALIDATION or SHOWN.
        why: for calibration, the constant it set; for shown rows, why it is not counted.
        level: KERNEL for one kernel call priced alone, "design" for a run of a whole design (cores,
            data movement, host).
    """

    name: str
    device: str
    source: str
    quote: str
    published: float
    unit: str
    simulate: Callable[[], float]
    role: str
    why: str = ""
    level: str = "design"


#: Figure.level of a figure that prices one kernel call alone (no data movement, no other core).
KERNEL = "kernel"

PG4C = "https://github.com/Xilinx/mlir-aie/blob/main/programming_guide/section-4/section-4c/README.md"
I2735 = "https://github.com/Xilinx/mlir-aie/issues/2735"
I1198 = "https://github.com/nod-ai/iree-amd-aie/issues/1198"
EQUEUE = "EQueue repository (cucapra/EventQueue), as recorded in AIE_FACTS"
IRON172 = "https://github.com/amd/IRON/issues/172"
FLM = "https://github.com/amd/IRON/blob/main/iron/operators/flm/gemm/README.md"
IRON55 = "https://github.com/amd/IRON/issues/55"
PR3442 = "https://github.com/Xilinx/mlir-aie/pull/3442"
RNL = "https://github.com/Jonas-Augustinus-Linus/ryzen-npu-linux/blob/main/docs/MLIR-AIE.md (Strix Point)"
XDNA = "https://github.com/scalable-analyses/xdna/blob/main/docs/source/xdna1_kernel.rst (Hello XDNA)"
XD100 = ("https://docs.amd.com/r/en-US/Vitis-Tutorials-AI-Engine-Development/Performance-Analysis (AIE-ML "
         "tutorial 01, optimized kernel, AIE simulator)")


GMIO = ("Xilinx/Vitis-Tutorials AI_Engine_Development/Feature_Tutorials/02-using-gmio/perf_profile_aie_gmio.md "
        "(VCK190 hardware, 2020-2021 version)")
NPUE = "https://github.com/vegah/Npu-Embeddings (tasks/0003-m2-bf16-gemm/TASK.md, Strix Point HX 370)"
XUP = "https://github.com/Xilinx/xup_aie_training/blob/main/docs/matmult_lab.md (VCK5000, AIE simulator)"
SMX_ML = ("Xilinx/Vitis-Tutorials, AIE-ML Design_Tutorials Softmax Function README (VE2802, AIE simulator "
          "profile)")
SMX_AIE = ("Xilinx/Vitis-Tutorials, AI_Engine_Development/AIE/Design_Tutorials/19-Softmax-Function README "
           "(VC1902, AIE simulator profile)")


def aieml_int8_kernel_cycles(out) -> float:
    """Cycles of one 64^3 int8 matmul call C = A @ B on AIE-ML (xcve2802, the VEK280's part)."""

    @tl.kernel
    def mm(a: tl.Tile[(64, 64), tl.i8], b: tl.Tile[(64, 64), tl.i8], c: tl.Tile[(64, 64), out]):
        c[...] = (a @ b).astype(out)

    return cost.kernel_cycles(mm, tl.device("xcve2802"))


def xdna1_bf16_kernel_gflops() -> float:
    """[XDNA] GFLOP/s of one npu1 core calling C += A @ B (32^3, bf16 in, f32 accumulate) back to back."""
    cycles = cost.kernel_cycles(_mac_kernel(tl.bf16, tl.f32, t=32), NPU1)
    return 2 * 32**3 * NPU1.clock_hz / cycles / 1e9


def npu2_bf16_kernel_cycles() -> float:
    """[NPUE] cycles of one C += A @ B call, A 64 x 64, B 64 x 32, bf16 in, f32 accumulate, on npu2 (the cost
    model's bf16 is the bfp16-emulated path the source traced)."""

    @tl.kernel
    def mac(a: tl.Tile[(64, 64), tl.bf16], b: tl.Tile[(64, 32), tl.bf16], c: tl.Tile[(64, 32), tl.f32]):
        c[...] += a @ b

    return cost.kernel_cycles(mac, tl.device("npu2"))


def npu2_marginal_us_per_row() -> float:
    """[NPUE] microseconds each further row of A adds to the whole-array GEMM M x 512 x 512 (bf16 -> f32,
    64 x 64 x 32 tiles, all 8 columns): (T(4096) - T(2048)) / 2048, the per-dispatch floor cancelling."""

    def us(m: int) -> float:
        d = tl.library.matmul(m, 512, 512, in_dtype=tl.bf16, out_dtype=tl.f32, device="npu2",
                              tiling={"m": 64, "k": 64, "n": 32})
        return simulator.simulate(tl.plan(d), mode="timing").seconds * 1e6

    return (us(4096) - us(2048)) / 2048


def aie1_small_matmul_cycles(dt) -> float:
    """[XUP] cycles of one C = A @ B call, A 16 x 8, B 8 x 8, every operand ``dt``, on AIE1 (xcvc1902)."""

    @tl.kernel
    def mm(a: tl.Tile[(16, 8), dt], b: tl.Tile[(8, 8), dt], c: tl.Tile[(16, 8), dt]):
        c[...] = (a @ b).astype(dt)

    return cost.kernel_cycles(mm, AIE1)


def gmio_bytes_per_cycle(windows: int = 512) -> float:
    """[GMIO] bytes in and out per AIE cycle of one core fed and drained by shim DMAs on AIE1: 512 windows of
    256 int32 in, 258 out (the vendor kernel's two cycle-counter words are zeros here), from the first call's
    start to the last call's end, as the tutorial's cycle stamps count."""

    @tl.kernel
    def incr(a: tl.Tile[(256,), tl.i32], c: tl.Tile[(258,), tl.i32]):
        c[0:256] = a + 1
        c[256:258] = 0

    @tl.design(device="xcvc1902")
    def gmio(A: tl.Tensor[(windows * 256,), tl.i32], C: tl.Tensor[(windows * 258,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(256,), tl.i32], depth=2, name="a")
        c_out = tl.fifo(tl.Tile[(258,), tl.i32], depth=2, name="c")

        @tl.core(name="k", tile=(6, 1))  # AIE row 0 of the array, as the tutorial's kernels
        def body():
            for _ in tl.range(windows):
                a, c = a_in.acquire(), c_out.acquire()
                incr(a, c)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)

    x = np.arange(windows * 256, dtype=np.int32)
    res = simulator.simulate(tl.plan(gmio), A=x)
    y = res.outputs["C"].reshape(windows, 258)
    assert np.array_equal(y[:, :256], x.reshape(windows, 256) + 1) and not y[:, 256:].any()
    calls = [s for s in res.trace.spans() if s[0].startswith("k ") and s[1] == "incr"]
    first, last = calls[0][2], calls[-1][2] + calls[-1][3]
    return windows * (256 + 258) * 4 / (last - first)


def softmax_kernel_cycles(dtype, device: str) -> float:
    """[SMX-ML]/[SMX-AIE] cycles of one call of the library's softmax kernel over 2048 values on one core."""
    from tilelang.library.softmax import softmax_kernel

    return cost.kernel_cycles(softmax_kernel(1, 2048, dtype), tl.device(device))


def npu2_int8_gemm_tops(size: int = 2048) -> float:
    """TOPS of tl.library.matmul int8 -> int32 on all of npu2, 64^3 tiles, at the npu2 clock."""
    d = tl.library.matmul(size, size, size, in_dtype=tl.i8, out_dtype=tl.i32, device="npu2",
                          tiling={"m": 64, "k": 64, "n": 64})
    res = simulator.simulate(tl.plan(d), mode="timing")
    return 2 * size**3 / res.seconds / 1e12


def iron_gemm_us(M: int, K: int, N: int, device: str, m: int = 64, k: int = 64, n: int = 64,
                 in_dtype=tl.bf16, out_dtype=tl.bf16) -> float:
    """Microseconds of the whole-array GEMM on every column (IRON's defaults: bf16 in and out, 64^3 tiles)."""
    d = tl.library.matmul(M, K, N, in_dtype=in_dtype, out_dtype=out_dtype, device=device,
                          tiling={"m": m, "k": k, "n": n})
    res = simulator.simulate(tl.plan(d), mode="timing")
    return res.seconds * 1e6


#: [RNL]'s per-invocation floor: its "NPU time" of mlir-aie's ``basic/passthrough_kernel`` on the same
#: machine, "| `basic/passthrough_kernel` | DMA passthrough | ✓ 94 µs |" (the passthrough's own small
#: transfer is counted in it). Its GEMM rows are that floor plus the simulated run.
RNL_FLOOR_US = 94.0
#: [FLM]'s per-dispatch floor on NPU2 through IRON's host path: "Against a ~107 us floor".
FLM_NPU2_FLOOR_US = 107.0


def rnl_us(size: int, in_dtype, out_dtype, tiles: tuple[int, int, int]) -> float:
    """[RNL] mlir-aie's whole_array GEMM on npu2's 8 columns, size^3 with (m, k, n) tiles: the source's
    measured floor plus the simulated run."""
    m, k, n = tiles
    return RNL_FLOOR_US + iron_gemm_us(size, size, size, "npu2", m, k, n, in_dtype, out_dtype)


def iron_gemm_gflops(M: int, K: int, N: int, device: str) -> float:
    return 2 * M * K * N / iron_gemm_us(M, K, N, device) / 1e3


def strided_fill_gbps(run_elems: int = 4, device: str = "npu2") -> float:
    """GB/s one shim channel reads a 16 KiB fifo element from DDR in runs of ``run_elems`` int32."""
    res = simulator.simulate(ddr_fill_plan(run_elems, device), mode="timing")
    ch = res.stats.channels["shim (0,0) mm2s 0"]
    return ch.bytes / ch.busy * tl.device(device).clock_hz / 1e9


# -- [AVT] mlir-aie's vectoriser tests: one call of a 1024-element loop, chess and the vendor ISS (AIE-ML) ------

#: [AVT]: the ``.mlir`` file of each test, at the commit read.
AVT_AIEVEC = "https://github.com/Xilinx/mlir-aie/blob/{commit}/test/unit_tests/aievec_tests/aie2/{path}"
AVT_TOSA = "https://github.com/Xilinx/mlir-aie/blob/d281526140f3f1593e05a02bf593c04143282cc4/test/Integration/Dialect/TOSA/{path}"


def _sigmoid_quadratic(a):  # noqa: ANN001, ANN202 - a traced tile
    """What mlir-aie's flow computes for ``tosa.sigmoid``: aievec matches the sigmoid to ``getSigmoidBf16``
    (``aie_runtime_lib/AIE2/vec_math.h``), the clipped quadratic 0.5 + 0.25 x - 0.03125 x |x|, x in [-4, 4]."""
    x = tl.maximum(tl.minimum(a, 4.0), -4.0)
    return x * 0.25 + 0.5 - abs(x) * 0.03125 * x


#: [AVT] rows: (what, source, path, cycles, op (a :func:`_kc_elementwise` op over 1024 values), dtype, cast target or None).
_AIEVEC_309 = "309dac7e59a15ade30f723b901663d97fc83b54c"
AVT_ROWS = [
    ("1 / sqrt of 1024 bf16 (16 lanes)", AVT_AIEVEC.format(commit=_AIEVEC_309, path="bf16_rsqrt_v16/bf16_rsqrt.mlir"),
     1708, "rsqrt", tl.bf16, None),
    ("1 / sqrt of 1024 bf16 (32 lanes)", AVT_AIEVEC.format(commit=_AIEVEC_309, path="bf16_rsqrt_v32/bf16_rsqrt.mlir"),
     1040, "rsqrt", tl.bf16, None),
    ("sqrt of 1024 bf16 (16 lanes)", AVT_AIEVEC.format(commit=_AIEVEC_309, path="bf16_sqrt_v16/bf16_sqrt.mlir"),
     2724, "sqrt", tl.bf16, None),
    ("sqrt of 1024 bf16 (32 lanes)", AVT_AIEVEC.format(commit=_AIEVEC_309, path="bf16_sqrt_v32/bf16_sqrt.mlir"),
     2122, "sqrt", tl.bf16, None),
    ("abs of 1024 i16 (aievec)", AVT_AIEVEC.format(commit="a9dae72", path="i16_abs_v32_2/i16_abs.mlir"), 86, "abs",
     tl.i16, None),
    ("abs of 1024 i32 (aievec)", AVT_AIEVEC.format(commit="002a9ae", path="i32_abs_v16_2/i32_abs.mlir"), 150, "abs",
     tl.i32, None),
    ("abs of 1024 i8 (aievec)", AVT_AIEVEC.format(commit="d008557", path="i8_abs_v64_2/i8_abs.mlir"), 54, "abs",
     tl.i8, None),
    ("abs of 1024 bf16 (TOSA, 16 lanes)", AVT_TOSA.format(path="bf16_abs_v16/bf16_abs.mlir"), 85, "abs", tl.bf16, None),
    ("abs of 1024 bf16 (TOSA, 32 lanes)", AVT_TOSA.format(path="bf16_abs_v32/bf16_abs.mlir"), 89, "abs", tl.bf16, None),
    ("abs of 1024 f32 (TOSA)", AVT_TOSA.format(path="float_abs_v16/float_abs.mlir"), 150, "abs", tl.f32, None),
    ("abs of 1024 i16 (TOSA)", AVT_TOSA.format(path="i16_abs_v32/i16_abs.mlir"), 150, "abs", tl.i16, None),
    ("abs of 1024 i32 (TOSA)", AVT_TOSA.format(path="i32_abs_v16/i32_abs.mlir"), 278, "abs", tl.i32, None),
    ("abs of 1024 i8 (TOSA)", AVT_TOSA.format(path="i8_abs_v64/i8_abs.mlir"), 86, "abs", tl.i8, None),
    ("negate 1024 bf16 (TOSA)", AVT_TOSA.format(path="bf16_neg/bf16_neg.mlir"), 88, "neg", tl.bf16, None),
    ("negate 1024 f32 (TOSA)", AVT_TOSA.format(path="float_neg/float_neg.mlir"), 157, "neg", tl.f32, None),
    ("negate 1024 i16 (TOSA)", AVT_TOSA.format(path="i16_neg/i16_neg.mlir"), 86, "neg", tl.i16, None),
    ("negate 1024 i32 (TOSA)", AVT_TOSA.format(path="i32_neg/i32_neg.mlir"), 150, "neg", tl.i32, None),
    ("negate 1024 i8 (TOSA)", AVT_TOSA.format(path="i8_neg/i8_neg.mlir"), 54, "neg", tl.i8, None),
    ("convert 1024 bf16 -> f32 (TOSA)", AVT_TOSA.format(path="bf16_cast_float/bf16_cast_float.mlir"), 149, "convert",
     tl.bf16, tl.f32),
    ("convert 1024 i16 -> i32 (TOSA)", AVT_TOSA.format(path="i16_cast_i32/i16_cast_i32.mlir"), 154, "convert", tl.i16,
     tl.i32),
    ("convert 1024 i16 -> i8 (TOSA)", AVT_TOSA.format(path="i16_cast_i8/i16_cast_i8.mlir"), 93, "convert", tl.i16, tl.i8),
    ("convert 1024 i32 -> i16 (TOSA)", AVT_TOSA.format(path="i32_cast_i16/i32_cast_i16.mlir"), 151, "convert", tl.i32,
     tl.i16),
    ("convert 1024 i32 -> i8 (TOSA)", AVT_TOSA.format(path="i32_cast_i8/i32_cast_i8.mlir"), 151, "convert", tl.i32, tl.i8),
    ("convert 1024 i8 -> i16 (TOSA)", AVT_TOSA.format(path="i8_cast_i16/i8_cast_i16.mlir"), 91, "convert", tl.i8, tl.i16),
    ("convert 1024 i8 -> i32 (TOSA)", AVT_TOSA.format(path="i8_cast_i32/i8_cast_i32.mlir"), 154, "convert", tl.i8, tl.i32),
    ("sigmoid of 1024 bf16 (TOSA, 16 lanes)", AVT_TOSA.format(path="bf16_sigmoid_v16bf16/bf16_sigmoid.mlir"), 746,
     "sigmoid_quadratic", tl.bf16, None),
    ("sigmoid of 1024 bf16 (TOSA, 32 lanes)", AVT_TOSA.format(path="bf16_sigmoid_v32bf16/bf16_sigmoid.mlir"), 589,
     "sigmoid_quadratic", tl.bf16, None),
    ("tanh of 1024 bf16 (TOSA)", AVT_TOSA.format(path="bf16_tanh/bf16_tanh.mlir"), 807, "tanh", tl.bf16, None),
]


def avt_figures() -> list[Figure]:
    """[AVT]'s figures: one call of each test's kernel in the vendor ISS, against the cost model on xcve2802."""
    return [Figure(f"{what}, one call (AVT)", "xcve2802", source + " (chess, xca_udm_dbg --aiearch aie-ml)",
                   f"// Cycle count: {cycles}", cycles, "cycles",
                   lambda op=op, dt=dt, out=out: kc_cycles(lambda: _kc_elementwise(op, 1024, dt, out), "xcve2802"),
                   VALIDATION, level=KERNEL)
            for what, source, cycles, op, dt, out in AVT_ROWS]


# -- [KC] mlir-aie's nightly kernel checks: one traced call of each kernel on npu1 and npu2 hardware --------

#: [KC]: Xilinx/mlir-aie ``kernel-checks/npu1/runs/38030448219.json`` and ``kernel-checks/npu2/runs/38030448219.json``,
#: the same CI run (2026-10-10, mlir-aie 58484c8cfb, Peano 22.0.0+94b320c0, XRT 2.25.0), the newest stored; published
#: at https://xilinx.github.io/mlir-aie/kernel-checks/.
KC_NPU1 = ("https://github.com/Xilinx/mlir-aie/blob/main/kernel-checks/npu1/runs/38030448219.json (\"device\": "
           "\"Phoenix\", \"pmode\": \"turbo\")")
KC_NPU2 = ("https://github.com/Xilinx/mlir-aie/blob/main/kernel-checks/npu2/runs/38030448219.json (\"device\": "
           "\"Krackan\", \"pmode\": \"turbo\")")


def _kc_elementwise(op: str, n: int, dt, out=None):
    """A one-call elementwise kernel over ``n`` values of ``dt`` (``out``: the result's dtype)."""
    out = out or dt
    x_t, o_t = tl.Tile[(n,), dt], tl.Tile[(n,), out]
    unary = {
        "passthrough": lambda a: a,
        "relu": tl.relu,
        "clamp": lambda a: tl.minimum(tl.maximum(a, -1.0), 1.0),
        "exp": tl.exp,
        "leaky_relu": lambda a: tl.maximum(a, a * 0.01),
        "tanh": tl.tanh,
        "sigmoid": sigmoid,
        "silu": silu,
        "gelu": gelu,
        "sqrt": tl.sqrt,
        "rsqrt": tl.rsqrt,
        "abs": abs,
        "neg": lambda a: -a,
        "sigmoid_quadratic": _sigmoid_quadratic,
        "convert": lambda a: a.astype(out),
    }.get(op)
    if unary is not None:
        def k(a: x_t, c: o_t):
            c[...] = unary(a)
    elif op == "scale":
        def k(a: x_t, c: o_t, f: dt):  # IRON's scale: a vector times a scalar of its own dtype
            c[...] = a * f
    elif op in ("add", "mul"):
        def k(a: x_t, b: x_t, c: o_t):
            c[...] = a + b if op == "add" else a * b
    elif op == "axpy":
        # IRON's saxpy, "z = a * x + y" over bf16 tiles: its f32 scalar multiplies bf16 lanes (a bf16 MAC into
        # f32), so the scalar is taken in the tiles' dtype (the DSL refuses mixed operands)
        def k(x: x_t, y: x_t, z: o_t, a: dt):
            z[...] = a * x + y
    elif op == "swiglu":
        # mlir-aie aie_kernels/activation/swiglu.cc: three inputs, (x * w1) * silu(x * w2)
        def k(x: x_t, w1: x_t, w2: x_t, c: o_t):
            c[...] = (x * w1) * silu(x * w2)
    elif op == "zero":
        def k(c: o_t):
            c[...] = 0
    elif op in ("reduce_add", "reduce_max", "reduce_min"):
        reduce = {"reduce_add": tl.sum, "reduce_max": tl.max, "reduce_min": tl.min}[op]

        # the result in a 4-byte output tile (the dispatch rows' harness moves it, and DMAs move whole words)
        def k(a: x_t, c: tl.Tile[(max(1, 4 // out.bytes),), out]):
            c[...] = reduce(a)
    else:  # pragma: no cover - the rows below name only the ops above
        raise ValueError(op)
    k.__name__ = f"{op}_{n}"
    return tl.kernel(k)


def _kc_matmul(m: int, k: int, n: int, dt, out):
    """IRON's ``mm``: one call of C += A @ B, A m x k, B k x n of ``dt``, C m x n of ``out`` (as
    tl.library.matmul's accumulating kernel)."""

    @tl.kernel
    def mm(a: tl.Tile[(m, k), dt], b: tl.Tile[(k, n), dt], c: tl.Tile[(m, n), out]):
        c[...] += tl.matmul(a, b, acc=out)

    return mm


def _kc_matvec(m: int, k: int, dt, out, accumulate: bool):
    """IRON's ``mv``: one call of c (+)= A @ b, A m x k, b k long, c m long."""

    @tl.kernel
    def mv(a: tl.Tile[(m, k), dt], b: tl.Tile[(k, 1), dt], c: tl.Tile[(m, 1), out]):
        if accumulate:
            c[...] += tl.matmul(a, b, acc=out)
        else:
            c[...] = tl.matmul(a, b, acc=out)

    return mv


def kc_cycles(build: Callable[[], object], device: str) -> float:
    """[KC] cycles of one call of the kernel ``build`` makes, priced by the cost model on ``device``."""
    return cost.kernel_cycles(build(), tl.device(device))


def _kc_norm(kind: str, cols: int, dt):
    """mlir-aie's ``aie_kernels/norm`` kernels: one row of ``cols`` per call (tl.library's norm kernels)."""
    from tilelang.library.norm import layer_norm_kernel, rms_norm_kernel

    return (rms_norm_kernel if kind == "rms" else layer_norm_kernel)(1, cols, dt)


def _kc_softmax(n: int):
    from tilelang.library.softmax import softmax_kernel

    return softmax_kernel(1, n, tl.bf16)


#: [KC] rows: (what, row name in the JSON, kernel builder, npu1 cycles, npu2 cycles, role per device, why).
#: A cycle count of None: the row is not in that device's file. The role is VALIDATION unless named.
KC_ROWS = [
    ("copy 1024 i16", "passthrough/1024x16/int16", lambda: _kc_elementwise("passthrough", 1024, tl.i16), 72, 42),
    ("copy 2048 i32", "passthrough/2048x16/int32", lambda: _kc_elementwise("passthrough", 2048, tl.i32), 264, 138),
    ("copy 4096 i16", "passthrough/4096x16/int16", lambda: _kc_elementwise("passthrough", 4096, tl.i16), 264, 138),
    ("copy 4096 u8 (i8 here)", "passthrough/4096x16/uint8", lambda: _kc_elementwise("passthrough", 4096, tl.i8),
     136, 74),
    ("scale 1024 i16 by a scalar", "scale/1024x16/int16", lambda: _kc_elementwise("scale", 1024, tl.i16), 78, 46),
    ("scale 1024 i32 by a scalar", "scale/1024x16/int32", lambda: _kc_elementwise("scale", 1024, tl.i32), 275, 180),
    ("add 256 bf16", "add_sized/256x16/bfloat16/llama-decode", lambda: _kc_elementwise("add", 256, tl.bf16), 30, 29),
    ("add 1024 bf16", "add/1024x16/bfloat16", lambda: _kc_elementwise("add", 1024, tl.bf16), 78, 46),
    ("add 2048 bf16", "add_sized/2048x16/bfloat16/llama-prefill", lambda: _kc_elementwise("add", 2048, tl.bf16),
     142, 78),
    ("mul 256 bf16", "mul_sized/256x16/bfloat16/llama-decode-attn-scale",
     lambda: _kc_elementwise("mul", 256, tl.bf16), 30, 29),
    ("mul 1024 bf16", "mul/1024x16/bfloat16", lambda: _kc_elementwise("mul", 1024, tl.bf16), 78, 46),
    ("mul 2048 bf16", "mul_sized/2048x16/bfloat16/llama-prefill-attn-scale",
     lambda: _kc_elementwise("mul", 2048, tl.bf16), 142, 78),
    ("mul 4096 bf16", "mul_sized/4096x16/bfloat16/llama-prefill-ffn", lambda: _kc_elementwise("mul", 4096, tl.bf16),
     270, 142),
    ("relu 1024 bf16", "relu/1024x16/bfloat16", lambda: _kc_elementwise("relu", 1024, tl.bf16), 75, 42),
    ("clamp 1024 bf16", "clamp/1024x16/bfloat16", lambda: _kc_elementwise("clamp", 1024, tl.bf16), 76, 74),
    ("exp of 1024 bf16", "bf16_exp/1024x16/bfloat16", lambda: _kc_elementwise("exp", 1024, tl.bf16), 1007, 1853),
    ("leaky relu 1024 bf16", "leaky_relu/1024x16/bfloat16", lambda: _kc_elementwise("leaky_relu", 1024, tl.bf16),
     188, 86),
    ("axpy 1024 bf16, f32 scalar", "axpy/1024x16/bfloat16", lambda: _kc_elementwise("axpy", 1024, tl.bf16), 87, 55),
    ("convert 1024 f32 -> bf16", "convert_copy/1024x16/float32_bfloat16",
     lambda: _kc_elementwise("convert", 1024, tl.f32, tl.bf16), 144, 88),
    ("sum of 1024 i32", "reduce_add/1024x16/int32", lambda: _kc_elementwise("reduce_add", 1024, tl.i32), 147, 85),
    ("sum of 1024 bf16", "reduce_add/1024x16/bfloat16", lambda: _kc_elementwise("reduce_add", 1024, tl.bf16),
     194, 84),
    ("max of 1024 i32", "reduce_max/1024x16/int32", lambda: _kc_elementwise("reduce_max", 1024, tl.i32), 155, 85),
    ("max of 1024 bf16", "reduce_max/1024x16/bfloat16", lambda: _kc_elementwise("reduce_max", 1024, tl.bf16),
     90, 49),
    ("min of 1024 i32", "reduce_min/1024x16/int32", lambda: _kc_elementwise("reduce_min", 1024, tl.i32), 147, 85),
    ("min of 1024 bf16", "reduce_min/1024x16/bfloat16", lambda: _kc_elementwise("reduce_min", 1024, tl.bf16),
     80, 49),
    ("softmax of 1024 bf16", "softmax/1024x16/bfloat16", lambda: _kc_softmax(1024), 1845, 993),
    ("softmax of 2048 bf16", "softmax/2048x16/bfloat16/llama-prefill", lambda: _kc_softmax(2048), 3253, 1905),
    ("tanh of 1024 bf16", "tanh/1024x16/bfloat16", lambda: _kc_elementwise("tanh", 1024, tl.bf16), 709, 138),
    ("sigmoid of 1024 bf16", "sigmoid/1024x16/bfloat16", lambda: _kc_elementwise("sigmoid", 1024, tl.bf16), 952,
     118),
    ("silu of 1024 bf16", "silu/1024x16/bfloat16", lambda: _kc_elementwise("silu", 1024, tl.bf16), 1170, 186),
    ("silu of 4096 bf16", "silu_sized/4096x16/bfloat16/llama-prefill",
     lambda: _kc_elementwise("silu", 4096, tl.bf16), 4562, 666),
    ("gelu of 1024 bf16", "gelu/1024x16/bfloat16", lambda: _kc_elementwise("gelu", 1024, tl.bf16), 1751, 337),
    ("swiglu of 1024 bf16", "swiglu/1024x16/bfloat16", lambda: _kc_elementwise("swiglu", 1024, tl.bf16), 2054, 396),
    ("tanh of 1024 bf16, table build", "tanh/1024x16/bfloat16/use_lut=True/lut",
     lambda: _kc_elementwise("tanh", 1024, tl.bf16), None, 510),
    ("sigmoid of 1024 bf16, table build", "sigmoid/1024x16/bfloat16/use_lut=True/lut",
     lambda: _kc_elementwise("sigmoid", 1024, tl.bf16), None, 510),
    ("silu of 1024 bf16, table build", "silu/1024x16/bfloat16/use_lut=True/lut",
     lambda: _kc_elementwise("silu", 1024, tl.bf16), None, 576),
    ("gelu of 1024 bf16, table build", "gelu/1024x16/bfloat16/use_lut=True/lut",
     lambda: _kc_elementwise("gelu", 1024, tl.bf16), None, 1768),
    ("swiglu of 1024 bf16, table build", "swiglu/1024x16/bfloat16/use_lut=True/lut",
     lambda: _kc_elementwise("swiglu", 1024, tl.bf16), None, 842),
    ("rms_norm of a 1024 bf16 row", "rms_norm/1024x16/bfloat16/cols=1024", lambda: _kc_norm("rms", 1024, tl.bf16),
     429, 308),
    ("layer_norm of a 1024 bf16 row", "layer_norm/1024x16/bfloat16/cols=1024",
     lambda: _kc_norm("layer", 1024, tl.bf16), 508, 380),
    ("layer_norm of a 1024 f32 row", "layer_norm_f32/1024x16/float32/cols=1024",
     lambda: _kc_norm("layer", 1024, tl.f32), 1605, 1306),
    ("zero 4096 i32", "zero/4096x4/int32", lambda: _kc_elementwise("zero", 4096, tl.i32), 518, 262),
    ("zero 4096 bf16 (mm's C init)", "mm/64x64x64x16/bfloat16/emulate_bf16_mmul_with_bfp16=True/llama-prefill "
     "\"init[2] min\"", lambda: _kc_elementwise("zero", 4096, tl.bf16), None, 134),
    ("C += A @ B 64x32x64 i8 -> i32", "mm/64x32x64x16/int8_int32", lambda: _kc_matmul(64, 32, 64, tl.i8, tl.i32),
     1449, 593),
    ("C += A @ B 64x32x64 i16 -> i32", "mm/64x32x64x16/int16_int32",
     lambda: _kc_matmul(64, 32, 64, tl.i16, tl.i32), 3213, 1977),
    ("C += A @ B 64x32x64 bf16 -> f32", "mm/64x32x64x16/bfloat16_float32",
     lambda: _kc_matmul(64, 32, 64, tl.bf16, tl.f32), 1881, 5465),
    ("C += A @ B 64^3 bf16 (bfp16), bf16 C", "mm/64x64x64x16/bfloat16/emulate_bf16_mmul_with_bfp16=True/llama-prefill",
     lambda: _kc_matmul(64, 64, 64, tl.bf16, tl.bf16), None, 1469),
    ("c += A @ b 32x32 i16 -> i32", "mv/32x32x16/int16_int32", lambda: _kc_matvec(32, 32, tl.i16, tl.i32, True),
     95, 127),
    ("c = A @ b 32x256 bf16", "mv/32x256x16/bfloat16", lambda: _kc_matvec(32, 256, tl.bf16, tl.bf16, False),
     1264, 788),
    ("c = A @ b 4x64 bf16", "mv/4x64x16/bfloat16/vec_size=32", lambda: _kc_matvec(4, 64, tl.bf16, tl.bf16, False),
     117, 110),
    ("c = A @ b 4x2048 bf16", "mv/4x2048x16/bfloat16/vec_size=64",
     lambda: _kc_matvec(4, 2048, tl.bf16, tl.bf16, False), 696, 408),
]
#: [KC] rows not counted, by (row name, device), with the reason.
KC_SHOWN = {
    ("mm/64x32x64x16/bfloat16_float32", "npu2"): "plain bf16 MACs on AIE2P, a kernel mode the cost model does not "
                                                 "price (bf16 is the bfp16-emulated path)",
    ("bf16_exp/1024x16/bfloat16", "npu2"): "IRON's bf16_exp is its table-lookup exp (iron.kernels' _bf16_lut_factory) on "
                                           "npu2 too, where the model prices AIE2P's exp as the native exp2 that IRON's "
                                           "npu2 softmax uses",
}


for _stem in ("tanh", "sigmoid", "silu", "gelu", "swiglu"):
    KC_SHOWN[(f"{_stem}/1024x16/bfloat16/use_lut=True/lut", "npu2")] = (
        "IRON's table-lookup build (use_lut=True) on npu2, where the model prices AIE2P's tanh as the native "
        "vtanh of its default build (aie_kernels/common/activations.h)")


#: [KC] rows that set a constant, by (row name, device): the constant.
KC_CALIBRATION = {("passthrough/1024x16/int16", "npu1"): "CALL_OVERHEAD",
                  ("bf16_exp/1024x16/bfloat16", "npu1"): "AIE-ML's FloatUnit.exp.interval (cycles per vector of a "
                                                         "loop of table-lookup exps)"}


def kc_figures() -> list[Figure]:
    """[KC]'s figures, npu1's then npu2's."""
    out = []
    for device, source, col in (("npu1", KC_NPU1, 3), ("npu2", KC_NPU2, 4)):
        for row in KC_ROWS:
            published = row[col]
            if published is None:
                continue
            name, key, build = row[0], row[1], row[2]
            why = KC_SHOWN.get((key, device), "")
            sets = KC_CALIBRATION.get((key, device), "")
            quote = f"\"{key}\": \"cycles\": {{\"value\": {published}"
            if "init[2]" in key:
                quote = f"{key} {published}"
            out.append(Figure(f"{name}, one call (KC)", device, source, quote, published, "cycles",
                              lambda build=build, device=device: kc_cycles(build, device),
                              CALIBRATION if sets else SHOWN if why else VALIDATION, sets or why, KERNEL))
    return out


#: Phoenix's array clock, derived: AMD rates the Ryzen 7040 ("Phoenix") NPU at 10 TOPS and Hawk Point's at 16
#: ("its NPU performance has been increased to 16 TOPS, compared to 10 TOPS of the NPU on the 'Phoenix'
#: silicon", TechPowerUp, 2023-12-06); over its 20 AIE-ML tiles at 256 int8 MACs (512 ops) a cycle, 10 TOPS
#: is 0.98 GHz (16 TOPS: 1.56 GHz, the driver table's 1.6 GHz top level). Rounded to 1.0 GHz.
PHOENIX_CLOCK_HZ = 1.0e9

#: [KC]'s dispatch times: "npu_us" of the same kernels run 16 and 256 times in one dispatch, one core fed
#: and drained by shim DMAs (the harness of mlir-aie's ``python/iron/algorithms/kernel_design.py``: one
#: Worker, an input and an output ObjectFifo of one tile each, depth 2, shim to core without a memtile,
#: one fill and one drain of the whole tensor). (npu_us(256) - npu_us(16)) / 240 is the device time each
#: further call adds, the dispatch floor cancelling. Taken before any was simulated: every kernel with one
#: input and one output tile that the DSL writes and that has both a 16- and a 256-call row, whose
#: difference is known to 5% (the two rows' spreads, "+-", summed, over the difference).
#: (what, JSON row stem (its 16-call row is a KC_ROWS row, whose kernel it runs), device,
#:  (npu_us 16 calls, its "+-"), (npu_us 256 calls, its "+-")).
KCD_ROWS = [
    ("scale 1024 i16", "scale/1024x{}/int16", "npu1", (161.93, 1.1), (290.92, 4.4)),
    ("clamp 1024 bf16", "clamp/1024x{}/bfloat16", "npu1", (162.02, 1.8), (290.18, 3.8)),
    ("exp of 1024 bf16", "bf16_exp/1024x{}/bfloat16", "npu1", (179.43, 2.2), (450.93, 4.9)),
    ("convert 1024 f32 -> bf16", "convert_copy/1024x{}/float32_bfloat16", "npu1", (174.16, 1.6), (429.72, 7.0)),
    ("tanh of 1024 bf16", "tanh/1024x{}/bfloat16", "npu1", (167.58, 1.7), (367.77, 7.4)),
    ("silu of 1024 bf16", "silu/1024x{}/bfloat16", "npu1", (178.09, 1.5), (496.56, 9.0)),
    ("min of 1024 i32", "reduce_min/1024x{}/int32", "npu1", (172.81, 2.2), (429.34, 4.9)),
    ("min of 1024 bf16", "reduce_min/1024x{}/bfloat16", "npu1", (162.68, 1.9), (291.74, 4.5)),
    ("copy 2048 i32", "passthrough/2048x{}/int32", "npu2", (90.22, 0.8), (231.46, 0.8)),
    ("scale 1024 i16", "scale/1024x{}/int16", "npu2", (79.44, 0.6), (122.8, 0.6)),
    ("sum of 1024 i32", "reduce_add/1024x{}/int32", "npu2", (82.99, 1.0), (155.66, 0.6)),
    ("sum of 1024 bf16", "reduce_add/1024x{}/bfloat16", "npu2", (80.63, 0.9), (112.95, 0.5)),
    ("max of 1024 i32", "reduce_max/1024x{}/int32", "npu2", (79.86, 1.5), (152.78, 0.7)),
    ("max of 1024 bf16", "reduce_max/1024x{}/bfloat16", "npu2", (78.56, 0.7), (112.9, 0.5)),
    ("min of 1024 i32", "reduce_min/1024x{}/int32", "npu2", (79.95, 0.9), (152.86, 0.9)),
    ("min of 1024 bf16", "reduce_min/1024x{}/bfloat16", "npu2", (78.0, 1.0), (111.72, 0.5)),
    ("exp of 1024 bf16", "bf16_exp/1024x{}/bfloat16", "npu2", (92.5, 0.4), (357.11, 0.7)),
    ("softmax of 1024 bf16", "softmax/1024x{}/bfloat16", "npu2", (87.05, 2.0), (229.36, 1.0)),
    ("convert 1024 f32 -> bf16", "convert_copy/1024x{}/float32_bfloat16", "npu2", (80.07, 0.9), (157.03, 0.6)),
]


#: [KCD] rows not counted, by (16-call row name, device): the kernel the row runs is not the one the model prices.
KCD_SHOWN = {key: KC_SHOWN[key] for key in [("bf16_exp/1024x16/bfloat16", "npu2")]}

#: [KCD] rows that chose npu2's stream width (tilelang/devices/aie2p.py): DMA-bound, they move more than a
#: 32-bit stream can at npu2's clock.
KCD_NPU2_STREAM = ("copy 2048 i32", "convert 1024 f32 -> bf16")


def kcd_us_per_call(build: Callable[[], object], device: str, given: int | None = None) -> float:
    """[KC] microseconds each further call of ``build``'s kernel adds to the harness design (one core at (0, 2),
    shim to core fifos of the kernel's own tiles, depth 2, one fill and one drain): (T(256) - T(16)) / 240.
    With ``given``, each call takes those cycles (``kernel_cycles``) instead of the cost model's."""
    kern = build()
    x, y = kern.params[0].value_type, kern.params[1].value_type
    scalar = len(kern.params) == 3  # scale's factor (the harness sets it in a core buffer)
    # [KC]'s npu1 is a Phoenix ("device": "Phoenix"): its array clock from AMD's rating, not the npu1
    # model's 1.6 GHz (the top of the driver's table, which Hawk Point's 16 TOPS reach).
    clock = PHOENIX_CLOCK_HZ if device == "npu1" else tl.device(device).clock_hz

    def us(calls: int) -> float:
        @tl.design(device=device)
        def harness(A: tl.Tensor[(calls * x.numel,), x.dtype], C: tl.Tensor[(calls * y.numel,), y.dtype]):
            a_in = tl.fifo(x, depth=2, name="in0")
            c_out = tl.fifo(y, depth=2, name="out0")

            @tl.core(name="worker", tile=(0, 2))
            def worker():
                for _ in tl.range(calls):
                    a, c = a_in.acquire(), c_out.acquire()
                    if scalar:
                        kern(a, c, 3)
                    else:
                        kern(a, c)
                    a_in.release()
                    c_out.release()

            tl.dma(A, a_in)
            tl.dma(c_out, C)

        cycles = {kern.name: given} if given is not None else None
        return simulator.simulate(tl.plan(harness), mode="timing", kernel_cycles=cycles).cycles / clock * 1e6

    return (us(256) - us(16)) / 240


def kcd_given_rows() -> list[tuple[str, str, str, float, float, float]]:
    """The [KC] dispatch rows again with each kernel's own measured cycles (its [KC] "cycles" row, the same
    run and device) given to the simulation: the error left is the design model's (DMA, locks, fill and
    drain), not the kernel cost model's. (name, device, role, published us, model-kernel us, given-kernel us)."""
    kc = {row[1]: row for row in KC_ROWS}
    figs = {(f.name, f.device): f for f in kcd_figures()}
    out = []
    for name, stem, device, (t16, _), (t256, _) in KCD_ROWS:
        row = kc[stem.format(16)]
        measured = row[3] if device == "npu1" else row[4]
        fig = figs[(f"{name}, one core fed from DDR, us per call (KC)", device)]
        out.append((name, device, fig.role, (t256 - t16) / 240, fig.simulate(),
                    kcd_us_per_call(row[2], device, given=measured)))
    return out


def given_text(rows: list[tuple[str, str, str, float, float, float]]) -> str:
    """The table of :func:`kcd_given_rows` and its summary (validation rows only)."""
    out = ["the design model given each kernel's measured cycles ([KC] dispatch rows, us per call; "
           "kernel_cycles from the same run's \"cycles\" row):",
           f"  {'figure':<28} {'device':<6} {'published':>10} {'model':>8} {'error':>8} {'given':>8} {'error':>8}  set"]
    for name, device, role, pub, model, given in rows:
        out.append(f"  {name:<28} {device:<6} {pub:>10.4g} {model:>8.4g} {(model - pub) / pub:>+8.1%} "
                   f"{given:>8.4g} {(given - pub) / pub:>+8.1%}  {role}")
    valid = [(abs((m - p) / p), abs((g - p) / p)) for _, _, role, p, m, g in rows if role == VALIDATION]
    if valid:
        model_e, given_e = zip(*valid, strict=True)
        out.append(f"  validation rows ({len(valid)}): median |error| {np.median(model_e):.1%} with the model's "
                   f"kernels, {np.median(given_e):.1%} given the measured ones; worst {max(model_e):.1%} and "
                   f"{max(given_e):.1%}")
    return "\n".join(out)


def kcd_figures() -> list[Figure]:
    out = []
    builders = {row[1]: row[2] for row in KC_ROWS}
    for name, stem, device, (t16, e16), (t256, e256) in KCD_ROWS:
        build = builders[stem.format(16)]
        assert (e16 + e256) / (t256 - t16) <= 0.05, name  # the rule the rows were taken by
        source = KC_NPU1 if device == "npu1" else KC_NPU2
        quote = (f"\"{stem.format(16)}\": \"npu_us\": {{\"value\": {t16}, \"range\": \"\u00b1 {e16}; ...\"; "
                 f"\"{stem.format(256)}\": ... {t256} ... \u00b1 {e256}: ({t256} - {t16}) / 240")
        chose = device == "npu2" and name in KCD_NPU2_STREAM
        shown = KCD_SHOWN.get((stem.format(16), device), "")
        sets = KC_CALIBRATION.get((stem.format(16), device), "")
        role, why = ((CALIBRATION, "npu2's stream width (64 bits: these DMA-bound rows rule out 32)") if chose
                     else (CALIBRATION, f"{sets} (the same kernel's cycles set it)") if sets
                     else (SHOWN, shown) if shown else (VALIDATION, ""))
        out.append(Figure(f"{name}, one core fed from DDR, us per call (KC)", device, source, quote,
                          (t256 - t16) / 240, "us",
                          lambda b=build, d=device: kcd_us_per_call(b, d), role, why))
    return out


def figures() -> list[Figure]:
    """Every figure, calibration first."""
    return [
        Figure("64^3 bf16 kernel alone, % of peak", "npu1", I2735, "the external kernels reach at most ~80% "
               "utilization", 80, "%", lambda: 100 * bf16_kernel_efficiency(), CALIBRATION, "MATMUL_BLOCK_OVERHEAD", level=KERNEL),
        Figure("64^3 i16 kernel alone, % of peak", "npu1", I2735, "the external kernels reach at most ~80% "
               "utilization", 80, "%", lambda: 100 * i16_kernel_efficiency(), CALIBRATION,
               "MATMUL_BLOCK_OVERHEAD (the same figure)", level=KERNEL),
        Figure("whole_array 2048^3 i8->i32, 32^3 tiles", "npu2", RNL, "| 2048³ | i8→i32 | 32³ | 8.73 ms | 1.97 TOPS |",
               8730, "us", lambda: rnl_us(2048, tl.i8, tl.i32, (32, 32, 32)), CALIBRATION,
               "OUTSTANDING_BURSTS (the published row the model finds most bound by one shim channel)"),
        Figure("passthrough_kernel NPU time (floor of [RNL])", "npu2", RNL, "| `basic/passthrough_kernel` | DMA "
               "passthrough | ✓ 94 µs |", 94, "us", lambda: RNL_FLOOR_US, CALIBRATION,
               "RNL_FLOOR_US, added to [RNL]'s GEMM rows"),
        Figure("dispatch floor, IRON host path", "npu2", FLM, "Against a ~107 us floor", 107, "us",
               lambda: FLM_NPU2_FLOOR_US, CALIBRATION, "FLM_NPU2_FLOOR_US, added to [FLM]'s npu2 row"),
        Figure("B fill in 16-byte runs, GB/s per shim channel", "npu2", FLM, "the operator ran at ~10 GB/s "
               "instead of ~47", 0.875, "GB/s", strided_fill_gbps, VALIDATION),
        Figure("whole_array 512^3 i16->i32, 32^3 tiles", "npu2", RNL, "| 512³ | i16→i32 | 32³ | 203 µs | 1.32 TOPS |",
               203, "us", lambda: rnl_us(512, tl.i16, tl.i32, (32, 32, 32)), VALIDATION),
        Figure("whole_array 512^3 bf16 (bfp16), 32^3 tiles", "npu2", RNL, "| 512³ | bf16 via **bfp16** | 32³ | "
               "199 µs | 1.35 TFLOPS |", 199, "us", lambda: rnl_us(512, tl.bf16, tl.f32, (32, 32, 32)), VALIDATION),
        Figure("whole_array 2048^3 bf16 (bfp16), 32^3 tiles", "npu2", RNL, "| 2048³ | bf16 via **bfp16** | 32³ | "
               "9.71 ms | 1.77 TFLOPS |", 9710, "us", lambda: rnl_us(2048, tl.bf16, tl.f32, (32, 32, 32)),
               VALIDATION),
        Figure("whole_array 2048^3 bf16 (bfp16), 64x32x64 tiles", "npu2", RNL, "| 2048³ | bf16 via **bfp16** | "
               "64×32×64 | 3.70 ms | **4.64 TFLOPS** |", 3700, "us",
               lambda: rnl_us(2048, tl.bf16, tl.f32, (64, 32, 64)), VALIDATION),
        Figure("whole_array 2048^3 i8->i32, 64^3 tiles", "npu2", RNL, "| 2048³ | i8→i32 | 64³ | 2.59 ms | "
               "**6.65 TOPS** |", 2590, "us", lambda: rnl_us(2048, tl.i8, tl.i32, (64, 64, 64)), VALIDATION),
        Figure("vector_scalar_mul 1024 x i16 kernel", "npu1", PG4C, "Our final optimized cycle count for the "
               "kernel was 72 cycles", 72, "cycles", vector_scalar_mul_kernel, VALIDATION, level=KERNEL),
        Figure("vector_scalar_mul DMA per 2 KiB chunk", "npu1", PG4C, "what is the measured number of cycles per "
               "chunk? 512 cycles", 512, "cycles", vector_scalar_mul_dma, VALIDATION),
        Figure("whole-array GEMM 2048^3 i16, % of peak", "npu1", I2735, "~75% for i16 (tile size m=n=k=64)", 75,
               "%", lambda: 100 * gemm_efficiency(2048, tl.i16, 4, 4), VALIDATION),
        Figure("whole-array GEMM 2048^3 bf16, % of peak", "npu1", I2735, "~50% for bf16 (tile size m=n=k=64)", 50,
               "%", lambda: 100 * gemm_efficiency(2048, tl.bf16, 4, 4), VALIDATION),
        Figure("FIR 32 taps, 512 outputs, 1 kernel", "xcvc1902", EQUEUE, "EQueue: 2048 vs 2276 cycles single kernel", 2276,
               "cycles", fir_single, VALIDATION, level=KERNEL),
        Figure("FIR 32 taps, 512 outputs, 4 kernels", "xcvc1902", EQUEUE, "538 vs 539 cycles, 4 kernels", 539,
               "cycles", lambda: fir_chain()[0], VALIDATION),
        Figure("64^3 i8 matmul kernel, i32 out", "xcve2802", XD100, "32 bits output 1750 58%", 1750, "cycles",
               lambda: aieml_int8_kernel_cycles(tl.i32), VALIDATION, level=KERNEL),
        Figure("64^3 i8 matmul kernel, i16 out", "xcve2802", XD100, "16 bits output 1121 91%", 1121, "cycles",
               lambda: aieml_int8_kernel_cycles(tl.i16), VALIDATION, level=KERNEL),
        Figure("32^3 bf16 kernel on one core, GFLOP/s", "npu1", XDNA, "Benchmarking the kernel on an XDNA1 NPU "
               "(AMD Ryzen 7 8700G), we achieved 398 BF16 GFLOPS.", 398, "GFLOP/s", xdna1_bf16_kernel_gflops,
               VALIDATION, level=KERNEL),
        Figure("whole-array GEMM 2048^3 i8 -> i32, TOPS", "npu2", IRON172, "2048³ ≈7–8.2 TOPS", 8.2, "TOPS",
               npu2_int8_gemm_tops, VALIDATION),
        Figure("IRON GEMM 1024x2048x1024 bf16, latency", "npu1", FLM, "| 1024 / 2048 / 1024 | **2134 us** | 2738 us |",
               2738, "us", lambda: iron_gemm_us(1024, 2048, 1024, "npu1"), VALIDATION),
        Figure("IRON GEMM 1024x2560x2560 bf16, latency", "npu1", FLM, "| 1024 / 2560 / 2560 | **6364 us** | 8232 us |",
               8232, "us", lambda: iron_gemm_us(1024, 2560, 2560, "npu1"), VALIDATION),
        Figure("IRON GEMM 1024x1536x6144 bf16, latency", "npu2", FLM, "| `iron.operators.GEMM` (same emulated mode) | "
               "126 MB | 3353 us |", 3353, "us", lambda: FLM_NPU2_FLOOR_US + iron_gemm_us(1024, 1536, 6144, "npu2"),
               VALIDATION),
        Figure("whole-array 512x1024x4096 bf16, 64x32x128 tiles", "npu2", PR3442, "| current          | "
               "9.83e-3        | 0.920       |", 920, "us", lambda: iron_gemm_us(512, 1024, 4096, "npu2", 64, 32, 128),
               VALIDATION),
        Figure("64x64x32 bf16 (bfp16) kernel call, f32 out", "npu2", NPUE, "| 256×256×256 | **bfp16 `(8,8,8)`** | "
               "**954.7** | **137.3** | **53.6%** |", 954.7, "cycles", npu2_bf16_kernel_cycles, VALIDATION, level=KERNEL),
        Figure("whole_array M x 512 x 512 bf16 (bfp16), 64x64x32 tiles, us per row of A", "npu2", NPUE,
               "| 2048 | 477.2 µs | 2.25 | ... | 4096 | 821.7 µs | **2.61** (best 2.74) |: (821.7 - 477.2) / 2048",
               (821.7 - 477.2) / 2048, "us", npu2_marginal_us_per_row, VALIDATION),
        Figure("16x8 @ 8x8 i16 matmul kernel, one call", "xcvc1902", XUP, "the matmult_int16 kernel takes 72 cycles "
               "to complete", 72, "cycles", lambda: aie1_small_matmul_cycles(tl.i16), VALIDATION, level=KERNEL),
        Figure("softmax of 2048 bf16, one kernel call", "xcve2802", SMX_ML, "the softmax kernel takes up to 8,083 "
               "cycles to process 2048 classes", 8083, "cycles", lambda: softmax_kernel_cycles(tl.bf16, "xcve2802"),
               VALIDATION, level=KERNEL),
        Figure("softmax of 2048 f32, one kernel call", "xcvc1902", SMX_AIE, "the softmax kernel takes 25,306 cycles "
               "to process 2048 classes", 25306, "cycles", lambda: softmax_kernel_cycles(tl.f32, "xcvc1902"),
               VALIDATION, level=KERNEL),
        Figure("shim DMA in and out of one core, 1 KiB windows, bytes per cycle", "xcvc1902", GMIO,
               "Throughput (by AIE kernel cycles in=1,out=1) =6545.68M Bytes/s (at the tutorial's assumed 1 GHz)",
               6.54568, "B/cycle", gmio_bytes_per_cycle, VALIDATION),
        Figure("IRON GEMM 2048^3 bf16, throughput", "npu2", IRON55, "Throughput: 6.961237e+02 GFLOP/s", 696.1,
               "GFLOP/s", lambda: iron_gemm_gflops(2048, 2048, 2048, "npu2"), SHOWN,
               "a question about a low figure on a development branch; the same operator runs 5.8 TFLOPS in [FLM]"),
        Figure("whole_array 512^3 bf16->f32 (plain bf16), 32^3 tiles", "npu2", RNL, "| 512³ | bf16→f32 | 32³ | "
               "233 µs | 1.15 TFLOPS |", 233, "us", lambda: rnl_us(512, tl.bf16, tl.f32, (32, 32, 32)), SHOWN,
               "plain bf16 MACs, a kernel mode the cost model does not price (bf16 is the bfp16-emulated path)"),
        Figure("64^3 i16 matmul, ideal cycles", "npu1", PG4C, "2048 cycles = 262,144/ 64", 2048, "cycles",
               matmul_i16_mac_bound, SHOWN, "conflicting sources: 262,144 / 64 is 4096", level=KERNEL),
        Figure("single-core 512^3 bf16, % of peak", "npu1", I1198, "chess ukernel: 152'000 [us]: 43% of peak",
               43, "%", lambda: 100 * gemm_efficiency(512, tl.bf16, 1, 1), SHOWN,
               "IREE's design and kernel; every invocation pays a dispatch from another host stack"),
        Figure("16x8 @ 8x8 f32 matmul kernel, one call", "xcvc1902", XUP, "| float | 231 |", 231, "cycles",
               lambda: aie1_small_matmul_cycles(tl.f32), SHOWN, "the same lab's appendix table as its i16 row "
               "(one measurement of one source; the table's kernel version is not stated)", level=KERNEL),
        Figure("16x8 @ 8x8 i32 matmul kernel, one call", "xcvc1902", XUP, "| int32 | 168 |", 168, "cycles",
               lambda: aie1_small_matmul_cycles(tl.i32), SHOWN, "the same lab's appendix table as its i16 row "
               "(one measurement of one source; the table's kernel version is not stated)", level=KERNEL),
        Figure("16x8 @ 8x8 i8 matmul kernel, one call", "xcvc1902", XUP, "| int8 | 45 |", 45, "cycles",
               lambda: aie1_small_matmul_cycles(tl.i8), SHOWN, "the same lab's appendix table as its i16 row "
               "(one measurement of one source; the table's kernel version is not stated)", level=KERNEL),
    ] + kc_figures() + kcd_figures() + avt_figures()


@dataclass(frozen=True)
class Row:
    """A figure with its simulated value."""

    figure: Figure
    simulated: float

    @property
    def error(self) -> float:
        return (self.simulated - self.figure.published) / self.figure.published


def measure() -> list[Row]:
    return [Row(f, float(f.simulate())) for f in figures()]


def _summary(rows: list[Row], what: str) -> str:
    errors = sorted((abs(r.error), r.figure.name, r.figure.device) for r in rows)
    if not errors:
        return f"{what}: empty"
    median = float(np.median([e for e, _, _ in errors]))
    worst, name, device = errors[-1]
    devices = sorted({r.figure.device for r in rows})
    return (f"{what}: {len(errors)} figures on {', '.join(devices)}; median |error| {median:.1%}, "
            f"worst {worst:.1%} ({name}, {device})")


def headline(rows: list[Row]) -> str:
    """The validation set's median and worst absolute error, then the same for its kernel calls and its designs."""
    valid = [r for r in rows if r.figure.role == VALIDATION]
    kernels = [r for r in valid if r.figure.level == KERNEL]
    designs = [r for r in valid if r.figure.level != KERNEL]
    return "\n".join([_summary(valid, "validation set"), "  " + _summary(kernels, "of which kernel calls alone"),
                      "  " + _summary(designs, "of which whole designs")])


def _role(f: Figure) -> str:
    if f.role == CALIBRATION:
        return f"calibration: sets {f.why}"
    if f.role == SHOWN:
        return f"shown, not counted: {f.why}"
    return "validation"


def text(rows: list[Row]) -> str:
    out = [f"{'figure':<44} {'device':<9} {'published':>10} {'simulated':>10} {'error':>8}  {'unit':<6} set"]
    for role in (CALIBRATION, VALIDATION, SHOWN):
        for r in rows:
            f = r.figure
            if f.role == role:
                out.append(f"{f.name:<44} {f.device:<9} {f.published:>10g} {r.simulated:>10.5g} {r.error:>+8.1%}  "
                           f"{f.unit:<6} {_role(f)}")
    out += ["", headline(rows), "", "sources (figure as quoted):"]
    for r in rows:
        out.append(f"  {r.figure.name}: \"{r.figure.quote}\" {r.figure.source}")
    return "\n".join(out)


def markdown(rows: list[Row]) -> str:
    out = ["| set | figure | device | published | simulated | error | source (figure as quoted) |",
           "|---|---|---|---|---|---|---|"]
    for role in (CALIBRATION, VALIDATION, SHOWN):
        for r in rows:
            f = r.figure
            if f.role == role:
                quote = f.quote.replace("|", "\\|")
                out.append(f"| {_role(f)} | {f.name} | {f.device} | {f.published:g} {f.unit} | "
                           f"{r.simulated:.5g} {f.unit} | {r.error:+.1%} | {f.source} \"{quote}\" |")
    out += [""] + ["- " + line.strip() for line in headline(rows).splitlines()]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (for the docs)")
    args = parser.parse_args(argv)
    rows = measure()
    print(markdown(rows) if args.markdown else text(rows))
    print()
    given = given_text(kcd_given_rows())
    print(f"```text\n{given}\n```" if args.markdown else given)


if __name__ == "__main__":
    main()
