"""``tl.Space``: a design factory, its fixed arguments and the choices of its explored parameters.

A point is one choice per parameter. Parameter names are the factory's keyword
arguments; a dotted name sets one key of a dict argument (``"tiling.m"`` sets
``tiling["m"]``), so a tile can be explored one size at a time. The argument
``plan`` is not passed to the factory: it holds the options of ``tl.plan``
(``{"strategy": "greedy"}``; ``"plan.strategy"`` to explore them).

Points are enumerated in a fixed order (the product of the choices, the first
parameter varying slowest), so a point is also its tuple of choice indices.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import marshal
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from tilelang.errors import TileLangError

#: The argument holding ``tl.plan``'s options rather than the factory's.
PLAN_ARG = "plan"
#: Options of ``tl.plan`` a space may fix or explore.
PLAN_OPTIONS = ("solver", "time_limit", "strategy")

Key = tuple[int, ...]


class Space:
    """The points a search may evaluate.

    Attributes:
        factory: the design factory (any callable returning a Design).
        fixed: arguments every point shares.
        params: per explored parameter, its choices (in order).
        constraint: a predicate on a point's params (None: every point is in the space).
    """

    def __init__(self, factory: Callable[..., Any], fixed: Mapping[str, Any] | None = None,
                 params: Mapping[str, Sequence[Any]] | None = None,
                 constraint: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """Describe a space.

        Args:
            factory: a callable returning a Design (``tl.library.matmul``, a user's function).
            fixed: keyword arguments of every point (dotted names set dict keys).
            params: explored keyword arguments, each with a non-empty list of choices.
            constraint: ``constraint(params) -> bool``; points for which it is False are left out.

        Raises:
            TileLangError: a factory that is not callable, empty choices, a parameter also
                fixed, or a constraint that raises.
        """
        if not callable(factory):
            raise TileLangError(f"Space: the factory must be callable, got {type(factory).__name__}")
        for what, given in (("fixed", fixed), ("params", params)):
            if given is not None and not isinstance(given, Mapping):
                raise TileLangError(f"Space: {what} must be a dict of keyword arguments, got {type(given).__name__}")
        self.factory = factory
        self.fixed = dict(fixed or {})
        for name in self.fixed:
            if not isinstance(name, str) or not name:
                raise TileLangError(f"Space: fixed argument names must be non-empty strings, got {name!r}")
        self.params: dict[str, list[Any]] = {}
        for name, choices in (params or {}).items():
            if not isinstance(name, str) or not name:
                raise TileLangError(f"Space: parameter names must be non-empty strings, got {name!r}")
            if isinstance(choices, str | bytes) or not isinstance(choices, Sequence) or not choices:
                raise TileLangError(f"Space: parameter {name!r} needs a non-empty list of choices, got {choices!r}")
            listed = list(choices)
            for i, c in enumerate(listed):
                if any(_same(c, d) for d in listed[:i]):
                    raise TileLangError(
                        f"Space: parameter {name!r} lists {c!r} more than once in {choices!r}; choices must "
                        f"differ (a tuple or dict value is one choice inside the list, e.g. [{choices!r}])")
            self.params[name] = listed
        if not self.params:
            raise TileLangError("Space: give at least one parameter to explore (params={name: [choices]})")
        both = sorted(set(self.params) & set(self.fixed))
        if both:
            raise TileLangError(f"Space: {both} are both fixed and explored")
        if constraint is not None and not callable(constraint):
            raise TileLangError(f"Space: constraint must be callable, got {type(constraint).__name__}")
        self.constraint = constraint
        self._keys: list[Key] | None = None

    # -- points ------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """The explored parameters, in order."""
        return list(self.params)

    def keys(self) -> list[Key]:
        """Every point as its tuple of choice indices, in enumeration order (constraint applied)."""
        if self._keys is None:
            ranges = [range(len(c)) for c in self.params.values()]
            self._keys = [k for k in itertools.product(*ranges) if self._allowed(k)]
        return self._keys

    def _allowed(self, key: Key) -> bool:
        if self.constraint is None:
            return True
        point = self.point(key)
        try:
            return bool(self.constraint(dict(point)))
        except Exception as e:  # noqa: BLE001 - a user's predicate: report any failure as the space's error
            raise TileLangError(f"Space: the constraint raised {type(e).__name__}: {e} on {point} (it must "
                                f"return True or False)") from None

    def __len__(self) -> int:
        return len(self.keys())

    def points(self) -> Iterator[dict[str, Any]]:
        """Every point, as a dict of the explored parameters' values."""
        for k in self.keys():
            yield self.point(k)

    def point(self, key: Key) -> dict[str, Any]:
        """The params of the point with these choice indices.

        Raises:
            TileLangError: ``key`` is not one index per parameter, each within its choices.
        """
        sizes = [len(c) for c in self.params.values()]
        if (not isinstance(key, tuple) or len(key) != len(sizes)
                or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i, n in zip(key, sizes, strict=True))):
            raise TileLangError(f"Space: a point is a tuple of {len(sizes)} choice indices (choices per parameter: "
                                f"{dict(zip(self.params, sizes, strict=True))}), got {key!r}")
        return {name: choices[i] for (name, choices), i in zip(self.params.items(), key, strict=True)}

    def contains(self, key: Key) -> bool:
        """Whether a tuple of choice indices is a point of the space."""
        return key in self._index()

    def _index(self) -> set[Key]:
        if not hasattr(self, "_key_set"):
            self._key_set = set(self.keys())
        return self._key_set

    # -- arguments ---------------------------------------------------------------------

    def arguments(self, key: Key) -> tuple[dict[str, Any], dict[str, Any]]:
        """(factory keyword arguments, ``tl.plan`` options) of a point.

        Raises:
            TileLangError: a dotted name under an argument that is not a dict, or an unknown plan option.
        """
        kwargs: dict[str, Any] = {}
        for name, value in [*self.fixed.items(), *self.point(key).items()]:
            _assign(kwargs, name, copy.deepcopy(value))
        plan = kwargs.pop(PLAN_ARG, None) or {}
        if not isinstance(plan, dict) or set(plan) - set(PLAN_OPTIONS):
            raise TileLangError(f"Space: {PLAN_ARG!r} holds tl.plan options {PLAN_OPTIONS}, got {plan!r}")
        return kwargs, plan

    def describe(self) -> str:
        """A stable text naming the space (the study name under a storage)."""
        name = getattr(self.factory, "__qualname__", type(self.factory).__name__)
        module = getattr(self.factory, "__module__", "")
        text = repr((module, name, sorted((k, _stable(v)) for k, v in self.fixed.items()),
                     [(k, [_stable(c) for c in v]) for k, v in self.params.items()]))
        return f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"

    def __repr__(self) -> str:
        name = getattr(self.factory, "__name__", "factory")
        return f"Space({name}, {len(self)} points, params={self.names})"


def _assign(kwargs: dict[str, Any], name: str, value: Any) -> None:
    head, dot, rest = name.partition(".")
    if not dot:
        if isinstance(kwargs.get(head), dict) and isinstance(value, dict):
            kwargs[head].update(value)
        else:
            kwargs[head] = value
        return
    inner = kwargs.setdefault(head, {})
    if not isinstance(inner, dict):
        raise TileLangError(f"Space: {name!r} sets a key of argument {head!r}, which is {inner!r}, not a dict")
    _assign(inner, rest, value)


def _same(a: Any, b: Any) -> bool:
    """Whether two choices are equal (False where comparing them fails, e.g. arrays)."""
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - a user's value whose == raises or is ambiguous: not the same
        return False


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable(value: Any) -> str:
    """``repr(value)``, unless it holds a memory address (a function's, an object's default repr): then a text
    the same in every process, a function named by its module, qualified name and compiled code."""
    text = repr(value)
    if not _ADDRESS.search(text):
        return text
    if isinstance(value, list | tuple):
        inner = ", ".join(_stable(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_stable(k)}: {_stable(v)}" for k, v in value.items()) + "}"
    code = getattr(value, "__code__", None)
    if code is not None:
        digest = hashlib.sha256(marshal.dumps(code)).hexdigest()[:12]
        return f"<function {getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')} {digest}>"
    return _ADDRESS.sub("", text)
