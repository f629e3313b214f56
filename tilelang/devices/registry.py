"""Look devices up by mlir-aie name: :func:`device` and :func:`devices`."""

from __future__ import annotations

from tilelang.devices import aie1, aie2, aie2p
from tilelang.devices.model import Device
from tilelang.errors import DesignError

_BY_NAME: dict[str, Device] = {d.name: d for d in (*aie1.DEVICES, *aie2.DEVICES, *aie2p.DEVICES)}
# Older mlir-aie spelling of the whole Phoenix array; accepted, not listed.
_ALIASES: dict[str, str] = {"npu1_4col": "npu1"}


def devices() -> list[str]:
    """The known device names, sorted.

    Returns:
        mlir-aie device names such as "npu1", "npu2", "xcvc1902", "xcve2802".
    """
    return sorted(_BY_NAME)


def device(name_or_device: str | Device) -> Device:
    """The Device for a name, or the Device itself.

    Args:
        name_or_device: an mlir-aie device name (see :func:`devices`) or a Device.

    Returns:
        The Device.

    Raises:
        DesignError: the name is unknown (the message lists the known names) or
            the argument is neither a str nor a Device.
    """
    if isinstance(name_or_device, Device):
        return name_or_device
    if not isinstance(name_or_device, str):
        raise DesignError(f"expected a device name or a Device, got {name_or_device!r}")
    key = name_or_device.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _BY_NAME:
        raise DesignError(f"unknown device {name_or_device!r}; known devices: {', '.join(devices())}")
    return _BY_NAME[key]
