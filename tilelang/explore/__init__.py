"""Design-space exploration: ``tl.Space`` and ``tl.explore`` (API.md "Explore"; docs/explore.md).

A trial builds a point's design, plans it and simulates it in timing mode; an
Optuna study, warm-started by the tiler's analytic estimate (or, with
``warm_start``, by trials measured on other devices: ``transfer.py``), picks the points.
Optuna, Ray and matplotlib are imported only when a search or a plot needs them.
"""

from tilelang.explore.result import Exploration, Trial
from tilelang.explore.search import explore
from tilelang.explore.space import Space

__all__ = ["Exploration", "Space", "Trial", "explore"]
