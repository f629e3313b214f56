"""The planner: a traced design into a Plan (API.md "Planning").

``plan(design)`` makes every decision the hardware needs: placement of cores,
links and host ends, shared-memory vs streamed fifos with their DMA channels,
buffers (memory, bank, offset) and congestion-aware routes. ``route(device,
flows)`` is the router on its own; ``tile_contraction`` the tiling ILP.
See docs/planner.md.
"""

from tilelang.plan.driver import STRATEGIES, plan
from tilelang.plan.routing import Routing, route

__all__ = ["STRATEGIES", "Routing", "plan", "route"]
