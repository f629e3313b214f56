"""Design factories users parameterise instead of writing from scratch."""

from tilelang.library.matmul import matmul

__all__ = ["matmul"]
