"""The kernel cost model's float ops against the public facts they come from.

Each bound below is worked out here from its source (the number of instructions a
public kernel issues, a lane count or a latency a manual states), not read back
from the cost model's tables.
"""

import math

import pytest

import tilelang as tl
from tilelang.frontend.kernel import exp
from tilelang.frontend.kernel import max as tl_max
from tilelang.frontend.kernel import sum as tl_sum
from tilelang.ir.kernel_cost import kernel_cycles, kernel_slots

AIE1 = tl.device("xcvc1902")
AIEML = tl.device("npu1")
AIE2P = tl.device("npu2")

# The float vector pipeline's depth: AM009 "Floating-Point Vector Unit" (AIE1: a three-cycle
# multiplier, a sign stage and a two-stage accumulator); the Vitis AIE-ML softmax tutorial
# "the floating-point vector processor has a pipeline depth of six".
PIPELINE_DEPTH = 6


def _unary(n: int, dt, f):
    @tl.kernel
    def k(x: tl.Tile[(n,), dt], y: tl.Tile[(n,), dt]):
        y[...] = f(x)

    return k


def _binary(n: int, dt, f):
    @tl.kernel
    def k(x: tl.Tile[(n,), dt], z: tl.Tile[(n,), dt], y: tl.Tile[(n,), dt]):
        y[...] = f(x, z)

    return k


def _copy(n: int, dt):
    return _unary(n, dt, lambda x: x)


def test_aie1_exp_costs_at_least_the_polynomial_it_is_computed_with():
    # AIE1 has no exp instruction (UG1079: the scalar float hardware is sqrt, invsqrt, inverse,
    # abs, min, max) and no lookup-table hardware (AIE-API: lookup tables "only available from
    # AIE-ML"). mlir-aie's exp (aie_kernels/aie2p/bf16_exp.cc + exp2_poly.h, generic branch),
    # one vector op each, on AIE1's one vector issue slot (AM009):
    ops = ["mul log2e", "add magic", "sub magic", "lt", "sub k bias", "select", "sub k",
           "select", "sub", "sub f"] + ["fpmac"] * 5 + ["upshift k", "add exponent"]
    n = 1024
    extra = kernel_slots(_unary(n, tl.f32, exp), AIE1).vector - kernel_slots(_copy(n, tl.f32), AIE1).vector
    assert extra >= len(ops) * n / 8  # eight f32 lanes (AM009)


def test_aieml_exp_is_bound_by_its_table_lookups():
    # mlir-aie getExpBf16 (aie_runtime_lib/AIE2/lut_based_ops.h): two parallel_lookup fetches per
    # element from aie::lut<4, ...>, four parallel accesses a cycle (UG1603 "Lookup Tables").
    n = 1024
    lookups = 2 * n / 4
    assert kernel_cycles(_unary(n, tl.bf16, exp), AIEML) >= lookups
    assert kernel_cycles(_unary(n, tl.bf16, exp), tl.device("xcve2802")) >= lookups


def test_aie2p_exp_is_cheaper_than_aieml_exp():
    # AIE2P has a native exp2 (AIE-API aie::exp2 requires XDNA2; mlir-aie exp2_bf16.h "AIE2 has no exp2").
    for n in (256, 1024, 4096):
        k = _unary(n, tl.bf16, exp)
        assert kernel_cycles(k, AIE2P) < kernel_cycles(k, AIEML)


def test_exp_without_an_instruction_costs_more_than_an_add():
    n = 1024
    for dev, dt in ((AIE1, tl.f32), (AIEML, tl.bf16)):
        add = kernel_cycles(_binary(n, dt, lambda x, z: x + z), dev)
        assert kernel_cycles(_unary(n, dt, exp), dev) > add


def test_aie1_square_roots_run_value_by_value_on_the_scalar_unit():
    # UG1079: the scalar unit has sqrt and invsqrt hardware, the vector unit none; AM009: one result a
    # cycle; AIE-API's aie1 elementary.hpp loops over a vector's values with the scalar call.
    for f in (tl.sqrt, tl.rsqrt):
        for n in (64, 1024):
            assert kernel_slots(_unary(n, tl.f32, f), AIE1).scalar >= n


def test_aieml_tanh_is_bound_by_its_table_lookup():
    # mlir-aie lut_based_ops.h tanh_bf16_v16: one load_lut_2x_float gather per 16 values, four parallel
    # accesses a cycle (UG1603 "Lookup Tables"); AIE2 has no tanh instruction (aie_arch.h).
    n = 1024
    assert kernel_cycles(_unary(n, tl.bf16, tl.tanh), AIEML) >= n / 4


def test_aie2p_native_tanh_is_cheaper_than_aieml_table_tanh():
    # AIE2P: llvm-aie IntrinsicsAIE2P.td int_aie2p_tanh (16 lanes, one instruction); AIE-ML: the table above.
    for n in (256, 1024, 4096):
        k = _unary(n, tl.bf16, tl.tanh)
        assert kernel_cycles(k, AIE2P) < kernel_cycles(k, AIEML)


def test_aieml_rsqrt_costs_at_least_its_newton_step_and_sqrt_one_multiply_more():
    # mlir-aie vec_math.h getRsqrtBf16: x * 0.5, y * x2 twice, 1.5 - x2 (an accumulator add) and t * y, each
    # on the multiplier, per 16 lanes; getSqrtBf16 multiplies the result by x once more.
    n = 1024
    rsqrt = kernel_slots(_unary(n, tl.bf16, tl.rsqrt), AIEML)
    sqrt = kernel_slots(_unary(n, tl.bf16, tl.sqrt), AIEML)
    assert rsqrt.mac >= 5 * n / 16
    assert sqrt.mac >= rsqrt.mac + n / 16


def test_aieml_f32_multiplies_are_six_bf16_products_and_widened_bf16_ones_one():
    # mlir-aie AIEVecToLLVM.cpp convertToEmulatedFP32MulElem: in the default ("fast") accuracy mode "float a*b
    # would require 6 mac operations" per 16 lanes, after splitting each f32 operand into bf16 parts with two
    # msc_elem_16_2; a bf16 x bf16 -> f32 mul_elem is one intrinsic.
    n = 1024
    f32 = kernel_slots(_binary(n, tl.f32, lambda x, z: x * z), AIEML).mac
    assert f32 >= (6 + 2 * 2) * n / 16

    @tl.kernel
    def widened(x: tl.Tile[(n,), tl.bf16], z: tl.Tile[(n,), tl.bf16], y: tl.Tile[(n,), tl.f32]):
        y[...] = x.astype(tl.f32) * z.astype(tl.f32)

    assert kernel_slots(widened, AIEML).mac <= n / 16
    assert AIEML.macs_per_cycle(tl.f32) <= AIEML.macs_per_cycle(tl.bf16) / 6


# AIE-ML's bf16 max is a vector ALU instruction, not the float pipeline's: llvm-aie's
# aie2/AIE2GenFixupInstrInfo.td "def VMAX_LT_BF16 : AIE2_vec_bf_min_max_inst_mv", whose itinerary
# (AIE2Schedule.td II_VMAX_LT, "[2,2,1,1,...]") writes the result in E2 and reads operands in E1.
VMAX_LATENCY = 2 - 1 + 1


@pytest.mark.parametrize("reduce, depth", [(tl_sum, PIPELINE_DEPTH), (tl_max, None)], ids=["sum", "max"])
@pytest.mark.parametrize("dev, dt, lanes", [(AIE1, tl.f32, 8), (AIEML, tl.bf16, 16)])
def test_a_reduction_tree_pays_its_combine_latency_per_halving(reduce, depth, dev, dt, lanes):
    # A vector reduction is a log2(lanes) tree of shift + combine steps (mlir-aie
    # test/Conversion/VectorToAIEVec/test-reduce.mlir), each waiting for the one before.
    # Up to one vector, doubling the input adds one step and nothing else.
    if depth is None:  # max: AIE1's float unit (AM009: fpmax in the float pipeline); AIE-ML's vector ALU
        depth = PIPELINE_DEPTH if dev is AIE1 else VMAX_LATENCY
    fixed = [kernel_slots(_unary(n, dt, lambda x: x - reduce(x)), dev).fixed for n in (2, 4, 8, 16)]
    steps = int(math.log2(lanes))  # 16 bf16 lanes for sum, 32 for max on AIE-ML: at least 4 either way
    for a, b in zip(fixed[: steps - 1], fixed[1:steps], strict=True):
        assert b - a >= depth
    assert fixed[steps - 1] >= steps * depth


def test_dividing_by_a_scalar_is_a_reciprocal_and_a_multiply():
    # UG1079 "Floating-Point Operations": no divide instruction, "an inverse and multiply";
    # AM009 "Scalar Unit": non-linear functions take up to four cycles for their result.
    n = 512
    for dev, dt in ((AIE1, tl.f32), (AIEML, tl.bf16)):
        div = kernel_cycles(_binary(n, dt, lambda x, z: x / tl_max(z)), dev)
        mul = kernel_cycles(_binary(n, dt, lambda x, z: x * tl_max(z)), dev)
        assert div >= mul + 1
        assert div <= mul + 64  # one reciprocal, not one per element


def test_dividing_by_a_vector_takes_a_reciprocal_per_element():
    # AM009: the scalar unit's inverse has a throughput of one per cycle, and there is no
    # vector inverse (UG1079), so n elements take at least n cycles of the scalar unit.
    n = 512
    by_vector = kernel_cycles(_binary(n, tl.f32, lambda x, z: x / z), AIE1)
    by_scalar = kernel_cycles(_binary(n, tl.f32, lambda x, z: x / tl_max(z)), AIE1)
    assert by_vector >= n
    assert by_vector > by_scalar


def test_aieml_bf16_arithmetic_runs_in_16_fp32_lanes():
    # AM020 "Floating-Point Vector Unit": fp32 accumulator lanes; AIE-API's aie2 float multiply
    # has lanes_per_mul = 16 (mul_elem_16_2): 32 bf16 values per 512-bit register do not make 32 lanes.
    n = 2048
    for f in (lambda x, z: x + z, lambda x, z: x - z):
        s = kernel_slots(_binary(n, tl.bf16, f), AIEML)
        assert s.vector >= n / 16
    s = kernel_slots(_binary(n, tl.bf16, lambda x, z: x * z), AIEML)
    assert s.mac >= n / 16


def test_aie1_float_multiplies_and_adds_share_one_issue_slot():
    # AM009: "only one vector instruction per cycle can be done in fixed-point or floating-point".
    n = 1024

    @tl.kernel
    def k(x: tl.Tile[(n,), tl.f32], z: tl.Tile[(n,), tl.f32], p: tl.Tile[(n,), tl.f32],
          q: tl.Tile[(n,), tl.f32]):
        p[...] = x * z
        q[...] = x + z

    assert kernel_slots(k, AIE1).vector >= 2 * n / 8
