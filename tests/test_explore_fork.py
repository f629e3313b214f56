"""An evaluation child never finalises the MLIR objects its parent holds.

A process that emitted modules (MLIR contexts with worker threads) forks its evaluation children; a child
whose garbage collector finalised an inherited context would join threads it does not have and wait until
the evaluation's time limit: the point recorded as a timeout, silently. The children are forked with the
parent's objects frozen (gc.freeze), as the planner's solver children are.
"""

from __future__ import annotations

import time
from pathlib import Path

from fuzz_support import module_sources, through_reader

from tilelang.explore.evaluate import run_children

MODULE = Path(__file__).resolve().parent / "data" / "add_one_memcpy_nd.mlir"


def _read(text: str) -> dict:
    t0 = time.monotonic()
    through_reader(text, {})
    return {"status": "ok", "metrics": {"wall_seconds": time.monotonic() - t0}}


def test_an_evaluation_after_emitting_modules_does_not_wait_on_the_parents_mlir_threads() -> None:
    assert module_sources()  # this process now holds MLIR contexts of the emitted example modules
    (result,) = run_children([(MODULE.read_text(),)], 1, 30.0, _read)
    assert result["status"] == "ok", result  # before the freeze: "timeout" after 30 s
