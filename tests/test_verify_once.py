"""Each host move's pattern is checked once while a design is built; a changed move is checked again."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilelang as tl
from tilelang.ir.pattern import AccessPattern
from tilelang.ir.verify import check_pattern, verify_design
from tilelang.library._movement import ShimLimits, _fit


def _checked(design) -> set:
    seen: set = set()
    fifos = {f.name: f for f in design.fifos}
    for d in design.dmas:
        for f in d.fifos:
            check_pattern(d.pattern, design.tensors[d.tensor], fifos[f], design.device, f"dma {d.name!r}", seen)
    return seen


def test_checks_passed_are_remembered_and_a_changed_move_is_checked_again():
    d = tl.library.elementwise("add", 4096, tl.i32, cores=2)
    seen = _checked(d)
    assert len(seen) == sum(len(m.fifos) for m in d.dmas)
    verify_design(d, checked=seen)  # the same moves: passes
    first = d.dmas[0]
    bad = dataclasses.replace(first, pattern=first.pattern.shifted(4096))  # past the end of the tensor
    broken = dataclasses.replace(d, dmas=(bad, *d.dmas[1:]))
    with pytest.raises(tl.DesignError) as fresh:
        verify_design(broken)
    with pytest.raises(tl.DesignError) as remembered:
        verify_design(broken, checked=seen)
    assert str(remembered.value) == str(fresh.value) and "the pattern reads element" in str(fresh.value)


def test_a_failed_check_is_not_remembered():
    d = tl.library.elementwise("add", 4096, tl.i32, cores=2)
    m, fifos = d.dmas[0], {f.name: f for f in d.fifos}
    tensor, fifo = d.tensors[m.tensor], fifos[m.fifos[0]]
    small = dataclasses.replace(tensor, type=tl.Tensor[(16,), tl.i32])
    seen: set = set()
    for _ in range(2):
        with pytest.raises(tl.DesignError, match="which has 16 elements"):
            check_pattern(m.pattern, small, fifo, d.device, "dma", seen)
    assert not seen


def test_a_bad_move_still_names_the_users_line():
    with pytest.raises(tl.DesignError) as e:
        @tl.design(device="npu1")
        def d(A: tl.Tensor[(64,), tl.i32]):
            f = tl.fifo(tl.Tile[(16,), tl.i32], name="f")
            tl.dma(A, f, pattern=tl.pattern(0, (4, 17), (16, 1)))  # runs of 17 elements overrun the tensor
    line = test_a_bad_move_still_names_the_users_line.__code__.co_firstlineno + 5
    assert f"test_verify_once.py:{line}" in str(e.value)


@settings(max_examples=150, deadline=None)
@given(offset=st.integers(0, 64), repeat=st.integers(1, 3), wrap=st.sampled_from([0, 3, 7, 1023]),
       dims=st.lists(st.tuples(st.integers(1, 12), st.integers(0, 40)), min_size=1, max_size=5))
@pytest.mark.slow
def test_cut_moves_walk_the_same_elements_in_the_same_order(offset, repeat, wrap, dims):
    """The parts :func:`_fit` cuts a move into (cached by shape, shifted to the offset) walk what the move walks."""
    pat = AccessPattern(offset, tuple(n for n, _ in dims), tuple(s for _, s in dims), repeat).canonical()
    limits = ShimLimits(dims=3, wrap=wrap, iterations=64 if wrap else 0)
    parts = _fit(pat, limits, 4, 1)
    walked = np.concatenate([np.tile(p.indices(), p.repeat_count) for p in parts])
    np.testing.assert_array_equal(walked, np.tile(pat.indices(), repeat))
    again = _fit(pat.shifted(5), limits, 4, 1)
    assert again == [p.shifted(5) for p in parts]


@settings(max_examples=200, deadline=None)
@given(offset=st.integers(0, 9), dims=st.lists(st.tuples(st.integers(1, 6), st.sampled_from([0, 1, 2, 3, 5, 8, 16, 30])),
                                               min_size=1, max_size=5))
def test_the_elements_a_move_writes_are_its_distinct_offsets_ascending(offset, dims):
    from tilelang.ir.verify import _written

    p = AccessPattern(offset, tuple(n for n, _ in dims), tuple(s for _, s in dims))
    assert _written(p).tolist() == sorted(set(p.indices().tolist()))


def test_a_verified_design_is_verified_once_and_a_failing_one_every_time(monkeypatch):
    import tilelang.ir.verify as verify

    d = tl.library.elementwise("add", 4096, tl.i32, cores=2)  # verified while it was built
    first = d.dmas[0]
    broken = dataclasses.replace(d, dmas=(dataclasses.replace(first, pattern=first.pattern.shifted(4096)),
                                          *d.dmas[1:]))
    walks = []
    real = verify._verify_cores
    monkeypatch.setattr(verify, "_verify_cores", lambda *a: (walks.append(a[0]), real(*a)))
    verify_design(d)
    tl.plan(d, strategy="greedy")
    assert walks == []  # the design tl.design built and verified is not walked again
    for _ in range(2):
        with pytest.raises(tl.DesignError, match="the pattern reads element"):
            verify_design(broken)
    assert walks == [broken, broken]  # a failure is never remembered
