"""Spatial multi-tenancy and horizontal fusion (docs/tenancy.md).

- :func:`fuse`: independent designs side by side in one design.
- :func:`colocate`: designs on disjoint column partitions of one device, one MultiPlan.
- :func:`serve`: a discrete-event serving simulator over a request trace.

Nothing below this package imports it.
"""

from tilelang.tenancy.colocate import colocate
from tilelang.tenancy.fuse import fuse
from tilelang.tenancy.serve import Costs, Request, ServeReport, ServiceTimes, serve

__all__ = ["Costs", "Request", "ServeReport", "ServiceTimes", "colocate", "fuse", "serve"]
