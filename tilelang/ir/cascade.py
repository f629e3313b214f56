"""Cascade streams in the design IR: who sends and who takes each cascade, and the checks that need no plan.

A cascade (:class:`tilelang.ir.design.Cascade`) has exactly one producer core and one consumer core, each
passing it to kernel calls as a :class:`~tilelang.ir.design.CascadeArg`: to a written tile parameter (the
producer: the tile is sent after the call) or to a read-only one (the consumer: a tile is taken before the
call). The tile passes through a staging buffer of each core (``<cascade>_put`` / ``<cascade>_get``), a
local buffer the frontend declares. Which two tiles may be connected is device data
(``tilelang.devices.cascade_rules``); the planner places the two cores by that rule and the plan verifier
checks it (:func:`check_placement`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.devices.cascade_rules import cascade_ok, cascade_spec, describe_rule
from tilelang.errors import DesignError
from tilelang.ir.design import Call, CascadeArg, Core, Design, Loop, Port, Stmt, staging_name
from tilelang.ir.kernel import AnyKernel, Kernel, OpKind


def _at(loc: str | None) -> str:
    return f" (at {loc})" if loc else ""


@dataclass(frozen=True)
class CascadeEnds:
    """The two cores of one cascade and how many tiles each moves over a run."""

    producer: str
    consumer: str
    sent: int
    taken: int


def call_ports(call: Call, kernel: AnyKernel) -> list[tuple[str, Port, str]]:
    """``(cascade, port, parameter)`` for each cascade argument of ``call``."""
    return [(a.cascade, Port.PRODUCE if p.name in kernel.written else Port.CONSUME, p.name)
            for p, a in zip(kernel.params, call.args, strict=True) if isinstance(a, CascadeArg)]


def _uses(body: tuple[Stmt, ...], kernels: dict[str, AnyKernel], mult: int, out: dict) -> None:
    for s in body:
        if isinstance(s, Loop):
            _uses(s.body, kernels, mult * s.trip_count, out)
        elif isinstance(s, Call) and s.kernel in kernels:
            for name, port, _ in call_ports(s, kernels[s.kernel]):
                out[(name, port)] = out.get((name, port), 0) + mult


def core_uses(core: Core, kernels: dict[str, AnyKernel]) -> dict[tuple[str, Port], int]:
    """Tiles ``core`` sends (``PRODUCE``) or takes (``CONSUME``) per cascade over one run of its program."""
    out: dict[tuple[str, Port], int] = {}
    _uses(core.body, kernels, 1, out)
    return out


def cascade_ends(design: Design) -> dict[str, CascadeEnds]:
    """Producer and consumer of every cascade (verified designs only: see :func:`verify_cascades`)."""
    kernels = {k.name: k for k in design.kernels}
    prod: dict[str, tuple[str, int]] = {}
    cons: dict[str, tuple[str, int]] = {}
    for c in design.cores:
        for (name, port), n in core_uses(c, kernels).items():
            (prod if port is Port.PRODUCE else cons)[name] = (c.name, n)
    return {x.name: CascadeEnds(prod[x.name][0], cons[x.name][0], prod[x.name][1], cons[x.name][1])
            for x in design.cascades if x.name in prod and x.name in cons}


def _loads(kernel: Kernel, pname: str) -> bool:
    """Whether the traced kernel reads tile parameter ``pname`` anywhere."""
    return any(op.kind is OpKind.LOAD and op.operands[0].name == pname for op in kernel.body)


def check_call_arg(design_cascades: dict, kernel: AnyKernel, pname: str, ptype: object, cascade: str,
                   what: str) -> None:
    """One cascade argument against its parameter: a known cascade of the parameter's exact tile type.

    Raises:
        DesignError: naming the cascade, the parameter and ``what`` (the call and its line).
    """
    c = design_cascades.get(cascade)
    if c is None:
        raise DesignError(f"{what}: unknown cascade {cascade!r}")
    if ptype != c.elem:
        raise DesignError(f"{what}: parameter {pname!r} expects {ptype}, cascade {cascade!r} carries {c.elem}")
    if pname in kernel.written and isinstance(kernel, Kernel) and _loads(kernel, pname):
        raise DesignError(
            f"{what}: kernel {kernel.name!r} reads parameter {pname!r}, but it is the cascade {cascade!r} the call "
            f"sends, which holds no data of its own; only write it (c[...] = ...), or accumulate in a tl.buffer "
            f"and copy that into it"
        )


def verify_cascades(design: Design) -> None:
    """Every cascade check that needs no plan.

    Each cascade has one producer core and one consumer core (two different cores), each core sends at most
    one cascade and takes at most one (a core has one cascade output and one input), both move the same
    number of tiles, each core declares the staging buffer of its side with the cascade's element type, the
    element is whole cascade words of the device, and two pinned ends are neighbours by the device's rule.

    Raises:
        DesignError: naming the cascade and what is wrong.
    """
    if not design.cascades:
        return
    kernels = {k.name: k for k in design.kernels}
    cascades = {c.name: c for c in design.cascades}
    spec = cascade_spec(design.device)
    prod: dict[str, list[tuple[str, int]]] = {n: [] for n in cascades}
    cons: dict[str, list[tuple[str, int]]] = {n: [] for n in cascades}
    for core in design.cores:
        uses = core_uses(core, kernels)
        _check_core(core, uses, cascades)
        for (name, port), n in uses.items():
            (prod if port is Port.PRODUCE else cons)[name].append((core.name, n))
    for name, c in cascades.items():
        where = f"cascade {name!r}{_at(c.loc)}"
        if c.elem.nbytes % spec.word_bytes:
            raise DesignError(
                f"{where}: its tile {c.elem} is {c.elem.nbytes} B, not a whole number of {design.device.name}'s "
                f"{spec.word_bits}-bit cascade words ({spec.word_bytes} B); use a tile of a multiple of "
                f"{spec.word_bytes} B"
            )
        for side, ends in (("sends", prod[name]), ("takes", cons[name])):
            if not ends:
                verb = "sends on it (passes it to a written kernel parameter)" if side == "sends" else \
                    "takes from it (passes it to a read-only kernel parameter)"
                raise DesignError(f"{where}: no core {verb}; a cascade connects one producer core to one consumer")
            if len(ends) > 1:
                who = " and ".join(repr(e[0]) for e in ends)
                raise DesignError(f"{where}: cores {who} all {side[:-1]} it; a cascade has one producer and one "
                                  f"consumer core")
        (p, sent), (q, taken) = prod[name][0], cons[name][0]
        if sent != taken:
            raise DesignError(f"{where}: core {p!r} sends {sent} tiles but core {q!r} takes {taken}; they must "
                              f"match (every tile sent is taken)")
        a, b = design.core(p).tile, design.core(q).tile
        if a is not None and b is not None and not cascade_ok(design.device, a, b):
            raise DesignError(f"{where}: core {p!r} is pinned to {a} and core {q!r} to {b}, which are not "
                              f"cascade neighbours; {describe_rule(design.device)}")


def _check_core(core: Core, uses: dict[tuple[str, Port], int], cascades: dict) -> None:
    sides: dict[Port, list[str]] = {Port.PRODUCE: [], Port.CONSUME: []}
    for name, port in uses:
        sides[port].append(name)
    for port, names in sides.items():
        if len(names) > 1:
            verb = "sends" if port is Port.PRODUCE else "takes"
            raise DesignError(f"core {core.name!r} {verb} cascades {sorted(names)}; a core has one cascade "
                              f"{'output' if port is Port.PRODUCE else 'input'}")
    if set(sides[Port.PRODUCE]) & set(sides[Port.CONSUME]):
        name = sorted(set(sides[Port.PRODUCE]) & set(sides[Port.CONSUME]))[0]
        raise DesignError(f"cascade {name!r}: core {core.name!r} both sends and takes it; a cascade connects two "
                          f"neighbouring cores")
    local = {b.name: b for b in core.buffers}
    for name, port in uses:
        want = staging_name(name, port)
        b = local.get(want)
        if b is None or b.elem != cascades[name].elem:
            raise DesignError(f"core {core.name!r} uses cascade {name!r} but has no staging buffer {want!r} of "
                              f"{cascades[name].elem} (buffer @{want} : {cascades[name].elem} in the core)")


def staging_buffers(design: Design) -> set[str]:
    """Names of every cascade staging buffer of ``design``'s cores."""
    names = {staging_name(c.name, p) for c in design.cascades for p in Port}
    return {b.name for core in design.cores for b in core.buffers if b.name in names}


def check_placement(design: Design, placement: dict[str, tuple[int, int]]) -> str | None:
    """The first cascade whose two cores ``placement`` puts on tiles the device cannot connect, as a message."""
    for name, e in cascade_ends(design).items():
        a, b = placement.get(e.producer), placement.get(e.consumer)
        if a is None or b is None:
            continue
        if not cascade_ok(design.device, a, b):
            return (f"cascade {name!r}: core {e.producer!r} at {a} cannot send to core {e.consumer!r} at {b}; "
                    f"{describe_rule(design.device)}")
    return None


__all__ = ["CascadeEnds", "call_ports", "cascade_ends", "check_call_arg", "check_placement", "core_uses",
           "staging_buffers", "verify_cascades"]
