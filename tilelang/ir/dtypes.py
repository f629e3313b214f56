"""Element types: i8, i16, i32, bf16, f32 (and the internal boolean i1).

Each dtype knows the numpy dtype that holds it (bf16 through ml_dtypes).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DType:
    """A scalar element type.

    Attributes:
        name: the printed name ("i32", "bf16", ...).
        bits: storage width in bits.
        kind: "int", "float" or "bool".
    """

    name: str
    bits: int
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in ("int", "float", "bool"):
            raise ValueError(f"bad dtype kind {self.kind!r}")

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype that holds values of this type."""
        return _NUMPY[self.name]

    @property
    def bytes(self) -> int:
        return max(1, self.bits // 8)

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def wrap(self, v: int) -> int:
        """The integer ``v`` as this ``bits``-wide signed dtype holds it (two's complement)."""
        v &= (1 << self.bits) - 1
        return v - (1 << self.bits) if v >= 1 << (self.bits - 1) else v

    def __repr__(self) -> str:
        return f"tl.{self.name}"

    def __str__(self) -> str:
        return self.name


i1 = DType("i1", 8, "bool")
i8 = DType("i8", 8, "int")
i16 = DType("i16", 16, "int")
i32 = DType("i32", 32, "int")
bf16 = DType("bf16", 16, "float")
f32 = DType("f32", 32, "float")

_NUMPY = {
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
}

#: Every dtype by its printed name.
DTYPES: dict[str, DType] = {d.name: d for d in (i1, i8, i16, i32, bf16, f32)}
#: The dtypes a user may declare tiles and tensors with.
USER_DTYPES: tuple[DType, ...] = (i8, i16, i32, bf16, f32)


def dtype_of_numpy(dt: np.dtype) -> DType | None:
    """The tilelang dtype held by numpy dtype ``dt``, or None."""
    for d in DTYPES.values():
        if d.numpy == dt:
            return d
    return None


def accumulator(dt: DType) -> DType:
    """Default accumulator type of a matmul or reduction over ``dt``.

    Integers accumulate in i32 and bf16 in f32, as the AIE-ML MAC units do
    (AIE_FACTS.md, compute rates: int8/int16 MACs write 32-bit accumulators,
    bf16 MACs accumulate in fp32).
    """
    if dt.is_int:
        return i32
    if dt.is_float:
        return f32
    raise ValueError(f"no accumulator for {dt}")
