"""Print/parse round trips of traced designs: the examples and generated ones."""

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import tilelang as tl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import designs  # noqa: E402


def roundtrip(obj):
    text = tl.ir.print(obj)
    again = tl.ir.parse(text)
    assert tl.ir.print(again) == text
    return again


def test_api_example_roundtrips():
    d = roundtrip(designs.vector_scalar_mul())
    assert d.name == "vector_scalar_mul" and d.device.name == "npu1"
    assert [c.name for c in d.cores] == ["worker"]


def test_single_core_bf16_gemm_roundtrips():
    d = designs.gemm_single_core(128, 128, 128, 32)
    back = roundtrip(d)
    assert [m.pattern for m in back.dmas] == [m.pattern for m in d.dmas]
    assert back.kernel("mac").params[2].type == tl.Tile[(32, 32), tl.f32]


def test_sixteen_core_broadcast_on_xcvc1902_roundtrips():
    d = designs.broadcast_scale(cores=16)
    back = roundtrip(d)
    assert back.device.name == "xcvc1902" and len(back.cores) == 16
    assert back.cores == d.cores and back.dmas == d.dmas


def test_whole_array_matmul_roundtrips():
    d = tl.library.matmul(256, 256, 256, tiling={"m": 32, "k": 32, "n": 32})
    back = roundtrip(d)
    assert back.links == d.links and back.fifos == d.fifos


@st.composite
def pipelines(draw):
    """A chain of 1-4 cores, each adding a constant, with random sizes, depths, patterns and loops."""
    dtype = draw(st.sampled_from([tl.i8, tl.i16, tl.i32, tl.bf16, tl.f32]))
    elem = draw(st.sampled_from([16, 64, 256]))
    count = draw(st.integers(1, 4))
    stages = draw(st.integers(1, 4))
    depths = draw(st.lists(st.integers(1, 3), min_size=stages + 1, max_size=stages + 1))
    reverse = draw(st.booleans())
    device = draw(st.sampled_from(["npu1", "npu2", "xcve2802"]))
    looped = draw(st.booleans())
    return dtype, elem, count, stages, depths, reverse, device, looped


def build_pipeline(dtype, elem, count, stages, depths, reverse, device, looped):
    n = elem * count
    const = 1 if dtype.is_int else 1.0

    @tl.kernel
    def step(a: tl.Tile[(elem,), dtype], c: tl.Tile[(elem,), dtype]):
        c[...] = a + const

    @tl.design(device=device)
    def pipeline(X: tl.Tensor[(n,), dtype], Y: tl.Tensor[(n,), dtype]):
        fifos = [tl.fifo(tl.Tile[(elem,), dtype], depth=depths[i], name=f"f{i}") for i in range(stages + 1)]
        for s in range(stages):

            @tl.core(name=f"stage{s}")
            def body(s=s):
                def one():
                    a, c = fifos[s].acquire(), fifos[s + 1].acquire()
                    step(a, c)
                    fifos[s].release()
                    fifos[s + 1].release()

                if looped:
                    for _ in tl.range(count):
                        one()
                else:
                    for _ in range(count):
                        one()

        if reverse:
            # tiles in reverse order: a raw pattern per tile, several moves on one fifo in program order
            for i in reversed(range(count)):
                tl.dma(X, fifos[0], pattern=tl.pattern(i * elem, (elem,), (1,)))
        else:
            tl.dma(X, fifos[0], pattern=tl.tiles((elem,)))
        tl.dma(fifos[-1], Y)

    return pipeline


@settings(max_examples=40, deadline=None)
@given(pipelines())
def test_generated_designs_roundtrip(params):
    d = build_pipeline(*params)
    back = roundtrip(d)
    assert back.cores == d.cores and back.dmas == d.dmas and back.fifos == d.fifos
