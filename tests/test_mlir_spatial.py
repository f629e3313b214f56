"""The objectfifo level: golden text, upstream parsing and verification, agreement with the Plan.

Golden checks are FileCheck patterns (the PyPI ``filecheck``) next to the code
that emits them. The designs are tests/mlir/zoo.py's, planned with the greedy
strategy on every device they fit.
"""

from __future__ import annotations

import importlib.util
import math
import subprocess

import numpy as np
import pytest
from zoo_support import CASES, filecheck, planned, zoo

import tilelang as tl
from tilelang.backends.mlir import emit_kernel_functions, emit_mlir
from tilelang.backends.mlir._mlir import mlir_opt_path
from tilelang.backends.mlir.enums import AIE_DEVICE, MLIR_AIE_VERSION
from tilelang.backends.mlir.run import HOST_PIPELINE
from tilelang.plan import plan as make_plan


def mlir_opt(text: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([mlir_opt_path(), *args, "-"], input=text, capture_output=True, text=True)


# -- golden -----------------------------------------------------------------------------------


def test_vector_scalar_mul_objectfifo_golden() -> None:
    text = emit_mlir(planned("vector_scalar_mul", "npu1"))
    filecheck(
        """
CHECK: "aie.device"() ({
CHECK-DAG: %[[SHIM:.*]] = "aie.tile"() {col = 0 : i32, row = 0 : i32} : () -> index
CHECK-DAG: %[[CORE:.*]] = "aie.tile"() {col = 0 : i32, row = 2 : i32} : () -> index
CHECK: "aie.objectfifo"(%[[SHIM]], %[[CORE]]) {dimensionsFromStreamPerConsumer = #aie<bd_dim_layout_array_array[[]]>, dimensionsToStream = #aie<bd_dim_layout_array[]>, elemNumber = 2 : i32, elemType = !aie.objectfifo<memref<1024xi32>>, sym_name = "a_in"} : (index, index) -> ()
CHECK: "aie.objectfifo"(%[[CORE]], %[[SHIM]]) {{.*}} sym_name = "c_out"} : (index, index) -> ()
CHECK: "func.func"() <{function_type = (memref<1024xi32>, memref<1024xi32>, i32) -> (), sym_name = "scale"}>
CHECK: "linalg.generic"
CHECK: "arith.muli"
CHECK: "aie.core"(%[[CORE]]) ({
CHECK: "scf.for"
CHECK: %[[A:.*]] = "aie.objectfifo.acquire"() {objFifo_name = @a_in, port = 1 : i32, size = 1 : i32} : () -> !aie.objectfifosubview<memref<1024xi32>>
CHECK: %[[C:.*]] = "aie.objectfifo.acquire"() {objFifo_name = @c_out, port = 0 : i32, size = 1 : i32}
CHECK: %[[AE:.*]] = "aie.objectfifo.subview.access"(%[[A]]) {index = 0 : i32}
CHECK: %[[CE:.*]] = "aie.objectfifo.subview.access"(%[[C]]) {index = 0 : i32}
CHECK: %[[F:.*]] = "arith.constant"() <{value = 3 : i32}> : () -> i32
CHECK: "func.call"(%[[AE]], %[[CE]], %[[F]]) <{callee = @scale}>
CHECK: "aie.objectfifo.release"() {objFifo_name = @a_in, port = 1 : i32, size = 1 : i32}
CHECK: "aie.objectfifo.release"() {objFifo_name = @c_out, port = 0 : i32, size = 1 : i32}
CHECK: "aie.end"() : () -> ()
CHECK: }) {stack_size = 1024 : i32} : (index) -> index
CHECK: "aie.runtime_sequence"() ({
CHECK: ^bb0(%[[AT:.*]]: memref<4096xi32>, %[[CT:.*]]: memref<4096xi32>):
CHECK: "aiex.npu.dma_memcpy_nd"(%[[AT]]) {id = 0 : i64, issue_token = true, metadata = @a_in,
CHECK: "aiex.npu.dma_memcpy_nd"(%[[CT]]) {id = 8 : i64, issue_token = true, metadata = @c_out, operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_offsets = array<i64: 0, 0, 0, 0>, static_sizes = array<i64: 1, 1, 1, 4096>, static_strides = array<i64: 0, 0, 0, 1>}
CHECK: "aiex.npu.dma_wait"() {symbol = @a_in}
CHECK: "aiex.npu.dma_wait"() {symbol = @c_out}
CHECK: }) {sym_name = "sequence"} : () -> ()
CHECK: "aie.end"() : () -> ()
CHECK: }) {device = 4 : i32, sym_name = "main"} : () -> ()
""",
        text,
    )


def test_split_join_links_and_offsets_golden() -> None:
    text = emit_mlir(planned("split_join", "npu1"))
    filecheck(
        """
CHECK-DAG: "aie.objectfifo.link"() {dst_offsets = [0, 512], fifoIns = [@a_mem], fifoOuts = [@in0, @in1], src_offsets = []} : () -> ()
CHECK-DAG: "aie.objectfifo.link"() {dst_offsets = [], fifoIns = [@out0, @out1], fifoOuts = [@c_mem], src_offsets = [0, 512]} : () -> ()
""",
        text,
    )


def test_forward_relayout_becomes_dimensions_to_stream() -> None:
    text = emit_mlir(planned("transpose_forward", "npu1"))
    filecheck(
        """
CHECK: dimensionsToStream = #aie<bd_dim_layout_array[<size = 8, stride = 1>, <size = 8, stride = 8>, <size = 1, stride = 1>]>, {{.*}} sym_name = "y"
CHECK: "aie.objectfifo.link"() {dst_offsets = [], fifoIns = [@x], fifoOuts = [@y], src_offsets = []}
""",
        text,
    )


def test_sliding_window_peels_the_priming_iteration() -> None:
    text = emit_mlir(planned("sliding_window", "npu1"))
    # The first iteration acquires two elements; in the loop each acquire(2) takes one new.
    filecheck(
        """
CHECK: "aie.core"
CHECK: %[[W0:.*]] = "aie.objectfifo.acquire"() {objFifo_name = @x, port = 1 : i32, size = 2 : i32}
CHECK: "aie.objectfifo.subview.access"(%[[W0]]) {index = 0 : i32}
CHECK: "aie.objectfifo.subview.access"(%[[W0]]) {index = 1 : i32}
CHECK: "aie.objectfifo.release"() {objFifo_name = @x, port = 1 : i32, size = 1 : i32}
CHECK: "scf.for"
CHECK: %[[W:.*]] = "aie.objectfifo.acquire"() {objFifo_name = @x, port = 1 : i32, size = 2 : i32}
CHECK: "scf.yield"
CHECK: "aie.objectfifo.release"() {objFifo_name = @x, port = 1 : i32, size = 1 : i32}
CHECK: "aie.end"
""",
        text,
    )


def test_broadcast_on_aie1_registers_external_buffers_per_host_fifo_end() -> None:
    """xcvc1902 has no NPU runtime sequence: each host end gets its moves' DDR buffers registered, in order."""
    text = emit_mlir(planned("broadcast", "xcvc1902"))
    filecheck(
        """
CHECK: "aie.device"() ({
CHECK-DAG: %[[S20:.*]] = "aie.tile"() {col = 2 : i32, row = 0 : i32} : () -> index
CHECK-DAG: %[[S30:.*]] = "aie.tile"() {col = 3 : i32, row = 0 : i32} : () -> index
CHECK-DAG: %[[S60:.*]] = "aie.tile"() {col = 6 : i32, row = 0 : i32} : () -> index
CHECK: "aie.objectfifo"(%[[S20]], {{.*}}) {{.*}} sym_name = "w"}
CHECK: "aie.core"
CHECK-NOT: aiex.npu
CHECK-NOT: aie.runtime_sequence
CHECK-DAG: %[[W:.*]] = "aie.external_buffer"() {sym_name = "W"} : () -> memref<256xi32>
CHECK-DAG: %[[X0:.*]] = "aie.external_buffer"() {sym_name = "X_at_0"} : () -> memref<256xi32>
CHECK-DAG: %[[Y0:.*]] = "aie.external_buffer"() {sym_name = "Y_at_0"} : () -> memref<256xi32>
CHECK-DAG: %[[X3:.*]] = "aie.external_buffer"() {sym_name = "X_at_768"} : () -> memref<256xi32>
CHECK-DAG: %[[Y2:.*]] = "aie.external_buffer"() {sym_name = "Y_at_512"} : () -> memref<256xi32>
CHECK: "aie.objectfifo.register_external_buffers"(%[[S20]], %[[W]]) {objFifo_name = @w} : (index, memref<256xi32>) -> ()
CHECK-NEXT: "aie.objectfifo.register_external_buffers"(%[[S20]], %[[X0]]) {objFifo_name = @x0} : (index, memref<256xi32>) -> ()
CHECK-NEXT: "aie.objectfifo.register_external_buffers"(%[[S20]], %[[Y0]]) {objFifo_name = @y0} : (index, memref<256xi32>) -> ()
CHECK: "aie.objectfifo.register_external_buffers"(%[[S20]], %[[Y2]]) {objFifo_name = @y2}
CHECK-NEXT: "aie.objectfifo.register_external_buffers"(%[[S60]], %[[X3]]) {objFifo_name = @x3}
CHECK-NEXT: "aie.objectfifo.register_external_buffers"(%[[S30]], {{.*}}) {objFifo_name = @y3}
CHECK-NEXT: "aie.end"() : () -> ()
CHECK-NOT: aiex.npu
""",
        text,
    )


def test_extern_kernel_is_a_private_declaration_that_links_its_object() -> None:
    text = emit_mlir(planned("extern_scale", "npu1"))
    filecheck(
        """
CHECK: "func.func"() <{function_type = (memref<1024xi32>, memref<1024xi32>, i32) -> (), sym_name = "scale_int32", sym_visibility = "private"}> ({
CHECK-NEXT: }) {link_with = "scale.o"} : () -> ()
CHECK: "func.call"({{.*}}) <{callee = @scale_int32}>
CHECK: }) {stack_size = 1024 : i32} : (index) -> index
""",
        text,
    )


# -- every design, every device ------------------------------------------------------------------


@pytest.mark.parametrize(("name", "device"), CASES)
@pytest.mark.parametrize("level", ["objectfifo", "physical"])
def test_module_parses_in_mlir_opt_and_prints_back_identically(name: str, device: str, level: str) -> None:
    """Upstream mlir-opt reads the generic form back, byte for byte.

    Whole-module verification is not possible upstream: a func.call inside the
    unregistered aie.core cannot be resolved (tilelang/backends/mlir/verify.py),
    so the parser's verifier is off here; emit_mlir itself verified the module.
    """
    text = emit_mlir(planned(name, device), level=level)
    res = mlir_opt(
        text,
        "--allow-unregistered-dialect",
        "--mlir-very-unsafe-disable-verifier-on-parsing",
        "--mlir-print-op-generic",
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip() == text.rstrip()


@pytest.mark.parametrize(("name", "device"), CASES)
def test_kernel_functions_verify_and_lower_to_llvm_in_mlir_opt(name: str, device: str) -> None:
    text = emit_kernel_functions(planned(name, device))
    res = mlir_opt(text, "--verify-each")
    assert res.returncode == 0, res.stderr
    res = mlir_opt(text, "--verify-each", f"--pass-pipeline={HOST_PIPELINE}")
    assert res.returncode == 0, res.stderr
    assert "linalg." not in res.stdout and "llvm.func" in res.stdout


@pytest.mark.parametrize(("name", "device"), CASES)
def test_device_functions_are_the_kernel_functions(name: str, device: str) -> None:
    """The func.funcs inside aie.device print exactly as the standalone module's."""
    p = planned(name, device)
    module = emit_mlir(p, as_module=True)
    standalone = emit_kernel_functions(p, as_module=True)

    def texts(ops: object) -> list[str]:
        return [
            op.operation.get_asm(print_generic_op_form=True, use_local_scope=True)
            for op in ops
            if op.operation.name == "func.func"
        ]

    inside = texts(module.body.operations[0].regions[0].blocks[0].operations)
    assert len(inside) == len(p.design.kernels)
    assert inside == texts(standalone.body.operations)


# -- agreement with the plan ----------------------------------------------------------------------


def _device_ops(module: object) -> list:
    return list(module.body.operations[0].regions[0].blocks[0].operations)


def _tiles(module: object) -> dict[str, tuple[int, int]]:
    """SSA name of each aie.tile -> (col, row)."""
    out = {}
    for op in _device_ops(module):
        if op.operation.name == "aie.tile":
            a = op.operation.attributes
            out[op.result.get_name()] = (a["col"].value, a["row"].value)
    return out


@pytest.mark.parametrize(("name", "device"), CASES)
def test_objectfifo_ends_and_cores_are_where_the_plan_puts_them(name: str, device: str) -> None:
    p = planned(name, device)
    module = emit_mlir(p, as_module=True)
    tiles = _tiles(module)
    seen_fifos, core_tiles = {}, []
    for op in _device_ops(module):
        o = op.operation
        if o.name == "aie.objectfifo":
            ends = [tiles[v.get_name()] for v in o.operands]
            seen_fifos[str(o.attributes["sym_name"].value)] = (ends[0], ends[1:], o.attributes["elemNumber"].value)
        elif o.name == "aie.core":
            core_tiles.append(tiles[o.operands[0].get_name()])
    assert set(seen_fifos) == {f.name for f in p.design.fifos}
    for f in p.design.fifos:
        fp = p.fifos[f.name]
        assert seen_fifos[f.name] == (fp.producer.tile, [c.tile for c in fp.consumers], f.depth)
    assert sorted(core_tiles) == sorted(p.placement[c.name] for c in p.design.cores)
    assert AIE_DEVICE[device] == p.device.aie_device_id


@pytest.mark.parametrize(("name", "device"), [c for c in CASES if c[1] != "xcvc1902"])
def test_runtime_sequence_moves_every_byte_of_every_host_move(name: str, device: str) -> None:
    """Each move's 4-d walk visits exactly the elements of its pattern, and every BD id is reused only after a wait."""
    p = planned(name, device)
    module = emit_mlir(p, as_module=True)
    seq = next(op for op in _device_ops(module) if op.operation.name == "aie.runtime_sequence")
    ops = list(seq.regions[0].blocks[0].operations)
    memcpys = [o.operation for o in ops if o.operation.name == "aiex.npu.dma_memcpy_nd"]
    want = sorted(
        (d.name, f, tuple(np.tile(d.pattern.indices(), d.pattern.repeat_count))) for d in p.design.dmas for f in d.fifos
    )
    got = []
    for o in memcpys:
        sizes = list(o.attributes["static_sizes"])
        strides = list(o.attributes["static_strides"])
        offset = list(o.attributes["static_offsets"])[3]
        idx = np.full((), offset, dtype=np.int64)
        for n, s in zip(sizes, strides, strict=True):
            idx = idx[..., None] + np.arange(n) * s
        fifo = str(o.attributes["metadata"].value)
        got.append((fifo, tuple(idx.reshape(-1))))
    assert sorted((f, w) for _, f, w in want) == sorted(got)
    waits = [str(o.operation.attributes["symbol"].value) for o in ops if o.operation.name == "aiex.npu.dma_wait"]
    assert set(waits) == {f for d in p.design.dmas for f in d.fifos}


@pytest.mark.parametrize(("name", "device"), [c for c in CASES if c[1] == "xcvc1902"])
def test_aie1_registered_buffers_are_each_host_fifo_ends_moves_in_program_order(name: str, device: str) -> None:
    """One register op per host fifo end, on the plan's shim tile; its buffers are the moves' runs, in order."""
    p = planned(name, device)
    module = emit_mlir(p, as_module=True)
    tiles = _tiles(module)
    ops = [op.operation for op in _device_ops(module)]
    assert not any(o.name.startswith("aiex.") or o.name == "aie.runtime_sequence" for o in ops)
    ext = {o.result.get_name(): o for o in ops if o.name == "aie.external_buffer"}
    got = {}
    for o in ops:
        if o.name == "aie.objectfifo.register_external_buffers":
            fifo = str(o.attributes["objFifo_name"].value)
            assert fifo not in got
            runs = []
            for v in o.operands[1:]:
                buf = ext[v.get_name()]
                sym = str(buf.attributes["sym_name"]).strip('"')
                tensor, _, at = sym.partition("_at_")
                runs.append((tensor, int(at or 0), math.prod(buf.result.type.shape)))
            got[fifo] = (tiles[o.operands[0].get_name()], runs)
    want: dict[str, tuple] = {}
    for d in p.design.dmas:
        for f in d.fifos:
            fp = p.fifos[f]
            end = fp.producer if d.to_device else next(c for c in fp.consumers if c.agent == "host")
            idx = d.pattern.indices().reshape(-1)
            assert (idx == idx[0] + np.arange(idx.size)).all()  # the zoo's AIE1 moves are contiguous runs
            want.setdefault(f, (end.tile, []))[1].append((d.tensor, int(idx[0]), int(idx.size)))
    assert got == want


def test_gemm_posts_its_output_move_before_the_sequence_waits_on_an_input() -> None:
    """A core blocked on a full output fifo stops consuming inputs: the output must be posted before the
    sequence waits for an input to complete."""
    module = emit_mlir(planned("gemm", "npu1"), as_module=True)
    seq = next(op for op in _device_ops(module) if op.operation.name == "aie.runtime_sequence")
    ops = []
    for o in seq.regions[0].blocks[0].operations:
        name = o.operation.name
        if name in ("aiex.npu.dma_memcpy_nd", "aiex.npu.dma_wait"):
            key = "metadata" if name == "aiex.npu.dma_memcpy_nd" else "symbol"
            ops.append((name, str(o.operation.attributes[key].value)))
    first_wait = next(i for i, (name, _) in enumerate(ops) if name == "aiex.npu.dma_wait")
    assert ("aiex.npu.dma_memcpy_nd", "c_out") in ops[:first_wait]
    names = [sym for name, sym in ops if name == "aiex.npu.dma_memcpy_nd"]
    assert names.count("a_in") == names.count("b_in") == 4


# -- errors ----------------------------------------------------------------------------------------


def test_unknown_level_and_non_plan_are_rejected() -> None:
    with pytest.raises(tl.TileLangError, match="unknown MLIR level 'llvm'"):
        emit_mlir(planned("vector_scalar_mul", "npu1"), level="llvm")
    with pytest.raises(tl.TileLangError, match="takes a Plan"):
        emit_mlir(zoo.vector_scalar_mul())


def test_host_pattern_beyond_the_shim_wrap_field_is_a_plan_error() -> None:
    """A 3-d host walk repeated twice with 2048-element rows: the shim BD's wrap field has 10 bits, and
    the walk already uses all 4 of the BD's dimensions (3 and the iteration), so no split fits."""

    @tl.kernel
    def cp(a: tl.Tile[(2048,), tl.i32], c: tl.Tile[(2048,), tl.i32]):
        c[...] = a

    @tl.design(device="npu1")
    def wide(A: tl.Tensor[(8, 4096), tl.i32], C: tl.Tensor[(8, 2048), tl.i32]):
        x = tl.fifo(tl.Tile[(2048,), tl.i32], depth=1, name="x")
        y = tl.fifo(tl.Tile[(2048,), tl.i32], depth=1, name="y")

        @tl.core(name="k")
        def k():
            for _ in tl.range(8):
                a = x.acquire()
                c = y.acquire()
                cp(a, c)
                x.release()
                y.release()

        tl.dma(A, x, pattern=tl.pattern(0, (2, 2, 2048), (16384, 4096, 1)).repeat(2))
        tl.dma(y, C)

    p = make_plan(wide, strategy="greedy")
    for level in ("objectfifo", "physical"):
        with pytest.raises(
            tl.PlanError,
            match="size 2048, beyond the 10-bit wrap field; splitting it into more "
            r"dimensions does not fit either \(the DMA has 4 dimensions, the "
            r"walk uses 4, 0 to spare\)",
        ):
            emit_mlir(p, level=level)


def test_missing_mlir_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.backends.mlir import _mlir

    real = importlib.import_module

    def fake(name: str, *a: object) -> object:
        if name.startswith("mlir"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a)

    _mlir.mlir.cache_clear()
    monkeypatch.setattr(_mlir.importlib, "import_module", fake)
    try:
        with pytest.raises(tl.TileLangError, match=r"pip install 'tilelang-aie\[mlir\]'"):
            emit_mlir(planned("vector_scalar_mul", "npu1"))
    finally:
        monkeypatch.undo()
        _mlir.mlir.cache_clear()


def test_the_enum_table_names_its_mlir_aie_version() -> None:
    assert "mlir-aie" in MLIR_AIE_VERSION and "2026" in MLIR_AIE_VERSION


def _with_temporary(elems: int):  # noqa: ANN202
    """A kernel whose value is used twice, so it is computed once into a stack temporary of ``elems`` i32."""

    @tl.kernel
    def twice(a: tl.Tile[(elems,), tl.i32], c: tl.Tile[(elems,), tl.i32]):
        t = a * 3
        c[...] = t + t * t

    @tl.design(device="npu1")
    def temp(A: tl.Tensor[(elems,), tl.i32], C: tl.Tensor[(elems,), tl.i32]):
        x = tl.fifo(tl.Tile[(elems,), tl.i32], depth=1, name="x")
        y = tl.fifo(tl.Tile[(elems,), tl.i32], depth=1, name="y")

        @tl.core(name="k")
        def k():
            a = x.acquire()
            c = y.acquire()
            twice(a, c)
            x.release()
            y.release()

        tl.dma(A, x)
        tl.dma(y, C)

    return temp


def test_kernel_temporaries_must_fit_the_reserved_stack() -> None:
    small = make_plan(_with_temporary(64), strategy="greedy")  # 256 B of temporaries
    assert "memref.alloca" in emit_mlir(small)
    big = make_plan(_with_temporary(1024), strategy="greedy")  # 4096 B
    with pytest.raises(
        tl.PlanError, match="kernel 'twice' needs 4096 B of stack temporaries, the plan reserves a 1024 B"
    ):
        emit_mlir(big)
