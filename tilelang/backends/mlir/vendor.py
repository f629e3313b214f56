"""mlir-aie's own tools over an emitted module: the vendor flow up to the artefacts a device loads.

The pass pipeline is the one mlir-aie's compiler driver runs (``python/compiler/aiecc/main.py``:
``INPUT_WITH_ADDRESSES_PIPELINE``, ``AIE_LOWER_TO_LLVM``, ``NPU_LOWERING_PIPELINE``), as stages, each one
``aie-opt`` or ``aie-translate`` call whose output the next reads:

- ``lower``: objectfifos to buffers, locks and BD chains, lock and BD ids, buffer addresses; kernel bodies'
  linalg to loops (mlir-aie's translations do not register linalg).
- ``route``: ``aie-create-pathfinder-flows`` (objectfifo level only: the physical level carries the planned
  switchbox connections, and mlir-aie's Pathfinder refuses pre-routed fan-out at this version).
- ``npu``: the runtime sequence to NPU instructions (NPU devices); ``insts``: the instruction binary.
- ``config``: the array configuration, CDO files on NPU devices, the libxaie C configuration on AIE1 (aie-rt's
  CDO backend cannot set AIE1 lock values: ``XAie_LockSetValue`` reports ``XAIE_FEATURE_NOT_SUPPORTED``).
- ``cores``: every core body lowered to the LLVM dialect (``aie-standard-lowering`` over all cores at once,
  where aiecc lowers one core per call) and translated to LLVM IR.

At the physical level buffers are placed with ``--alloc-scheme=basic-sequential``: the default bank-aware
scheme of this mlir-aie version moves buffers that already carry an address (fixed upstream by mlir-aie
PR #3003); with basic-sequential every planned address stays (``check_preserved`` tests it). At the
objectfifo level mlir-aie places the buffers with the pass's default, as aiecc does when not given
``--alloc-scheme``: bank-aware, falling back to basic-sequential on a tile where bank-aware finds no bank
for a buffer (``AIEAssignBuffers.cpp``), e.g. a buffer the planner spans across two banks.

The tools are found through ``$AIE_OPT`` / ``$AIE_TRANSLATE``, then ``PATH``, then ``../shared/tools/mlir-aie/``
beside the source checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tilelang.errors import TileLangError

LEVELS = ("objectfifo", "physical")

_LOWER = (
    "lower-affine,aie-canonicalize-device,aie.device(aie-assign-core-link-files,aie-assign-lock-ids,aie-register-objectFifos,"
    "aie-objectFifo-stateful-transform,aie-assign-bd-ids,aie-lower-cascade-flows,aie-lower-broadcast-packet,"
    "aie-lower-multicast,aie-assign-tile-controller-ids,aie-generate-column-control-overlay,"
    "aie-assign-buffer-addresses{scheme}),convert-scf-to-cf,"
    "aie.device(func.func(convert-linalg-to-loops))"
)
_ROUTE = "aie.device(aie-create-pathfinder-flows)"
_NPU = (
    "aie.device(aie-materialize-bd-chains,aie-substitute-shim-dma-allocations,aie-assign-runtime-sequence-bd-ids,"
    "aie-dma-tasks-to-npu,aie-dma-to-npu,aie-lower-set-lock)"
)
_CORES = (
    "aie.device(aie-localize-locks,aie-normalize-address-spaces,aie-transform-bfp-types),aie-standard-lowering,"
    "aiex-standard-lowering,convert-aievec-to-llvm,canonicalize,cse,convert-vector-to-llvm,expand-strided-metadata,"
    "lower-affine,convert-scf-to-cf,convert-math-to-llvm,convert-index-to-llvm,arith-expand,convert-arith-to-llvm,"
    "finalize-memref-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv=true},convert-cf-to-llvm,"
    "canonicalize,cse"
)

#: The safety net on one tool call; a call that takes longer is reported as such, never waited on.
TOOL_TIMEOUT_S = 300


class VendorFlowError(TileLangError):
    """An mlir-aie tool rejected a module, or is not installed; names the stage and the tool's message."""

    def __init__(self, stage: str, message: str):
        super().__init__(f"mlir-aie {stage} stage failed: {message}")
        self.stage = stage
        self.tool_message = message


@dataclass(frozen=True)
class AieTools:
    """Paths of mlir-aie's ``aie-opt`` and ``aie-translate``."""

    aie_opt: str
    aie_translate: str


def _checkout_tools() -> Path:
    return Path(__file__).resolve().parents[4] / "shared" / "tools" / "mlir-aie"


def find_tools() -> AieTools | None:
    """mlir-aie's tools: ``$AIE_OPT``/``$AIE_TRANSLATE``, else ``PATH``, else ``../shared/tools/mlir-aie``.

    Returns:
        The tools, or None when either is missing.
    """
    found = {}
    for name, env in (("aie-opt", "AIE_OPT"), ("aie-translate", "AIE_TRANSLATE")):
        path = os.environ.get(env) or shutil.which(name)
        if not path:
            candidate = _checkout_tools() / name
            path = str(candidate) if candidate.is_file() else None
        if not path:
            return None
        found[name] = path
    return AieTools(found["aie-opt"], found["aie-translate"])


def missing_tools_reason() -> str:
    """One line saying why the vendor flow cannot run here (empty when it can)."""
    if find_tools() is not None:
        return ""
    return (
        "mlir-aie's aie-opt/aie-translate not found (set $AIE_OPT and $AIE_TRANSLATE, put them on PATH, "
        f"or place them in {_checkout_tools()})"
    )


def require_tools() -> AieTools:
    """The tools, or a VendorFlowError saying how to make them available."""
    tools = find_tools()
    if tools is None:
        raise VendorFlowError("setup", missing_tools_reason())
    return tools


def _env() -> dict[str, str]:
    # The prebuilt tools' wrapper finds libLLVM.so through a Python that has the mlir extra: this one.
    env = dict(os.environ)
    env.setdefault("TL_PYTHON", sys.executable)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def run_tool(tool: str, args: list[str], text: str, stage: str) -> str:
    """Run one tool on ``text`` (stdin); its stdout, or VendorFlowError with its diagnostics.

    Args:
        tool: the tool's path.
        args: its arguments.
        text: the input module.
        stage: the stage's name, for the error.

    Returns:
        What the tool printed on stdout.

    Raises:
        VendorFlowError: non-zero exit, or the safety-net time limit fired.
    """
    try:
        proc = subprocess.run(
            [tool, *args, "-"], input=text, capture_output=True, text=True, env=_env(), timeout=TOOL_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise VendorFlowError(stage, f"{os.path.basename(tool)} did not finish in {TOOL_TIMEOUT_S} s") from None
    except OSError as e:
        raise VendorFlowError(stage, f"cannot run {tool}: {e}") from None
    if proc.returncode != 0:
        raise VendorFlowError(stage, _diagnostics(proc.stderr) or f"exit status {proc.returncode}")
    return proc.stdout


def _diagnostics(stderr: str) -> str:
    """The tool's error lines (with their notes), without the input echo lines."""
    lines = [ln.replace("<stdin>:", "line ") for ln in stderr.strip().splitlines()]
    keep = [ln for ln in lines if re.match(r"line \d+:\d+: (error|note|warning)", ln) or "error" in ln.lower()]
    return "\n".join((keep or lines)[:12])


@dataclass
class VendorResult:
    """What the vendor flow produced for one module.

    Attributes:
        level: the emitted level.
        modules: the module after each aie-opt stage, by stage name.
        npu_insts: the NPU instruction binary (NPU devices), else None.
        config: the configuration files by name: CDO binaries (NPU) or ``aie_inc.cpp`` (AIE1).
        cores_llvm_ir: the core bodies as LLVM IR text.
        seconds: wall time per stage (not part of any result).
    """

    level: str
    modules: dict[str, str] = field(default_factory=dict)
    npu_insts: bytes | None = None
    config: dict[str, bytes] = field(default_factory=dict)
    cores_llvm_ir: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    def write(self, out_dir: str | os.PathLike) -> list[Path]:
        """Write every artefact into ``out_dir``; the paths written."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for stage, text in self.modules.items():
            written.append(_write(out / f"{stage}.mlir", text.encode()))
        if self.npu_insts is not None:
            written.append(_write(out / "insts.bin", self.npu_insts))
        for name, data in self.config.items():
            written.append(_write(out / name, data))
        if self.cores_llvm_ir:
            written.append(_write(out / "cores.ll", self.cores_llvm_ir.encode()))
        return written


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def device_family(text: str) -> str:
    """``"aie1"`` or ``"npu"`` from the module's ``aie.device`` (either printed form)."""
    from tilelang.backends.mlir.enums import AIE_DEVICE

    m = re.search(r"aie\.device\((\w+)\)", text)
    name = m.group(1) if m else None
    if name is None:
        m = re.search(r"[{<, ]device = (\d+) : i32", text)
        by_id = {v: k for k, v in AIE_DEVICE.items()}
        name = by_id.get(int(m.group(1))) if m else None
    if name is None:
        raise VendorFlowError("setup", "the module has no aie.device mlir-aie knows")
    from tilelang.devices import device

    return "aie1" if device(name).arch.name == "aie1" else "npu"


def compile_text(text: str, level: str = "objectfifo", tools: AieTools | None = None) -> VendorResult:
    """Take an emitted module through mlir-aie's flow; see the module docstring for the stages.

    Args:
        text: the module, as ``tl.emit_mlir`` prints it (generic form) or in mlir-aie's custom form.
        level: the level it was emitted at (decides the buffer allocation scheme and whether to route).
        tools: the tools to use (found when None).

    Returns:
        The modules after each stage and the artefacts.

    Raises:
        VendorFlowError: a stage failed (its name and mlir-aie's message), or the tools are missing.
    """
    if level not in LEVELS:
        raise VendorFlowError("setup", f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    tools = tools or require_tools()
    aie1 = device_family(text) == "aie1"
    res = VendorResult(level)

    def opt(stage: str, pipeline: str, source: str) -> str:
        start = time.perf_counter()
        out = run_tool(tools.aie_opt, [f"--pass-pipeline=builtin.module({pipeline})"], source, stage)
        res.seconds[stage] = time.perf_counter() - start
        res.modules[stage] = out
        return out

    # physical: keep the planned addresses; objectfifo: the pass's own default, as aiecc runs it without
    # --alloc-scheme (bank-aware, and basic-sequential where bank-aware fails on a tile)
    scheme = "{alloc-scheme=basic-sequential}" if level == "physical" else ""
    placed = opt("lower", _LOWER.format(scheme=scheme), text)
    if level == "objectfifo":
        placed = opt("route", _ROUTE, placed)
    if not aie1:
        npu = opt("npu", _NPU, placed)
        start = time.perf_counter()
        res.npu_insts = _translate_binary(tools, npu)
        res.seconds["insts"] = time.perf_counter() - start
    start = time.perf_counter()
    res.config = _configuration(tools, placed, aie1)
    res.seconds["config"] = time.perf_counter() - start
    lowered = opt("cores", _CORES, placed)
    start = time.perf_counter()
    res.cores_llvm_ir = run_tool(tools.aie_translate, ["--mlir-to-llvmir"], lowered, "cores-llvm-ir")
    res.seconds["cores-llvm-ir"] = time.perf_counter() - start
    return res


def _translate_binary(tools: AieTools, npu_module: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="tilelang-insts-") as tmp:
        out = Path(tmp) / "insts.bin"
        run_tool(tools.aie_translate, ["--aie-npu-to-binary", "-o", str(out)], npu_module, "insts")
        return out.read_bytes()


def _configuration(tools: AieTools, placed: str, aie1: bool) -> dict[str, bytes]:
    if aie1:
        generic = run_tool(tools.aie_opt, ["--mlir-print-op-generic"], placed, "config")
        config = run_tool(tools.aie_translate, ["--aie-generate-xaie"], with_elf_files(generic), "config")
        return {"aie_inc.cpp": config.encode()}
    with tempfile.TemporaryDirectory(prefix="tilelang-cdo-") as tmp:
        run_tool(tools.aie_translate, ["--aie-generate-cdo", f"--work-dir-path={tmp}"], placed, "config")
        return {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir()) if p.is_file()}


_TILE = re.compile(r'(%[\w.]+) = "aie\.tile"\(\) <\{col = (\d+) : i32, row = (\d+) : i32\}>')
_CORE = re.compile(r'^(\s*)(%[\w.]+ = )?"aie\.core"\((%[\w.]+)\)( <\{(.*)\}>)? \(\{$')


def with_elf_files(generic_text: str) -> str:
    """Every ``aie.core`` as aiecc leaves it after compiling the cores: an empty body and
    ``elf_file = "core_<col>_<row>.elf"`` (generic form in and out).

    aie-rt's configuration loads each core's program from that file; the AIE1 configuration generator requires
    the attribute, and with it an empty body (the ELF itself needs the AIE compiler, which this flow does not run).
    """
    tiles = {m.group(1): (m.group(2), m.group(3)) for m in _TILE.finditer(generic_text)}
    out: list[str] = []
    lines = iter(generic_text.splitlines())
    for line in lines:
        m = _CORE.match(line)
        if not m:
            out.append(line)
            continue
        indent, result, tile, props = m.group(1), m.group(2) or "", m.group(3), m.group(5)
        col, row = tiles[tile]
        elf = f'elf_file = "core_{col}_{row}.elf"'
        props = f"{elf}, {props}" if props else elf
        out.append(f'{indent}{result}"aie.core"({tile}) <{{{props}}}> ({{')
        out.append(f'{indent}  "aie.end"() : () -> ()')
        for body in lines:  # the region ends at the first line back at the op's indentation
            if body.startswith(indent + "})"):
                out.append(body)
                break
    return "\n".join(out) + "\n"


def compile_plan(plan, level: str = "objectfifo", tools: AieTools | None = None) -> VendorResult:  # noqa: ANN001
    """Emit ``plan`` at ``level`` and take it through mlir-aie's flow (:func:`compile_text`)."""
    from tilelang.backends.mlir.emit import emit_mlir

    return compile_text(emit_mlir(plan, level=level), level, tools)


def pretty(text: str, tools: AieTools | None = None) -> str:
    """The module in mlir-aie's custom assembly (aie-opt's own printer), the form IRON users read.

    Raises:
        VendorFlowError: aie-opt is missing or rejects the module.
    """
    tools = tools or require_tools()
    return run_tool(tools.aie_opt, [], text, "print")


_BUFFER = re.compile(r"aie\.buffer\([^)]*\)\s*\{([^}]*)\}")
_LOCK = re.compile(r"aie\.lock\([^,]*,\s*(\d+)\)\s*\{([^}]*)\}")
_ATTR = re.compile(r'(\w+)\s*=\s*("[^"]*"|[-\d]+)')


def placed_resources(custom_text: str) -> dict[str, dict[str, int]]:
    """Buffer addresses and banks, lock ids, of a module in custom form, by symbol name."""
    out: dict[str, dict[str, int]] = {"address": {}, "mem_bank": {}, "lock": {}}
    for m in _BUFFER.finditer(custom_text):
        attrs = {k: v.strip('"') for k, v in _ATTR.findall(m.group(1))}
        for key in ("address", "mem_bank"):
            if key in attrs and "sym_name" in attrs:
                out[key][attrs["sym_name"]] = int(attrs[key])
    for m in _LOCK.finditer(custom_text):
        attrs = {k: v.strip('"') for k, v in _ATTR.findall(m.group(2))}
        if "sym_name" in attrs:
            out["lock"][attrs["sym_name"]] = int(m.group(1))
    return out


def check_preserved(emitted: str, result: VendorResult, tools: AieTools | None = None) -> list[str]:
    """Planned buffer addresses, banks and lock ids that mlir-aie's lowering changed (empty: none).

    Compares the emitted physical module with the ``lower`` stage's output, by symbol name.
    """
    before = placed_resources(pretty(emitted, tools))
    after = placed_resources(result.modules["lower"])
    changed = []
    for key, names in before.items():
        for name, value in sorted(names.items()):
            if after[key].get(name) != value:
                changed.append(f"{key} of {name}: planned {value}, after lowering {after[key].get(name)}")
    return changed
