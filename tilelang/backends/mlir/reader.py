"""Read an objectfifo-level mlir-aie module (what IRON and hand-written mlir-aie designs give
``aiecc``) into a tilelang Design, so it can be planned and simulated.

The module is read as MLIR's generic form (custom assembly is first printed generic by mlir-aie's own
``aie-opt``) with the upstream bindings, the aie dialect's ops unregistered. What is read:

- ``aie.device``: the device (mlir-aie's AIEDevice number, ``enums.AIE_DEVICE``);
- ``aie.tile``: coordinates; ``aie.core`` on a tile: a core pinned there;
- ``aie.objectfifo``: a fifo (name, element memref, depth); a shim end is a host end;
- ``aie.objectfifo.link``: a memtile forward or join (``src_offsets``), the output's
  ``dimensionsToStream`` its re-layout, or a split (``dst_offsets``);
- ``func.func`` declarations: kernels. A kernel given in ``kernels`` by name is used as given (its
  signature must match); any other is an extern kernel with no numpy reference and no cycles, the
  parameters it writes those the calls pass from a fifo's produce side (so it runs in timing mode,
  given its cycles: ``tl.simulate(..., mode="timing", kernel_cycles={...})``);
- a core body: ``scf.for`` with constant bounds, ``aie.objectfifo.acquire`` / ``subview.access`` /
  ``release``, ``func.call`` with element, constant and loop-index arguments. An outermost loop
  without end (IRON's ``range_(sys.maxsize)``, or 2**32 - 1) runs as many times as the data moved
  through its fifos allows (each fifo's elements over the run, from the runtime sequence through the
  links and the other cores);
- ``aie.runtime_sequence``: ``aiex.npu.dma_memcpy_nd`` and ``aiex.dma_configure_task_for`` with its
  ``aie.dma_bd`` become host moves, in order, on the tensors named ``arg0``, ``arg1``, ... (the
  sequence's arguments); waits are left to tilelang's own runtime sequence (moves on one fifo complete
  in order; tilelang/ir/sequence.py).

Anything else (physical-level ops: buffers, locks, flows, DMA programs; other ops in a core body or
the sequence; data layouts other than a forward link's) is a DesignError naming the op, so a module is
read whole or not at all. Links, shim ends and shared-memory buffers (``aie.objectfifo.allocate``) are
placed by the planner, not at the module's tiles.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.enums import AIE_DEVICE
from tilelang.devices import Device, device
from tilelang.errors import DesignError, TileLangError
from tilelang.ir.design import (
    Acquire,
    Arg,
    BufArg,
    ConstArg,
    Core,
    Design,
    Dma,
    ElemArg,
    Endpoint,
    EndpointKind,
    Fifo,
    Link,
    LinkKind,
    LocalBuffer,
    Loop,
    LoopVarArg,
    Port,
    Release,
    Stmt,
    TensorDecl,
    call_counts,
    released,
)
from tilelang.ir.dtypes import DTYPES, DType
from tilelang.ir.kernel import AnyKernel, ExternKernel, Param
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.types import TensorType, TileType
from tilelang.ir.verify import core_ports, verify_design

#: Safety net of the child that parses a module first (:func:`_parses`): a module parses in milliseconds.
PARSE_SECONDS = 60.0
#: A loop at least this long runs "forever" (IRON's ``range_(sys.maxsize)``, older designs' 2**32 - 1):
#: its trip count comes from the data moved.
FOREVER = 2**31 - 1
#: Ops that only make values the reader takes from their defining op when used.
_VALUES = ("arith.constant", "arith.index_cast", "aie.objectfifo.subview.access")
#: The generic name ``func.call`` is read under: the bindings verify a call against its callee's symbol
#: table, which the unregistered ``aie.device`` does not provide.
_CALL = "tlread.call"


def read_mlir(source: str | os.PathLike, kernels: Mapping[str, AnyKernel] | None = None,
              name: str | None = None) -> Design:
    """The Design of an objectfifo-level mlir-aie module (module docstring).

    Args:
        source: a path to a ``.mlir`` file, or the module's text (generic or custom assembly; custom
            assembly needs mlir-aie's ``aie-opt``, found as ``tilelang compile`` finds it).
        kernels: kernels by name (``tl.kernel`` or ``tl.extern_kernel``) for the module's ``func.func``
            declarations, to give them numbers and cycles; the others are read as extern kernels
            without either.
        name: the design's name (default: the file's stem, or "imported").

    Returns:
        The Design, verified.

    Raises:
        DesignError: a construct the reader does not take, or an inconsistent module, named.
        TileLangError: the text is not MLIR, or custom assembly without aie-opt.
    """
    text, default_name = _source(source)
    module = _parse(_generic(text))
    return _Reader(kernels or {}, name or default_name).read(module)


def _source(source: str | os.PathLike) -> tuple[str, str]:
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source
                                           and source.strip().endswith(".mlir")):
        path = Path(source)
        try:
            return path.read_text(), re.sub(r"\W", "_", path.stem) or "imported"
        except OSError as e:
            raise TileLangError(f"cannot read {path}: {e.strerror or e}") from None
    if not isinstance(source, str):
        raise DesignError(f"read_mlir takes a path or the module's text, got {type(source).__name__}")
    return source, "imported"


def _generic(text: str) -> str:
    """The module in generic form: as given when it is, else printed by aie-opt."""
    if '"aie.device"' in text:
        return text
    from tilelang.backends.mlir.vendor import find_tools, missing_tools_reason, run_tool

    tools = find_tools()
    if tools is None:
        raise TileLangError("reading mlir-aie's custom assembly needs its aie-opt (print the module with "
                            f"--mlir-print-op-generic to read it without): {missing_tools_reason()}")
    return run_tool(tools.aie_opt, ["--mlir-print-op-generic"], text, "read")


def _parse(text: str) -> object:
    """The module, parsed by the upstream bindings (first in a child process: see :func:`_parses`)."""
    text = text.replace('"func.call"(', f'"{_CALL}"(')
    _parses(text)
    ir = mlir().ir
    ctx = ir.Context()
    ctx.enable_multithreading(False)  # (no worker threads for a later fork to lose: the planner forks its solves)
    ctx.allow_unregistered_dialects = True
    try:
        return ir.Module.parse(text, ctx)
    except Exception as e:  # noqa: BLE001 - the bindings' MLIRError: the parser's diagnostics
        raise TileLangError(f"not an MLIR module: {str(e).splitlines()[0] if str(e) else e}") from None


def _parses(text: str) -> None:
    """Parse ``text`` in a child interpreter first. Some malformed modules fail an assertion inside MLIR's
    C++ (an ``scf.for`` whose body block lacks its induction variable aborts in the op's verifier), which
    would end this process; in a child the abort is an error with a message. (A fresh interpreter, not a
    fork: a forked child of a process whose MLIR worker threads are gone can wait on them forever.)

    Raises:
        TileLangError: the child reported a parse error, aborted, or did not finish in ``PARSE_SECONDS``.
    """
    try:
        proc = subprocess.run([sys.executable, "-c", _PARSE_CHILD], input=text, capture_output=True, text=True,
                              timeout=PARSE_SECONDS)
    except subprocess.TimeoutExpired:
        raise TileLangError(f"parsing the module did not finish in {PARSE_SECONDS:g} s") from None
    if proc.returncode == 0:
        return
    if proc.returncode == _PARSE_FAILED:
        raise TileLangError(f"not an MLIR module: {proc.stdout.strip()}")
    raise TileLangError(f"not an MLIR module: MLIR's parser aborted on it (exit status {proc.returncode}); "
                        "mlir-aie's aie-opt names what is malformed")


#: The child's exit status for a module that does not parse (its first diagnostic line on stdout).
_PARSE_FAILED = 3
_PARSE_CHILD = f"""
import sys
from mlir import ir
c = ir.Context()
c.enable_multithreading(False)
c.allow_unregistered_dialects = True
try:
    ir.Module.parse(sys.stdin.read(), c)
except Exception as e:
    print(str(e).splitlines()[0] if str(e) else type(e).__name__)
    sys.exit({_PARSE_FAILED})
"""


def _ops(region_holder: object, index: int = 0) -> list:
    op = region_holder.operation if hasattr(region_holder, "operation") else region_holder
    blocks = list(op.regions[index].blocks)
    return [o.operation for o in blocks[0].operations] if blocks else []


def _attr(op: object, key: str) -> object | None:
    return op.attributes[key] if key in op.attributes else None


def _int(op: object, key: str) -> int:
    a = _attr(op, key)
    if a is None:
        raise DesignError(f"{op.name}: no attribute {key!r}")
    return _whole(str(a).split(":")[0], f"{op.name} {key}")


def _whole(text: str, what: str) -> int:
    try:
        return int(text.strip(), 0)
    except ValueError:
        raise DesignError(f"{what}: expected an integer, got {text.strip()!r}") from None


def _symbol(op: object, key: str) -> str:
    a = _attr(op, key)
    if a is None:
        raise DesignError(f"{op.name}: no attribute {key!r}")
    return str(a).lstrip("@").strip('"')


def _symbols(attr: object) -> list[str]:
    return re.findall(r"@\"?([\w.$-]+)\"?", str(attr))


def _ints(attr: object | None) -> list[int]:
    """The integers of an integer, array or dense-array attribute (their types' widths left out)."""
    if attr is None:
        return []
    text = str(attr)
    text = text.split(":", 1)[1] if text.startswith("array<") else re.sub(r":\s*(i\d+|index)", "", text)
    return [int(x) for x in re.findall(r"-?\d+", text)]


def _dtype(text: str, where: str) -> DType:
    if text not in DTYPES:
        raise DesignError(f"{where}: element type {text} is not one of tilelang's ({', '.join(DTYPES)})")
    return DTYPES[text]


def _memref(text: str, where: str) -> tuple[tuple[int, ...], DType]:
    m = re.search(r"memref<([^>]*)>", text)
    inner = m.group(1).split(",")[0].strip() if m is not None else ""  # (a memory space after the comma)
    parts = inner.split("x")
    if m is None or not all(p.isdigit() for p in parts[:-1]):
        raise DesignError(f"{where}: expected a static memref, got {text}")
    dims = tuple(int(p) for p in parts[:-1])
    return dims or (1,), _dtype(parts[-1], where)


def _dims(attr: object | None) -> list[tuple[int, int]]:
    """(size, stride) pairs of a ``bd_dim_layout_array``, outermost first."""
    if attr is None:
        return []
    return [(int(s), int(t)) for s, t in re.findall(r"size\s*=\s*(\d+)\s*,\s*stride\s*=\s*(\d+)", str(attr))]


@dataclass
class _Fifo:
    name: str
    elem: TileType
    depth: int
    producer: tuple[int, int]
    consumers: list[tuple[int, int]]
    to_stream: list[tuple[int, int]]


class _Reader:
    def __init__(self, kernels: Mapping[str, AnyKernel], name: str) -> None:
        self.given = dict(kernels)
        self.name = name
        self.device: Device | None = None
        self.fifos: dict[str, _Fifo] = {}
        self.decls: dict[str, tuple[list[Param], str | None]] = {}
        self.links: list[Link] = []
        self.cores: list[tuple[tuple[int, int], object, str | None]] = []
        self.sequence: object | None = None
        #: core-local buffers by their value: (tile, buffer)
        self.buffers: dict[object, tuple[tuple[int, int], LocalBuffer]] = {}
        #: per function, the positions of the arguments its calls write (produce-side elements, buffers)
        self._writes: dict[str, set[int]] = {}
        #: loop induction variables (values) by nesting depth
        self._ivs: dict[object, int] = {}
        self._n_moves = 0

    # -- the device body -------------------------------------------------------------------------

    def read(self, module: object) -> Design:
        tops = [o.operation for o in module.body.operations]
        devs = [o for o in tops if o.name == "aie.device"]
        if len(devs) != 1:
            raise DesignError(f"expected one aie.device in the module, found {len(devs)}")
        dev = devs[0]
        number = _int(dev, "device")
        names = [n for n, v in AIE_DEVICE.items() if v == number]
        if not names:
            raise DesignError(f"aie.device {number} is not a device tilelang models ({', '.join(AIE_DEVICE)})")
        self.device = device(names[0])
        for op in _ops(dev):
            self._top(op)
        return self._design()

    def _tile(self, value: object, where: str) -> tuple[int, int]:
        owner = value.owner
        op = owner.operation if hasattr(owner, "operation") else owner
        if getattr(op, "name", "") != "aie.tile":
            raise DesignError(f"{where}: expected an aie.tile operand")
        return _int(op, "col"), _int(op, "row")

    def _top(self, op: object) -> None:
        kind = op.name
        if kind in ("aie.tile", "aie.end", "aie.objectfifo.allocate"):
            return  # (allocate: which tile holds a fifo's buffers, a placement left to the planner)
        if kind == "aie.objectfifo":
            self._fifo(op)
        elif kind == "aie.objectfifo.link":
            self._link(op)
        elif kind == "func.func":
            self._decl(op)
        elif kind == "aie.buffer":
            self._buffer(op)
        elif kind == "aie.core":
            self.cores.append((self._tile(op.operands[0], "aie.core"), op, _link_with(op)))
        elif kind in ("aie.runtime_sequence", "aiex.runtime_sequence"):
            if self.sequence is not None:
                raise DesignError("the module has more than one runtime sequence; tilelang's design has one")
            self.sequence = op
        elif kind in ("aie.external_buffer", "aie.objectfifo.register_external_buffers"):
            raise DesignError(f"{kind}: an AIE1 module's host buffers are not read (read_mlir takes NPU modules, "
                              "whose host moves are a runtime sequence)")
        else:
            raise DesignError(f"{kind}: read_mlir takes objectfifo-level modules (IRON's output, before "
                              "aie-opt lowers fifos to buffers, locks and flows); this op is not one it reads")

    def _fifo(self, op: object) -> None:
        name = _symbol(op, "sym_name")
        where = f"objectfifo @{name}"
        for key in ("plio", "via_DMA", "disable_synchronization", "iter_count", "initValues", "repeat_count",
                    "padDimensions", "aie_stream", "via_shared_mem"):
            a = _attr(op, key)
            if a is not None and str(a) not in ("false", "0 : i32", "[]", "unit"):
                raise DesignError(f"{where}: attribute {key} = {a} is not read")
        shape, dt = _memref(str(_attr(op, "elemType")), where)
        depths = _ints(_attr(op, "elemNumber"))
        if not depths or len(set(depths)) != 1:
            raise DesignError(f"{where}: depth {_attr(op, 'elemNumber')}; tilelang's fifos have one depth for every end")
        from_stream = _attr(op, "dimensionsFromStreamPerConsumer")
        if from_stream is not None and _dims(from_stream):
            raise DesignError(f"{where}: dimensionsFromStreamPerConsumer (a consumer's re-layout) is not read")
        tiles = [self._tile(v, where) for v in op.operands]
        self.fifos[name] = _Fifo(name, TileType(shape, dt), depths[0], tiles[0], tiles[1:],
                                 _dims(_attr(op, "dimensionsToStream")))

    def _buffer(self, op: object) -> None:
        name = _symbol(op, "sym_name") if _attr(op, "sym_name") is not None else f"buf{len(self.buffers)}"
        where = f"aie.buffer @{name}"
        if _attr(op, "initial_value") is not None:
            raise DesignError(f"{where}: an initial value is not read (a core's buffers start as zeros)")
        shape, dt = _memref(str(op.results[0].type), where)
        tile = self._tile(op.operands[0], where)
        self.buffers[op.results[0]] = (tile, LocalBuffer(name, TileType(shape, dt)))

    def _link(self, op: object) -> None:
        ins, outs = _symbols(_attr(op, "fifoIns")), _symbols(_attr(op, "fifoOuts"))
        src_off, dst_off = _ints(_attr(op, "src_offsets")), _ints(_attr(op, "dst_offsets"))
        where = f"objectfifo.link {ins} -> {outs}"
        for f in ins + outs:
            if f not in self.fifos:
                raise DesignError(f"{where}: no objectfifo @{f} declared before it")
        if len(ins) == 1 and len(outs) == 1:
            out, src = self.fifos[outs[0]], self.fifos[ins[0]]
            if out.elem.numel != src.elem.numel:
                raise DesignError(f"{where}: @{ins[0]} holds {src.elem.numel} values an element and @{outs[0]} "
                                  f"{out.elem.numel}; a forward link of elements of different sizes is not read")
            pattern = None
            if out.to_stream:
                sizes, strides = zip(*out.to_stream, strict=True)
                pattern = AccessPattern(0, tuple(sizes), tuple(strides))
                out.to_stream = []
            self.links.append(Link(f"link_{outs[0]}", LinkKind.FORWARD, (ins[0],), (outs[0],), pattern=pattern))
        elif len(ins) == 1:
            self.links.append(Link(f"split_{ins[0]}", LinkKind.SPLIT, (ins[0],), tuple(outs), tuple(dst_off)))
        elif len(outs) == 1:
            out = self.fifos[outs[0]]
            pattern = None
            if out.to_stream:  # the joined element re-laid out as the memtile sends it
                sizes, strides = zip(*out.to_stream, strict=True)
                pattern = AccessPattern(0, tuple(sizes), tuple(strides))
                out.to_stream = []
            self.links.append(Link(f"join_{outs[0]}", LinkKind.JOIN, tuple(ins), (outs[0],), tuple(src_off), pattern))
        else:
            raise DesignError(f"{where}: a link of several fifos into several is not a memtile link tilelang has")

    def _decl(self, op: object) -> None:
        name = _symbol(op, "sym_name")
        if _attr(op, "function_type") is None:
            raise DesignError(f"func.func @{name}: no function_type")
        ftype = mlir().ir.FunctionType(op.attributes["function_type"].value)
        params: list[Param] = []
        for i, t in enumerate(ftype.inputs):
            text = str(t)
            where = f"func.func @{name} parameter {i}"
            if text.startswith("memref<"):
                shape, dt = _memref(text, where)
                params.append(Param(f"p{i}", TileType(shape, dt)))
            else:
                params.append(Param(f"p{i}", _dtype(text, where)))
        if list(ftype.results):
            raise DesignError(f"func.func @{name} returns values; a kernel writes its tile parameters")
        self.decls[name] = (params, _link_with(op))

    # -- core programs -----------------------------------------------------------------------------

    def _core(self, tile: tuple[int, int], op: object) -> tuple[Core, bool]:
        name = f"core_{tile[0]}_{tile[1]}"
        self._tile_of_core = tile
        forever = [False]
        self._used: list[LocalBuffer] = []
        body = self._body(_ops(op), depth=0, where=f"core {name} {tile}", forever=forever)
        return Core(name, tuple(body), tile=tile, buffers=tuple(self._used)), forever[0]

    def _body(self, ops: list, depth: int, where: str, forever: list[bool]) -> list[Stmt]:
        out: list[Stmt] = []
        for op in ops:
            kind = op.name
            if kind in _VALUES or kind in ("scf.yield", "aie.end"):
                continue
            if kind == "scf.for":
                lo, hi, step = (self._const(v, where) for v in op.operands[:3])
                if len(op.operands) > 3 or list(op.results):
                    raise DesignError(f"{where}: an scf.for carrying values is not read")
                self._ivs[self._iv(op)] = depth
                inner = self._body(_ops(op), depth + 1, where, forever)
                if hi - lo >= FOREVER:
                    if depth:
                        raise DesignError(f"{where}: only the outermost loop may run without end")
                    forever[0] = True
                    hi = lo + step  # one trip for now: the count comes from the data moved (_trips)
                out.append(Loop(lo, hi, step, tuple(inner)))
            elif kind in ("aie.objectfifo.acquire", "aie.objectfifo.release"):
                fifo = _symbol(op, "objFifo_name")
                if fifo not in self.fifos:
                    raise DesignError(f"{where}: {kind} of an undeclared objectfifo @{fifo}")
                port = Port.PRODUCE if _int(op, "port") == 0 else Port.CONSUME
                n = _int(op, "size")
                out.append(Acquire(fifo, port, n) if kind.endswith("acquire") else Release(fifo, port, n))
            elif kind == _CALL:
                out.append(self._call(op, where))
            else:
                raise DesignError(f"{where}: {kind} in a core body is not read (loops, fifo acquires and releases "
                                  "and kernel calls are)")
        return out

    def _iv(self, loop: object) -> object:
        return list(loop.regions[0].blocks)[0].arguments[0]

    def _const(self, value: object, where: str) -> int:
        owner = value.owner
        op = owner.operation if hasattr(owner, "operation") else owner
        if getattr(op, "name", "") != "arith.constant":
            raise DesignError(f"{where}: a loop bound that is not a constant is not read")
        return _whole(str(op.attributes["value"]).split(":")[0], f"{where}: a loop bound")

    def _call(self, op: object, where: str) -> object:
        from tilelang.ir.design import Call

        callee = _symbol(op, "callee")
        if callee not in self.decls:
            raise DesignError(f"{where}: call of @{callee}, which the module does not declare")
        args: list[Arg] = []
        writes = self._writes.setdefault(callee, set())
        for i, v in enumerate(op.operands):
            owner = v.owner
            d = owner.operation if hasattr(owner, "operation") else owner
            kind = getattr(d, "name", "")
            if v in self.buffers:
                btile, buf = self.buffers[v]
                if btile != self._tile_of_core:
                    raise DesignError(f"{where}: argument {i} of @{callee} is aie.buffer @{buf.name} of tile {btile}, "
                                      "another core's memory")
                if buf not in self._used:
                    self._used.append(buf)
                args.append(BufArg(buf.name))
                writes.add(i)
            elif kind in ("aie.objectfifo.subview.access", "aie.objectfifo.acquire"):
                # (newer mlir-aie: an acquire of one element is the element's memref itself)
                if kind == "aie.objectfifo.acquire":
                    acquire, index = d, 0
                else:
                    acquire = d.operands[0].owner
                    acquire, index = acquire.operation if hasattr(acquire, "operation") else acquire, _int(d, "index")
                fifo = _symbol(acquire, "objFifo_name")
                args.append(ElemArg(fifo, index))
                if _int(acquire, "port") == 0:
                    writes.add(i)
            elif kind == "arith.constant":
                text = str(d.attributes["value"])
                value, _, typ = text.partition(":")
                dt = _dtype(typ.strip(), f"{where}: constant argument {i} of @{callee}")
                try:
                    args.append(ConstArg(float(value) if dt.is_float else int(value.strip(), 0), dt))
                except ValueError:
                    raise DesignError(f"{where}: constant argument {i} of @{callee} is {text}") from None
            elif kind == "arith.index_cast" and self._ivs.get(d.operands[0]) is not None:
                dt = _dtype(str(d.results[0].type), f"{where}: argument {i} of @{callee}")
                args.append(LoopVarArg(self._ivs[d.operands[0]], dt))
            else:
                raise DesignError(f"{where}: argument {i} of @{callee} comes from {kind or 'a block argument'}; "
                                  "fifo elements, constants and loop indices are read")
        return Call(callee, tuple(args))

    # -- the runtime sequence ------------------------------------------------------------------------

    def _moves(self, tensors: list[TensorDecl]) -> list[Dma]:
        if self.sequence is None:
            return []
        block = list(self.sequence.regions[0].blocks)[0]
        args = {a: t for a, t in zip(block.arguments, tensors, strict=True)}
        moves: list[Dma] = []
        for op in [o.operation for o in block.operations]:
            kind = op.name
            if kind == "aiex.npu.dma_memcpy_nd":
                offsets, sizes, strides = self._nd(op, kind)
                strides[-1] = strides[-1] or 1
                offset = sum(o * s for o, s in zip(offsets, strides, strict=True))
                moves.append(self._move(_symbol(op, "metadata"), args, op.operands[0], offset, sizes, strides, kind))
            elif kind == "arith.constant":
                continue  # (a value the moves read)
            elif kind == "aiex.dma_configure_task_for":
                fifo = _symbol(op, "alloc")
                for bd in _ops(op):
                    if bd.name == "aie.end":
                        continue
                    if bd.name != "aie.dma_bd":
                        raise DesignError(f"{kind} @{fifo}: {bd.name} in a task is not read (aie.dma_bd is)")
                    dims = _dims(_attr(bd, "dimensions"))
                    length = _int(bd, "len")
                    sizes, strides = ([s for s, _ in dims], [t for _, t in dims]) if dims else ([length], [1])
                    moves.append(self._move(fifo, args, bd.operands[0], _int(bd, "offset") if _attr(bd, "offset")
                                            is not None else 0, sizes, strides, kind))
            elif kind in ("aiex.npu.dma_wait", "aiex.npu.sync", "aiex.dma_start_task", "aiex.dma_await_task",
                          "aiex.dma_free_task", "aie.end"):
                continue  # tilelang's runtime sequence issues and waits for the moves itself
            else:
                raise DesignError(f"{kind} in the runtime sequence is not read (host moves are: "
                                  "aiex.npu.dma_memcpy_nd, aiex.dma_configure_task_for)")
        return moves

    def _nd(self, op: object, kind: str) -> tuple[list[int], list[int], list[int]]:
        """The offsets, sizes and strides of a dma_memcpy_nd: static, or operands that are constants."""
        groups = _ints(_attr(op, "operandSegmentSizes")) or [1, 0, 0, 0]
        operands = list(op.operands)[groups[0]:]
        out = []
        for key, n in zip(("static_offsets", "static_sizes", "static_strides"), groups[1:], strict=True):
            values = _ints(_attr(op, key))
            dynamic = [i for i, v in enumerate(values) if v == -(2**63)]  # (MLIR's ShapedType::kDynamic)
            if len(dynamic) != n:
                raise DesignError(f"{kind}: {key} has {len(dynamic)} dynamic entries for {n} operands")
            for i in dynamic:
                values[i] = self._const(operands.pop(0), f"{kind} @{_symbol(op, 'metadata')}")
            if len(values) != 4:
                raise DesignError(f"{kind}: {key} has {len(values)} entries, not 4")
            out.append(values)
        return out[0], out[1], out[2]

    def _move(self, fifo: str, args: dict, value: object, offset: int, sizes: list[int], strides: list[int],
              kind: str) -> Dma:
        if fifo not in self.fifos:
            raise DesignError(f"{kind}: no objectfifo @{fifo}")
        if value not in args:
            raise DesignError(f"{kind} @{fifo}: its buffer is not an argument of the runtime sequence")
        f = self.fifos[fifo]
        shim = self.device.tile_kind(f.producer) == "shim"  # type: ignore[union-attr]
        if not shim and not any(self.device.tile_kind(c) == "shim" for c in f.consumers):  # type: ignore[union-attr]
            raise DesignError(f"{kind}: objectfifo @{fifo} has no end on a shim tile")
        while len(sizes) > 1 and sizes[0] == 1:
            sizes, strides = sizes[1:], strides[1:]
        pattern = AccessPattern(offset, tuple(sizes), tuple(strides))
        tensor = Endpoint(EndpointKind.TENSOR, args[value].name)
        end = Endpoint(EndpointKind.FIFO, fifo)
        name = f"move{self._n_moves}"
        self._n_moves += 1
        return Dma(name, tensor, (end,), pattern) if shim else Dma(name, end, (tensor,), pattern)

    # -- the design ------------------------------------------------------------------------------------

    def _design(self) -> Design:
        cores: list[Core] = []
        forever: dict[str, bool] = {}
        for tile, op, _ in self.cores:
            core, loops = self._core(tile, op)
            cores.append(core)
            forever[core.name] = loops
        for f in self.fifos.values():
            if f.to_stream:
                raise DesignError(f"objectfifo @{f.name}: dimensionsToStream is read only on the output of a memtile "
                                  "forward or join (other re-layouts are not)")
        tensors = self._tensors()
        moves = self._moves(tensors)
        kernels = self._kernels({t: lw for t, _, lw in self.cores})
        cores = _trips(cores, forever, self.fifos, self.links, moves, tensors)
        used = {k for c in cores for k in call_counts(c.body)}
        fifos = tuple(Fifo(f.name, f.elem, f.depth) for f in self.fifos.values())
        design = Design(self.name, self.device, tuple(tensors), tuple(k for k in kernels if k.name in used), fifos,
                        tuple(cores), tuple(self.links), tuple(moves))
        verify_design(design)
        return design

    def _tensors(self) -> list[TensorDecl]:
        if self.sequence is None:
            return []
        block = list(self.sequence.regions[0].blocks)[0]
        out = []
        for i, a in enumerate(block.arguments):
            shape, dt = _memref(str(a.type), f"runtime sequence argument {i}")
            out.append(TensorDecl(f"arg{i}", TensorType(shape, dt)))
        return out

    def _kernels(self, link_with: dict) -> list[AnyKernel]:
        out: list[AnyKernel] = []
        core_objects = [lw for lw in link_with.values() if lw]
        for name, (params, obj) in self.decls.items():
            if name in self.given:
                k = self.given[name]
                theirs = [p.type for p in k.params]
                if theirs != [p.type for p in params]:
                    raise DesignError(f"kernels[{name!r}] takes {[str(t) for t in theirs]}; the module's "
                                      f"@{name} takes {[str(p.type) for p in params]}")
                if k.name != name:
                    raise DesignError(f"kernels[{name!r}] is named {k.name!r}; it must be named as the module's symbol")
                out.append(k)
                continue
            written = frozenset(params[i].name for i in sorted(self._writes.get(name, ())))
            if not written:
                tiles = [p.name for p in params if p.is_tile]
                if not tiles:
                    raise DesignError(f"func.func @{name} has no tile parameter")
                written = frozenset({tiles[-1]})
            out.append(ExternKernel(name, tuple(params), written, None, None,
                                    obj or (core_objects[0] if len(set(core_objects)) == 1 else None)))
        unknown = sorted(set(self.given) - set(self.decls))
        if unknown:
            raise DesignError(f"kernels {unknown}: the module declares no such function; it declares "
                              f"{sorted(self.decls)}")
        return out


def _link_with(op: object) -> str | None:
    a = _attr(op, "link_with")
    return str(a).strip('"') if a is not None else None


def _trips(cores: list[Core], forever: dict[str, bool], fifos: dict[str, _Fifo], links: list[Link],
           moves: list[Dma], tensors: list[TensorDecl]) -> list[Core]:
    """The cores with each endless outer loop given the trip count the data moved allows.

    Each fifo's elements over the run are found from what is known (host moves; a link's other side;
    a core whose trips are known), and an endless core runs (elements of a fifo it uses) / (elements of
    it per trip) times; every fifo it uses must agree.
    """
    total: dict[str, int] = {}

    def put(fifo: str, n: int, why: str) -> bool:
        if fifo in total:
            if total[fifo] != n:
                raise DesignError(f"objectfifo @{fifo} carries {total[fifo]} elements by one count and {n} by "
                                  f"another ({why}); the module's moves and loops disagree")
            return False
        total[fifo] = n
        return True

    per_fifo: dict[str, int] = {}
    for m in moves:
        f = fifos[m.fifos[0]]
        numel = 1
        for s in m.pattern.sizes:
            numel *= s
        per_fifo[f.name] = per_fifo.get(f.name, 0) + numel
    for name, n in per_fifo.items():
        elem = fifos[name].elem.numel
        if n % elem:
            raise DesignError(f"the runtime sequence moves {n} values through objectfifo @{name}, not a whole number "
                              f"of its {elem}-value elements")
        put(name, n // elem, "its host moves")
    trips = {c.name: None if forever[c.name] else 1 for c in cores}
    # elements of each fifo a core gives back per trip (a core uses a fifo on one side only)
    uses = {c.name: {f: released(c.body, f) for f in core_ports(c)} for c in cores}
    changed = True
    while changed:
        changed = False
        for link in links:
            known = [f for f in (*link.srcs, *link.dsts) if f in total]
            if known:
                n = total[known[0]]
                for f in (*link.srcs, *link.dsts):
                    changed |= put(f, n, f"link {link.name}")
        for c in cores:
            if trips[c.name] is None:
                for f, k in uses[c.name].items():
                    if f in total and k:
                        if total[f] % k:
                            raise DesignError(f"core {c.name} takes {k} elements of @{f} a trip of its endless loop, "
                                              f"which does not divide the {total[f]} the fifo carries")
                        trips[c.name] = total[f] // k
                        changed = True
                        break
            if trips[c.name] is not None:
                for f, k in uses[c.name].items():
                    changed |= put(f, k * trips[c.name], f"core {c.name}'s trips")  # type: ignore[operator]
    out = []
    for c in cores:
        if not forever[c.name]:
            out.append(c)
            continue
        if trips[c.name] is None:
            raise DesignError(f"core {c.name} loops without end and no fifo it uses has a known number of elements "
                              "(from the runtime sequence, a link or another core): its trip count cannot be found")
        outer = c.body[[i for i, s in enumerate(c.body) if isinstance(s, Loop)][0]]
        body = tuple(Loop(outer.start, outer.start + outer.step * trips[c.name], outer.step, outer.body)  # type: ignore[operator]
                     if s is outer else s for s in c.body)
        out.append(Core(c.name, body, tile=c.tile))
    return out
