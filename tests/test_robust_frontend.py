"""Tracing pitfalls that used to evaluate silently (or crash with a raw Python error) now raise tilelang errors."""

import re

import pytest

import tilelang as tl


@tl.kernel
def _add_scalar(c: tl.Tile[(8,), tl.i32], v: tl.i32):
    c[...] = c + v


def _trace_loop_body(use):
    """A one-core design whose tl.range body first runs ``use(i)`` on the loop variable."""

    @tl.design(device="npu1")
    def d(C: tl.Tensor[(32,), tl.i32]):
        c = tl.fifo(tl.Tile[(8,), tl.i32], depth=2, name="c")

        @tl.core(name="w")
        def w():
            for i in tl.range(4):
                use(i)
                x = c.acquire()
                _add_scalar(x, i * 2 + 1)
                c.release()

        tl.dma(c, C)

    return d


def _if_first(i):
    if i == 0:
        pass


def _less(i):
    return i < 2


def _truth(i):
    return bool(i)


def _as_int(i):
    return int(i)


def _list_index(i):
    return [10, 20, 30, 40][i]


def _dict_key(i):
    return {0: "a"}.get(i)


def _affine_compare(i):
    return i * 64 + 3 != 5


BRANCH = "Python cannot branch on it. Instead branch inside a kernel with tl.where"
VALUE = "its value is only known on the device. Instead pass it to a kernel's integer parameter"


@pytest.mark.parametrize("use, what, advice", [
    (_if_first, "'==' compares a tl.range loop variable", BRANCH),
    (_less, "'<' compares a tl.range loop variable", BRANCH),
    (_truth, "'if'/'while'/bool() tests a tl.range loop variable", BRANCH),
    (_as_int, "int() uses a tl.range loop variable", VALUE),
    (_list_index, "indexing (a list, range() or slice) uses a tl.range loop variable", VALUE),
    (_dict_key, "a dict or set lookup uses a tl.range loop variable", VALUE),
    (_affine_compare, "'!=' compares an expression of tl.range loop variables", BRANCH),
])
def test_loop_variable_in_python_control_flow_is_a_design_error_at_the_users_line(use, what, advice):
    line = use.__code__.co_firstlineno + 1  # the body's first line is where the variable is used
    with pytest.raises(tl.DesignError, match=rf"test_robust_frontend\.py:{line}: {re.escape(what)} .*{advice}"):
        _trace_loop_body(use)


def test_the_message_says_how_to_peel_the_first_iteration():
    with pytest.raises(tl.DesignError, match=re.escape("(do iteration 0 before 'for k in tl.range(1, n)')")):
        _trace_loop_body(_if_first)


def test_affine_arithmetic_on_loop_variables_still_traces():
    d = _trace_loop_body(lambda i: i * 64 + 3 - i)
    assert "(2 * %i0 + 1) : i32" in tl.ir.print(d)
