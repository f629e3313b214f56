"""Test-suite options: checks marked ``slow`` run only when asked for.

``python -m pytest`` (README's command, what CI runs) keeps to the quick suite; ``-m slow`` runs just the
slow checks, ``TILELANG_SLOW=1`` runs everything. The benchmarks cover what the slow checks do at larger sizes.
"""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("TILELANG_SLOW") or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow or TILELANG_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
