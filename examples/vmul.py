"""API.md's example design at module level, for the command line:

    tilelang simulate examples/vmul.py:vector_scalar_mul
    tilelang emit examples/vmul.py:vector_scalar_mul --level physical

The design itself is examples/designs.py's ``vector_scalar_mul`` (API.md's text).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import designs  # noqa: E402

vector_scalar_mul = designs.vector_scalar_mul()
