"""The plan verifier (tilelang/ir/plan_verify.py): edited plans are refused, naming what is wrong.

A real plan's text or JSON is changed in one place (two buffers overlapped, a
buffer pushed past its memory, a core moved to a shim or a memtile, a route
cut, a channel out of range) and must no longer parse; every planner plan of
the MLIR zoo and of the examples still passes and parses back.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import fields, replace
from pathlib import Path

import pytest
from zoo_support import CASES, planned

import tilelang as tl
from tilelang.devices import Device
from tilelang.errors import ParseError, PlanError
from tilelang.ir.plan import Plan
from tilelang.ir.plan_verify import verify_plan

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import designs  # noqa: E402


@pytest.fixture(scope="module")
def vmul_plan() -> Plan:
    return tl.plan(designs.vector_scalar_mul(), strategy="greedy")


def _buffer_line(text: str, name: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(f"  buffer @{name} "))


def _set_buffer(text: str, name: str, offset: int, bank: int) -> str:
    line = _buffer_line(text, name)
    new = re.sub(r"bank = \d+, offset = \d+", f"bank = {bank}, offset = {offset}", line)
    return text.replace(line, new)


@pytest.mark.parametrize(("name", "device"), CASES)
def test_every_zoo_plan_passes_and_parses_back(name: str, device: str) -> None:
    p = planned(name, device)
    verify_plan(p)
    assert tl.ir.print(tl.ir.parse(tl.ir.print(p))) == tl.ir.print(p)
    assert Plan.from_json(p.to_json()).to_json() == p.to_json()


@pytest.mark.parametrize("make", [
    lambda: designs.vector_scalar_mul(),
    pytest.param(lambda: tl.library.matmul(128, 128, 128), marks=pytest.mark.slow),
])
def test_ilp_plans_pass(make) -> None:
    verify_plan(tl.plan(make()))


def test_overlapping_buffers_are_refused(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    a = vmul_plan.buffers["a_in_worker_0"]
    bad = _set_buffer(text, "a_in_worker_1", a.offset, a.bank)
    with pytest.raises(ParseError, match=r"buffers 'a_in_worker_\d' \[\d+, \d+\) and 'a_in_worker_\d' \[\d+, \d+\) "
                                         r"overlap in the memory of \(0,2\)"):
        tl.ir.parse(bad)


def test_a_buffer_past_its_memory_is_refused(vmul_plan: Plan) -> None:
    dev = vmul_plan.device
    tile = vmul_plan.buffers["c_out_worker_0"].tile
    mem, banks = dev.memory_bytes(tile), dev.memory_banks(tile)
    offset = mem - 16
    bad = _set_buffer(tl.ir.print(vmul_plan), "c_out_worker_0", offset, offset // (mem // banks))
    with pytest.raises(ParseError, match=rf"buffer 'c_out_worker_0' at bytes \[{offset}, {offset + 4096}\) of \(0,2\) "
                                         rf"lies outside its {mem}-byte memory"):
        tl.ir.parse(bad)


def test_a_buffer_in_the_wrong_bank_or_over_the_stack_is_refused(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    b = vmul_plan.buffers["c_out_worker_0"]
    with pytest.raises(ParseError, match=rf"starts in bank {b.bank} .* not bank {(b.bank + 1) % 4}"):
        tl.ir.parse(_set_buffer(text, "c_out_worker_0", b.offset, (b.bank + 1) % 4))
    with pytest.raises(ParseError, match=r"buffer 'c_out_worker_0' at byte 0 of \(0,2\) overlaps the core's stack"):
        tl.ir.parse(_set_buffer(text, "c_out_worker_0", 0, 0))


@pytest.mark.parametrize(("tile", "kind"), [((0, 0), "shim"), ((0, 1), "mem")])
def test_a_core_off_the_compute_tiles_is_refused(vmul_plan: Plan, tile, kind) -> None:
    text = tl.ir.print(vmul_plan)
    bad = text.replace("core @worker at (0, 2)", f"core @worker at ({tile[0]}, {tile[1]})", 1)
    with pytest.raises(ParseError, match=rf"core 'worker' is placed on \({tile[0]},{tile[1]}\), a {kind} tile"):
        tl.ir.parse(bad)


def test_a_broken_route_is_refused(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    line = next(ln for ln in text.splitlines() if ln.startswith("  route @a_in "))
    links = re.search(r"links \[(.*)\]", line)[1].split(", (")
    assert len(links) >= 2
    cut = line.replace(links[-1] if len(links) == 1 else ", (" + links[-1], "")
    with pytest.raises(ParseError, match=r"the route of 'a_in' from \(0,0\) does not reach \(0,2\)"):
        tl.ir.parse(text.replace(line, cut))
    diagonal = line.replace("links [", "links [(0, 0) -> (1, 1), ")
    with pytest.raises(ParseError, match=r"the route of 'a_in' uses \(0,0\)->\(1,1\), which is not a link of npu1"):
        tl.ir.parse(text.replace(line, diagonal))


def test_a_channel_out_of_range_or_taken_twice_is_refused(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    n = vmul_plan.device.dma_channels((0, 2), "s2mm")
    bad = text.replace("-> core @worker at (0, 2) ch 0", f"-> core @worker at (0, 2) ch {n}", 1)
    with pytest.raises(ParseError, match=rf"fifo 'a_in': the S2MM end of core:worker on \(0,2\) uses channel {n}; "
                                         rf"the tile has {n} S2MM channels"):
        tl.ir.parse(bad)


def test_an_overloaded_link_is_refused() -> None:
    # a device whose links have one channel each (the hardware model is the only thing changed)
    p = tl.plan(tl.library.matmul(128, 128, 128), strategy="greedy")
    use: dict = {}
    for r in p.routes.values():
        for lk in r.links:
            use[lk] = use.get(lk, 0) + 1
    busiest = max(sorted(use), key=lambda lk: use[lk])
    assert use[busiest] >= 2

    class OneChannel(Device):
        def link_capacity(self, a, b):  # noqa: ANN001, ANN201
            return min(1, super().link_capacity(a, b))

    dev = p.device
    narrow = OneChannel(**{f.name: getattr(dev, f.name) for f in fields(dev) if f.init})
    bad = replace(p, design=replace(p.design, device=narrow))
    first = min(lk for lk, n in use.items() if n > 1)
    (a, b) = first
    with pytest.raises(PlanError, match=rf"link \({a[0]},{a[1]}\)->\({b[0]},{b[1]}\) carries {use[first]} flows .* has 1 "
                                        r"channels"):
        verify_plan(bad)


def test_a_plan_from_json_is_verified(vmul_plan: Plan) -> None:
    doc = json.loads(vmul_plan.to_json())
    doc["placement"]["worker"] = [0, 0]
    with pytest.raises(PlanError, match=r"core 'worker' is placed on \(0,0\), a shim tile"):
        Plan.from_json(json.dumps(doc))
    doc = json.loads(vmul_plan.to_json())
    del doc["routes"]["a_in"]
    with pytest.raises(PlanError, match="streamed fifo a_in has no route"):
        Plan.from_json(json.dumps(doc))


def _small_fifo_plan(device: str, depth: int) -> Plan:
    """One core between two host fifos of 16 i32 (64 B), ``depth`` deep: a plan right at the BD/lock budget."""

    @tl.kernel
    def inc(a: tl.Tile[(16,), tl.i32], c: tl.Tile[(16,), tl.i32]):
        c[...] = a + 1

    @tl.design(device=device)
    def small(A: tl.Tensor[(256,), tl.i32], C: tl.Tensor[(256,), tl.i32]):
        a_in = tl.fifo(tl.Tile[(16,), tl.i32], depth=depth, name="a_in")
        c_out = tl.fifo(tl.Tile[(16,), tl.i32], depth=depth, name="c_out")

        @tl.core(name="worker")
        def worker():
            for _ in tl.range(16):
                x, y = a_in.acquire(), c_out.acquire()
                inc(x, y)
                a_in.release()
                c_out.release()

        tl.dma(A, a_in)
        tl.dma(c_out, C)

    return tl.plan(small, strategy="greedy")


def _one_deeper(p: Plan, fifo: str) -> str:
    """The plan's text with ``fifo`` one buffer deeper in the design and that buffer placed in free memory."""
    text = tl.ir.print(p)
    depth = p.design.fifo(fifo).depth
    text = text.replace(f"fifo @{fifo} : tile<16xi32> {{depth = {depth}}}", f"fifo @{fifo} : tile<16xi32> {{depth = {depth + 1}}}")
    tile = p.placement["worker"]
    offset = max(b.end for b in p.buffers.values() if b.tile == tile) + 64
    bank = offset // (p.device.memory_bytes(tile) // p.device.memory_banks(tile))
    line = (f"  buffer @{fifo}_worker_{depth} : @{fifo}[{depth}] at ({tile[0]}, {tile[1]}) "
            f"{{bank = {bank}, offset = {offset}, size = 64}}\n")
    return text.replace("  route @", line + "  route @", 1)


def test_a_buffer_set_missing_a_buffer_is_refused(vmul_plan: Plan) -> None:
    text = tl.ir.print(vmul_plan)
    bad = text.replace(_buffer_line(text, "a_in_worker_1") + "\n", "")
    with pytest.raises(ParseError, match=r"fifo 'a_in' \(depth 2\) has buffers \[0\] on \(0,2\); it needs one for each "
                                         r"index 0-1"):
        tl.ir.parse(bad)


def test_buffer_descriptors_over_the_tiles_budget_are_refused() -> None:
    # npu1 compute tile: 16 BDs; a core end's channel cycles one BD per buffer
    bds = tl.device("npu1").buffer_descriptors((0, 2))
    p = _small_fifo_plan("npu1", bds // 2)
    verify_plan(p)
    with pytest.raises(ParseError, match=rf"tile \(0,2\) has {bds} buffer descriptors for BDs 0-{bds - 1}, {bds + 1} "
                                         rf"needed: core:worker S2MM ch0 \(a_in\): {bds // 2 + 1}, core:worker MM2S ch0 "
                                         rf"\(c_out\): {bds // 2}"):
        tl.ir.parse(_one_deeper(p, "a_in"))


def test_locks_over_the_tiles_budget_are_refused() -> None:
    # xcvc1902 (AIE1): binary locks, one per buffer; 16 a tile
    locks = tl.device("xcvc1902").locks((0, 1))
    p = _small_fifo_plan("xcvc1902", locks // 2)
    verify_plan(p)
    tile = p.placement["worker"]
    with pytest.raises(ParseError, match=rf"tile \({tile[0]},{tile[1]}\) has {locks} locks, {locks + 1} needed"):
        tl.ir.parse(_one_deeper(p, "a_in"))


def test_two_links_holding_one_fifo_on_one_memtile_pass() -> None:
    # a split's parts, each forwarded through a memtile that also holds the split's source: the fifo
    # between two links on one memtile has a buffer set for each of them there
    from fuzz_support import Spec, Stage, build

    spec = Spec(device="npu1", elem=16, tiles=2, inputs="transpose", outputs="tiles",
                stages=(Stage(kind="split", fns=((1, -15), (-3, -5))), Stage(kind="transpose", fns=())), lanes=1, copies=2)
    from tilelang.ir.plan_verify import _homes

    p = tl.plan(build(spec, [1] * spec.fifos(), None), strategy="greedy")
    assert any(n == 2 for f in p.fifos for n in _homes(p, f).values())
    verify_plan(p)
    assert tl.ir.print(tl.ir.parse(tl.ir.print(p))) == tl.ir.print(p)


def _edited(plan: Plan, edit) -> str:  # noqa: ANN001 - edit(doc) changes the JSON document in place
    doc = json.loads(plan.to_json())
    edit(doc)
    return json.dumps(doc)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["buffers"]["a_in_worker_0"].update(offset="16384"), r"buffer 'a_in_worker_0': its offset must be an int"),
    (lambda d: d["buffers"]["a_in_worker_0"].update(bank=None), r"its bank must be an int, got None"),
    (lambda d: d["fifos"]["a_in"]["consumers"][0].update(channel=0.5), r"the DMA channel of core:worker must be an int"),
    (lambda d: d["fifos"]["a_in"]["consumers"][0].update(channel=True), r"the DMA channel of core:worker must be an int"),
    (lambda d: d["fifos"]["a_in"]["consumers"][0].update(agent=None), r"an end's agent must be a name"),
    (lambda d: d["placement"].update(worker=[0.0, 2]), r"a tile is \[col, row\] of ints"),
])
def test_numbers_of_another_type_are_refused_not_coerced(vmul_plan: Plan, edit, message) -> None:
    with pytest.raises((ParseError, PlanError), match=message):
        Plan.from_json(_edited(vmul_plan, edit))


def test_a_route_must_be_a_tree_ending_at_its_destinations(vmul_plan: Plan) -> None:
    # a link back to the source made the verifier's channel assignment walk the cycle forever
    back = _edited(vmul_plan, lambda d: d["routes"]["a_in"]["links"].append([[0, 1], [0, 0]]))
    with pytest.raises(PlanError, match=r"the route of 'a_in' enters \(0,0\) again: it returns to its source"):
        Plan.from_json(back)
    # a branch past the destination would stream the fifo into a tile that takes nothing
    stray = _edited(vmul_plan, lambda d: d["routes"]["a_in"]["links"].append([[0, 2], [0, 3]]))
    with pytest.raises(PlanError, match=r"the route of 'a_in' ends at \(0,3\), which is not one of its destinations"):
        Plan.from_json(stray)


def test_buffers_must_hold_their_element_be_aligned_and_named_as_the_emitter_finds_them(vmul_plan: Plan) -> None:
    def small(d: dict) -> None:
        d["buffers"]["a_in_worker_0"]["size"] = 4
    with pytest.raises(PlanError, match=r"buffer 'a_in_worker_0' has 4 B; fifo 'a_in''s element needs 4096 B"):
        Plan.from_json(_edited(vmul_plan, small))

    def unaligned(d: dict) -> None:
        d["buffers"]["a_in_worker_0"]["offset"] += 4
    with pytest.raises(PlanError, match=r"at byte \d+ of \(0,2\) is not 16-byte aligned"):
        Plan.from_json(_edited(vmul_plan, unaligned))

    def swapped(d: dict) -> None:
        b = d["buffers"]
        b["a_in_worker_0"]["index"], b["a_in_worker_1"]["index"] = 1, 0
    with pytest.raises(PlanError, match=r"buffer 'a_in_worker_\d' of fifo 'a_in' has index \d; its name must end in"):
        Plan.from_json(_edited(vmul_plan, swapped))

    def renamed(d: dict) -> None:
        d["buffers"]["a_in_other_0"] = d["buffers"].pop("a_in_worker_0")
    with pytest.raises(PlanError, match=r"they must be named \['a_in_worker_0', 'a_in_worker_1'\]"):
        Plan.from_json(_edited(vmul_plan, renamed))
