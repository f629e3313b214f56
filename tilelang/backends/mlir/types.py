"""tilelang dtypes and tile types as MLIR types (upstream builtin types only)."""

from __future__ import annotations

from tilelang.backends.mlir._mlir import mlir
from tilelang.ir.dtypes import DType
from tilelang.ir.types import TileType


def scalar_type(dt: DType) -> object:
    """The MLIR element type holding ``dt``: signless iN, bf16 or f32 (i1 for booleans).

    Must be called inside an ``ir.Context``.
    """
    ir = mlir().ir
    if dt.kind == "bool":
        return ir.IntegerType.get_signless(1)
    if dt.is_int:
        return ir.IntegerType.get_signless(dt.bits)
    if dt.name == "bf16":
        return ir.BF16Type.get()
    if dt.name == "f32":
        return ir.F32Type.get()
    raise ValueError(f"no MLIR type for {dt}")


def storage_type(dt: DType) -> object:
    """The element type a tile of ``dt`` is held in memory as: booleans as i8 (0 or 1), as numpy
    does; an ``i1`` memref does not lower to LLVM (sub-byte elements are not addressable)."""
    ir = mlir().ir
    return ir.IntegerType.get_signless(8) if dt.kind == "bool" else scalar_type(dt)


def compute_type(dt: DType) -> object:
    """The type arithmetic on ``dt`` is carried out in: f32 for bf16 (semantics.py), else ``dt``'s own."""
    ir = mlir().ir
    return ir.F32Type.get() if dt.name == "bf16" else scalar_type(dt)


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major element strides of ``shape``."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def memref_type(shape: tuple[int, ...], dt: DType, strides: tuple[int, ...] | None = None, offset: int = 0) -> object:
    """``memref<shape x dt>``, with a strided layout unless it is the identity.

    Args:
        shape: static shape (``()`` gives a rank-0 memref).
        dt: element dtype.
        strides: element strides; None for row-major.
        offset: element offset of the first element.
    """
    ir = mlir().ir
    elem = storage_type(dt)
    if strides is None or (tuple(strides) == contiguous_strides(shape) and offset == 0):
        return ir.MemRefType.get(list(shape), elem)
    layout = ir.StridedLayoutAttr.get(offset, list(strides))
    return ir.MemRefType.get(list(shape), elem, layout=layout)


def tile_memref_type(t: TileType) -> object:
    """The memref a tile parameter or a fifo element is passed as."""
    return memref_type(t.shape, t.dtype)
