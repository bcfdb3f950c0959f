"""SQL to the interval DAG and back, for band derivation (:mod:`giql_spark.band`).

:class:`Converter` turns one conjunct of a join condition (a sqlglot boolean
expression) into a formula of :mod:`..interval_arith.nodes` in negation normal
form. Every column, and every expression over one side's columns that is not
arithmetic the engine understands (``LENGTH(a.seq)``, ``a.x * a.y``), becomes
a leaf :class:`~.interval_arith.nodes.Col` recorded in :class:`Leaves` with its
side and SQL. A part that cannot be used — a product of the two sides'
columns, a function of both sides, a CASE that is not a marked DISTANCE — is
replaced by TRUE, which keeps the formula implied by the condition (NNF has
no negations above it), and its reason is recorded.

The renderers build sqlglot expressions for symbolic bounds
(:mod:`..interval_arith.symbolic`) and for DAG nodes over one side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from math import lcm

import sqlglot
from giql.dialect import GIQLDialect
from sqlglot import exp

from ..interval_arith import symbolic as sym
from ..interval_arith.nodes import (NULL, TRUE, Abs, Add, And, Case, Cmp, Col, Const, Greatest, IsNull, Least, Neg, Node,
                              Or, Scale, Sub, columns)

DISTANCE_META = "giql_spark_distance"
#: Functions over one side whose value is an integer whatever the input.
_INTEGER_FUNCS = (exp.Length, exp.ArraySize, exp.Floor, exp.Ceil, exp.Sign)
_CMP = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "<>", "<>": "="}


class Unusable(Exception):
    """A part of the condition the band cannot use; the message says why."""


@dataclass
class Leaf:
    side: str            # "left" or "right"
    sql: exp.Expression  # renders the leaf's value
    integer: bool = True   # takes integer values only
    numeric: bool = False  # used in arithmetic or an order comparison somewhere


@dataclass
class Leaves:
    """Every leaf of the converted condition, by name."""

    by_name: dict[str, Leaf] = field(default_factory=dict)

    def side(self, node: Node) -> str | None:
        """"left" / "right" when every leaf of ``node`` is of that side, "both", or None (no leaves)."""
        sides = {self.by_name[c.name].side for c in columns(node)}
        if not sides:
            return None
        return sides.pop() if len(sides) == 1 else "both"

    def numeric(self, node: Node) -> bool:
        """Whether every leaf of ``node`` is used as a number somewhere in the condition."""
        return all(self.by_name[c.name].numeric for c in columns(node))


def _side_of_column(col: exp.Expression, left: frozenset, right: frozenset) -> tuple[str, str]:
    """(side, name) of a column reference ``alias.field[.subfield]`` (or a bare alias: a struct)."""
    if isinstance(col, exp.Dot):
        parts = [p for p in col.flatten()]
        root = parts[0]
        names = ([i.name for i in root.parts] if isinstance(root, exp.Column) else [root.name]) + \
            [p.name for p in parts[1:]]
    else:
        names = [p.name for p in col.parts]
    alias = names[0].lower()
    name = ".".join(n.lower() for n in names)
    if alias in left:
        return "left", name
    if alias in right:
        return "right", name
    raise Unusable(f"column {col.sql(dialect='spark')} is of neither side")


def _canonical(node: exp.Expression) -> str:
    """A name for an opaque expression, the same however its identifiers are quoted."""
    copy = node.copy()
    for ident in copy.find_all(exp.Identifier):
        ident.set("this", ident.name.lower())
        ident.set("quoted", False)
    return copy.sql(dialect="spark")


def _number(lit: exp.Literal) -> int | Fraction:
    value = Fraction(Decimal(lit.this))
    return int(value) if value.denominator == 1 else value


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


class Converter:
    """Converts conjuncts of one join condition, sharing one :class:`Leaves` registry."""

    def __init__(self, left: frozenset[str], right: frozenset[str], integer_columns: bool):
        self.left = left
        self.right = right
        self.integer = integer_columns
        self.leaves = Leaves()
        self.reasons: list[str] = []  # of the conjunct being converted

    # -- sides ----------------------------------------------------------------

    def sides(self, node: exp.Expression) -> set[str]:
        """The sides an expression reads ({"left"}, {"right"}, both, or none); raises for a foreign column."""
        out = set()
        cols = [node] if isinstance(node, (exp.Column, exp.Dot)) else list(node.find_all(exp.Column))
        for c in cols:
            out.add(_side_of_column(c, self.left, self.right)[0])
        return out

    # -- leaves ---------------------------------------------------------------

    def _leaf(self, node: exp.Expression, side: str, name: str, integer: bool, numeric: bool) -> Col:
        leaf = self.leaves.by_name.get(name)
        if leaf is None:
            sql = node.copy()
            if not isinstance(sql, (exp.Column, exp.Dot, exp.Func, exp.Paren)):
                sql = exp.Paren(this=sql)
            leaf = self.leaves.by_name[name] = Leaf(side, sql, integer)
        leaf.numeric = leaf.numeric or numeric
        return Col(name, integer)

    def _opaque(self, node: exp.Expression, numeric: bool) -> Col:
        """A leaf for an expression over one side's columns that is not arithmetic we model."""
        sides = self.sides(node)
        if len(sides) != 1:
            what = node.key.upper() if isinstance(node, exp.Func) else type(node).__name__.upper()
            if not sides:
                raise Unusable(f"{node.sql(dialect='spark')}: a non-numeric constant")
            raise Unusable(f"{what} of columns from both sides")
        side = sides.pop()
        if isinstance(node, (exp.Column, exp.Dot)):
            return self._leaf(node, side, _side_of_column(node, self.left, self.right)[1], self.integer, numeric)
        integer = isinstance(node, _INTEGER_FUNCS) or (
            isinstance(node, exp.Cast) and node.to.this in exp.DataType.INTEGER_TYPES)
        return self._leaf(node, side, _canonical(node), integer, numeric)

    # -- numeric expressions ----------------------------------------------------

    def number(self, node: exp.Expression) -> Node:
        """A numeric DAG node for ``node``; raises :class:`Unusable`."""
        node = _unparen(node)
        if isinstance(node, exp.Literal) and not node.is_string:
            return Const(_number(node))
        if isinstance(node, exp.Null):
            return NULL
        if isinstance(node, (exp.Column, exp.Dot)):
            return self._opaque(node, numeric=True)
        if isinstance(node, exp.Case) and DISTANCE_META in node.meta:
            raise Unusable("DISTANCE inside arithmetic")
        sides = self.sides(node)
        if not sides and not isinstance(node, (exp.Add, exp.Sub, exp.Neg, exp.Mul, exp.Div, exp.Abs,
                                               exp.Greatest, exp.Least)):
            raise Unusable(f"{node.sql(dialect='spark')} is not a number")
        if len(sides) == 1 and not isinstance(node, (exp.Add, exp.Sub, exp.Neg, exp.Abs,
                                                                  exp.Greatest, exp.Least)):
            if isinstance(node, (exp.Mul, exp.Div)):
                try:
                    return self._arith(node)
                except Unusable:
                    pass
            return self._opaque(node, numeric=True)
        return self._arith(node)

    def _arith(self, node: exp.Expression) -> Node:
        if isinstance(node, exp.Neg):
            inner = self.number(node.this)
            return Const(-inner.value) if isinstance(inner, Const) and inner.value is not None else Neg(inner)
        if isinstance(node, exp.Add):
            return Add(self.number(node.this), self.number(node.expression))
        if isinstance(node, exp.Sub):
            return Sub(self.number(node.this), self.number(node.expression))
        if isinstance(node, exp.Mul):
            a, b = self.number(node.this), self.number(node.expression)
            for c, x in ((a, b), (b, a)):
                if isinstance(c, Const) and c.value is not None:
                    return Scale(c.value, x)
            raise Unusable("product of columns from both sides")
        if isinstance(node, exp.Div):
            a, b = self.number(node.this), self.number(node.expression)
            if isinstance(b, Const) and b.value:
                # Spark's "/" divides exactly (double or decimal): a real result.
                return Scale(Fraction(1) / Fraction(b.value), a)
            raise Unusable("division by an expression over columns")
        if isinstance(node, exp.Abs):
            return Abs(self.number(node.this))
        if isinstance(node, (exp.Greatest, exp.Least)):
            args = tuple(self.number(a) for a in [node.this, *node.expressions])
            return Greatest(args) if isinstance(node, exp.Greatest) else Least(args)
        what = node.key.upper() if isinstance(node, exp.Func) else type(node).__name__.upper()
        if isinstance(node, exp.Case):
            raise Unusable("CASE over both sides (only a marked DISTANCE is understood)")
        raise Unusable(f"{what} over both sides")

    def value(self, node: exp.Expression) -> Node:
        """An operand of = / <> / IS NULL: numeric when possible, else an opaque leaf of one side.

        A bare column is a leaf not (yet) known to be a number: a chromosome
        compared for equality must never bound a hull.
        """
        inner = _unparen(node)
        if isinstance(inner, (exp.Column, exp.Dot)):
            return self._opaque(inner, numeric=False)
        try:
            return self.number(node)
        except Unusable:
            inner = _unparen(node)
            if isinstance(inner, exp.Literal) and inner.is_string:
                return Const(inner.this)
            if isinstance(inner, exp.Boolean):
                return Const(inner.this)
            if len(self.sides(inner)) == 1:
                return self._opaque(inner, numeric=False)
            raise

    # -- boolean formulas -------------------------------------------------------

    def formula(self, node: exp.Expression) -> Node:
        """The NNF formula of a conjunct; unusable parts become TRUE and add to :attr:`reasons`."""
        return self._logic(node, False)

    def _logic(self, node: exp.Expression, negate: bool) -> Node:
        try:
            return self._logic_or_raise(node, negate)
        except Unusable as e:
            self.reasons.append(str(e))
            return TRUE

    def _logic_or_raise(self, node: exp.Expression, negate: bool) -> Node:
        if isinstance(node, exp.Paren):
            return self._logic(node.this, negate)
        if isinstance(node, exp.Not):
            return self._logic(node.this, not negate)
        if isinstance(node, (exp.And, exp.Or)):
            parts = tuple(self._logic(p, negate) for p in node.flatten())
            conj = isinstance(node, exp.And) != negate
            if conj:
                return And(parts)
            label = display(node)
            return Or(parts, f"NOT ({label})" if negate else label)
        if isinstance(node, exp.Boolean):
            return Const(node.this != negate)
        if isinstance(node, exp.Null):
            return NULL
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            if _distance(node.this) is not None:
                raise Unusable("DISTANCE IS NULL holds for pairs on different chromosomes, which gives no range")
            return IsNull(self.value(node.this), negated=negate)
        if type(node) in _CMP:
            return self._compare(_CMP[type(node)], node.this, node.expression, negate)
        if isinstance(node, exp.Between):
            if node.args.get("symmetric"):
                raise Unusable("BETWEEN SYMMETRIC")
            return self._between(node.this, node.args["low"], node.args["high"], negate)
        if isinstance(node, exp.NullSafeEQ):
            raise Unusable("<=> (NULL-safe equality) is not a key or a range")
        what = node.key.upper() if isinstance(node, exp.Func) else type(node).__name__.upper()
        raise Unusable(f"{what} is not understood")

    def _compare(self, op: str, a: exp.Expression, b: exp.Expression, negate: bool) -> Node:
        op = _NEGATE[op] if negate else op
        da, db = _distance(a), _distance(b)
        if da is not None or db is not None:
            if da is not None and db is not None:
                raise Unusable("a comparison of two DISTANCEs")
            if da is None:
                a, b, op, da = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}[op], db
            other = self.number(b)
            return self._per_sign(da, lambda v: Cmp(op, v, other))
        if op in ("=", "<>"):
            x, y = self.value(a), self.value(b)
            if not isinstance(x, Col) or not isinstance(y, Col):
                self._mark_numeric(x, y)
            return Cmp(op, x, y)
        x, y = self.number(a), self.number(b)
        return Cmp(op, x, y)

    def _between(self, x: exp.Expression, lo: exp.Expression, hi: exp.Expression, negate: bool) -> Node:
        def make(v: Node) -> Node:
            low, high = self.number(lo), self.number(hi)
            if negate:
                return Or((Cmp("<", v, low), Cmp(">", v, high)))
            return And((Cmp("<=", low, v), Cmp("<=", v, high)))

        mark = _distance(x)
        if mark is not None:
            return self._per_sign(mark, make)
        return make(self.number(x))

    def _mark_numeric(self, *nodes: Node) -> None:
        if any(isinstance(n, Const) and isinstance(n.value, str) for n in nodes):
            return
        for n in nodes:
            for c in columns(n):
                self.leaves.by_name[c.name].numeric = True

    # -- DISTANCE ---------------------------------------------------------------

    def _per_sign(self, mark, build) -> Node:
        """``build(D)`` for the marked DISTANCE; a stranded one is +V or -V, so both are allowed."""
        value = self.distance_value(mark)
        if not mark.stranded:
            return build(value)
        # The strand flip multiplies the distance by -1 for a '-' first
        # operand (and NULL strands make it NULL): D is V or -V.
        return Or((build(value), build(Neg(value))))

    def distance_value(self, mark) -> Node:
        """giql's distance CASE over the mark's fragments, without the strand guards and flip.

        ``CASE WHEN chrom_a <> chrom_b THEN NULL WHEN start_a < end_b AND
        end_a > start_b THEN 0 WHEN end_a <= start_b THEN start_b - end_a + 1
        ELSE start_a - end_b + 1 END``; signed: the ELSE branch negated.
        """
        ca, sa, ea = (parse_fragment(t) for t in mark.left)
        cb, sb, eb = (parse_fragment(t) for t in mark.right)
        ca, cb = self.value(ca), self.value(cb)
        sa, ea, sb, eb = (self.number(t) for t in (sa, ea, sb, eb))
        one = Const(1)
        upstream = Add(Sub(sa, eb), one)
        return Case((
            (Cmp("<>", ca, cb), NULL),
            (And((Cmp("<", sa, eb), Cmp(">", ea, sb))), Const(0)),
            (Cmp("<=", ea, sb), Add(Sub(sb, ea), one)),
        ), Neg(upstream) if mark.signed else upstream)


def parse_fragment(text: str) -> exp.Expression:
    """A DISTANCE mark's SQL fragment (giql dialect) as a sqlglot expression."""
    return sqlglot.maybe_parse(text, dialect=GIQLDialect)


def display(node: exp.Expression) -> str:
    """Spark SQL of a conjunct, a marked DISTANCE shown as ``DISTANCE(<its fragments>[, flags])``."""
    def shorten(n: exp.Expression) -> exp.Expression:
        mark = n.meta.get(DISTANCE_META) if isinstance(n, exp.Case) else None
        if mark is None:
            return n
        args = [parse_fragment(t) for t in (*mark.left, *mark.right)]
        args += [exp.Literal.string(f) for f, on in (("stranded", mark.stranded), ("signed", mark.signed)) if on]
        return exp.Anonymous(this="DISTANCE", expressions=args)
    return node.copy().transform(shorten).sql(dialect="spark")


def _distance(node: exp.Expression):
    node = _unparen(node)
    return node.meta.get(DISTANCE_META) if isinstance(node, exp.Case) else None


# -- rendering --------------------------------------------------------------

HULL_INF = 2 ** 60


def render_number(value) -> exp.Expression:
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        value = HULL_INF if value > 0 else -HULL_INF
    value = Fraction(value)
    if value.denominator == 1:
        return exp.Literal.number(int(value))
    return exp.Div(this=exp.Literal.number(value.numerator), expression=exp.Literal.number(value.denominator))


def render_sym(bound, leaves: Leaves) -> exp.Expression:
    """A sqlglot expression for a symbolic bound (max / min as GREATEST / LEAST)."""
    if isinstance(bound, sym.Max) or isinstance(bound, sym.Min):
        parts = sorted((render_sym(t, leaves) for t in bound.args), key=lambda e: e.sql(dialect="spark"))
        cls = exp.Greatest if isinstance(bound, sym.Max) else exp.Least
        return cls(this=parts[0], expressions=parts[1:])
    if not isinstance(bound, sym.Lin):
        return render_number(bound)
    coefs = [Fraction(k) for _, k in bound.terms] + [Fraction(bound.const)]
    den = lcm(*(c.denominator for c in coefs))
    body = _linear([(leaves.by_name[c.name].sql.copy(), int(Fraction(k) * den)) for c, k in bound.terms],
                   int(Fraction(bound.const) * den))
    if den == 1:
        return body
    return exp.Div(this=exp.Paren(this=body), expression=exp.Literal.number(den))


def _linear(terms: list[tuple[exp.Expression, int]], const: int) -> exp.Expression:
    """``sum(k * x) + const``, written with the first positive term first (``a.start - 500``)."""
    terms = sorted(terms, key=lambda t: t[1] < 0)  # stable: positive terms first
    if terms and terms[0][1] < 0 and const > 0:
        # "5 - a.x" rather than "-a.x + 5"
        out: exp.Expression | None = exp.Literal.number(const)
        const = 0
        for x, k in terms:
            term = x if abs(k) == 1 else exp.Mul(this=exp.Literal.number(abs(k)), expression=x)
            out = exp.Sub(this=out, expression=term)
        return out
    out = None
    for x, k in terms:
        term = x if abs(k) == 1 else exp.Mul(this=exp.Literal.number(abs(k)), expression=x)
        if out is None:
            out = term if k > 0 else exp.Neg(this=term)
        else:
            out = exp.Add(this=out, expression=term) if k > 0 else exp.Sub(this=out, expression=term)
    if out is None:
        return exp.Literal.number(const)
    if const > 0:
        return exp.Add(this=out, expression=exp.Literal.number(const))
    if const < 0:
        return exp.Sub(this=out, expression=exp.Literal.number(-const))
    return out


def render_node(node: Node, leaves: Leaves) -> exp.Expression:
    """A sqlglot expression for a numeric or opaque DAG node over one side (a key operand)."""
    r = lambda n: _paren(render_node(n, leaves))  # noqa: E731
    if isinstance(node, Col):
        return leaves.by_name[node.name].sql.copy()
    if isinstance(node, Const):
        if isinstance(node.value, str):
            return exp.Literal.string(node.value)
        return exp.Null() if node.value is None else render_number(node.value)
    if isinstance(node, Add):
        return exp.Add(this=r(node.left), expression=r(node.right))
    if isinstance(node, Sub):
        return exp.Sub(this=r(node.left), expression=r(node.right))
    if isinstance(node, Neg):
        return exp.Neg(this=r(node.arg))
    if isinstance(node, Scale):
        return exp.Mul(this=_paren(render_number(node.factor)), expression=r(node.arg))
    if isinstance(node, Abs):
        return exp.Abs(this=render_node(node.arg, leaves))
    if isinstance(node, (Greatest, Least)):
        parts = [render_node(a, leaves) for a in node.args]
        cls = exp.Greatest if isinstance(node, Greatest) else exp.Least
        return cls(this=parts[0], expressions=parts[1:])
    raise TypeError(f"cannot render {node!r}")


def _paren(node: exp.Expression) -> exp.Expression:
    if isinstance(node, (exp.Column, exp.Dot, exp.Literal, exp.Func, exp.Paren, exp.Null)):
        return node
    return exp.Paren(this=node)


