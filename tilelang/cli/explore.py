"""``tilelang explore FILE.py:FACTORY --param NAME=V1,V2 ...``: a design-space search from the command line."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from tilelang.cli.load import UsageError, _import, check_writable, positive_int, seed_type


def add_parser(sub: Any) -> None:
    """The ``explore`` subcommand's arguments."""
    x = sub.add_parser("explore", help="search a design factory's parameters for the fastest design",
                       description="search a design factory's parameters for the fastest design (tl.explore: "
                       "the tiler's estimate first, then Optuna's TPE sampler over simulated points)")
    x.add_argument("factory", help="FILE.py:NAME (a function returning a design), or library:NAME (tl.library)")
    x.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2",
                   help="an explored argument and its choices (NAME.KEY sets a dict key; RxC is a grid)")
    x.add_argument("--fixed", action="append", default=[], metavar="NAME=VALUE",
                   help="an argument every point shares (plan.strategy=greedy sets tl.plan's)")
    x.add_argument("--budget", type=int, default=40, help="most points to evaluate")
    x.add_argument("--objective", default="cycles", help="cycles, cores, onchip_bytes, ddr_bytes or peak")
    x.add_argument("--seed", type=seed_type, default=0,
                   help="seed of the sampler (the same seed gives the same trials; an int in [0, 2**32 - 1])")
    x.add_argument("--backend", choices=["local", "ray"], default="local",
                   help="local: a process pool on this machine; ray: Ray tasks (a local instance, or --address)")
    x.add_argument("--workers", type=int, default=None, help="evaluations at once (default: the cores)")
    x.add_argument("--address", default=None, help="Ray cluster to join (default: a local instance)")
    x.add_argument("--storage", default=None, help="study file to keep and resume (.db: SQLite, else a journal); searches of the same space and "
                   "seed running at once on one file share its budget")
    x.add_argument("--time-limit", type=float, default=None, help="seconds per evaluation (then: timeout)")
    x.add_argument("--out", default="explore", help="directory for convergence.png and pareto.png")
    x.add_argument("--top", type=positive_int, default=20, help="rows of the final table")
    x.add_argument("--json", action="store_true", help="print the trials as JSON")
    x.add_argument("--strategy", choices=["sample", "bound"], default="sample",
                   help="sample: the prior's best points, then Optuna's TPE; bound: every point in the prior's "
                   "order, skipping those whose lower bound on cycles is no better than the best found (with a "
                   "budget covering the space, the best is then the optimum)")
    x.add_argument("--front", choices=["cores"], default=None,
                   help="with --strategy bound: prove the Pareto front of cycles and cores (the fastest point "
                   "for each number of cores) instead of the best cycles alone")
    x.add_argument("--warm-start", action="append", default=[], metavar="FILE.json",
                   help="a search of the same factory on another device (its --json output) to start from; "
                   "repeatable")


def run(args: argparse.Namespace) -> int:
    """Run the search; the table (or JSON) on standard output, progress on standard error."""
    import tilelang as tl

    check_writable(args.out, "--out", directory=True)
    factory = load_factory(args.factory)
    params = _pairs(args.param, "--param", many=True)
    fixed = _pairs(args.fixed, "--fixed", many=False)
    if not params:
        raise UsageError("explore needs at least one --param NAME=V1,V2")
    space = tl.Space(factory, fixed=fixed, params=params)
    tty = sys.stderr.isatty()

    def progress(done: int, want: int, best: float | None) -> None:
        text = f"trials {done}/{want}, best {args.objective} {best if best is not None else '-'}"
        sys.stderr.write(("\r" + text) if tty else text + "\n")
        sys.stderr.flush()

    warm = [_load_exploration(Path(f)) for f in args.warm_start] or None
    ex = tl.explore(space, budget=args.budget, objective=args.objective, seed=args.seed, backend=args.backend,
                    workers=args.workers, storage=args.storage, time_limit=args.time_limit,
                    address=args.address, progress=progress, warm_start=warm, strategy=args.strategy,
                    front=args.front)
    if tty:
        sys.stderr.write("\n")
    plots = _plots(ex, Path(args.out), args.objective)
    if args.json:
        record = json.loads(ex.to_json())
        record["plots"] = [str(p) for p in plots]
        print(json.dumps(record, indent=1))
        return 0
    print(ex.table(limit=args.top))
    best = ex.best
    if best is not None:
        print(f"best: trial {best.number}, {best.metrics[args.objective]} {args.objective}")
    for p in plots:
        print(f"wrote {p}")
    return 0


def _plots(ex: Any, out: Path, objective: str) -> list[Path]:
    from tilelang.errors import TileLangError

    if not ex.ok_trials:
        return []
    try:
        second = "cores" if objective != "cores" else "cycles"
        return [ex.plot_convergence(out / "convergence.png"), ex.plot_pareto(out / "pareto.png", (objective, second))]
    except TileLangError as e:  # no matplotlib: the search's results stand without plots
        print(f"note: no plots ({e})", file=sys.stderr)
        return []


def _load_exploration(path: Path) -> Any:
    """An earlier search's ``--json`` output, for ``--warm-start``.

    Raises:
        UsageError: no such file.
        TileLangError: not an exploration's JSON.
    """
    from tilelang.explore.result import Exploration

    if not path.is_file():
        raise UsageError(f"--warm-start: no such file: {path}")
    return Exploration.from_json(path.read_text(), where=str(path))


def load_factory(spec: str) -> Any:
    """The factory named by ``FILE.py:NAME``, ``library:NAME`` or ``module.path:NAME``.

    Raises:
        UsageError: no such file, module or name, or a name that is not callable.
    """
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise UsageError(f"name the factory as FILE.py:NAME or library:NAME, got {spec!r}")
    if where.endswith(".py"):
        if not Path(where).is_file():
            raise UsageError(f"no such file: {where}")
        module = _import(Path(where))
    else:
        try:
            module = importlib.import_module("tilelang.library" if where == "library" else where)
        except ImportError as e:
            raise UsageError(f"cannot import {where!r}: {e}") from None
    obj = getattr(module, name, None)
    if not callable(obj):
        raise UsageError(f"{where} has no callable {name!r}")
    return obj


def _pairs(texts: list[str], option: str, many: bool) -> dict[str, Any]:
    """``NAME=VALUE`` (``NAME=V1,V2`` with ``many``) options as a dict; a name given twice is an error."""
    out: dict[str, Any] = {}
    for text in texts:
        name, value = _pair(text, option, many)
        if name in out:
            raise UsageError(f"{option}: {name!r} is given twice ({option} {name}=...); give its values once")
        out[name] = value
    return out


def _pair(text: str, option: str, many: bool) -> tuple[str, Any]:
    name, eq, values = text.partition("=")
    if not eq or not name or not values:
        raise UsageError(f"{option}: expected NAME=VALUE{',VALUE...' if many else ''}, got {text!r}")
    if many:
        parts = values.split(",")
        if any(not v.strip() for v in parts):
            raise UsageError(f"{option}: {text!r} has an empty value between commas")
        return name, [parse_value(v) for v in parts]
    return name, parse_value(values)


def parse_value(text: str) -> Any:
    """A command-line value: int, float, RxC grid, dtype name, none/true/false, or the string itself."""
    from tilelang.ir.dtypes import DTYPES

    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if low in DTYPES:
        return DTYPES[low]
    rows, x, cols = low.partition("x")
    if x and rows.isdigit() and cols.isdigit():
        return (int(rows), int(cols))
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
