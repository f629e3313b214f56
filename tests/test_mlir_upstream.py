"""Upstream mlir-opt and the emitted modules: what it cannot verify (pinned), and the upstream view it verifies whole.

The first tests pin upstream's behaviour with the mlir-opt the bindings ship:
if a future MLIR resolves calls through unregistered region ops, they fail
and docs/mlir_backend.md ("Verification") needs rewriting. The rest check
that the upstream view of every emitted module verifies in mlir-opt, and that
it catches what it should.
"""

from __future__ import annotations

import subprocess

import pytest
from zoo_support import CASES, planned

import tilelang as tl
from tilelang.backends.mlir import emit_mlir
from tilelang.backends.mlir._mlir import mlir_opt_path
from tilelang.backends.mlir.upstream import upstream_view_text
from tilelang.backends.mlir.verify import verify_module


def mlir_opt(text: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([mlir_opt_path(), *args, "-"], input=text, capture_output=True, text=True)


CHECK = ("--allow-unregistered-dialect", "--mlir-print-op-generic", "--verify-each")

#: mlir-aie's shape in miniature: a kernel declared in the device, called from a core.
DEVICE = """
"builtin.module"() ({
  "aie.device"() ({
    %t = "aie.tile"() {col = 0 : i32, row = 2 : i32} : () -> index
    "func.func"() <{function_type = (i32) -> (), sym_name = "scale", sym_visibility = "private"}> ({
    }) : () -> ()
    %c = "aie.core"(%t) ({
      %f = "arith.constant"() <{value = 3 : i32}> : () -> i32
      "func.call"(%f) <{callee = @scale}> : (i32) -> ()
      "aie.end"() : () -> ()
    }) : (index) -> index
    "aie.end"() : () -> ()
  }) {device = 4 : i32, sym_name = "main"} : () -> ()
}) : () -> ()
"""

#: The same with the kernel declared at the top level instead.
OUTSIDE = """
"builtin.module"() ({
  "func.func"() <{function_type = (i32) -> (), sym_name = "scale", sym_visibility = "private"}> ({
  }) : () -> ()
  "aie.device"() ({
    %t = "aie.tile"() {col = 0 : i32, row = 2 : i32} : () -> index
    %c = "aie.core"(%t) ({
      %f = "arith.constant"() <{value = 3 : i32}> : () -> i32
      "func.call"(%f) <{callee = @scale}> : (i32) -> ()
      "aie.end"() : () -> ()
    }) : (index) -> index
    "aie.end"() : () -> ()
  }) {device = 4 : i32, sym_name = "main"} : () -> ()
}) : () -> ()
"""

#: The same with the kernel declared inside the core.
INSIDE = """
"builtin.module"() ({
  "aie.device"() ({
    %t = "aie.tile"() {col = 0 : i32, row = 2 : i32} : () -> index
    %c = "aie.core"(%t) ({
      "func.func"() <{function_type = (i32) -> (), sym_name = "scale", sym_visibility = "private"}> ({
      }) : () -> ()
      %f = "arith.constant"() <{value = 3 : i32}> : () -> i32
      "func.call"(%f) <{callee = @scale}> : (i32) -> ()
      "aie.end"() : () -> ()
    }) : (index) -> index
    "aie.end"() : () -> ()
  }) {device = 4 : i32, sym_name = "main"} : () -> ()
}) : () -> ()
"""


# -- upstream's behaviour, pinned ------------------------------------------------------------------------


def test_upstream_cannot_resolve_a_call_inside_an_unregistered_region_op() -> None:
    """Parsing verifies, and the call's callee lookup stops at aie.core (one region, no dialect)."""
    res = mlir_opt(DEVICE, *CHECK)
    assert res.returncode == 1
    assert "error: 'func.call' op 'scale' does not reference a valid function" in res.stderr


def test_nor_with_the_kernel_declared_outside_the_device() -> None:
    """The lookup does not skip the unknown op and go on outward: it gives up (getNearestSymbolTable -> null)."""
    res = mlir_opt(OUTSIDE, *CHECK)
    assert res.returncode == 1 and "'func.call' op 'scale' does not reference a valid function" in res.stderr


def test_nor_with_the_kernel_declared_inside_the_core() -> None:
    """The lookup starts inside aie.core and stops at it all the same."""
    res = mlir_opt(INSIDE, *CHECK)
    assert res.returncode == 1 and "'func.call' op 'scale' does not reference a valid function" in res.stderr


def test_verify_each_without_verifying_on_parsing_checks_nothing() -> None:
    """--mlir-very-unsafe-disable-verifier-on-parsing --verify-each with no pass accepts even a broken module:
    --verify-each verifies after each pass, and there is none. It is no way round the failure above."""
    broken = DEVICE.replace("@scale}", "@nowhere}")
    res = mlir_opt(
        broken, "--allow-unregistered-dialect", "--mlir-very-unsafe-disable-verifier-on-parsing", "--verify-each"
    )
    assert res.returncode == 0
    res = mlir_opt(
        broken,
        "--allow-unregistered-dialect",
        "--mlir-very-unsafe-disable-verifier-on-parsing",
        "--verify-each",
        "--pass-pipeline=builtin.module(canonicalize)",
    )
    assert res.returncode == 1 and "'nowhere' does not reference a valid function" in res.stderr


def test_an_emitted_module_fails_upstream_as_mlir_aies_own_modules_do() -> None:
    text = emit_mlir(planned("vector_scalar_mul", "npu1"))
    res = mlir_opt(text, *CHECK)
    assert res.returncode == 1 and "error: 'func.call' op 'scale' does not reference a valid function" in res.stderr


def test_a_second_region_or_a_registered_symbol_table_is_what_upstream_needs() -> None:
    """The mechanism the upstream view relies on: a nested builtin.module is a symbol table upstream knows,
    and an unregistered op with two regions is not taken for one."""
    view = (
        DEVICE.replace('"aie.device"() ({', '"builtin.module"() ({')
        .replace('}) {device = 4 : i32, sym_name = "main"}', '}) {aie.device = 4 : i32, sym_name = "main"}')
        .replace(
            '      "aie.end"() : () -> ()\n    }) : (index) -> index',
            '      "aie.end"() : () -> ()\n    }, {\n    }) : (index) -> index',
        )
    )
    assert mlir_opt(view, *CHECK).returncode == 0
    one_region = view.replace("    }, {\n    }) : (index) -> index", "    }) : (index) -> index")
    res = mlir_opt(one_region, *CHECK)
    assert res.returncode == 1 and "'scale' does not reference a valid function" in res.stderr


# -- the upstream view ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "device"), CASES)
def test_the_upstream_view_of_every_module_verifies_in_mlir_opt(name: str, device: str) -> None:
    for level in ("objectfifo", "physical"):
        module = emit_mlir(planned(name, device), level=level, as_module=True)
        res = mlir_opt(upstream_view_text(module), *CHECK)
        assert res.returncode == 0, f"{level}: {res.stderr[:2000]}"


def test_the_view_is_the_module_with_the_symbol_scope_explicit() -> None:
    p = planned("vector_scalar_mul", "npu1")
    module = emit_mlir(p, level="physical", as_module=True)
    before = module.operation.get_asm(print_generic_op_form=True)
    view = upstream_view_text(module)
    assert module.operation.get_asm(print_generic_op_form=True) == before  # the module is left alone
    assert '"aie.device"' not in view and '"builtin.module"() <{sym_name = "main"}>' in view
    assert "}) {aie.device = 4 : i32} : () -> ()" in view
    core = view[view.index('"aie.core"') :]
    assert core.index("}, {\n    })") < core.index('"aie.mem"')  # the core's second, empty region
    assert view.count('"aie.') == before.count('"aie.') - 1  # every other aie op where it was


def _call(module: object, callee: str) -> object:
    """The first func.call of ``callee`` in the module."""
    from mlir import ir

    found = []

    def visit(op: object) -> object:
        o = op.operation
        if o.name == "func.call" and o.attributes["callee"].value == callee and not found:
            found.append(o)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found[0]


def test_a_call_of_a_missing_kernel_fails_verification() -> None:
    from mlir import ir

    module = emit_mlir(planned("vector_scalar_mul", "npu1"), as_module=True)
    with module.context:
        _call(module, "scale").attributes["callee"] = ir.FlatSymbolRefAttr.get("a_in")  # an objectfifo, no function
    with pytest.raises(tl.TileLangError, match="'func.call' op 'a_in' does not reference a valid function"):
        verify_module(module)
    assert "'a_in' does not reference a valid function" in mlir_opt(upstream_view_text(module), *CHECK).stderr


def test_a_call_with_the_wrong_arguments_fails_verification() -> None:
    from mlir import ir

    module = emit_mlir(planned("gemm", "npu1"), level="physical", as_module=True)
    with module.context:
        _call(module, "mac").attributes["callee"] = ir.FlatSymbolRefAttr.get("zero")  # takes one memref, not three
    with pytest.raises(tl.TileLangError, match="incorrect number of operands for callee"):
        verify_module(module)


def test_an_aie_op_naming_an_undefined_symbol_fails_verification() -> None:
    from mlir import ir

    module = emit_mlir(planned("vector_scalar_mul", "npu1"), as_module=True)
    found = []

    def visit(op: object) -> object:
        if op.operation.name == "aie.objectfifo.release" and not found:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    with module.context:
        found[0].attributes["objFifo_name"] = ir.FlatSymbolRefAttr.get("nowhere")
    with pytest.raises(
        tl.TileLangError, match="aie.objectfifo.release uses @nowhere, which the device does not define"
    ):
        verify_module(module)
