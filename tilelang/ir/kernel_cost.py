"""The kernel cost model: the cycles one call of a traced kernel takes on a core.

A core is a VLIW machine whose slots work in parallel in a software-pipelined
loop: two 256-bit load units, one 256-bit store unit, the vector ALU and the
MAC unit. Each kernel op occupies one or more slots for some cycles (a table
registered per :class:`~tilelang.ir.kernel.OpKind` with :func:`impl`, as
xDSL's interpreters register with ``@impl``); a call costs a fixed overhead,
plus unoverlappable loop overheads, plus the busiest slot. Memory banks bound
a call too: the bytes it moves through one bank take at least bytes / 32
cycles (:func:`call_timing`).

The simulator charges calls with this model (``simulator/cost.py`` re-exports
it) and the planner's bank chooser minimises the cycles it predicts calls lose
to shared banks (``tilelang/plan/bank_weights.py``), so the two agree by
construction. It lives in the IR layer because it reads kernels; the hardware
constants it uses are device data (``tilelang/devices/costs.py``: the float unit of
each architecture, :class:`~tilelang.devices.costs.FloatUnit`, with a source per number).

Float ops follow the instructions public AIE kernels issue for them: arithmetic in
the fp32 lanes of the float unit (bf16 converted into and out of fp32 accumulators
on AIE-ML); ``exp`` as the instruction count of mlir-aie's exp per vector (a
polynomial on AIE1, table lookups on AIE-ML, the native ``exp2`` on AIE2P);
division as one reciprocal on the scalar unit and a multiply ([UG1079] "There are no
divide scalar or vector intrinsic functions"); a reduction as one op per vector and
then a shift-and-combine tree of log2(lanes) steps ([MA] mlir-aie
test/Conversion/VectorToAIEVec/test-reduce.mlir: ``vector.reduction`` lowers to
``aievec.shift`` + ``add_elem``/``max`` per halving, then ``ext_elem``), each step
waiting for the one before (``FloatUnit.latency``).

Sources (short names used in the comments):
  [F]      docs/aie_facts.md, the section named.
  [AM020]  AIE-ML architecture manual, "AIE-ML Memory Module": eight 128-bit
           single-port banks, round-robin arbitration per bank, one request per
           cycle, others stall and retry.
  [UG1076] AI Engine tools guide, "Profiling for Memory Modules": memory conflicts
           when the same core's two read ports, or two agents, hit one bank.
  [UG1079] AI Engine kernel coding guide, "Floating-Point Operations".
  [MA]     Xilinx/mlir-aie, the file named.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field

from tilelang.devices.costs import (
    CALL_OVERHEAD,
    FLOAT_UNITS,
    MATMUL_BLOCK_OVERHEAD,
    MATMUL_REG_BLOCK,
    SHUFFLE_LATENCY,
    FloatUnit,
    core_ports,
    intrinsic_shape,
)
from tilelang.devices.model import Device
from tilelang.errors import SimulationError
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import Kernel, KOp, OpKind, Param, index_shape

#: Integer division has no vector instruction: a scalar loop, cycles per element.
#: Estimate, unconfirmed (a 32-bit shift-subtract divide step per bit is ~32 cycles;
#: taken as 16 with early exit).
IDIV_SCALAR_CYCLES = 16
#: Vector-slot ops per element to move a vector divisor's element to the scalar unit and its
#: reciprocal back (an extract and an insert, as [UG1079]'s ``upd_elem(invpi, 0, inv(pi))``).
#: Estimate, unconfirmed: one op each.
RECIPROCAL_MOVE_OPS = 2


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

    def add(self, other: Slots) -> None:
        self.load += other.load
        self.store += other.store
        self.vector += other.vector
        self.mac += other.mac
        self.scalar += other.scalar
        self.fixed += other.fixed
        for name, nbytes in other.access.items():
            self.access[name] = self.access.get(name, 0.0) + nbytes

    def busiest(self) -> float:
        """Cycles of the busiest slot."""
        return max(self.load, self.store, self.vector, self.mac, self.scalar)

    def cycles(self) -> int:
        """The call's cycles without the call overhead: fixed plus the busiest slot."""
        return math.ceil(self.fixed + self.busiest())


@dataclass(frozen=True)
class OpContext:
    """What an op's cost rule may look at."""

    device: Device
    fused: frozenset[int]  # ids of ops folded into a preceding multiply (multiply-accumulate)


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
    assert op.type is not None
    nbytes = op.type.nbytes
    return Slots(load=nbytes / core_ports(ctx.device.arch.name).load_bytes,
                 access={op.operands[0].name: nbytes})  # type: ignore[union-attr]


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
    wide = src if src.bits >= op.type.dtype.bits else op.type.dtype
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


@impl(OpKind.ADD, OpKind.SUB)
def _add(op: KOp, ctx: OpContext) -> Slots:
    if id(op) in ctx.fused:
        return Slots()  # the multiply-accumulate already did it on the MAC unit
    assert op.type is not None
    dt = op.type.dtype
    if not dt.is_float:
        return Slots(vector=_vector_cycles(_numel(op), dt, ctx))
    # The float adder works on accumulators: each vector operand converted in, the result out
    # (a scalar operand is broadcast once, outside the loop).
    unit = _float_unit(ctx)
    conv = _convert_ops(dt, unit)
    ins = sum(1 for x in op.operands if _is_vector(x))
    return _float_slots(_numel(op), unit, vector=1 + conv * (ins + 1))


def _float_mul(n: int, dt: DType, unit: FloatUnit) -> Slots:
    """A float multiply of ``n`` elements: multiplier ops, then the bf16 result converted out."""
    mul = unit.f32_mul_ops if dt.bits >= 32 else 1
    return _float_slots(n, unit, vector=_convert_ops(dt, unit), mul=mul)


@impl(OpKind.MUL)
def _mul(op: KOp, ctx: OpContext) -> Slots:
    assert op.type is not None
    dt = op.type.dtype
    if dt.is_float:
        return _float_mul(_numel(op), dt, _float_unit(ctx))
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
    slots = _float_mul(n, dt, unit)
    if _is_vector(op.operands[1]):
        slots.add(Slots(scalar=n * unit.inv_issue, vector=n * RECIPROCAL_MOVE_OPS, fixed=unit.inv_latency))
    else:
        slots.add(Slots(scalar=unit.inv_issue, fixed=unit.inv_latency))
    return slots


@impl(OpKind.EXP)
def _exp(op: KOp, ctx: OpContext) -> Slots:
    assert op.type is not None
    unit = _float_unit(ctx)
    return _float_slots(_numel(op), unit, vector=unit.exp_vector_ops, mul=unit.exp_mul_ops,
                        load=unit.exp_load_cycles)


@impl(OpKind.SUM, OpKind.RMAX)
def _reduce(op: KOp, ctx: OpContext) -> Slots:
    x = op.operands[0]
    t = x.type if isinstance(x, KOp) else x.value_type
    if not t.dtype.is_float:
        # Estimate, unconfirmed: one vector pass; the integer tree's latency is not modelled.
        return Slots(vector=_vector_cycles(t.numel, t.dtype, ctx))
    unit = _float_unit(ctx)
    if op.kind is OpKind.SUM:
        # Accumulated in the float unit's fp32 lanes, bf16 converted in.
        lanes, per_vector = unit.lanes, 1 + _convert_ops(t.dtype, unit)
    else:
        # Max runs on the vector compare unit at the full vector width ([AM020] "Floating-Point
        # Vector Unit": bf16 "comparison, minimum, and maximum"; AIE1's float unit, 8 lanes).
        # Its tree steps are taken to wait the float pipeline's depth too: estimate, unconfirmed
        # (no latency of the compare unit was found).
        lanes, per_vector = ctx.device.vector_lanes(t.dtype), 1
    lanes = min(lanes, t.numel)
    steps = math.ceil(math.log2(lanes)) if lanes > 1 else 0
    return Slots(vector=math.ceil(t.numel / lanes) * per_vector + 2 * steps,
                 fixed=steps * (SHUFFLE_LATENCY + unit.latency))


@impl(OpKind.MATMUL)
def _matmul(op: KOp, ctx: OpContext) -> Slots:
    a, b = op.operands
    m, k = a.type.shape
    n = b.type.shape[1]
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


def _fused_adds(kernel: Kernel) -> frozenset[int]:
    """Adds/subs that take a multiply used nowhere else: one multiply-accumulate."""
    uses: dict[int, int] = {}
    for op in kernel.body:
        for x in op.operands:
            uses[id(x)] = uses.get(id(x), 0) + 1
    fused = set()
    for op in kernel.body:
        if op.kind in (OpKind.ADD, OpKind.SUB):
            if any(isinstance(x, KOp) and x.kind in (OpKind.MUL, OpKind.MATMUL) and uses[id(x)] == 1
                   for x in op.operands):
                fused.add(id(op))
    return frozenset(fused)


def kernel_slots(kernel: Kernel, device: Device) -> Slots:
    """Slot occupancy of one call of ``kernel`` (without the call overhead).

    Raises:
        SimulationError: an op kind has no cost rule.
    """
    ctx = OpContext(device, _fused_adds(kernel))
    total = Slots()
    for op in kernel.body:
        rule = _RULES.get(op.kind)
        if rule is None:
            raise SimulationError(f"kernel {kernel.name!r}: no cost rule for op {op.kind.value}")
        total.add(rule(op, ctx))
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
    from ``bank_of`` (no placement known) conflict with nothing.
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
