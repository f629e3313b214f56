"""mlir-aie's own tools accept, lower and translate every emitted module.

Every example (examples/*.py at --small sizes), every library design benchmarks/library_bench.py measures
(small sizes, on npu1, npu2 and xcvc1902) and every design of the MLIR zoo (tests/mlir/zoo.py, each on the
devices it lists) is planned, emitted at both levels and taken through mlir-aie's flow
(``tilelang.backends.mlir.vendor``): objectfifo lowering, buffer addresses, routing (objectfifo level), the NPU
instruction binary and CDO (NPU devices) or the libxaie configuration (AIE1), and every core body to LLVM IR.
At the physical level every planned buffer address, bank and lock id must survive mlir-aie's lowering.

aie-opt and aie-translate are found through $AIE_OPT/$AIE_TRANSLATE, PATH or ../shared/tools/mlir-aie;
without them these tests skip with the reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tilelang as tl
from tilelang.backends.mlir import vendor

pytest.importorskip("mlir.ir")
pytestmark = pytest.mark.skipif(bool(vendor.missing_tools_reason()), reason=vendor.missing_tools_reason())

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "benchmarks"))

import library_bench as lb  # noqa: E402
from test_examples import SCRIPTS  # noqa: E402
from test_mlir_examples import recorded  # noqa: E402
from zoo_support import CASES as ZOO_CASES  # noqa: E402
from zoo_support import planned, zoo  # noqa: E402

LIBRARY = lb.gemm_cases(256) + lb.matvec_cases(True) + lb.conv_cases(True) + lb.stream_cases(True) + lb.attention_cases(True)

#: mlir-aie's Pathfinder does not route this 32-core AIE1 design within 300 s (mlir-aie's limit, not the
#: design's: tilelang's own routes for it pass at the physical level below). benchmarks/vendor_bench.py
#: records the objectfifo attempt.
PATHFINDER_TOO_SLOW = {("matmul", "xcvc1902", "256^3 i16->i32 streams 4x8")}


def _through(plan: tl.Plan, level: str, what: str) -> vendor.VendorResult:
    text = tl.emit_mlir(plan, level=level)
    try:
        res = vendor.compile_text(text, level)
    except vendor.VendorFlowError as e:
        pytest.fail(f"{what} ({level}): {e}")
    if plan.device.arch.name == "aie1":
        assert "aie_inc.cpp" in res.config and "XAie_" in res.config["aie_inc.cpp"].decode()
    else:
        assert res.npu_insts, f"{what} ({level}): no NPU instructions"
        assert any(name.endswith(".bin") for name in res.config), f"{what} ({level}): no CDO"
    for core in plan.design.cores:
        col, row = plan.placement[core.name]
        assert f"@core_{col}_{row}(" in res.cores_llvm_ir, f"{what} ({level}): core {core.name} not in the LLVM IR"
    if level == "physical":
        moved = vendor.check_preserved(text, res)
        assert not moved, f"{what}: mlir-aie moved planned resources: {moved[:5]}"
    return res


def _routed_by_mlir_aie_slowly(device: str, level: str) -> bool:
    """mlir-aie's Pathfinder takes tens of seconds per module on npu2 and on the 400-tile xcvc1902 (whatever the
    design's size): those objectfifo-level checks are slow checks (``-m slow``, which .ci/run also runs)."""
    return level == "objectfifo" and device in ("npu2", "xcvc1902")


def _example_params() -> list:
    out = []
    for stem in SCRIPTS:
        devices = {design.device.name for _, design, *_ in recorded(stem)}
        for level in vendor.LEVELS:
            slow = any(_routed_by_mlir_aie_slowly(d, level) for d in devices)
            out.append(pytest.param(stem, level, marks=[pytest.mark.slow] if slow else [], id=f"{stem}-{level}"))
    return out


def _library_params() -> list:
    out = []
    for case in LIBRARY:
        for level in vendor.LEVELS:
            slow = _routed_by_mlir_aie_slowly(case.device, level)
            out.append(pytest.param(case, level, marks=[pytest.mark.slow] if slow else [],
                                    id=f"{case.design}-{case.device}-{case.label}-{level}"))
    return out


@pytest.mark.parametrize(("stem", "level"), _example_params())
def test_example_goes_through_the_vendor_flow(stem: str, level: str, capsys: pytest.CaptureFixture) -> None:
    cases = recorded(stem)
    capsys.readouterr()
    for name, design, *_ in cases:
        _through(tl.plan(design, strategy="greedy"), level, f"examples/{stem}.py:{name}")


@pytest.mark.parametrize(("case", "level"), _library_params())
def test_library_design_goes_through_the_vendor_flow(case, level: str) -> None:  # noqa: ANN001
    if level == "objectfifo" and (case.design, case.device, case.label) in PATHFINDER_TOO_SLOW:
        pytest.skip("mlir-aie's Pathfinder does not route this design within 300 s (see vendor_bench)")
    _through(tl.plan(case.build(), strategy="greedy"), level, f"{case.design} on {case.device}, {case.label}")


def _zoo_params() -> list:
    out = []
    for name, device in ZOO_CASES:
        for level in vendor.LEVELS:
            slow = _routed_by_mlir_aie_slowly(device, level)
            out.append(pytest.param(name, device, level, marks=[pytest.mark.slow] if slow else []))
    return out


@pytest.mark.parametrize(("name", "device", "level"), _zoo_params())
def test_zoo_design_goes_through_the_vendor_flow(name: str, device: str, level: str) -> None:
    _through(planned(name, device), level, f"zoo {name} on {device}")


@st.composite
def _pipelines(draw):  # noqa: ANN001, ANN202
    device = draw(st.sampled_from(["npu1", "npu2", "xcvc1902"]))
    stages = draw(st.integers(1, 4))
    depth = draw(st.integers(1, 3))
    return zoo.pipeline(device=device, stages=stages, depth=depth), draw(st.sampled_from(["ilp", "greedy"]))


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_pipelines())
def test_every_accepted_plan_passes_mlir_aie_at_the_physical_level(case) -> None:  # noqa: ANN001
    design, strategy = case
    _through(tl.plan(design, strategy=strategy), "physical", f"{design.name} ({strategy})")


def test_a_rejected_module_names_the_stage_and_mlir_aies_message() -> None:
    plan = planned("vector_scalar_mul", "npu1")
    text = tl.emit_mlir(plan, level="physical").replace("lockID = 0 : i32", "lockID = 99 : i32", 1)
    assert "lockID = 99" in text
    with pytest.raises(vendor.VendorFlowError, match=r"mlir-aie lower stage failed: .*lock assigned invalid id") as err:
        vendor.compile_text(text, "physical")
    assert err.value.stage == "lower"


def test_pretty_prints_mlir_aies_custom_form() -> None:
    text = tl.emit_mlir(planned("vector_scalar_mul", "npu1"))
    pretty = vendor.pretty(text)
    assert "aie.device(npu1)" in pretty and "aie.objectfifo @a_in" in pretty
    assert '"aie.device"' not in pretty


def test_missing_tools_raise_a_vendor_flow_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vendor, "find_tools", lambda: None)
    with pytest.raises(vendor.VendorFlowError, match="aie-opt/aie-translate not found"):
        vendor.compile_text("module {}", "objectfifo")


def test_tilelang_compile_writes_the_artefacts(tmp_path: Path) -> None:
    import json
    import subprocess

    root = HERE.parent
    out = tmp_path / "build"
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from tilelang.cli import main; sys.exit(main(sys.argv[1:]))", "compile", str(root / "examples" / "designs.py") + ":vector_scalar_mul",
         "-o", str(out), "--json"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    names = {Path(f).name for f in doc["files"]}
    assert {"lower.mlir", "npu.mlir", "insts.bin", "cores.ll"} <= names
    assert any(n.endswith("_aie_cdo_init.bin") for n in names)
    assert (out / "insts.bin").stat().st_size > 0


def test_tilelang_compile_reports_a_failing_stage_in_one_line(tmp_path: Path) -> None:
    import subprocess

    bad = tmp_path / "plan.json"
    bad.write_text(planned("vector_scalar_mul", "npu1").to_json())
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from tilelang.cli import main; sys.exit(main(sys.argv[1:]))", "compile", str(bad), "-o", str(tmp_path / "b")],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
        env={**__import__("os").environ, "AIE_OPT": str(tmp_path / "no-such-aie-opt")},
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "mlir-aie lower stage failed: cannot run" in proc.stderr, proc.stderr
    assert "no-such-aie-opt" in proc.stderr


@tl.kernel
def _inc16(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32]):
    c[...] = a + 1


@pytest.mark.parametrize("order", [(1, 0), (2, 0, 1)])
def test_a_split_and_join_with_offsets_out_of_order_pass_mlir_aie(order) -> None:  # noqa: ANN001
    """Parts listed in any order of their offsets are the same split (and join): numpy's answer, and a module
    mlir-aie accepts at both levels (it measures a part up to the next one listed)."""
    n = len(order)

    @tl.design(device="npu1")
    def shuffled(A: tl.Tensor[(16 * n,), tl.i32], C: tl.Tensor[(16 * n,), tl.i32]):
        big = tl.fifo(tl.Tile[(16 * n,), tl.i32], name="big")
        out = tl.fifo(tl.Tile[(16 * n,), tl.i32], name="out")
        ins = [tl.fifo(tl.Tile[(16,), tl.i32], name=f"p{q}") for q in range(n)]
        outs = [tl.fifo(tl.Tile[(16,), tl.i32], name=f"o{q}") for q in range(n)]
        tl.split(big, ins, offsets=[16 * k for k in order])
        tl.join(outs, out, offsets=[16 * k for k in reversed(order)])
        for q in range(n):
            @tl.core(name=f"w{q}")
            def _body(a=ins[q], o=outs[q]):
                x, y = a.acquire(), o.acquire()
                _inc16(x, y)
                a.release()
                o.release()
        tl.dma(A, big)
        tl.dma(out, C)

    plan = tl.plan(shuffled)
    a = np.arange(16 * n, dtype=np.int32)
    # part q reads block order[q] of A and lands in block reversed(order)[q] of C
    want = np.empty_like(a)
    for k, j in zip(order, reversed(order), strict=True):
        want[16 * j:16 * j + 16] = a[16 * k:16 * k + 16] + 1
    np.testing.assert_array_equal(tl.simulate(plan, A=a).outputs["C"], want)
    for level in ("objectfifo", "physical"):
        _through(plan, level, f"split {order}")


@pytest.mark.parametrize("blocks", [65, 66, 130])
def test_a_fill_repeated_more_than_the_repeat_field_holds_goes_through_mlir_aie(blocks: int) -> None:
    """matvec's B fill repeats once per row block. From 66 blocks on, mlir-aie refused the module ("Size 3
    exceeds the [1:64] range"): the check took the repeat for a wrap dimension (up to 1023) where the runtime
    sequence puts it in dma_memcpy_nd's repeat slot (1..64). The library now cuts the repeats into runs of
    at most 64, and the result still equals numpy."""
    d = tl.library.matvec(blocks * 32, 64, in_dtype=tl.i16, device="npu1", cores=1)
    plan = tl.plan(d, strategy="greedy")
    rng = np.random.default_rng(blocks)
    a = rng.integers(-5, 5, (blocks * 32, 64)).astype(np.int16)
    b = rng.integers(-5, 5, (64,)).astype(np.int16)
    out = tl.simulate(plan, A=a, B=b).outputs["C"]
    np.testing.assert_array_equal(out.reshape(-1), (a.astype(np.int64) @ b.astype(np.int64)).reshape(-1))
    for level in ("objectfifo", "physical"):
        _through(plan, level, f"matvec with {blocks} row blocks")


@pytest.mark.parametrize(("device", "dtype", "level"), [
    pytest.param(device, dtype, level, marks=[pytest.mark.slow] if _routed_by_mlir_aie_slowly(device, level) else [])
    for device, dtype in (("npu1", tl.bf16), ("npu2", tl.f32), ("xcvc1902", tl.f32)) for level in vendor.LEVELS])
def test_the_float_functions_go_through_mlir_aie_and_equal_numpy(device: str, dtype, level: str) -> None:  # noqa: ANN001
    """``tl.sqrt``, ``tl.rsqrt`` and ``tl.tanh`` in one kernel on two cores: the simulated output is numpy's
    (each function in f32, rounded to the dtype once), and mlir-aie lowers every core to LLVM IR at both
    levels (``math.sqrt``, ``math.tanh``)."""
    d = tl.library.elementwise(lambda a: tl.tanh(a) + tl.sqrt(a) * tl.rsqrt(a + 1.0), 2 * 256, dtype=dtype,
                               device=device, cores=2, tile=256)
    plan = tl.plan(d, strategy="greedy")
    a = np.random.default_rng(6).uniform(0, 9, 2 * 256).astype(np.float32).astype(dtype.numpy)
    x = a.astype(np.float32)
    r = np.float32(1) / np.sqrt(x + np.float32(1))
    if dtype.name == "bf16":  # each op's result rounded to bf16, as the kernel's values are
        b = lambda v: np.asarray(v, np.float32).astype(dtype.numpy).astype(np.float32)  # noqa: E731
        want = b(b(np.tanh(x)) + b(b(np.sqrt(x)) * b(np.float32(1) / np.sqrt(b(x + np.float32(1))))))
    else:
        want = np.tanh(x) + np.sqrt(x) * r
    got = tl.simulate(plan, A=a).outputs["C"].astype(np.float32)
    np.testing.assert_array_equal(got, want.astype(dtype.numpy).astype(np.float32))
    _through(plan, level, f"sqrt, rsqrt and tanh on {device}, {dtype}")


@pytest.mark.parametrize(("device", "dtype"), [("npu1", tl.f32), ("npu1", tl.i32), ("xcvc1902", tl.f32)])
def test_a_min_reduction_goes_through_mlir_aie_and_equals_numpy(device: str, dtype) -> None:  # noqa: ANN001
    """``tl.min`` (the library's min reduction over two cores): numpy's minimum, and cores mlir-aie lowers to
    LLVM IR at both levels (its identity is +inf or the dtype's largest value)."""
    d = tl.library.reduction("min", 2 * 2 * 256, dtype=dtype, device=device, cores=2, tile=256)
    plan = tl.plan(d, strategy="greedy")
    a = np.random.default_rng(5).integers(-1000, 1000, 2 * 2 * 256).astype(dtype.numpy)
    assert tl.simulate(plan, A=a).outputs["C"][0] == a.min()
    for level in ("objectfifo", "physical"):
        _through(plan, level, f"min reduction on {device}, {dtype}")


def test_a_shared_fifo_planned_in_its_consumers_memory_is_allocated_there_for_mlir_aie() -> None:
    """mlir-aie keeps a fifo between two neighbouring cores in its producer's memory unless an
    ``aie.objectfifo.allocate`` names another tile. Attention's 128-key blocks at d = 64 fit only as the planner
    lays them out (the f32 scores with the softmax core, their consumer): the objectfifo module must say so, or
    mlir-aie's allocator overflows the scores' producer, 72 KiB in a 64 KiB memory."""
    plan = tl.plan(tl.library.attention(256, 256, 64, block_kv=128, causal=True), strategy="greedy")
    moved = [f for f, fp in plan.fifos.items() if fp.shared and fp.shared_tile == fp.consumers[0].tile]
    assert {f"s_{j}" for j in range(4)} <= set(moved)
    text = tl.emit_mlir(plan, level="objectfifo")
    for f in moved:
        assert f"aie.objectfifo.allocate @{f}(" in text or f"objFifo_name = @{f}}}" in text, f
    _through(plan, "objectfifo", "attention 256^2 x 64, 128-key blocks")
