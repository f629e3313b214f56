"""Transfer across devices (Glimpse, DAC'22): trials measured on one device warm-start a search on another.

The surrogate's input is a point's arguments *and* its device's features (array
shape, MACs per cycle per dtype, memory sizes, stream width, DMA channels, clock:
:func:`device_features`), so trials of several devices share one model. The model
is a distance-weighted k-nearest-neighbour regression over standardised features,
predicting a trial's cycles as a z-score within its own device (a device's scale of
cycles is not transferred, its ranking is); an infeasible trial counts as worse than
every feasible one of its device. The device features are weighted as one feature
in all: with a single source device they cannot teach how devices differ, they only
make the target's own trials, once measured, nearer than the source's, so measured
points take over from transferred ones.

:func:`rank` orders the target space's points by the model's prediction; the search
(``tl.explore(..., warm_start=[...])``) evaluates the best-predicted points first,
refitting after every batch, before the sampler takes over.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.errors import TileLangError

if TYPE_CHECKING:
    from tilelang.devices import Device
    from tilelang.explore.result import Exploration

#: Neighbours averaged per prediction.
NEIGHBOURS = 5
#: A z-score given to infeasible trials: beyond every feasible one of their device.
INFEASIBLE = 3.0


def device_features(device: str | Device) -> dict[str, float]:
    """Numeric features of a device, each log2 of a positive count (0 for none).

    Args:
        device: a device name or model.

    Returns:
        ``{"dev.rows", "dev.cols", "dev.macs.bf16", "dev.macs.i8", "dev.macs.i16", "dev.core_bytes",
        "dev.mem_bytes", "dev.stream_bits", "dev.dma.core", "dev.dma.mem", "dev.dma.shim", "dev.clock"}``.

    Raises:
        TileLangError: an unknown device.
    """
    from tilelang.devices import device as get_device

    dev = get_device(device) if isinstance(device, str) else device
    compute, mems = dev.tiles("compute"), dev.tiles("mem")
    shims = [t for t in dev.tiles("shim") if dev.is_noc_shim(t)]
    raw = {
        "dev.rows": len({r for _, r in compute}),
        "dev.cols": len({c for c, _ in compute}),
        **{f"dev.macs.{d}": dev.macs_per_cycle(d) if dev.supports_dtype(d) else 0 for d in ("bf16", "i8", "i16")},
        "dev.core_bytes": dev.memory_bytes(compute[0]),
        "dev.mem_bytes": dev.memory_bytes(mems[0]) if mems else 0,
        "dev.stream_bits": dev.stream_bits,
        "dev.dma.core": dev.dma_channels(compute[0], "s2mm") + dev.dma_channels(compute[0], "mm2s"),
        "dev.dma.mem": dev.dma_channels(mems[0], "s2mm") + dev.dma_channels(mems[0], "mm2s") if mems else 0,
        "dev.dma.shim": sum(dev.dma_channels(t, "mm2s") + dev.dma_channels(t, "s2mm") for t in shims),
        "dev.clock": dev.clock_hz / 1e6,
    }
    return {k: math.log2(v) if v > 0 else 0.0 for k, v in raw.items()}


def point_features(kwargs: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Numeric features of a factory's arguments: log2 of positive numbers, a tuple or dict per part,
    a dtype by its bits; other values (strings, the device) are left out."""
    out: dict[str, float] = {}
    for name, v in kwargs.items():
        key = f"{prefix}{name}"
        if name == "device" and not prefix:
            continue
        if isinstance(v, dict):
            out.update(point_features(v, f"{key}."))
        elif isinstance(v, list | tuple):
            out.update(point_features({str(i): x for i, x in enumerate(v)}, f"{key}."))
        elif isinstance(v, bool):
            out[key] = float(v)
        elif isinstance(v, int | float):
            out[key] = math.log2(v) if v > 0 else 0.0
        elif hasattr(v, "bits") and isinstance(v.bits, int):
            out[key] = math.log2(v.bits)
    return out


class Observation:
    """One measured point: its features, device and outcome.

    Attributes:
        features: point and device features.
        device: the device's name (z-scores are per device).
        cycles: the objective's value (None when the point failed).
    """

    __slots__ = ("cycles", "device", "features")

    def __init__(self, features: dict[str, float], device: str, cycles: float | None) -> None:
        self.features = features
        self.device = device
        self.cycles = cycles


def observations(ex: Exploration, objective: str = "cycles") -> list[Observation]:
    """The trials of an exploration as observations (its space's fixed arguments give each point's rest).

    Raises:
        TileLangError: the exploration does not record its space's arguments or device.
    """
    if ex.fixed is None or "device" not in ex.fixed:
        raise TileLangError("warm_start: an Exploration from tl.explore over a space fixing 'device' is needed")
    device = _device_name(ex.fixed["device"])
    feats = device_features(ex.fixed["device"])
    out = []
    for t in ex.trials:
        if t.status == "timeout":
            continue  # unknown outcome: neither good nor infeasible
        kwargs = _kwargs(ex.fixed, t.params)
        v = t.value(objective) if t.ok else None
        prior = {"prior": math.log2(t.prior)} if t.prior else {}
        out.append(Observation({**point_features(kwargs), **feats, **prior}, device,
                               v if v is not None and math.isfinite(v) else None))
    return out


def _device_name(device: Any) -> str:
    return device if isinstance(device, str) else device.name


def _kwargs(fixed: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    from tilelang.explore.space import PLAN_ARG, _assign

    kwargs: dict[str, Any] = {}
    for name, value in [*fixed.items(), *params.items()]:
        _assign(kwargs, name, value)
    kwargs.pop(PLAN_ARG, None)
    return kwargs


def _targets(obs: Sequence[Observation]) -> np.ndarray:
    """Each observation's value as a z-score of log cycles within its device; failures beyond them."""
    y = np.zeros(len(obs))
    for dev in sorted({o.device for o in obs}):
        idx = [i for i, o in enumerate(obs) if o.device == dev]
        ok = [i for i in idx if obs[i].cycles is not None and obs[i].cycles > 0]  # type: ignore[operator]
        logs = np.log([obs[i].cycles for i in ok]) if ok else np.zeros(0)  # type: ignore[misc]
        mu, sd = (float(logs.mean()), float(logs.std())) if len(ok) > 1 else (0.0, 0.0)
        for j, i in enumerate(ok):
            y[i] = (logs[j] - mu) / sd if sd > 0 else 0.0
        worst = max(INFEASIBLE, float(y[ok].max()) + 1.0) if ok else INFEASIBLE
        for i in idx:
            if i not in ok:
                y[i] = worst
    return y


def rank(candidates: Sequence[dict[str, float]], obs: Sequence[Observation]) -> list[int]:
    """Indices of ``candidates`` (features, the target device's included) from best to worst predicted.

    A feature some observations or candidates lack (the prior's estimate of a point it finds
    infeasible) counts as its mean there; one that no observation or no candidate has is left out.
    Ties keep the candidates' order, so the ranking is deterministic.
    """
    if not obs or not candidates:
        return list(range(len(candidates)))
    names = sorted(set().union(*(o.features for o in obs)) & set().union(*candidates))
    nan = math.nan
    x_obs = np.array([[o.features.get(n, nan) for n in names] for o in obs])
    x_new = np.array([[c.get(n, nan) for n in names] for c in candidates])
    both = np.vstack([x_obs, x_new])
    mu = np.nanmean(both, axis=0)
    x_obs, x_new = np.where(np.isnan(x_obs), mu, x_obs), np.where(np.isnan(x_new), mu, x_new)
    sd = np.vstack([x_obs, x_new]).std(axis=0)
    keep = sd > 0
    z_obs, z_new = (x_obs[:, keep] - mu[keep]) / sd[keep], (x_new[:, keep] - mu[keep]) / sd[keep]
    dev_cols = np.array([n.startswith("dev.") for n in names])[keep]
    if dev_cols.any():  # the device block weighs as one feature
        w = np.where(dev_cols, 1.0 / math.sqrt(int(dev_cols.sum())), 1.0)
        z_obs, z_new = z_obs * w, z_new * w
    y = _targets(obs)
    d = np.sqrt(((z_new[:, None, :] - z_obs[None, :, :]) ** 2).sum(axis=2))
    k = min(NEIGHBOURS, len(obs))
    near = np.argsort(d, axis=1, kind="stable")[:, :k]
    dn = np.take_along_axis(d, near, axis=1)
    weights = 1.0 / (dn + 1e-6)
    pred = (weights * y[near]).sum(axis=1) / weights.sum(axis=1)
    return sorted(range(len(candidates)), key=lambda i: (pred[i], i))
