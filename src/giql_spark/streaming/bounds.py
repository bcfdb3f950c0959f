"""How far back each side of a stream-stream join must remember: interval arithmetic over the condition.

Each side keeps, per key, the rows that may still match a future row of the
other side. Future rows of side A have ``order_A >= x`` with ``x`` the newest
order value A has sent on the key minus its ``max_disorder`` (the order
contract, :mod:`.contract`). Asserting the condition TRUE with that interval
known, constraint propagation (:func:`giql_spark.interval_arith.column_range`)
narrows each column of side B; the lower end of B's *prune column* is the
lowest value a B row can hold and still match. B's rows are kept sorted by
that column, so forgetting is a cut of a prefix.

The prune column of a side is its order column when the arithmetic bounds
it, else the end of its interval, else another of its columns that is
bounded (an INTERSECTS bounds ``b.end`` by ``a.start``, not ``b.start``).
Where both columns of a side's interval appear in the condition, ``start <=
end`` is added as a fact: it is what bounds one side of a DISTANCE or a
CONTAINS at all, and the contract makes the stream keep it.

The arithmetic describes rows whose columns are all non-NULL. A row with a
NULL in a column the pruning relies on is sorted out before it is held: it
can match nothing (the condition is never TRUE with that column NULL) and
is passed on as unmatched, or it could still match anything and breaks the
contract (:class:`Needed` records which).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sqlglot import exp

from ..errors import QueryError
from ..band import condition_formula
from ..band.sql import Leaves
from ..interval_arith import Interval, column_range
from ..interval_arith.interval import INF
from ..interval_arith.nodes import And, Cmp, Col, Node, can_be_true, columns, fold
from ..interval_arith.present import present_form

#: Order values at which a candidate prune column is probed for a finite bound.
_PROBES = (0, 1_000_000_000)


@dataclass(frozen=True)
class Needed:
    """A column a side's held rows must have non-NULL; ``can_match``: whether a
    row with it NULL could still satisfy the condition (then it breaks the contract)."""

    name: str
    sql: exp.Expression
    can_match: bool


@dataclass(frozen=True)
class SideRules:
    """What the operator computes for one side's rows, and how it prunes them."""

    alias: str
    order: str                 # interval-DAG name of the order column ("a.start")
    order_sql: exp.Expression
    prune: str                 # interval-DAG name of the prune column
    prune_sql: exp.Expression
    needed: tuple[Needed, ...]
    interval: tuple[exp.Expression, exp.Expression] | None  # (start, end) whose order is part of the contract
    max_disorder: int
    late_rows: str


class Pruning:
    """The condition as an interval formula, and each side's rules.

    :meth:`bound` answers the operator's one question; answers are cached
    per order value (the cache is not pickled with the object).
    """

    def __init__(self, formula: Node, left: SideRules, right: SideRules):
        self.formula = formula
        self.left = left
        self.right = right
        self._cache: dict = {}

    def __getstate__(self):
        return {"formula": self.formula, "left": self.left, "right": self.right}

    def __setstate__(self, state):
        self.__init__(state["formula"], state["left"], state["right"])

    def side(self, which: int) -> SideRules:
        return self.left if which == 0 else self.right

    def bound(self, which: int, x: int) -> float:
        """The lowest prune value of side ``which`` (0 left, 1 right) that can
        still match a row of the other side whose order value is at least ``x``;
        ``-inf`` for no bound, ``inf`` when nothing can match."""
        key = (which, x)
        hit = self._cache.get(key)
        if hit is None:
            hit = _lowest(self.formula, self.side(1 - which).order, x, self.side(which).prune)
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def describe(self, which: int) -> str:
        """The bound in words, for EXPLAIN: ``b.end >= P + 1`` with ``P`` the other side's progress."""
        me, other = self.side(which), self.side(1 - which)
        lows = [self.bound(which, p) for p in _PROBES]
        offsets = {lo - p for lo, p in zip(lows, _PROBES)}
        if len(offsets) == 1:
            c = offsets.pop()
            rhs = "P" + (f" + {c}" if c > 0 else f" - {-c}" if c < 0 else "")
        else:
            rhs = f"f(P) (at P=0: {lows[0]})"
        return (f"{me.alias} rows are held while {me.prune} >= {rhs}, P = newest {other.order} on the key - "
                f"{other.max_disorder} (max_disorder)")


def _lowest(formula: Node, known: str, x: int, target: str) -> float:
    iv = column_range(formula, {known: Interval(x, INF, integer=True)}, target)
    if iv.is_empty:
        return INF
    lo = iv.lo
    if lo == -INF:
        return -INF
    return math.ceil(lo)


@dataclass
class SideInput:
    """What the planner knows of one stream side: its alias, its contract's
    columns and options, and its columns' Spark types by path."""

    alias: str
    order_col: str
    interval: tuple[str, str] | None
    max_disorder: int
    late_rows: str
    types: dict = field(default_factory=dict)  # (alias, field, ...) -> DataType


def plan_pruning(condition: exp.Expression, left_aliases, right_aliases, left: SideInput,
                 right: SideInput, *, integer_columns: bool) -> Pruning:
    """The :class:`Pruning` for a stream-stream join, or a :class:`QueryError` saying why state cannot be bounded."""
    formula, leaves = condition_formula(condition, left_aliases, right_aliases, integer_columns=integer_columns)
    full = fold(formula)
    present = present_form(fold(full, others_present=True))
    names = {c.name for c in columns(full)}
    facts = []
    for side in (left, right):
        if side.interval is not None:
            s, e = (f"{side.alias}.{c}".lower() for c in side.interval)
            if s in names and e in names:
                facts.append(Cmp("<=", Col(s, True), Col(e, True)))
    formula = And((present, *facts)) if facts else present
    rules = []
    for which, me, other in (("left", left, right), ("right", right, left)):
        rules.append(_side_rules(which, me, other, formula, full, names, leaves))
    return Pruning(formula, rules[0], rules[1])


def _side_rules(which: str, me: SideInput, other: SideInput, formula: Node, full: Node, names: set[str],
                leaves: Leaves) -> SideRules:
    order = f"{me.alias}.{me.order_col}".lower()
    other_order = f"{other.alias}.{other.order_col}".lower()
    if other_order not in names:
        raise QueryError(f"the join condition does not read {other_order}, the order column of the other stream, "
                         f"so nothing bounds how long {me.alias}'s rows must be kept")
    # Candidates: plain integer columns of this side (not opaque expressions).
    mine = sorted(n for n, leaf in leaves.by_name.items()
                  if n.startswith(me.alias.lower() + ".") and isinstance(leaf.sql, (exp.Column, exp.Dot))
                  and integral(me.types.get(tuple(n.split(".")))))
    # Then integer expressions of this side the arithmetic treats as opaque, such as bioframe's
    # one-base end of an empty interval (CASE WHEN end = start THEN end + 1 ELSE end END).
    mine += sorted(n for n, leaf in leaves.by_name.items()
                   if leaf.side == which and n not in mine
                   and not isinstance(leaf.sql, (exp.Column, exp.Dot)) and _integer_expression(leaf.sql, me.types))
    end = f"{me.alias}.{me.interval[1]}".lower() if me.interval else None
    preferred = [order] + ([end] if end else []) + mine
    prune = None
    for name in dict.fromkeys(preferred):
        if name not in mine:
            continue
        if all(_lowest(formula, other_order, p, name) not in (-INF, INF) for p in _PROBES):
            prune = name
            break
    if prune is None:
        raise QueryError(f"no column of {me.alias} has a lower bound once {other_order} is known "
                         f"(checked {', '.join(n for n in dict.fromkeys(preferred) if n in mine) or 'none'}): "
                         f"the state of {me.alias} could not be bounded")
    if order not in leaves.by_name:
        raise QueryError(f"the join condition does not read {order}, the order column of {me.alias}")
    needed_names = [order, prune]
    interval = None
    if me.interval is not None:
        s, e = (f"{me.alias}.{c}".lower() for c in me.interval)
        if s in names and e in names:
            needed_names += [s, e]
            interval = (leaves.by_name[s].sql, leaves.by_name[e].sql)
    needed = tuple(Needed(n, leaves.by_name[n].sql, can_be_true(fold(full, frozenset({n}))))
                   for n in dict.fromkeys(needed_names))
    return SideRules(me.alias, order, leaves.by_name[order].sql, prune, leaves.by_name[prune].sql, needed,
                     interval, me.max_disorder, me.late_rows)


#: What an expression may be built of to be an integer when its columns are.
_INTEGER_NODES = (exp.Column, exp.Dot, exp.Identifier, exp.Add, exp.Sub, exp.Mul, exp.Neg, exp.Paren, exp.Case,
                  exp.If, exp.Greatest, exp.Least, exp.Abs, exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE,
                  exp.And, exp.Or, exp.Not, exp.Is, exp.Null, exp.Boolean)


def _integer_expression(node: exp.Expression, types: dict) -> bool:
    """Whether ``node`` takes integer values only: integer columns and literals under +, -, *, CASE and the like.

    Its value becomes the prune column through a cast to bigint, which must not round it.
    """
    for n in node.walk():
        if isinstance(n, exp.Literal):
            if n.is_string or not n.this.lstrip("-").isdigit():
                return False
        elif isinstance(n, exp.Column):
            path = tuple(p.name.lower() for p in n.parts)
            if not integral(types.get(path)):
                return False
        elif not isinstance(n, _INTEGER_NODES):
            return False
    return True


def integral(t) -> bool:
    from pyspark.sql.types import ByteType, IntegerType, LongType, ShortType

    return isinstance(t, (ByteType, ShortType, IntegerType, LongType))
