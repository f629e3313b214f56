"""Cited cost constants shared by the simulator's timing model and the planner's tiler.

The simulator (``simulator/cost.py``) charges kernel calls with these; the
tiler (``tilelang/plan/tiling_model.py``) estimates the same per-call costs
from them, so that the tiles it picks are the ones that simulate fastest. A
data module only: neither side imports the other.

Sources (short names used in the comments):
  [F]      docs/aie_facts.md, the section named.
  [PG4c]   mlir-aie programming guide, section 4c (vector_scalar_mul: 72 cycles
           measured, 32 ideal, for 1024 int16 elements on npu1).
  [I2735]  mlir-aie issue 2735 (whole-array GEMM; "kernels alone at most about 80%").
  [UG1079] AI Engine kernel guide (AIE1; "Floating-Point Operations" for the float unit).
  [UG1603] AI Engine-ML kernel and graph programming guide.
  [AM020]  AIE-ML architecture manual.
  [AM009]  AI Engine (AIE1) architecture manual.
  [UG1529] AI Engine API user guide.
  [MA]     Xilinx/mlir-aie sources, the file named (instructions counted per vector).
  [DE]     Daniel Estevez, notes on the npu2 of a Ryzen AI 7 350 (https://destevez.net/2026/05/
           getting-peak-tops-on-a-ryzen-ai-7-350-npu/ and the author's Mastodon thread on its
           data-memory banks).
  [XD100]  Vitis Tutorials: AI Engine Development, the AIE-ML softmax tutorial's
           "AI Engine Implementation" section (architecture statements only; its
           cycle counts are validation figures, benchmarks/accuracy.py).
  [LA]     Xilinx/llvm-aie (Peano, the compiler mlir-aie builds kernels with), the file named under
           llvm/lib/Target/AIE/: instruction formats (which VLIW slot an instruction issues in:
           lda, ldb, st, mv, vec, alu) and combiner rules.
Constants marked "fitted" are set from the figure named and are therefore not
validated by it (docs/simulator.md, accuracy table, says which figures test).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class CorePorts:
    """A core's paths to its data memory, in bytes per cycle.

    Attributes:
        load_bytes: what the two load units move together.
        store_bytes: what the store unit moves.
        bank_bytes: what one data-memory bank (as the core's loads and stores see it) serves.
    """

    load_bytes: int
    store_bytes: int
    bank_bytes: int


#: AIE1 and AIE-ML: [F] "Loads/stores: 2 x 256-bit loads and 1 x 256-bit store per cycle
#: (AIE-ML)"; [UG1079] the same for AIE1. A bank: one 256-bit access per cycle ([AM020] "Memory
#: Arbitration": one request per bank per cycle; the programmer-view bank is two interleaved
#: 128-bit banks, [AM020] "AIE-ML Tile Architecture").
AIE2_PORTS = CorePorts(load_bytes=2 * 256 // 8, store_bytes=256 // 8, bank_bytes=256 // 8)
#: AIE2P (npu2): 512-bit memory accesses. [DE] (npu2, Ryzen AI 7 350): "the data memory of compute
#: tiles is organized as 8x 256-bit wide 8 KiB memory banks ... every two banks are interleaved
#: to form a 512-bit wide 16 KiB virtual bank. The two load units of the processor can perform
#: simultaneous 512-bit loads only if these target different 16 KiB banks"; [MA] the AIEVec pass
#: aievec-split-load-ups-chains: "On AIE2P, splits a 1024-bit vector access into two 512-bit
#: accesses", loads and stores alike, so a store is 512 bits too.
AIE2P_PORTS = CorePorts(load_bytes=2 * 512 // 8, store_bytes=512 // 8, bank_bytes=512 // 8)
#: The core memory ports of each architecture (``Device.arch.name``).
CORE_PORTS: dict[str, CorePorts] = {"aie1": AIE2_PORTS, "aie2": AIE2_PORTS, "aie2p": AIE2P_PORTS}


def core_ports(arch: str) -> CorePorts:
    """The core memory ports of architecture ``arch`` (``Device.arch.name``)."""
    return CORE_PORTS[arch]

#: Fixed cycles of one kernel call beyond its loop nests (each nest pays its own pipeline fill:
#: ``PipelineLatency``). Fitted: [KC] npu1's copy of 1024 int16 takes 72 cycles between its trace
#: events; its one loop issues 64 loads and 64 stores on their own units (2048 B / 32 B) and its last
#: iteration ends a load's and a store's latency after it issues (7 + 1, ``AIE2_LATENCY``):
#: 72 - (64 + 8 - 1) = 1, the event after the last store. (Until the fill was priced per nest this was 8,
#: from [PG4c]'s 72 cycles of a Chess-compiled vector_scalar_mul, now a validation row.)
CALL_OVERHEAD = 1
#: Unoverlapped cycles per output register block of a matmul (one inner-k loop's
#: pipeline fill and drain, accumulator moves). Fitted: [I2735] kernels alone reach
#: at most about 80% of peak, over its i16 and bf16 profiles; a 64^3 bf16 tile has 64
#: blocks of 8x8 over 2048 MAC cycles: 2048 / (2048 + 8 + 64 * 8) = 0.80 without loads.
#: With the operand re-reads the bf16 tile is load-bound and the model gives 72.5%,
#: the MAC-bound i16 tile 88.7% (benchmarks/accuracy.py): one constant cannot give both
#: 80%, and 8 leaves them on either side of it.
MATMUL_BLOCK_OVERHEAD = 8
#: Output register blocking of a matmul kernel: 2 x 2 intrinsic tiles, as the
#: mlir-aie matmul kernels (``mm.cc``) unroll; it sets how often A and B are re-read.
#: Its four accumulators also hide the two-cycle latency of a floating-point MAC
#: ([UG1603] "Floating-Point Operations"; [AM020] "Floating-Point Vector Unit": several
#: accumulator registers allow back-to-back MACs), so bf16 MACs issue every cycle.
MATMUL_REG_BLOCK = 2
#: Bytes a tile DMA channel moves per data-memory access. Derived: [AM020] gives the
#: memory tile DMA 128-bit memory interfaces and calls it "similar to the AI Engine
#: tile DMA"; no figure for the compute-tile DMA itself was found.
DMA_ACCESS_BYTES = 16
#: Cycles a DMA channel spends starting a buffer descriptor (lock acquire, BD fetch)
#: before its first word moves. Estimate, unconfirmed: no public figure found; a lock
#: request and a BD read each take a few cycles.
BD_SETUP_CYCLES = 4

#: Kernel intrinsic shapes (m, k, n) per architecture and input dtype: mlir-aie
#: programming_examples/basic/matrix_multiplication (``microkernel_mac_dim_map``):
#: npu bf16 (4,8,4), i8 (4,8,8), i16 (4,4,4); npu2 bf16 (4,8,8) native, i8 (8,8,8),
#: i16 (4,4,8). AIE1 entries and the i32/f32 fallbacks are assumptions (unconfirmed).
MICROKERNEL: dict[str, dict[str, tuple[int, int, int]]] = {
    "aie2": {"bf16": (4, 8, 4), "i8": (4, 8, 8), "i16": (4, 4, 4)},
    "aie2p": {"bf16": (4, 8, 8), "i8": (8, 8, 8), "i16": (4, 4, 8)},
    "aie1": {"i8": (4, 16, 8), "i16": (4, 4, 4), "f32": (4, 8, 4)},
}
#: The intrinsic shape assumed for a dtype the table lacks (npu bf16's).
DEFAULT_SHAPE = (4, 8, 4)


def intrinsic_shape(macs: float) -> tuple[int, int, int]:
    """(m0, k0, n0) of the matmul intrinsic doing ``macs`` MACs per cycle.

    AIE2's shapes ([F] compute rates are "derived from the matmul intrinsic
    shapes"): int8 4x8x8 = 256, int16 4x4x4 = 64, bf16 4x8x4 = 128. Other rates
    keep m0 = n0 = 4 and scale k0 (at least 1).

    Args:
        macs: MACs per cycle of the core for the operand dtype.

    Returns:
        The intrinsic's (m0, k0, n0).
    """
    known = {256: (4, 8, 8), 64: (4, 4, 4), 128: (4, 8, 4), 512: (8, 8, 8)}
    if int(macs) in known and float(int(macs)) == macs:
        return known[int(macs)]
    return 4, max(1, round(macs / 16)), 4


@dataclass(frozen=True)
class Elementary:
    """How one float function (exp, sqrt, 1 / sqrt, tanh) is computed per group of ``FloatUnit.lanes`` values.

    Attributes:
        vector_ops: vector-slot instructions.
        mul_ops: multiplier-slot instructions.
        load_cycles: load-unit cycles (table lookups).
        latency: cycles from its first instruction until its result can be used (the chain of its
            dependent instructions).
        interval: cycles a loop issuing one per group takes per group, where a measured kernel shows it
            to be longer than the counts above allow (0: the counts alone bound it).
        scalar: scalar-unit cycles per value (a function the vector units do not compute: one value at a
            time on the scalar unit, moved there and back).
    """

    vector_ops: int
    mul_ops: int
    load_cycles: float
    latency: int
    interval: float = 0.0
    scalar: int = 0


@dataclass(frozen=True)
class FloatUnit:
    """What the kernel cost model knows of one architecture's floating-point vector work.

    Counts are instructions per group of ``lanes`` elements; each issues in one
    cycle of its VLIW slot (the vector slot, or the multiplier's, or both on one
    slot where ``shared_issue``).

    Attributes:
        lanes: fp32 lanes of one float add, subtract or multiply (bf16 arithmetic
            runs in fp32 accumulators where the architecture has them).
        latency: cycles from a float vector op's issue until a dependent op can use
            its result; the steps of a sum's reduction tree each wait this long.
        compare_latency: the same for a float max or min (a max tree's steps).
        shared_issue: float multiplies and other vector ops share one issue slot.
        bf16_convert_ops: ops to move one vector of bf16 into, or out of, the fp32
            accumulators (0 where bf16 is not computed in accumulators).
        add_on_mac: float adds and subtracts (on accumulators) issue in the multiplier's slot,
            not the vector ALU's.
        convert_in_load: a bf16 operand read from memory converts as it is loaded, on one load
            unit only (so one operand of an op, the others converting on the vector ALU's slot);
            that unit is also the only one that loads f32 straight into the accumulators.
        convert_out_store: a conversion out of the accumulators is a store-slot instruction, and
            free for a result that is stored (the store converts).
        f32_mul_ops: multiplier ops per f32 multiply (more than 1 where emulated).
        f32_split_mul_ops, f32_split_vector_ops: where f32 multiplies are emulated, the multiplier and vector
            ops that split one vector operand into the bf16 parts the products take (a scalar operand is
            split once, outside the loop).
        inv_issue: scalar-unit cycles one float reciprocal occupies.
        inv_latency: cycles until a reciprocal's result can be used.
        exp, sqrt, rsqrt, tanh: how each float function is computed (:class:`Elementary`).
    """

    lanes: int
    latency: int
    compare_latency: int
    shared_issue: bool
    bf16_convert_ops: int
    add_on_mac: bool
    convert_in_load: bool
    convert_out_store: bool
    f32_mul_ops: int
    inv_issue: int
    inv_latency: int
    exp: Elementary
    sqrt: Elementary
    rsqrt: Elementary
    tanh: Elementary
    f32_split_mul_ops: int = 0
    f32_split_vector_ops: int = 0

    def function(self, name: str) -> Elementary:
        """The :class:`Elementary` of the float function ``name`` (an op kind's value)."""
        return getattr(self, name)


#: Cycles from a vector ALU add or max/min's issue (integer, and bf16 max/min on AIE2 and AIE2P) until a dependent op that does not bypass can
#: use it (a reduction tree's shift): [LA] aie2/AIE2Schedule.td, II_VADD "[2,1,1]" and II_VMAX_LT
#: (result written in E2, operands read in E1); AIE2P's II_VADD_32 and II_VMAX_LT_32 are the same
#: (aie2p/AIE2PGenSchedule.td). AIE1 is taken as the same (estimate, unconfirmed).
VECTOR_ALU_LATENCY = 2

#: Cycles of the shift (lane move) of one reduction-tree step, before its add or max.
#: Estimate, unconfirmed: no latency figure for the shuffle was found; one cycle taken.
SHUFFLE_LATENCY = 1


@dataclass(frozen=True)
class PipelineLatency:
    """Cycles from an instruction's issue until its result can be used, for the ops of a kernel's loop.

    A software-pipelined loop of ``trips`` iterations issues its last iteration ``(trips - 1) x II``
    cycles after its first, and that iteration ends when its chain of dependent instructions has
    (load, arithmetic, store): each loop nest of a kernel pays that chain's latency once, less the one
    cycle its last issue slot already counts (``kernel_cost.kernel_slots``). Float ops use
    ``FloatUnit.latency``, vector ALU ops ``VECTOR_ALU_LATENCY``.

    Attributes:
        load: a vector load's result (bf16 converted as it loads too).
        store: a store's issue (the call's end follows it).
        int_multiply: an integer multiply into the accumulators.
        accumulate: the next integer multiply-accumulate into the same accumulator (the accumulator is
            read late: its chain is shorter than a multiply's latency).
        float_accumulate: the same for a float multiply-accumulate.
        shift_round: an accumulator shifted and rounded back into a vector register for a vector op
            (a store does it as it stores, at no extra latency).
        convert: a float conversion (f32 to bf16 out of the accumulators, or an integer pack).
    """

    load: int
    store: int
    int_multiply: int
    accumulate: int
    float_accumulate: int
    shift_round: int
    convert: int


#: AIE-ML: [LA] aie2/AIE2Schedule.td itineraries, the result's cycle in each: II_VLDA_W, II_VLDA_CONV
#: and II_VLDB "[7,...]"; a store's issue cycle (II_VST_W "[1,1,1]"); II_VMUL "[5,1,1,1]"; II_VMAC
#: "[5,3,...]", result in cycle 5 and the accumulator read in cycle 3, so a dependent accumulate issues
#: 5 - 3 + 1 = 3 cycles after; II_VMACf "[6,3,1,1,1,...]" (commit 70ac20b, lines 974-975): a float one
#: 6 - 3 + 1 = 4 after; II_VSRS
#: "[4,...]"; II_VCONV "[2,...]".
AIE2_LATENCY = PipelineLatency(load=7, store=1, int_multiply=5, accumulate=3, float_accumulate=4, shift_round=4,
                               convert=2)
#: AIE2P: [LA] aie2p/AIE2PGenSchedule.td (commit f1061f60), the same itinerary format with a bypass list:
#: II_VLDA_dmw_lda_w_idx, II_VLDA_CONV_fp32_bf16_dmw_lda_ups_bf_idx and II_VLDB_dmw_ldb_idx
#: "[/*dst*/7, ...]"; II_VST_dmw_sts_w_idx "[/*src*/1, ...]"; II_VMUL_vmul_cm_core_X_X "[/*dst*/6, ...]";
#: II_VMAC_vmul_cm_core_X_X "[/*dst*/6, /*acc1*/4, ...]" with VEC_Bypass on both, and the scheduler's
#: latency DefCycle - bypass + 1 - UseCycle (AIEBaseInstrInfo::getSignedOperandLatency, one cycle per
#: shared bypass): 6 - 1 + 1 - 4 = 2; II_VMAC_f_vmac_bf_vmul_bf_core_X_X "[/*dst*/6, /*acc1*/4, ...]",
#: its result NoBypass: 6 - 4 + 1 = 3; II_VSRS_2x_mv_x_srs_cm_srsSign0 "[/*dst*/4, ...]";
#: II_VCONV_bf16_fp32_mv_x_srs_bf "[/*dst*/2, ...]".
AIE2P_LATENCY = PipelineLatency(load=7, store=1, int_multiply=6, accumulate=2, float_accumulate=3, shift_round=4,
                                convert=2)
#: AIE1: AIE-ML's (estimate, unconfirmed: AIE1 has no itinerary table in llvm-aie) except a dependent float
#: multiply-accumulate: Vitis Tutorials: AI Engine Development (XD100), the AIE IIR filter tutorial's part 2b,
#: "Preliminaries" (https://docs.amd.com/r/en-US/Vitis-Tutorials-AI-Engine-Development/Preliminaries): "a NOP
#: (no operation) between the VFPMAC ... mnemonics. This NOP is unavoidable as a floating-point accumulation
#: requires two cycles".
AIE1_LATENCY = replace(AIE2_LATENCY, float_accumulate=2)
#: Per architecture.
PIPELINE_LATENCY: dict[str, PipelineLatency] = {"aie1": AIE1_LATENCY, "aie2": AIE2_LATENCY, "aie2p": AIE2P_LATENCY}

#: AIE1 (xcvc1902).
AIE1_FLOAT = FloatUnit(
    # [AM009] "Floating-Point Vector Unit": "eight lanes of single-precision floating-point
    # multiplication and accumulation"; [UG1079] the same.
    lanes=8,
    # Derived: [AM009] the float pipeline after the permute stage is FPMPY ("a three-cycle
    # latency and a one-cycle throughput"), FPSGN (one stage) and a "two-stage accumulator
    # unit called FPACC": 3 + 1 + 2 = 6 cycles before a result can be read back.
    latency=6,
    # Estimate, unconfirmed: AIE1's float max runs in the same float pipeline ([AM009] fpmax).
    compare_latency=6,
    # [AM009] "only one vector instruction per cycle can be done in fixed-point or floating-point".
    shared_issue=True,
    bf16_convert_ops=0,  # no bf16 datapath on AIE1 (aie1.py AIE1_MACS)
    add_on_mac=False,  # one issue slot for both (shared_issue)
    convert_in_load=False,
    convert_out_store=False,
    f32_mul_ops=1,  # native fp32 multiplier ([AM009] FPMPY)
    # [UG1079] "There are no divide scalar or vector intrinsic functions ... vector division can be
    # implemented via an inverse and multiply"; [AM009] "Scalar Unit": non-linear functions "take one
    # or four cycles to produce scalar results. The throughput ... is one cycle".
    inv_issue=1,
    inv_latency=4,
    exp=Elementary(
        # No exp instruction ([UG1079] "Floating-Point Operations": scalar hardware is sqrt, invsqrt,
        # inverse, abs, min, max) and no lookup-table hardware ([UG1529] "Lookup Tables": "only available
        # from AIE-ML"), so exp is a range reduction plus polynomial. Counted on [MA]
        # aie_kernels/aie2p/exp2_poly.h, its generic (Horner) branch, and its caller
        # aie_kernels/aie2p/bf16_exp.cc: x * log2(e) (1 mul); round by adding and subtracting 1.5 * 2^23,
        # compare, two selects, three subtracts for k and f (9 vector ops); a degree-5 Horner
        # polynomial, each step one fpmac on AIE1 (5 mul); 2^k into the exponent field, a shift and an
        # add (2 vector ops): 11 vector + 6 multiplier ops per vector.
        vector_ops=11,
        mul_ops=6,
        load_cycles=0.0,
        # Estimate, unconfirmed: the polynomial's six multiplies in a chain, each the float pipeline's 6.
        latency=36,
    ),
    # [UG1079] "Floating-Point Operations": "The scalar unit floating-point hardware support includes square
    # root, inverse square root, inverse ..."; [AM009] "Scalar Unit": non-linear functions "take one or four
    # cycles to produce scalar results. The throughput ... is one cycle"; AIE-API's aie1 elementary.hpp
    # computes a vector sqrt or invsqrt value by value with the scalar calls (_sqrtf, invsqrt).
    sqrt=Elementary(vector_ops=0, mul_ops=0, load_cycles=0.0, latency=4, scalar=1),
    rsqrt=Elementary(vector_ops=0, mul_ops=0, load_cycles=0.0, latency=4, scalar=1),
    # Estimate: no tanh hardware nor lookup tables ([UG1079]; [UG1529] "Lookup Tables": from AIE-ML on), so
    # tanh(x) = 1 - 2 / (exp(2x) + 1) on the exp above: its 11 vector and 6 multiply ops, 2x and the final
    # product (2 multiplies), the add and the subtract (2 vector ops), and a scalar inverse per value;
    # latency the chain: multiply 6, exp 36, add 6, inverse 4, multiply 6, subtract 6.
    tanh=Elementary(vector_ops=13, mul_ops=8, load_cycles=0.0, latency=64, scalar=1),
)

#: AIE-ML (AIE2: xcve2802, npu1).
AIE2_FLOAT = FloatUnit(
    # [AM020] "Floating-Point Vector Unit": the accumulator unit adds FP32 accumulator registers,
    # "2 x 16 accumulator lanes"; AIE-API's aie2 float multiplies (aie_api
    # detail/aie2/sliding_mul_acc32_fp.hpp) use "lanes_per_mul = 16" (mul_elem_16_2 for bf16); [MA] aie_kernels/aie2/softmax.cc works 16 lanes at a
    # time in accum<accfloat, 16>; [XD100] "The floating-point multiply unit is designed to process
    # vectors with 16 lanes".
    lanes=16,
    # [XD100] "the floating-point vector processor has a pipeline depth of six". (UG1603's
    # two-cycle float MAC latency is the accumulator feedback of back-to-back MACs; a result
    # that is shifted and re-read, as in a reduction tree, goes through the whole pipeline.)
    latency=6,
    # [LA] aie2/AIE2GenFixupInstrInfo.td: VMAX_LT_BF16 is an mv-slot vector ALU instruction
    # (AIE2_vec_bf_min_max_inst_mv) with the integer max's itinerary (VECTOR_ALU_LATENCY).
    compare_latency=VECTOR_ALU_LATENCY,
    # [AM020] "Floating-Point Vector Unit": the multipliers, and "the separate fixed-point vector
    # add/compare unit" that also does bf16 compare, min and max.
    shared_issue=False,
    # [UG1603] "Floating-Point Operations": bf16 vectors and fp32 accumulators convert with
    # from_vector / to_vector; [MA] aie_kernels/aie2/softmax.cc: each aie::mul result is
    # out_vals.to_vector<bfloat16>(); [AM020] the float adder works on accumulator registers.
    bf16_convert_ops=1,
    # [LA] aie2/AIE2GenInstrFormats.td: the accumulator adds (AIE2_vacc_bf_inst_vec, VADD.f) are
    # vec-slot instructions, the slot of VMUL/VMAC; the integer vector adds and max/min (VADD_32,
    # VMAX_LT_BF16: AIE2_vec_add_inst_mv, AIE2_vec_bf_min_max_inst_mv) issue in the mv slot.
    add_on_mac=True,
    # [LA] aie2/AIE2GenFixupInstrInfo.td "VLD.CONV - Vector Loads with bfloat16 to float Conversion":
    # VLDA_CONV_FP32_BF16 (AIE2_dmw_lda_ups_bf_inst_lda, load unit A; no VLDB variant), 16 lanes;
    # AIE2CombinedOpcodes.cpp folds aie2_v16bf16_to_v16accfloat of a load into it. A standalone
    # VCONV_FP32_BF16 is an mv-slot instruction (AIE2_mv_ups_bf_inst_mv). Loads into accumulator
    # registers are unit A's alone: VLDA_dmw_lda_am writes mAMm, every VLDB form a vector register.
    convert_in_load=True,
    # [LA] VST_CONV_BF16_FP32 (AIE2_dmw_sts_srs_bf_inst_st), folded from aie2_v16accfloat_to_v16bf16
    # of a stored value (AIE2CombinedOpcodes.cpp, "Unexpected VST.CONV size": 256 bits, 16 lanes);
    # a standalone VCONV_BF16_FP32 is a store-slot instruction too (AIE2_mv_w_srs_bf_inst_st).
    convert_out_store=True,
    # [MA] lib/Conversion/AIEVecToLLVM/AIEVecToLLVM.cpp, convertToEmulatedFP32MulElem (AIE2): each f32
    # operand is split into three bf16 parts, and in the "Fast and Accurate option" ("This is the default
    # option to the aiecompiler"; [UG1603] "Floating-Point Operations": --aie.float-accuracy "fast: (default)")
    # "float a*b would require 6 mac operations" (one mul_elem_16_2 and five mac_elem_16_2 per 16 lanes;
    # the three products of the parts' low bits are dropped). The split of a vector operand: three
    # to_v16bfloat16 conversions and three inserts (6 vector ops) and two msc_elem_16_2 (2 multiplier ops).
    f32_mul_ops=6,
    # No float hardware in the scalar unit ([AM020] "Functional Overview": "No floating point
    # unit: Supported through emulation"; AM027 adds a hardware inverse only for AIE-ML v2).
    # [MA] aie_runtime_lib/AIE2/lut_based_ops.h getInvBf16, the bf16 reciprocal mlir-aie uses:
    # an add, two mask-and-shift pairs, a compare, a subtract, an add, a shift, a table load and
    # an add: 10 scalar instructions, issued one a cycle ([AM020] "Arithmetic Logic Unit": "the
    # issue rate is one instruction per cycle"), each depending on the one before.
    inv_issue=10,
    inv_latency=10,
    exp=Elementary(
        # [MA] aie_runtime_lib/AIE2/lut_based_ops.h getExpBf16, used by aie_kernels/aie2/softmax.cc,
        # per 16 lanes: bfloat16_to_int, filter_even, and the final to_v16bfloat16 (3 vector ops),
        # one aie::mul of the two looked-up factors (1 multiplier op), and two parallel_lookup
        # fetches of 16 values from aie::lut<4, ...> tables: [UG1603] "Lookup Tables and Linear
        # Approximation": the layout allows "four parallel accesses", so 16 values take 4 cycles of
        # the load units per table, 8 for the two.
        vector_ops=3,
        mul_ops=1,
        load_cycles=8.0,
        # [LA] aie2/AIE2Schedule.td, getExpBf16's chain: the bf16 to int conversion (II_VFLOORs32bf16 "[2,...]"),
        # filter_even (II_VSHUFFLE "[2,...]"), the table gathers (II_VLDB_4X "[7,1]"), the product of the two
        # looked-up values (II_VMULf "[6,...]"): 2 + 2 + 7 + 6.
        latency=17,
        # Fitted: [KC] npu1's "bf16_exp/1024x16/bfloat16", IRON's loop of getExpBf16 over 1024 values
        # (mlir-aie aie_kernels/activation/bf16_exp_aie2.h), takes 1007 cycles: 1007 less CALL_OVERHEAD and its
        # loop's fill (24: load 7 + its latency 17 + store 1, less 1), over its 64 vectors, 15.3 cycles each
        # (that row is calibration since). The counts above give 8: the eight table gathers per vector, each
        # holding both load units for a cycle ([LA] aie2/AIE2Schedule.td: II_VLDB_4X books the vector read
        # port and LOAD_UNIT_A; VLDB.4x is slot B's). What takes the other seven was not found: the kernel's
        # own comment says "the pipeliner orders the table reads after the previous store", which puts the
        # gathers, the product and the store of one vector on a loop-carried chain.
        interval=(1007 - 1 - 24) / 64,
    ),
    # [MA] aie_runtime_lib/AIE2/vec_math.h getRsqrtBf16, the AIE-ML lowering of math.rsqrt (mlir-aie
    # test/unit_tests/aievec_tests/aie2/bf16_rsqrt_*): Quake's estimate (a shift and an integer subtract) and
    # one Newton step: x * 0.5, two products with y, 1.5 - x2 (an accumulator add: add_on_mac) and the last
    # product: 5 multiplier ops; 2 vector ALU ops and 7 conversions (5 to bf16, 2 back): 9 vector ops.
    # Latency, its chain: multiply 6, convert 2, multiply 6, convert 2, multiply 6, convert 2, convert 2,
    # add 6, convert 2, multiply 6, convert 2 ([LA] aie2/AIE2Schedule.td II_VMULf "[6,...]", II_VCONV "[2,...]").
    rsqrt=Elementary(vector_ops=9, mul_ops=5, load_cycles=0.0, latency=42),
    # [MA] vec_math.h getSqrtBf16: x * getRsqrtBf16(x), one multiply and one conversion more.
    sqrt=Elementary(vector_ops=10, mul_ops=6, load_cycles=0.0, latency=50),
    # [MA] aie_runtime_lib/AIE2/lut_based_ops.h, tanh_bf16_v16 (aie_kernels/activation/tanh.cc on AIE2; AIE2 has
    # no tanh instruction, aie_kernels/aie_arch.h AIE_HAS_NATIVE_TANH 0): 32 linear segments over [-4, 4), per
    # 16 lanes a clamp (min, max), the float to index conversion, two shuffles of the coefficients, one
    # insert and the result's conversion (7 vector ops), one multiply-accumulate (offset + slope * x), and
    # one load_lut_2x_float gather of 16 values: four accesses a cycle ([UG1603] "Lookup Tables"), 4 cycles.
    # Latency, its chain: min 2, max 2, the conversion 2 (II_VFLOORs32bf16), the gather 7 (II_VLDB_4X), a
    # shuffle 2, the multiply-accumulate 6, the conversion 2.
    tanh=Elementary(vector_ops=7, mul_ops=1, load_cycles=4.0, latency=23),
    f32_split_mul_ops=2,  # the split of an f32 operand, counted above (f32_mul_ops)
    f32_split_vector_ops=6,
)

#: AIE2P (npu2).
AIE2P_FLOAT = FloatUnit(
    # [LA] llvm/include/llvm/IR/IntrinsicsAIE2P.td: AIE2PI512I512ACC1024BFMUL multiplies v32bf16 by
    # v32bf16 into v32f32; aie_api's aie2p float multiply (detail/aie2p/mul_acc32_fp.hpp) issues
    # one mul_elem_32_conf for up to 32 lanes ("muls_per_mul = Elems <= 32? 32 : 64"); [MA]
    # aie_kernels/aie_arch.h "AIE_BF16_LANES 32" on AIE2P (16 on AIE2).
    lanes=32,
    # [LA] aie2p/AIE2PGenSchedule.td: II_VADD_f_vmac_cm2_add_reg and II_VMUL_f_vmul_bf_vmul_bf_core_X_X
    # "[/*dst*/6, ...]", as AIE2's.
    latency=6,
    # [LA] aie2p/AIE2PGenSchedule.td: II_VMAX_LT_bf16 "[/*d*/2, /*cmp*/2, /*s1*/1, /*s2*/1]", as AIE2.
    compare_latency=VECTOR_ALU_LATENCY,
    shared_issue=False,  # estimate, unconfirmed: AIE2's separate multiplier and add/compare units
    bf16_convert_ops=1,  # as AIE2 ([MA] aie_kernels/aie2p/softmax.cc: to_vector after each op)
    # [LA] aie2p/AIE2PGenSchedule.td: the same instructions and slots as AIE2's (VADD_f on the vmac
    # unit; VLDA_2D_CONV_fp32_bf16 dmw_lda_ups_bf; VST_2D_CONV_bf16_fp32 dmw_sts_srs_bf;
    # VCONV_fp32_bf16 mv_ups_wbf; VCONV_bf16_fp32 mv_w_srs_bf in the st slot).
    add_on_mac=True,
    convert_in_load=True,
    convert_out_store=True,
    # [MA] aie_kernels/aie2p/exp2_poly.h: "an f32 aie::mul is emulated with 32-lane bf16 products";
    # the counts of partial products and of the split are AIE2's lowering's (estimate for AIE2P).
    f32_mul_ops=6,
    inv_issue=10,  # estimate, unconfirmed: AIE2's emulated reciprocal
    inv_latency=10,
    exp=Elementary(
        # Native exp2: [UG1529] "Elementary Functions": aie::exp2 requires arch XDNA2 (bf16 result);
        # [MA] aie_kernels/aie2p/exp2_bf16.h: "aie::exp2<bfloat16> on AIE2P. AIE2 has no exp2".
        # [MA] aie_kernels/aie2p/softmax.cc, per vector: the multiply by log2(e) (1 multiplier op),
        # to_vector<float> and exp2 (2 vector ops). One exp2 per 16 lanes a cycle is an estimate; the
        # counts are per 32 lanes (``lanes``), so twice those per 16.
        vector_ops=4,
        mul_ops=2,
        load_cycles=0.0,
        # [LA] aie2p/AIE2PGenSchedule.td: the multiply by log2(e), II_VMUL_f_vmul_bf_vmul_bf_core_X_X
        # "[/*dst*/6, ...]", into the accumulator II_VEXP2 reads ("[/*dst*/2, /*src*/1]"; AIE2PInstrPatterns.td
        # selects int_aie2p_exp2 on an ACC512 to VEXP2): 6 + 2.
        latency=8,
    ),
    # [MA] aie_runtime_lib/AIE2P/vec_math.h: getRsqrtBf16 and getSqrtBf16 as AIE-ML's, each multiply one
    # 32-lane instruction here (AIE2P's native INVSQRT is scalar only: [LA] IntrinsicsAIE2P.td
    # int_aie2p_invsqrt on a float).
    rsqrt=Elementary(vector_ops=9, mul_ops=5, load_cycles=0.0, latency=42),
    sqrt=Elementary(vector_ops=10, mul_ops=6, load_cycles=0.0, latency=50),
    # Native tanh: [LA] IntrinsicsAIE2P.td int_aie2p_tanh, 16 f32 lanes in, bf16 out; [MA]
    # aie_kernels/common/activations.h (the AIE2P default, "one vtanh instruction"): per 16 lanes a conversion
    # into f32 and one vtanh, so per 32 lanes 4 vector ops. Latency: the conversion 2, then VTANH's 2
    # ([LA] aie2p/AIE2PGenSchedule.td II_VTANH "[/*dst*/2, /*src*/1]", a move-slot instruction).
    tanh=Elementary(vector_ops=4, mul_ops=0, load_cycles=0.0, latency=4),
    f32_split_mul_ops=2,  # estimate: AIE2's split (f32_mul_ops)
    f32_split_vector_ops=6,
)

#: The float unit of each architecture (``Device.arch.name``).
FLOAT_UNITS: dict[str, FloatUnit] = {"aie1": AIE1_FLOAT, "aie2": AIE2_FLOAT, "aie2p": AIE2P_FLOAT}


@dataclass(frozen=True)
class Int32Multiply:
    """How a core multiplies 32-bit integer vectors elementwise, where it has no 32 x 32-bit multiplier.

    Attributes:
        lanes: products per group of instructions.
        mac_ops: multiplier-slot instructions per group (a multiply and the multiply-accumulates
            that add the partial products of 16-bit halves).
        shuffle_ops: vector-ALU-slot instructions per group and per vector operand (splitting it into
            its halves; a scalar operand is split once, outside the loop).
    """

    lanes: int
    mac_ops: int
    shuffle_ops: int


#: 32-bit elementwise multiplies built from 16-bit partial products, per architecture (AIE1 has a
#: 32 x 32-bit multiplier mode and is absent: the device's MAC rate prices it).
INT32_MULTIPLY: dict[str, Int32Multiply] = {
    # [MA] lib/Conversion/AIEVecToLLVM/AIEVecToLLVM.cpp, "emulated I32 mul_elem": per v16int32, "4*
    # Shuffle" and "MUL + 3 * MAC" (mul_elem_16_2 and three mac_elem_16_2_conf); [AM020] "Summary":
    # int32 x int32 "can be emulated"; [MA] programming_guide section-4c: "32-bit scale loop: AIE2
    # II 8" (two vectors of 16 a loop).
    "aie2": Int32Multiply(lanes=16, mac_ops=4, shuffle_ops=2),
    # Estimate, unconfirmed: aie_api's AIE2P fallback (detail/aie2p/emulated_mul_intrinsics.hpp),
    # mul_elem_32 and three mac_elem_32_conf per 32 lanes, two interleave_unzip per operand pair;
    # whether current compilers' native mul_elem_32_conf needs fewer passes was not found.
    "aie2p": Int32Multiply(lanes=32, mac_ops=4, shuffle_ops=1),
}
