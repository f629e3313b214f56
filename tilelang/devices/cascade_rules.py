"""Cascade streams (core to neighbouring core accumulator forwarding), as device data.

Which core may send a cascade to which, how wide one cascade word is, how many words move a cycle and how
many the cascade holds in flight. The planner's placement constraint, the design and plan verifiers, the
simulator and the MLIR emitter all ask this module; none keeps its own copy of a rule.

Sources:

- [UG1079] AMD UG1079 (2022.1) "AI Engine Tile Interface": AIE1 "384-bit accumulator data ... forwarded to
  another by using the dedicated cascade stream ... a small, two deep, 384-bit wide FIFO on both the input
  and output streams that allows storing up to four values between AI Engines. In each cycle, 384-bits can
  be received and sent". UG1079 (2021.1) "AI Engine Architecture Overview": the AIE1 cascade is one-way,
  horizontal, and wraps around to the next row.
- [TUT8] mlir-aie ``mlir_tutorials/tutorial-8`` (README): on first generation AI Engines cascades flow east to
  west in even rows and west to east in odd rows (row 0 is the shim row); the last tile of each row cascades
  into the tile directly north, so the chain snakes from bottom to top. mlir-aie needs no op to connect
  them: the cores only put and get.
- [UG1603] AMD UG1603 (2024.1) "Stream-Based Access": on AIE-ML the cascade is "connected ... either
  horizontally or vertically, directed from west to east or north to south".
- [AIED] mlir-aie ``lib/Dialect/AIE/IR/AIEDialect.cpp`` (the version of ../shared/tools/mlir-aie):
  ``ConfigureCascadeOp::verify`` allows on AIE2 targets only inputs from North or West and outputs to South
  or East, and rejects every AIE1 target ("cascade not supported in AIE1"), so ``aie.cascade_flow`` (which
  ``aie-lower-cascade-flows`` turns into ``aie.configure_cascade``) cannot be used on AIE1;
  ``GetCascadeOp::verify`` / ``PutCascadeOp::verify``: one cascade value is 384 bits on AIE1 and 512 bits on
  AIE2 (``getAccumulatorCascadeSize``). AIE2P (npu2) uses the AIE2 rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.errors import DesignError

Coord = tuple[int, int]


@dataclass(frozen=True)
class CascadeSpec:
    """One architecture's cascade.

    Attributes:
        word_bits: bits of one cascade word (one put or get).
        words_per_cycle: words the cascade moves per cycle.
        fifo_words: words held in flight between the producer's put and the consumer's get.
        configurable: True when mlir-aie connects two cores with ``aie.cascade_flow`` (AIE2); False when the
            chain is fixed in hardware and mlir-aie has no op for it (AIE1).
        rule: "snake" (AIE1) or "south_east" (AIE-ML and later).
    """

    word_bits: int
    words_per_cycle: int
    fifo_words: int
    configurable: bool
    rule: str

    @property
    def word_bytes(self) -> int:
        return self.word_bits // 8

    def transfer_cycles(self, nbytes: int) -> int:
        """Cycles to move ``nbytes`` over the cascade: whole words at ``words_per_cycle``."""
        words = -(-nbytes // self.word_bytes)
        return -(-words // self.words_per_cycle)


#: [UG1079] 384-bit words, one per cycle, two-deep FIFOs on the output and the input (four in flight);
#: [TUT8] the fixed snake; [AIED] no aie.cascade_flow on AIE1.
AIE1_CASCADE = CascadeSpec(word_bits=384, words_per_cycle=1, fifo_words=4, configurable=False, rule="snake")

#: [AIED] 512-bit words on AIE2 (put_cascade / get_cascade verifiers); [UG1603] west to east or north to south.
#: One word per cycle is an estimate: UG1079 gives one word per cycle for AIE1 and we found no AIE-ML figure.
#: The in-flight depth (four words) is likewise taken from AIE1's [UG1079] and is an estimate for AIE-ML.
AIE2_CASCADE = CascadeSpec(word_bits=512, words_per_cycle=1, fifo_words=4, configurable=True, rule="south_east")

_BY_FAMILY = {"aie1": AIE1_CASCADE, "aieml": AIE2_CASCADE, "aie2": AIE2_CASCADE, "aie2p": AIE2_CASCADE}


def cascade_spec(device: object) -> CascadeSpec:
    """The cascade of ``device``'s architecture (a :class:`tilelang.devices.Device`)."""
    return _BY_FAMILY[device.family]  # type: ignore[attr-defined]


def cascade_ok(device: object, src: Coord, dst: Coord) -> bool:
    """True when the core on compute tile ``src`` can send a cascade to the core on compute tile ``dst``."""
    if device.tile_kind(src) != "compute" or device.tile_kind(dst) != "compute":  # type: ignore[attr-defined]
        return False
    return dst in cascade_targets(device, src)


def cascade_targets(device: object, src: Coord) -> list[Coord]:
    """The compute tiles the core on ``src`` can send a cascade to, by the device's rule (sorted)."""
    spec = cascade_spec(device)
    c, r = src
    if spec.rule == "snake":
        # [TUT8]: odd rows run west to east, even rows east to west; the row's last tile goes north.
        east = r % 2 == 1
        last = device.cols - 1 if east else 0  # type: ignore[attr-defined]
        cands = [(c, r + 1)] if c == last else [(c + 1, r) if east else (c - 1, r)]
    else:
        # [UG1603], [AIED]: west to east, or north to south.
        cands = [(c + 1, r), (c, r - 1)]
    out = []
    for t in cands:
        try:
            if device.tile_kind(t) == "compute":  # type: ignore[attr-defined]
                out.append(t)
        except DesignError:  # off the array: no such neighbour
            continue
    return sorted(out)


def describe_rule(device: object) -> str:
    """The device's cascade rule in words, for error messages."""
    if cascade_spec(device).rule == "snake":
        return (f"on {device.name} (AIE1) the cascade chain is fixed: west to east in odd rows, east to west in "  # type: ignore[attr-defined]
                f"even rows, and from a row's last core to the core above it")
    return (f"on {device.name} a cascade goes from a core to its east neighbour (same row) or its south "  # type: ignore[attr-defined]
            f"neighbour (same column); both must be compute tiles")


__all__ = ["AIE1_CASCADE", "AIE2_CASCADE", "CascadeSpec", "cascade_ok", "cascade_spec", "cascade_targets",
           "describe_rule"]
