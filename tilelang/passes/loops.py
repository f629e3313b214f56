"""Rewriting a core loop so that one fifo's elements stay held across iterations.

Used by ``redundant.py``. A loop ``L`` of ``T`` iterations whose body takes
``e`` elements of fifo ``f`` per iteration becomes, for ``T = G * R * c``::

    for g in range(G):                # left out when G == 1
        for r in range(R):
            <L's body for t = (g R + r) c + j, for j = 0 .. c-1, unrolled>
        release(f, c * e)

with ``f``'s releases dropped from the body, each acquire of ``n`` made an
acquire of ``base + n`` (``base``: elements of ``f`` the original body had
released before it), and each use of ``f``'s element ``i`` made a use of
element ``base + i``. An acquire takes only the difference to what is held,
so the first pass over a block waits for each element just when the
original did, and later passes acquire nothing. Loops
inside the body that touch ``f`` are unrolled (their element numbers differ
per iteration); others are kept. Every loop variable becomes the same value
as an affine form of the new loops' variables, so each call gets the
arguments it got before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tilelang.ir.design import (
    Acquire,
    AffineArg,
    Call,
    ConstArg,
    ElemArg,
    Loop,
    LoopVarArg,
    Port,
    Release,
    Stmt,
    released,
)
from tilelang.ir.dtypes import DType

#: A loop variable as an affine form of the new loops' variables: ({new depth: coefficient}, constant).
Form = tuple[dict[int, int], int]


class CannotHoist(Exception):
    """The loop's shape does not allow holding the fifo's elements (the message says why)."""


def touches(body: tuple[Stmt, ...], fifo: str) -> bool:
    """Whether ``body`` acquires, releases or passes an element of ``fifo``."""
    for s in body:
        if isinstance(s, Acquire | Release) and s.fifo == fifo:
            return True
        if isinstance(s, Call) and any(isinstance(a, ElemArg) and a.fifo == fifo for a in s.args):
            return True
        if isinstance(s, Loop) and touches(s.body, fifo):
            return True
    return False


def _arg(form: Form, dtype: DType) -> AffineArg | ConstArg | LoopVarArg:
    coeffs, const = form
    terms = tuple(sorted((d, c) for d, c in coeffs.items() if c != 0))
    if not terms:
        return ConstArg(dtype.wrap(const) if dtype.is_int else const, dtype)
    if len(terms) == 1 and terms[0][1] == 1 and const == 0:
        return LoopVarArg(terms[0][0], dtype)
    return AffineArg(terms, const, dtype)


def _compose(forms: list[Form], terms: tuple[tuple[int, int], ...], offset: int) -> Form:
    coeffs: dict[int, int] = {}
    const = offset
    for depth, c in terms:
        sub, k = forms[depth]
        const += c * k
        for d, cc in sub.items():
            coeffs[d] = coeffs.get(d, 0) + c * cc
    return coeffs, const


@dataclass
class _Window:
    """Where the held window of the hoisted fifo stands: elements released so far, elements held now."""

    fifo: str
    base: int = 0
    held: int = 0


def _call(s: Call, forms: list[Form], win: _Window) -> Call:
    args = []
    for a in s.args:
        if isinstance(a, ElemArg) and a.fifo == win.fifo:
            if a.index >= win.held:
                raise CannotHoist(f"a call uses element {a.index} of {win.fifo!r} while {win.held} are held")
            args.append(ElemArg(a.fifo, win.base + a.index))
        elif isinstance(a, LoopVarArg):
            args.append(_arg(forms[a.depth], a.dtype))
        elif isinstance(a, AffineArg):
            args.append(_arg(_compose(forms, a.terms, a.offset), a.dtype))
        else:
            args.append(a)
    return dataclasses.replace(s, args=tuple(args))


def _body(body: tuple[Stmt, ...], forms: list[Form], depth: int, win: _Window, unroll: int) -> list[Stmt]:
    """``body`` with the window's fifo taken out; ``forms[d]`` is old depth d's value, ``depth`` the next new depth."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, Acquire) and s.fifo == win.fifo:
            if s.port is not Port.CONSUME:
                raise CannotHoist(f"the core produces into {win.fifo!r}")
            win.held = max(win.held, s.n)
            # the block's first win.base + win.held elements, counted from its start (nothing of it is given
            # back before the end): the first pass over the block waits for each element as it did, later
            # passes hold them all already and acquire nothing (an acquire takes only the difference)
            out.append(Acquire(win.fifo, Port.CONSUME, win.base + win.held))
        elif isinstance(s, Release) and s.fifo == win.fifo:
            if s.n > win.held:
                raise CannotHoist(f"a release of {win.fifo!r} gives back more than is held")
            win.base, win.held = win.base + s.n, win.held - s.n
        elif isinstance(s, Call):
            out.append(_call(s, forms, win))
        elif isinstance(s, Loop) and touches(s.body, win.fifo):
            if s.trip_count > unroll:
                raise CannotHoist(f"an inner loop of {s.trip_count} iterations uses {win.fifo!r} (unrolled up to {unroll})")
            for i in range(s.trip_count):
                out += _body(s.body, [*forms, ({}, s.start + i * s.step)], depth, win, unroll)
        elif isinstance(s, Loop):
            inner = _body(s.body, [*forms, ({depth: 1}, 0)], depth + 1, win, unroll)
            out.append(dataclasses.replace(s, body=tuple(inner)))
        else:
            out.append(s)
    return out


def hoist(loop: Loop, depth: int, fifo: str, groups: int, reps: int, copies: int, unroll: int) -> list[Stmt]:
    """``loop`` (at nesting ``depth``) rewritten to hold ``copies`` iterations' elements of ``fifo`` over ``reps``.

    Args:
        loop: the loop; its trip count must be ``groups * reps * copies``.
        depth: its nesting depth in the core (the number of loops around it).
        fifo: the fifo whose elements are held.
        groups, reps, copies: G, R and c of the module docstring.
        unroll: the most iterations an inner loop touching ``fifo`` may have (it is unrolled).

    Returns:
        The statements that replace the loop.

    Raises:
        CannotHoist: the loop's body does not use ``fifo`` as one window per iteration.
    """
    outer = [({d: 1}, 0) for d in range(depth)]
    per = released(loop.body, fifo)
    win = _Window(fifo)
    r_depth = depth + (1 if groups > 1 else 0)
    body: list[Stmt] = []
    for j in range(copies):
        # t = (g R + r) c + j; the loop variable's value is start + step t
        g_part = {depth: reps * copies * loop.step} if groups > 1 else {}
        form = ({**g_part, r_depth: copies * loop.step}, loop.start + j * loop.step)
        body += _body(loop.body, [*outer, form], r_depth + 1, win, unroll)
        if win.held or win.base != (j + 1) * per:
            raise CannotHoist(f"the loop does not give back every element of {fifo!r} it takes in one iteration")
    total = copies * per
    inner: list[Stmt] = [Loop(0, reps, 1, tuple(body)), Release(fifo, Port.CONSUME, total)]
    return [Loop(0, groups, 1, tuple(inner))] if groups > 1 else inner


__all__ = ["CannotHoist", "hoist", "touches"]
