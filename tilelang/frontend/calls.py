"""What calling a kernel does in the frontend: record an invocation inside a traced core body.

The numpy path and the conversions live in :mod:`tilelang.ir.calls` (re-exported
here); this module registers the tracer's recorder with it.
"""

from __future__ import annotations

from tilelang.errors import KernelError
from tilelang.frontend.builder import current_core
from tilelang.frontend.source import located, user_location
from tilelang.frontend.tracing import current_builder
from tilelang.ir.calls import (
    bind,
    bind_names,
    call_kernel,
    convert,
    host_value,
    run_extern,
    scalar,
    set_call_recorder,
)
from tilelang.ir.kernel import AnyKernel


def record_call(kernel: AnyKernel, args: tuple, kwargs: dict) -> bool:
    """Record a kernel call into the core being traced; False outside a core body (then it runs on numpy).

    Raises:
        KernelError: the call is made while another kernel is traced (kernels cannot call kernels), or its
            arguments do not bind to the kernel's parameters (at the caller's line).
    """
    outer = current_builder()
    if outer is not None:
        raise outer.fail(
            f"kernels cannot call kernels ({kernel.name!r} is called here); write the shared code as a plain "
            f"Python helper function taking and returning tiles, and call that from both kernels"
        )
    core = current_core()
    if core is None:
        return False
    try:
        values = bind(kernel, args, kwargs)
    except KernelError as e:
        raise KernelError(located(f"core {core.name!r}: {e}", user_location())) from None
    core.call(kernel, values)
    return True


set_call_recorder(record_call)

__all__ = ["bind", "bind_names", "call_kernel", "convert", "host_value", "record_call", "run_extern", "scalar"]
