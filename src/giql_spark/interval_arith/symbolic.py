"""Symbolic interval bounds: linear forms over columns, and their max and min.

A symbolic bound stands for a number once the columns it names are given
values. It is one of

* a plain number (``int``, ``Fraction``, ``float``, or ``±math.inf``);
* :class:`Lin` — ``c1*x1 + ... + ck*xk + c0`` with at least one column;
* :class:`Max` / :class:`Min` — the largest / smallest of two or more bounds.

The same interval code (:mod:`.interval`) runs on numbers and on these, so
constraint propagation can treat the columns of one join side as known but
unnamed values and derive bounds on the other side's columns as expressions
over them. Every operation here is exact pointwise: for every assignment of
the columns, the value of the result equals the operation applied to the
values of the operands. Comparisons (:func:`le`) answer only when the answer
is the same for every assignment, and return None otherwise.

Columns are any objects with ``name`` (str) and ``integer`` (bool)
attributes; :class:`giql_spark.interval_arith.nodes.Col` is one.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any, Callable, Mapping

Number = int | float | Fraction
INF = math.inf


def _norm(x: Number) -> Number:
    """A Fraction with denominator 1 becomes an int, so equal numbers compare and hash alike."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return int(x)
    return x


class Sym:
    """Base of the symbolic bounds; arithmetic operators dispatch to the module functions."""

    __slots__ = ()

    def __add__(self, other):
        return add(self, other)

    __radd__ = __add__

    def __neg__(self):
        return neg(self)

    def __sub__(self, other):
        return add(self, neg(other))

    def __rsub__(self, other):
        return add(other, neg(self))

    def __mul__(self, factor):
        return scale(self, factor)

    __rmul__ = __mul__


class _Hashed(Sym):
    """Frozen value with its hash computed once (bounds key caches and are compared often)."""

    __slots__ = ("_hash",)

    def _fields(self) -> tuple:
        raise NotImplementedError

    def __setattr__(self, name, value):
        raise AttributeError("symbolic bounds are immutable")

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and hash(other) == hash(self) and other._fields() == self._fields()

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return show(self)


class Lin(_Hashed):
    """``sum(coef * column) + const``; ``terms`` sorted by column name, no zero coefficients, never empty."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: tuple, const: Number = 0):
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "const", const)
        object.__setattr__(self, "_hash", hash((Lin, terms, const)))

    def _fields(self) -> tuple:
        return (self.terms, self.const)


class Max(_Hashed):
    """The largest of ``args`` (a frozenset of two or more bounds, none of them a Max)."""

    __slots__ = ("args",)

    def __init__(self, args: frozenset):
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "_hash", hash((Max, args)))

    def _fields(self) -> tuple:
        return (self.args,)


class Min(_Hashed):
    """The smallest of ``args`` (a frozenset of two or more bounds, none of them a Min)."""

    __slots__ = ("args",)

    def __init__(self, args: frozenset):
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "_hash", hash((Min, args)))

    def _fields(self) -> tuple:
        return (self.args,)


def var(column: Any) -> Lin:
    """The bound equal to the value of ``column``."""
    return Lin(((column, 1),), 0)


def _lin(terms: dict, const: Number) -> Number | Lin:
    items = tuple(sorted(((c, _norm(k)) for c, k in terms.items() if k != 0), key=lambda t: t[0].name))
    if not items:
        return _norm(const)
    return Lin(items, _norm(const))


def add(x, y):
    """``x + y``. An infinite operand wins; ``inf + -inf`` never arises in interval arithmetic."""
    if not isinstance(x, Sym) and not isinstance(y, Sym):
        return _norm(x + y)
    for a, b in ((x, y), (y, x)):
        if not isinstance(a, Sym) and math.isinf(a):
            return a
    for a, b in ((x, y), (y, x)):
        if isinstance(a, Max):
            return maximum([add(t, b) for t in a.args])
        if isinstance(a, Min):
            return minimum([add(t, b) for t in a.args])
    terms: dict = {}
    const: Number = 0
    for a in (x, y):
        if isinstance(a, Lin):
            for c, k in a.terms:
                terms[c] = terms.get(c, 0) + k
            const += a.const
        else:
            const += a
    return _lin(terms, const)


def neg(x):
    """``-x``."""
    if isinstance(x, Lin):
        return Lin(tuple((c, -k) for c, k in x.terms), _norm(-x.const))
    if isinstance(x, Max):
        return minimum([neg(t) for t in x.args])
    if isinstance(x, Min):
        return maximum([neg(t) for t in x.args])
    return _norm(-x)


def scale(x, factor: Number):
    """``factor * x`` for a finite number ``factor``; a negative factor swaps max and min."""
    if factor == 0:
        return 0
    if isinstance(x, Lin):
        return _lin({c: k * factor for c, k in x.terms}, x.const * factor)
    if isinstance(x, (Max, Min)):
        parts = [scale(t, factor) for t in x.args]
        return (maximum if (isinstance(x, Max)) == (factor > 0) else minimum)(parts)
    return _norm(x * factor)


def le(x, y) -> bool | None:
    """True if ``x <= y`` for every assignment, False if ``x > y`` for every one, else None."""
    if not isinstance(x, Sym) and not isinstance(y, Sym):
        return x <= y
    return _le(x, y)


@functools.lru_cache(maxsize=1 << 16)
def _le(x, y) -> bool | None:
    if x == -INF or y == INF:
        return True
    if x == INF or y == -INF:
        return False
    if isinstance(x, (Max, Min)):
        answers = [le(t, y) for t in x.args]
        # max(ts) <= y iff every t <= y; min(ts) <= y iff some t <= y.
        return _all(answers) if isinstance(x, Max) else _any(answers)
    if isinstance(y, (Max, Min)):
        answers = [le(x, t) for t in y.args]
        return _any(answers) if isinstance(y, Max) else _all(answers)
    # Two linear forms (or a form and a number): decidable only when the
    # column parts are identical, and then the constants decide.
    if isinstance(x, Lin) and isinstance(y, Lin) and x.terms == y.terms:
        return x.const <= y.const
    return None


def _all(answers: list) -> bool | None:
    if all(a is True for a in answers):
        return True
    if any(a is False for a in answers):
        return False
    return None


def _any(answers: list) -> bool | None:
    if any(a is True for a in answers):
        return True
    if all(a is False for a in answers):
        return False
    return None


def lt(x, y) -> bool | None:
    """True if ``x < y`` for every assignment, False if ``x >= y`` for every one, else None."""
    answer = le(y, x)
    return None if answer is None else not answer


def eq(x, y) -> bool | None:
    """True if ``x == y`` for every assignment, False if they differ for every one, else None."""
    a, b = le(x, y), le(y, x)
    if a is True and b is True:
        return True
    if a is False or b is False:
        return False
    return None


def _extreme(parts: list, kind: type) -> Any:
    """``max(parts)`` (kind Max) or ``min(parts)`` (kind Min), simplified.

    Nested bounds of the same kind are flattened, and a part that some other
    part dominates for every assignment is dropped (of equal parts one stays).
    """
    upper = kind is Max
    flat: list = []
    for p in parts:
        flat.extend(p.args if isinstance(p, kind) else [p])
    absorbing, neutral = (INF, -INF) if upper else (-INF, INF)
    if any(not isinstance(p, Sym) and p == absorbing for p in flat):
        return absorbing
    flat = [p for p in flat if isinstance(p, Sym) or p != neutral]
    if not flat:
        return neutral
    numbers = [p for p in flat if not isinstance(p, Sym)]
    kept: list = [(max if upper else min)(numbers)] if numbers else []
    for p in flat:
        if not isinstance(p, Sym):
            continue
        # p is redundant if a kept part is at least as extreme everywhere.
        if any((le(p, k) if upper else le(k, p)) is True for k in kept):
            continue
        kept = [k for k in kept if (le(k, p) if upper else le(p, k)) is not True]
        kept.append(p)
    if len(kept) == 1:
        return kept[0]
    return kind(frozenset(kept))


def maximum(parts) -> Any:
    """The largest of ``parts`` (numbers or symbolic bounds)."""
    return _extreme(list(parts), Max)


def minimum(parts) -> Any:
    """The smallest of ``parts`` (numbers or symbolic bounds)."""
    return _extreme(list(parts), Min)


def _round(x, fn: Callable) -> Any:
    if not isinstance(x, Sym):
        return x if math.isinf(x) else int(fn(x))
    if isinstance(x, Lin):
        if all(c.integer and _integral(k) for c, k in x.terms):
            # An integer-valued sum plus c0: rounding moves only c0.
            return x if _integral(x.const) else Lin(x.terms, int(fn(x.const)))
        return None
    parts = [_round(t, fn) for t in x.args]
    if any(p is None for p in parts):
        return None
    if all(p is t for p, t in zip(parts, x.args)):
        return x
    return (maximum if isinstance(x, Max) else minimum)(parts)


def floor(x) -> Any:
    """``floor(x)`` as a bound, or None when it has no closed form (a fractional coefficient or column)."""
    return _round(x, math.floor)


def ceil(x) -> Any:
    """``ceil(x)`` as a bound, or None when it has no closed form."""
    return _round(x, math.ceil)


def _integral(k: Number) -> bool:
    if isinstance(k, float):
        return k.is_integer()
    if isinstance(k, Fraction):
        return k.denominator == 1
    return True


def integral(x) -> bool:
    """True when ``x`` is an integer for every assignment of integer columns (and every column is integer)."""
    if not isinstance(x, Sym):
        return math.isinf(x) or _integral(x)
    if isinstance(x, Lin):
        return _integral(x.const) and all(c.integer and _integral(k) for c, k in x.terms)
    return all(integral(t) for t in x.args)


def columns(x) -> set:
    """The columns ``x`` names."""
    if isinstance(x, Lin):
        return {c for c, _ in x.terms}
    if isinstance(x, (Max, Min)):
        return set().union(*(columns(t) for t in x.args))
    return set()


def size(x) -> int:
    """The number of linear forms and numbers in ``x``; a measure of how large it has grown."""
    if isinstance(x, (Max, Min)):
        return sum(size(t) for t in x.args)
    return 1


def value(x, env: Mapping[str, Number]) -> Number:
    """``x`` evaluated with ``env[column.name]`` for each column."""
    if isinstance(x, Lin):
        return _norm(sum((k * env[c.name] for c, k in x.terms), x.const))
    if isinstance(x, Max):
        return max(value(t, env) for t in x.args)
    if isinstance(x, Min):
        return min(value(t, env) for t in x.args)
    return x


def show(x) -> str:
    """A readable form, e.g. ``max(a.end - 1, a.start + 3)``."""
    if isinstance(x, Lin):
        out = ""
        for c, k in x.terms:
            sign = "-" if k < 0 else "+"
            mag = -k if k < 0 else k
            term = c.name if mag == 1 else f"{mag}*{c.name}"
            out = (f"-{term}" if sign == "-" else term) if not out else f"{out} {sign} {term}"
        if x.const:
            out += f" - {-x.const}" if x.const < 0 else f" + {x.const}"
        return out
    if isinstance(x, (Max, Min)):
        inner = ", ".join(sorted(show(t) for t in x.args))
        return f"{'max' if isinstance(x, Max) else 'min'}({inner})"
    return str(x)
