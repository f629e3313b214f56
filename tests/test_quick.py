"""Calling a design on numpy arrays plans, simulates and returns its outputs (API.md "Designs")."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang as tl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import designs  # noqa: E402


def test_design_call_returns_the_output_and_fills_the_given_array():
    d = designs.vector_scalar_mul()
    a = np.arange(4096, dtype=np.int32)
    c = np.zeros(4096, np.int32)
    out = d(a, c)
    np.testing.assert_array_equal(out, a * 3)
    np.testing.assert_array_equal(c, a * 3)
    np.testing.assert_array_equal(d(A=a), a * 3)


def test_design_call_errors_name_the_tensors():
    d = designs.vector_scalar_mul()
    a = np.arange(4096, dtype=np.int32)
    with pytest.raises(tl.DesignError, match=r"has no parameter 'B'; parameters are \['A', 'C'\]"):
        d(B=a)
    with pytest.raises(tl.DesignError, match=r"got two values for 'A'"):
        d(a, A=a)
