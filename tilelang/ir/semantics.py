"""The executable meaning of the kernel IR, in numpy.

This is the reference every other consumer must match: calling a kernel on
numpy arrays, the simulator's functional model and (within the documented
tolerance) the kernels the MLIR backend emits.

Rules (docs/kernel_semantics.md):
- Integer arithmetic wraps in the op's dtype; integer ``div`` truncates toward
  zero and gives 0 for a zero divisor.
- bf16 elementwise ops compute in f32 and round once to bf16 (round to nearest
  even). f32 ops compute in f32.
- ``matmul`` and ``sum`` over floats accumulate in f64 and round once to the
  result dtype; over integers they wrap in the result dtype.
- ``cast`` float -> int truncates toward zero and saturates at the dtype's
  range (NaN gives 0); int -> int wraps.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tilelang.errors import KernelError
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import Index, Kernel, KOp, OpKind, Param
from tilelang.ir.ops import REDUCE, UNARY
from tilelang.ir.types import TileType

Env = dict[int, np.ndarray]


def to_slices(index: Index) -> tuple:
    """A normalised index as a numpy subscript."""
    return tuple(slice(*it) if isinstance(it, tuple) else it for it in index)


def _compute_dtype(dt: DType) -> np.dtype:
    """The numpy dtype arithmetic of ``dt`` is carried out in."""
    return np.dtype(np.float32) if dt.name == "bf16" else dt.numpy


def _as(x: np.ndarray, dt: DType) -> np.ndarray:
    return np.asarray(x).astype(_compute_dtype(dt), copy=False)


def _round(x: np.ndarray, dt: DType) -> np.ndarray:
    return np.asarray(x).astype(dt.numpy)


def _int_div(a: np.ndarray, b: np.ndarray, dt: DType) -> np.ndarray:
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = np.floor_divide(a64, safe)
    q = q + ((np.remainder(a64, safe) != 0) & ((a64 < 0) != (safe < 0)))
    q = np.where(b64 == 0, 0, q)
    return q.astype(dt.numpy)


def _binary(kind: OpKind, a: np.ndarray, b: np.ndarray, dt: DType) -> np.ndarray:
    a, b = _as(a, dt), _as(b, dt)
    if kind is OpKind.DIV and dt.is_int:
        return _int_div(a, b, dt)
    fn = {
        OpKind.ADD: np.add,
        OpKind.SUB: np.subtract,
        OpKind.MUL: np.multiply,
        OpKind.DIV: np.divide,
        OpKind.MAX: np.maximum,
        OpKind.MIN: np.minimum,
    }[kind]
    with np.errstate(all="ignore"):
        return _round(fn(a, b), dt)


_COMPARE: dict[OpKind, Callable] = {
    OpKind.LT: np.less,
    OpKind.LE: np.less_equal,
    OpKind.GT: np.greater,
    OpKind.GE: np.greater_equal,
    OpKind.EQ: np.equal,
    OpKind.NE: np.not_equal,
}


#: The unary ops, in the compute dtype (rsqrt: the square root rounded, then its reciprocal rounded).
_UNARY = {
    OpKind.NEG: np.negative,
    OpKind.ABS: np.abs,
    OpKind.RELU: lambda x: np.maximum(x, np.zeros((), x.dtype)),
    OpKind.EXP: np.exp,
    OpKind.SQRT: np.sqrt,
    OpKind.RSQRT: lambda x: np.reciprocal(np.sqrt(x)),
    OpKind.TANH: np.tanh,
}


def _unary(kind: OpKind, x: np.ndarray, dt: DType) -> np.ndarray:
    x = _as(x, dt)
    with np.errstate(all="ignore"):
        return _round(_UNARY[kind](x), dt)


def cast(x: np.ndarray, src: DType, dst: DType) -> np.ndarray:
    """Convert values of ``src`` to ``dst`` by the IR's rules."""
    x = np.asarray(x)
    if src.is_float and dst.is_int:
        lo, hi = np.iinfo(dst.numpy).min, np.iinfo(dst.numpy).max
        f = np.trunc(x.astype(np.float64))
        f = np.where(np.isnan(f), 0.0, np.clip(f, lo, hi))
        return f.astype(dst.numpy)
    if src.is_int and dst.name == "bf16":
        return x.astype(np.float32).astype(dst.numpy)
    with np.errstate(all="ignore"):
        return x.astype(dst.numpy)


def _matmul(a: np.ndarray, b: np.ndarray, acc: DType) -> np.ndarray:
    if acc.is_int:
        a64 = a.astype(np.int64).astype(np.uint64)
        b64 = b.astype(np.int64).astype(np.uint64)
        return np.matmul(a64, b64).astype(acc.numpy)
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(acc.numpy)


#: The reductions that pick one of their operands: exact in any dtype.
_PICK = {OpKind.RMAX: np.max, OpKind.RMIN: np.min}


def _reduce(kind: OpKind, x: np.ndarray, dt: DType, axes: tuple[int, ...]) -> np.ndarray:
    pick = _PICK.get(kind)
    if pick is not None:
        return pick(_as(x, dt), axis=axes).astype(dt.numpy)
    if dt.is_int:
        return np.sum(x.astype(np.int64).astype(np.uint64), axis=axes).astype(dt.numpy)
    return np.sum(x.astype(np.float64), axis=axes).astype(dt.numpy)


def eval_op(op: KOp, args: list[np.ndarray], params: dict[str, np.ndarray]) -> np.ndarray | None:
    """Evaluate one op on numpy operands; LOAD/STORE read and write ``params``."""
    kind = op.kind
    t = op.type
    if kind is OpKind.CONST:
        assert t is not None
        return np.asarray(op.attr("value"), dtype=t.dtype.numpy)
    if kind is OpKind.LOAD:
        src = params[op.operands[0].name]
        index = op.attr("index")
        return np.array(src if index is None else src[to_slices(index)])
    if kind is OpKind.STORE:
        dst = params[op.operands[0].name]
        index = op.attr("index")
        region = (...,) if index is None else to_slices(index)
        dst[region] = args[1]
        return None
    assert t is not None
    if kind in _COMPARE:
        dt = op.operands[0].type if isinstance(op.operands[0], KOp) else op.operands[0].value_type
        return _COMPARE[kind](_as(args[0], dt.dtype), _as(args[1], dt.dtype))
    if kind in (OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.DIV, OpKind.MAX, OpKind.MIN):
        return _binary(kind, args[0], args[1], t.dtype)
    if kind in UNARY:
        return _unary(kind, args[0], t.dtype)
    if kind is OpKind.CAST:
        src = _operand_type(op.operands[0]).dtype
        return cast(args[0], src, t.dtype)
    if kind is OpKind.WHERE:
        return np.where(args[0], args[1], args[2]).astype(t.dtype.numpy)
    if kind is OpKind.MATMUL:
        return _matmul(args[0], args[1], t.dtype)
    if kind in REDUCE:
        return _reduce(kind, args[0], t.dtype, op.attr("axes"))
    if kind is OpKind.SLICE:
        return np.array(args[0][to_slices(op.attr("index"))])
    raise KernelError(f"no numpy semantics for {kind.value}")


def _operand_type(x: KOp | Param) -> TileType:
    return x.type if isinstance(x, KOp) else x.value_type


def run(kernel: Kernel, params: dict[str, np.ndarray]) -> None:
    """Execute ``kernel`` on ``params`` (name -> array, or 0-d array for scalars).

    Tile parameters are read and written in place.
    """
    env: Env = {}
    for p in kernel.params:
        if not p.is_tile:
            env[id(p)] = params[p.name]
    for op in kernel.body:
        args = [x if isinstance(x, Param) and x.is_tile else env[id(x)] for x in op.operands]
        out = eval_op(op, args, params)
        if out is not None:
            env[id(op)] = out
