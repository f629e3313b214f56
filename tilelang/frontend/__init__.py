"""The decorators and tracing proxies: Python functions traced into kernel and design IR."""

# Kernel calls made while a core body is traced are recorded, not run: register the recorder.
from tilelang.frontend import calls  # noqa: F401
