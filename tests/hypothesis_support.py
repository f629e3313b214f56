"""Property checks split into a quick part (the default run) and a longer part (``-m slow``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, settings


def quick_and_slow(quick: int, slow: int, given_: Callable, check: Callable, **kwargs: object) -> tuple[Callable, Callable]:
    """A property check as two tests: ``quick`` examples in the default run, ``slow`` examples under ``-m slow``.

    ``given_`` is a ``hypothesis.given(...)`` decorator, ``check`` the test body; ``kwargs`` go to
    ``hypothesis.settings`` for both. Returns (quick test, slow test), to bind to ``test_`` names.
    """
    opts = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], **kwargs}
    first = settings(max_examples=quick, **opts)(given_(check))
    more = pytest.mark.slow(settings(max_examples=slow, **opts)(given_(check)))
    return first, more
