"""Tile and tensor types: ``tl.Tile[shape, dtype]`` and ``tl.Tensor[shape, dtype]``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tilelang.errors import KernelError
from tilelang.ir.dtypes import DType


class TypeSpecError(KernelError, TypeError):
    """A malformed ``tl.Tile``/``tl.Tensor``: a tilelang error, and the TypeError it always was."""


def _dtype_hint(dtype: object) -> str:
    name = getattr(dtype, "__name__", None) or getattr(dtype, "name", None) or str(dtype)
    short = {"int8": "i8", "int16": "i16", "int32": "i32", "float32": "f32", "bfloat16": "bf16"}.get(str(name))
    return f" (write tl.{short})" if short else " (tl.i8, tl.i16, tl.i32, tl.bf16, tl.f32, ...)"


def _check_shape(shape: object, what: str) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, tuple) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise TypeSpecError(f"{what} shape must be a tuple of ints, got {shape!r}")
    if any(s <= 0 for s in shape):
        raise TypeSpecError(f"{what} shape must have positive sizes, got {shape!r}")
    return shape


def _shape_text(shape: tuple[int, ...], dtype: DType) -> str:
    return "x".join([*(str(s) for s in shape), dtype.name])


@dataclass(frozen=True)
class TileType:
    """A tile in on-chip memory; shape ``()`` is a scalar value."""

    shape: tuple[int, ...]
    dtype: DType

    def __post_init__(self) -> None:
        if self.shape != ():
            object.__setattr__(self, "shape", _check_shape(self.shape, "tile"))
        if not isinstance(self.dtype, DType):
            raise TypeSpecError(f"tile dtype must be a tilelang dtype, got {self.dtype!r}{_dtype_hint(self.dtype)}")

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.bytes

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        if self.shape == ():
            return self.dtype.name
        return f"tile<{_shape_text(self.shape, self.dtype)}>"


@dataclass(frozen=True)
class TensorType:
    """A host (DDR) tensor, an argument of a design."""

    shape: tuple[int, ...]
    dtype: DType

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _check_shape(self.shape, "tensor"))
        if not isinstance(self.dtype, DType):
            raise TypeSpecError(f"tensor dtype must be a tilelang dtype, got {self.dtype!r}{_dtype_hint(self.dtype)}")

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.bytes

    def __str__(self) -> str:
        return f"tensor<{_shape_text(self.shape, self.dtype)}>"


class Tile:
    """``tl.Tile[shape, dtype]`` builds a :class:`TileType`."""

    def __class_getitem__(cls, item: tuple) -> TileType:
        shape, dtype = _unpack(item, "Tile")
        return TileType(_check_shape(shape, "tile"), dtype)


class Tensor:
    """``tl.Tensor[shape, dtype]`` builds a :class:`TensorType`."""

    def __class_getitem__(cls, item: tuple) -> TensorType:
        shape, dtype = _unpack(item, "Tensor")
        return TensorType(shape, dtype)


def _unpack(item: object, what: str) -> tuple[object, DType]:
    if not isinstance(item, tuple) or len(item) != 2:
        raise TypeSpecError(f"use tl.{what}[shape, dtype], e.g. tl.{what}[(1024,), tl.i32]")
    return item[0], item[1]
