"""Intervals of numbers with open, closed and infinite ends, and three-valued truth.

An :class:`Interval` is the set of values ``x`` with ``lo <= x <= hi``, each
end made strict by ``lo_open`` / ``hi_open``. Ends are numbers (``int``,
``Fraction``, ``float``; ``-math.inf`` / ``math.inf`` for no bound) or the
symbolic bounds of :mod:`.symbolic`, so one implementation serves concrete
intervals and intervals whose ends are expressions over other columns.

``integer`` says the quantity takes integer values only; its intervals are
kept closed with integer ends (``x < 5`` is ``x <= 4``, ``x > 2.5`` is
``x >= 3``). Infinite ends are always open. An empty interval is kept in one
canonical form (:meth:`Interval.empty`). Intervals describe non-NULL values
only: SQL NULL is outside the model, and callers that need NULLs handle them
separately.

Every operation returns an interval containing all results of applying the
operation to members of the operands (soundness). On numbers the results are
exact hulls: the smallest such interval. On symbolic ends a decision that
depends on the unnamed values (which of two ends is larger) is not taken, and
the result is a superset written with max / min, closed where openness is
undecidable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from . import symbolic as sym

INF = math.inf
#: Ends grown beyond this many linear forms are dropped to infinity (sound: a
#: looser bound), so repeated propagation cannot blow symbolic ends up.
MAX_END_SIZE = 12


class Tv(Enum):
    """SQL three-valued truth: TRUE, FALSE, or UNKNOWN (depends on the values / NULL)."""

    TRUE = "TRUE"
    FALSE = "FALSE"
    UNKNOWN = "UNKNOWN"

    @staticmethod
    def of(value: bool | None) -> Tv:
        """True / False / None (SQL NULL) as a Tv."""
        return Tv.UNKNOWN if value is None else (Tv.TRUE if value else Tv.FALSE)

    def and_(self, other: Tv) -> Tv:
        if Tv.FALSE in (self, other):
            return Tv.FALSE
        return Tv.TRUE if self is other is Tv.TRUE else Tv.UNKNOWN

    def or_(self, other: Tv) -> Tv:
        if Tv.TRUE in (self, other):
            return Tv.TRUE
        return Tv.FALSE if self is other is Tv.FALSE else Tv.UNKNOWN

    def not_(self) -> Tv:
        return {Tv.TRUE: Tv.FALSE, Tv.FALSE: Tv.TRUE, Tv.UNKNOWN: Tv.UNKNOWN}[self]


def _is_inf(x) -> bool:
    return not isinstance(x, sym.Sym) and math.isinf(x)


@dataclass(frozen=True)
class Interval:
    """``{x : lo <(=) x <(=) hi}``; see the module docstring for the conventions."""

    lo: object = -INF
    hi: object = INF
    lo_open: bool = False
    hi_open: bool = False
    integer: bool = False

    def __post_init__(self) -> None:
        lo, hi, lo_open, hi_open = self.lo, self.hi, self.lo_open, self.hi_open
        if not isinstance(lo, sym.Sym) and not isinstance(hi, sym.Sym):
            _numeric_normalize(self, lo, hi, lo_open, hi_open)
            return
        if isinstance(lo, sym.Sym) and sym.size(lo) > MAX_END_SIZE:
            lo = -INF
        if isinstance(hi, sym.Sym) and sym.size(hi) > MAX_END_SIZE:
            hi = INF
        if self.integer:
            lo, lo_open = _integer_end(lo, lo_open, upper=False)
            hi, hi_open = _integer_end(hi, hi_open, upper=True)
        lo_open = lo_open or _is_inf(lo)
        hi_open = hi_open or _is_inf(hi)
        ordered = sym.le(lo, hi)
        empty = lo == INF or hi == -INF or ordered is False
        if not empty and (lo_open or hi_open) and ordered is True and sym.le(hi, lo) is True:
            empty = True
        if empty:
            lo, hi, lo_open, hi_open = INF, -INF, True, True
        for name, v in (("lo", lo), ("hi", hi), ("lo_open", lo_open), ("hi_open", hi_open)):
            object.__setattr__(self, name, v)

    # -- construction -------------------------------------------------------

    @staticmethod
    def point(value, integer: bool | None = None) -> Interval:
        """``[value, value]``; ``integer`` defaults to whether ``value`` is an integer."""
        if integer is None:
            integer = sym.integral(value) and not _is_inf(value)
        return Interval(value, value, integer=integer)

    @staticmethod
    def empty(integer: bool = False) -> Interval:
        """The empty interval."""
        return Interval(INF, -INF, integer=integer)

    @staticmethod
    def unbounded(integer: bool = False) -> Interval:
        """``(-inf, +inf)``."""
        return Interval(-INF, INF, integer=integer)

    def with_integer(self, integer: bool) -> Interval:
        """The same set, marked (and normalized) as integer-valued or not."""
        if integer == self.integer:
            return self
        return Interval(self.lo, self.hi, self.lo_open, self.hi_open, integer)

    # -- predicates ---------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        return self.lo == INF

    @property
    def is_bounded(self) -> bool:
        return not _is_inf(self.lo) and not _is_inf(self.hi)

    def contains(self, value) -> bool:
        """Whether the number ``value`` lies in the interval (numeric ends only)."""
        if self.is_empty:
            return False
        above = value > self.lo if self.lo_open else value >= self.lo
        below = value < self.hi if self.hi_open else value <= self.hi
        return bool(above and below)

    def __repr__(self) -> str:
        if self.is_empty:
            return "Interval.empty()"
        left = "(" if self.lo_open else "["
        right = ")" if self.hi_open else "]"
        tag = " int" if self.integer else ""
        return f"{left}{sym.show(self.lo)}, {sym.show(self.hi)}{right}{tag}"

    # -- arithmetic ---------------------------------------------------------

    def __add__(self, other: Interval) -> Interval:
        if self.is_empty or other.is_empty:
            return Interval.empty(self.integer and other.integer)
        return Interval(sym.add(self.lo, other.lo), sym.add(self.hi, other.hi),
                        self.lo_open or other.lo_open, self.hi_open or other.hi_open,
                        self.integer and other.integer)

    def __neg__(self) -> Interval:
        if self.is_empty:
            return self
        return Interval(sym.neg(self.hi), sym.neg(self.lo), self.hi_open, self.lo_open, self.integer)

    def __sub__(self, other: Interval) -> Interval:
        return self + (-other)

    def scale(self, factor) -> Interval:
        """``{factor * x}`` for a finite constant ``factor`` (zero gives ``[0, 0]``)."""
        integer = self.integer and sym.integral(factor)
        if self.is_empty:
            return Interval.empty(integer)
        if factor == 0:
            return Interval.point(0, integer=integer)
        lo, hi = sym.scale(self.lo, factor), sym.scale(self.hi, factor)
        if factor > 0:
            return Interval(lo, hi, self.lo_open, self.hi_open, integer)
        return Interval(hi, lo, self.hi_open, self.lo_open, integer)

    def divide(self, factor) -> Interval:
        """``{x / factor}`` for a finite non-zero constant; exact on Fractions and ints."""
        inverse = 1 / factor if isinstance(factor, float) else Fraction(1) / Fraction(factor)
        return self.scale(inverse)

    def abs(self) -> Interval:
        """``{|x|}``.

        Numeric ends: the non-negative part joined with the mirrored negative
        part, which keeps openness exact. Symbolic ends: ``[max(0, lo, -hi),
        max(-lo, hi)]``, closed, which is the same hull written without
        deciding the sign of the ends.
        """
        if self.is_empty:
            return self
        if isinstance(self.lo, sym.Sym) or isinstance(self.hi, sym.Sym):
            lo = sym.maximum([0, self.lo, sym.neg(self.hi)])
            hi = sym.maximum([sym.neg(self.lo), self.hi])
            return Interval(lo, hi, integer=self.integer)
        positive = self & Interval(0, INF, integer=self.integer)
        negative = self & Interval(-INF, 0, integer=self.integer)
        return (positive | -negative).with_integer(self.integer)

    # -- set operations -----------------------------------------------------

    def __and__(self, other: Interval) -> Interval:
        """Intersection."""
        integer = self.integer or other.integer
        if self.is_empty or other.is_empty:
            return Interval.empty(integer)
        lo, lo_open = _pick(self.lo, self.lo_open, other.lo, other.lo_open, larger=True, tie_open="any")
        hi, hi_open = _pick(self.hi, self.hi_open, other.hi, other.hi_open, larger=False, tie_open="any")
        return Interval(lo, hi, lo_open, hi_open, integer)

    def __or__(self, other: Interval) -> Interval:
        """Hull of the union: the smallest interval containing both."""
        integer = self.integer or other.integer
        if self.is_empty:
            return other.with_integer(integer)
        if other.is_empty:
            return self.with_integer(integer)
        lo, lo_open = _pick(self.lo, self.lo_open, other.lo, other.lo_open, larger=False, tie_open="all")
        hi, hi_open = _pick(self.hi, self.hi_open, other.hi, other.hi_open, larger=True, tie_open="all")
        return Interval(lo, hi, lo_open, hi_open, integer)

    # -- comparisons (three-valued) -----------------------------------------
    # An empty operand has no value at all; the comparisons then answer FALSE
    # ("no value makes it true"), and propagation treats the case as infeasible.

    def lt(self, other: Interval) -> Tv:
        """``x < y`` for x in self, y in other: TRUE for every pair, FALSE for none, else UNKNOWN."""
        if self.is_empty or other.is_empty:
            return Tv.FALSE
        if sym.le(other.hi, self.lo) is True:
            return Tv.FALSE
        below = sym.lt(self.hi, other.lo)
        if below is True or (sym.eq(self.hi, other.lo) is True and (self.hi_open or other.lo_open)):
            return Tv.TRUE
        return Tv.UNKNOWN

    def le(self, other: Interval) -> Tv:
        """``x <= y``, three-valued as :meth:`lt`."""
        if self.is_empty or other.is_empty:
            return Tv.FALSE
        if sym.le(self.hi, other.lo) is True:
            return Tv.TRUE
        if sym.lt(other.hi, self.lo) is True or (
                sym.eq(self.lo, other.hi) is True and (self.lo_open or other.hi_open)):
            return Tv.FALSE
        return Tv.UNKNOWN

    def gt(self, other: Interval) -> Tv:
        return other.lt(self)

    def ge(self, other: Interval) -> Tv:
        return other.le(self)

    def eq(self, other: Interval) -> Tv:
        """``x = y``: TRUE only when both are the same single point."""
        if (self & other).is_empty:
            return Tv.FALSE
        ends = (self.lo, self.hi, other.lo, other.hi)
        if all(sym.eq(ends[0], e) is True for e in ends[1:]):
            return Tv.TRUE
        return Tv.UNKNOWN

    def ne(self, other: Interval) -> Tv:
        if self.is_empty or other.is_empty:
            return Tv.FALSE
        return self.eq(other).not_()

    def between(self, low: Interval, high: Interval) -> Tv:
        """``low <= x AND x <= high``."""
        return low.le(self).and_(self.le(high))

    def compare(self, op: str, other: Interval) -> Tv:
        """The comparison named by ``op`` (one of ``< <= > >= = <>``)."""
        return {"<": self.lt, "<=": self.le, ">": self.gt, ">=": self.ge, "=": self.eq, "<>": self.ne}[op](other)


def greatest(intervals: list[Interval]) -> Interval:
    """``{max(x1, ..., xn)}`` for xi in the i-th interval (all non-NULL)."""
    return _extreme(intervals, upper=True)


def least(intervals: list[Interval]) -> Interval:
    """``{min(x1, ..., xn)}``."""
    return _extreme(intervals, upper=False)


def _extreme(intervals: list[Interval], upper: bool) -> Interval:
    integer = all(i.integer for i in intervals)
    if any(i.is_empty for i in intervals):
        return Interval.empty(integer)
    first, *rest = intervals
    lo, lo_open, hi, hi_open = first.lo, first.lo_open, first.hi, first.hi_open
    for i in rest:
        # GREATEST: lower end is the largest lower end, strict if an operand
        # reaching it is strict (the max is >= that operand); upper end is the
        # largest upper end, strict only if every operand reaching it is.
        # LEAST mirrors both.
        lo, lo_open = _pick(lo, lo_open, i.lo, i.lo_open, larger=upper, tie_open="any" if upper else "all")
        hi, hi_open = _pick(hi, hi_open, i.hi, i.hi_open, larger=upper, tie_open="all" if upper else "any")
    return Interval(lo, hi, lo_open, hi_open, integer)


def _pick(a, a_open: bool, b, b_open: bool, larger: bool, tie_open: str):
    """The larger (or smaller) of two ends with its openness.

    On a tie the result is open if either end is (``tie_open="any"``) or only
    if both are (``"all"``). When the order depends on the unnamed values the
    result is the symbolic max / min, closed; and when the ends may be equal
    for some values only, the result is open only if it would be both ways.
    A closed end contains the open one, so every answer stays sound.
    """
    tie = (a_open or b_open) if tie_open == "any" else (a_open and b_open)
    a_le_b, b_le_a = sym.le(a, b), sym.le(b, a)
    if a_le_b is True and b_le_a is True:  # equal
        return a, tie
    if b_le_a is False:  # a < b
        return (b, b_open) if larger else (a, a_open)
    if a_le_b is False:  # b < a
        return (a, a_open) if larger else (b, b_open)
    if a_le_b is True:  # a <= b, equal for some values only
        return (b, b_open and tie) if larger else (a, a_open and tie)
    if b_le_a is True:
        return (a, a_open and tie) if larger else (b, b_open and tie)
    return (sym.maximum([a, b]) if larger else sym.minimum([a, b])), False


def _numeric_normalize(iv: Interval, lo, hi, lo_open: bool, hi_open: bool) -> None:
    """The fast path of ``Interval.__post_init__`` for numeric ends (the same rules)."""
    if iv.integer:
        if lo != -INF and lo != INF:
            lo, lo_open = (math.floor(lo) + 1 if lo_open else math.ceil(lo)), False
        if hi != INF and hi != -INF:
            hi, hi_open = (math.ceil(hi) - 1 if hi_open else math.floor(hi)), False
    lo_open = lo_open or lo == -INF
    hi_open = hi_open or hi == INF
    if lo > hi or lo == INF or hi == -INF or (lo == hi and (lo_open or hi_open)):
        lo, hi, lo_open, hi_open = INF, -INF, True, True
    object.__setattr__(iv, "lo", lo)
    object.__setattr__(iv, "hi", hi)
    object.__setattr__(iv, "lo_open", lo_open)
    object.__setattr__(iv, "hi_open", hi_open)


def _integer_end(end, is_open: bool, upper: bool):
    """An integer quantity's end made closed and integer: ``x < 5`` -> ``x <= 4``, ``x >= 2.5`` -> ``x >= 3``.

    A symbolic end that cannot be rounded in closed form (a fractional
    coefficient) is kept as a closed end, which contains the open one.
    """
    if _is_inf(end):
        return end, True
    if upper:
        rounded = sym.ceil(end) if is_open else sym.floor(end)
        if rounded is None:
            return end, False
        return (sym.add(rounded, -1) if is_open else rounded), False
    rounded = sym.floor(end) if is_open else sym.ceil(end)
    if rounded is None:
        return end, False
    return (sym.add(rounded, 1) if is_open else rounded), False
