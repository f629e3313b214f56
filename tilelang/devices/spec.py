"""Per-tile-kind and per-architecture hardware tables.

A :class:`TileSpec` holds what one kind of tile has (memory, locks, buffer
descriptors, DMA channels, stream-switch ports); an :class:`ArchSpec` groups the
tile kinds of one architecture with its compute rates and its rule for which
neighbour memories a core may load from. The numbers themselves live in the
family files (``aie1.py``, ``aie2.py``, ``aie2p.py``) next to their sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: Stream-switch bundles a caller may ask about (mlir-aie WireBundle names).
BUNDLES: tuple[str, ...] = (
    "Core",
    "DMA",
    "FIFO",
    "North",
    "South",
    "East",
    "West",
    "Trace",
)
#: Port directions: "out" is a master port (drives a stream), "in" a slave port.
PORT_DIRECTIONS: tuple[str, ...] = ("out", "in")
#: DMA channel directions: S2MM writes a stream into memory, MM2S reads memory out.
DMA_DIRECTIONS: tuple[str, ...] = ("s2mm", "mm2s")
#: Keys of :meth:`TileSpec.bd_fields`.
BD_FIELDS: tuple[str, ...] = ("len", "wrap", "stride", "iteration")
#: Core memory-affinity rules (see ``Device.shared_memory_tiles``).
AFFINITY_RULES: tuple[str, ...] = ("checkerboard", "west")


def _as_table(pairs: tuple[tuple[str, int], ...], keys: tuple[str, ...], what: str) -> dict[str, int]:
    table = dict(pairs)
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise ValueError(f"{what}: unknown keys {unknown}, expected some of {list(keys)}")
    if any(not isinstance(v, int) or v < 0 for v in table.values()):
        raise ValueError(f"{what}: values must be non-negative ints, got {table}")
    return table


@dataclass(frozen=True)
class TileSpec:
    """What one kind of tile provides.

    Attributes:
        kind: "shim", "mem" or "compute".
        memory_bytes: data memory of the tile (0 for shims).
        banks: memory banks the data memory is split into.
        locks: hardware locks (AIE1 binary, AIE2 semaphores).
        bds: DMA buffer descriptors.
        dma_s2mm: S2MM (stream into memory) DMA channels.
        dma_mm2s: MM2S (memory out to stream) DMA channels.
        dma_dims: dimensions of one BD access pattern (shim repeat not counted).
        bd_bits: bit widths of the BD fields, as (field, bits) pairs.
        ports_out: master ports per bundle, as (bundle, count) pairs; absent = 0.
        ports_in: slave ports per bundle, as (bundle, count) pairs; absent = 0.
        switch: which slave bundle may drive which master bundle, and on which
            channels (``tilelang.devices.switch_rules``); absent pairs are illegal.
        bd_pools: pools the BDs are split into by DMA channel parity (2: even
            channels take the first half, odd the second), or 1 (one pool).
    """

    kind: str
    memory_bytes: int
    banks: int
    locks: int
    bds: int
    dma_s2mm: int
    dma_mm2s: int
    dma_dims: int
    bd_bits: tuple[tuple[str, int], ...]
    ports_out: tuple[tuple[str, int], ...]
    ports_in: tuple[tuple[str, int], ...]
    switch: tuple[tuple[tuple[str, str], str | int], ...] = ()
    bd_pools: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("shim", "mem", "compute"):
            raise ValueError(f"bad tile kind {self.kind!r}")
        for name in (
            "memory_bytes",
            "banks",
            "locks",
            "bds",
            "dma_s2mm",
            "dma_mm2s",
            "dma_dims",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"TileSpec.{name} must be a non-negative int, got {value!r}")
        bits = _as_table(self.bd_bits, BD_FIELDS, "TileSpec.bd_bits")
        if set(bits) != set(BD_FIELDS):
            raise ValueError(f"TileSpec.bd_bits must give every field of {list(BD_FIELDS)}")
        _as_table(self.ports_out, BUNDLES, "TileSpec.ports_out")
        _as_table(self.ports_in, BUNDLES, "TileSpec.ports_in")
        for (src, dst), _rule in self.switch:
            if src not in BUNDLES or dst not in BUNDLES:
                raise ValueError(f"TileSpec.switch: unknown bundle in {src} -> {dst}")

    def port_count(self, bundle: str, direction: str) -> int:
        """Ports of ``bundle`` in ``direction`` ("out"/"in"), before array-edge rules."""
        pairs = self.ports_out if direction == "out" else self.ports_in
        return dict(pairs).get(bundle, 0)

    def bd_fields(self) -> dict[str, int]:
        """A fresh ``{field: bits}`` dict of the BD field widths."""
        return dict(self.bd_bits)

    def to_dict(self) -> dict:
        """A plain JSON-able summary of this tile kind."""
        return {
            "memory_bytes": self.memory_bytes,
            "memory_banks": self.banks,
            "locks": self.locks,
            "buffer_descriptors": self.bds,
            "dma_channels": {"s2mm": self.dma_s2mm, "mm2s": self.dma_mm2s},
            "dma_dims": self.dma_dims,
            "bd_field_bits": self.bd_fields(),
            "ports_out": dict(self.ports_out),
            "ports_in": dict(self.ports_in),
        }


@dataclass(frozen=True)
class ArchSpec:
    """One architecture's tile kinds, compute rates and memory-sharing rule.

    Attributes:
        name: "aie1", "aie2" or "aie2p".
        compute: the compute (core) tile.
        mem: the memory tile, or None where the architecture has none.
        shim_noc: a shim tile with a NoC connection and a shim DMA.
        shim_pl: a shim tile with only a PL connection (no DMA).
        macs: MACs per cycle per core, as (dtype name, rate) pairs; a dtype
            absent here has no datapath on this architecture.
        affinity: "checkerboard" (AIE1) or "west" (AIE2): which horizontal
            neighbour's memory a core sees besides its own.
        lock_max: the largest value a lock holds (1: binary locks, one per
            buffer; above 1: semaphores, one producer/consumer pair per buffer set).
        host_sequence: whether the host drives shim DMAs from a runtime sequence of
            transfers (NPU style: one BD ring per shim channel, task completion, no shim
            locks); False: each shim channel's BD chain is configured statically, one BD
            per move, guarded by a lock.
        mac_modes: other datapaths for a dtype's matmuls, as (dtype name, mode, MACs per
            cycle) triples (e.g. AIE2P bf16 without the bfp16 emulation); ``macs`` holds
            the rate of the default path, which the cost model uses.
    """

    name: str
    compute: TileSpec
    mem: TileSpec | None
    shim_noc: TileSpec
    shim_pl: TileSpec
    macs: tuple[tuple[str, float], ...]
    affinity: str
    lock_max: int = 1
    host_sequence: bool = False
    mac_modes: tuple[tuple[str, str, float], ...] = ()

    def __post_init__(self) -> None:
        if self.lock_max < 1:
            raise ValueError(f"ArchSpec {self.name}: lock_max must be at least 1")
        if self.affinity not in AFFINITY_RULES:
            raise ValueError(f"bad affinity rule {self.affinity!r}, expected one of {AFFINITY_RULES}")
        expected = (
            ("compute", self.compute),
            ("shim", self.shim_noc),
            ("shim", self.shim_pl),
        )
        for kind, spec in expected + ((("mem", self.mem),) if self.mem is not None else ()):
            if spec.kind != kind:
                raise ValueError(f"ArchSpec {self.name}: a {spec.kind} spec given where a {kind} spec belongs")
        if any(rate <= 0 for _, rate in self.macs) or any(rate <= 0 for _, _, rate in self.mac_modes):
            raise ValueError(f"ArchSpec {self.name}: MAC rates must be positive")
        table = dict(self.macs)
        stray = [(dt, mode) for dt, mode, _ in self.mac_modes if dt not in table or mode == "default"]
        if stray:
            raise ValueError(f"ArchSpec {self.name}: mac_modes {stray} name a dtype without a default "
                             f"rate or the reserved mode 'default'")

    def macs_table(self) -> dict[str, float]:
        """A fresh ``{dtype name: MACs per cycle per core}`` dict."""
        return dict(self.macs)

    def mac_modes_of(self, dtype: str) -> dict[str, float]:
        """``{mode: MACs per cycle}`` of a dtype: "default" (``macs``) and any other datapath."""
        out = {"default": dict(self.macs)[dtype]} if dtype in dict(self.macs) else {}
        out.update({mode: rate for dt, mode, rate in self.mac_modes if dt == dtype})
        return out


def in_flight_rate(run_bytes: float | np.ndarray, max_burst: int, outstanding: int,
                   latency_cycles: int) -> float | np.ndarray:
    """Bytes per cycle a DMA channel moves in contiguous runs of ``run_bytes`` (a number or a numpy
    array) when it keeps ``outstanding`` bursts of at most ``max_burst`` bytes in flight, each
    ``latency_cycles`` to its first data: ``outstanding x burst / latency`` (no limit without latency).
    The one definition of the rule: the simulator's DDR model and the tiler both use it."""
    if not latency_cycles:
        return run_bytes * 0 + float("inf")
    run = run_bytes * 1.0
    bursts = -(-run // max_burst)
    return outstanding * (run / bursts) / latency_cycles


@dataclass(frozen=True)
class HostMemory:
    """How the shim DMAs reach host memory (DDR), as the simulator's DDR model needs it.

    A shim DMA reads or writes a host tensor as bursts: each contiguous run of the
    access pattern is split into bursts of at most ``max(burst_bytes)`` (mlir-aie's
    default burst length is the largest the target offers); a burst shorter than
    ``access_bytes`` still costs a whole access of DDR time. A channel keeps at most
    ``outstanding`` bursts in flight, each taking ``latency_ns`` to its first data,
    so its rate is at most ``outstanding x burst / latency``. The runtime sequence
    writes a BD and pushes a task per move (``task_issue_ns``); a channel queues at
    most ``task_queue`` tasks (0: static BD chains, no runtime queue).

    Attributes:
        bytes_per_second: DDR bandwidth shared by every shim DMA of the device.
        burst_bytes: burst lengths the shim DMA can issue, in bytes.
        access_bytes: the smallest DDR access, in bytes.
        latency_ns: first-data latency of one burst, in nanoseconds.
        outstanding: bursts one channel keeps in flight.
        task_queue: tasks one shim channel can hold queued (0: no runtime task queue).
        task_issue_ns: time the runtime sequence takes to write one move's BD and push
            its task, in nanoseconds (0 where BDs are configured statically).
    """

    bytes_per_second: float
    burst_bytes: tuple[int, ...]
    access_bytes: int
    latency_ns: float
    outstanding: int
    task_queue: int
    task_issue_ns: float

    def __post_init__(self) -> None:
        if self.bytes_per_second <= 0 or not self.burst_bytes or any(b <= 0 for b in self.burst_bytes):
            raise ValueError(f"HostMemory: bandwidth and burst lengths must be positive, got {self}")
        if self.access_bytes <= 0 or self.outstanding <= 0 or self.latency_ns < 0 or self.task_issue_ns < 0:
            raise ValueError(f"HostMemory: access bytes and outstanding bursts must be positive, "
                             f"latency and issue time non-negative, got {self}")
        if self.task_queue < 0:
            raise ValueError(f"HostMemory: task_queue must be >= 0, got {self.task_queue}")

    @property
    def max_burst(self) -> int:
        """The burst length the shim DMA uses (mlir-aie's default: the largest)."""
        return max(self.burst_bytes)

    def to_dict(self) -> dict:
        """A plain JSON-able summary."""
        return {
            "ddr_bytes_per_second": self.bytes_per_second,
            "shim_burst_bytes": list(self.burst_bytes),
            "ddr_access_bytes": self.access_bytes,
            "burst_latency_ns": self.latency_ns,
            "outstanding_bursts": self.outstanding,
            "task_queue": self.task_queue,
            "task_issue_ns": self.task_issue_ns,
        }



@dataclass(frozen=True)
class PlioSpec:
    """PL I/O (PLIO) streams of a device's PL shims: AXI4-Stream channels between the programmable
    logic and the array, clocked by the PL and sequentialised to the array's 32-bit streams.

    Attributes:
        widths_bits: the PLIO widths a design may ask for, in bits.
        default_bits: the width of a PLIO move that names none.
        pl_clock_hz: the PL clock assumed for every PLIO stream.
        channels_in: PL -> array stream channels of one PL shim.
        channels_out: array -> PL stream channels of one PL shim.
    """

    widths_bits: tuple[int, ...]
    default_bits: int
    pl_clock_hz: float
    channels_in: int
    channels_out: int

    def __post_init__(self) -> None:
        if self.default_bits not in self.widths_bits:
            raise ValueError(f"PLIO default width {self.default_bits} is not one of {self.widths_bits}")
        if self.pl_clock_hz <= 0 or self.channels_in <= 0 or self.channels_out <= 0:
            raise ValueError("a PLIO spec needs a positive PL clock and channel counts")
