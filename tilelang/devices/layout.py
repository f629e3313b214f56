"""Argument checking and array-layout rules shared by the Device queries.

Kept apart from ``model.py`` so that the Device class reads as its queries:
here are the spellings a caller may use (tile coordinates, bundles, directions,
dtypes) and the consistency checks a device's layout must pass.
"""

from __future__ import annotations

from tilelang.devices.spec import BUNDLES, DMA_DIRECTIONS, ArchSpec
from tilelang.errors import DesignError
from tilelang.ir.dtypes import DTYPES, DType

Coord = tuple[int, int]  # (col, row)

#: Family name -> the architecture whose numbers it uses (aieml and aie2 share AIE2).
FAMILY_ARCH: dict[str, str] = {
    "aie1": "aie1",
    "aieml": "aie2",
    "aie2": "aie2",
    "aie2p": "aie2p",
}
TILE_KINDS: tuple[str, ...] = ("shim", "mem", "compute")
#: Where b lies relative to a -> (a's master bundle toward b, b's slave bundle from a).
LINK_BUNDLES: dict[Coord, tuple[str, str]] = {
    (0, 1): ("North", "South"),
    (0, -1): ("South", "North"),
    (1, 0): ("East", "West"),
    (-1, 0): ("West", "East"),
}
_PORT_DIRECTIONS = {"out": "out", "master": "out", "in": "in", "slave": "in"}
_BUNDLE_BY_LOWER = {b.lower(): b for b in BUNDLES}


def coord(tile: object) -> Coord:
    """``tile`` as a (col, row) tuple; DesignError unless it is a pair of ints."""
    if (
        isinstance(tile, (tuple, list))
        and len(tile) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in tile)
    ):
        return (tile[0], tile[1])
    raise DesignError(f"a tile is a (col, row) pair of ints, got {tile!r}")


def bundle_name(bundle: object) -> str:
    """The canonical bundle name ("north" -> "North"); DesignError if unknown."""
    name = _BUNDLE_BY_LOWER.get(bundle.lower()) if isinstance(bundle, str) else None
    if name is None:
        raise DesignError(f"unknown stream bundle {bundle!r}; expected one of {list(BUNDLES)}")
    return name


def port_direction(direction: object) -> str:
    """ "out" or "in" ("master"/"slave" accepted); DesignError otherwise."""
    way = _PORT_DIRECTIONS.get(direction) if isinstance(direction, str) else None
    if way is None:
        raise DesignError(f"unknown port direction {direction!r}; expected 'out' or 'in'")
    return way


def dma_direction(direction: object) -> str:
    """ "s2mm" or "mm2s" (any case); DesignError otherwise."""
    d = direction.lower() if isinstance(direction, str) else direction
    if d not in DMA_DIRECTIONS:
        raise DesignError(f"unknown DMA direction {direction!r}; expected one of {list(DMA_DIRECTIONS)}")
    return d


def dtype_of(dtype: DType | str) -> DType:
    """A DType from a DType or its name; DesignError for anything else."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str) and dtype in DTYPES:
        return DTYPES[dtype]
    raise DesignError(f"unknown dtype {dtype!r}; expected one of {sorted(DTYPES)}")


def check_layout(
    name: str,
    family: str,
    arch: ArchSpec,
    size: Coord,
    mem_rows: tuple[int, ...],
    noc_columns: tuple[int, ...],
) -> None:
    """Raise ValueError unless a device's layout is consistent (a table bug, not user input).

    Memory-tile rows must be rows 1..k directly above the shim row with at least
    one core row above them, as in every mlir-aie target model.
    """
    cols, rows = size
    if FAMILY_ARCH.get(family) != arch.name:
        raise ValueError(f"{name}: family {family!r} does not use arch {arch.name!r}")
    if cols < 1 or rows < 2:
        raise ValueError(f"{name}: bad array size {cols} x {rows}")
    if mem_rows != tuple(range(1, 1 + len(mem_rows))) or len(mem_rows) >= rows - 1:
        raise ValueError(f"{name}: memtile rows must be 1..k below the core rows, got {mem_rows}")
    if mem_rows and arch.mem is None:
        raise ValueError(f"{name}: arch {arch.name} has no memory tiles")
    if list(noc_columns) != sorted(set(noc_columns)) or not all(0 <= c < cols for c in noc_columns):
        raise ValueError(f"{name}: NoC columns must be sorted, unique and on the array")
