"""The plan verifier: is every decision of a Plan legal on its device?

The planner makes legal plans by construction; a plan read back from text
(``tl.ir.parse``) or JSON (``Plan.from_json``) may have been edited, so those
run :func:`verify_plan` before handing it on to the simulator or the emitter.
It reads the device model only (``tilelang.devices``), never the planner:

- completeness: every core and link placed, every fifo planned with the
  design's ends, every streamed fifo routed, no plan entry for what the
  design does not have;
- placement: cores on compute tiles (their pins honoured, one a tile), links
  on memtiles, host ends on NoC shims, every end on its agent's tile;
- carriage: a shared fifo joins two cores that both reach its tile's memory
  and uses no channel; a streamed end has a DMA channel of its tile in its
  direction (``Device.dma_channels``), no two ends of a tile and direction on
  one channel;
- types: tiles are pairs of ints, channels ints (or None), buffer banks,
  offsets, sizes and indexes ints, names strings;
- memory: each buffer on a tile its fifo lives on, within the tile's memory,
  above the core stack on a tile that runs a core (``devices.abi.STACK_BYTES``),
  at an offset aligned to ``devices.abi.BUFFER_ALIGN``, holding its fifo's
  element, named for its fifo, end and index as the emitter looks it up,
  its bank the one its offset starts in, no two buffers of a tile overlapping
  (except two local buffers of one core whose lifetimes never meet,
  ``tilelang/ir/liveness.py``), every local buffer on its core's tile,
  and every buffer set complete (one buffer per index below the fifo's depth on
  each tile that holds the fifo);
- budgets: the BDs of the channels drawing from each BD pool
  (``Device.bd_pool``) and the locks of each tile (``Device.locks``), counted by
  the one rule planner and emitter share (``tilelang/ir/descriptors.py``);
- routes: from the producer's tile to exactly the consumers' tiles, over the
  device's links (``Device.links``), a tree (no tile entered twice, none the
  source) whose every leaf is a destination, every link reached from the
  source and every destination reached, and no link carrying more flows than
  it has channels (``Device.link_capacity``).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from tilelang.devices import Device
from tilelang.devices.abi import BUFFER_ALIGN, STACK_BYTES
from tilelang.errors import PlanError
from tilelang.ir.cascade import check_placement
from tilelang.ir.descriptors import end_bds, host_end_locks, part_count, set_locks, whole_fifo
from tilelang.ir.liveness import liveness
from tilelang.ir.plan import FifoEnd, Plan, agent_name
from tilelang.ir.stream_channels import assign_channels
from tilelang.ir.verify import HOST, fifo_ends

Coord = tuple[int, int]
MM2S, S2MM = "mm2s", "s2mm"


def verify_plan(plan: Plan) -> None:
    """Check every decision of ``plan`` against its design and device (see the module docstring).

    Raises:
        PlanError: naming the decision, what is wrong and the limit it breaks.
    """
    _types(plan)
    _complete(plan)
    _placement(plan)
    bad = check_placement(plan.design, plan.placement)
    if bad is not None:
        raise PlanError(bad)
    _carriage(plan)
    _buffers(plan)
    _budgets(plan)
    _routes(plan)


def _t(tile: Coord) -> str:
    return f"({tile[0]},{tile[1]})"


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _types(plan: Plan) -> None:
    """Every number of the plan an int and every tile a pair of ints (an edited plan may hold "3", 0.5, None)."""

    def tile(t: object, what: str) -> None:
        if not (isinstance(t, tuple) and len(t) == 2 and all(_is_int(v) for v in t)):
            raise PlanError(f"{what}: a tile is a pair of ints (column, row), got {t!r}")

    def integer(x: object, what: str) -> None:
        if not _is_int(x):
            raise PlanError(f"{what} must be an int, got {x!r}")

    for core, t in plan.placement.items():
        tile(t, f"core {core!r}")
    for link, t in plan.link_tiles.items():
        tile(t, f"link {link!r}")
    for name, fp in plan.fifos.items():
        if fp.shared_tile is not None:
            tile(fp.shared_tile, f"fifo {name!r}'s shared tile")
        for e in (fp.producer, *fp.consumers):
            if not isinstance(e.agent, str):
                raise PlanError(f"fifo {name!r}: an end's agent must be a name such as 'core:worker', got {e.agent!r}")
            tile(e.tile, f"fifo {name!r}: the end of {e.agent}")
            if e.channel is not None:
                integer(e.channel, f"fifo {name!r}: the DMA channel of {e.agent}")
    for name, b in plan.buffers.items():
        tile(b.tile, f"buffer {name!r}")
        for field in ("bank", "offset", "size", "index"):
            integer(getattr(b, field), f"buffer {name!r}: its {field}")
        if not isinstance(b.fifo, str):
            raise PlanError(f"buffer {name!r}: its fifo must be a name (or \"\" for a core's tl.buffer), got {b.fifo!r}")
    for name, r in plan.routes.items():
        tile(r.source, f"the route of {name!r}: its source")
        for d in r.dests:
            tile(d, f"the route of {name!r}: a destination")
        for lk in r.links:
            if not (isinstance(lk, tuple) and len(lk) == 2):
                raise PlanError(f"the route of {name!r}: a link is a pair of tiles, got {lk!r}")
            tile(lk[0], f"the route of {name!r}: a link's start")
            tile(lk[1], f"the route of {name!r}: a link's end")


def _complete(plan: Plan) -> None:
    d = plan.design
    ends = fifo_ends(d)
    want = {
        "core": {c.name for c in d.cores},
        "link": {ln.name for ln in d.links},
        "fifo": set(ends),
    }
    have = {"core": set(plan.placement), "link": set(plan.link_tiles), "fifo": set(plan.fifos)}
    for kind in ("core", "link", "fifo"):
        missing, extra = sorted(want[kind] - have[kind]), sorted(have[kind] - want[kind])
        if missing:
            raise PlanError(f"the plan does not place {kind} {', '.join(missing)}")
        if extra:
            raise PlanError(f"the plan places {kind} {', '.join(extra)}, which design {d.name!r} does not have")
    for name, fp in plan.fifos.items():
        design_ends = [*ends[name].producers[:1], *ends[name].consumers]
        got = [fp.producer.agent, *(c.agent for c in fp.consumers)]
        if got != design_ends:
            raise PlanError(f"fifo {name!r} runs from {design_ends[0]} to {', '.join(design_ends[1:])} in the design; "
                            f"the plan gives ends {', '.join(got)}")
    streamed = {n for n, fp in plan.fifos.items() if not fp.shared}
    if missing := sorted(streamed - set(plan.routes)):
        raise PlanError(f"streamed fifo {', '.join(missing)} has no route")
    if extra := sorted(set(plan.routes) - streamed):
        raise PlanError(f"route {', '.join(extra)} is not of a streamed fifo of the plan")


def _placement(plan: Plan) -> None:
    dev = plan.device
    pins = {c.name: c.tile for c in plan.design.cores}
    on: dict[Coord, str] = {}
    for core, tile in plan.placement.items():
        kind = _kind(dev, tile, f"core {core!r}")
        if kind != "compute":
            raise PlanError(f"core {core!r} is placed on {_t(tile)}, a {kind} tile; cores run on compute tiles")
        if pins[core] is not None and tuple(pins[core]) != tile:
            raise PlanError(f"core {core!r} is pinned to {_t(pins[core])} in the design but placed on {_t(tile)}")
        if tile in on:
            raise PlanError(f"cores {on[tile]!r} and {core!r} are both placed on {_t(tile)}; a tile runs one core")
        on[tile] = core
    for link, tile in plan.link_tiles.items():
        kind = _kind(dev, tile, f"link {link!r}")
        if kind != "mem":
            raise PlanError(f"link {link!r} is placed on {_t(tile)}, a {kind} tile; links run on memtiles")
    for name, fp in plan.fifos.items():
        for e in (fp.producer, *fp.consumers):
            _check_end_tile(plan, name, e)


def _kind(dev: Device, tile: Coord, what: str) -> str:
    if not (0 <= tile[0] < dev.cols and 0 <= tile[1] < dev.rows):
        raise PlanError(f"{what}: tile {_t(tile)} is outside {dev.name}'s {dev.cols}x{dev.rows} array")
    return dev.tile_kind(tile)


def _check_end_tile(plan: Plan, fifo: str, e: FifoEnd) -> None:
    dev = plan.device
    what = f"fifo {fifo!r}: the end of {e.agent}"
    _kind(dev, e.tile, what)
    if e.agent == HOST:
        plio = plan.design.plio_of(fifo)
        if plio and not dev.is_pl_shim(e.tile):
            raise PlanError(f"{what} is on {_t(e.tile)}, which is not a PL shim tile; the fifo's host moves are "
                            f"{plio}-bit PLIO streams, which enter and leave the array at PL shims")
        if not plio and not dev.is_noc_shim(e.tile):
            raise PlanError(f"{what} is on {_t(e.tile)}, which is not a NoC shim tile; host ends are on NoC shims")
        return
    kind, name = e.agent.split(":", 1)
    placed = plan.placement.get(name) if kind == "core" else plan.link_tiles.get(name)
    if placed != e.tile:
        raise PlanError(f"{what} is on {_t(e.tile)}, but {kind} {name!r} is placed on {_t(placed)}")  # type: ignore[arg-type]


def _carriage(plan: Plan) -> None:
    dev = plan.device
    used: dict[tuple[Coord, str, int], str] = {}
    for name, fp in plan.fifos.items():
        if fp.shared:
            _check_shared(plan, name)
            continue
        for e, direction in ((fp.producer, MM2S), *((c, S2MM) for c in fp.consumers)):
            what = f"fifo {name!r}: the {direction.upper()} end of {e.agent} on {_t(e.tile)}"
            n = dev.end_channels(e.tile, direction)
            if e.channel is None:
                raise PlanError(f"{what} has no DMA channel, but the fifo is streamed")
            if not 0 <= e.channel < n:
                raise PlanError(f"{what} uses channel {e.channel}; the tile has {n} {direction.upper()} channels"
                                + (f" (0-{n - 1})" if n else ""))
            key = (e.tile, direction, e.channel)
            if key in used:
                raise PlanError(f"{what} uses channel {e.channel}, which {used[key]} uses too")
            used[key] = f"fifo {name!r} ({e.agent})"


def _check_shared(plan: Plan, name: str) -> None:
    fp = plan.fifos[name]
    dev = plan.device
    agents = [fp.producer, *fp.consumers]
    if len(agents) != 2 or not all(e.agent.startswith("core:") for e in agents):
        raise PlanError(f"fifo {name!r} is shared at {_t(fp.shared_tile)}, but only a fifo from one core to one "  # type: ignore[arg-type]
                        f"other core can be; its ends are {', '.join(e.agent for e in agents)}")
    for e in agents:
        if e.channel is not None:
            raise PlanError(f"fifo {name!r} is shared, but the end of {e.agent} uses DMA channel {e.channel}")
        if fp.shared_tile not in dev.shared_memory_tiles(e.tile):
            raise PlanError(f"fifo {name!r} is shared at {_t(fp.shared_tile)}, whose memory "  # type: ignore[arg-type]
                            f"{agent_name(e.agent)!r} on {_t(e.tile)} cannot reach")


def _buffers(plan: Plan) -> None:
    dev = plan.device
    core_tiles = set(plan.placement.values())
    by_tile: dict[Coord, list[tuple[int, int, str]]] = {}
    for name, b in plan.buffers.items():
        what = f"buffer {name!r}"
        _kind(dev, b.tile, what)
        _check_buffer_home(plan, name)
        mem, banks = dev.memory_bytes(b.tile), dev.memory_banks(b.tile)
        if b.offset < 0 or b.size <= 0 or b.offset + b.size > mem:
            raise PlanError(f"{what} at bytes [{b.offset}, {b.end}) of {_t(b.tile)} lies outside its {mem}-byte memory")
        if b.offset % BUFFER_ALIGN:
            raise PlanError(f"{what} at byte {b.offset} of {_t(b.tile)} is not {BUFFER_ALIGN}-byte aligned "
                            f"(devices.abi.BUFFER_ALIGN, the vendor allocator's step)")
        if b.fifo and b.fifo in plan.fifos and b.size < plan.design.fifo(b.fifo).elem.nbytes:
            raise PlanError(f"{what} has {b.size} B; fifo {b.fifo!r}'s element needs "
                            f"{plan.design.fifo(b.fifo).elem.nbytes} B")
        low = STACK_BYTES if b.tile in core_tiles else 0
        if b.offset < low:
            raise PlanError(f"{what} at byte {b.offset} of {_t(b.tile)} overlaps the core's stack (bytes 0-{low - 1})")
        bank_bytes = mem // banks
        if not 0 <= b.bank < banks or b.bank != b.offset // bank_bytes:
            raise PlanError(f"{what} at byte {b.offset} of {_t(b.tile)} starts in bank {b.offset // bank_bytes} "
                            f"(of {banks}, {bank_bytes} B each), not bank {b.bank}")
        by_tile.setdefault(b.tile, []).append((b.offset, b.end, name))
    _complete_sets(plan)
    _complete_locals(plan)
    may_share, packed = _packable(plan)
    for tile, spans in by_tile.items():
        spans.sort()
        for i, (lo1, hi1, n1) in enumerate(spans):
            for lo2, hi2, n2 in spans[i + 1 :]:
                if lo2 >= hi1:
                    break
                if (min(n1, n2), max(n1, n2)) not in may_share:
                    why = " whose lifetimes meet" if (n1 in packed and n2 in packed) else ""
                    raise PlanError(f"buffers {n1!r} [{lo1}, {hi1}) and {n2!r} [{lo2}, {hi2}){why} overlap in the "
                                    f"memory of {_t(tile)}")


def _packable(plan: Plan) -> tuple[set[tuple[str, str]], set[str]]:
    """Pairs of local buffers (smaller name first) of one core never resident together, and every local buffer
    of a core with two or more."""
    out: set[tuple[str, str]] = set()
    packed: set[str] = set()
    kernels = {k.name: k for k in plan.design.kernels}
    for c in plan.design.cores:
        if len(c.buffers) < 2:
            continue
        meet = liveness(c, kernels).interference()
        names = sorted(b.name for b in c.buffers)
        packed.update(names)
        out.update((x, y) for i, x in enumerate(names) for y in names[i + 1 :] if (x, y) not in meet)
    return out, packed


def _complete_locals(plan: Plan) -> None:
    """Every core's local buffers are placed, whole, on the core's tile."""
    for c in plan.design.cores:
        for lb in c.buffers:
            b = plan.buffers.get(lb.name)
            if b is None:
                raise PlanError(f"the plan does not place buffer {lb.name!r} of core {c.name!r}")
            if b.size < lb.nbytes:
                raise PlanError(f"buffer {lb.name!r} of core {c.name!r} needs {lb.nbytes} B; the plan gives {b.size} B")


def _complete_sets(plan: Plan) -> None:
    """Every tile that holds a fifo's buffers has one buffer per index below its depth, for each end there,
    named ``<fifo>_<end>_<index>`` (``<fifo>_<index>`` in shared memory): the names the emitter looks up."""
    held: dict[tuple[str, Coord], list[int]] = defaultdict(list)
    names: dict[tuple[str, Coord], set[str]] = defaultdict(set)
    for bname, b in plan.buffers.items():
        if b.fifo:
            held[(b.fifo, b.tile)].append(b.index)
            names[(b.fifo, b.tile)].add(bname)
            if not bname.endswith(f"_{b.index}"):
                raise PlanError(f"buffer {bname!r} of fifo {b.fifo!r} has index {b.index}; its name must end in "
                                f"_{b.index} (<fifo>_<end>_<index>)")
    for name in plan.fifos:
        depth = plan.design.fifo(name).depth
        for tile, prefixes in sorted(_sets(plan, name).items()):
            holders = len(prefixes)
            got = sorted(held.get((name, tile), []))
            if got != sorted(list(range(depth)) * holders):
                each = f"each index 0-{depth - 1}" + (f", for each of its {holders} ends there" if holders > 1 else "")
                raise PlanError(f"fifo {name!r} (depth {depth}) has buffers {got} on {_t(tile)}; it needs one for {each}")
            want = {f"{prefix}{i}" for prefix in prefixes for i in range(depth)}
            if names[(name, tile)] != want:
                raise PlanError(f"fifo {name!r} has buffers {sorted(names[(name, tile)])} on {_t(tile)}; they must be "
                                f"named {sorted(want)} (<fifo>_<end>_<index>)")


def _homes(plan: Plan, name: str) -> Counter:
    """The tiles whose memory holds ``name``'s buffers, with how many sets each (:func:`_sets`)."""
    return Counter({tile: len(prefixes) for tile, prefixes in _sets(plan, name).items()})


def _sets(plan: Plan, name: str) -> dict[Coord, list[str]]:
    """Per tile holding ``name``'s buffers, the name prefix of each buffer set there: the shared tile's
    ``<fifo>_``, or each non-host end's ``<fifo>_<end>_`` (a link's only for the fifo that is whole there;
    two links on one memtile, the destination of one and the source of the next, each hold a set)."""
    fp = plan.fifos[name]
    if fp.shared:
        return {fp.shared_tile: [f"{name}_"]}  # type: ignore[dict-item]
    links = {ln.name: ln for ln in plan.design.links}
    out: dict[Coord, list[str]] = {}
    for e in (fp.producer, *fp.consumers):
        if e.agent == HOST:
            continue
        kind, agent = e.agent.split(":", 1)
        if kind == "link" and whole_fifo(links[agent]) != name:
            continue  # a part fifo moves from or to offsets in the whole fifo's buffers
        out.setdefault(e.tile, []).append(f"{name}_{agent}_")
    return out


def _budgets(plan: Plan) -> None:
    """Locks per tile and BDs per pool, as descriptors.py counts them."""
    dev, design = plan.device, plan.design
    links = {ln.name: ln for ln in design.links}
    locks: dict[Coord, list[tuple[str, int]]] = defaultdict(list)
    pools: dict[tuple[Coord, int, int], list[tuple[str, int]]] = defaultdict(list)
    for name, fp in plan.fifos.items():
        depth = design.fifo(name).depth
        try:
            if fp.shared:
                locks[fp.shared_tile].append((f"fifo {name} (shared)", set_locks(dev, depth)))  # type: ignore[index]
                continue
            for e, direction in ((fp.producer, MM2S), *((c, S2MM) for c in fp.consumers)):
                who = f"{e.agent} {direction.upper()} ch{e.channel} ({name})"
                first, size = dev.bd_pool(e.tile, e.channel)  # type: ignore[arg-type]
                pools[(e.tile, first, size)].append((who, end_bds(design, name, e.agent)))
                if e.agent == HOST:
                    n = host_end_locks(dev, e.tile)
                elif e.agent.startswith("core:"):
                    n = set_locks(dev, depth)
                else:
                    ln = links[agent_name(e.agent)]
                    n = set_locks(dev, depth, part_count(ln)) if whole_fifo(ln) == name else 0
                if n:
                    locks[e.tile].append((who, n))
        except PlanError as err:
            raise PlanError(f"fifo {name!r}: {err}") from None
    for tile, users in sorted(locks.items()):
        need, have = sum(n for _, n in users), dev.locks(tile)
        if need > have:
            raise PlanError(f"tile {_t(tile)} has {have} locks, {need} needed: "
                            + ", ".join(f"{w}: {n}" for w, n in users))
    for (tile, first, size), users in sorted(pools.items()):
        need = sum(n for _, n in users)
        if need > size:
            raise PlanError(f"tile {_t(tile)} has {size} buffer descriptors for BDs {first}-{first + size - 1}, "
                            f"{need} needed: " + ", ".join(f"{w}: {n}" for w, n in users))


def _check_buffer_home(plan: Plan, name: str) -> None:
    """A buffer lives on the memory its fifo uses there: the shared tile, or an end's tile (not the host's)."""
    b = plan.buffers[name]
    if not b.fifo:
        owner = next((c for c in plan.design.cores if any(lb.name == name for lb in c.buffers)), None)
        if owner is None:
            raise PlanError(f"buffer {name!r} belongs to no fifo and is no core's tl.buffer")
        if plan.placement.get(owner.name) != b.tile:
            raise PlanError(f"buffer {name!r} of core {owner.name!r} is on {_t(b.tile)}; the core runs on "
                            f"{_t(plan.placement[owner.name])} and its local buffers live in its own memory")
        return
    fp = plan.fifos.get(b.fifo)
    if fp is None:
        raise PlanError(f"buffer {name!r} belongs to no fifo of the plan (fifo {b.fifo!r})")
    homes = _homes(plan, b.fifo)
    if b.tile not in homes:
        raise PlanError(f"buffer {name!r} of fifo {b.fifo!r} is on {_t(b.tile)}, where the fifo has no end; "
                        f"its buffers go on {', '.join(_t(t) for t in sorted(homes))}")  # type: ignore[arg-type]


def _routes(plan: Plan) -> None:
    dev = plan.device
    links = set(dev.links())
    use: Counter = Counter()
    for name, r in plan.routes.items():
        fp = plan.fifos[name]
        want = {c.tile for c in fp.consumers}
        if r.source != fp.producer.tile or set(r.dests) != want:
            raise PlanError(f"the route of {name!r} runs from {_t(r.source)} to {' '.join(map(_t, r.dests))}; the fifo "
                            f"runs from {_t(fp.producer.tile)} to {' '.join(_t(t) for t in sorted(want))}")
        for a, b in r.links:
            if (a, b) not in links:
                raise PlanError(f"the route of {name!r} uses {_t(a)}->{_t(b)}, which is not a link of {dev.name}")
        if len(set(r.links)) != len(r.links):
            raise PlanError(f"the route of {name!r} lists a link twice")
        entered = Counter(b for _, b in r.links)
        again = sorted(t for t, n in entered.items() if n > 1 or t == r.source)
        if again:
            raise PlanError(f"the route of {name!r} enters {_t(again[0])} "
                            + ("again: it returns to its source" if again[0] == r.source else "twice")
                            + "; a route is a tree from the source, each tile entered once")
        reached = r.reaches()
        stray = sorted(lk for lk in r.links if lk[0] not in reached)
        if stray:
            a, b = stray[0]
            raise PlanError(f"the route of {name!r} uses {_t(a)}->{_t(b)}, which its source {_t(r.source)} does not "
                            f"reach: its links are not connected")
        missed = sorted(want - reached - {r.source})
        if missed:
            raise PlanError(f"the route of {name!r} from {_t(r.source)} does not reach {' '.join(map(_t, missed))}: "
                            f"its links are not connected from the source to every destination")
        leaves = sorted(set(entered) - {a for a, _ in r.links} - set(r.dests))
        if leaves:
            raise PlanError(f"the route of {name!r} ends at {_t(leaves[0])}, which is not one of its destinations "
                            f"({' '.join(map(_t, r.dests))}): a branch would stream the fifo where nothing takes it")
        use.update(r.links)
    for (a, b), n in sorted(use.items()):
        cap = dev.link_capacity(a, b)
        if n > cap:
            users = sorted(k for k, r in plan.routes.items() if (a, b) in r.links)
            raise PlanError(f"link {_t(a)}->{_t(b)} carries {n} flows ({', '.join(users)}), has {cap} channels")
    assign_channels(dev, plan.routes)  # the switches can give every hop a channel (the emitter's assignment)
    for name, fp in plan.fifos.items():
        # a fifo from a DMA into a DMA of the same tile (one link's output into another link on one memtile)
        # crosses that tile's switch DMA to DMA: the device's switch rules say on which channels it may
        for c in fp.consumers:
            if c.tile != fp.producer.tile or fp.producer.channel is None or c.channel is None or fp.shared:
                continue
            if not dev.legal_connection(c.tile, ("DMA", fp.producer.channel), ("DMA", c.channel)):
                raise PlanError(
                    f"fifo {name!r} goes from DMA channel {fp.producer.channel} to DMA channel {c.channel} of "
                    f"{_t(c.tile)}, whose switch connects DMA to DMA only on the same channel"
                )
