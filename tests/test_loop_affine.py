"""Kernel arguments affine in tl.range loop variables: the frontend, the IR text, the simulator.

The emitted MLIR is checked against the same numpy oracle by the zoo design ``loop_affine``
(tests/test_mlir_physical.py executes its physical module).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from zoo_support import calls, with_args, zoo

import tilelang as tl
from tilelang.ir.design import AffineArg, LoopVarArg


def test_expressions_become_affine_arguments():
    d = zoo.loop_affine("npu1")
    (call,) = list(calls(d.cores[0].body))
    assert call.args[2] == AffineArg(((0, 4), (1, 1)), 0, tl.i32)
    assert call.args[3] == AffineArg(((1, 5),), 120, tl.i8)
    text = tl.ir.print(d)
    assert "(4 * %i0 + %i1) : i32" in text and "(5 * %i1 + 120) : i8" in text
    back = tl.ir.parse(text)
    assert tl.ir.print(back) == text
    assert list(calls(back.cores[0].body)) == [call]


@pytest.mark.parametrize("device", ["npu1", "xcvc1902"])
def test_simulated_arguments_match_numpy_including_the_wrap(device):
    d = zoo.loop_affine(device)
    inputs, want = zoo.oracle("loop_affine", d, np.random.default_rng(3))
    res = tl.simulate(tl.plan(d, strategy="greedy"), **inputs)
    np.testing.assert_array_equal(res.outputs["C"], want["C"])


def test_wrapped_value_is_twos_complement():
    a = AffineArg(((0, 100),), 27, tl.i8)
    assert a.value([1]) == 127 and a.wrapped([1]) == 127
    assert a.value([2]) == 227 and a.wrapped([2]) == -29
    assert AffineArg(((0, -1),), 0, tl.i16).wrapped([40000]) == 25536


def _accumulate(dt, trips, arg):
    """One core calling ``c += v`` on ``trips = (outer, inner)`` loops, ``v = arg(i, j)`` (``inner`` 0: one loop)."""

    @tl.kernel
    def k(c: tl.Tile[(8,), dt], v: dt):
        c[...] = c + v

    outer, inner = trips

    @tl.design(device="npu1")
    def d(C: tl.Tensor[(8 * outer * max(inner, 1),), dt]):
        c = tl.fifo(tl.Tile[(8,), dt], depth=2, name="c")

        def step(*ij):
            x = c.acquire()
            k(x, arg(*ij))
            c.release()

        @tl.core(name="w")
        def w():
            for i in tl.range(outer):
                if inner:
                    for j in tl.range(inner):
                        step(i, j)
                else:
                    step(i)

        tl.dma(c, C)

    return d


def test_plain_variable_stays_a_loop_variable_and_constants_fold():
    d = _accumulate(tl.i32, (2, 3), lambda i, j: (i + 1) * 3 - 3 + j - j + 0 * i + j)  # 3 i + j
    (call,) = list(calls(d.cores[0].body))
    assert call.args[1] == AffineArg(((0, 3), (1, 1)), 0, tl.i32)
    e = _accumulate(tl.i32, (6, 0), lambda i: i + 0)
    (call,) = list(calls(e.cores[0].body))
    assert call.args[1] == LoopVarArg(0, tl.i32)


@pytest.mark.parametrize(("expr", "message"), [
    (lambda i: i // 2, "//"),
    (lambda i: i % 2, "//"),
    (lambda i: i * i, r"\* <loop variable"),
    (lambda i: i * 1.5, r"\* 1.5"),
    (lambda i: int(i), "only known on the device"),
])
def test_non_affine_uses_are_design_errors(expr, message):
    with pytest.raises(tl.DesignError, match=message):
        _accumulate(tl.i32, (4, 0), expr)


def test_float_parameter_refuses_a_loop_expression():
    with pytest.raises(tl.DesignError, match="is f32; a tl.range variable expression is an integer"):
        _accumulate(tl.f32, (4, 0), lambda i: 2 * i + 1)


def test_parse_errors_name_the_loop_variable():
    d = zoo.loop_affine("npu1")
    text = tl.ir.print(d).replace("(4 * %i0 + %i1)", "(4 * %i0 + %i3)")
    with pytest.raises(tl.ParseError, match="undefined loop variable %i3"):
        tl.ir.parse(text)


_coeff = st.integers(-10**6, 10**6).filter(bool)


@settings(max_examples=40, deadline=None)
@given(terms=st.dictionaries(st.integers(0, 1), _coeff, max_size=2), offset=st.integers(-2**40, 2**40),
       small=st.dictionaries(st.integers(0, 1), _coeff, max_size=2), off8=st.integers(-300, 300))
def test_affine_arguments_print_and_parse_back(terms, offset, small, off8):
    from dataclasses import replace

    d = zoo.loop_affine("npu1")
    (call,) = list(calls(d.cores[0].body))
    args = (call.args[0], call.args[1], AffineArg(tuple(sorted(terms.items())), offset, tl.i32),
            AffineArg(tuple(sorted(small.items())), off8, tl.i8))
    core = replace(d.cores[0], body=with_args(d.cores[0].body, args))
    d2 = replace(d, cores=(core,))
    text = tl.ir.print(d2)
    back = tl.ir.parse(text)
    assert list(calls(back.cores[0].body))[0].args == args
    assert tl.ir.print(back) == text
