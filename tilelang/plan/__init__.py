"""The planner: a traced design into a Plan (API.md "Planning"; docs/planner.md).

- ``plan(design, solver="cbc", time_limit=60, strategy="ilp")`` makes every
  decision the hardware needs: placement of cores, links and host ends,
  shared-memory vs streamed fifos with their DMA channels, buffers (memory,
  bank, offset) and congestion-aware routes;
- ``route(device, flows, ...)`` is the router on its own, returning a ``Routing``;
- ``tile_contraction(spec, sizes, dtypes, device, ...)`` is the tiling ILP,
  returning a ``Tiling``.
"""

from tilelang.plan.driver import STRATEGIES, plan
from tilelang.plan.routing import Routing, route
from tilelang.plan.tiling import Tiling, tile_contraction

__all__ = ["STRATEGIES", "Routing", "Tiling", "plan", "route", "tile_contraction"]
