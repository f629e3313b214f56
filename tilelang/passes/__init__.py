"""Design -> Design rewrites that keep what a design computes (API.md "Passes (v1)"; docs/passes.md).

- :func:`eliminate_redundant_transfers`: host moves re-reading data already on chip made resident;
- :func:`schedule_memory`: independent calls reordered to lower peak live memory;
- :func:`double_buffer`: deeper fifos where memory allows and the cost model predicts a gain;
- :func:`optimize`: all three, in that order.
"""

from tilelang.passes.double_buffer import double_buffer
from tilelang.passes.pipeline import PASSES, optimize, optimize_steps
from tilelang.passes.redundant import eliminate_redundant_transfers
from tilelang.passes.schedule import schedule_memory

__all__ = ["PASSES", "double_buffer", "eliminate_redundant_transfers", "optimize", "optimize_steps", "schedule_memory"]
