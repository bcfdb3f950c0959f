"""Expression DAG nodes, their SQL evaluation, negation normal form and NULL folding.

Nodes are frozen dataclasses; equal subtrees are equal values, so a subtree
written twice is one node of the DAG wherever nodes key a dict.

Numeric nodes: :class:`Col`, :class:`Const`, :class:`Add`, :class:`Sub`,
:class:`Neg`, :class:`Scale` (multiplication by a constant), :class:`Abs`,
:class:`Greatest`, :class:`Least`, :class:`Case`. Boolean nodes:
:class:`Cmp` (``< <= > >= = <>``), :class:`Between`, :class:`And`,
:class:`Or`, :class:`Not`, :class:`IsNull`, and :class:`Const` holding
True, False or None.

Evaluation follows Spark SQL: an arithmetic or comparison operand that is
NULL makes the result NULL; GREATEST and LEAST skip NULL arguments (NULL only
when all are); AND / OR / NOT are Kleene's three-valued logic; CASE takes the
first WHEN whose condition is TRUE (a NULL condition is not taken).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from . import symbolic as sym


class Node:
    """Base of the DAG nodes."""

    __slots__ = ()


@dataclass(frozen=True)
class Col(Node):
    """A column (or any opaque value) named ``name``; ``integer`` if it takes integer values only."""

    name: str
    integer: bool = True

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class Const(Node):
    """A constant: a number, True, False, or None (SQL NULL).

    Equality includes the value's kind, so ``Const(1)`` and ``Const(True)``
    (equal in Python) stay different nodes.
    """

    value: object

    def _key(self):
        return (type(self.value) is bool, self.value is None, self.value)

    def __eq__(self, other) -> bool:
        return isinstance(other, Const) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True)
class Binary(Node):
    """An arithmetic operator on two operands (the subclass says which)."""

    left: Node
    right: Node


@dataclass(frozen=True)
class Unary(Node):
    """An operator on one operand (the subclass says which)."""

    arg: Node


@dataclass(frozen=True)
class Many(Node):
    """A function of any number of operands (the subclass says which)."""

    args: tuple


class Add(Binary):
    """``left + right``."""


class Sub(Binary):
    """``left - right``."""


class Neg(Unary):
    """``-arg``."""


@dataclass(frozen=True)
class Scale(Node):
    """``factor * arg`` for a constant ``factor`` (any sign, or zero)."""

    factor: object
    arg: Node


class Abs(Unary):
    """``abs(arg)``."""


class Greatest(Many):
    """``greatest(*args)``."""


class Least(Many):
    """``least(*args)``."""


@dataclass(frozen=True)
class Case(Node):
    """``CASE WHEN c1 THEN v1 ... ELSE default END`` (``whens`` is a tuple of (c, v) pairs)."""

    whens: tuple
    default: Node


@dataclass(frozen=True)
class Cmp(Node):
    """``left op right`` with op one of ``< <= > >= = <>``."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Between(Node):
    """``arg BETWEEN low AND high``, i.e. ``low <= arg AND arg <= high``."""

    arg: Node
    low: Node
    high: Node


class And(Many):
    """Conjunction."""


@dataclass(frozen=True)
class Or(Node):
    """Disjunction. ``label`` (not semantic) names the SQL an OR was written as, "" if generated."""

    args: tuple
    label: str = ""


class Not(Unary):
    """``NOT arg``."""


@dataclass(frozen=True)
class IsNull(Node):
    """``arg IS NULL`` (``IS NOT NULL`` when ``negated``); never NULL itself."""

    arg: Node
    negated: bool = False


NUMERIC = (Col, Const, Add, Sub, Neg, Scale, Abs, Greatest, Least, Case)
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}
NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "<>", "<>": "="}
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "=": operator.eq, "<>": operator.ne}


def children(node: Node) -> tuple:
    """The operand nodes of ``node`` (CASE: conditions and values, then the default)."""
    if isinstance(node, (Binary, Cmp)):
        return (node.left, node.right)
    if isinstance(node, (Unary, Scale, IsNull)):
        return (node.arg,)
    if isinstance(node, (Many, Or)):
        return node.args
    if isinstance(node, Between):
        return (node.arg, node.low, node.high)
    if isinstance(node, Case):
        return tuple(x for pair in node.whens for x in pair) + (node.default,)
    return ()


def walk(node: Node):
    """Every node of the tree under ``node``, parents before children (repeats included)."""
    yield node
    for c in children(node):
        yield from walk(c)


def columns(node: Node) -> set[Col]:
    """The columns ``node`` reads."""
    return {n for n in walk(node) if isinstance(n, Col)}


def is_integer(node: Node) -> bool:
    """Whether a numeric node takes integer values only (given its columns' ``integer`` flags)."""
    if isinstance(node, Col):
        return node.integer
    if isinstance(node, Const):
        if node.value is None:
            return True
        return isinstance(node.value, (int, float, Fraction)) and not isinstance(node.value, bool) \
            and sym.integral(node.value)
    if isinstance(node, Scale):
        return sym.integral(node.factor) and is_integer(node.arg)
    if isinstance(node, Case):
        return all(is_integer(v) for _, v in node.whens) and is_integer(node.default)
    return all(is_integer(c) for c in children(node))


# -- evaluation on rows -----------------------------------------------------


def evaluate(node: Node, row: Mapping[str, object]):
    """The value of ``node`` on ``row`` (column name -> value, None for NULL), Spark semantics."""
    if isinstance(node, Col):
        return row[node.name]
    if isinstance(node, Const):
        return node.value
    if isinstance(node, (Add, Sub)):
        a, b = evaluate(node.left, row), evaluate(node.right, row)
        if a is None or b is None:
            return None
        return _num(a + b if isinstance(node, Add) else a - b)
    if isinstance(node, (Neg, Abs, Scale)):
        a = evaluate(node.arg, row)
        if a is None:
            return None
        if isinstance(node, Neg):
            return -a
        return abs(a) if isinstance(node, Abs) else _num(node.factor * a)
    if isinstance(node, (Greatest, Least)):
        vals = [v for v in (evaluate(a, row) for a in node.args) if v is not None]
        if not vals:
            return None
        return max(vals) if isinstance(node, Greatest) else min(vals)
    if isinstance(node, Case):
        for cond, val in node.whens:
            if evaluate(cond, row) is True:
                return evaluate(val, row)
        return evaluate(node.default, row)
    if isinstance(node, Cmp):
        a, b = evaluate(node.left, row), evaluate(node.right, row)
        if a is None or b is None:
            return None
        return _COMPARE[node.op](a, b)
    if isinstance(node, Between):
        return evaluate(And((Cmp("<=", node.low, node.arg), Cmp("<=", node.arg, node.high))), row)
    if isinstance(node, And):
        vals = [evaluate(a, row) for a in node.args]
        if False in vals:
            return False
        return None if None in vals else True
    if isinstance(node, Or):
        vals = [evaluate(a, row) for a in node.args]
        if True in vals:
            return True
        return None if None in vals else False
    if isinstance(node, Not):
        v = evaluate(node.arg, row)
        return None if v is None else not v
    if isinstance(node, IsNull):
        return (evaluate(node.arg, row) is None) != node.negated
    raise TypeError(f"not a node: {node!r}")


def _num(x):
    return int(x) if isinstance(x, Fraction) and x.denominator == 1 else x


# -- negation normal form -----------------------------------------------------


def nnf(node: Node, negate: bool = False) -> Node:
    """An equivalent boolean formula (exactly, in three-valued logic) with no Not and no Between.

    NOT is pushed down: ``NOT (x < y)`` is ``x >= y`` (both NULL when an
    operand is), De Morgan for AND / OR, ``NOT (x IS NULL)`` is ``x IS NOT
    NULL``; BETWEEN becomes two comparisons.
    """
    if isinstance(node, Not):
        return nnf(node.arg, not negate)
    if isinstance(node, Between):
        parts = (Cmp("<=", node.low, node.arg), Cmp("<=", node.arg, node.high))
        return nnf(And(parts), negate)
    if isinstance(node, And):
        args = tuple(nnf(a, negate) for a in node.args)
        return Or(args) if negate else And(args)
    if isinstance(node, Or):
        args = tuple(nnf(a, negate) for a in node.args)
        return And(args) if negate else Or(args, node.label)
    if isinstance(node, Cmp):
        return Cmp(NEGATE[node.op], node.left, node.right) if negate else node
    if isinstance(node, IsNull):
        return IsNull(node.arg, node.negated != negate)
    if isinstance(node, Const):
        if not negate or node.value is None:
            return node
        return Const(not node.value)
    raise TypeError(f"not a boolean node: {node!r}")


# -- NULL substitution and constant folding ---------------------------------


NULL = Const(None)
TRUE = Const(True)
FALSE = Const(False)


def fold(node: Node, nulls: frozenset[str] = frozenset(), others_present: bool = False) -> Node:
    """``node`` with the columns named in ``nulls`` replaced by NULL, constants folded.

    Folding is exact under Spark semantics for every value of the remaining
    columns. With ``others_present`` the remaining columns are taken to be
    non-NULL, so ``IS NULL`` of an expression that cannot be NULL folds to
    FALSE. The input should be in negation normal form (no Not / Between);
    the output is too.
    """
    return _Folder(nulls, others_present).fold(node)


class _Folder:
    def __init__(self, nulls: frozenset[str], others_present: bool):
        self.nulls = nulls
        self.present = others_present

    def fold(self, node: Node) -> Node:
        if isinstance(node, Col):
            return NULL if node.name in self.nulls else node
        if isinstance(node, Const):
            return node
        if isinstance(node, (Add, Sub, Neg, Scale, Abs, Cmp)):
            kids = [self.fold(c) for c in children(node)]
            if any(k == NULL for k in kids):
                return NULL
            new = _rebuild(node, kids)
            if all(isinstance(k, Const) for k in kids):
                return Const(evaluate(new, {}))
            return new
        if isinstance(node, (Greatest, Least)):
            kids = [k for k in (self.fold(c) for c in node.args) if k != NULL]
            if not kids:
                return NULL
            if len(kids) == 1:
                return kids[0]
            new = type(node)(tuple(kids))
            return Const(evaluate(new, {})) if all(isinstance(k, Const) for k in kids) else new
        if isinstance(node, Case):
            whens = []
            for cond, val in node.whens:
                c = self.fold(cond)
                if c == TRUE:
                    return self._case(whens, self.fold(val))
                if isinstance(c, Const):
                    continue  # FALSE or NULL: this branch is never taken
                whens.append((c, self.fold(val)))
            return self._case(whens, self.fold(node.default))
        if isinstance(node, IsNull):
            arg = self.fold(node.arg)
            if isinstance(arg, Const):
                return Const((arg.value is None) != node.negated)
            if self.present and not may_be_null(arg):
                return Const(node.negated)
            return IsNull(arg, node.negated)
        if isinstance(node, (And, Or)):
            return self._logic(node)
        if isinstance(node, (Not, Between)):
            return self.fold(nnf(node))
        raise TypeError(f"not a node: {node!r}")

    @staticmethod
    def _case(whens: list, default: Node) -> Node:
        return Case(tuple(whens), default) if whens else default

    def _logic(self, node: And | Or) -> Node:
        is_and = isinstance(node, And)
        absorbing, neutral = (FALSE, TRUE) if is_and else (TRUE, FALSE)
        kids: list = []
        for c in node.args:
            k = self.fold(c)
            if k == absorbing:
                return absorbing
            if k == neutral:
                continue
            parts = k.args if type(k) is type(node) else (k,)
            kids.extend(p for p in parts if p not in kids)
        if not kids:
            return neutral
        if all(k == NULL for k in kids):
            return NULL
        if len(kids) == 1:
            return kids[0]
        return And(tuple(kids)) if is_and else Or(tuple(kids), node.label)


def _rebuild(node: Node, kids: list) -> Node:
    return rebuild(node, kids)


def rebuild(node: Node, kids) -> Node:
    """A node like ``node`` with operands ``kids`` (in the order of :func:`children`)."""
    kids = list(kids)
    if isinstance(node, (Col, Const)):
        return node
    if isinstance(node, (Add, Sub)):
        return type(node)(kids[0], kids[1])
    if isinstance(node, Cmp):
        return Cmp(node.op, kids[0], kids[1])
    if isinstance(node, Scale):
        return Scale(node.factor, kids[0])
    if isinstance(node, IsNull):
        return IsNull(kids[0], node.negated)
    if isinstance(node, (Neg, Abs, Not)):
        return type(node)(kids[0])
    if isinstance(node, Between):
        return Between(*kids)
    if isinstance(node, Or):
        return Or(tuple(kids), node.label)
    if isinstance(node, (Greatest, Least, And)):
        return type(node)(tuple(kids))
    if isinstance(node, Case):
        pairs = tuple((kids[2 * i], kids[2 * i + 1]) for i in range(len(node.whens)))
        return Case(pairs, kids[-1])
    raise TypeError(f"not a node: {node!r}")


def replace(node: Node, target: Node, replacement: Node) -> Node:
    """``node`` with every subtree equal to ``target`` replaced by ``replacement``."""
    if node == target:
        return replacement
    kids = children(node)
    if not kids:
        return node
    return rebuild(node, [replace(k, target, replacement) for k in kids])


def may_be_null(node: Node) -> bool:
    """Whether a numeric node can be NULL when all its columns are non-NULL."""
    if isinstance(node, Col):
        return False
    if isinstance(node, Const):
        return node.value is None
    if isinstance(node, (Greatest, Least)):
        return all(may_be_null(a) for a in node.args)
    if isinstance(node, Case):
        return True
    return any(may_be_null(c) for c in children(node))


def can_be_true(node: Node) -> bool:
    """False only if a folded NNF formula is never TRUE, whatever its columns hold."""
    if isinstance(node, Const):
        return node.value is True
    if isinstance(node, And):
        return all(can_be_true(a) for a in node.args)
    if isinstance(node, Or):
        return any(can_be_true(a) for a in node.args)
    return True
