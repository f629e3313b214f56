"""Building mlir-aie ops as unregistered operations, and the attributes they carry.

The aie/aiex dialects are not registered upstream: ops are made with
``Operation.create`` in a context that allows unregistered dialects, and print
in generic form, which aie-opt parses. Attribute kinds follow mlir-aie's op
definitions (AIE_FACTS.md "mlir-aie dialect"; the reference modules): i32
for col/row/ids/enums, flat symbol references for fifo and allocation names,
plain arrays of i64 for link offsets, ``array<i64: ...>`` for the npu ops'
static offsets/sizes/strides, ``#aie<bd_dim_layout_array[...]>`` for BD dims.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tilelang.backends.mlir._mlir import mlir


def create(
    name: str,
    operands: Sequence[object] = (),
    attrs: dict[str, object] | None = None,
    results: Sequence[object] = (),
    regions: int = 0,
    successors: Sequence[object] | None = None,
) -> object:
    """An (unregistered) operation at the current insertion point."""
    ir = mlir().ir
    return ir.Operation.create(
        name,
        results=list(results),
        operands=list(operands),
        attributes=attrs or {},
        successors=list(successors) if successors else None,
        regions=regions,
    )


def end() -> object:
    """``aie.end``: the terminator of aie regions."""
    return create("aie.end")


def index_type() -> object:
    return mlir().ir.IndexType.get()


def i32(value: int) -> object:
    ir = mlir().ir
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))


def i64(value: int) -> object:
    ir = mlir().ir
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def boolean(value: bool) -> object:
    return mlir().ir.BoolAttr.get(bool(value))


def string(value: str) -> object:
    return mlir().ir.StringAttr.get(value)


def symbol(name: str) -> object:
    """``@name``."""
    return mlir().ir.FlatSymbolRefAttr.get(name)


def symbols(names: Iterable[str]) -> object:
    """``[@a, @b]``."""
    ir = mlir().ir
    return ir.ArrayAttr.get([symbol(n) for n in names])


def i64_list(values: Iterable[int]) -> object:
    """A plain array of i64 (``[0 : i64, 1024 : i64]``), as ``aie.objectfifo.link`` offsets are."""
    ir = mlir().ir
    return ir.ArrayAttr.get([i64(v) for v in values])


def dense_i64(values: Iterable[int]) -> object:
    """``array<i64: ...>``."""
    return mlir().ir.DenseI64ArrayAttr.get([int(v) for v in values])


def dense_i32(values: Iterable[int]) -> object:
    """``array<i32: ...>``."""
    return mlir().ir.DenseI32ArrayAttr.get([int(v) for v in values])


def bd_dims(dims: Sequence[tuple[int, int]]) -> object:
    """``#aie<bd_dim_layout_array[<size = s, stride = t>, ...]>`` from (size, stride) pairs, outermost first."""
    ir = mlir().ir
    inner = ", ".join(f"<size = {s}, stride = {t}>" for s, t in dims)
    return ir.Attribute.parse(f"#aie<bd_dim_layout_array[{inner}]>")


def bd_dims_per_consumer(consumers: int) -> object:
    """``#aie<bd_dim_layout_array_array[[], ...]>``: no re-layout on any consumer's side."""
    ir = mlir().ir
    inner = ", ".join("[]" for _ in range(consumers))
    return ir.Attribute.parse(f"#aie<bd_dim_layout_array_array[{inner}]>")


def objectfifo_type(memref: object) -> object:
    """``!aie.objectfifo<memref<...>>``."""
    return mlir().ir.Type.parse(f"!aie.objectfifo<{memref}>")


def subview_type(memref: object) -> object:
    """``!aie.objectfifosubview<memref<...>>``."""
    return mlir().ir.Type.parse(f"!aie.objectfifosubview<{memref}>")


class Names:
    """Gives out symbol names that collide with nothing already used in the module."""

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken)

    def fresh(self, wanted: str) -> str:
        """``wanted``, or ``wanted_1``, ``wanted_2``, ... if it is taken."""
        name, n = wanted, 0
        while name in self.taken:
            n += 1
            name = f"{wanted}_{n}"
        self.taken.add(name)
        return name


def type_attr(t: object) -> object:
    """A type as an attribute (``elemType = !aie.objectfifo<...>``)."""
    return mlir().ir.TypeAttr.get(t)
