"""Static indices of tiles: normalising Python subscripts, shapes, broadcasting."""

from __future__ import annotations

from tilelang.errors import KernelError

# One entry of a normalised index: (start, stop, step) keeps the dimension,
# an int picks one position and drops it.
IndexItem = tuple[int, int, int] | int
Index = tuple[IndexItem, ...]



def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of two static shapes, or None if they do not broadcast."""
    out = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + a), reversed((1,) * (len(a) - len(b)) + b), strict=True):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def normalize_index(index: object, shape: tuple[int, ...]) -> Index:
    """Turn a Python subscript into one :data:`IndexItem` per dimension.

    Raises:
        KernelError: for dynamic, out-of-range, negative-step or too many indices.
    """
    items = index if isinstance(index, tuple) else (index,)
    for it in items:  # (before any comparison: a tile's == is a traced op)
        if not (it is Ellipsis or isinstance(it, slice | int)):
            raise KernelError(f"index entries must be static ints or slices, got {it!r}: a tile cannot index a "
                              f"tile (no gathers); slice with Python ints")
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise KernelError("an index can hold at most one '...'")
    if any(it is Ellipsis for it in items):
        at = next(i for i, it in enumerate(items) if it is Ellipsis)
        fill = len(shape) - (len(items) - 1)
        items = items[:at] + (slice(None),) * max(fill, 0) + items[at + 1 :]
    if len(items) > len(shape):
        raise KernelError(f"index {index!r} has {len(items)} entries for a tile of shape {shape}")
    items = items + (slice(None),) * (len(shape) - len(items))
    out: list[IndexItem] = []
    for dim, (it, size) in enumerate(zip(items, shape, strict=True)):
        if isinstance(it, slice):
            for part in (it.start, it.stop, it.step):
                if part is not None and (not isinstance(part, int) or isinstance(part, bool)):
                    raise KernelError(f"slice bounds must be Python ints (static), got {it!r} in dimension {dim}")
            if it.step is not None and it.step <= 0:
                raise KernelError(f"slice step must be positive, got {it.step} in dimension {dim}")
            start, stop, step = it.indices(size)
            if stop <= start:
                raise KernelError(f"slice {it.start}:{it.stop} of dimension {dim} (size {size}) is empty")
            out.append((start, stop, step))
        elif isinstance(it, int) and not isinstance(it, bool):
            pos = it + size if it < 0 else it
            if not 0 <= pos < size:
                raise KernelError(f"index {it} is out of range for dimension {dim} of size {size}")
            out.append(pos)
        else:
            raise KernelError(f"index entries must be static ints or slices, got {it!r} in dimension {dim}")
    return tuple(out)


def index_shape(index: Index) -> tuple[int, ...]:
    """Shape of the region an index selects."""
    return tuple(len(range(*it)) for it in index if isinstance(it, tuple))


def is_full_index(index: Index, shape: tuple[int, ...]) -> bool:
    return all(it == (0, n, 1) for it, n in zip(index, shape, strict=True)) and len(index) == len(shape)
