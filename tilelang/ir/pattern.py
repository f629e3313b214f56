"""n-d access patterns of DMA moves: ``tl.tiles`` and ``tl.pattern``.

A pattern addresses elements ``offset + sum(i_k * strides[k])`` for
``i_k in range(sizes[k])``, outermost dimension first, the whole walk done
``repeat_count`` times. Strides are in elements. This is the shape of an
mlir-aie BD's dimensions and of ``aiex.npu.dma_memcpy_nd``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from tilelang.errors import DesignError
from tilelang.ir.source import located, user_location


@dataclass(frozen=True)
class AccessPattern:
    """A raw n-d pattern (element offsets and strides, outermost first)."""

    offset: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    repeat_count: int = 1

    def __post_init__(self) -> None:
        sizes, strides = self.sizes, self.strides
        # Fast path (patterns are built by the thousand): plain tuples of plain ints need no conversion.
        plain = type(sizes) is tuple and type(strides) is tuple and type(self.offset) is int \
            and type(self.repeat_count) is int and all(type(x) is int for x in sizes) \
            and all(type(x) is int for x in strides)
        if not plain:
            self._convert()
            sizes, strides = self.sizes, self.strides
        if len(sizes) != len(strides) or not sizes:
            raise DesignError(f"pattern needs as many sizes as strides (at least one), got {sizes} and {strides}")
        if min(sizes) <= 0:
            raise DesignError(f"pattern sizes must be positive, got {sizes}")
        if min(strides) < 0:
            raise DesignError(f"pattern strides must be >= 0, got {strides}")
        if self.offset < 0:
            raise DesignError(f"pattern offset must be >= 0, got {self.offset}")
        if self.repeat_count <= 0:
            raise DesignError(f"pattern repeat must be positive, got {self.repeat_count}")

    def _convert(self) -> None:
        """Sizes and strides to tuples of Python ints (numpy integers accepted; bools and other types rejected)."""
        object.__setattr__(self, "sizes", tuple(self.sizes))
        object.__setattr__(self, "strides", tuple(self.strides))
        ints = (self.offset, self.repeat_count, *self.sizes, *self.strides)
        if not all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in ints):
            raise DesignError(f"pattern fields must be ints: {self}")
        object.__setattr__(self, "sizes", tuple(int(s) for s in self.sizes))
        object.__setattr__(self, "strides", tuple(int(s) for s in self.strides))

    def repeat(self, n: int) -> AccessPattern:
        """This pattern walked ``n`` times over.

        Raises:
            DesignError: ``n`` is not a positive int (at the caller's line).
        """
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise DesignError(located(f"pattern.repeat takes a positive int, got {n!r}", user_location()))
        return replace(self, repeat_count=self.repeat_count * n)

    def shifted(self, by: int) -> AccessPattern:
        """The same walk starting ``by`` elements later (a canonical pattern stays canonical)."""
        if by == 0:
            return self
        out = AccessPattern(self.offset + by, self.sizes, self.strides, self.repeat_count)
        if self.__dict__.get("_canonical") is self:
            object.__setattr__(out, "_canonical", out)
        return out

    @property
    def numel(self) -> int:
        """Elements moved, repeats included."""
        return math.prod(self.sizes) * self.repeat_count

    @property
    def rank(self) -> int:
        return len(self.sizes)

    def extent(self) -> tuple[int, int]:
        """Lowest and highest element offset the pattern touches."""
        hi = self.offset + sum((n - 1) * s for n, s in zip(self.sizes, self.strides, strict=True))
        return self.offset, hi

    def indices(self) -> np.ndarray:
        """Element offsets in walk order (one walk; repeats not expanded)."""
        idx = np.full((), self.offset, dtype=np.int64)
        for n, s in zip(self.sizes, self.strides, strict=True):
            idx = idx[..., None] + np.arange(n, dtype=np.int64) * s
        return idx.reshape(-1)

    def canonical(self) -> AccessPattern:
        """The same walk with size-1 dimensions dropped and contiguous ones merged."""
        # Kept on the (frozen) pattern: verification and the shim-fitting ask for it several times per move.
        cached = self.__dict__.get("_canonical")
        if cached is None:
            cached = self._merge()
            object.__setattr__(cached, "_canonical", cached)  # merging again changes nothing
            object.__setattr__(self, "_canonical", cached)
        return cached

    def _merge(self) -> AccessPattern:
        dims = [(n, s) for n, s in zip(self.sizes, self.strides, strict=True) if n != 1]
        merged: list[tuple[int, int]] = []
        for n, s in reversed(dims):
            if merged and s == merged[-1][0] * merged[-1][1]:
                inner_n, inner_s = merged.pop()
                merged.append((n * inner_n, inner_s))
            else:
                merged.append((n, s))
        merged.reverse()
        if not merged:
            merged = [(1, 1)]
        return AccessPattern(self.offset, tuple(n for n, _ in merged), tuple(s for _, s in merged), self.repeat_count)

    def __str__(self) -> str:
        sizes = ", ".join(map(str, self.sizes))
        strides = ", ".join(map(str, self.strides))
        return f"pattern<offset = {self.offset}, sizes = [{sizes}], strides = [{strides}], repeat = {self.repeat_count}>"


def contiguous(numel: int) -> AccessPattern:
    """The whole of a tensor of ``numel`` elements in order."""
    return AccessPattern(0, (numel,), (1,))


@dataclass(frozen=True)
class Tiles:
    """``tl.tiles(tile_shape, order)``: walk a tensor tile by tile; resolved against its shape."""

    tile_shape: tuple[int, ...]
    order: str = "row"

    def __post_init__(self) -> None:
        shape = (self.tile_shape,) if isinstance(self.tile_shape, int) else tuple(self.tile_shape)
        if not shape or not all(isinstance(s, int) and s > 0 for s in shape):
            raise DesignError(f"tl.tiles needs a tuple of positive ints, got {self.tile_shape!r}")
        object.__setattr__(self, "tile_shape", shape)
        if self.order not in ("row", "col"):
            raise DesignError(f"tl.tiles order must be 'row' or 'col', got {self.order!r}")

    def resolve(self, shape: tuple[int, ...]) -> AccessPattern:
        """The raw pattern over a tensor of ``shape``.

        Raises:
            DesignError: when the tile shape does not divide the tensor shape.
        """
        t = self.tile_shape
        if len(t) != len(shape):
            raise DesignError(f"tile shape {t} has rank {len(t)}, the tensor {shape} has rank {len(shape)}")
        if any(n % k for n, k in zip(shape, t, strict=True)):
            raise DesignError(f"tile shape {t} does not divide the tensor shape {shape}")
        row = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
        grid = [(n // k, k * r) for n, k, r in zip(shape, t, row, strict=True)]
        if self.order == "col":
            grid.reverse()
        sizes = tuple(g for g, _ in grid) + t
        strides = tuple(s for _, s in grid) + tuple(row)
        return AccessPattern(0, sizes, strides).canonical()


def pattern(offset: int, sizes: tuple[int, ...] | list[int], strides: tuple[int, ...] | list[int]) -> AccessPattern:
    """A raw n-d access pattern in elements, outermost dimension first.

    Raises:
        DesignError: sizes or strides that are not lists (or tuples) of ints, or a malformed pattern (at the
            caller's line).
    """
    for what, v in (("sizes", sizes), ("strides", strides)):
        if not isinstance(v, tuple | list):
            raise DesignError(located(f"tl.pattern: {what} is a list (or tuple) of ints, outermost first, got {v!r} "
                                      f"(e.g. tl.pattern(0, [256], [1]))", user_location()))
    try:
        return AccessPattern(offset, tuple(sizes), tuple(strides))
    except DesignError as e:
        raise DesignError(located(f"tl.pattern: {e}", user_location())) from None


def tiles(tile_shape: tuple[int, ...] | int, order: str = "row") -> Tiles:
    """Walk a tensor tile by tile (``order`` "row" or "col" over the grid of tiles).

    Raises:
        DesignError: a tile shape that is not positive ints, or an unknown order (at the caller's line).
    """
    try:
        return Tiles(tile_shape if isinstance(tile_shape, tuple) else (tile_shape,), order)  # type: ignore[arg-type]
    except DesignError as e:
        raise DesignError(located(str(e), user_location())) from None
