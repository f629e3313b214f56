"""The kernel cost model: the cycles one call of a traced kernel takes on a core.

A core is a VLIW machine whose slots work in parallel in a software-pipelined
loop: two load units, one store unit (256-bit each; 512 on AIE2P), the vector
ALU (AIE-ML's mv slot) and the MAC unit (its vec slot). Each kernel op occupies one or more slots for some cycles (a table
registered per :class:`~tilelang.ir.kernel.OpKind` with :func:`impl`, as
xDSL's interpreters register with ``@impl``). A kernel runs as the loop nests
its lowering emits, one after another (:func:`loop_nests`): each tile store
ends one, and so does a reduction whose result feeds more than a store (every
element of the next nest waits for it, so no software pipeline crosses it);
an elementwise value is fused into each nest that reads it
(``tilelang/backends/mlir/values.py``). A call costs a fixed overhead, plus
unoverlappable loop overheads, plus the busiest slot of each loop nest. Memory
banks bound a call too: the bytes it moves through one bank take at least
bytes / 32 cycles (:func:`call_timing`).

The simulator charges calls with this model (``simulator/cost.py`` re-exports
it) and the planner's bank chooser minimises the cycles it predicts calls lose
to shared banks (``tilelang/plan/bank_weights.py``), so the two agree by
construction. It lives in the IR layer because it reads kernels; the hardware
constants it uses are device data (``tilelang/devices/costs.py``: the float unit of
each architecture, :class:`~tilelang.devices.costs.FloatUnit`, with a source per number).

Float ops follow the instructions public AIE kernels issue for them: arithmetic in
the fp32 lanes of the float unit (on AIE-ML and AIE2P bf16 in fp32 accumulators: a
loaded operand converts as load unit A loads it, another on the vector ALU's slot,
a stored result as the store unit stores it, and a value already in the
accumulators not at all; the accumulator adds issue in the multiplier's slot);
``exp`` as the instruction count of mlir-aie's exp per vector (a polynomial on
AIE1, table lookups on AIE-ML, the native ``exp2`` on AIE2P); division as one
reciprocal on the scalar unit and a multiply ([UG1079] "There are no divide scalar
or vector intrinsic functions"); a reduction as one op per vector and then a
shift-and-combine tree of log2(lanes) steps ([MA] mlir-aie
test/Conversion/VectorToAIEVec/test-reduce.mlir: ``vector.reduction`` lowers to
``aievec.shift`` + ``add_elem``/``max`` per halving, then ``ext_elem``), each step
waiting for the one before (``FloatUnit.latency``, ``FloatUnit.compare_latency``,
``VECTOR_ALU_LATENCY``). 32-bit integer multiplies are partial products of 16-bit
halves where the core has no 32-bit multiplier (``INT32_MULTIPLY``). A tile
parameter streamed by one pointer loads on one load unit (:func:`_load`).

Sources (short names used in the comments):
  [F]      docs/aie_facts.md, the section named.
  [AM020]  AIE-ML architecture manual, "AIE-ML Memory Module": eight 128-bit
           single-port banks, round-robin arbitration per bank, one request per
           cycle, others stall and retry.
  [UG1076] AI Engine tools guide, "Profiling for Memory Modules": memory conflicts
           when the same core's two read ports, or two agents, hit one bank.
  [UG1079] AI Engine kernel coding guide, "Floating-Point Operations".
  [MA]     Xilinx/mlir-aie, the file named.
  [LA]     Xilinx/llvm-aie (Peano), the file named under llvm/lib/Target/AIE/.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field

from tilelang.devices.costs import (
    CALL_OVERHEAD,
    FLOAT_UNITS,
    INT32_MULTIPLY,
    MATMUL_BLOCK_OVERHEAD,
    MATMUL_REG_BLOCK,
    PIPELINE_LATENCY,
    SHUFFLE_LATENCY,
    VECTOR_ALU_LATENCY,
    FloatUnit,
    core_ports,
    intrinsic_shape,
)
from tilelang.devices.model import Device
from tilelang.errors import SimulationError
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import Kernel, KOp, OpKind, Param, index_shape
from tilelang.ir.ops import ELEMENTARY, REDUCE

#: Integer division has no vector instruction: a scalar loop, cycles per element.
#: Estimate, unconfirmed (a 32-bit shift-subtract divide step per bit is ~32 cycles;
#: taken as 16 with early exit).
IDIV_SCALAR_CYCLES = 16
#: Vector-slot ops per element to move a vector divisor's element to the scalar unit and its
#: reciprocal back (an extract and an insert, as [UG1079]'s ``upd_elem(invpi, 0, inv(pi))``).
#: Estimate, unconfirmed: one op each.
RECIPROCAL_MOVE_OPS = 2
#: Load units of a core, which share ``CorePorts.load_bytes`` equally ([F] "Loads/stores: 2 x 256-bit
#: loads"; [DE] npu2's "two load units").
LOAD_UNITS = 2


@dataclass
class Slots:
    """Cycles one kernel occupies each VLIW slot, plus cycles nothing overlaps.

    ``scalar`` is the scalar unit (float reciprocals). ``access`` counts the bytes the loads and stores move per tile parameter, so
    that a call whose parameters share a memory bank can be charged for it
    (:func:`call_timing`).
    """

    load: float = 0.0
    store: float = 0.0
    vector: float = 0.0
    mac: float = 0.0
    scalar: float = 0.0
    fixed: float = 0.0
    access: dict[str, float] = field(default_factory=dict)
    #: cycles each tile parameter's loads take on the one load unit that walks it (:func:`_load`)
    streams: dict[str, float] = field(default_factory=dict)
    #: cycles of load unit A alone: loads that convert bf16 as they load (one unit has the instruction)
    load_a: float = 0.0
    #: the busiest slot of each loop nest, when the kernel runs more than one (:func:`kernel_slots`): the
    #: nests run one after another, so the call's slot bound is their sum
    loops: tuple[float, ...] = ()
    #: cycles a loop's iterations cannot take less than, from a measured interval (``Elementary.interval``)
    interval: float = 0.0

    def add(self, other: Slots) -> None:
        self.load += other.load
        self.store += other.store
        self.vector += other.vector
        self.mac += other.mac
        self.scalar += other.scalar
        self.fixed += other.fixed
        self.load_a += other.load_a
        self.interval += other.interval
        for name, nbytes in other.access.items():
            self.access[name] = self.access.get(name, 0.0) + nbytes
        for name, cycles in other.streams.items():
            self.streams[name] = self.streams.get(name, 0.0) + cycles

    def busiest(self) -> float:
        """Cycles of the busiest slot (a load unit walking one parameter, or unit A, counting as one), summed
        over the loop nests when there are several."""
        if self.loops:
            return sum(self.loops)
        return max(self.load, self.store, self.vector, self.mac, self.scalar, self.load_a, self.interval,
                   max(self.streams.values(), default=0.0))

    def cycles(self) -> int:
        """The call's cycles without the call overhead: fixed plus the busiest slot."""
        return math.ceil(self.fixed + self.busiest())


@dataclass(frozen=True)
class OpContext:
    """What an op's cost rule may look at."""

    device: Device
    fused: frozenset[int]  # ids of ops folded into a preceding multiply (multiply-accumulate)
    users: Mapping[int, tuple[KOp, ...]] = field(default_factory=dict)  # the ops using each op, by id


CostRule = Callable[[KOp, OpContext], Slots]
_RULES: dict[OpKind, CostRule] = {}


def impl(*kinds: OpKind) -> Callable[[CostRule], CostRule]:
    """Register a cost rule for op kinds (xDSL ``@impl`` style)."""

    def register(fn: CostRule) -> CostRule:
        for k in kinds:
            _RULES[k] = fn
        return fn

    return register


def _numel(op: KOp) -> int:
    return op.type.numel if op.type is not None and op.type.shape else 1


def _operand_dtype(x: KOp | Param) -> DType:
    t = x.type if isinstance(x, KOp) else x.value_type
    assert t is not None and not isinstance(t, DType)
    return t.dtype


def _vector_cycles(n: int, dt: DType, ctx: OpContext) -> float:
    return math.ceil(n / ctx.device.vector_lanes(dt))


@impl(OpKind.CONST)
def _const(op: KOp, ctx: OpContext) -> Slots:
    return Slots()


@impl(OpKind.LOAD)
def _load(op: KOp, ctx: OpContext) -> Slots:
    # A tile parameter is read by one pointer walking it, and its loads issue on one load unit: the two
    # units together carry two parameters at once, not one at twice the rate ([MA] aie_kernels/reduce/
    # reduce_add.cc, AIE2: "A walked pointer and a rolled loop pipeline at II2 per vector, its two loads";
    # aie_kernels/datamovement/cast_f32_bf16.cc: "a single chain pipelines to two cycles per 16 elements").
    assert op.type is not None
    nbytes = op.type.nbytes
    name = op.operands[0].name  # type: ignore[union-attr]
    ports = core_ports(ctx.device.arch.name)
    return Slots(load=nbytes / ports.load_bytes, access={name: nbytes},
                 streams={name: nbytes / (ports.load_bytes / LOAD_UNITS)})


@impl(OpKind.STORE)
def _store(op: KOp, ctx: OpContext) -> Slots:
    value = op.operands[1]
    param = op.operands[0]
    index = op.attr("index")
    shape = index_shape(index) if index is not None else param.type.shape  # type: ignore[union-attr, arg-type]
    nbytes = math.prod(shape) * _operand_dtype(value).bytes
    return Slots(store=nbytes / core_ports(ctx.device.arch.name).store_bytes, access={param.name: nbytes})  # type: ignore[union-attr]


@impl(OpKind.NEG, OpKind.ABS, OpKind.RELU, OpKind.MAX, OpKind.MIN, OpKind.WHERE, OpKind.SLICE,
      OpKind.LT, OpKind.LE, OpKind.GT, OpKind.GE, OpKind.EQ, OpKind.NE)
def _vector(op: KOp, ctx: OpContext) -> Slots:
    dt = _operand_dtype(op.operands[-1])
    return Slots(vector=_vector_cycles(_numel(op), dt, ctx))


@impl(OpKind.CAST)
def _cast(op: KOp, ctx: OpContext) -> Slots:
    assert op.type is not None
    src = _operand_dtype(op.operands[0])
    dst = op.type.dtype
    unit = FLOAT_UNITS.get(ctx.device.arch.name)
    if unit is not None and unit.bf16_convert_ops and {src.name, dst.name} == {"f32", "bf16"}:
        # f32 values live in the float accumulators: to bf16 is a conversion out of them, from bf16 one in
        if dst.name == "bf16":
            slots = _convert_out(op, unit, ctx)
            x = op.operands[0]
            if unit.convert_in_load and isinstance(x, KOp) and x.kind is OpKind.LOAD:
                # f32 loaded straight into the accumulators: load unit A's alone ([LA] aie2/
                # AIE2GenFixupInstrInfo.td: VLDA_dmw_lda_am writes mAMm, every VLDB form a vector
                # register; [MA] cast_f32_bf16.cc: "which only the a port can do")
                assert x.type is not None and not isinstance(x.type, DType)
                slots.add(Slots(load_a=x.type.nbytes / (core_ports(ctx.device.arch.name).load_bytes / LOAD_UNITS)))
            return slots
        return _convert_in(op.operands[0], _numel(op), unit, ctx, load_first=True)
    wide = src if src.bits >= dst.bits else dst
    return Slots(vector=_vector_cycles(_numel(op), wide, ctx))


def _float_unit(ctx: OpContext) -> FloatUnit:
    unit = FLOAT_UNITS.get(ctx.device.arch.name)
    if unit is None:
        raise SimulationError(f"{ctx.device.name}: no float-unit data for architecture {ctx.device.arch.name!r}")
    return unit


def _float_slots(n: int, unit: FloatUnit, vector: float = 0.0, mul: float = 0.0, load: float = 0.0) -> Slots:
    """Slots of ``vector`` ALU ops, ``mul`` multiplier ops and ``load`` load cycles per group of lanes."""
    groups = math.ceil(n / unit.lanes)
    if unit.shared_issue:
        vector, mul = vector + mul, 0.0
    return Slots(vector=groups * vector, mac=groups * mul, load=groups * load)


def _is_vector(x: KOp | Param) -> bool:
    t = x.type if isinstance(x, KOp) else x.value_type
    return t is not None and not isinstance(t, DType) and t.numel > 1


def _convert_ops(dt: DType, unit: FloatUnit) -> int:
    """Ops to move one vector between bf16 registers and fp32 accumulators (0 for f32)."""
    return unit.bf16_convert_ops if dt.bits < 32 else 0


#: Float ops whose result stays in the fp32 accumulators where the architecture computes bf16 in them.
_ACC_RESULT = frozenset({OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.DIV})
#: Ops that read an operand from the accumulators as it is (the accumulator adds and the float sum).
_ACC_OPERAND = frozenset({OpKind.ADD, OpKind.SUB, OpKind.SUM})


def _in_accumulator(x: KOp | Param, unit: FloatUnit) -> bool:
    """Whether ``x`` is a bf16 value the float unit holds in its fp32 accumulators (no conversion in)."""
    if not isinstance(x, KOp) or x.type is None or isinstance(x.type, DType):
        return False
    dt = x.type.dtype
    if not dt.is_float or not _convert_ops(dt, unit):
        return False
    return x.kind in _ACC_RESULT


def _convert_in(x: KOp | Param, n: int, unit: FloatUnit, ctx: OpContext, load_first: bool) -> Slots:
    """Converting the bf16 vector operand ``x`` (``n`` elements) into the accumulators, if it needs it.

    A loaded operand converts on load unit A as it loads when ``load_first`` (one operand of an op: one
    unit has the instruction); any other converts on the vector ALU's slot.
    """
    if not _is_vector(x) or _in_accumulator(x, unit):
        return Slots()
    conv = _convert_ops(_operand_dtype(x), unit)
    if not conv:
        return Slots()
    if load_first and unit.convert_in_load and isinstance(x, KOp) and x.kind is OpKind.LOAD:
        assert x.type is not None and not isinstance(x.type, DType)
        return Slots(load_a=x.type.nbytes / (core_ports(ctx.device.arch.name).load_bytes / LOAD_UNITS))
    return _float_slots(n, unit, vector=conv)


def _convert_out(op: KOp, unit: FloatUnit, ctx: OpContext) -> Slots:
    """Converting ``op``'s bf16 result out of the accumulators, for the users that need a bf16 vector.

    Accumulator adds and float sums take it as it is; a store converts it itself where the store unit
    can (``FloatUnit.convert_out_store``); every other use needs the conversion, once.
    """
    assert op.type is not None and not isinstance(op.type, DType)
    conv = _convert_ops(op.type.dtype, unit)
    if not conv:
        return Slots()
    users = ctx.users.get(id(op), ())
    needs = [u for u in users if u.kind not in _ACC_OPERAND
             and not (u.kind is OpKind.STORE and unit.convert_out_store)]
    if users and not needs:
        return Slots()
    groups = math.ceil(_numel(op) / unit.lanes)
    return Slots(store=groups * conv) if unit.convert_out_store else _float_slots(_numel(op), unit, vector=conv)


def _float_add(n: int, unit: FloatUnit) -> Slots:
    """The adds of ``n`` elements in the accumulators (on the multiplier's slot where the unit puts them)."""
    groups = math.ceil(n / unit.lanes)
    return Slots(mac=groups) if unit.add_on_mac and not unit.shared_issue else _float_slots(n, unit, vector=1)


@impl(OpKind.ADD, OpKind.SUB)
def _add(op: KOp, ctx: OpContext) -> Slots:
    assert op.type is not None
    dt = op.type.dtype
    if not dt.is_float:
        if id(op) in ctx.fused:
            return Slots()  # the multiply-accumulate already did it on the MAC unit
        return Slots(vector=_vector_cycles(_numel(op), dt, ctx))
    # The float adder works on accumulators: each vector operand not already in one converted in (the
    # first loaded one as it loads), the result converted out for the users that need it (a scalar
    # operand is broadcast once, outside the loop).
    if id(op) in ctx.fused and any(isinstance(x, KOp) and x.kind is OpKind.MATMUL for x in op.operands):
        return Slots()  # a matmul's accumulators are its output blocks (the matmul rule prices them)
    unit = _float_unit(ctx)
    n = _numel(op)
    slots = Slots() if id(op) in ctx.fused else _float_add(n, unit)  # fused: the multiply-accumulate adds
    first = True
    for x in op.operands:
        if id(op) in ctx.fused and isinstance(x, KOp) and x.kind is OpKind.MUL:
            continue
        part = _convert_in(x, n, unit, ctx, load_first=first)
        first = first and not part.load_a
        slots.add(part)
    slots.add(_convert_out(op, unit, ctx))
    return slots


def _widened_bf16(x: KOp | Param) -> bool:
    """Whether ``x`` is a bf16 value widened to f32: a product of two such is one bf16 multiply into the fp32
    accumulators, exact ([MA] AIEVecToLLVM.cpp: aievec.mul_elem of bf16 operands into f32 lanes is one
    mul_conf intrinsic, the emulation only for f32 operands; the aievec pattern EmulateMulFInBF16Pattern
    rewrites f32 multiplies into this form: "The product of two bf16 values fits in f32")."""
    return (isinstance(x, KOp) and x.kind is OpKind.CAST and x.type is not None
            and _operand_dtype(x.operands[0]).name == "bf16")


def _float_mul(op: KOp, unit: FloatUnit, ctx: OpContext) -> Slots:
    """A float multiply: multiplier ops on its bf16 (or f32) operands, the result converted out as needed."""
    assert op.type is not None
    dt = op.type.dtype
    n = _numel(op)
    if dt.bits >= 32 and not all(_widened_bf16(x) for x in op.operands):
        # emulated: each vector operand split into bf16 parts, then the partial products
        splits = sum(1 for x in op.operands if _is_vector(x))
        slots = _float_slots(n, unit, mul=unit.f32_mul_ops + splits * unit.f32_split_mul_ops,
                             vector=splits * unit.f32_split_vector_ops)
    else:
        slots = _float_slots(n, unit, mul=1)
    slots.add(_convert_out(op, unit, ctx))
    return slots


@impl(OpKind.MUL)
def _mul(op: KOp, ctx: OpContext) -> Slots:
    assert op.type is not None
    dt = op.type.dtype
    if dt.is_float:
        return _float_mul(op, _float_unit(ctx), ctx)
    emulated = INT32_MULTIPLY.get(ctx.device.arch.name) if dt.bits == 32 else None
    if emulated is not None:
        # No 32 x 32-bit multiplier: partial products of 16-bit halves, each operand split by shuffles
        groups = math.ceil(_numel(op) / emulated.lanes)
        vectors = sum(1 for x in op.operands if _is_vector(x))
        return Slots(mac=groups * emulated.mac_ops, vector=groups * emulated.shuffle_ops * vectors)
    # Integer multiplies run on the multiplier: no faster than the MAC rate nor
    # than the vector width ([F] compute rates; device vector lanes).
    rate = min(ctx.device.macs_per_cycle(dt), ctx.device.vector_lanes(dt))
    return Slots(mac=math.ceil(_numel(op) / rate))


@impl(OpKind.DIV)
def _div(op: KOp, ctx: OpContext) -> Slots:
    assert op.type is not None
    dt = op.type.dtype
    n = _numel(op)
    if dt.is_int:
        return Slots(fixed=n * IDIV_SCALAR_CYCLES)
    # A reciprocal on the scalar unit, then a multiply ([UG1079]: division as "an inverse and
    # multiply"). A scalar divisor takes one reciprocal, which the multiply waits for; a vector
    # divisor one per element, moved to the scalar unit and back.
    unit = _float_unit(ctx)
    slots = _float_mul(op, unit, ctx)
    if _is_vector(op.operands[1]):
        slots.add(Slots(scalar=n * unit.inv_issue, vector=n * RECIPROCAL_MOVE_OPS, fixed=unit.inv_latency))
    else:
        slots.add(Slots(scalar=unit.inv_issue, fixed=unit.inv_latency))
    return slots


@impl(*ELEMENTARY)
def _function(op: KOp, ctx: OpContext) -> Slots:
    """exp, sqrt, 1 / sqrt, tanh: the architecture's instructions for each (``FloatUnit.function``); one the
    vector units do not compute runs value by value on the scalar unit."""
    assert op.type is not None
    unit = _float_unit(ctx)
    f = unit.function(op.kind.value)
    n = _numel(op)
    slots = _float_slots(n, unit, vector=f.vector_ops, mul=f.mul_ops, load=f.load_cycles)
    slots.interval = math.ceil(n / unit.lanes) * f.interval
    if f.scalar:
        moves = RECIPROCAL_MOVE_OPS if _is_vector(op) else 0
        slots.add(Slots(scalar=n * f.scalar, vector=n * moves))
    return slots


@impl(OpKind.SUM, OpKind.RMAX, OpKind.RMIN)
def _reduce(op: KOp, ctx: OpContext) -> Slots:
    x = op.operands[0]
    t = x.type if isinstance(x, KOp) else x.value_type
    if not t.dtype.is_float:
        # One vector op per vector into a running vector, then the shift-and-combine tree, each step
        # waiting for the one before ([MA] aie_kernels/reduce/reduce_add.cc: "shift_bytes" and add over
        # 32, 16, 8 and 4 bytes of a 16-lane vector).
        lanes = min(ctx.device.vector_lanes(t.dtype), t.numel)
        steps = math.ceil(math.log2(lanes)) if lanes > 1 else 0
        return Slots(vector=math.ceil(t.numel / lanes) + 2 * steps,
                     fixed=steps * (SHUFFLE_LATENCY + VECTOR_ALU_LATENCY))
    unit = _float_unit(ctx)
    if op.kind is OpKind.SUM:
        # Accumulated in the float unit's fp32 lanes (the adds where the unit puts them), bf16
        # converted in (a loaded operand as it loads)
        lanes = min(unit.lanes, t.numel)
        slots = _float_add(t.numel, unit)
        slots.add(_convert_in(x, t.numel, unit, ctx, load_first=True))
    else:
        # Max and min run on the vector compare unit at the full vector width ([AM020] "Floating-Point
        # Vector Unit": bf16 "comparison, minimum, and maximum"; AIE1's float unit, 8 lanes).
        lanes = min(ctx.device.vector_lanes(t.dtype), t.numel)
        slots = Slots(vector=math.ceil(t.numel / lanes))
    steps = math.ceil(math.log2(lanes)) if lanes > 1 else 0
    latency = unit.latency if op.kind is OpKind.SUM else unit.compare_latency
    slots.add(Slots(vector=2 * steps, fixed=steps * (SHUFFLE_LATENCY + latency)))
    return slots


#: Rows of A a matrix-vector kernel reduces together: [MA] aie_kernels/linalg/mv_bf16.cc works in groups of 4 rows
#: (``mac_rows4``), each row's chunks multiplied into an accumulator of its own, and folds the group's four
#: accumulators in one tree (``pack_rows4``, ``fold_rows``).
MATVEC_ROW_GROUP = 4
#: The widest chunk (``VEC_SIZE``, lanes of each row's accumulator) of the matrix-vector kernel: [MA]
#: aie_kernels/linalg/mv_bf16.cc "#define VEC_SIZE 64", python/iron/kernels/linalg.py ``mv(vec_size=64)``. A row
#: shorter than two such chunks takes the widest power of two that leaves two ([MA]
#: test/python/npu/kernel_cases.py, IRON's decode shapes: "at the widest vec_size that leaves at least two
#: chunks"), and never less than the 16 lanes its fold starts from.
MATVEC_CHUNK = 64
#: Lanes per row the matrix-vector kernel's shuffle-and-add fold starts from: [MA] aie_kernels/linalg/mv_bf16.cc
#: ``fold_rows<16>`` on both AIE-ML and AIE2P, after ``pack_rows4`` has halved each row's ``VEC_SIZE`` lanes
#: down to 16 by accumulator adds ("Down to 16 lanes a halving is a permutation of accumulator quarters, so it
#: needs no shuffle").
MATVEC_FOLD_LANES = 16


def _matvec_chunk(k: int) -> int:
    """Lanes of each row's accumulator in the matrix-vector kernel for rows of ``k`` (``MATVEC_CHUNK``)."""
    widest = 1 << max(0, (k // 2).bit_length() - 1)  # the widest power of two leaving two chunks
    return min(k, max(MATVEC_FOLD_LANES, min(MATVEC_CHUNK, widest)))


def _matvec(op: KOp, ctx: OpContext) -> Slots:
    """A matrix times a column, as mlir-aie's matrix-vector kernel computes it ([MA] aie_kernels/linalg/
    mv_bf16.cc): elementwise multiply-accumulates of each row's chunks with the column's (the matmul intrinsic
    would leave all but one of its output columns idle), then each group of rows reduced by a tree, each step
    waiting for the one before (programming_guide section-4d: in the 32 x 256 kernel "the reduction costs 520
    cycles, 45% of the kernel"); the column re-read per group. A row's accumulator is a chunk wide
    (:func:`_matvec_chunk`): ``pack_rows4`` halves it to 16 lanes by accumulator adds (a float add's latency a
    step, no shuffle), ``fold_rows<16>`` then shuffles and adds down to one lane (both each step). Float only:
    mlir-aie's integer kernel (mv_i16.cc) takes A word-transposed and multiplies a column of rows at once with
    no tree, so a row-major integer tile has no kernel to follow and keeps the matmul rule."""
    a, b = op.operands
    m, k = a.type.shape
    dt = a.type.dtype
    unit = _float_unit(ctx)
    lanes, latency = min(unit.lanes, k), unit.latency
    groups = math.ceil(m / MATVEC_ROW_GROUP)
    # AIE1 has no such kernel: its tree starts from the float unit's lanes
    chunk = lanes if ctx.device.arch.name == "aie1" else _matvec_chunk(k)
    fold = min(chunk, MATVEC_FOLD_LANES)
    folds = math.ceil(math.log2(fold)) if fold > 1 else 0
    packs = math.ceil(math.log2(chunk / fold))
    # pack_rows4's adds: each halving adds half of the group's remaining lanes onto the other half
    pack_ops = math.ceil(MATVEC_ROW_GROUP * (chunk - fold) / unit.lanes)
    extra_b = (groups - 1) * k * dt.bytes
    access = {}
    if isinstance(b, KOp) and b.kind is OpKind.LOAD and extra_b:
        access[b.operands[0].name] = extra_b  # type: ignore[union-attr]
    return Slots(mac=m * math.ceil(k / lanes) + groups * pack_ops,
                 vector=groups * 2 * folds,
                 load=extra_b / core_ports(ctx.device.arch.name).load_bytes,
                 fixed=groups * (packs * latency + folds * (SHUFFLE_LATENCY + latency)), access=access)


@impl(OpKind.MATMUL)
def _matmul(op: KOp, ctx: OpContext) -> Slots:
    a, b = op.operands
    m, k = a.type.shape
    n = b.type.shape[1]
    if n == 1 and m > 1 and a.type.dtype.is_float:
        return _matvec(op, ctx)
    dt = a.type.dtype
    macs = ctx.device.macs_per_cycle(dt)
    m0, _, n0 = intrinsic_shape(macs)
    rb = MATMUL_REG_BLOCK
    a_reads = max(1, math.ceil(n / (rb * n0)))
    b_reads = max(1, math.ceil(m / (rb * m0)))
    # The IR's own loads read A and B once; the kernel re-reads them per block row/column.
    extra_a = (a_reads - 1) * m * k * dt.bytes
    extra_b = (b_reads - 1) * k * n * dt.bytes
    blocks = math.ceil(m / (rb * m0)) * math.ceil(n / (rb * n0))
    access: dict[str, float] = {}
    for x, nbytes in ((a, extra_a), (b, extra_b)):
        # Re-reads hit the loaded parameter's buffer (a computed operand lives in registers).
        if isinstance(x, KOp) and x.kind is OpKind.LOAD and nbytes:
            name = x.operands[0].name  # type: ignore[union-attr]
            access[name] = access.get(name, 0.0) + nbytes
    return Slots(mac=m * k * n / macs, load=(extra_a + extra_b) / core_ports(ctx.device.arch.name).load_bytes,
                 fixed=blocks * MATMUL_BLOCK_OVERHEAD, access=access)


def _users(kernel: Kernel) -> dict[int, tuple[KOp, ...]]:
    """The ops using each op of ``kernel``, by the used op's id (an op using a value twice is listed twice)."""
    users: dict[int, list[KOp]] = {}
    for op in kernel.body:
        for x in op.operands:
            if isinstance(x, KOp):
                users.setdefault(id(x), []).append(op)
    return {k: tuple(v) for k, v in users.items()}


def _fused_adds(kernel: Kernel, users: Mapping[int, tuple[KOp, ...]]) -> frozenset[int]:
    """Adds/subs that take a multiply used nowhere else: one multiply-accumulate."""
    fused = set()
    for op in kernel.body:
        if op.kind in (OpKind.ADD, OpKind.SUB):
            if any(isinstance(x, KOp) and x.kind in (OpKind.MUL, OpKind.MATMUL) and len(users.get(id(x), ())) == 1
                   for x in op.operands):
                fused.add(id(op))
    return frozenset(fused)


def _only_user(op: KOp, users: Mapping[int, tuple[KOp, ...]]) -> KOp | None:
    used_by = users.get(id(op), ())
    return used_by[0] if len(used_by) == 1 else None


def _materialized(op: KOp, users: Mapping[int, tuple[KOp, ...]]) -> bool:
    """Whether ``op`` ends a loop nest: every store of a tile (each statement is a loop of its own, as the
    lowering emits it: ``tilelang/backends/mlir/compute_rules.py``), and a reduction whose result feeds more
    than a store (its consumers cannot start before its last element: a dependence no software pipeline
    crosses). A matmul's epilogue (a cast, an add, an activation) is priced fused into the matmul's register
    blocks, as mlir-aie's kernels do it ([MA] aie_kernels/aie2/mm.cc: the accumulator shifted and rounded per
    block before the store), where the lowering computes the product into a temporary first."""
    if op.kind is OpKind.STORE:
        return True
    if op.kind not in REDUCE:
        return False
    user = _only_user(op, users)
    return user is None or user.kind is not OpKind.STORE


def loop_nests(kernel: Kernel, users: Mapping[int, tuple[KOp, ...]] | None = None) -> list[list[KOp]]:
    """The ops of each loop nest the lowering emits for ``kernel``, in order (``users``: :func:`_users`'s map,
    computed when not given).

    A nest is a materialized op (:func:`_materialized`) with every op it reads that is not itself materialized:
    an elementwise value is fused into each nest that reads it, so it is computed (and its tiles loaded) once
    per such nest; a materialized value is read from its register or temporary. A store of a scalar (a
    reduction's result) is no loop: it joins the nest that computed the value.
    """
    frozen = _users(kernel) if users is None else users
    nests: list[list[KOp]] = []
    for op in kernel.body:
        if not _materialized(op, frozen):
            continue
        members: dict[int, KOp] = {}
        stack = [op]
        while stack:
            x = stack.pop()
            if id(x) in members:
                continue
            members[id(x)] = x
            stack.extend(y for y in x.operands if isinstance(y, KOp) and not _materialized(y, frozen))
        nest = [x for x in kernel.body if id(x) in members]  # program order
        scalar_store = op.kind is OpKind.STORE and not _is_vector(op.operands[1])
        if scalar_store and nests and not any(_is_vector(x) for x in nest):
            nests[-1].extend(nest)
        else:
            nests.append(nest)
    return nests


_CHAIN_FREE = frozenset({OpKind.CONST, OpKind.SLICE})
_VECTOR_ALU = frozenset({OpKind.MAX, OpKind.MIN, OpKind.RELU, OpKind.ABS, OpKind.WHERE, OpKind.LT, OpKind.LE,
                         OpKind.GT, OpKind.GE, OpKind.EQ, OpKind.NE, OpKind.RMAX,
                         OpKind.RMIN})


def _is_float(x: KOp | Param) -> bool:
    t = x.type if isinstance(x, KOp) else x.value_type
    dt = t if isinstance(t, DType) else getattr(t, "dtype", None)
    return dt is not None and dt.is_float


def nest_latency(members: list[KOp], ctx: OpContext) -> int:
    """Cycles one iteration of a loop nest takes from its first issue to its last: the longest chain of
    dependent instructions among ``members``, each at its result latency (``PipelineLatency``,
    ``FloatUnit.latency``, ``VECTOR_ALU_LATENCY``). A multiply folded into an add is one multiply-accumulate
    instruction; a chain of them into one accumulator steps at ``PipelineLatency.accumulate`` (integer) or
    ``float_accumulate``."""
    lat = PIPELINE_LATENCY[ctx.device.arch.name]
    unit = FLOAT_UNITS.get(ctx.device.arch.name)
    inside = {id(op) for op in members}
    ready: dict[int, int] = {}

    def stored(op: KOp) -> bool:
        user = _only_user(op, ctx.users)
        return user is not None and user.kind is OpKind.STORE

    def at(x: KOp | Param) -> int:
        return ready.get(id(x), 0) if isinstance(x, KOp) and id(x) in inside else 0

    def own(op: KOp) -> int:
        k = op.kind
        if k is OpKind.LOAD:
            return lat.load
        if k is OpKind.STORE:
            return lat.store
        if k in _CHAIN_FREE:
            return 0
        fl = _is_float(op) or any(_is_float(x) for x in op.operands if isinstance(x, KOp | Param))
        if k in ELEMENTARY and unit is not None:
            return unit.function(k.value).latency
        if k is OpKind.CAST:
            folded = (unit is not None and unit.convert_in_load and isinstance(op.operands[0], KOp)
                      and op.operands[0].kind is OpKind.LOAD) or stored(op)
            return 0 if folded else lat.convert
        if k in (OpKind.MUL, OpKind.MATMUL):
            if fl and unit is not None:
                return unit.latency
            # back into a vector register unless a store (VST.SRS) or a multiply-accumulate takes it
            user = _only_user(op, ctx.users)
            kept = user is not None and (user.kind is OpKind.STORE or id(user) in ctx.fused)
            return lat.int_multiply + (0 if kept else lat.shift_round)
        if k in _VECTOR_ALU:
            return unit.compare_latency if fl and unit is not None else VECTOR_ALU_LATENCY
        if fl and unit is not None:
            return unit.latency  # add, subtract, negate, divide's multiply, a float sum
        return VECTOR_ALU_LATENCY

    for op in members:
        if id(op) in ctx.fused:
            # c + a * b: one multiply-accumulate, ready a MAC's latency after a and b, or an accumulate
            # step after c when c is itself accumulated
            mul = next(x for x in op.operands if isinstance(x, KOp) and x.kind in (OpKind.MUL, OpKind.MATMUL))
            acc = next((x for x in op.operands if x is not mul), None)
            mac, step = ((unit.latency, lat.float_accumulate) if _is_float(op) and unit is not None
                         else (lat.int_multiply, lat.accumulate))
            via_acc = 0 if acc is None else at(acc) + (step if isinstance(acc, KOp) and id(acc) in ctx.fused else mac)
            ready[id(op)] = max(max((at(x) for x in mul.operands), default=0) + mac, via_acc)
        else:
            ready[id(op)] = max((at(x) for x in op.operands), default=0) + own(op)
    return max(ready.values(), default=0)


def contraction_fill(dtype: DType, device: Device) -> int:
    """The pipeline fill of a matmul kernel's one loop nest (``c = a @ b`` or ``c += a @ b``, stored):
    what :func:`nest_latency` gives it (load, multiply-accumulate, store) less one cycle, for the tiler."""
    lat = PIPELINE_LATENCY[device.arch.name]
    unit = FLOAT_UNITS.get(device.arch.name)
    mac = unit.latency if dtype.is_float and unit is not None else lat.int_multiply
    return lat.load + mac + lat.store - 1


def kernel_slots(kernel: Kernel, device: Device) -> Slots:
    """Slot occupancy of one call of ``kernel`` (without the call overhead), summed over its loop nests
    (:func:`loop_nests`), with each nest's busiest slot in ``Slots.loops`` when there are several, and each
    nest's pipeline fill (:func:`nest_latency` less the cycle its last issue counts) in ``fixed``.

    Raises:
        SimulationError: an op kind has no cost rule.
    """
    users = _users(kernel)
    ctx = OpContext(device, _fused_adds(kernel, users), users)
    # A blocked matmul walks each operand with a pointer per block row or column ([MA]
    # aie_kernels/linalg/mm_aie2.h: pA1, pA2, pB1, pB2 and a cursor per C tile), so both load units
    # serve each operand: no one-pointer stream bound (the tiler's call_cycles agrees).
    blocked = any(op.kind is OpKind.MATMUL for op in kernel.body)
    costs: dict[int, Slots] = {}
    for op in kernel.body:
        rule = _RULES.get(op.kind)
        if rule is None:
            raise SimulationError(f"kernel {kernel.name!r}: no cost rule for op {op.kind.value}")
        costs[id(op)] = rule(op, ctx)
    total = Slots()
    bounds = []
    for members in loop_nests(kernel, users):
        nest = Slots()
        for op in members:
            nest.add(costs[id(op)])
        if blocked:
            nest.streams.clear()
        nest.fixed += max(0, nest_latency(members, ctx) - 1)
        total.add(nest)
        if nest.busiest() > 0:
            bounds.append(nest.busiest())
    if blocked:
        total.streams.clear()
    if len(bounds) > 1:
        total.loops = tuple(bounds)
    return total


def kernel_cycles(kernel: Kernel, device: Device) -> int:
    """Cycles of one call of a traced kernel: overhead + fixed + busiest slot (banks not known)."""
    return CALL_OVERHEAD + kernel_slots(kernel, device).cycles()


@dataclass(frozen=True)
class CallTiming:
    """One call's cycles once its parameters' memory banks are known.

    Attributes:
        cycles: the call's cycles.
        bound: cycles of the busiest resource (slot or bank) during the call's body.
        banks: cycles each memory bank the call touches is busy serving it.
        alone: the call's cycles if no bank limited it (``kernel_cycles``).
    """

    cycles: int
    bound: float
    banks: dict[Hashable, float]
    alone: int = 0


def call_timing(kernel: Kernel, device: Device, bank_of: Mapping[str, Hashable]) -> CallTiming:
    """The cycles of one call whose tile parameters live in the banks ``bank_of`` names.

    A bank serves one access per cycle ([AM020] "Memory Arbitration": round-robin,
    one request per bank per cycle, the others stall and retry), and a 256-bit
    load or store is one access of a programmer-view bank (two interleaved
    128-bit banks, [AM020] "AIE-ML Tile Architecture"). So the loads and stores
    a kernel makes to one bank take at least bytes / 32 cycles: two parameters
    in one bank cannot be read by the two load units at once ([UG1076]
    "Memory Conflict": the same core using both read ports on one bank; [PG4c]
    "the loads must come from different L1 memory banks"). Parameters missing
    from ``bank_of`` (no placement known) conflict with nothing. A kernel of
    several loop nests compares each bank's demand over the whole call with
    the nests' summed slot bounds (a nest whose own bank demand exceeds its
    slots but whose call's does not is not charged: an optimistic bound).
    """
    slots = kernel_slots(kernel, device)
    demand: dict[Hashable, float] = {}
    bank_bytes = core_ports(device.arch.name).bank_bytes
    for name, nbytes in slots.access.items():
        bank = bank_of.get(name)
        if bank is not None:
            demand[bank] = demand.get(bank, 0.0) + nbytes / bank_bytes
    bound = max(slots.busiest(), *demand.values()) if demand else slots.busiest()
    return CallTiming(CALL_OVERHEAD + math.ceil(slots.fixed + bound), bound, demand,
                      CALL_OVERHEAD + math.ceil(slots.fixed + slots.busiest()))
