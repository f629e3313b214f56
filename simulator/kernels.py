"""Kernel calls compiled once into a list of numpy steps (the functional part of a call).

``semantics.run`` is the reference meaning of the kernel IR; it interprets
every op through a chain of tests and a name-keyed environment, which costs
more than the numpy work of a small tile. A :class:`CompiledKernel` resolves
all of that once per kernel: each op becomes one closure over positional
slots, and the common ops run a shorter path that computes exactly what
``semantics.eval_op`` computes. Every other op calls ``semantics.eval_op``
itself. ``tests/test_sim_kernels.py`` checks the two agree bit for bit on
every op kind.

The short paths and why each equals the reference:

- ``load`` returns a view instead of a copy when every use of the loaded
  value comes before the kernel's first store, or is that store (a store may
  alias any tile parameter, so only then can no store change what the view
  shows; numpy's assignment copes with a source overlapping its target);
- ``add``/``sub``/``mul``/``max``/``min`` on f32 or integer tiles call the
  numpy function directly: the reference's casts to the compute dtype and
  back are no-ops for these dtypes, and integer results wrap the same way;
- ``matmul`` with a float accumulator converts to f64 into buffers kept
  between calls, multiplies there and rounds once, as the reference does;
- ``matmul`` of 8- or 16-bit integers into an integer accumulator multiplies
  in f64 too: every product is below 2**30 in magnitude and a sum of at most
  2**21 of them below 2**51, so f64 holds the exact integer, and rounding it
  to the accumulator wraps exactly as the reference's modular uint64 product
  does (the reference's uint64 matmul has no BLAS and is 8x slower);
- ``const`` is built once (no op writes into its operands).

Floating-point warnings are silenced, as the reference does per op: per call
(:meth:`CompiledKernel.run`), or once around a whole simulation (the
simulator calls :meth:`CompiledKernel.run_quiet` inside one ``np.errstate``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tilelang.ir import semantics
from tilelang.ir.kernel import Kernel, KOp, OpKind, Param

Step = Callable[[list, list], None]

_FAST_BINARY = {
    OpKind.ADD: np.add,
    OpKind.SUB: np.subtract,
    OpKind.MUL: np.multiply,
    OpKind.MAX: np.maximum,
    OpKind.MIN: np.minimum,
}
#: dtypes whose arithmetic is carried out in themselves (semantics: only bf16 is not).
_NATIVE = frozenset({"i8", "i16", "i32", "f32"})


class CompiledKernel:
    """A kernel ready to run on positional arguments.

    Attributes:
        kernel: the kernel.
    """

    __slots__ = ("_n", "_steps", "fused", "kernel")

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        body = kernel.body
        self._n = len(body)
        slot = {id(op): i for i, op in enumerate(body)}
        pos = {id(p): j for j, p in enumerate(kernel.params)}
        stores = [i for i, op in enumerate(body) if op.kind is OpKind.STORE]
        first_store = stores[0] if stores else len(body)
        last_use: dict[int, int] = {}
        for i, op in enumerate(body):
            for x in op.operands:
                if isinstance(x, KOp):
                    last_use[slot[id(x)]] = i
        fused = _fused_matmul(kernel, pos)
        #: the kernel's one step when it is a GEMM kernel ``_fused_matmul`` knows (it reads no environment)
        self.fused = fused
        self._steps: list[Step] = [fused] if fused is not None else [
            _compile(i, op, slot, pos, kernel.params, view=last_use.get(i, -1) <= first_store)
            for i, op in enumerate(body)
        ]

    def run(self, args: list[np.ndarray]) -> None:
        """Execute the kernel on ``args`` (one array per parameter, in order; 0-d for scalars)."""
        with np.errstate(all="ignore"):
            self.run_quiet(args)

    def run_quiet(self, args: list[np.ndarray]) -> None:
        """:meth:`run` for a caller that has already silenced numpy's floating-point warnings."""
        env: list = [None] * self._n
        for step in self._steps:
            step(env, args)


def _getter(x: KOp | Param, slot: dict[int, int], pos: dict[int, int]) -> tuple[bool, int]:
    """(from the environment?, index) of an operand."""
    if isinstance(x, KOp):
        return True, slot[id(x)]
    return False, pos[id(x)]


def _compile(i: int, op: KOp, slot: dict[int, int], pos: dict[int, int], params: tuple[Param, ...],
             view: bool) -> Step:
    kind = op.kind
    if kind is OpKind.LOAD:
        return _load(i, op, pos, view)
    if kind is OpKind.STORE:
        return _store(op, slot, pos)
    if kind is OpKind.CONST:
        value = semantics.eval_op(op, [], {})

        def const(env: list, args: list) -> None:
            env[i] = value

        return const
    t = op.type
    if kind in _FAST_BINARY and t is not None and t.shape and t.dtype.name in _NATIVE:
        return _binary(i, _FAST_BINARY[kind], op, slot, pos)
    if kind is OpKind.MATMUL and t is not None and _exact_in_f64(op):
        return _matmul(i, op, slot)
    return _generic(i, op, slot, pos, params)


def _load(i: int, op: KOp, pos: dict[int, int], view: bool) -> Step:
    j = pos[id(op.operands[0])]
    index = op.attr("index")
    region = None if index is None else semantics.to_slices(index)
    if region is None:
        if view:
            def load_view(env: list, args: list) -> None:
                env[i] = args[j]

            return load_view

        def load_copy(env: list, args: list) -> None:
            env[i] = np.array(args[j])

        return load_copy

    def load_region(env: list, args: list) -> None:
        env[i] = args[j][region] if view else np.array(args[j][region])

    return load_region


def _store(op: KOp, slot: dict[int, int], pos: dict[int, int]) -> Step:
    j = pos[id(op.operands[0])]
    from_env, k = _getter(op.operands[1], slot, pos)
    index = op.attr("index")
    region = (...,) if index is None else semantics.to_slices(index)

    def store(env: list, args: list) -> None:
        args[j][region] = env[k] if from_env else args[k]

    return store


def _binary(i: int, fn: Callable, op: KOp, slot: dict[int, int], pos: dict[int, int]) -> Step:
    (ea, a), (eb, b) = (_getter(x, slot, pos) for x in op.operands)
    dt = op.type.dtype.numpy  # type: ignore[union-attr]

    def binary(env: list, args: list) -> None:
        out = fn(env[a] if ea else args[a], env[b] if eb else args[b])
        env[i] = out if out.dtype == dt else out.astype(dt)

    return binary


#: Largest contraction length for which an integer matmul is exact in f64 (see the module docstring).
_EXACT_INT_K = 2**21


def _exact_in_f64(op: KOp) -> bool:
    """Whether the f64 product of this matmul equals the reference's."""
    x = op.operands[0]
    acc = op.type.dtype  # type: ignore[union-attr]
    if acc.is_float:
        return True
    src = x.type.dtype  # type: ignore[union-attr]
    return acc.is_int and src.is_int and src.bits <= 16 and x.type.shape[1] <= _EXACT_INT_K  # type: ignore[union-attr]


def _matmul(i: int, op: KOp, slot: dict[int, int]) -> Step:
    x, y = op.operands
    a, b = slot[id(x)], slot[id(y)]
    (m, k), n = x.type.shape, y.type.shape[1]  # type: ignore[union-attr]
    acc = op.type.dtype.numpy  # type: ignore[union-attr]
    integer = op.type.dtype.is_int  # type: ignore[union-attr]
    fa, fb, fc = np.empty((m, k)), np.empty((k, n)), np.empty((m, n))

    def matmul(env: list, args: list) -> None:
        fa[...] = env[a]
        fb[...] = env[b]
        np.matmul(fa, fb, out=fc)
        env[i] = fc.astype(np.int64).astype(acc) if integer else fc.astype(acc)

    return matmul


def _fused_matmul(kernel: Kernel, pos: dict[int, int]) -> Step | None:
    """One step for the two GEMM kernels that are most calls of a matmul design, or None for another kernel.

    ``c[...] = a @ b`` (load a, load b, matmul, store c) and ``c[...] += a @ b`` (load c, load a, load b,
    matmul, add, store c), whole tiles, the matmul one :func:`_matmul` computes exactly and the sum in a
    native dtype: the step computes the same product the same way and adds it into ``c`` in place
    (``np.add(c, p, out=c)`` gives what the add step then the store give: the sum is elementwise, read
    before written at each element; the operands were copied into the f64 buffers first, so ``c``
    aliasing ``a`` or ``b`` changes nothing).
    """
    body = kernel.body
    kinds = [op.kind for op in body]
    if kinds == [OpKind.LOAD, OpKind.LOAD, OpKind.MATMUL, OpKind.STORE]:
        la, lb, mm, st = body
        lc = add = None
    elif kinds == [OpKind.LOAD, OpKind.LOAD, OpKind.LOAD, OpKind.MATMUL, OpKind.ADD, OpKind.STORE]:
        lc, la, lb, mm, add, st = body
        if add.operands[0] is not lc or add.operands[1] is not mm or st.operands[1] is not add:
            return None
        if st.operands[0] is not lc.operands[0] or lc.attr("index") is not None:
            return None
        t = add.type
        if t is None or not t.shape or t.dtype.name not in _NATIVE or t != lc.type or t != mm.type:
            return None
    else:
        return None
    if mm.operands[0] is not la or mm.operands[1] is not lb or (add is None and st.operands[1] is not mm):
        return None
    if any(op.attr("index") is not None for op in (la, lb, st)) or mm.type is None or not _exact_in_f64(mm):
        return None
    if add is None and st.operands[0].type != mm.type:  # (the store casts nothing: c is the product's type)
        return None
    ja, jb, jc = (pos.get(id(op.operands[0])) for op in (la, lb, st))
    if ja is None or jb is None or jc is None:
        return None
    x, y = mm.operands
    (m, k), n = x.type.shape, y.type.shape[1]  # type: ignore[union-attr]
    acc = mm.type.dtype.numpy
    integer = mm.type.dtype.is_int
    fa, fb, fc = np.empty((m, k)), np.empty((k, n)), np.empty((m, n))
    matmul, add_ = np.matmul, np.add

    if add is None:
        def matmul_store(env: list, args: list) -> None:
            fa[...] = args[ja]
            fb[...] = args[jb]
            matmul(fa, fb, out=fc)
            args[jc][...] = fc.astype(np.int64).astype(acc) if integer else fc.astype(acc)

        return matmul_store

    if integer:
        def matmul_add_int(env: list, args: list) -> None:
            fa[...] = args[ja]
            fb[...] = args[jb]
            matmul(fa, fb, out=fc)
            c = args[jc]
            add_(c, fc.astype(np.int64).astype(acc), out=c)

        return matmul_add_int
    rounded = np.empty((m, n), acc)  # the product rounded to the accumulator (astype's cast, into a kept buffer)

    def matmul_add(env: list, args: list) -> None:
        fa[...] = args[ja]
        fb[...] = args[jb]
        matmul(fa, fb, out=fc)
        rounded[...] = fc
        c = args[jc]
        add_(c, rounded, out=c)

    return matmul_add


def _generic(i: int, op: KOp, slot: dict[int, int], pos: dict[int, int], params: tuple[Param, ...]) -> Step:
    getters = [_getter(x, slot, pos) for x in op.operands]
    eval_op = semantics.eval_op

    def generic(env: list, args: list) -> None:
        env[i] = eval_op(op, [env[k] if e else args[k] for e, k in getters], {})

    return generic
