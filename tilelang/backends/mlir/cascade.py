"""Cascade streams as mlir-aie takes them: ``aie.cascade_flow`` between tiles, put/get loops in core bodies.

- AIE-ML and later (``CascadeSpec.configurable``): one ``aie.cascade_flow(%producer_tile, %consumer_tile)``
  per cascade; mlir-aie's ``aie-lower-cascade-flows`` turns it into ``aie.configure_cascade`` of both tiles.
- AIE1: no op; the chain is fixed in hardware and mlir-aie refuses ``aie.configure_cascade`` on AIE1
  ("cascade not supported in AIE1"), so the cores only put and get (mlir-aie's tutorial-8 does the same).
- A traced kernel's cascade argument is its core's staging buffer. After a call that sends, an ``scf.for``
  over the tile's cascade words loads each word (``vector.load`` of 512 bits on AIE2; on AIE1 384 bits,
  bit-cast to the ``i384`` mlir-aie's verifier asks for) and puts it (``aie.put_cascade``); before a call
  that takes, the loop gets each word (``aie.get_cascade``) and stores it into the staging buffer.
- An extern kernel does its cascade itself (the vendor's ``put_mcd``/``get_scd``): its parameters that
  receive cascades are left out of its declaration and of its calls.
"""

from __future__ import annotations

from tilelang.backends.mlir import aie_ops
from tilelang.backends.mlir._mlir import mlir
from tilelang.backends.mlir.types import scalar_type
from tilelang.devices.cascade_rules import cascade_spec
from tilelang.errors import TileLangError
from tilelang.ir.cascade import call_ports, cascade_ends
from tilelang.ir.design import Call, CascadeArg, Design, walk
from tilelang.ir.kernel import ExternKernel
from tilelang.ir.types import TileType


def emit_cascade_flows(dm: object) -> None:
    """``aie.cascade_flow`` for every cascade (none on AIE1, whose chain is fixed)."""
    design, plan = dm.design, dm.plan  # type: ignore[attr-defined]
    if not cascade_spec(design.device).configurable:
        return
    for e in cascade_ends(design).values():
        src, dst = plan.placement[e.producer], plan.placement[e.consumer]
        aie_ops.create("aie.cascade_flow", [dm.tile(src), dm.tile(dst)])  # type: ignore[attr-defined]


def extern_cascade_params(design: Design) -> dict[str, set[str]]:
    """Per extern kernel, the parameters its calls pass cascades to (left out of its declaration).

    Raises:
        TileLangError: a parameter gets a cascade in one call and something else in another.
    """
    kernels = {k.name: k for k in design.kernels}
    cascaded: dict[str, set[str]] = {}
    other: dict[str, set[str]] = {}
    for core in design.cores:
        for s in walk(core.body):
            if not isinstance(s, Call) or not isinstance(kernels.get(s.kernel), ExternKernel):
                continue
            k = kernels[s.kernel]
            for p, a in zip(k.params, s.args, strict=True):
                (cascaded if isinstance(a, CascadeArg) else other).setdefault(k.name, set()).add(p.name)
    for name, ps in cascaded.items():
        both = ps & other.get(name, set())
        if both:
            raise TileLangError(f"extern kernel {name!r}: parameter {sorted(both)[0]!r} gets a cascade in one call and "
                                f"a buffer in another; the MLIR backend leaves cascade parameters out of the "
                                f"kernel's declaration, so declare two kernels")
    return cascaded


def _word(elem: TileType, device: object) -> tuple[object, int, bool]:
    """(vector type of one cascade word, its lanes, whether it is bit-cast to an iN for put/get)."""
    m = mlir()
    spec = cascade_spec(device)
    bits = elem.dtype.bits
    if spec.word_bits % bits:
        raise TileLangError(f"a {spec.word_bits}-bit cascade word holds no whole number of {elem.dtype} elements")
    lanes = spec.word_bits // bits
    vec = m.ir.VectorType.get([lanes], scalar_type(elem.dtype))
    # mlir-aie's DataLayout sizes a vector<12xi32> as 512 bits; an i384 is 384 (AIEDialect.cpp verifiers).
    return vec, lanes, spec.word_bits & (spec.word_bits - 1) != 0


def _flat(staging: object, elem: TileType) -> object:
    m = mlir()
    if len(elem.shape) == 1:
        return staging
    flat = m.ir.MemRefType.get([elem.numel], scalar_type(elem.dtype))
    reassoc = m.ir.ArrayAttr.get([m.ir.ArrayAttr.get(
        [m.ir.IntegerAttr.get(m.ir.IntegerType.get_signless(64), i) for i in range(len(elem.shape))])])
    return m.memref.collapse_shape(flat, staging, reassoc)


def _word_loop(elem: TileType, device: object, body) -> None:  # noqa: ANN001 - body(index of the word's first element)
    m = mlir()
    index = m.ir.IndexType.get()
    _, lanes, _ = _word(elem, device)
    words = elem.nbytes // cascade_spec(device).word_bytes
    loop = m.scf.ForOp(m.arith.constant(index, 0), m.arith.constant(index, words), m.arith.constant(index, 1))
    with m.ir.InsertionPoint(loop.body):
        at = m.arith.muli(loop.induction_variable, m.arith.constant(index, lanes))
        body(at)
        m.scf.YieldOp([])


def put_tile(staging: object, elem: TileType, device: object) -> None:
    """Send the staging buffer's tile, word by word (``aie.put_cascade``)."""
    m = mlir()
    vector = m.vector

    vec, _, wide = _word(elem, device)
    flat = _flat(staging, elem)
    bits = cascade_spec(device).word_bits

    def body(at: object) -> None:
        v = vector.load(vec, flat, [at])
        if wide:
            iw = m.ir.IntegerType.get_signless(bits)
            one = vector.bitcast(m.ir.VectorType.get([1], iw), v)
            v = vector.extract(one, [], [0])
        aie_ops.create("aie.put_cascade", [v])

    _word_loop(elem, device, body)


def get_tile(staging: object, elem: TileType, device: object) -> None:
    """Take a tile into the staging buffer, word by word (``aie.get_cascade``)."""
    m = mlir()
    vector = m.vector

    vec, _, wide = _word(elem, device)
    flat = _flat(staging, elem)
    bits = cascade_spec(device).word_bits

    def body(at: object) -> None:
        if wide:
            iw = m.ir.IntegerType.get_signless(bits)
            w = aie_ops.create("aie.get_cascade", results=[iw]).result
            v = vector.bitcast(vec, vector.broadcast(m.ir.VectorType.get([1], iw), w))
        else:
            v = aie_ops.create("aie.get_cascade", results=[vec]).result
        vector.store(v, flat, [at])

    _word_loop(elem, device, body)


def call_cascades(call: Call, kernel: object) -> list[tuple[str, bool]]:
    """``(cascade, sends)`` for each cascade argument of ``call``."""
    from tilelang.ir.design import Port

    return [(name, port is Port.PRODUCE) for name, port, _ in call_ports(call, kernel)]  # type: ignore[arg-type]


__all__ = ["call_cascades", "emit_cascade_flows", "extern_cascade_params", "get_tile", "put_tile"]
