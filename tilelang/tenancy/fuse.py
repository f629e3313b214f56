"""``tl.fuse``: horizontal fusion of independent designs into one design for one device.

The i-th design's tensors, fifos, cores, links, moves and traced kernels are
renamed ``d{i}_<name>`` and placed side by side in one Design; its runtime
sequence interleaves the designs' moves round robin (tilelang/ir/rename.py,
``merge_designs``). A move waits only on earlier moves sharing a fifo with it
(docs/simulator.md, "host"), and the renamed designs share no fifo, so every
move of the fused design waits on exactly what it waited on alone: the fusion
adds no dependency and cannot deadlock where the designs did not.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilelang.devices import Device
from tilelang.devices import device as lookup_device
from tilelang.errors import DesignError
from tilelang.ir.design import Design
from tilelang.ir.rename import merge_designs, prefix_design


def _check(designs: Sequence[Design], dev: Device) -> None:
    if not designs:
        raise DesignError("tl.fuse needs at least one design")
    for i, d in enumerate(designs):
        if not isinstance(d, Design):
            raise DesignError(f"tl.fuse: item {i} is a {type(d).__name__}, not a Design")
        if d.device.name != dev.name:
            raise DesignError(f"tl.fuse: design {i} ({d.name!r}) targets {d.device.name}, not {dev.name}; "
                              f"build it for {dev.name} (library designs take device=...)")
    cores = 0
    for i, d in enumerate(designs):
        cores += len(d.cores)
        if cores > len(dev.tiles("compute")):
            raise DesignError(f"tl.fuse: design {i} ({d.name!r}) brings the fused design to {cores} cores; "
                              f"{dev.name} has {len(dev.tiles('compute'))} compute tiles")
    pins: dict[tuple[int, int], str] = {}
    for i, d in enumerate(designs):
        for c in d.cores:
            if c.tile is not None:
                if c.tile in pins:
                    raise DesignError(f"tl.fuse: design {i} ({d.name!r}) pins core {c.name!r} to {c.tile}, which "
                                      f"{pins[c.tile]} also pins; leave one unpinned")
                pins[c.tile] = f"core {c.name!r} of an earlier design"


def fuse(designs: Sequence[Design], device: str | Device = "npu1", name: str = "fused") -> Design:
    """One design computing every design of ``designs`` side by side (API.md "Tenancy and fusion").

    Args:
        designs: independent designs, each built for ``device``.
        device: the device they share.
        name: the fused design's name.

    Returns:
        A Design whose i-th design's tensor ``A`` is ``d{i}_A`` (likewise fifos,
        cores, links, moves and traced kernels; extern kernels keep their symbol).

    Raises:
        DesignError: a design targets another device, the designs together need
            more cores than the device has or pin one tile twice (naming the design),
            or two different extern kernels share a name. A fused design that cannot
            be planned raises the planner's PlanError when planned.
    """
    dev = lookup_device(device)
    designs = list(designs)
    _check(designs, dev)
    renamed = [prefix_design(d, f"d{i}_") for i, d in enumerate(designs)]
    fused = merge_designs(name, dev, renamed)
    from tilelang.ir.verify import verify_design

    verify_design(fused)
    return fused
