"""Tracing pitfalls that used to evaluate silently (or crash with a raw Python error) now raise tilelang errors."""

import re

import numpy as np
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


# -- numpy habits inside a kernel ---------------------------------------------------------------


@pytest.mark.parametrize("expr, message", [
    (lambda a: a.sum(), "a tile has no .sum (it is not a numpy array): use tl.sum(x, axis=...)"),
    (lambda a: a.max(), "a tile has no .max (it is not a numpy array): use tl.max(x, axis=...)"),
    (lambda a: a.T, "a tile has no .T (it is not a numpy array): a kernel cannot transpose; lay the data out"),
    (lambda a: a.reshape(64), "a tile has no .reshape (it is not a numpy array): tiles keep their declared shape"),
    (lambda a: a.frobnicate, "a tile has no attribute .frobnicate; tiles support .shape, .dtype"),
    (lambda a: a ** 2, "operator ** is not supported on tiles: multiply explicitly (x * x)"),
    (lambda a: 2 ** a, "operator ** is not supported on tiles"),
    (lambda a: a % 3, "operator % is not supported on tiles: write the truncating remainder x - (x / y) * y"),
    (lambda a: a // 3, "operator // is not supported on tiles: use / (on integer tiles it divides truncating"),
    (lambda a: a & a, "operator & is not supported on tiles: bitwise ops are not kernel ops; combine conditions"),
    (lambda a: ~a, "operator ~ is not supported on tiles"),
    (lambda a: a << 2, "operator << is not supported on tiles: multiply by a power of two instead"),
    (lambda a: (a + 1) >> 1, "operator >> is not supported on tiles: divide by a power of two instead"),
])
def test_numpy_habits_in_a_kernel_are_kernel_errors_saying_what_to_write(expr, message):
    with pytest.raises(tl.KernelError, match=r"test_robust_frontend\.py:\d+: in kernel 'k': " + re.escape(message)):
        @tl.kernel
        def k(a: tl.Tile[(8, 8), tl.i32], c: tl.Tile[(8, 8), tl.i32]):
            c[...] = expr(a)


def test_tile_attributes_outside_a_trace_stay_attribute_errors():
    from tilelang.frontend.tracing import TileValue
    from tilelang.ir.kernel import Param

    v = TileValue(Param("x", tl.Tile[(4,), tl.i32]))
    assert v.shape == (4,) and not hasattr(v, "sum")


def _forever(a, depth):
    return _forever(a + 1, depth + 1)


def test_a_recursive_kernel_helper_is_a_kernel_error():
    with pytest.raises(tl.KernelError, match=r"kernel 'k': tracing recursed past Python's limit \(a helper that "
                                             r"calls itself without end\?\)"):
        @tl.kernel
        def k(a: tl.Tile[(8,), tl.i32], c: tl.Tile[(8,), tl.i32]):
            c[...] = _forever(a, 0)


@tl.kernel
def _inner(a: tl.Tile[(8,), tl.i32], c: tl.Tile[(8,), tl.i32]):
    c[...] = a + 1


def test_a_kernel_calling_a_kernel_says_to_use_a_helper_function():
    with pytest.raises(tl.KernelError, match=r"test_robust_frontend\.py:\d+: in kernel 'outer': kernels cannot call "
                                             r"kernels \('_inner' is called here\); write the shared code as a plain "
                                             r"Python helper function"):
        @tl.kernel
        def outer(a: tl.Tile[(8,), tl.i32], c: tl.Tile[(8,), tl.i32]):
            _inner(a, c)


# -- library factories' arguments ---------------------------------------------------------------


@pytest.mark.parametrize("make, message", [
    (lambda: tl.library.matvec(64, 64, in_dtype=np.float64),
     "matvec: in_dtype must be a tilelang dtype (tl.i8, tl.i16, tl.i32, tl.bf16, tl.f32), got numpy float64, "
     "which no AIE core computes in"),
    (lambda: tl.library.matvec(64, 64, in_dtype=np.int16), "got numpy int16 (write tl.i16)"),
    (lambda: tl.library.softmax(0, 64), "softmax: rows must be a positive int, got 0"),
    (lambda: tl.library.softmax(64, 2.5), "softmax: cols must be a positive int, got 2.5"),
    (lambda: tl.library.elementwise("add", -4), "elementwise: n must be a positive int, got -4"),
    (lambda: tl.library.reduction("sum", 1024, dtype="i32"), "reduction: dtype must be a tilelang dtype"),
    (lambda: tl.library.matmul(64, True, 64), "matmul: K must be a positive int, got True"),
    (lambda: tl.library.conv2d(0, 8, 4, 4), "conv2d: H must be a positive int, got 0"),
    (lambda: tl.library.matmul(64, 64, 64, in_dtype=tl.i16),
     "matmul: out_dtype f32 cannot accumulate products of i16 inputs; give out_dtype=tl.i32"),
    (lambda: tl.library.matmul(64, 64, 64, in_dtype=tl.i32, out_dtype=tl.i16, device="xcvc1902"),
     "matmul: out_dtype i16 cannot accumulate products of i32 inputs"),
])
def test_library_factories_reject_bad_sizes_and_dtypes_by_name(make, message):
    with pytest.raises(tl.DesignError, match=re.escape(message)):
        make()


@pytest.mark.parametrize("use", [lambda A: A[1], lambda A: A[0:64], lambda A: A.__setitem__(0, 1)])
def test_indexing_a_host_tensor_is_a_design_error_naming_the_access_pattern(use):
    with pytest.raises(tl.DesignError) as e:

        @tl.design(device="npu1")
        def d(A: tl.Tensor[(2, 64), tl.i32], C: tl.Tensor[(64,), tl.i32]):
            f = tl.fifo(tl.Tile[(64,), tl.i32], name="f")
            tl.dma(use(A), f)

    msg = str(e.value)
    assert "host tensor 'A' cannot be indexed" in msg and "tl.pattern(offset, sizes, strides)" in msg
    assert "test_robust_frontend.py" in msg  # at the user's line


@pytest.mark.parametrize("bad", [{"trace": "yes"}, {"trace": None}, {"dispatch_overhead": 1}])
def test_simulate_flags_are_booleans(bad):
    plan = tl.plan(tl.library.matmul(64, 64, 64, in_dtype=tl.i16, out_dtype=tl.i32, device="npu1"), strategy="greedy")
    name = next(iter(bad))
    with pytest.raises(tl.SimulationError, match=f"{name} must be True or False"):
        tl.simulate(plan, mode="timing", **bad)


def test_an_unsigned_array_too_large_for_a_signed_parameter_is_refused():
    # uint32 4294967295 survives a round trip through int32 (-1) and back: checked by value
    @tl.kernel
    def inc(a: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
        c[...] = a + 1

    with pytest.raises(tl.KernelError, match=r"argument 'a': values of dtype uint32 do not fit in i32 \(range "
                                             r"-2147483648 to 2147483647, got 4294967295 to 4294967295\)"):
        inc(np.full(4, 2**32 - 1, np.uint32), np.zeros(4, np.int32))
    c = np.zeros(4, np.int32)
    inc(np.full(4, 7, np.uint32), c)  # values that fit convert
    np.testing.assert_array_equal(c, 8)


def test_a_python_loop_that_never_ends_in_a_core_body_is_stopped_at_its_line():
    with pytest.raises(tl.DesignError, match=r"test_robust_frontend.py:\d+: core 'w' has traced 200000 statements.*"
                                             r"use tl.range"):
        @tl.design(device="npu1")
        def d(C: tl.Tensor[(32,), tl.i32]):
            c = tl.fifo(tl.Tile[(8,), tl.i32], depth=2, name="c")

            @tl.core(name="w")
            def w():
                while True:
                    x = c.acquire()
                    _add_scalar(x, 1)
                    c.release()

            tl.dma(c, C)


def test_absurd_library_sizes_are_refused_at_once():
    with pytest.raises(tl.DesignError, match=r"matmul: M=1000000000 .* host moves, more than 200000"):
        tl.library.matmul(10**9, 64, 64, in_dtype=tl.i16, out_dtype=tl.i32, cores=(1, 1))


def test_divisors_by_pairs_equal_the_plain_count():
    from tilelang.plan.tiling_model import divisors

    for n in [*range(1, 200), 720720, 999983, 2**20, 10**9]:
        want = [d for d in range(1, n + 1) if n % d == 0] if n < 10**6 else None
        got = divisors(n)
        assert got == sorted(set(got)) and all(n % d == 0 for d in got)
        if want is not None:
            assert got == want
    assert divisors(10**9)[-1] == 10**9 and len(divisors(10**9)) == 100


@pytest.mark.parametrize("make, match", [
    (lambda: tl.Tile[(4,), np.int32], r"tile dtype must be a tilelang dtype, got .*int32.* \(write tl.i32\)"),
    (lambda: tl.Tile[(0,), tl.i32], "tile shape must have positive sizes"),
    (lambda: tl.Tensor[(-256,), tl.i32], "tensor shape must have positive sizes"),
    (lambda: tl.Tile[(4.0,), tl.i32], "tile shape must be a tuple of ints"),
])
def test_malformed_tile_and_tensor_types_are_tilelang_errors(make, match):
    with pytest.raises(tl.TileLangError, match=match):
        make()


def test_non_finite_constants_tile_indexes_and_doubled_decorators_are_named():
    with pytest.raises(tl.KernelError, match=r"constant inf is not a finite number but the other operand is i32"):
        @tl.kernel
        def clip(a: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
            c[...] = tl.minimum(a, float("inf"))

    @tl.kernel
    def clip_f(a: tl.Tile[(4,), tl.f32], c: tl.Tile[(4,), tl.f32]):
        c[...] = tl.minimum(a, float("inf"))  # a float tile takes it

    with pytest.raises(tl.KernelError, match=r"a tile cannot index a tile"):
        @tl.kernel
        def gather(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32]):
            c[...] = a[a]

    with pytest.raises(tl.KernelError, match=r"tl.kernel applied twice"):
        tl.kernel(clip_f)


def test_a_fifo_listed_twice_in_a_broadcast_or_split_is_refused_at_its_line():
    with pytest.raises(tl.DesignError, match=r"test_robust_frontend.py:\d+: tl.dma lists fifo 'f' 2 times"):
        @tl.design(device="npu1")
        def d(A: tl.Tensor[(64,), tl.i32]):
            f = tl.fifo(tl.Tile[(64,), tl.i32], name="f")
            tl.dma(A, [f, f])

    with pytest.raises(tl.DesignError, match=r"tl.split lists fifo 'p' 2 times"):
        @tl.design(device="npu1")
        def e(A: tl.Tensor[(64,), tl.i32]):
            f = tl.fifo(tl.Tile[(64,), tl.i32], name="f")
            p = tl.fifo(tl.Tile[(32,), tl.i32], name="p")
            tl.dma(A, f)
            tl.split(f, [p, p])


@pytest.mark.parametrize("cycles, match", [
    (lambda a, c: float("nan"), "returned nan"),
    (lambda a, c: 1e30, "returned 1e\\+30"),
    (lambda: 5, "raised TypeError"),
])
def test_an_extern_cycle_function_that_misbehaves_is_named(cycles, match):
    def ref(a, c):  # noqa: ANN001, ANN202
        c[...] = a

    ext = tl.extern_kernel("ext", [tl.Tile[(8,), tl.i32], tl.Tile[(8,), tl.i32]], reference=ref, cycles=cycles,
                           object_file="ext.o")
    with pytest.raises(tl.KernelError, match=rf"extern kernel 'ext': its cycle function {match}"):
        ext.cycles_for((None, None))


def test_a_pattern_of_ints_instead_of_lists_is_named():
    with pytest.raises(tl.DesignError, match=r"tl.pattern: sizes is a list \(or tuple\) of ints, outermost first, got 256"):
        tl.pattern(0, 256, 1)


# -- design errors at the user's line ------------------------------------------------------------


def _one_core(body, pattern=lambda: None, depth=2, device="npu1"):
    """A design whose core runs ``body(f, g)`` in a tl.range loop; ``pattern()`` is the pattern of the move into f."""

    @tl.design(device=device)
    def d(A: tl.Tensor[(64,), tl.i32], C: tl.Tensor[(64,), tl.i32]):
        f = tl.fifo(tl.Tile[(8,), tl.i32], depth=depth, name="f")
        g = tl.fifo(tl.Tile[(8,), tl.i32], name="g")

        @tl.core(name="w")
        def w():
            for _ in tl.range(8):
                body(f, g)

        tl.dma(A, f, pattern=pattern())
        tl.dma(g, C)

    return d


def _step(f, g):
    x, y = f.acquire(), g.acquire()
    _inner(x, y)
    f.release()
    g.release()


def _acquire_past_depth(f, g):
    x, y = f.acquire(3), g.acquire()
    _inner(x[0], y)
    f.release(3)
    g.release()


def _release_more_than_held(f, g):
    x, y = f.acquire(), g.acquire()
    _inner(x, y)
    f.release(2)
    g.release()


def _loop_past_32_bits(f, g):
    for _ in tl.range(2**40):
        _step(f, g)


def _zero_size_pattern():
    return tl.pattern(0, [0], [1])


def _zero_repeat():
    return tl.pattern(0, [64], [1]).repeat(0)


def _zero_tiles():
    return tl.tiles((0,))


def _huge_repeat():
    return tl.pattern(0, [64], [1]).repeat(2**26)


@pytest.mark.parametrize("body, pattern, at, message", [
    (_step, _zero_size_pattern, (_zero_size_pattern, 1), r"{here}: tl\.pattern: pattern sizes must be positive, got \(0,\)"),
    (_step, _zero_repeat, (_zero_repeat, 1), r"{here}: pattern\.repeat takes a positive int, got 0"),
    (_step, _zero_tiles, (_zero_tiles, 1), r"{here}: tl\.tiles needs a tuple of positive ints, got \(0,\)"),
    (_step, _huge_repeat, (_one_core, 13), r"dma 'dma0' \(at {here}\): moves 4294967296 elements"),
    (_acquire_past_depth, lambda: None, (_acquire_past_depth, 1),
     r"{here}: core 'w' acquires 3 elements of fifo 'f', whose depth is 2; this can never be granted: acquire at "
     r"most 2, or declare the fifo with depth=3"),
    (_release_more_than_held, lambda: None, (_release_more_than_held, 3),
     r"core 'w' \(at {here}\): releases 2 elements of fifo 'f' while holding 1; release at most what the core holds"),
    (_loop_past_32_bits, lambda: None, (_loop_past_32_bits, 1),
     r"{here}: tl\.range bound 1099511627776 is outside the 32-bit range"),
])
def test_pattern_size_and_acquire_errors_name_the_users_line(body, pattern, at, message):
    fn, offset = at  # the line to blame: ``offset`` lines below ``fn``'s def
    here = rf"\S*test_robust_frontend\.py:{fn.__code__.co_firstlineno + offset}"
    with pytest.raises(tl.DesignError, match=message.format(here=here)):
        _one_core(body, pattern)


@pytest.mark.parametrize("device, depth, rule", [
    ("npu1", 64, "at most 63: its buffers are counted by a semaphore lock, and npu1's locks count to at most 63"),
    ("xcvc1902", 17, "at most 16: xcvc1902's locks are binary, one per buffer on the tile holding the buffers, and a "
                     "tile has at most 16 locks"),
])
def test_a_fifo_deeper_than_the_devices_locks_allow_names_fifo_depth_limit_and_device(device, depth, rule):
    with pytest.raises(tl.DesignError, match=rf"fifo 'f' \(at \S*test_robust_frontend\.py:\d+\): depth {depth} is more "
                                             rf"than {device} allows, {re.escape(rule)}; reduce the depth"):
        _one_core(_step, depth=depth, device=device)
    _one_core(_step, depth=depth - 1, device=device)  # the limit itself is accepted


# -- what a core body holds is not data --------------------------------------------------------


def _window_out_of_range(f, g):
    w, y = f.acquire(2), g.acquire()
    _inner(w[2], y)


def _add_to_element(f, g):
    y = g.acquire()
    y = y + 1


def _index_element(f, g):
    y = g.acquire()
    y[0:4] = 0


def _numpy_on_element(f, g):
    y = g.acquire()
    np.sum(y)


def _method_on_element(f, g):
    y = g.acquire()
    y.sum()


def _add_to_window(f, g):
    w = f.acquire(2)
    w + 1


def _window_to_kernel(f, g):
    w, y = f.acquire(2), g.acquire()
    _inner(w, y)


HOLD = r"in a core body: a core body acquires, releases and calls kernels.*Instead do the computation inside a @tl\.kernel"


@pytest.mark.parametrize("body, message", [
    (_window_out_of_range, r"fifo 'f': element \[2\] of a window of 2 acquired elements \(acquire\(2\) at "
                           r"\S*test_robust_frontend\.py:\d+\); index it with an int from 0 to 1"),
    (_add_to_element, r"arithmetic \(\+\) on <g\[0\]> " + HOLD),
    (_index_element, r"assigning to a part \(\[slice\(0, 4, None\)\] = \.\.\.\) of <g\[0\]> " + HOLD),
    (_numpy_on_element, r"numpy's np\.sum of <g\[0\]> " + HOLD),
    (_method_on_element, r"\.sum of <g\[0\]> " + HOLD),
    (_add_to_window, r"arithmetic \(\+\) on \(<f\[0\]>, <f\[1\]>\) " + HOLD),
    (_window_to_kernel, r"core 'w': call of '_inner', parameter 'a': pass one element of the acquired window \(w\[0\] "
                        r"is the oldest\), not the window"),
])
def test_computing_on_held_elements_in_a_core_body_is_a_design_error_at_its_line(body, message):
    here = rf"test_robust_frontend\.py:{body.__code__.co_firstlineno + 2}: "
    with pytest.raises(tl.DesignError, match=here + message):
        _one_core(body)


def _tile_function_on_element(f, g):
    y = g.acquire()
    tl.exp(y)


def _kernel_missing_an_argument(f, g):
    x = f.acquire()
    _inner(x)


@pytest.mark.parametrize("body, message", [
    (_tile_function_on_element, r"tile operations \(tile arithmetic and tl\.exp, tl\.sum, tl\.where, \.\.\.\) are only "
                                r"valid while a @tl\.kernel function is traced \(here core 'w' is traced"),
    (_kernel_missing_an_argument, r"core 'w': _inner\(\) is missing arguments \['c'\]"),
])
def test_kernel_misuse_in_a_core_body_is_a_kernel_error_at_its_line(body, message):
    here = rf"test_robust_frontend\.py:{body.__code__.co_firstlineno + 2}: "
    with pytest.raises(tl.KernelError, match=here + message):
        _one_core(body)


# -- numpy functions and reductions in a kernel -------------------------------------------------


@pytest.mark.parametrize("expr, name, advice", [
    (lambda a: np.sum(a), "sum", "use tl.sum(x, axis=...)"),
    (lambda a: np.mean(a, axis=0), "mean", "use tl.sum(x, axis=...) / n"),
    (lambda a: np.exp(a), "exp", "use tl.exp(x)"),
    (lambda a: np.sqrt(a), "sqrt", "use tl.sqrt(x)"),
    (lambda a: np.tanh(a), "tanh", "use tl.tanh(x)"),
    (lambda a: np.maximum(a, 0), "maximum", "use tl.maximum(a, b)"),
])
def test_numpy_functions_on_tiles_are_named_at_the_users_line_not_numpys(expr, name, advice):
    here = rf"test_robust_frontend\.py:{expr.__code__.co_firstlineno}: "
    with pytest.raises(tl.KernelError, match=here + rf"in kernel 'k': numpy's np\.{name} cannot take a traced tile "
                                             rf"\(a kernel body is traced over symbolic tiles, not run on arrays\): "
                                             + re.escape(advice)):
        @tl.kernel
        def k(a: tl.Tile[(8, 8), tl.f32], c: tl.Tile[(8, 8), tl.f32]):
            c[...] = expr(a)


def test_a_numpy_scalar_on_the_left_of_an_operator_traces_like_a_python_number():
    @tl.kernel
    def k(a: tl.Tile[(8,), tl.f32], c: tl.Tile[(8,), tl.f32]):
        c[...] = np.float32(2) * a - np.float32(1)

    a, c = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    k(a, c)
    np.testing.assert_array_equal(c, 2 * a - 1)


@pytest.mark.parametrize("axis", [(0, 0), (1, -1)])
def test_a_duplicate_reduction_axis_is_refused_as_numpy_does(axis):
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        np.sum(np.ones((4, 8)), axis=axis)
    with pytest.raises(tl.KernelError, match=rf"test_robust_frontend\.py:\d+: in kernel 'k': sum: duplicate value in "
                                             rf"'axis' {re.escape(repr(axis))}"):
        @tl.kernel
        def k(a: tl.Tile[(4, 8), tl.i32], c: tl.Tile[(8,), tl.i32]):
            c[...] = tl.sum(a, axis=axis)


def test_a_kernel_parameter_with_a_default_value_is_refused():
    with pytest.raises(tl.KernelError, match=r"test_robust_frontend\.py:\d+: kernel 'k': parameter 's' has a default "
                                             r"value \(3\); kernel parameters take none, every call passes each one: "
                                             r"remove '= 3'"):
        @tl.kernel
        def k(a: tl.Tile[(8,), tl.i32], c: tl.Tile[(8,), tl.i32], s: tl.i32 = 3):
            c[...] = a * s


def _aie1_design(kernel, dt):  # noqa: ANN001, ANN202
    @tl.design(device="xcvc1902")
    def d(A: tl.Tensor[(16,), dt], C: tl.Tensor[(16,), dt]):
        fi = tl.fifo(tl.Tile[(16,), dt], name="fi")
        fo = tl.fifo(tl.Tile[(16,), dt], name="fo")

        @tl.core(name="w")
        def _body():
            x, y = fi.acquire(), fo.acquire()
            kernel(x, y)
            fi.release()
            fo.release()

        tl.dma(A, fi)
        tl.dma(fo, C)

    return d


def test_compute_in_a_dtype_the_cores_lack_is_refused_before_any_mode_runs_it():
    """An AIE1 core has no bf16 datapath: a kernel computing in bf16 there (a cast through it, or bf16
    arithmetic) is refused when the design is checked, not simulated functionally and emitted only to fail in
    timed mode (or priced as if the datapath existed); bf16 data merely copied through is moved."""

    @tl.kernel
    def through_bf16(a: tl.Tile[(16,), tl.i16], c: tl.Tile[(16,), tl.i16]):
        c[...] = a.astype(tl.bf16).astype(tl.i16)

    @tl.kernel
    def add_bf16(a: tl.Tile[(16,), tl.bf16], c: tl.Tile[(16,), tl.bf16]):
        c[...] = a + a

    @tl.kernel
    def copy_bf16(a: tl.Tile[(16,), tl.bf16], c: tl.Tile[(16,), tl.bf16]):
        c[...] = a

    for kernel, dt, op in ((through_bf16, tl.i16, "cast"), (add_bf16, tl.bf16, "add")):
        with pytest.raises(tl.DesignError, match=rf"kernel '{kernel.name}' \(at .*test_robust_frontend.py:\d+\) "
                                                 rf"computes in bf16 \({op}\), but xcvc1902 \(aie1\) cores have no "
                                                 r"bf16 datapath"):
            tl.plan(_aie1_design(kernel, dt), strategy="greedy")
    x = np.arange(16, dtype=np.float32)
    got = tl.simulate(tl.plan(_aie1_design(copy_bf16, tl.bf16), strategy="greedy"), mode="timed", A=x).outputs["C"]
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float32), x)
