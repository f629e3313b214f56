"""Access patterns: tiles cover a tensor exactly; canonical form keeps the walk."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilelang as tl
from tilelang.ir.pattern import AccessPattern


@st.composite
def tiled_shapes(draw):
    rank = draw(st.integers(1, 3))
    tile = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    grid = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    return tuple(t * g for t, g in zip(tile, grid, strict=True)), tile


@settings(max_examples=100, deadline=None)
@given(tiled_shapes(), st.sampled_from(["row", "col"]))
def test_tiles_cover_the_tensor_exactly_once_tile_by_tile(shapes, order):
    shape, tile = shapes
    p = tl.tiles(tile, order=order).resolve(shape)
    idx = p.indices()
    assert sorted(idx.tolist()) == list(range(int(np.prod(shape))))
    # each consecutive run of prod(tile) indices is one whole tile, row-major inside
    grid = np.arange(int(np.prod(shape))).reshape(shape)
    per = int(np.prod(tile))
    starts = [tuple(int(i) for i in np.unravel_index(chunk[0], shape)) for chunk in idx.reshape(-1, per)]
    for chunk, s in zip(idx.reshape(-1, per), starts, strict=True):
        block = grid[tuple(slice(a, a + t) for a, t in zip(s, tile, strict=True))]
        np.testing.assert_array_equal(chunk, block.reshape(-1))
    grid_order = [tuple(a // t for a, t in zip(s, tile, strict=True)) for s in starts]
    key = (lambda g: g) if order == "row" else (lambda g: tuple(reversed(g)))
    assert grid_order == sorted(grid_order, key=key)


@settings(max_examples=100, deadline=None)
@given(offset=st.integers(0, 5), dims=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 9)), min_size=1, max_size=4))
def test_canonical_form_walks_the_same_elements(offset, dims):
    p = AccessPattern(offset, tuple(n for n, _ in dims), tuple(s for _, s in dims))
    c = p.canonical()
    np.testing.assert_array_equal(c.indices(), p.indices())
    assert c.rank <= p.rank and c.numel == p.numel


def test_pattern_fields_are_checked():
    with pytest.raises(tl.DesignError, match="as many sizes as strides"):
        tl.pattern(0, (4, 4), (1,))
    with pytest.raises(tl.DesignError, match="sizes must be positive"):
        tl.pattern(0, (0,), (1,))
    with pytest.raises(tl.DesignError, match="tile shape \\(3,\\) does not divide the tensor shape \\(8,\\)"):
        tl.tiles((3,)).resolve((8,))
    assert tl.pattern(0, (4,), (2,)).repeat(3).numel == 12


@settings(max_examples=100, deadline=None)
@given(offset=st.integers(0, 5), by=st.integers(0, 7),
       dims=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 9)), min_size=1, max_size=4))
def test_a_shifted_pattern_walks_the_same_elements_later_and_stays_canonical(offset, by, dims):
    p = AccessPattern(offset, tuple(n for n, _ in dims), tuple(s for _, s in dims))
    s = p.shifted(by)
    np.testing.assert_array_equal(s.indices(), p.indices() + by)
    c = p.canonical()
    assert c.canonical() == c and p.canonical() is c  # idempotent, kept on the pattern
    assert c.shifted(by).canonical() == AccessPattern(offset + by, c.sizes, c.strides)
    assert s.canonical() == c.shifted(by)


def test_pattern_fields_take_numpy_ints_as_ints_and_reject_bools():
    p = tl.pattern(np.int64(2), [np.int32(4)], (np.int64(1),))
    assert p == tl.pattern(2, (4,), (1,)) and type(p.sizes[0]) is int and type(p.strides[0]) is int
    with pytest.raises(tl.DesignError, match="pattern fields must be ints"):
        tl.pattern(0, (True,), (1,))
    with pytest.raises(tl.DesignError, match="strides must be >= 0"):
        tl.pattern(0, (4,), (-1,))
