"""Generated designs with a numpy reference, IR-text mutants, and running a case in a child under a hard timeout.

Used by tests/test_fuzz.py (a few dozen cases per run) and benchmarks/fuzz_bench.py (thousands).

A generated design is a pipeline over one i32 stream: host moves read tensor ``A`` with an access
pattern into a fifo, stages transform the stream of fifo elements (a core computing ``a * m + b``, a
memtile forward, a split to several cores and a join back, a broadcast to two cores whose results a
third core adds or a memtile joins), and host moves write the result into ``C`` with another pattern.
:class:`Spec` is the drawn shape; :func:`build` traces it with given fifo depths and core tiles, and
:func:`reference` computes ``C`` in numpy from the same spec, without the design.
"""

from __future__ import annotations

import contextlib
import gc
import io
import multiprocessing
import os
import random
import re
import signal
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

import tilelang as tl
from tilelang.errors import TileLangError

# -- generated designs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One pipeline stage. ``kind``: "core" (fns[0]), "forward", "split" (one fn per part, then a join),
    "bcast_add" (two fns, a third core adds), "bcast_join" (two fns, joined side by side)."""

    kind: str
    fns: tuple[tuple[int, int], ...] = ()  # (m, b) of each core's a * m + b


@dataclass(frozen=True)
class Spec:
    device: str
    elem: int  # elements per fifo element at the input
    tiles: int  # fifo elements per pass over A
    inputs: str  # "tiles", "transpose", "halves", "repeat"
    outputs: str  # "tiles", "transpose", "halves"
    stages: tuple[Stage, ...] = field(default_factory=tuple)
    lanes: int = 1  # 2: even and odd fifo elements take separate fifos, host moves and cores
    copies: int = 1  # 2: a host move broadcasts A to two copies of the pipeline, each writing its half of C

    @property
    def n(self) -> int:
        return self.elem * self.tiles

    @property
    def count(self) -> int:
        """Fifo elements the stream carries."""
        return self.tiles * (2 if self.inputs == "repeat" else 1)

    def width(self) -> int:
        """Elements per fifo element at the output."""
        w = self.elem
        for s in self.stages:
            if s.kind == "bcast_join":
                w *= 2
        return w

    def fifos(self) -> int:
        """Fifos the design declares (one depth each)."""
        k = 1
        for s in self.stages:
            k += {"core": 1, "forward": 1, "transpose": 1, "split": 1 + 2 * len(s.fns), "bcast_add": 3,
                  "bcast_join": 3}[s.kind]
        return k * self.lanes * self.copies

    def cores(self) -> int:
        per = {"core": 1, "forward": 0, "transpose": 0, "bcast_add": 3, "bcast_join": 2}
        return self.lanes * self.copies * sum(per.get(s.kind, len(s.fns)) for s in self.stages)


_FN = st.tuples(st.integers(-3, 3), st.integers(-20, 20))


@st.composite
def stages(draw: st.DrawFn, elem: int) -> Stage:
    kind = draw(st.sampled_from(["core", "core", "forward", "transpose", "split", "bcast_add", "bcast_join"]))
    if kind == "core":
        return Stage(kind, (draw(_FN),))
    if kind == "split":
        parts = draw(st.sampled_from([p for p in (2, 4) if elem % p == 0]))
        return Stage(kind, tuple(draw(_FN) for _ in range(parts)))
    if kind in ("bcast_add", "bcast_join"):
        return Stage(kind, (draw(_FN), draw(_FN)))
    return Stage(kind)


@st.composite
def specs(draw: st.DrawFn, devices: tuple[str, ...] = ("npu1", "npu2")) -> Spec:
    """A small pipeline: at most 3 stages, at most 8 cores, elements of 8 to 32 i32."""
    elem = draw(st.sampled_from([8, 16, 32]))
    tiles = draw(st.integers(1, 6))
    inputs = draw(st.sampled_from(["tiles", "transpose", "halves", "repeat"] if tiles % 2 == 0
                                  else ["tiles", "transpose", "repeat"]))
    count = tiles * (2 if inputs == "repeat" else 1)
    outputs = draw(st.sampled_from(["tiles", "transpose", "halves"] if count % 2 == 0 else ["tiles", "transpose"]))
    lanes = 2 if tiles % 2 == 0 and inputs != "halves" and outputs != "halves" and draw(st.booleans()) else 1
    copies = draw(st.sampled_from([1, 1, 2])) if lanes == 1 else 1
    drawn: list[Stage] = []
    for _ in range(draw(st.integers(1, 3))):
        s = draw(stages(elem))
        trial = Spec("", 0, 0, "", "", (*drawn, s), lanes, copies)
        if sum(x.kind == "bcast_join" for x in (*drawn, s)) > 1 or trial.cores() > 8:
            continue
        drawn.append(s)
    if not drawn:
        drawn.append(Stage("core", ((1, 1),)))
    return Spec(draw(st.sampled_from(devices)), elem, tiles, inputs, outputs, tuple(drawn), lanes, copies)


def relayout(w: int):  # noqa: ANN201 - an AccessPattern
    """The pattern a "transpose" stage's memtile forward reads an element with: (r, c) row-major to (c, r)."""
    r = 1 << ((w.bit_length() - 1) // 2)  # w is a power of two: r = c or r = c / 2
    c = w // r
    return tl.pattern(0, (c, r), (1, c))


def compute_tiles(device: str) -> list[tuple[int, int]]:
    dev = tl.device(device)
    return sorted(dev.tiles("compute"))


def _in_patterns(spec: Spec, lane: int | None = None) -> list:
    """The host moves into the first fifo (of one lane: its rows ``lane::2`` of the stream)."""
    n, e, t = spec.n, spec.elem, spec.tiles
    if lane is not None and spec.lanes == 2:
        p = tl.pattern(lane, (t // 2, e), (2, t)) if spec.inputs == "transpose" else tl.pattern(lane * e, (t // 2, e), (2 * e, 1))
        return [p.repeat(2) if spec.inputs == "repeat" else p]
    if spec.inputs == "transpose":  # A seen as (elem, tiles): walk it column by column
        return [tl.pattern(0, (t, e), (1, t))]
    if spec.inputs == "halves":  # two moves on the same fifo, completing in order
        return [tl.pattern(0, (n // 2,), (1,)), tl.pattern(n // 2, (n // 2,), (1,))]
    if spec.inputs == "repeat":
        return [tl.pattern(0, (n,), (1,)).repeat(2)]
    return [tl.pattern(0, (n,), (1,))]


def _out_patterns(spec: Spec, lane: int | None = None, copy: int = 0) -> list:
    """The host moves out of the last fifo (of one lane: rows ``lane::2`` of the output; of copy ``copy``:
    into its part of C)."""
    from dataclasses import replace

    shift = copy * spec.count * spec.width()
    return [replace(p, offset=p.offset + shift) for p in _out_patterns_of_one(spec, lane)]


def _out_patterns_of_one(spec: Spec, lane: int | None) -> list:
    k, w = spec.count, spec.width()
    if lane is not None and spec.lanes == 2:
        return [tl.pattern(lane, (k // 2, w), (2, k)) if spec.outputs == "transpose"
                else tl.pattern(lane * w, (k // 2, w), (2 * w, 1))]
    if spec.outputs == "transpose":
        return [tl.pattern(0, (k, w), (1, k))]
    if spec.outputs == "halves":
        half = k * w // 2
        return [tl.pattern(0, (half,), (1,)), tl.pattern(half, (half,), (1,))]
    return [tl.pattern(0, (k * w,), (1,))]


def reference(spec: Spec, a: np.ndarray) -> np.ndarray:
    """``C`` computed in numpy from the spec alone."""
    idx = np.concatenate([np.tile(p.indices(), p.repeat_count) for p in _in_patterns(spec)])
    x = a[idx].reshape(spec.count, spec.elem).astype(np.int64)

    def f(v: np.ndarray, fn: tuple[int, int]) -> np.ndarray:
        return v * fn[0] + fn[1]

    for s in spec.stages:
        if s.kind == "core":
            x = f(x, s.fns[0])
        elif s.kind == "split":
            parts = np.split(x, len(s.fns), axis=1)
            x = np.concatenate([f(p, fn) for p, fn in zip(parts, s.fns, strict=True)], axis=1)
        elif s.kind == "bcast_add":
            x = f(x, s.fns[0]) + f(x, s.fns[1])
        elif s.kind == "bcast_join":
            x = np.concatenate([f(x, s.fns[0]), f(x, s.fns[1])], axis=1)
        elif s.kind == "transpose":
            x = x[:, relayout(x.shape[1]).indices()]
        x = ((x + 2**31) % 2**32 - 2**31).astype(np.int64)  # i32 wraps
    c = np.zeros(spec.count * spec.width(), dtype=np.int64)
    out_idx = np.concatenate([p.indices() for p in _out_patterns(spec)])
    c[out_idx] = x.reshape(-1)
    return np.tile(c, spec.copies).astype(np.int32)


def build(spec: Spec, depths: list[int], pins: list[tuple[int, int]] | None = None):  # noqa: ANN201 - a Design
    """Trace ``spec`` with fifo depths ``depths`` (one per fifo, in :meth:`Spec.fifos` order) and cores
    pinned to ``pins`` in order (None: the planner places them)."""
    depths = list(depths)
    pins = list(pins) if pins is not None else None
    w0, count = spec.elem, spec.count // spec.lanes  # fifo elements through each lane
    kernels: dict[int, tuple] = {}

    def kernels_of(w: int) -> tuple:
        if w not in kernels:

            def affine(a: tl.Tile[(w,), tl.i32], c: tl.Tile[(w,), tl.i32], m: tl.i32, b: tl.i32):
                c[...] = a * m + b

            def add(a: tl.Tile[(w,), tl.i32], b: tl.Tile[(w,), tl.i32], c: tl.Tile[(w,), tl.i32]):
                c[...] = a + b

            affine.__name__, add.__name__ = f"affine{w}", f"add{w}"  # one kernel name per signature
            kernels[w] = (tl.kernel(affine), tl.kernel(add))
        return kernels[w]

    @tl.design(device=spec.device)
    def fuzz(A: tl.Tensor[(spec.n,), tl.i32], C: tl.Tensor[(spec.copies * spec.count * spec.width(),), tl.i32]):
        names = iter(range(1000))

        def fifo(w: int):  # noqa: ANN202
            return tl.fifo(tl.Tile[(w,), tl.i32], depth=depths.pop(0), name=f"f{next(names)}")

        def unary(src, dst, w: int, fn: tuple[int, int]) -> None:  # noqa: ANN001
            affine = kernels_of(w)[0]

            @tl.core(name=f"c{next(names)}", tile=pins.pop(0) if pins is not None else None)
            def body():
                for _ in tl.range(count):
                    a = src.acquire()
                    c = dst.acquire()
                    affine(a, c, fn[0], fn[1])
                    src.release()
                    dst.release()

        def binary(x, y, dst, w: int) -> None:  # noqa: ANN001
            add = kernels_of(w)[1]

            @tl.core(name=f"c{next(names)}", tile=pins.pop(0) if pins is not None else None)
            def body():
                for _ in tl.range(count):
                    a = x.acquire()
                    b = y.acquire()
                    c = dst.acquire()
                    add(a, b, c)
                    x.release()
                    y.release()
                    dst.release()

        def pipeline(lane: int, cur, copy: int = 0) -> None:  # noqa: ANN001
            w = w0
            for s in spec.stages:
                if s.kind == "core":
                    nxt = fifo(w)
                    unary(cur, nxt, w, s.fns[0])
                elif s.kind == "forward":
                    nxt = fifo(w)
                    tl.dma(cur, nxt)
                elif s.kind == "transpose":
                    nxt = fifo(w)
                    tl.dma(cur, nxt, pattern=relayout(w))
                elif s.kind == "split":
                    part = w // len(s.fns)
                    ins = [fifo(part) for _ in s.fns]
                    outs = [fifo(part) for _ in s.fns]
                    offsets = [i * part for i in range(len(s.fns))]
                    tl.split(cur, ins, offsets=offsets)
                    for i, fn in enumerate(s.fns):
                        unary(ins[i], outs[i], part, fn)
                    nxt = fifo(w)
                    tl.join(outs, nxt, offsets=offsets)
                elif s.kind == "bcast_add":
                    y1, y2, nxt = fifo(w), fifo(w), fifo(w)
                    unary(cur, y1, w, s.fns[0])
                    unary(cur, y2, w, s.fns[1])
                    binary(y1, y2, nxt, w)
                else:  # bcast_join
                    y1, y2, nxt = fifo(w), fifo(w), fifo(2 * w)
                    unary(cur, y1, w, s.fns[0])
                    unary(cur, y2, w, s.fns[1])
                    tl.join([y1, y2], nxt, offsets=[0, w])
                    w *= 2
                cur = nxt
            for p in _out_patterns(spec, lane, copy):
                tl.dma(cur, C, pattern=p)

        for lane in range(spec.lanes):
            firsts = [fifo(w0) for _ in range(spec.copies)]
            for p in _in_patterns(spec, lane):
                tl.dma(A, firsts if spec.copies > 1 else firsts[0], pattern=p)
            for copy, first in enumerate(firsts):
                pipeline(lane, first, copy)

    return fuzz


def inputs_for(spec: Spec, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-1000, 1000, size=spec.n).astype(np.int32)


# -- IR text mutants ---------------------------------------------------------------------------------

#: Replacements for an integer: the edges (0, -1, 1), neighbours, and absurd sizes.
HUGE = (2**31, 2**32, 2**63, 10**30, 300_000, 65536)
_INT = re.compile(r"(?<![\w.%@])-?\d+(?![\w.])")
_NAME = re.compile(r"[@%][A-Za-z_][\w]*")


def mutate(text: str, rng: random.Random, edits: int | None = None) -> str:
    """``text`` with 1-3 random edits: an integer changed (to 0, -1, 1, its neighbours, double, or a huge
    value), two names swapped, a name replaced by another, a line dropped or duplicated."""
    for _ in range(edits if edits is not None else rng.randint(1, 3)):
        kind = rng.choices(["int", "swap", "rename", "drop", "dup"], weights=[6, 1, 1, 1, 1])[0]
        if kind == "int":
            hits = list(_INT.finditer(text))
            if not hits:
                continue
            m = rng.choice(hits)
            v = int(m.group())
            new = rng.choice([0, -1, 1, v + 1, v - 1, 2 * v, v // 2, rng.choice(HUGE), -rng.choice(HUGE)])
            text = text[: m.start()] + str(new) + text[m.end():]
        elif kind in ("swap", "rename"):
            names = sorted(set(_NAME.findall(text)))
            if len(names) < 2:
                continue
            a, b = rng.sample(names, 2)
            if kind == "swap":
                text = text.replace(a, "\0").replace(b, a).replace("\0", b)
            else:
                hits = [m for m in re.finditer(re.escape(a) + r"\b", text)]
                m = rng.choice(hits)
                text = text[: m.start()] + b + text[m.end():]
        else:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            if kind == "drop":
                del lines[i]
            else:
                lines.insert(i, lines[i])
            text = "\n".join(lines)
    return text


# -- one case through the whole pipeline -------------------------------------------------------------


def zero_inputs(design) -> dict[str, np.ndarray]:  # noqa: ANN001
    rng = np.random.default_rng(0)
    out = {}
    for name in design.inputs:
        t = design.tensors[name]
        if t.dtype.is_int:
            out[name] = rng.integers(-8, 8, size=t.shape).astype(t.dtype.numpy)
        else:
            out[name] = rng.standard_normal(t.shape).astype(np.float32)
    return out


def outputs_agree(a: dict, b: dict) -> bool:
    if set(a) != set(b):
        return False
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=True) for k in a)


def through_pipeline(text: str, emit: bool = True) -> str:
    """Parse, plan (greedy), simulate in both modes and emit ``text``.

    A parsed plan is used as it is (after :func:`plan_violations` finds nothing wrong with it).

    Returns:
        "ok"; "mode-dependent: ..." when the two modes' outputs differ or only one raises; "accepted-invalid: ..." when a
        parsed plan has a violation the parser let through.

    Raises:
        Whatever the pipeline raises (the caller sorts tilelang errors from others).
    """
    import simulator

    obj = tl.ir.parse(text)
    if isinstance(obj, tl.Plan):
        wrong = plan_violations(obj)
        if wrong:
            return "accepted-invalid: " + wrong[0]
        plan, design = obj, obj.design
    else:
        design = obj
        plan = tl.plan(design, strategy="greedy", time_limit=10)
    arrays = zero_inputs(design)
    runs = {}
    for mode in ("timed", "functional"):
        try:
            with np.errstate(all="ignore"):
                runs[mode] = simulator.simulate(plan, mode=mode, trace=False, **arrays)
        except TileLangError as e:
            runs[mode] = e
    errors = {m: type(r).__name__ for m, r in runs.items() if isinstance(r, TileLangError)}
    if len(errors) == 1:
        (mode, name), = errors.items()
        return f"mode-dependent: only {mode} raised {name}: {str(runs[mode])[:200]}"
    if errors:
        raise runs["timed"]
    if not outputs_agree(runs["timed"].outputs, runs["functional"].outputs):
        return "mode-dependent: outputs differ"
    if emit:
        from tilelang.backends.mlir import emit_mlir

        emit_mlir(plan, level="objectfifo")
        emit_mlir(plan, level="physical")
    return "ok"


def _child(conn, fn, args) -> None:  # noqa: ANN001
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        result = ("ok", fn(*args))
    except TileLangError as e:
        result = ("error", type(e).__name__, str(e)[:300])
    except BaseException as e:  # noqa: BLE001 - the point is to catch what should not escape
        result = ("raw", type(e).__name__, traceback.format_exc()[-3000:])
    try:
        conn.send(result)
    finally:
        conn.close()
        os._exit(0)


def bounded(fn, args: tuple, timeout: float) -> tuple:  # noqa: ANN001
    """``fn(*args)`` in a forked child killed after ``timeout`` seconds.

    Returns:
        ("ok", value), ("error", TileLangError subclass name, message), ("raw", exception name,
        traceback) or ("hang", seconds).
    """
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    # The child must never finalise what it inherits: an MLIR context of the parent's (an emitted module)
    # joins worker threads the child does not have, and waits forever (tilelang/plan/solve.py does the same).
    gc.freeze()
    try:
        proc.start()
    finally:
        gc.unfreeze()
    send.close()
    try:
        if recv.poll(timeout):
            try:
                result = recv.recv()
            except EOFError:
                result = ("raw", "ChildDied", f"exit code {proc.exitcode}")
        else:
            result = ("hang", timeout)
    finally:
        if proc.is_alive():
            os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        recv.close()
    return result


# -- an independent check of a plan's decisions --------------------------------------------------------

#: mlir-aie's aie.core default stack_size, at address 0 of a core's memory (AIE_FACTS "aie.core").
CORE_STACK_BYTES = 1024


def _local_buffers_apart_in_time(plan) -> set[frozenset]:
    """Pairs of one core's local buffers that may share bytes: tilelang's lifetimes say no call has both
    resident (those lifetimes are checked against an unrolled execution in tests/test_local_buffers.py)."""
    from tilelang.ir.liveness import liveness

    kernels = {k.name: k for k in plan.design.kernels}
    out: set[frozenset] = set()
    for c in plan.design.cores:
        names = sorted(b.name for b in c.buffers)
        if len(names) < 2:
            continue
        meet = liveness(c, kernels).interference()
        out.update(frozenset((x, y)) for i, x in enumerate(names) for y in names[i + 1 :] if (x, y) not in meet)
    return out


def plan_violations(plan) -> list[str]:  # noqa: ANN001, C901 - one list of independent checks
    """What is wrong with ``plan``'s decisions, checked from the device data alone (not by the verifier).

    Cores on compute tiles, links on memtiles, host ends on NoC shims, fifo ends where their agents are,
    channels within the tile's DMA channels and not shared by two fifos in one direction, buffers
    inside their tile's memory (above the stack where a core runs) and apart, routes made of device links, connected
    from the producer to every consumer, and within each link's capacity.
    """
    dev = plan.device
    bad: list[str] = []

    def tile_ok(t, kind: str, what: str) -> bool:  # noqa: ANN001
        try:
            k = dev.tile_kind(tuple(t))
        except TileLangError:
            bad.append(f"{what} at {t}: off the array")
            return False
        if k != kind:
            bad.append(f"{what} at {t}: a {k} tile, not a {kind} tile")
            return False
        return True

    for core, t in plan.placement.items():
        tile_ok(t, "compute", f"core {core}")
    for link, t in plan.link_tiles.items():
        tile_ok(t, "mem", f"link {link}")
    used: dict[tuple, str] = {}
    for name, f in plan.fifos.items():
        for end, direction in [(f.producer, "mm2s"), *((c, "s2mm") for c in f.consumers)]:
            kind, _, agent = end.agent.partition(":")
            where = {"core": plan.placement, "link": plan.link_tiles}.get(kind, {}).get(agent)
            if kind == "host":
                if tile_ok(end.tile, "shim", f"fifo {name} host end") and not dev.is_noc_shim(tuple(end.tile)):
                    bad.append(f"fifo {name} host end at {end.tile}: not a NoC shim")
            elif where is not None and tuple(where) != tuple(end.tile):
                bad.append(f"fifo {name}: {end.agent} end at {end.tile}, but the agent is at {where}")
            if end.channel is None or f.shared_tile is not None:
                continue
            try:
                n = dev.dma_channels(tuple(end.tile), direction)
            except TileLangError:
                continue  # reported above
            if not 0 <= end.channel < n:
                bad.append(f"fifo {name}: {direction} channel {end.channel} at {end.tile}; the tile has {n}")
            key = (tuple(end.tile), direction, end.channel)
            if used.get(key, name) != name:
                bad.append(f"fifos {used[key]} and {name} share {direction} channel {end.channel} at {end.tile}")
            used[key] = name
    spans: dict[tuple, list] = {}
    core_tiles = {tuple(t) for t in plan.placement.values()}
    for name, b in plan.buffers.items():
        t = tuple(b.tile)
        try:
            mem = dev.memory_bytes(t)
            kind = dev.tile_kind(t)
        except TileLangError:
            bad.append(f"buffer {name} at {t}: off the array")
            continue
        low = CORE_STACK_BYTES if kind == "compute" and t in core_tiles else 0  # a core's stack sits at 0
        if b.size <= 0 or b.offset < low or b.offset + b.size > mem:
            bad.append(f"buffer {name} at {t}: bytes {b.offset}..{b.offset + b.size} outside {low}..{mem}")
        spans.setdefault(t, []).append((b.offset, b.offset + b.size, name))
    may_share = _local_buffers_apart_in_time(plan)
    for t, s in spans.items():
        s.sort()
        for i, (_, hi1, n1) in enumerate(s):
            for lo2, _, n2 in s[i + 1 :]:
                if lo2 >= hi1:
                    break
                if frozenset((n1, n2)) not in may_share:
                    bad.append(f"buffers {n1} and {n2} overlap at {t}")
    links = set(dev.links())
    load: dict[tuple, int] = {}
    for name, r in plan.routes.items():
        reach = {tuple(r.source)}
        edges = [(tuple(a), tuple(b)) for a, b in r.links]
        for e in edges:
            if e not in links:
                bad.append(f"route {name}: {e[0]} -> {e[1]} is not a link of {dev.name}")
            load[e] = load.get(e, 0) + 1
        grew = True
        while grew:
            grew = False
            for a, b in edges:
                if a in reach and b not in reach:
                    reach.add(b)
                    grew = True
        missing = [d for d in r.dests if tuple(d) not in reach]
        if missing:
            bad.append(f"route {name}: {missing} not reached from {r.source}")
    for e, n in load.items():
        if e in links and n > dev.link_capacity(*e):
            bad.append(f"link {e[0]} -> {e[1]}: {n} routes, capacity {dev.link_capacity(*e)}")
    return bad


def check_design(spec: Spec, seed: int) -> tuple[int, list[str]]:
    """Simulate ``spec`` with two sets of fifo depths and a pinned placement, in both modes, against numpy.

    Each variant's design and plan are printed and parsed back first, and the plan must pass
    :func:`plan_violations`. A variant the planner refuses (a tilelang PlanError: a pinned tile or
    depth the device cannot carry) is skipped.

    Returns:
        (variants compared, what was wrong: one line per plan violation, and per mode and variant whose
        output is not numpy's).
    """
    import simulator

    rng = random.Random(seed)
    a = inputs_for(spec, seed)
    want = reference(spec, a)
    tiles = compute_tiles(spec.device)
    variants = [
        ("depths", [rng.randint(1, 4) for _ in range(spec.fifos())], None),
        ("other depths", [rng.randint(1, 4) for _ in range(spec.fifos())], None),
        ("pinned", [rng.randint(1, 4) for _ in range(spec.fifos())], rng.sample(tiles, spec.cores())),
    ]
    checked, problems = 0, []
    for what, depths, pins in variants:
        design = tl.ir.parse(tl.ir.print(build(spec, depths, pins)))
        try:
            plan = tl.ir.parse(tl.ir.print(tl.plan(design, strategy="greedy")))
        except tl.PlanError:
            continue
        problems += [f"planner, {what}: {v}: {spec}" for v in plan_violations(plan)]
        for mode in ("timed", "functional"):
            got = simulator.simulate(plan, A=a, mode=mode, trace=False).outputs["C"]
            if not np.array_equal(got, want):
                wrong = int(np.count_nonzero(got != want))
                problems.append(f"{mode}, {what} (depths {depths}, pins {pins}): {wrong} of {want.size} differ: {spec}")
        checked += 1
    return checked, problems


# -- the examples' designs ------------------------------------------------------------------------------


def example_designs() -> dict[str, object]:
    """The design each script in examples/ builds with ``--small``, without planning or running it.

    Each script's ``main`` hands its design to ``harness.run``; that call is caught here.
    """
    import importlib.util
    import sys
    from pathlib import Path

    examples = Path(__file__).resolve().parent.parent / "examples"
    if str(examples) not in sys.path:
        sys.path.insert(0, str(examples))
    import harness

    found: dict[str, object] = {}
    real = harness.run
    for path in sorted(examples.glob("*.py")):
        if path.stem in ("designs", "harness", "vmul"):
            continue
        name = f"tilelang_fuzz_example_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]

        def catch(label, design, *args, stem=path.stem, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            found[stem if label == stem else f"{stem}:{label}"] = design
            return 0

        harness.run = catch
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # a script may report a kernel check first
                mod.main(["--small", "--strategy", "greedy"])
        finally:
            harness.run = real
    return found


def module_sources() -> list[tuple[str, str, dict]]:
    """(label, module text, kernels by name) of the example scripts' designs as emitted (objectfifo level) and
    of the hand-written modules in tests/data."""
    out = []
    root = Path(__file__).resolve().parent.parent
    for stem, d in example_designs().items():
        try:
            out.append((f"examples/{stem} module", tl.emit_mlir(tl.plan(d, strategy="greedy")),
                        {k.name: k for k in d.kernels}))
        except tl.TileLangError as e:
            print(f"(no module for {stem}: {type(e).__name__})", file=sys.stderr)
    for path in sorted((root / "tests" / "data").glob("*.mlir")):
        out.append((f"tests/data/{path.name}", path.read_text(), {}))
    return out


def through_reader(text: str, kernels: dict) -> str:
    """Read ``text`` with ``tl.read_mlir``, plan it (greedy) and simulate it in timing mode."""
    from tilelang.ir.kernel import ExternKernel

    design = tl.read_mlir(text, kernels=kernels)
    plan = tl.plan(design, strategy="greedy", time_limit=10)
    given = {k.name: 100 for k in design.kernels if isinstance(k, ExternKernel) and k.cycles is None}
    tl.simulate(plan, mode="timing", kernel_cycles=given)
    return "ok"
