"""Hardware legality rules as device data: stream-switch connections and DMA strides.

The rules come from mlir-aie's target models and verifiers (tilelang/devices/switch_rules.py and
dma_rules.py cite them); mlir-aie's own aie-opt is the judge where it is at hand.
"""

from __future__ import annotations

import re

import pytest

import tilelang as tl
from tilelang.backends.mlir import vendor
from tilelang.backends.mlir.bd import Walk
from tilelang.backends.mlir.runtime_sequence import static_fields
from tilelang.errors import DesignError

# -- stream-switch connections ---------------------------------------------------------------------------


def test_memtile_pass_through_keeps_the_channel_on_aie_ml() -> None:
    for name in ("npu1", "npu2"):
        d = tl.device(name)
        mem = d.tiles("mem")[0]
        assert d.legal_connection(mem, ("South", 1), ("North", 1))
        assert not d.legal_connection(mem, ("South", 1), ("North", 4))  # the connection aie-opt refused
        assert not d.legal_connection(mem, ("North", 2), ("South", 0))
        assert d.legal_connection(mem, ("South", 1), ("DMA", 4))
        assert d.legal_connection(mem, ("DMA", 3), ("North", 0))
        assert not d.legal_connection(mem, ("DMA", 3), ("DMA", 2))  # memtile DMA to DMA: same channel only


def test_core_and_shim_rules() -> None:
    d = tl.device("npu1")
    core, shim = (0, 2), (1, 0)
    assert d.legal_connection(core, ("South", 3), ("North", 0))  # different bundles: any channel
    assert not d.legal_connection(core, ("West", 1), ("West", 2))  # the same bundle: the same channel
    assert not d.legal_connection(core, ("Core", 0), ("Core", 0))
    assert d.legal_connection(shim, ("South", 3), ("North", 5))
    assert not d.legal_connection(shim, ("East", 0), ("East", 1))
    assert not d.legal_connection(core, ("South", 6), ("North", 0))  # beyond the 6 South slave ports
    aie1 = tl.device("xcvc1902")
    assert aie1.legal_connection((3, 2), ("West", 1), ("West", 2))  # AIE1: any pair within the port counts
    assert not aie1.legal_connection((3, 2), ("Trace", 0), ("North", 0))  # trace goes only South


def _memtile_connects(text: str) -> list[tuple[str, int, str, int]]:
    """(src bundle, channel, dst bundle, channel) of every memtile switchbox connection (custom form)."""
    out = []
    for box in re.finditer(r"aie\.switchbox\(%mem_tile_\d+_\d+\) \{(.*?)\n\s*\}", text, re.S):
        out += [(a, int(b), c, int(e)) for a, b, c, e in re.findall(r"aie\.connect<(\w+) : (\d+), (\w+) : (\d+)>",
                                                                      box.group(1))]
    return out


def test_matvec_memtile_pass_throughs_keep_their_channel() -> None:
    """The plan that gave aie-opt "illegal stream switch connection" (South:1 -> North:4) now keeps k -> k."""
    pytest.importorskip("mlir.ir")
    design = tl.library.matvec(512, 256, device="npu1", tiling={"m": 32, "k": 32})
    plan = tl.plan(design, strategy="greedy")
    text = tl.emit_mlir(plan, level="physical")
    if vendor.find_tools() is None:
        pytest.skip(vendor.missing_tools_reason())
    connects = _memtile_connects(vendor.pretty(text))
    through = [c for c in connects if {c[0], c[2]} <= {"North", "South"}]
    assert through, "the matvec plan should pass streams through a memtile"
    assert all(src_ch == dst_ch for _, src_ch, _, dst_ch in through), through


# -- DMA strides -------------------------------------------------------------------------------------------


def test_a_repeat_takes_the_iteration_entry_of_an_npu_transfer() -> None:
    # The walk the issue quotes: tl.pattern(...).repeat(2) over 64 elements used to become
    # [1, 1, 2, 64][0, 0, 0, 1], which mlir-aie refuses ("Stride 1 must be a positive integer").
    assert static_fields(Walk(0, ((2, 0), (64, 1)))) == ([0, 0, 0, 0], [2, 1, 1, 64], [0, 0, 0, 1])
    assert static_fields(Walk(8, ((4, 0), (3, 128), (64, 1)))) == ([0, 0, 0, 8], [4, 1, 3, 64], [0, 0, 128, 1])
    assert static_fields(Walk(0, ((3, 128), (64, 1)))) == ([0, 0, 0, 0], [1, 1, 3, 64], [0, 0, 128, 1])


@tl.kernel
def _inc(a: tl.Tile[(256,), tl.i32], c: tl.Tile[(256,), tl.i32]):
    c[...] = a + 1


def _design(pattern, n_in: int, n_out: int, device: str = "npu1"):  # noqa: ANN001, ANN202
    @tl.design(device=device)
    def strided(A: tl.Tensor[(n_in,), tl.i32], C: tl.Tensor[(n_out,), tl.i32]):
        a = tl.fifo(tl.Tile[(256,), tl.i32], depth=2, name="a")
        c = tl.fifo(tl.Tile[(256,), tl.i32], depth=2, name="c")

        @tl.core(name="w")
        def w():
            for _ in tl.range(n_out // 256):
                x, y = a.acquire(), c.acquire()
                _inc(x, y)
                a.release()
                c.release()

        tl.dma(A, a, pattern=pattern)
        tl.dma(c, C, pattern=tl.tiles((256,)))

    return strided


@pytest.mark.parametrize("pattern", [tl.pattern(0, (2, 2, 256), (256, 0, 1)), tl.pattern(0, (256, 4), (1, 0))])
def test_stride_zero_inside_a_pattern_is_refused_at_the_users_line(pattern) -> None:  # noqa: ANN001
    with pytest.raises(DesignError, match=r"test_legality\.py:\d+.*stride 0, but a DMA repeats only in its outermost"):
        _design(pattern, 512, 1024)


def test_a_repeat_on_a_one_dimensional_shim_is_refused_up_front() -> None:
    with pytest.raises(DesignError, match=r"2 dimensions .*a repeat counts as one.*xcvc1902 supports 1"):
        _design(tl.pattern(0, (512,), (1,)).repeat(2), 512, 1024, device="xcvc1902")


@pytest.mark.parametrize("device", ["npu1", "npu2"])
@pytest.mark.parametrize(
    "pattern",
    [tl.pattern(0, (2, 512), (0, 1)), tl.pattern(0, (512,), (1,)).repeat(2), tl.pattern(0, (2, 256), (0, 1)).repeat(2)],
    ids=["outer-stride-0", "repeat", "both"],
)
def test_repeats_pass_mlir_aie_and_read_what_numpy_reads(pattern, device: str) -> None:  # noqa: ANN001
    import numpy as np

    n_in = 512 if pattern.sizes[-1] == 512 else 256
    design = _design(pattern, n_in, 1024, device)
    a = np.arange(n_in, dtype=np.int32)
    got = tl.simulate(tl.plan(design, strategy="greedy"), A=a).outputs["C"]
    assert (got == a[_reads(pattern)] + 1).all()
    if vendor.find_tools() is None:
        pytest.skip(vendor.missing_tools_reason())
    pytest.importorskip("mlir.ir")
    plan = tl.plan(design, strategy="greedy")
    for level in vendor.LEVELS:
        vendor.compile_text(tl.emit_mlir(plan, level=level), level)


def _reads(pattern) -> object:  # noqa: ANN001
    """The element indices the pattern reads, repeats included (numpy's view of the walk)."""
    import numpy as np

    return np.tile(pattern.indices(), pattern.repeat_count)
