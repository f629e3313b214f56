"""A functional interpreter of physical-level modules: the emitted IR, run.

It executes what the module says and nothing the plan says: cores run their
``scf``/``arith`` code, ``aie.use_lock`` and ``func.call`` (kernels by their
numpy semantics); every ``aie.dma_start`` chain runs its BDs (locks, offsets,
lengths, dimensions); streams go where the ``aie.switchbox``/``aie.shim_mux``
connections send them; the runtime sequence (NPU) or a host driving each AIE1
shim channel's lock moves the tensors. PLIO streams (AIE1) come from and go to
the PL side, which no module holds: the caller gives it (``pl_side``, e.g.
:func:`pl_side_of` a plan), as a testbench gives each PLIO port its data file,
and the streams enter and leave at the PL shims' South ports the module
connects. Processes are generators scheduled
round robin; if none can progress before all are done, that is a deadlock.

Lock semantics: AIE2 ``AcquireGreaterEqual v`` waits for value >= v and takes
v, ``Release v`` adds v; AIE1 ``Acquire v`` waits for an unheld lock of value
v and holds it, ``Release v`` sets v and frees it.
"""

from __future__ import annotations

import re
from collections import deque

import numpy as np
from mlir import ir

from tilelang.ir import semantics
from tilelang.ir.kernel import ExternKernel

BUNDLES = {0: "Core", 1: "DMA", 2: "FIFO", 3: "South", 4: "West", 5: "North", 6: "East"}
STEP = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}
OPPOSITE = {"North": "South", "South": "North", "East": "West", "West": "East"}


class Deadlock(Exception):
    pass


def _cast_int(v: int, t: object) -> int:
    """``arith.index_cast`` to ``t``: an integer type keeps the low bits (two's complement), index keeps all."""
    try:
        w = ir.IntegerType(t).width
    except ValueError:  # index
        return v
    v &= (1 << w) - 1
    return v - (1 << w) if v >= 1 << (w - 1) else v


def _attr(op: object, key: str) -> object:
    a = op.attributes[key]
    return a.value if hasattr(a, "value") else a


class Machine:
    """The state of one run: buffers, locks, streams, processes."""

    def __init__(self, module: object, design: object, inputs: dict[str, np.ndarray], seed: int = 0,
                 pl_side: dict[tuple, list[tuple[str, np.ndarray]]] | None = None) -> None:
        self.pl_side = pl_side or {}
        self.rng = np.random.default_rng(seed)
        self.design = design
        self.ops = [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations]
        self.env: dict[object, object] = {}
        self.tile_of: dict[object, tuple[int, int]] = {}
        self.locks: dict[object, list] = {}  # lock value -> [value, held, aie1]
        self.aie1 = False
        self.tensors = {t.name: np.zeros(t.shape, t.dtype.numpy) for t in design.params}
        for k, v in inputs.items():
            self.tensors[k][...] = v
        self.queues: dict[tuple, deque] = {}
        self.fanout: dict[tuple, list[tuple]] = {}
        self.procs: list = []
        self.spawned: list = []
        self.alloc: dict[str, tuple] = {}
        self.channel_tasks: dict[tuple, deque] = {}
        self.channel_done: dict[tuple, int] = {}
        self.cascade_to: dict[tuple, tuple] = {}  # aie.cascade_flow: source tile -> destination tile
        self.cascade_in: dict[tuple, deque] = {}  # words waiting at a core's cascade input (raw bytes)

    # -- setup ---------------------------------------------------------------------------

    def setup(self) -> None:
        for o in self.ops:
            n = o.name
            if n == "aie.tile":
                self.tile_of[o.results[0]] = (_attr(o, "col"), _attr(o, "row"))
            elif n == "aie.buffer":
                t = ir.MemRefType(o.results[0].type)
                self.env[o.results[0]] = np.zeros(list(t.shape), _np_dtype(t.element_type))
            elif n == "aie.external_buffer":
                self.env[o.results[0]] = self.tensors[str(_attr(o, "sym_name"))]
            elif n == "aie.lock":
                self.locks[o.results[0]] = [_attr(o, "init"), False]
            elif n == "aie.cascade_flow":
                self.cascade_to[self.tile_of[o.operands[0]]] = self.tile_of[o.operands[1]]
            elif n == "aie.shim_dma_allocation":
                d = "s2mm" if _attr(o, "channel_dir") == 0 else "mm2s"
                self.alloc[str(_attr(o, "sym_name"))] = (self.tile_of[o.operands[0]], d, _attr(o, "channel_index"))
        self.aie1 = self.design.device.arch.name == "aie1"
        self.cols = self.design.device.cols
        self._routes()
        for o in self.ops:
            if o.name == "aie.core":
                self.procs.append(self._block(o.regions[0].blocks[0], {"tile": self.tile_of[o.operands[0]]}))
            elif o.name in ("aie.mem", "aie.memtile_dma", "aie.shim_dma"):
                tile = self.tile_of[o.operands[0]]
                for b in o.regions[0].blocks:
                    first = next(iter(b.operations)).operation
                    if first.name == "aie.dma_start":
                        self.procs.append(self._channel(tile, first))
            elif o.name == "aie.runtime_sequence" and not self.aie1:
                self.procs.append(self._sequence(o))
        if self.aie1:
            self.procs.append(self._aie1_host())
        for (tile, direction, ch), moves in sorted(self.pl_side.items()):
            if direction == "in":
                self.procs.append(self._pl_source((tile, "plio_in", ch), moves))
            else:
                self.procs.append(self._pl_sink((tile, "plio_out", ch), moves))

    def _routes(self) -> None:
        conns: dict[tuple, list] = {}
        for o in self.ops:
            if o.name in ("aie.switchbox", "aie.shim_mux"):
                tile = self.tile_of[o.operands[0]]
                for c in o.regions[0].blocks[0].operations:
                    c = c.operation
                    if c.name == "aie.connect":
                        src = (BUNDLES[_attr(c, "source_bundle")], _attr(c, "source_channel"))
                        dst = (BUNDLES[_attr(c, "dest_bundle")], _attr(c, "dest_channel"))
                        conns.setdefault((tile, o.name), []).append((src, dst))
        # Every MM2S source: a DMA port of a switchbox, or a shim DMA through its mux.
        for (tile, kind), cs in conns.items():
            for src, dst in cs:
                if kind == "aie.shim_mux" and src[0] == "DMA":
                    self.fanout[(tile, "mm2s", src[1])] = self._follow(conns, tile, ("South", dst[1]))
                elif kind == "aie.shim_mux" and src[0] == "South" and self.design.device.is_pl_shim(tile):
                    # a PLIO stream from the PL side, through the mux on its own port number
                    self.fanout[(tile, "plio_in", src[1])] = self._follow(conns, tile, ("South", dst[1]))
                elif kind == "aie.switchbox" and src[0] == "DMA":
                    self.fanout[(tile, "mm2s", src[1])] = self._follow(conns, tile, src)
                elif (kind == "aie.switchbox" and src[0] == "South" and self.design.device.is_pl_shim(tile)
                      and self.design.device.family != "aie1"):
                    # AIE-ML: a PL shim's switch takes the PLIO stream on its South port (no mux setting)
                    self.fanout[(tile, "plio_in", src[1])] = self._follow(conns, tile, src)
        for dests in self.fanout.values():
            for d in dests:
                self.queues.setdefault(d, deque())

    def _follow(self, conns: dict, tile: tuple, port: tuple) -> list[tuple]:
        out, todo = [], [(tile, port)]
        while todo:
            t, p = todo.pop()
            for src, dst in conns.get((t, "aie.switchbox"), []):
                if src != p:
                    continue
                shim = self.design.device.tile_kind(t) == "shim"
                if dst[0] == "DMA":
                    out.append((t, "s2mm", dst[1]))
                elif dst[0] == "South" and shim and self.design.device.is_pl_shim(t):
                    out.append((t, "plio_out", dst[1]))  # to the PL side
                elif dst[0] == "South" and shim:
                    for msrc, mdst in conns.get((t, "aie.shim_mux"), []):
                        if msrc == ("North", dst[1]) and mdst[0] == "DMA":
                            out.append((t, "s2mm", mdst[1]))
                else:
                    nxt = (t[0] + STEP[dst[0]][0], t[1] + STEP[dst[0]][1])
                    todo.append((nxt, (OPPOSITE[dst[0]], dst[1])))
        return out

    # -- processes -----------------------------------------------------------------------

    def _lock(self, op: object):  # noqa: ANN202 - a generator
        lock = self.locks[op.operands[0]]
        action, value = _attr(op, "action"), _attr(op, "value")
        if action == 1:  # Release
            if self.aie1:
                lock[0], lock[1] = value, False
            else:
                lock[0] += value
        elif action == 2:  # AcquireGreaterEqual
            while lock[0] < value:
                yield
            lock[0] -= value
        else:  # AIE1 Acquire
            while lock[1] or lock[0] != value:
                yield
            lock[1] = True
        yield  # let the others run: every interleaving must give the same result

    def _block(self, block: object, env: dict):  # noqa: ANN202 - a generator returning yielded values
        for op in block.operations:
            op = op.operation
            n = op.name
            if n == "arith.constant":
                env[op.results[0]] = _attr(op, "value")
            elif n in ("arith.addi", "arith.muli", "arith.remui"):
                a, b = (env[v] for v in op.operands)
                env[op.results[0]] = a + b if n == "arith.addi" else a * b if n == "arith.muli" else a % b
            elif n == "arith.index_cast":
                env[op.results[0]] = _cast_int(env[op.operands[0]], op.results[0].type)
            elif n == "scf.for":
                lb, ub, step = (env[v] for v in op.operands[:3])
                body = op.regions[0].blocks[0]
                for iv in range(lb, ub, step):
                    env[body.arguments[0]] = iv
                    yield from self._block(body, env)
            elif n == "scf.index_switch":
                idx, cases = env[op.operands[0]], list(op.attributes["cases"])
                region = op.regions[1 + cases.index(idx)] if idx in cases else op.regions[0]
                vals = yield from self._block(region.blocks[0], env)
                for r, v in zip(op.results, vals, strict=True):
                    env[r] = v
            elif n == "memref.view":  # a typed view of a byte buffer (packed local buffers): the same bytes
                src, shift = env.get(op.operands[0], self.env.get(op.operands[0])), env[op.operands[1]]
                t = ir.MemRefType(op.results[0].type)
                dt = _np_dtype(t.element_type)
                nbytes = int(np.prod(t.shape)) * dt.itemsize
                env[op.results[0]] = src.reshape(-1).view(np.uint8)[shift : shift + nbytes].view(dt).reshape(t.shape)
            elif n in _VECTOR_OPS or n in ("aie.put_cascade", "aie.get_cascade"):
                yield from self._vector(op, env)
            elif n == "aie.use_lock":
                yield from self._lock(op)
            elif n == "func.call":
                self._call(op, env)
            elif n == "scf.yield":
                return [env.get(v, self.env.get(v)) for v in op.operands]
            elif n == "aie.end":
                return []
            else:
                raise NotImplementedError(n)
        return []

    def _value(self, v: object, env: dict) -> object:
        return env[v] if v in env else self.env[v]

    def _vector(self, op: object, env: dict):  # noqa: ANN202 - a generator
        """Vector loads and stores of a flat view, bit casts, and cascade words (kept as raw bytes).

        A cascade word goes from a core's tile to the tile its ``aie.cascade_flow`` names; on AIE1, which
        has no such op, along the fixed chain (mlir-aie tutorial-8: odd rows west to east, even rows east
        to west, a row's last core to the one above).
        """
        n, res = op.name, (op.results[0] if len(op.results) else None)
        if n == "memref.collapse_shape":
            env[res] = self._value(op.operands[0], env).reshape(-1)
        elif n == "vector.load":
            base, at = self._value(op.operands[0], env), env[op.operands[1]]
            lanes = ir.VectorType(res.type).shape[0]
            env[res] = base.reshape(-1)[at : at + lanes].copy()
        elif n == "vector.store":
            val, base, at = env[op.operands[0]], self._value(op.operands[1], env), env[op.operands[2]]
            flat = base.reshape(-1)
            assert np.shares_memory(flat, base)
            flat[at : at + len(val)] = val
        elif n in ("vector.bitcast", "vector.extract", "vector.broadcast"):
            env[res] = _as_type(np.ascontiguousarray(env[op.operands[0]]).view(np.uint8), res.type)
        elif n == "aie.put_cascade":
            src = env["tile"]
            dst = self.cascade_to.get(src) if not self.aie1 else _aie1_next(src, self.cols)
            self.cascade_in.setdefault(dst, deque()).append(np.ascontiguousarray(env[op.operands[0]]).view(np.uint8))
        else:  # aie.get_cascade
            q = self.cascade_in.setdefault(env["tile"], deque())
            while not q:
                yield
            env[res] = _as_type(q.popleft(), res.type)

    def _call(self, op: object, env: dict) -> None:
        kernel = self.design.kernel(str(_attr(op, "callee")))
        args = [env[v] if v in env else self.env[v] for v in op.operands]
        if isinstance(kernel, ExternKernel):
            kernel.reference(*args)
            return
        params = {}
        for p, a in zip(kernel.params, args, strict=True):
            params[p.name] = a if p.is_tile else np.asarray(a, dtype=p.type.numpy)
        semantics.run(kernel, params)

    def _walk(self, bd: object, buf: np.ndarray) -> np.ndarray:
        offset, length = _attr(bd, "offset"), _attr(bd, "len")
        if "dimensions" not in bd.attributes:
            return np.arange(offset, offset + length)
        dims = re.findall(r"size = (\d+), stride = (\d+)", str(bd.attributes["dimensions"]))
        idx = np.full((), offset, dtype=np.int64)
        for size, stride in dims:
            idx = idx[..., None] + np.arange(int(size)) * int(stride)
        return idx.reshape(-1)

    def _channel(self, tile: tuple, start: object):  # noqa: ANN202 - a generator
        direction = "s2mm" if _attr(start, "channel_dir") == 0 else "mm2s"
        key = (tile, direction, _attr(start, "channel_index"))
        block = start.successors[0]
        while True:
            ops = [o.operation for o in block.operations]
            if ops[0].name == "aie.end":
                return
            for o in ops:
                if o.name == "aie.use_lock":
                    yield from self._lock(o)
                elif o.name == "aie.dma_bd":
                    buf = self.env[o.operands[0]].reshape(-1)
                    idx = self._walk(o, buf)
                    if direction == "mm2s":
                        for d in self.fanout[key]:
                            self.queues[d].extend(buf[idx].tolist())
                    else:
                        q = self.queues.setdefault(key, deque())
                        while len(q) < len(idx):
                            yield
                        buf[idx] = [q.popleft() for _ in range(len(idx))]
            block = ops[-1].successors[0]

    def _sequence(self, seq: object):  # noqa: ANN202 - a generator
        block = seq.regions[0].blocks[0]
        tensors = {block.arguments[i]: self.tensors[t.name] for i, t in enumerate(self.design.params)}
        issued: dict[tuple, int] = {}
        for o in block.operations:
            o = o.operation
            if o.name == "aiex.npu.dma_memcpy_nd":
                ch = self.alloc[str(_attr(o, "metadata"))]
                idx = np.full((), list(o.attributes["static_offsets"])[3], dtype=np.int64)
                for n, s in zip(list(o.attributes["static_sizes"]), list(o.attributes["static_strides"]), strict=True):
                    idx = idx[..., None] + np.arange(n) * s
                self.channel_tasks.setdefault(ch, deque()).append((tensors[o.operands[0]], idx.reshape(-1)))
                issued[ch] = issued.get(ch, 0) + 1
                if ch not in self.channel_done:
                    self.channel_done[ch] = 0
                    self.spawned.append(self._host_channel(ch))
            elif o.name == "aiex.npu.dma_wait":
                ch = self.alloc[str(_attr(o, "symbol"))]
                while self.channel_done[ch] < issued[ch]:
                    yield

    def _host_channel(self, ch: tuple):  # noqa: ANN202 - a generator
        tasks = self.channel_tasks[ch]
        while True:
            while not tasks:
                yield
            tensor, idx = tasks.popleft()
            flat = tensor.reshape(-1)
            if ch[1] == "mm2s":
                for d in self.fanout[ch]:
                    self.queues[d].extend(flat[idx].tolist())
            else:
                q = self.queues.setdefault(ch, deque())
                while len(q) < len(idx):
                    yield
                flat[idx] = [q.popleft() for _ in range(len(idx))]
            self.channel_done[ch] += 1

    def _pl_source(self, key: tuple, moves: list[tuple[str, np.ndarray]]):  # noqa: ANN202 - a generator
        """The PL side of a PLIO input: each move's elements in walk order onto the stream."""
        if key not in self.fanout:
            raise Deadlock(f"the module routes nothing from the PLIO port {key}")
        for tensor, idx in moves:
            values = self.tensors[tensor].reshape(-1)[idx].tolist()
            for d in self.fanout[key]:
                self.queues[d].extend(values)
            yield

    def _pl_sink(self, key: tuple, moves: list[tuple[str, np.ndarray]]):  # noqa: ANN202 - a generator
        """The PL side of a PLIO output: each move's elements off the stream, into the tensor."""
        q = self.queues.setdefault(key, deque())
        for tensor, idx in moves:
            while len(q) < len(idx):
                yield
            self.tensors[tensor].reshape(-1)[idx] = [q.popleft() for _ in range(len(idx))]

    def _aie1_host(self):  # noqa: ANN202 - a generator
        """Drive every AIE1 shim channel's lock: one move per BD, in order, channels concurrently."""
        chains = []
        for o in self.ops:
            if o.name == "aie.shim_dma":
                for b in o.regions[0].blocks:
                    ops = [x.operation for x in b.operations]
                    if ops[0].name == "aie.dma_start":
                        first = ops[0].successors[0]
                        lock = next(
                            x.operation for x in first.operations if x.operation.name == "aie.use_lock"
                        ).operands[0]
                        n, blk = 0, first
                        while [x.operation for x in blk.operations][0].name != "aie.end":
                            n += 1
                            blk = [x.operation for x in blk.operations][-1].successors[0]
                        chains.append([self.locks[lock], n])
        while any(n for _, n in chains):
            for c in chains:
                lock, n = c
                if n and lock[0] == 0 and not lock[1]:
                    lock[0] = 1  # start the next move
                    c[1] = n - 1
            yield
        while any(lock[0] or lock[1] for lock, _ in chains):
            yield

    # -- run -------------------------------------------------------------------------------

    def run(self, max_rounds: int = 200000) -> dict[str, np.ndarray]:
        """Run until every core and the host are done; the tensors after.

        Raises:
            Deadlock: no process can progress.
        """
        self.setup()
        alive = list(self.procs)
        for _ in range(max_rounds):
            progressed = False
            order = list(alive)
            self.rng.shuffle(order)
            for p in order:
                before = _snapshot(self)
                try:
                    next(p)
                except StopIteration:
                    alive.remove(p)
                    progressed = True
                    continue
                progressed = progressed or before != _snapshot(self)
            alive += self.spawned
            self.spawned.clear()
            if all(_is_daemon(p) for p in alive):
                return self.tensors
            if not progressed:
                raise Deadlock(f"{sum(not _is_daemon(p) for p in alive)} processes blocked")
        raise Deadlock("no end after many rounds")


def _is_daemon(p: object) -> bool:
    """DMA chains and host channels run forever; the run ends when the rest are done."""
    return p.gi_code.co_name in ("_channel", "_host_channel")


def _snapshot(m: Machine) -> tuple:
    return (
        tuple(tuple(v) for v in m.locks.values()),
        tuple(len(q) for q in m.queues.values()),
        tuple(m.channel_done.values()),
        tuple(len(t) for t in m.channel_tasks.values()),
        tuple(len(q) for q in m.cascade_in.values()),
    )


_VECTOR_OPS = ("memref.collapse_shape", "vector.load", "vector.store", "vector.bitcast", "vector.extract",
               "vector.broadcast")


def _as_type(raw: np.ndarray, t: object) -> np.ndarray:
    """Raw bytes as a value of type ``t``: a vector of a numpy dtype, else (an iN numpy lacks) the bytes."""
    elem = ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t
    if isinstance(elem, ir.IntegerType) and ir.IntegerType(elem).width not in (8, 16, 32):
        return raw
    return raw.view(_np_dtype(elem))


def _aie1_next(tile: tuple, cols: int) -> tuple:
    c, r = tile
    east = r % 2 == 1
    last = cols - 1 if east else 0
    return (c, r + 1) if c == last else (c + 1 if east else c - 1, r)


def _np_dtype(t: object) -> np.dtype:
    import ml_dtypes

    if isinstance(t, ir.IntegerType):
        return np.dtype({8: np.int8, 16: np.int16, 32: np.int32}[t.width])
    if isinstance(t, ir.BF16Type):
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(np.float32)


def pl_side_of(plan: object) -> dict[tuple, list[tuple[str, np.ndarray]]]:
    """The PL side of a plan's PLIO moves: ``(PL shim, "in" | "out", PLIO channel) -> [(tensor, element
    offsets in walk order, repeats expanded)]`` in the design's order of moves (what a testbench's data
    files would hold per PLIO port)."""
    out: dict[tuple, list[tuple[str, np.ndarray]]] = {}
    for m in plan.design.dmas:
        if not m.plio:
            continue
        idx = np.tile(m.pattern.indices(), m.pattern.repeat_count)
        if m.src.kind.value == "tensor":
            for dst in m.dsts:
                end = plan.fifos[dst.name].producer
                out.setdefault((end.tile, "in", end.channel), []).append((m.src.name, idx))
        else:
            end = next(e for e in plan.fifos[m.src.name].consumers if e.agent == "host")
            for dst in m.dsts:
                out.setdefault((end.tile, "out", end.channel), []).append((dst.name, idx))
    return out


def run_physical(module: object, design: object, inputs: dict[str, np.ndarray], seed: int = 0,
                 pl_side: dict[tuple, list[tuple[str, np.ndarray]]] | None = None) -> dict[str, np.ndarray]:
    """Execute a physical-level module on ``inputs`` (tensor name -> array); the tensors afterwards.

    ``seed`` picks the order processes are scheduled in each round; ``pl_side`` drives and drains the
    PLIO streams (:func:`pl_side_of`).
    """
    return Machine(module, design, inputs, seed, pl_side).run()
