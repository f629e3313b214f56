"""The runtime sequence: what the emitted MLIR pushes and waits for, and that the simulator runs it.

The emitted ``aie.runtime_sequence`` is read back from the MLIR text: each
``dma_memcpy_nd`` (its symbol, BD id, token) and each ``dma_wait``. The checks
hold the text to the hardware's rules as mlir-aie lowers them (a wait is an
``npu.sync`` taking one task-completion token of its channel; AM020: a shim
channel queues four tasks; a BD id is not rewritten while a task may still use
it), and the simulator's run to the text's order: a push after a wait starts
no earlier than the waited transfer completed.
"""

from __future__ import annotations

import re
import warnings
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

import tilelang as tl
from tilelang.backends.mlir import vendor
from tilelang.ir import sequence as seq_mod
from tilelang.ir.design import Acquire, Call, Loop, Port, Release
from tilelang.ir.sequence import Progress, host_end

#: AM020 "Array Interface DMA Memory Mapped AXI4 Master Interface": "queue depth is four tasks per channel".
AM020_TASK_QUEUE = 4

OP = re.compile(r'"aiex\.npu\.(dma_memcpy_nd|dma_wait)"\((%\w+)?\) \{([^}]*)\}')


def commands(text: str) -> list[tuple[str, str, int | None, bool]]:
    """(kind, symbol, BD id, issues a token) of every op of the emitted runtime sequence, in order."""
    body = text[text.index("aie.runtime_sequence"):]
    out = []
    for kind, _, attrs in OP.findall(body):
        sym = re.search(r"(?:metadata|symbol) = @(\w+)", attrs).group(1)
        bd = re.search(r"\bid = (\d+)", attrs)
        out.append((kind, sym, int(bd.group(1)) if bd else None, "issue_token = true" in attrs))
    return out


def check_rules(text: str, tile_of: dict[str, tuple[int, int]]) -> None:
    """The text's sequence obeys the hardware: every wait takes a token its channel issued, at most four
    tasks are outstanding per channel, and no BD id of a shim is rewritten while a task may use it."""
    pending: dict[str, list[tuple[int, bool]]] = {}  # symbol -> (bd, token) of its tasks not known complete
    in_use: dict[tuple[tuple[int, int], int], str] = {}  # (shim, bd) -> symbol of the task holding it
    for kind, sym, bd, token in commands(text):
        tasks = pending.setdefault(sym, [])
        if kind == "dma_wait":
            k = next((i for i, (_, t) in enumerate(tasks) if t), None)
            assert k is not None, f"dma_wait on {sym} with no token outstanding"
            for b, _ in tasks[: k + 1]:
                del in_use[(tile_of[sym], b)]
            del tasks[: k + 1]
            continue
        assert (tile_of[sym], bd) not in in_use, f"BD {bd} of shim {tile_of[sym]} rewritten while in use"
        in_use[(tile_of[sym], bd)] = sym
        tasks.append((bd, token))
        assert len(tasks) <= AM020_TASK_QUEUE, f"{len(tasks)} tasks outstanding on {sym}"
    assert not any(t for tasks in pending.values() for _, t in tasks), "a token no wait takes"


def chunked_add(n: int = 8192, tile: int = 256, parts: int = 8, device: str = "npu1"):
    """C = A + B on one core, each tensor moved in ``parts`` separate moves, all of A's first, then B's,
    then C's: moves on different fifos proceed concurrently (API.md), so this must run."""
    step = n // parts

    @tl.kernel
    def add(a: tl.Tile[(tile,), tl.i32], b: tl.Tile[(tile,), tl.i32], c: tl.Tile[(tile,), tl.i32]):
        c[...] = a + b

    @tl.design(device=device)
    def chunked_add(A: tl.Tensor[(n,), tl.i32], B: tl.Tensor[(n,), tl.i32], C: tl.Tensor[(n,), tl.i32]):
        in_a = tl.fifo(tl.Tile[(tile,), tl.i32], name="in_a")
        in_b = tl.fifo(tl.Tile[(tile,), tl.i32], name="in_b")
        out_c = tl.fifo(tl.Tile[(tile,), tl.i32], name="out_c")

        @tl.core(name="adder")
        def adder():
            for _ in tl.range(n // tile):
                a, b, c = in_a.acquire(), in_b.acquire(), out_c.acquire()
                add(a, b, c)
                in_a.release()
                in_b.release()
                out_c.release()

        for src, fifo in ((A, in_a), (B, in_b)):
            for i in range(parts):
                tl.dma(src, fifo, pattern=tl.pattern(i * step, (step,), (1,)))
        for i in range(parts):
            tl.dma(out_c, C, pattern=tl.pattern(i * step, (step,), (1,)))

    return chunked_add


def phased_add(n: int = 8192, tile: int = 256, parts: int = 8):
    """A core that takes all of A, then all of B, each moved in ``parts`` moves: the fifos do not advance
    together. Pushed as if they did (a quarter into A with a quarter into B), the sequence would wait for
    B's first move, which the core takes only after all of A, before pushing A's last moves."""
    step, count = n // parts, n // tile

    @tl.kernel
    def copy(a: tl.Tile[(tile,), tl.i32], c: tl.Tile[(tile,), tl.i32]):
        c[...] = a

    @tl.design(device="npu1")
    def phased(A: tl.Tensor[(n,), tl.i32], B: tl.Tensor[(n,), tl.i32], C: tl.Tensor[(2 * n,), tl.i32]):
        in_a = tl.fifo(tl.Tile[(tile,), tl.i32], name="in_a")
        in_b = tl.fifo(tl.Tile[(tile,), tl.i32], name="in_b")
        out_c = tl.fifo(tl.Tile[(tile,), tl.i32], name="out_c")

        @tl.core(name="copier")
        def copier():
            for src in (in_a, in_b):
                for _ in tl.range(count):
                    a, c = src.acquire(), out_c.acquire()
                    copy(a, c)
                    src.release()
                    out_c.release()

        for src, fifo in ((A, in_a), (B, in_b)):
            for i in range(parts):
                tl.dma(src, fifo, pattern=tl.pattern(i * step, (step,), (1,)))
        tl.dma(out_c, C)

    return phased


def _tiles(plan) -> dict[str, tuple[int, int]]:
    """Symbol of the emitted text -> its shim tile (objectfifo level: the fifo's name)."""
    out = {}
    for d in plan.design.dmas:
        for f in d.fifos:
            out[f] = host_end(plan, f, d.to_device).tile
    return out


def test_program_order_would_hang_and_the_sequence_does_not(monkeypatch):
    d = chunked_add()
    p = tl.plan(d, strategy="greedy")
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-1000, 1000, 8192).astype(np.int32) for _ in range(2))
    res = tl.simulate(p, A=a, B=b)
    np.testing.assert_array_equal(res.outputs["C"], a + b)
    text = tl.emit_mlir(p)
    check_rules(text, _tiles(p))
    # pushed in program order (all of A, then B), the fifth A push waits for A's first move, which
    # cannot complete before B arrives: the simulator runs the sequence it is given, and says so
    _reports_a_hang(p, monkeypatch, lambda transfers, design=None: list(transfers))


def _reports_a_hang(plan, monkeypatch, order) -> None:
    """Pushed in ``order`` instead, the plan's sequence hangs, and the simulator names the wait."""
    monkeypatch.setattr(seq_mod, "issue_order", order)
    with pytest.raises(tl.SimulationError, match="runtime sequence: dma_wait for dma"):
        tl.simulate(plan, mode="timing")


def _designs():
    L = tl.library
    return {
        "matmul_npu1_1024_64": lambda: L.matmul(1024, 1024, 1024, in_dtype=tl.bf16, out_dtype=tl.bf16,
                                                device="npu1", tiling={"m": 64, "k": 64, "n": 64}),
        "matmul_npu2_256_32": lambda: L.matmul(256, 256, 256, device="npu2", tiling={"m": 32, "k": 32, "n": 32}),
        "matmul_one_core": lambda: L.matmul(256, 256, 256, in_dtype=tl.i16, out_dtype=tl.i32, device="npu1",
                                            cores=1, tiling={"m": 32, "k": 32, "n": 32}),
        "softmax_npu2": lambda: L.softmax(512, 256, device="npu2", cores=(4, 8)),
        # each fifo's last drains end within its depth (they never hold the core up): pushed out of their
        # fifo's order, the sequence hung
        "softmax_npu1_deep": lambda: L.softmax(1024, 512, device="npu1", cores=(2, 4), rows_per_tile=4, depth=4),
        "chunked_add": chunked_add,
        "phased_add": phased_add,
    }


TILE = re.compile(r'(%\w+) = "aie\.tile"\(\) \{col = (\d+) : i32, row = (\d+) : i32\}')
ALLOC = re.compile(r'"aie\.shim_dma_allocation"\((%\w+)\) \{[^}]*sym_name = "(\w+)"')


def _physical_tiles(text: str) -> dict[str, tuple[int, int]]:
    """Shim allocation symbol -> its tile, read from the physical level's text."""
    tiles = {v: (int(c), int(r)) for v, c, r in TILE.findall(text)}
    return {sym: tiles[v] for v, sym in ALLOC.findall(text)}


@pytest.mark.parametrize("name", list(_designs()))
def test_emitted_sequence_obeys_the_hardware_and_the_simulator_follows_it(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = tl.plan(_designs()[name](), strategy="greedy")
    physical = tl.emit_mlir(p, level="physical")
    check_rules(physical, _physical_tiles(physical))
    text = tl.emit_mlir(p)
    check_rules(text, _tiles(p))
    # each fifo's moves are pushed in program order (a channel runs its tasks in the order pushed)
    pushed: dict[str, list[int]] = {}
    for attrs in re.findall(r'"aiex\.npu\.dma_memcpy_nd"\(%\w+\) \{([^}]*)\}', text[text.index("aie.runtime_sequence"):]):
        sym = re.search(r"metadata = @(\w+)", attrs).group(1)
        offsets = re.search(r"static_offsets = array<i64: ([^>]*)>", attrs).group(1)
        pushed.setdefault(sym, []).append(int(offsets.split(",")[-1]))
    for f in pushed:
        assert pushed[f] == [d.pattern.offset for d in p.design.dmas if f in d.fifos], f
    res = tl.simulate(p, mode="timing")
    # each push after a wait begins no earlier than the waited move completed
    names, tokens = _push_names(p, text)
    waited_done, i = 0, 0
    for kind, sym, _, _ in commands(text):
        if kind == "dma_wait":
            waited_done = max(waited_done, res.stats.moves[tokens[sym].pop(0)]["completed"])
            continue
        assert res.stats.moves[names[i]]["pushed"] >= waited_done, (names[i], res.stats.moves[names[i]], waited_done)
        i += 1


def _push_names(plan, text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The move each ``dma_memcpy_nd`` of the (objectfifo level) text belongs to, each fifo's moves taken in
    program order; and per symbol, the moves whose pushes issue a token, in order."""
    queue: dict[str, list[str]] = {}
    for d in plan.design.dmas:
        for f in d.fifos:
            queue.setdefault(f, []).append(d.name)
    names: list[str] = []
    tokens: dict[str, list[str]] = {}
    for kind, sym, _, token in commands(text):
        if kind != "dma_memcpy_nd":
            continue
        names.append(queue[sym].pop(0))
        if token:
            tokens.setdefault(sym, []).append(names[-1])
    return names, tokens


@pytest.mark.skipif(bool(vendor.missing_tools_reason()), reason=vendor.missing_tools_reason())
@pytest.mark.parametrize("level", ["objectfifo", "physical"])
def test_mlir_aie_lowers_the_chunked_sequence(level):
    """mlir-aie's own passes (aie-assign-runtime-sequence-bd-ids, aie-dma-to-npu) take the sequence to NPU
    instructions."""
    vendor.compile_plan(tl.plan(chunked_add(), strategy="greedy"), level=level)


def test_a_core_taking_its_fifos_one_after_another_runs(monkeypatch):
    p = tl.plan(phased_add(), strategy="greedy")
    rng = np.random.default_rng(5)
    a, b = (rng.integers(-1000, 1000, 8192).astype(np.int32) for _ in range(2))
    np.testing.assert_array_equal(tl.simulate(p, A=a, B=b).outputs["C"], np.concatenate([a, b]))
    check_rules(tl.emit_mlir(p), _tiles(p))
    # pushed by how far each fifo's host traffic has gone instead, the sequence hangs, and the simulator says so
    _reports_a_hang(p, monkeypatch, _equal_pace)


def _equal_pace(transfers, design=None):
    """Every fifo pushed at the same pace: a transfer goes as far into the sequence as it starts into its
    fifo's host traffic (program order where they tie)."""
    total, done, keyed = {}, {}, []
    for t in transfers:
        total[t.fifo] = total.get(t.fifo, 0) + t.dma.pattern.numel
    for t in transfers:
        start = done.get(t.fifo, 0)
        done[t.fifo] = start + t.dma.pattern.numel
        keyed.append((Fraction(start, total[t.fifo]), t.order, t))
    return [t for *_, t in sorted(keyed, key=lambda k: k[:2])]


def _unrolled(body, fifo):
    """Brute force: run ``body`` step by step, loops unrolled, IRON's hold rule (an acquire of n holds n,
    taking only those not held); the step of every element of ``fifo`` newly held, and the step count."""
    steps, held, taken = 0, 0, []

    def run(stmts):
        nonlocal steps, held
        for st in stmts:
            if isinstance(st, Loop):
                for _ in range(st.start, st.stop, st.step):
                    run(st.body)
                continue
            if isinstance(st, Acquire) and st.fifo == fifo and st.n > held:
                taken.extend([steps] * (st.n - held))
                held = st.n
            elif isinstance(st, Release) and st.fifo == fifo:
                held = max(0, held - st.n)
            steps += 1

    run(body)
    return taken, steps


def _bodies():
    C, P = Port.CONSUME, Port.PRODUCE
    call = Call("k", ())
    window = (Acquire("a", C, 3), call, Release("a", C, 1))
    gemm_tile = (Acquire("c", P), Loop(0, 5, 1, (Acquire("a", C), Acquire("b", C), call, Release("a", C),
                                                  Release("b", C))), Release("c", P))
    return {
        "sliding window": (Loop(0, 37, 1, window), Release("a", C, 2)),
        "gemm": (Loop(0, 7, 1, gemm_tile),),
        "phases": (Loop(0, 9, 1, (Acquire("a", C), call, Release("a", C))),
                   Loop(0, 4, 2, (Acquire("b", C, 2), call, Release("b", C, 2)))),
        "alternating holds": (Loop(0, 11, 1, (Acquire("a", C, 2), call, Release("a", C, 1), Acquire("a", C, 1),
                                              call, Release("a", C, 1))), Release("a", C, 1)),
        "nested": (Loop(0, 3, 1, (Loop(0, 4, 1, (Acquire("a", C), Release("a", C))), call,
                                  Loop(1, 7, 3, (Acquire("a", C, 2), call, Release("a", C, 2))))),),
    }


@pytest.mark.parametrize("name", list(_bodies()))
def test_progress_finds_every_element_where_the_unrolled_program_takes_it(name):
    body = _bodies()[name]
    progress = Progress(SimpleNamespace(cores=(), links=()))
    core = SimpleNamespace(name="worker", body=body)
    for fifo in ("a", "b", "c"):
        taken, total = _unrolled(body, fifo)
        for k, step in enumerate(taken):
            assert progress._at(core, fifo, k) == Fraction(step, total), (fifo, k)
        assert progress._at(core, fifo, len(taken)) is None


def test_the_trace_shows_the_command_processor_pushing_and_waiting():
    p = tl.plan(_designs()["matmul_one_core"](), strategy="greedy")
    res = tl.simulate(p, mode="timing", trace=True)
    spans = res.trace.spans("runtime sequence")
    pushes = [s for s in spans if s[1].startswith("push ")]
    waits = [s for s in spans if s[1].startswith("dma_wait ")]
    assert len(pushes) == len(p.design.dmas) and waits
    for (_, _, start, dur), (_, _, nxt, _) in zip(spans, spans[1:], strict=False):
        assert start + dur <= nxt  # one command at a time
    for _, name, start, dur in waits:
        assert start + dur == res.stats.moves[name.split(" ", 1)[1]]["completed"]
    # the statistics and the explanation sum the waits that held a later push back
    last_push = max(s[2] for s in pushes)
    held = [s for s in waits if s[2] < last_push]
    q = res.stats.sequence
    assert (q["pushes"], q["push_cycles"]) == (len(pushes), sum(s[3] for s in pushes))
    assert (q["waits"], q["wait_cycles"]) == (len(held), sum(s[3] for s in held)) and q["waits"] > 0
    assert res.stats.sequence_line() in res.explain().text()


def _phased_design(phases, parts, tile, depth, pipeline=False):
    """One core running ``phases`` in order, each ``(kind, count)``: copy ``count`` tiles of A (kind "a") or of B
    ("b") to C, or add ``count`` pairs ("ab"); A, B and C each moved in ``parts[x]`` moves of whole tiles. With
    ``pipeline``, A reaches it through a first core that copies every tile of A on."""
    na = sum(c for k, c in phases if "a" in k)
    nb = sum(c for k, c in phases if "b" in k)
    nc = sum(c for _, c in phases)
    t = tl.Tile[(tile,), tl.i32]

    @tl.kernel
    def copy(a: t, c: t):
        c[...] = a

    @tl.kernel
    def add(a: t, b: t, c: t):
        c[...] = a + b

    @tl.design(device="npu1")
    def phased(A: tl.Tensor[(na * tile,), tl.i32], B: tl.Tensor[(nb * tile,), tl.i32],
               C: tl.Tensor[(nc * tile,), tl.i32]):
        fa = tl.fifo(t, depth=depth, name="fa")
        fb = tl.fifo(t, depth=depth, name="fb")
        fc = tl.fifo(t, depth=depth, name="fc")
        fm = tl.fifo(t, depth=depth, name="fm") if pipeline else fa

        if pipeline:
            @tl.core(name="first")
            def first():
                for _ in tl.range(na):
                    x, y = fa.acquire(), fm.acquire()
                    copy(x, y)
                    fa.release()
                    fm.release()

        @tl.core(name="worker")
        def worker():
            for kind, count in phases:
                for _ in tl.range(count):
                    ins = [f for f, k in ((fm, "a"), (fb, "b")) if k in kind]
                    held = [f.acquire() for f in ins]
                    c = fc.acquire()
                    (add if len(held) == 2 else copy)(*held, c)
                    for f in ins:
                        f.release()
                    fc.release()

        for src, fifo, n, k in ((A, fa, na, parts["a"]), (B, fb, nb, parts["b"]), (fc, C, nc, parts["c"])):
            cuts = [n * i // k for i in range(k + 1)]
            for lo, hi in zip(cuts, cuts[1:], strict=False):
                if hi > lo:
                    tl.dma(src, fifo, pattern=tl.pattern(lo * tile, ((hi - lo) * tile,), (1,)))

    return phased, na, nb


@pytest.mark.parametrize("seed, pipeline", [(s, False) for s in range(12)] + [(s, True) for s in (5, 16, 29, 36, 0, 1)])
def test_any_order_of_taking_fifos_runs_and_equals_numpy(seed, pipeline):
    """Random phase orders (A alone, B alone, both), move counts and depths: every design runs to the
    numbers numpy computes, so the sequence never waits for data a later push would bring. Through a
    pipeline, the first core's moves go at the second core's pace (seeds 5, 16, 29 and 36 hung when each
    core was taken to run at its own)."""
    rng = np.random.default_rng(seed)
    phases = [(str(rng.choice(["a", "b", "ab"])), int(rng.integers(1, 40))) for _ in range(int(rng.integers(1, 5)))]
    if not any("a" in k for k, _ in phases):
        phases.append(("a", 1))
    if not any("b" in k for k, _ in phases):
        phases.append(("b", 1))
    parts = {x: int(rng.integers(1, 13)) for x in "abc"}
    tile, depth = 64, int(rng.integers(1, 3))
    d, na, nb = _phased_design(phases, parts, tile, depth, pipeline)
    a = rng.integers(-100, 100, na * tile).astype(np.int32)
    b = rng.integers(-100, 100, nb * tile).astype(np.int32)
    want, ia, ib = [], 0, 0
    for kind, count in phases:
        for _ in range(count):
            x = a[ia * tile:(ia + 1) * tile] if "a" in kind else 0
            y = b[ib * tile:(ib + 1) * tile] if "b" in kind else 0
            ia, ib = ia + ("a" in kind), ib + ("b" in kind)
            want.append(np.zeros(tile, np.int32) + x + y)
    p = tl.plan(d, strategy="greedy")
    np.testing.assert_array_equal(tl.simulate(p, A=a, B=b).outputs["C"], np.concatenate(want))
    check_rules(tl.emit_mlir(p), _tiles(p))
