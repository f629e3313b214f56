"""``tl.read_mlir``: objectfifo-level mlir-aie modules (IRON's output) read into Designs and simulated."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang as tl
from tilelang.backends.mlir import vendor
from tilelang.cli import main as cli
from tilelang.errors import DesignError, TileLangError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import library_bench as lb  # noqa: E402

REFERENCE = ROOT.parent / "shared" / "reference"
#: IRON's form of vector_scalar_mul in mlir-aie's custom assembly: a Worker's endless loop around two calls,
#: the host moves as DMA tasks (``aiex.dma_configure_task_for``), the input in four 1024-value rows.
IRON = ROOT / "tests" / "data" / "iron_vector_scalar_mul.mlir"
needs_aie_opt = pytest.mark.skipif(bool(vendor.missing_tools_reason()), reason=vendor.missing_tools_reason())
#: The reference modules sit in ../shared beside a checkout (as CI has them).
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"no reference modules at {REFERENCE}")


@tl.kernel
def scale(p0: tl.Tile[(1024,), tl.i32], p1: tl.Tile[(1024,), tl.i32], p2: tl.i32):
    p1[...] = p0 * p2


@needs_reference
def test_the_reference_module_reads_into_a_design_that_equals_numpy() -> None:
    d = tl.read_mlir(REFERENCE / "vector_scalar_mul.objectfifo.mlir", kernels={"scale": scale})
    assert [t.name for t in d.params] == ["arg0", "arg1"] and d.device.name == "npu1"
    assert [c.tile for c in d.cores] == [(0, 2)]
    a = np.random.default_rng(0).integers(-1000, 1000, 4096).astype(np.int32)
    res = tl.simulate(tl.plan(d), arg0=a)
    assert np.array_equal(res.outputs["arg1"], a * 3)


@needs_reference
def test_kernels_not_given_are_extern_and_run_in_timing_mode_with_their_cycles() -> None:
    d = tl.read_mlir(REFERENCE / "vector_scalar_mul.objectfifo.mlir")
    (k,) = d.kernels
    assert k.name == "scale" and k.object_file == "scale.o" and k.writes == frozenset({"p1"})
    plan = tl.plan(d)
    with pytest.raises(TileLangError, match="mode='timing'"):
        tl.simulate(plan, arg0=np.zeros(4096, np.int32))
    with pytest.raises(TileLangError, match="kernel_cycles"):
        tl.simulate(plan, mode="timing")
    res = tl.simulate(plan, mode="timing", kernel_cycles={"scale": 1000})
    assert res.stats.cores["core_0_2"].busy == 4 * 1000


@needs_aie_opt
def test_irons_custom_assembly_endless_loop_and_dma_tasks() -> None:
    d = tl.read_mlir(IRON, kernels={"scale": scale})
    (core,) = d.cores
    outer = core.body[0]
    assert (outer.start, outer.stop, outer.step) == (0, 2, 1)  # 4 elements arrive, 2 a trip
    move_in = next(m for m in d.dmas if m.to_device)
    assert move_in.pattern.sizes == (4, 1024) and move_in.pattern.strides == (1024, 1)
    a = np.arange(4096, dtype=np.int32)
    res = tl.simulate(tl.plan(d), arg0=a)
    assert np.array_equal(res.outputs["arg1"], a * 3)
    # the same module read as generic text (no aie-opt on that path) is the same design
    generic = vendor.run_tool(vendor.require_tools().aie_opt, ["--mlir-print-op-generic"], IRON.read_text(), "t")
    assert tl.ir.print(tl.read_mlir(generic, kernels={"scale": scale}, name="iron_vector_scalar_mul")) == tl.ir.print(d)


#: A hand-written module in the shape of mlir-aie's npu-xrt tests: a function-level link_with, a loop bound of
#: 2**32 - 1, dma_memcpy_nd with constant operands for its offsets, sizes and strides, the output's move first,
#: and a runtime sequence argument no move uses.
ADD_ONE = ROOT / "tests" / "data" / "add_one_memcpy_nd.mlir"


def _inc(a: np.ndarray, b: np.ndarray, n: np.ndarray) -> None:
    b[: int(n)] = a[: int(n)] + 1


INC = tl.extern_kernel("inc", [tl.Tile[(16,), tl.i32], tl.Tile[(16,), tl.i32], tl.i32], reference=_inc, cycles=40)


@needs_aie_opt
def test_constant_operand_moves_an_output_move_first_and_an_unused_argument() -> None:
    d = tl.read_mlir(ADD_ONE, kernels={"inc": INC})
    assert [t.name for t in d.params] == ["arg0", "arg1", "arg2"]
    assert (d.cores[0].body[0].start, d.cores[0].body[0].stop) == (0, 8)  # 128 values, 16 a trip
    a = np.arange(1, 129, dtype=np.int32)
    res = tl.simulate(tl.plan(d), arg0=a)
    assert np.array_equal(res.outputs["arg2"], a + 1)
    assert res.stats.cores["core_0_2"].busy == 8 * 40


@needs_aie_opt
def test_an_acquire_that_is_its_element_is_read_as_element_zero() -> None:
    """Newer mlir-aie prints a one-element acquire as the element's memref (no subview.access)."""
    import re

    generic = vendor.run_tool(vendor.require_tools().aie_opt, ["--mlir-print-op-generic"], ADD_ONE.read_text(), "t")
    accesses = dict(re.findall(r'(%\d+) = "aie.objectfifo.subview.access"\((%\d+)\)', generic))
    assert len(accesses) == 2
    text = re.sub(r'\s*%\d+ = "aie.objectfifo.subview.access".*', "", generic)
    text = text.replace("() -> !aie.objectfifosubview<memref<16xi32>>", "() -> memref<16xi32>")
    for elem, view in accesses.items():
        text = re.sub(rf"{elem}\b", view, text)
    d = tl.read_mlir(text, kernels={"inc": INC})
    a = np.arange(1, 129, dtype=np.int32)
    assert np.array_equal(tl.simulate(tl.plan(d), arg0=a).outputs["arg2"], a + 1)


ROUND_TRIP = ["matmul/npu1/256^3 bf16->f32 64x64x64", "matmul/npu2/256^3 bf16->bf16 tiling=auto",
              "reduction/npu1/max 16384 i32", "softmax/npu2/64x1024 bf16", "conv2d/npu1/10x18x8->16 3x3 i16",
              "attention/npu2/8x512x64 bf16 4/1 heads split_kv 4"]


@pytest.mark.parametrize("label", ROUND_TRIP)
def test_emitted_modules_read_back_to_the_same_cycles_and_numbers(label: str) -> None:
    """tilelang's own objectfifo-level modules (links, broadcasts, joins, local buffers, loop-index
    arguments) read back into designs that simulate to the same cycles and outputs."""
    cases = lb.gemm_cases(256) + lb.conv_cases(True) + lb.stream_cases(True) + lb.attention_cases(True)
    case = next(c for c in cases if f"{c.design}/{c.device}/{c.label}" == label)
    d = case.build()
    plan = tl.plan(d, strategy="greedy")
    back = tl.read_mlir(tl.emit_mlir(plan), kernels={k.name: k for k in d.kernels})
    plan2 = tl.plan(back, strategy="greedy")
    assert tl.simulate(plan2, mode="timing").cycles == tl.simulate(plan, mode="timing").cycles
    ins = case.inputs(np.random.default_rng(0))
    args = {f"arg{i}": ins[t.name] for i, t in enumerate(d.params) if t.name in ins}
    out, out2 = tl.simulate(plan, **ins).outputs, tl.simulate(plan2, **args).outputs
    for i, t in enumerate(d.params):
        if t.name in out:
            assert np.array_equal(out[t.name], out2[f"arg{i}"]), t.name


def _reference() -> str:
    return (REFERENCE / "vector_scalar_mul.objectfifo.mlir").read_text()


@needs_reference
@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace('"func.call"(%a, %o, %f)', '"arith.addi"(%f, %f) : (i32, i32) -> i32\n        '
                                                    '"func.call"(%a, %o, %f)'), r"arith.addi in a core body"),
    (lambda t: t.replace('"aiex.npu.dma_wait"() {symbol = @out}', '"aiex.npu.write32"() {address = 0 : ui32, value = 0 : ui32}'),
     r"aiex.npu.write32 in the runtime sequence is not read"),
    (lambda t: t.replace("elemNumber = 2 : i32, elemType = !aie.objectfifo<memref<1024xi32>>, dimensionsToStream = "
                         "#aie<bd_dim_layout_array[]>, dimensionsFromStreamPerConsumer = #aie<bd_dim_layout_array_array"
                         "[[]]>} : (index, index) -> ()\n    \"aie.objectfifo\"(%t01",
                         "elemNumber = [2 : i32, 3 : i32], elemType = !aie.objectfifo<memref<1024xi32>>} : "
                         "(index, index) -> ()\n    \"aie.objectfifo\"(%t01"), r"tilelang's fifos have one depth"),
])
def test_what_is_not_read_is_named(edit, message) -> None:
    text = edit(_reference())
    assert text != _reference()
    with pytest.raises(DesignError, match=message):
        tl.read_mlir(text)


@needs_reference
def test_a_forward_link_between_elements_of_different_sizes_is_refused() -> None:
    text = _reference().replace('sym_name = "in1", elemNumber = 2 : i32, elemType = !aie.objectfifo<memref<1024xi32>>',
                                'sym_name = "in1", elemNumber = 2 : i32, elemType = !aie.objectfifo<memref<512xi32>>')
    assert text != _reference()
    with pytest.raises(DesignError, match="a forward link of elements of different sizes"):
        tl.read_mlir(text)


@needs_reference
def test_an_endless_loop_with_no_data_to_count_is_refused() -> None:
    text = _reference().replace('<{value = 4 : index}>', '<{value = 9223372036854775807 : index}>')
    text = text[: text.index('"aie.runtime_sequence"')] + '"aie.end"() : () -> ()\n  }) {device = 4 : i32} : () -> ()\n}) : () -> ()\n'
    with pytest.raises(DesignError, match="loops without end"):
        tl.read_mlir(text)


@needs_reference
def test_a_module_mlirs_parser_aborts_on_is_an_error_not_the_end_of_the_process() -> None:
    """An scf.for whose body lacks its induction variable fails an assertion in MLIR's C++ verifier; the
    module is parsed in a child first, so this process lives on and says so."""
    text = _reference().replace("      ^bb0(%iv: index):\n", "")
    assert text != _reference()
    with pytest.raises(TileLangError, match="MLIR's parser aborted on it"):
        tl.read_mlir(text)
    assert tl.read_mlir(_reference()).cores  # and reads the next module


@needs_reference
def test_physical_modules_kernels_and_text_errors_are_named() -> None:
    with pytest.raises(DesignError, match="objectfifo-level modules"):
        tl.read_mlir(REFERENCE / "vector_scalar_mul.physical.mlir")
    with pytest.raises(DesignError, match=r"kernels\['scale'\] takes"):
        @tl.kernel
        def scale16(p0: tl.Tile[(1024,), tl.i16], p1: tl.Tile[(1024,), tl.i16], p2: tl.i16):
            p1[...] = p0 * p2

        tl.read_mlir(REFERENCE / "vector_scalar_mul.objectfifo.mlir", kernels={"scale": scale16})
    with pytest.raises(DesignError, match=r"declares no such function"):
        tl.read_mlir(REFERENCE / "vector_scalar_mul.objectfifo.mlir", kernels={"scale": scale, "other": scale})
    with pytest.raises(TileLangError, match="not an MLIR module"):
        tl.read_mlir('"aie.device"() ({ nonsense')
    with pytest.raises(TileLangError, match="cannot read"):
        tl.read_mlir("/no/such/file.mlir")


@needs_reference
def test_the_command_line_reads_modules(capsys, tmp_path) -> None:
    spec = str(REFERENCE / "vector_scalar_mul.objectfifo.mlir")
    assert cli(["simulate", spec, "--timing", "--json", "--kernel-cycles", "scale=1000"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mode"] == "timing" and doc["cores"]["core_0_2"]["busy"] == 4000
    assert cli(["simulate", spec, "--timing", "--check"]) == 1
    assert "--timing moves no data" in capsys.readouterr().err
    assert cli(["print", spec]) == 0
    assert "extern @scale" in capsys.readouterr().out
