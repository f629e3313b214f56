"""``tl.optimize``: the passes in order, each a Design -> Design rewrite that keeps results.

The order (docs/passes.md):

1. ``eliminate_redundant_transfers``: first, because data held resident
   changes what every later pass sees (fewer moves, longer-held elements);
2. ``schedule_memory``: reorders calls so local buffers live less at once,
   which lets ``tl.plan`` pack them into fewer bytes;
3. ``double_buffer``: last, spending the memory the first two freed on
   deeper fifos where the cost model predicts overlap.
"""

from __future__ import annotations

from collections.abc import Callable

from tilelang.errors import DesignError
from tilelang.ir.design import Design
from tilelang.passes.double_buffer import double_buffer
from tilelang.passes.redundant import eliminate_redundant_transfers
from tilelang.passes.schedule import schedule_memory

#: (name, pass) in the order ``optimize`` runs them.
PASSES: tuple[tuple[str, Callable[[Design], Design]], ...] = (
    ("eliminate_redundant_transfers", eliminate_redundant_transfers),
    ("schedule_memory", schedule_memory),
    ("double_buffer", double_buffer),
)


def optimize_steps(design: Design) -> list[tuple[str, Design]]:
    """The design after each pass: ``[("input", design), (pass name, design after it), ...]``.

    Raises:
        DesignError: ``design`` is not a Design or does not verify.
        PlanError: a pass that plans the design (double_buffer) could not plan it.
    """
    if not isinstance(design, Design):
        raise DesignError(f"tl.optimize takes a design (from @tl.design or tl.ir.parse), got {type(design).__name__}")
    out = [("input", design)]
    for name, fn in PASSES:
        out.append((name, fn(out[-1][1])))
    return out


def optimize(design: Design) -> Design:
    """All passes in order (``PASSES``); a new Design whose printed IR shows what changed.

    Args:
        design: a traced or parsed design.

    Returns:
        The optimized design, computing the same outputs.

    Raises:
        DesignError: ``design`` is not a Design or does not verify.
    """
    return optimize_steps(design)[-1][1]


__all__ = ["PASSES", "optimize", "optimize_steps"]
