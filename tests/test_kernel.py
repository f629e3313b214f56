"""@tl.kernel: tracing, the numpy call semantics, and the errors users see."""

import ml_dtypes
import numpy as np
import pytest

import tilelang as tl
from tilelang.ir.kernel import OpKind

BF16 = ml_dtypes.bfloat16


@tl.kernel
def scale(a: tl.Tile[(1024,), tl.i32], c: tl.Tile[(1024,), tl.i32], factor: tl.i32):
    c[...] = a * factor


@tl.kernel
def mac(a: tl.Tile[(64, 64), tl.bf16], b: tl.Tile[(64, 64), tl.bf16], c: tl.Tile[(64, 64), tl.f32]):
    c[...] += a @ b


def test_api_kernels_trace_to_the_expected_ops():
    assert scale.name == "scale"
    assert [p.name for p in scale.params] == ["a", "c", "factor"]
    assert [op.kind for op in scale.body] == [OpKind.LOAD, OpKind.MUL, OpKind.STORE]
    assert scale.body[1].operands[1] is scale.params[2]
    assert scale.written == {"c"}
    assert [op.kind for op in mac.body] == [OpKind.LOAD, OpKind.LOAD, OpKind.LOAD, OpKind.MATMUL, OpKind.ADD, OpKind.STORE]
    assert mac.body[3].type == tl.Tile[(64, 64), tl.f32]


def test_kernels_run_on_numpy_arrays():
    a = np.arange(1024, dtype=np.int32)
    c = np.zeros(1024, np.int32)
    assert scale(a, c, 3) is None
    np.testing.assert_array_equal(c, a * 3)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    y = rng.standard_normal((64, 64)).astype(np.float32)
    acc = np.ones((64, 64), np.float32)
    mac(x, y, acc)
    # float32 inputs for a bf16 tile are rounded to bf16 on the way in
    want = 1.0 + x.astype(BF16).astype(np.float64) @ y.astype(BF16).astype(np.float64)
    np.testing.assert_allclose(acc, want, rtol=1e-5, atol=1e-5)


def test_integer_arithmetic_wraps_in_the_tile_dtype():
    @tl.kernel
    def k(a: tl.Tile[(4,), tl.i8], c: tl.Tile[(4,), tl.i8]):
        c[...] = a * 2 + 100

    a = np.array([60, -70, 1, 127], np.int8)
    c = np.zeros(4, np.int8)
    k(a, c)
    want = ((a.astype(np.int64) * 2 + 100 + 128) % 256 - 128).astype(np.int8)
    np.testing.assert_array_equal(c, want)


def test_integer_division_truncates_toward_zero():
    @tl.kernel
    def k(a: tl.Tile[(6,), tl.i32], b: tl.Tile[(6,), tl.i32], c: tl.Tile[(6,), tl.i32]):
        c[...] = a / b

    a = np.array([7, -7, 7, -7, 5, 3], np.int32)
    b = np.array([2, 2, -2, -2, 0, 3], np.int32)
    c = np.zeros(6, np.int32)
    k(a, b, c)
    np.testing.assert_array_equal(c, [3, -3, -3, 3, 0, 1])


def test_every_listed_operation():
    @tl.kernel
    def k(
        a: tl.Tile[(8, 16), tl.f32],
        b: tl.Tile[(16,), tl.f32],
        m: tl.Tile[(16, 4), tl.f32],
        out: tl.Tile[(8, 16), tl.f32],
        red: tl.Tile[(8,), tl.f32],
        mx: tl.Tile[(16,), tl.f32],
        mm: tl.Tile[(8, 4), tl.f32],
        ints: tl.Tile[(8, 16), tl.i32],
    ):
        x = (a + b) * 2.0 - a / 4.0
        x = tl.maximum(x, -a)
        x = tl.minimum(x, tl.exp(b))
        x = tl.where(a > 0.5, tl.relu(x), abs(-x))
        out[...] = x
        out[0:4, :] = a[4:8, :] + 1.0
        red[...] = tl.sum(a, axis=1)
        mx[...] = tl.max(a, axis=0)
        mm[...] = a @ m
        ints[...] = (a * 10.0).astype(tl.i32)

    rng = np.random.default_rng(1)
    a = rng.random((8, 16), dtype=np.float32)
    b = rng.random(16, dtype=np.float32)
    m = rng.random((16, 4), dtype=np.float32)
    outs = [np.zeros((8, 16), np.float32), np.zeros(8, np.float32), np.zeros(16, np.float32),
            np.zeros((8, 4), np.float32), np.zeros((8, 16), np.int32)]
    k(a, b, m, *outs)
    x = (a + b) * np.float32(2) - a / np.float32(4)
    x = np.maximum(x, -a)
    x = np.minimum(x, np.exp(b))
    x = np.where(a > 0.5, np.maximum(x, 0), np.abs(-x))
    x[0:4] = a[4:8] + 1
    np.testing.assert_allclose(outs[0], x, rtol=1e-6)
    np.testing.assert_allclose(outs[1], a.sum(axis=1), rtol=1e-6)
    np.testing.assert_array_equal(outs[2], a.max(axis=0))
    np.testing.assert_allclose(outs[3], a @ m, rtol=1e-5)
    np.testing.assert_array_equal(outs[4], np.trunc(a * np.float32(10)).astype(np.int32))


def test_slice_assignment_and_accumulate():
    @tl.kernel
    def k(a: tl.Tile[(64,), tl.i16], c: tl.Tile[(64,), tl.i16]):
        c[0:32] = a[32:64]
        c[32:] += a[0:32:1] * 2
        c[::2] = -c[::2]

    a = np.arange(64, dtype=np.int16)
    c = np.ones(64, np.int16)
    k(a, c)
    want = np.ones(64, np.int16)
    want[0:32] = a[32:64]
    want[32:] += a[0:32] * 2
    want[::2] = -want[::2]
    np.testing.assert_array_equal(c, want)


def test_bf16_elementwise_rounds_each_op():
    @tl.kernel
    def k(a: tl.Tile[(256,), tl.bf16], c: tl.Tile[(256,), tl.bf16]):
        c[...] = a * 3.0 + 1.0

    rng = np.random.default_rng(2)
    a = rng.standard_normal(256).astype(BF16)
    c = np.zeros(256, BF16)
    k(a, c)
    step = (a.astype(np.float32) * np.float32(3)).astype(BF16)
    want = (step.astype(np.float32) + np.float32(1)).astype(BF16)
    np.testing.assert_array_equal(c.view(np.uint16), want.view(np.uint16))


def test_extern_kernel_reference_and_cycles():
    def ref(a, c, f):
        c[...] = a + f

    ext = tl.extern_kernel("add_const", [tl.Tile[(16,), tl.i32], tl.Tile[(16,), tl.i32], tl.i32],
                           reference=ref, cycles=lambda a, c, f: 40 + f, object_file="add_const.o")
    assert ext.name == "add_const" and ext.written == {"p1"}
    a = np.arange(16, dtype=np.int32)
    c = np.zeros(16, np.int32)
    ext(a, c, 5)
    np.testing.assert_array_equal(c, a + 5)
    assert ext.cycles_for((a, c, 5)) == 45


# -- errors ---------------------------------------------------------------------------


def test_shape_mismatch_names_op_file_and_line():
    with pytest.raises(tl.KernelError, match=r"test_kernel\.py:\d+: in kernel 'bad': add: shapes \(16,\) and \(8,\)"):

        @tl.kernel
        def bad(a: tl.Tile[(16,), tl.i32], b: tl.Tile[(8,), tl.i32], c: tl.Tile[(16,), tl.i32]):
            c[...] = a + b


def test_dtype_mismatch_says_how_to_fix():
    with pytest.raises(tl.KernelError, match=r"mul: operand dtypes differ \(i32, f32\).*astype"):

        @tl.kernel
        def bad(a: tl.Tile[(16,), tl.i32], b: tl.Tile[(16,), tl.f32], c: tl.Tile[(16,), tl.f32]):
            c[...] = a * b


def test_store_dtype_mismatch_names_parameter():
    with pytest.raises(tl.KernelError, match=r"store to 'c': value has dtype f32, parameter has bf16"):

        @tl.kernel
        def bad(a: tl.Tile[(8, 8), tl.bf16], b: tl.Tile[(8, 8), tl.bf16], c: tl.Tile[(8, 8), tl.bf16]):
            c[...] = a @ b


def test_missing_annotation_names_parameter():
    with pytest.raises(tl.KernelError, match=r"parameter 'b' needs an annotation"):

        @tl.kernel
        def bad(a: tl.Tile[(16,), tl.i32], b):
            a[...] = b


def test_python_if_on_tiles_is_rejected():
    with pytest.raises(tl.KernelError, match=r"no truth value.*tl\.where"):

        @tl.kernel
        def bad(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32]):
            if a > 0:
                c[...] = a


@pytest.mark.parametrize(
    "body, message",
    [
        (lambda a, c: c.__setitem__(..., tl.exp(a)), r"exp needs a float tile"),
        (lambda a, c: c.__setitem__(..., a @ a), r"matmul needs 2-D tiles"),
        (lambda a, c: c.__setitem__(slice(0, 8), a), r"value of shape \(16,\) does not fit region of shape \(8,\)"),
        (lambda a, c: c.__setitem__(..., a * 1.5), r"constant 1.5 is not an integer"),
        (lambda a, c: c.__setitem__(..., tl.sum(a, axis=3)), r"axis 3 out of range"),
        (lambda a, c: None, r"writes none of its tile parameters"),
    ],
)
def test_bad_kernels(body, message):
    def fn(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32]):
        body(a, c)

    with pytest.raises(tl.KernelError, match=message):
        tl.kernel(fn)


def test_bad_numpy_calls():
    a = np.arange(1024, dtype=np.int32)
    with pytest.raises(tl.KernelError, match=r"argument 'a': shape \(10,\) does not match"):
        scale(np.zeros(10, np.int32), np.zeros(1024, np.int32), 3)
    with pytest.raises(tl.KernelError, match=r"argument 'c': the kernel writes it, so it must have dtype int32"):
        scale(a, np.zeros(1024, np.float32), 3)
    with pytest.raises(tl.KernelError, match=r"argument 'factor': 4294967296 does not fit in i32"):
        scale(a, np.zeros(1024, np.int32), 2**32)
    with pytest.raises(tl.KernelError, match=r"missing arguments \['factor'\]"):
        scale(a, np.zeros(1024, np.int32))


def test_tracing_pitfalls():
    with pytest.raises(tl.KernelError, match=r"cannot be iterated at trace time"):

        @tl.kernel
        def it(a: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
            for x in a:
                c[...] = x

    with pytest.raises(tl.KernelError, match=r"boolean constants are not supported"):

        @tl.kernel
        def boolean(a: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
            c[...] = a * True

    with pytest.raises(tl.KernelError, match=r"constant 300 does not fit in i8"):

        @tl.kernel
        def big(a: tl.Tile[(4,), tl.i8], c: tl.Tile[(4,), tl.i8]):
            c[...] = a + 300

    with pytest.raises(tl.KernelError, match=r"returns a value"):

        @tl.kernel
        def ret(a: tl.Tile[(4,), tl.i32], c: tl.Tile[(4,), tl.i32]):
            c[...] = a
            return a


def test_string_annotations_resolve_enclosing_sizes():
    ns: dict = {}
    exec(
        "from __future__ import annotations\n"
        "import tilelang as tl\n"
        "def make(n):\n"
        "    @tl.kernel\n"
        "    def k(a: tl.Tile[(n,), tl.i16], c: tl.Tile[(n,), tl.i16]):\n"
        "        c[...] = a + 1\n"
        "    return k\n",
        ns,
    )
    k = ns["make"](12)
    assert k.params[0].type == tl.Tile[(12,), tl.i16]


def test_where_with_two_constants_takes_the_compared_dtype():
    @tl.kernel
    def threshold(a: tl.Tile[(8,), tl.i16], c: tl.Tile[(8,), tl.i16]):
        c[...] = tl.where(a > 3, 255, 0)

    a = np.arange(8, dtype=np.int16)
    c = np.zeros(8, np.int16)
    threshold(a, c)
    np.testing.assert_array_equal(c, np.where(a > 3, 255, 0).astype(np.int16))
    with pytest.raises(tl.KernelError, match="condition must be a tile comparison"):

        @tl.kernel
        def bad(a: tl.Tile[(8,), tl.i16], c: tl.Tile[(8,), tl.i16]):
            c[...] = tl.where(True, 1, 0)


def _numpy_and_traced(body):  # noqa: ANN001 - a kernel body over (a, c), run as numpy and traced
    a = np.arange(8, dtype=np.int32)
    want = np.zeros(8, np.int32)
    body(a, want)

    def k(a: tl.Tile[(8,), tl.i32], c: tl.Tile[(8,), tl.i32]):
        body(a, c)

    got = np.zeros(8, np.int32)
    tl.kernel(k)(a, got)
    return got, want


def _param_inplace(a, c):  # noqa: ANN001, ANN202
    c[...] = a
    c += 1
    c *= 2
    c[0:2] -= 5


def _view_inplace(a, c):  # noqa: ANN001, ANN202
    c[...] = a
    lo = c[0:4]
    lo += 10  # a view: writes c[0:4]
    c[4:8] = lo


def _alias_inplace(a, c):  # noqa: ANN001, ANN202
    u = a + 1
    v = u
    v += 1  # the same array: u changes too
    c[...] = u


def _disjoint_write(a, c):  # noqa: ANN001, ANN202
    c[...] = a
    x = c[0:4]
    c[4:8] = 0  # does not touch what x reads
    c[4:8] = x


@pytest.mark.parametrize("body", [_param_inplace, _view_inplace, _alias_inplace, _disjoint_write])
def test_in_place_operators_and_views_follow_numpy(body):
    # `c += 1` on a parameter used to rebind the name and store nothing
    got, want = _numpy_and_traced(body)
    np.testing.assert_array_equal(got, want)


def test_a_read_used_after_its_region_was_written_is_refused():
    def stale(a, c):  # noqa: ANN001, ANN202
        c[...] = a
        lo = c[0:4]
        c[0:4] = 0
        c[4:8] = lo  # numpy: zeros (lo is a view); a traced copy would give a[0:4]

    with pytest.raises(tl.KernelError, match=r"test_kernel.py:\d+: in kernel 'k': a tile read from parameter 'c' "
                                              r"is used after 'c' was written where it reads"):
        _numpy_and_traced(stale)

    with pytest.raises(tl.KernelError, match="'@=' has no in-place form"):
        @tl.kernel
        def square(a: tl.Tile[(8, 8), tl.i32], c: tl.Tile[(8, 8), tl.i32]):
            c[...] = a
            c @= a
