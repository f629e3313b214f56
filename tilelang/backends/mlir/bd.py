"""Buffer-descriptor fields: DMA access patterns in the units the hardware counts, checked.

A BD counts in 32-bit words ([F] "DMA address granularity 32 bits") and its
fields have fixed widths (``Device.bd_field_bits``). A value that does not fit
raises :class:`~tilelang.errors.PlanError` naming the field: mlir-aie once
truncated such values silently ([F] "silent truncation was a real mlir-aie bug").

Field ranges, as the AIE-ML register reference (AM025) encodes them and
mlir-aie's verifiers check them (devices/aie2.py cites both): a length is
stored as is (at most 2**bits - 1 words); a wrap (dimension size) likewise;
a stride and the iteration count are stored minus one (at most 2**bits).

A dimension too long for its wrap field is not an error while the BD has a
dimension to spare: ``size = a * b`` walks the same addresses as an outer
dimension of ``a`` (stride ``b * stride``) around an inner one of ``b``
(:func:`fit_walk`). Only a walk no such split fits raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, islice, product

from tilelang.backends.mlir.enums import DMA_WORD_BYTES
from tilelang.devices.dma_rules import zero_stride_problem
from tilelang.errors import PlanError
from tilelang.ir.pattern import AccessPattern

Coord = tuple[int, int]


@dataclass(frozen=True)
class Walk:
    """An access pattern as BD dimensions: (size, stride) in elements, outermost first, plus an offset."""

    offset: int
    dims: tuple[tuple[int, int], ...]

    @property
    def numel(self) -> int:
        n = 1
        for s, _ in self.dims:
            n *= s
        return n

    @property
    def linear(self) -> bool:
        """A plain contiguous run (a BD in linear mode: only its length counts)."""
        real = [(s, t) for s, t in self.dims if s != 1]
        return not real or (len(real) == 1 and real[0][1] == 1)


def walk_of(pattern: AccessPattern, with_repeat: bool = True) -> Walk:
    """The canonical dimensions of ``pattern``, innermost stride made 1, repeat as a stride-0 outer dim."""
    p = pattern.canonical()
    dims = list(zip(p.sizes, p.strides, strict=True))
    if dims and dims[-1][1] != 1:
        dims.append((1, 1))
    if with_repeat and pattern.repeat_count > 1:
        if dims[0][1] == 0:  # already a repeat: one outer stride-0 dimension, the only kind a BD has
            dims[0] = (dims[0][0] * pattern.repeat_count, 0)
        else:
            dims.insert(0, (pattern.repeat_count, 0))
    return Walk(p.offset, tuple(dims))


def words(elements: int, elem_bytes: int, what: str) -> int:
    """``elements`` as 32-bit words.

    Raises:
        PlanError: not a whole number of words.
    """
    nbytes = elements * elem_bytes
    if nbytes % DMA_WORD_BYTES:
        raise PlanError(
            f"{what}: {elements} elements of {elem_bytes} B = {nbytes} B is not a multiple of the DMA's "
            f"{DMA_WORD_BYTES}-byte word; make the tile or pattern size a multiple of {DMA_WORD_BYTES // elem_bytes or 1} elements"
        )
    return nbytes // DMA_WORD_BYTES


def _fits(value: int, bits: int, minus_one: bool) -> bool:
    limit = (1 << bits) if minus_one else (1 << bits) - 1
    return 1 <= value <= limit if minus_one else 0 <= value <= limit


def check_length(n_words: int, bits: dict[str, int], what: str) -> None:
    """A BD length (in words) against the length field.

    Raises:
        PlanError: it does not fit.
    """
    if not _fits(n_words, bits["len"], minus_one=False):
        raise PlanError(
            f"{what}: a BD of {n_words} words does not fit the {bits['len']}-bit length field "
            f"(at most {(1 << bits['len']) - 1} words); use smaller fifo elements or patterns"
        )


def check_walk(walk: Walk, elem_bytes: int, bits: dict[str, int], max_dims: int, what: str, iteration: bool) -> None:
    """A multi-dimensional walk against the BD's dimension count, wrap, stride and iteration fields.

    Args:
        walk: the dimensions in elements.
        elem_bytes: bytes per element.
        bits: ``Device.bd_field_bits`` of the DMA's tile.
        max_dims: dimensions the BD has (``Device.dma_dims``).
        what: names the move in messages.
        iteration: whether the outermost of ``max_dims + 1`` dimensions may use the
            iteration field (a shim BD's repeat).

    Raises:
        PlanError: naming the field and the value that does not fit.
    """
    words(walk.offset, elem_bytes, f"{what} (offset)")
    if walk.linear:
        check_length(words(walk.numel, elem_bytes, what), bits, what)
        return
    dims = list(walk.dims)
    while len(dims) > 1 and dims[0][0] == 1:
        dims.pop(0)
    room = max_dims + (1 if iteration and bits.get("iteration", 0) else 0)
    if len(dims) > room:
        raise PlanError(f"{what}: the access pattern needs {len(dims)} dimensions, the DMA has {room}")
    if bits["wrap"] == 0:
        raise PlanError(f"{what}: this DMA moves contiguous runs only; the pattern {list(dims)} is not one")
    assert dims[-1][1] == 1  # walk_of makes the innermost stride 1
    # A repeat (an outermost stride-0 dimension) always takes the iteration field, where
    # runtime_sequence.static_fields puts it: the only dimension where mlir-aie accepts stride 0.
    repeat = iteration and len(dims) > 1 and dims[0][1] == 0
    problem = zero_stride_problem(tuple(n for n, _ in dims), tuple(s for _, s in dims)) if iteration else None
    if problem:
        raise PlanError(f"{what}: {problem}")
    for k, (size, stride) in enumerate(dims):
        is_iteration = iteration and k == 0 and (len(dims) > max_dims or repeat)
        size_units = words(size, elem_bytes, f"{what} (innermost size)") if k == len(dims) - 1 else size
        stride_words = words(stride, elem_bytes, f"{what} (stride)") if k < len(dims) - 1 else 1
        field = "iteration" if is_iteration else "wrap"
        if not _fits(size_units, bits[field], minus_one=is_iteration):
            raise PlanError(f"{what}: dimension {k} has size {size_units}, beyond the {bits[field]}-bit {field} field")
        if k < len(dims) - 1 and stride_words and not _fits(stride_words, bits["stride"], minus_one=True):
            raise PlanError(
                f"{what}: dimension {k} has a stride of {stride_words} words, beyond the {bits['stride']}-bit stride field"
            )


#: Candidate walks tried before giving up on splitting (a walk has at most a few dimensions).
MAX_CANDIDATES = 4096


def fit_walk(walk: Walk, elem_bytes: int, bits: dict[str, int], max_dims: int, what: str, iteration: bool) -> Walk:
    """``walk`` as the BD can hold it: unchanged if it fits, else with over-long dimensions split in two.

    Splits are tried fewest first; a dimension ``(n, s)`` becomes ``(a, b * s), (b, s)``
    with ``a * b = n``, the largest inner ``b`` first (the longest contiguous
    bursts), so the choice is deterministic.

    Args:
        walk, elem_bytes, bits, max_dims, what, iteration: as for :func:`check_walk`.

    Returns:
        A walk of the same addresses, in the same order, that fits.

    Raises:
        PlanError: no split fits; the message is the unsplit walk's (naming the
            field, the value and the move) and says that no split fits either.
    """
    try:
        check_walk(walk, elem_bytes, bits, max_dims, what, iteration)
        return walk
    except PlanError as e:
        first = e
    dims = list(walk.dims)
    while len(dims) > 1 and dims[0][0] == 1:
        dims.pop(0)
    room = max_dims + (1 if iteration and bits.get("iteration", 0) else 0)
    for split in islice(_candidates(dims, room, elem_bytes, bits), MAX_CANDIDATES):
        candidate = Walk(walk.offset, split)
        try:
            check_walk(candidate, elem_bytes, bits, max_dims, what, iteration)
        except PlanError:
            continue
        return candidate
    spare = room - len(dims)
    raise PlanError(
        f"{first}; splitting it into more dimensions does not fit either "
        f"(the DMA has {room} dimensions, the walk uses {len(dims)}, {max(spare, 0)} to spare)"
    ) from None


def _candidates(
    dims: list[tuple[int, int]], room: int, elem_bytes: int, bits: dict[str, int]
) -> Iterator[tuple[tuple[int, int], ...]]:
    """Every walk made by splitting some dimensions in two, fewest splits first, within ``room`` dimensions."""
    for n_splits in range(1, room - len(dims) + 1):
        for chosen in combinations(range(len(dims)), n_splits):
            options = [_split_options(dims, k, elem_bytes, bits) for k in chosen]
            for pick in product(*options):
                yield _apply(dims, dict(zip(chosen, pick, strict=True)))


def _split_options(dims: list[tuple[int, int]], k: int, elem_bytes: int, bits: dict[str, int]) -> list[tuple[int, int]]:
    """(outer a, inner b) factorisations of dimension ``k`` whose inner part fits the wrap field, largest b first."""
    size, _ = dims[k]
    innermost = k == len(dims) - 1
    wrap_max = (1 << bits["wrap"]) - 1
    # Only an inner part the wrap field holds is any use, so candidates are tried up to that bound
    # (work bounded by the field's width, not by the size: a repeat of 2**63 is cheap to refuse).
    largest = wrap_max * DMA_WORD_BYTES // elem_bytes if innermost else wrap_max
    out = []
    for b in range(min(largest, size - 1), 1, -1):
        if size % b:
            continue
        if innermost:
            nbytes = b * elem_bytes
            if nbytes % 4 or nbytes // 4 > wrap_max:  # the inner run is counted in 32-bit words
                continue
        out.append((size // b, b))
    return out


def _apply(dims: list[tuple[int, int]], splits: dict[int, tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for k, (size, stride) in enumerate(dims):
        if k in splits:
            a, b = splits[k]
            out += [(a, b * stride), (b, stride)]
        else:
            out.append((size, stride))
    return tuple(out)
