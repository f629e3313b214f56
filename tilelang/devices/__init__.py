"""Hardware models of AIE arrays (API.md, section Devices).

``device(name)`` gives a :class:`Device` for an mlir-aie device name; ``devices()``
lists the names. The numbers and their sources are described in docs/devices.md.
"""

from tilelang.devices.model import Coord, Device
from tilelang.devices.registry import device, devices
from tilelang.devices.spec import BUNDLES, ArchSpec, TileSpec

__all__ = ["BUNDLES", "ArchSpec", "Coord", "Device", "TileSpec", "device", "devices"]
