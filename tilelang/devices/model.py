"""The :class:`Device` model: an array of shim, memory and compute tiles.

A Device is immutable data plus queries. Hardware numbers come from the family
files (``aie1.py``, ``aie2.py``, ``aie2p.py``), where each is cited; this module
only holds the rules that turn per-kind tables into per-tile answers (array
edges, NoC shims, neighbour links, shared memories).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tilelang.devices.layout import (
    LINK_BUNDLES,
    TILE_KINDS,
    Coord,
    bundle_name,
    check_layout,
    coord,
    dma_direction,
    dtype_of,
    port_direction,
)
from tilelang.devices.spec import ArchSpec, HostMemory, PlioSpec, TileSpec, in_flight_rate
from tilelang.devices.switch_rules import allows
from tilelang.errors import DesignError
from tilelang.ir.dtypes import DType

__all__ = ["DMA_WORD_BYTES", "Coord", "Device"]

#: Bytes one DMA address step moves: a BD's offset, length, sizes and strides count 32-bit words
#: (AIE_FACTS.md "DMA address granularity 32 bits"; the same on AIE1, AIE-ML/AIE2 and AIE2P).
DMA_WORD_BYTES = 4


@dataclass(frozen=True, repr=False)
class Device:
    """One AIE array as mlir-aie models it (see docs/devices.md).

    Attributes:
        name: mlir-aie's device name ("npu1", "xcvc1902", ...).
        family: "aie1", "aieml", "aie2" or "aie2p".
        cols: columns of the array.
        rows: rows of the array; row 0 is the shim row.
        aie_device_id: mlir-aie's AIEDevice enum integer for this device.
        clock_hz: AIE clock assumed by the cost model.
        stream_bits: bits per cycle carried by one stream channel.
        vector_bits: vector width per cycle for elementwise work in the cost model.
        arch: per-tile-kind tables, compute rates and memory-sharing rule.
        mem_rows: rows of memory tiles (empty on AIE1).
        noc_columns: columns whose shim has a NoC (DDR) connection and a shim DMA.
        host_memory: how the shim DMAs reach DDR (bandwidth, bursts, latency, task
            queue); None: the simulator's defaults for the family (``aie2.py``).
        plio: the PL shims' PLIO streams (docs/plio.md); None: no PLIO (no PL shims, or none modelled).
    """

    name: str
    family: str
    cols: int
    rows: int
    aie_device_id: int
    clock_hz: float
    stream_bits: int
    vector_bits: int
    arch: ArchSpec
    mem_rows: tuple[int, ...]
    noc_columns: tuple[int, ...]
    host_memory: HostMemory | None = None
    plio: PlioSpec | None = None

    def __post_init__(self) -> None:
        size = (self.cols, self.rows)
        check_layout(self.name, self.family, self.arch, size, self.mem_rows, self.noc_columns)

    def __repr__(self) -> str:
        return f"Device({self.name!r})"

    # -- tiles -------------------------------------------------------------

    def _on_array(self, tile: Coord) -> bool:
        return 0 <= tile[0] < self.cols and 0 <= tile[1] < self.rows

    def _check(self, tile: object) -> Coord:
        where = coord(tile)
        if not self._on_array(where):
            raise DesignError(
                f"tile {where} is off the {self.name} array, which has {self.cols} columns x "
                f"{self.rows} rows (col 0-{self.cols - 1}, row 0-{self.rows - 1})"
            )
        return where

    def _kind(self, tile: Coord) -> str:
        if tile[1] == 0:
            return "shim"
        return "mem" if tile[1] in self.mem_rows else "compute"

    def _spec(self, tile: object) -> TileSpec:
        where = self._check(tile)
        kind = self._kind(where)
        if kind == "compute":
            return self.arch.compute
        if kind == "mem":
            assert self.arch.mem is not None  # guaranteed by __post_init__
            return self.arch.mem
        return self.arch.shim_noc if where[0] in self.noc_columns else self.arch.shim_pl

    def tile_kind(self, tile: Coord) -> str:
        """The kind of a tile.

        Args:
            tile: (col, row).

        Returns:
            "shim" (row 0), "mem" (a memory-tile row) or "compute".

        Raises:
            DesignError: the tile is off the array; the message gives the array size.
        """
        return self._kind(self._check(tile))

    def tiles(self, kind: str | None = None) -> list[Coord]:
        """All tiles, or those of one kind, sorted by (col, row).

        Args:
            kind: None for every tile, else "shim", "mem" or "compute".

        Returns:
            The tiles as (col, row) tuples.

        Raises:
            DesignError: ``kind`` is not a tile kind.
        """
        if kind is not None and kind not in TILE_KINDS:
            raise DesignError(f"unknown tile kind {kind!r}; expected one of {list(TILE_KINDS)} or None")
        every = [(c, r) for c in range(self.cols) for r in range(self.rows)]
        return every if kind is None else [t for t in every if self._kind(t) == kind]

    def is_noc_shim(self, tile: Coord) -> bool:
        """Whether ``tile`` is a shim with a NoC (DDR) connection and a shim DMA.

        Raises:
            DesignError: the tile is off the array.
        """
        where = self._check(tile)
        return self._kind(where) == "shim" and where[0] in self.noc_columns

    def is_pl_shim(self, tile: Coord) -> bool:
        """Whether ``tile`` is a shim with only a PL connection (mlir-aie's ``isShimPLTile``).

        Raises:
            DesignError: the tile is off the array.
        """
        where = self._check(tile)
        return self._kind(where) == "shim" and where[0] not in self.noc_columns

    def plio_width(self, bits: int | None) -> int:
        """The PLIO width a move asks for (``None``: the device's default), checked against the device.

        Raises:
            DesignError: the device has no PLIO streams, or not of that width.
        """
        if self.plio is None:
            raise DesignError(f"{self.name} has no PL shims with PLIO streams; host moves there go through NoC shim DMAs")
        if bits is None:
            return self.plio.default_bits
        if bits not in self.plio.widths_bits:
            raise DesignError(f"{self.name}'s PLIO widths are {list(self.plio.widths_bits)} bits, not {bits}")
        return bits

    def plio_bytes_per_cycle(self, bits: int) -> float:
        """Bytes per AIE cycle of one PLIO stream ``bits`` wide: the PL side's rate (width x PL clock),
        at most the array stream it is sequentialised into (``stream_bits`` a cycle).

        Raises:
            DesignError: as :meth:`plio_width`.
        """
        bits = self.plio_width(bits)
        assert self.plio is not None
        pl = bits / 8 * self.plio.pl_clock_hz / self.clock_hz
        return min(pl, self.stream_bits / 8)

    def neighbours(self, tile: Coord) -> list[Coord]:
        """The 4-neighbours of ``tile`` that are on the array, sorted.

        Raises:
            DesignError: the tile is off the array.
        """
        c, r = self._check(tile)
        around = [(c + dc, r + dr) for dc, dr in LINK_BUNDLES]
        return sorted(t for t in around if self._on_array(t))

    # -- memories, locks, DMAs -------------------------------------------

    def memory_bytes(self, tile: Coord) -> int:
        """Data memory of ``tile`` in bytes (0 for shims); DesignError off the array."""
        return self._spec(tile).memory_bytes

    def memory_banks(self, tile: Coord) -> int:
        """Memory banks of ``tile`` (0 for shims); DesignError off the array."""
        return self._spec(tile).banks

    def locks(self, tile: Coord) -> int:
        """Hardware locks of ``tile``; DesignError off the array."""
        return self._spec(tile).locks

    def buffer_descriptors(self, tile: Coord) -> int:
        """DMA buffer descriptors of ``tile`` (0 without a DMA); DesignError off the array."""
        return self._spec(tile).bds

    def bd_pool(self, tile: Coord, channel: int) -> tuple[int, int]:
        """(first BD id, count) DMA channel ``channel`` of ``tile`` may use (either direction).

        Where a tile's BDs are split by channel parity (AIE-ML memtiles: even channels
        BDs 0-23, odd 24-47), a channel sees its half; elsewhere all of them.
        """
        spec = self._spec(tile)
        if spec.bd_pools == 2:
            half = spec.bds // 2
            return (0, half) if channel % 2 == 0 else (half, half)
        return 0, spec.bds

    @property
    def lock_max(self) -> int:
        """The largest value a lock holds (1: binary locks)."""
        return self.arch.lock_max

    @property
    def host_sequence(self) -> bool:
        """Whether host moves run from an NPU-style runtime sequence (else static shim BD chains)."""
        return self.arch.host_sequence

    def end_channels(self, tile: Coord, direction: str) -> int:
        """Channels a streamed fifo end may use on ``tile`` in one direction: its DMA channels, or on a PL
        shim its PLIO stream channels (``mm2s``: PL -> array, ``s2mm``: array -> PL; 0 without PLIO).

        Raises:
            DesignError: the tile is off the array or the direction is unknown.
        """
        if self.is_pl_shim(tile):
            if self.plio is None:
                return 0
            return self.plio.channels_in if dma_direction(direction) == "mm2s" else self.plio.channels_out
        return self.dma_channels(tile, direction)

    def dma_channels(self, tile: Coord, direction: str) -> int:
        """DMA channels of ``tile`` in one direction.

        Args:
            tile: (col, row).
            direction: "s2mm" (stream into memory) or "mm2s" (memory out to a stream).

        Returns:
            The channel count (0 on a shim without a DMA).

        Raises:
            DesignError: the tile is off the array or the direction is unknown.
        """
        d = dma_direction(direction)
        spec = self._spec(tile)
        return spec.dma_s2mm if d == "s2mm" else spec.dma_mm2s

    def dma_word_bytes(self, tile: Coord) -> int:
        """Bytes one DMA address step of ``tile`` moves: every transfer's offset, contiguous run and
        stride must be a whole number of them.

        Raises:
            DesignError: the tile is off the array.
        """
        self._spec(tile)
        return DMA_WORD_BYTES

    def dma_dims(self, tile: Coord) -> int:
        """Dimensions of one BD access pattern, the shim's repeat not counted.

        Raises:
            DesignError: the tile is off the array.
        """
        return self._spec(tile).dma_dims

    def bd_field_bits(self, tile: Coord) -> dict[str, int]:
        """Widths of the BD fields of ``tile``'s DMA.

        Returns:
            A fresh dict ``{"len", "wrap", "stride", "iteration"} -> bits`` (all 0
            without a DMA). Lengths and strides count 32-bit words.

        Raises:
            DesignError: the tile is off the array.
        """
        return self._spec(tile).bd_fields()

    # -- stream switch ---------------------------------------------------

    def ports(self, tile: Coord, bundle: str, direction: str) -> int:
        """Stream-switch ports of one bundle at ``tile``.

        Array edges have no North/East/West ports (mlir-aie's target model does
        the same), so a link off the array never has capacity.

        Args:
            tile: (col, row).
            bundle: Core, DMA, FIFO, North, South, East, West or Trace (any case).
            direction: "out" (master, drives a stream) or "in" (slave).

        Returns:
            The port count.

        Raises:
            DesignError: off-array tile, unknown bundle or direction.
        """
        spec = self._spec(tile)
        name, way = bundle_name(bundle), port_direction(direction)
        c, r = coord(tile)
        at_edge = (
            (name == "North" and r == self.rows - 1)
            or (name == "West" and c == 0)
            or (name == "East" and c == self.cols - 1)
        )
        return 0 if at_edge else spec.port_count(name, way)

    def link_capacity(self, a: Coord, b: Coord) -> int:
        """Stream channels of the directed link a -> b.

        Args:
            a: source tile (col, row).
            b: destination tile, a 4-neighbour of ``a``.

        Returns:
            min(a's master ports toward b, b's slave ports from a's side); 0 if
            the tiles are not neighbours or either is off the array.

        Raises:
            DesignError: ``a`` or ``b`` is not a (col, row) pair of ints.
        """
        ta, tb = coord(a), coord(b)
        step = (tb[0] - ta[0], tb[1] - ta[1])
        if step not in LINK_BUNDLES or not (self._on_array(ta) and self._on_array(tb)):
            return 0
        out_bundle, in_bundle = LINK_BUNDLES[step]
        return min(self.ports(ta, out_bundle, "out"), self.ports(tb, in_bundle, "in"))

    def switch_rule(self, tile: Coord, src_bundle: str, dst_bundle: str) -> str | int | None:
        """How ``tile``'s switch may connect a ``src_bundle`` slave to a ``dst_bundle`` master.

        Returns:
            ``"any"``, ``"same"`` (channel k to channel k only), an int n (only to master
            channel n), or None (not connectable); see ``tilelang.devices.switch_rules``.
        """
        return dict(self._spec(tile).switch).get((bundle_name(src_bundle), bundle_name(dst_bundle)))

    def legal_connection(self, tile: Coord, src: tuple[str, int], dst: tuple[str, int]) -> bool:
        """Whether ``tile``'s stream switch can connect slave port ``src`` to master port ``dst``.

        Both are (bundle, channel); the channels must exist (``ports``) and the pair must be
        wired (``switch_rule``): mlir-aie's ``isLegalTileConnection``.
        """
        (sb, sc), (db, dc) = src, dst
        if not (0 <= sc < self.ports(tile, sb, "in") and 0 <= dc < self.ports(tile, db, "out")):
            return False
        return allows(self._spec(tile).switch, (bundle_name(sb), sc), (bundle_name(db), dc))

    def links(self) -> list[tuple[Coord, Coord]]:
        """Every directed neighbour link with capacity > 0, sorted."""
        return list(_links(self))

    # -- shared memory ---------------------------------------------------

    def shared_memory_tiles(self, core: Coord) -> list[Coord]:
        """Compute-tile memories that the core of ``core`` can load and store directly.

        AIE2/AIE-ML: its own, the west, north and south neighbours'. AIE1: its own,
        north and south, and east on even rows / west on odd rows. Memory tiles
        are never included (mlir-aie excludes a memtile south of a core).

        Args:
            core: a compute tile (col, row).

        Returns:
            The tiles whose data memory the core shares, sorted.

        Raises:
            DesignError: off-array or not a compute tile.
        """
        if core.__class__ is tuple:  # the planners ask per pair of candidate tiles: answered from the table
            got = self.shared_memory_sets().get(core)
            if got is not None:
                return sorted(got)
        c, r = self._check(core)
        if self._kind((c, r)) != "compute":
            raise DesignError(
                f"shared_memory_tiles needs a compute tile; {(c, r)} on {self.name} is a {self._kind((c, r))} tile"
            )
        return self._memories_of(c, r)

    def shared_memory_sets(self) -> dict[Coord, frozenset[Coord]]:
        """Every compute tile's shared memories (:meth:`shared_memory_tiles`) as a set, for tests of many
        pairs of tiles (whether two cores reach a common memory), made at the first call.

        Kept in the instance's ``__dict__``: the device is frozen, and the table is derived from its fields
        (never compared or hashed with them)."""
        sets = self.__dict__.get("_shared_sets")
        if sets is None:
            sets = {t: frozenset(self._memories_of(*t)) for t in self.tiles("compute")}
            object.__setattr__(self, "_shared_sets", sets)
        return sets

    def _memories_of(self, c: int, r: int) -> list[Coord]:
        """The rule of :meth:`shared_memory_tiles` for the compute tile (c, r)."""
        if self.arch.affinity == "checkerboard":
            side = c + 1 if r % 2 == 0 else c - 1
        else:
            side = c - 1
        candidates = [(c, r), (side, r), (c, r + 1), (c, r - 1)]
        return sorted(t for t in candidates if self._on_array(t) and self._kind(t) == "compute")

    # -- compute ---------------------------------------------------------

    def supports_dtype(self, dtype: DType | str) -> bool:
        """Whether the cores have a MAC datapath for ``dtype`` (native or emulated)."""
        return dtype_of(dtype).name in self.arch.macs_table()

    def macs_per_cycle(self, dtype: DType | str, mode: str | None = None) -> float:
        """Multiply-accumulates per cycle of one core on ``dtype`` operands.

        f32 on AIE2/AIE2P and i32 on AIE2/AIE2P are documented estimates
        (emulated); see docs/devices.md.

        Args:
            dtype: the operand dtype.
            mode: None (or "default") for the datapath the cost model uses; else one of
                :meth:`mac_modes` (e.g. "native" bf16 on npu2, without the bfp16 emulation).

        Raises:
            DesignError: the architecture has no datapath for ``dtype``, or no such mode.
        """
        dt = dtype_of(dtype)
        table = self.arch.macs_table()
        if dt.name not in table:
            raise DesignError(
                f"{self.name} ({self.family}) cores have no {dt.name} MAC datapath; supported: {sorted(table)}"
            )
        if mode is None or mode == "default":
            return table[dt.name]
        modes = self.arch.mac_modes_of(dt.name)
        if mode not in modes:
            raise DesignError(f"{self.name} ({self.family}) has no {dt.name} MAC mode {mode!r}; it has {sorted(modes)}")
        return modes[mode]

    def mac_modes(self, dtype: DType | str) -> dict[str, float]:
        """``{mode: MACs per cycle}`` for ``dtype``: "default" and any other datapath the cores have.

        Raises:
            DesignError: the architecture has no datapath for ``dtype``.
        """
        dt = dtype_of(dtype)
        self.macs_per_cycle(dt)
        return self.arch.mac_modes_of(dt.name)

    def vector_lanes(self, dtype: DType | str) -> int:
        """Elementwise operations per cycle of one core: vector_bits / dtype bits.

        Raises:
            DesignError: the architecture has no vector support for ``dtype``.
        """
        dt = dtype_of(dtype)
        if dt.name != "i1" and not self.supports_dtype(dt):
            raise DesignError(f"{self.name} ({self.family}) cores have no {dt.name} vector datapath")
        return self.vector_bits // dt.bits

    def shim_bandwidth_bytes_per_cycle(self) -> float:
        """Bytes per cycle of one shim DMA channel toward DDR.

        Modelled as the stream width: a channel feeds one stream port. NoC and
        DDR contention are not modelled (unconfirmed; see docs/devices.md).
        """
        return self.stream_bits / 8

    def shim_run_bytes_per_cycle(self, run_bytes: float | np.ndarray) -> float | np.ndarray:
        """Bytes per cycle one shim DMA channel moves reading or writing DDR in contiguous runs of
        ``run_bytes``: the channel's width, or less when the bursts it keeps in flight cannot cover
        the burst latency (``host_memory``; the simulator's ``Ddr`` charges the same).

        Args:
            run_bytes: bytes of each contiguous run (a scalar or an array).

        Returns:
            The rate (same shape as ``run_bytes``).
        """
        hm = self.host_memory
        width = self.shim_bandwidth_bytes_per_cycle()
        run = np.maximum(1.0, np.asarray(run_bytes, dtype=float))
        if hm is None:
            return np.minimum(width, run * 0 + np.inf)
        latency = round(hm.latency_ns * 1e-9 * self.clock_hz)
        return np.minimum(width, in_flight_rate(run, hm.max_burst, hm.outstanding, latency))

    def peak_macs_per_second(self, dtype: DType | str) -> float:
        """MACs per second of every core of the array together on ``dtype``.

        Raises:
            DesignError: the architecture has no datapath for ``dtype``.
        """
        return self.macs_per_cycle(dtype) * len(self.tiles("compute")) * self.clock_hz

    def to_dict(self) -> dict:
        """A plain JSON-able summary of the device."""
        specs = {
            "compute": self.arch.compute,
            "mem": self.arch.mem,
            "shim_noc": self.arch.shim_noc,
            "shim_pl": self.arch.shim_pl,
        }
        return {
            "name": self.name,
            "family": self.family,
            "arch": self.arch.name,
            "cols": self.cols,
            "rows": self.rows,
            "aie_device_id": self.aie_device_id,
            "clock_hz": self.clock_hz,
            "stream_bits": self.stream_bits,
            "vector_bits": self.vector_bits,
            "mem_rows": list(self.mem_rows),
            "noc_columns": list(self.noc_columns),
            "tile_counts": {k: len(self.tiles(k)) for k in TILE_KINDS},
            "tile_kinds": {k: s.to_dict() for k, s in specs.items() if s is not None},
            "macs_per_cycle": self.arch.macs_table(),
            "mac_modes": {dt: self.arch.mac_modes_of(dt) for dt, _, _ in self.arch.mac_modes},
            "shared_memory_rule": self.arch.affinity,
            "shim_bandwidth_bytes_per_cycle": self.shim_bandwidth_bytes_per_cycle(),
            "host_memory": self.host_memory.to_dict() if self.host_memory is not None else None,
        }


@lru_cache(maxsize=64)
def _links(device: Device) -> tuple[tuple[Coord, Coord], ...]:
    # Cached because planners ask for the link list repeatedly; Device is frozen.
    found = []
    for a in device.tiles():
        for b in device.neighbours(a):
            if device.link_capacity(a, b) > 0:
                found.append((a, b))
    return tuple(sorted(found))
