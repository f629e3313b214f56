"""What calling a kernel or a design on numpy arrays does, and the value conversions it shares.

A kernel called outside a traced core body runs on numpy (:func:`call_kernel`);
the frontend's tracer takes calls made inside one through :func:`set_call_recorder`.
The simulator and the MLIR host runner convert and bind arrays with the same
functions, so every layer agrees on dtypes, shapes and argument binding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from tilelang.errors import DesignError, KernelError
from tilelang.ir import semantics
from tilelang.ir.dtypes import DType
from tilelang.ir.kernel import AnyKernel, ExternKernel, Kernel, Param
from tilelang.ir.source import located, user_location
from tilelang.ir.types import TileType

if TYPE_CHECKING:
    from tilelang.ir.design import Design


def bind_names(what: str, names: list[str], args: tuple, kwargs: dict, error: type[Exception]) -> dict[str, object]:
    """Values bound to ``names`` by position then by keyword, as Python binds a call.

    Raises:
        error: too many values, an unknown or repeated name (``what`` names the callee).
    """
    if len(args) > len(names):
        raise error(f"{what}() takes {len(names)} arguments, got {len(args)}")
    bound: dict[str, object] = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k not in names:
            raise error(f"{what}() has no parameter {k!r}; parameters are {names}")
        if k in bound:
            raise error(f"{what}() got two values for {k!r}")
        bound[k] = v
    return bound


def bind(kernel: AnyKernel, args: tuple, kwargs: dict) -> list[object]:
    """Arguments in parameter order, or a KernelError naming what is missing."""
    names = [p.name for p in kernel.params]
    bound = bind_names(kernel.name, names, args, kwargs, KernelError)
    missing = [n for n in names if n not in bound]
    if missing:
        raise KernelError(f"{kernel.name}() is missing arguments {missing}")
    return [bound[n] for n in names]


#: Takes a kernel call before it runs on numpy: returns True when it recorded the call instead
#: (a design tracer does, while it traces a core body). Set by the frontend, which sits above the IR.
CallRecorder = Callable[[AnyKernel, tuple, dict], bool]
_recorder: CallRecorder | None = None
#: Plans and simulates a design called on arrays (``Design.__call__``): set by the public API layer,
#: which may use the planner and the simulator; the IR may not.
DesignRunner = Callable[["Design", tuple, dict], object]
_design_runner: DesignRunner | None = None


def set_call_recorder(recorder: CallRecorder) -> None:
    """Let ``recorder`` see every kernel call first (one recorder; a later one replaces it)."""
    global _recorder
    _recorder = recorder


def set_design_runner(runner: DesignRunner) -> None:
    """What calling a Design on arrays does (plan and simulate); set by ``tilelang.api``."""
    global _design_runner
    _design_runner = runner


def run_design(design: Design, arrays: tuple, named: dict) -> object:
    """Call the registered design runner.

    Raises:
        DesignError: no runner is registered (``import tilelang`` registers one).
    """
    if _design_runner is None:
        raise DesignError(f"calling design {design.name!r} needs the planner and the simulator: import tilelang first")
    return _design_runner(design, arrays, named)


def call_kernel(kernel: AnyKernel, args: tuple, kwargs: dict) -> None:
    """A kernel called as a function: recorded when a tracer takes it, else run on numpy arrays.

    Raises:
        KernelError: arguments that do not bind or do not fit the parameters (at the caller's line).
    """
    if _recorder is not None and _recorder(kernel, args, kwargs):
        return None
    where = user_location()
    try:
        values = bind(kernel, args, kwargs)
        arrays = {p.name: host_value(kernel, p, v) for p, v in zip(kernel.params, values, strict=True)}
    except KernelError as e:
        raise KernelError(located(str(e), where)) from None
    if isinstance(kernel, Kernel):
        semantics.run(kernel, arrays)
    else:
        run_extern(kernel, [arrays[p.name] for p in kernel.params])
    return None


def run_extern(kernel: ExternKernel, values: list) -> None:
    """Call ``kernel``'s numpy reference, which must write its outputs in place.

    Raises:
        KernelError: no reference, or a reference that returns a value (its result would be lost).
    """
    if kernel.reference is None:
        raise KernelError(f"extern kernel {kernel.name!r} has no numpy reference; pass reference= to tl.extern_kernel "
                          "(or kernels= to tl.read_mlir), or simulate with mode='timing' for cycles alone")
    args = [v if isinstance(v, np.ndarray) and v.ndim else v[()] if isinstance(v, np.ndarray) else v for v in values]
    result = kernel.reference(*args)
    if result is not None:
        outs = ", ".join(p.name for p in kernel.params if p.name in kernel.written) or "its output parameter"
        raise KernelError(
            f"extern kernel {kernel.name!r}: reference returned a {type(result).__name__} instead of writing its "
            f"output in place; assign into the written parameter ({outs}), e.g. {outs.split(', ')[0]}[...] = result, "
            f"and return None"
        )


def scalar(value: object, dt: DType, what: str) -> np.ndarray:
    """A Python or numpy number as a 0-d array of ``dt``; KernelError if it does not fit."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise KernelError(f"{what}: expected a {dt} number, got {value!r}")
    if dt.is_int:
        if float(value) != int(value):
            raise KernelError(f"{what}: {value!r} is not an integer ({dt})")
        info = np.iinfo(dt.numpy)
        if not info.min <= int(value) <= info.max:
            raise KernelError(f"{what}: {value} does not fit in {dt}")
        return np.asarray(int(value), dtype=dt.numpy)
    return np.asarray(value, dtype=np.float32).astype(dt.numpy)


def host_value(kernel: AnyKernel, p: Param, v: object) -> np.ndarray:
    """The numpy value a kernel call uses for parameter ``p``: written tiles as given (checked),
    read-only tiles converted to the parameter's dtype, scalars as 0-d arrays.

    Raises:
        KernelError: a wrong shape, a written array of another dtype or read-only, a value that does not fit.
    """
    what = f"{kernel.name}(): argument {p.name!r}"
    if isinstance(p.type, DType):
        return scalar(v, p.type, what)
    t: TileType = p.type
    if not isinstance(v, np.ndarray):
        raise KernelError(f"{what}: expected a numpy array of shape {t.shape} and dtype {t.dtype}, got {type(v).__name__}")
    if v.shape != t.shape:
        raise KernelError(f"{what}: shape {v.shape} does not match the parameter's {t.shape}")
    if p.name in kernel.written:
        if v.dtype != t.dtype.numpy:
            raise KernelError(f"{what}: the kernel writes it, so it must have dtype {t.dtype.numpy}, got {v.dtype}")
        if not v.flags.writeable:
            raise KernelError(f"{what}: the kernel writes it, but the array is read-only")
        return v
    return convert(v, t.dtype, what)


def convert(v: np.ndarray, dt: DType, what: str) -> np.ndarray:
    """``v`` as dtype ``dt``: floats round (f32 -> bf16 to nearest even); ints must fit exactly."""
    if v.dtype == dt.numpy:
        return v
    src_float = v.dtype.kind == "f" or v.dtype == np.dtype(dt.numpy) or v.dtype.name == "bfloat16"
    if dt.is_float and (src_float or v.dtype.kind in "iu"):
        return v.astype(np.float32).astype(dt.numpy) if dt.name == "bf16" else v.astype(dt.numpy)
    if dt.is_int and v.dtype.kind in "iu":
        # by value, not by a round trip: uint32 4294967295 survives int32 -1 and back, but does not fit
        info = np.iinfo(dt.numpy)
        if v.size and (int(v.min()) < info.min or int(v.max()) > info.max):
            raise KernelError(f"{what}: values of dtype {v.dtype} do not fit in {dt} "
                              f"(range {info.min} to {info.max}, got {int(v.min())} to {int(v.max())})")
        return v.astype(dt.numpy)
    raise KernelError(f"{what}: cannot use an array of dtype {v.dtype} for {dt}")
