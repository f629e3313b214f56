"""The state of lowering one kernel, and the table of lowering rules keyed by op kind.

Rules (as JAX Pallas' ``register_lowering_rule``) live in ``memory_rules.py``
and ``compute_rules.py``: ``RULES[kind](lowering, op)`` emits the op's code at
the current insertion point and returns its value (or None).
"""

from __future__ import annotations

from collections.abc import Callable

from tilelang.backends.mlir.slicing import exact, may_overlap, region_of, same_region
from tilelang.backends.mlir.types import contiguous_strides
from tilelang.backends.mlir.values import Scalar, Slot, Value, View, generic, leaves, materialize, temporary
from tilelang.errors import KernelError
from tilelang.ir.index import Index
from tilelang.ir.kernel import Kernel, KOp, Param
from tilelang.ir.ops import OpKind
from tilelang.ir.types import TileType

Rule = Callable[["KernelLowering", KOp], Value | None]
RULES: dict[OpKind, Rule] = {}


def register(*kinds: OpKind) -> Callable[[Rule], Rule]:
    """Register ``fn`` as the lowering rule of ``kinds``."""

    def deco(fn: Rule) -> Rule:
        for k in kinds:
            RULES[k] = fn
        return fn

    return deco


class KernelLowering:
    """Where each op's value is, who still needs it, and which ops a later store computes in place.

    Attributes:
        kernel: the kernel being lowered.
        params: tile parameters as views of the function's memref arguments.
        slots: op (or scalar parameter) id -> the slot holding its value.
        uses: op id -> number of operand uses.
        users: op id -> the ops using it, once per use.
        last_use: op id -> body position of its last use.
        into_store: store op id -> the op whose result it stores, computed
            straight into the store's destination (set by ``compute_rules``).
        deferred: ids of ops left for the store that computes them.
    """

    def __init__(self, kernel: Kernel, args: list) -> None:
        self.kernel = kernel
        self.params: dict[str, View] = {}
        self.slots: dict[int, Slot] = {}
        self.uses: dict[int, int] = {}
        self.users: dict[int, list[KOp]] = {}
        self.last_use: dict[int, int] = {}
        self.position: dict[int, int] = {}
        self.index = 0
        self.into_store: dict[int, KOp] = {}
        self.deferred: set[int] = set()
        for p, a in zip(kernel.params, args, strict=True):
            if isinstance(p.type, TileType):
                region = region_of(None, p.type.shape)
                self.params[p.name] = View(a, p.type, contiguous_strides(p.type.shape), param=p.name, region=region)
            else:
                self.slots[id(p)] = Slot(Scalar(a, p.type))
        for i, op in enumerate(kernel.body):
            self.position[id(op)] = i
            for x in op.operands:
                self.uses[id(x)] = self.uses.get(id(x), 0) + 1
                self.users.setdefault(id(x), []).append(op)
                self.last_use[id(x)] = i

    def run(self) -> None:
        """Lower every op of the body in order.

        Raises:
            KernelError: an op kind has no lowering rule.
        """
        from tilelang.backends.mlir.compute_rules import plan_stores_in_place

        plan_stores_in_place(self)
        for i, op in enumerate(self.kernel.body):
            if id(op) in self.deferred:
                continue
            rule = RULES.get(op.kind)
            if rule is None:
                raise KernelError(f"kernel {self.kernel.name!r}: no MLIR lowering for op {op.kind.value}")
            self.index = i
            value = rule(self, op)
            if value is not None:
                self.slots[id(op)] = Slot(value)

    # -- helpers for rules ------------------------------------------------------------

    def operand(self, x: KOp | Param) -> Slot:
        """The slot holding an operand's value."""
        return self.slots[id(x)]

    def readable(self, x: KOp | Param) -> View:
        """An operand in memory with exactly its tile's shape: a view where it is in memory
        (unit dimensions dropped by a rank-reducing subview), else computed into a temporary."""
        slot = self.operand(x)
        slot.value = exact(slot.value) if isinstance(slot.value, View) else materialize(slot.value)
        return slot.value

    def read_once(self, op: KOp) -> bool:
        """Whether no element of ``op``'s value is read twice: one use, or only slices of disjoint regions.

        Such a value is left as an expression fused into each consumer, which
        computes just the elements it reads: nothing is computed twice, and
        nothing is stored.
        """
        users = self.users.get(id(op), [])
        if len(users) <= 1:
            return True
        if any(u.kind is not OpKind.SLICE for u in users):
            return False
        assert op.type is not None
        shape = op.type.shape
        regions = [u.attr("index") for u in users]
        return not any(
            may_overlap(a, b, shape)
            for i, a in enumerate(regions)
            for b in regions[i + 1 :]  # type: ignore[arg-type]
        )

    def snapshot(self, slot: Slot) -> None:
        """Replace a parameter view by a private copy of it."""
        v = slot.value
        assert isinstance(v, View)
        out = temporary(v.type)
        generic(v, out)
        slot.value = out

    def pending_slots(self) -> list[Slot]:
        """Slots of values defined before the current op and used after it."""
        out = []
        for x, last in self.last_use.items():
            if last > self.index and x in self.slots and self.position.get(x, -1) < self.index:
                out.append(self.slots[x])
        return out

    def protect(self, param: str, region: Index, reads: list[Slot], elementwise: bool = True) -> None:
        """Before a store of ``region`` of ``param``: snapshot what must not see it.

        Values defined earlier and used later that read overlapping memory are
        copied, and so are the store's own ``reads``, except (``elementwise``)
        those reading exactly the elements being written: element by element,
        in place, is safe.
        """
        shape = self.params[param].type.shape
        for slot in self.pending_slots():
            targets = [slot] if isinstance(slot.value, View) else leaves(slot.value)
            for leaf in targets:
                if leaf.value.param == param and may_overlap(leaf.value.region, region, shape):
                    self.snapshot(leaf)
        for leaf in reads:
            v = leaf.value
            if not isinstance(v, View) or v.param != param:
                continue
            if elementwise and same_region(v.region, region, shape):
                continue
            if may_overlap(v.region, region, shape):
                self.snapshot(leaf)


__all__ = ["RULES", "KernelLowering", "may_overlap", "region_of", "register"]
