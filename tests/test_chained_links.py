"""A fifo that leaves one link and enters another on the same memtile (a join whose result a forward passes
on): the memtile's switch connects DMA to DMA only on the same channel (``Device.legal_connection``), so the
planner gives such a fifo one channel number both ways; mlir-aie's objectfifo lowering takes a fifo in at
most one link, so that level refuses it, naming the fifo, and the physical level emits it. Likewise a
memtile whose BD pools fit only the planner's own channel numbers, not mlir-aie's numbering from 0."""

from __future__ import annotations

import numpy as np
import pytest
from test_mlir_physical import load_interp

import tilelang as tl

E, T = 16, 5  # elements a core's tile, tiles


@tl.kernel
def affine(a: tl.Tile[(E,), tl.i32], c: tl.Tile[(E,), tl.i32], m: tl.i32, b: tl.i32):
    c[...] = a * m + b


def chained(device: str = "npu2", depth: int = 1):
    @tl.design(device=device)
    def join_then_forward(A: tl.Tensor[(T * E,), tl.i32], C: tl.Tensor[(T * 2 * E,), tl.i32]):
        src = tl.fifo(tl.Tile[(E,), tl.i32], depth=depth, name="src")
        left = tl.fifo(tl.Tile[(E,), tl.i32], depth=depth, name="left")
        right = tl.fifo(tl.Tile[(E,), tl.i32], depth=depth, name="right")
        joined = tl.fifo(tl.Tile[(2 * E,), tl.i32], depth=depth, name="joined")
        out = tl.fifo(tl.Tile[(2 * E,), tl.i32], depth=depth, name="out")
        for name, dst, m, b in (("l", left, 2, -7), ("r", right, -3, 5)):
            @tl.core(name=name)
            def body(dst=dst, m=m, b=b):
                for _ in tl.range(T):
                    x, y = src.acquire(), dst.acquire()
                    affine(x, y, m, b)
                    src.release()
                    dst.release()
        tl.join([left, right], joined, name="join_lr")
        tl.dma(joined, out, name="pass_on")
        tl.dma(A, src)
        tl.dma(out, C)

    return join_then_forward


def expected(a: np.ndarray) -> np.ndarray:
    x = a.reshape(T, E)
    return np.concatenate([x * 2 - 7, x * -3 + 5], axis=1).reshape(-1)


@pytest.mark.parametrize("strategy", ["greedy", "ilp"])
@pytest.mark.parametrize(("device", "depth"), [("npu2", 1), ("npu1", 2)])
def test_a_fifo_between_two_links_on_one_memtile(strategy, device, depth):
    d = chained(device, depth)
    p = tl.plan(d, strategy=strategy)
    fp = p.fifos["joined"]
    (sink,) = fp.consumers
    assert fp.producer.agent == "link:join_lr" and sink.agent == "link:pass_on"
    # both links on one memtile (its 6 channels a direction hold them): DMA to DMA, on one channel number
    assert fp.producer.tile == sink.tile and fp.producer.channel == sink.channel
    a = (np.arange(T * E) * 5 % 97 - 40).astype(np.int32)
    assert np.array_equal(tl.simulate(p, A=a).outputs["C"], expected(a))
    # the emitted module runs to numpy's result (its switch connections checked against the device's rules)
    interp = load_interp()
    got = interp.run_physical(tl.emit_mlir(p, level="physical", as_module=True), d, {"A": a}, seed=0)
    assert np.array_equal(got["C"], expected(a))
    with pytest.raises(tl.PlanError, match="fifo 'joined' leaves link 'join_lr' and enters link 'pass_on': "
                                           "mlir-aie's objectfifo lowering takes a fifo in at most one link"):
        tl.emit_mlir(p, level="objectfifo")


def test_mlir_aie_accepts_the_physical_level_and_refuses_two_links_on_one_objectfifo(monkeypatch):
    """mlir-aie's flow accepts the physical module; its own objectfifo lowering refuses the fifo in two links
    (the objectfifo text written as the emitter would without the check)."""
    _mlir_aie_takes_physical_refuses_objectfifo(tl.plan(chained(), strategy="greedy"), "_check_chained_links",
                                                "objectfifo cannot be in more than one ObjectFifoLinkOp", monkeypatch)


def _mlir_aie_takes_physical_refuses_objectfifo(p, check: str, refusal: str, monkeypatch,  # noqa: ANN001
                                                 instead=lambda _: None) -> None:  # noqa: ANN001
    """mlir-aie's flow accepts ``p``'s physical module and refuses its objectfifo module, written as the emitter
    writes it with its own ``check`` replaced by ``instead`` (switched off), with ``refusal``."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import spatial, vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    vendor.compile_text(tl.emit_mlir(p, level="physical"), "physical")
    monkeypatch.setattr(spatial, check, instead)
    text = tl.emit_mlir(p, level="objectfifo")
    with pytest.raises(vendor.VendorFlowError, match=refusal):
        vendor.compile_text(text, "objectfifo")


def test_the_plan_verifier_checks_the_memtile_switch_rule():
    """A plan text whose fifo crosses a memtile DMA to DMA on two channel numbers is refused when parsed, by the
    device's switch rule (not only later by the emitter)."""
    p = tl.plan(chained(), strategy="greedy")
    text = tl.ir.print(p)
    line = "fifo @joined : link @join_lr at (0, 1) ch 1 -> link @pass_on at (0, 1) ch 1"
    assert line in text
    tl.ir.parse(text)
    with pytest.raises(tl.ParseError, match=r"fifo .joined. goes from DMA channel 1 to DMA channel 3 of \(0,1\), "
                                           r"whose switch connects DMA to DMA only on the same channel"):
        tl.ir.parse(text.replace(line, line[:-1] + "3"))


# -- a memtile's BD pools under mlir-aie's own channel numbering ----------------------------------------


def _split_and_join():
    """A 4-way split and a 4-way join of one pipeline copy (two copies, fifos of depth 3), from the fuzz
    generator: the default plan puts a split and a join on one memtile, 48 BDs of its 48."""
    import fuzz_support as fs

    spec = fs.Spec(device="npu2", elem=32, tiles=5, inputs="tiles", outputs="transpose",
                   stages=(fs.Stage("split", ((-3, 20), (1, -5), (1, 18), (-2, -9))),), copies=2)
    return fs, spec, fs.build(spec, [3] * spec.fifos())


@pytest.mark.slow
def test_a_memtile_full_of_bds_is_refused_at_the_objectfifo_level_and_emitted_at_the_physical():
    fs, spec, d = _split_and_join()
    p = tl.plan(d)
    on = {}
    for name, t in p.link_tiles.items():
        on.setdefault(t, []).append(name)
    assert any(len(v) == 2 for v in on.values()), on  # a split and a join share a memtile
    with pytest.raises(tl.PlanError, match=r"memtile \(\d+, 1\): mlir-aie's objectfifo lowering numbers its DMA "
                                           r"channels from 0, and no such numbering keeps its BDs within the 24"):
        tl.emit_mlir(p, level="objectfifo")
    a = fs.inputs_for(spec, 0)
    got = load_interp().run_physical(tl.emit_mlir(p, level="physical", as_module=True), d, {"A": a}, seed=0)
    assert np.array_equal(got["C"], fs.reference(spec, a))


@pytest.mark.slow
def test_mlir_aie_exhausts_the_bds_of_that_memtile_at_the_objectfifo_level(monkeypatch):
    _mlir_aie_takes_physical_refuses_objectfifo(tl.plan(_split_and_join()[2]), "_declaration_order",
                                                "Allocator exhausted available BD IDs", monkeypatch,
                                                lambda plan: list(plan.design.fifos))


def _mixed_depths():
    """A 4-way split (source depth 3) and a 4-way join (depth 2) on one memtile, parts of depths 1 and 2: 40 BDs
    of its 48, but declared in the design's order mlir-aie numbers the split's source and the join's sink
    channel 0 and the parts 1-4, 30 BDs on the even pool of 24."""
    n, rounds = 32, 6

    @tl.kernel
    def inc(a: tl.Tile[(n,), tl.i16], c: tl.Tile[(n,), tl.i16]):
        c[...] = a + 1

    @tl.design(device="npu1")
    def mixed(A: tl.Tensor[(4 * n * rounds,), tl.i16], C: tl.Tensor[(4 * n * rounds,), tl.i16]):
        big = tl.fifo(tl.Tile[(4 * n,), tl.i16], depth=3, name="big")
        bigo = tl.fifo(tl.Tile[(4 * n,), tl.i16], depth=2, name="bigo")
        ins = [tl.fifo(tl.Tile[(n,), tl.i16], depth=(1, 2, 1, 2)[q], name=f"p{q}") for q in range(4)]
        outs = [tl.fifo(tl.Tile[(n,), tl.i16], depth=(1, 2, 1, 1)[q], name=f"o{q}") for q in range(4)]
        tl.split(big, ins)
        for q in range(4):
            @tl.core(name=f"w{q}")
            def _body(a=ins[q], o=outs[q]):
                for _ in tl.range(rounds):
                    x, y = a.acquire(), o.acquire()
                    inc(x, y)
                    a.release()
                    o.release()
        tl.join(outs, bigo)
        tl.dma(A, big)
        tl.dma(bigo, C)

    return mixed


def test_fifos_are_declared_so_that_mlir_aies_own_numbering_keeps_the_bd_pools(monkeypatch):
    """The objectfifo module declares the fifos in an order whose lowest-free numbering keeps both pools: mlir-aie
    accepts it; declared in the design's order, the same module exhausts the even pool."""
    pytest.importorskip("mlir.ir")
    from tilelang.backends.mlir import spatial, vendor

    if vendor.missing_tools_reason():
        pytest.skip(vendor.missing_tools_reason())
    d = _mixed_depths()
    p = tl.plan(d)
    a = np.arange(4 * 32 * 6, dtype=np.int16)
    np.testing.assert_array_equal(tl.simulate(p, A=a).outputs["C"], a + 1)
    vendor.compile_text(tl.emit_mlir(p, level="objectfifo"), "objectfifo")
    monkeypatch.setattr(spatial, "_declaration_order", lambda plan: list(plan.design.fifos))
    with pytest.raises(vendor.VendorFlowError, match="Allocator exhausted available BD IDs"):
        vendor.compile_text(tl.emit_mlir(p, level="objectfifo"), "objectfifo")
