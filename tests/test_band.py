"""Band derivation (keys and per-side hulls of a join condition), checked without Spark.

The property: for every pair of rows for which the condition is TRUE (SQL
three-valued logic, Spark's NULL-skipping GREATEST / LEAST, giql's DISTANCE
CASE evaluated exactly), the keys are equal and non-NULL, the hull ends are
non-NULL, and the hulls — normalized as ``[least(lo, hi), greatest(lo, hi)]``
— share a point. Rows are drawn from small ranges so that book-ended,
identical, zero-length, reversed and NULL values are frequent; every property
test asserts a minimum number of TRUE pairs, and a deliberately wrong hull
(shrunk by one) must be caught.
"""

from __future__ import annotations

import functools
import operator
import random
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from typing import Callable

import pytest
import sqlglot
from giql.dialect import GIQLDialect
from giql.expanders._distance import generate_distance_case
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from giql_spark.band import HULL_INF, Band, Blocked, DistanceMark, Hull, derive_band

# -- a Python evaluator of the SQL the tests and the hulls use ----------------


def column_key(node: exp.Expression) -> str:
    if isinstance(node, exp.Dot):
        parts = node.flatten()
        first = next(parts)
        names = [p.name for p in first.parts] + [p.name for p in parts]
    else:
        names = [p.name for p in node.parts]
    return ".".join(n.lower() for n in names)


_CMP = {exp.EQ: operator.eq, exp.NEQ: operator.ne, exp.LT: operator.lt, exp.LTE: operator.le,
        exp.GT: operator.gt, exp.GTE: operator.ge}
_ARITH = {exp.Add: operator.add, exp.Sub: operator.sub, exp.Mul: operator.mul}


def compile_sql(node: exp.Expression) -> Callable[[dict], object]:
    """A function of a row (column key -> value, None = NULL) evaluating ``node`` with Spark semantics."""
    c = compile_sql
    if isinstance(node, exp.Paren):
        return c(node.this)
    if isinstance(node, (exp.Column, exp.Dot)):
        key = column_key(node)
        return lambda row: row[key]
    if isinstance(node, exp.Literal):
        value = node.this if node.is_string else Fraction(Decimal(node.this))
        return lambda row: value
    if isinstance(node, exp.Null):
        return lambda row: None
    if isinstance(node, exp.Boolean):
        return lambda row: node.this
    if type(node) in _ARITH or type(node) in _CMP or isinstance(node, exp.Div):
        fn = _ARITH.get(type(node)) or _CMP.get(type(node)) or operator.truediv
        a, b = c(node.this), c(node.expression)

        def binary(row):
            x, y = a(row), b(row)
            if x is None or y is None:
                return None
            return fn(Fraction(x), Fraction(y)) if fn is operator.truediv else fn(x, y)
        return binary
    if isinstance(node, (exp.Neg, exp.Abs, exp.Floor, exp.Ceil)):
        fn = {exp.Neg: operator.neg, exp.Abs: abs, exp.Floor: lambda v: Fraction(v).__floor__(),
              exp.Ceil: lambda v: Fraction(v).__ceil__()}[type(node)]
        a = c(node.this)
        return lambda row: None if (v := a(row)) is None else fn(v)
    if isinstance(node, (exp.Greatest, exp.Least)):
        args = [c(node.this)] + [c(e) for e in node.expressions]
        pick = max if isinstance(node, exp.Greatest) else min

        def extreme(row):  # Spark skips NULL arguments
            vals = [v for v in (f(row) for f in args) if v is not None]
            return pick(vals) if vals else None
        return extreme
    if isinstance(node, exp.Case):
        whens = [(c(i.this), c(i.args["true"])) for i in node.args["ifs"]]
        default = c(node.args["default"]) if node.args.get("default") else (lambda row: None)

        def case(row):
            for cond, val in whens:
                if cond(row) is True:
                    return val(row)
            return default(row)
        return case
    if isinstance(node, (exp.And, exp.Or)):
        a, b = c(node.this), c(node.expression)
        conj = isinstance(node, exp.And)

        def logic(row):
            x, y = a(row), b(row)
            if conj:
                return False if False in (x, y) else (None if None in (x, y) else True)
            return True if True in (x, y) else (None if None in (x, y) else False)
        return logic
    if isinstance(node, exp.Not):
        a = c(node.this)
        return lambda row: None if (v := a(row)) is None else not v
    if isinstance(node, exp.Is):
        a = c(node.this)
        return lambda row: a(row) is None
    if isinstance(node, exp.Between):
        x, lo, hi = c(node.this), c(node.args["low"]), c(node.args["high"])
        both = compile_sql(exp.and_(exp.LTE(this=node.args["low"], expression=node.this),
                                    exp.LTE(this=node.this, expression=node.args["high"])))
        return both
    raise NotImplementedError(type(node).__name__)


# -- conditions, DISTANCE included ------------------------------------------


def parse(sql: str) -> exp.Expression:
    return sqlglot.parse_one(sql, dialect=GIQLDialect)


@dataclass(frozen=True)
class Dist:
    """A DISTANCE(a, b) to substitute for ``{D}`` in a condition."""

    stranded: bool = False
    signed: bool = False
    one_based: bool = False  # the second operand's table is 1-based closed
    swap: bool = False       # DISTANCE(b.interval, a.interval)

    def fragments(self, alias: str, one_based: bool) -> tuple[str, str, str]:
        start = f'({alias}."start" - 1)' if one_based else f'{alias}."start"'
        return (f"{alias}.chrom", start, f'{alias}."end"')

    def marked(self, template: str) -> exp.Expression:
        first, second = ("b", "a") if self.swap else ("a", "b")
        f1 = self.fragments(first, False)
        f2 = self.fragments(second, self.one_based)
        case = generate_distance_case(*f1, f"{first}.strand", *f2, f"{second}.strand",
                                      stranded=self.stranded, signed=self.signed)
        cond = parse(template.replace("{D}", f"({case})"))
        mark = DistanceMark(f1, f2, self.stranded, self.signed)
        for node in cond.find_all(exp.Case):
            if node.find_ancestor(exp.Case) is None:  # the outer CASE; stranded ones nest more
                node.meta["giql_spark_distance"] = mark
        return cond


@dataclass(frozen=True)
class Shape:
    sql: str
    dist: Dist | None = None
    left: str = "a"
    right: str = "b"
    min_true: int = 40
    integer_columns: bool = True
    examples: int = 15

    def condition(self) -> exp.Expression:
        return self.dist.marked(self.sql) if self.dist else parse(self.sql)

    @functools.cache
    def band(self) -> Band | Blocked:
        return derive_band(self.condition(), {self.left}, {self.right}, integer_columns=self.integer_columns)

    def __str__(self) -> str:
        return self.sql if not self.dist else f"{self.sql} with {self.dist}"


# Small constants (the rows' values lie in about -7..9) so TRUE pairs are
# common and boundaries are hit; negative, zero and positive offsets.
RANGE_SHAPES = [
    "b.start BETWEEN a.start - 2 AND a.start + 3",
    "a.start BETWEEN b.start - 2 AND b.start + 3",
    "b.start BETWEEN a.start + 1 AND a.start + 4",
    "b.start BETWEEN a.start - 4 AND a.start - 1",
    "b.start BETWEEN a.start AND a.start",
    'a."end" + 2 > b.start AND a.start - 2 < b."end"',
    'b.start < a."end" + 2 AND b."end" > a.start - 2',
    'a."end" + 0 > b.start AND a.start - 0 < b."end"',
    'a."end" - 1 >= b.start AND a.start + 1 <= b."end"',
    "ABS(a.start - b.start) <= 3",
    "ABS(b.start - a.start) < 3",
    "ABS(a.start - b.start) <= 0",
    "ABS(a.start - b.start + 2) < 2",
    'a.start <= b.start AND b."end" <= a."end"',
    'b.start >= a.start AND a."end" >= b."end"',
    'b.start <= a.start AND a."end" <= b."end"',
    'b.pos >= a.start AND b.pos < a."end"',
    'a.pos >= b.start AND a.pos < b."end"',
    'a.start <= b.pos AND a."end" > b.pos',
    'GREATEST(a.start, b.start) < LEAST(a."end", b."end")',
    'LEAST(a."end", b."end") > GREATEST(a.start, b.start)',
    'GREATEST(a.start, b.start) <= LEAST(a."end", b."end")',
    "b.start < a.start + 0 AND b.start > a.start - 3",
    'b.start < a."end" + 1.5 AND b."end" > a.start - 0.5',
    "2 * b.start BETWEEN a.start - 1 AND a.start + 3",
    "-b.start <= -a.start + 2 AND -1 * b.start >= 0 * a.pos - a.start - 2",
    "(b.start - a.start) / 2 BETWEEN -1 AND 1",
    "b.start BETWEEN a.start - 1 AND a.start + 1 OR b.start BETWEEN a.\"end\" - 1 AND a.\"end\" + 1",
    "NOT (b.pos < a.start OR b.pos > a.start + 2)",
    "b.pos BETWEEN a.iv.start AND a.iv.\"end\"",
    "b.pos BETWEEN a.start - 2 AND a.start + 2 AND a.x * b.y > 5",
    "b.start - a.start BETWEEN -2 AND 2 AND b.start <> a.start",
]
KEYED = ["a.chrom = b.chrom AND ({})", "a.chrom = b.chrom AND a.strand = b.strand AND ({})",
         "({}) AND b.chrom = a.chrom"]

SHAPES = [Shape(s) for s in RANGE_SHAPES]
# Every shape again with a chromosome key (equal in about 4 pairs of 10), and
# some with two keys (about 1 in 7) or the key written last. Two keys and a point range meet
# about 13 times in 30 random seeds (sd 3), and Hypothesis also draws the project's own
# constants as seeds, so which seeds run changes with unrelated code: 60 examples keep the
# vacuity check (at least 8 TRUE pairs) from failing on such a change.
SHAPES += [Shape(KEYED[0].format(s), min_true=10, examples=20) for s in RANGE_SHAPES]
SHAPES += [Shape(k.format(s), min_true=8, examples=60) for s in RANGE_SHAPES[::4] for k in KEYED[1:]]
SHAPES += [
    Shape("t1.ts > t2.ts - 3 AND t1.ts < t2.ts + 2", left="t1", right="t2"),
    Shape("t2.ts + 2 > t1.ts AND t2.ts - 3 < t1.ts", left="t1", right="t2"),
    Shape("t1.ts > t2.ts - 3 AND t1.ts < t2.ts + 2", left="t1", right="t2", integer_columns=False),
    Shape("a.chrom = b.chrom AND a.x * b.y > 5", min_true=10),
]
DISTANCE_SHAPES = [
    Shape("{D} <= 2", Dist()),
    Shape("{D} < 3", Dist(one_based=True)),
    Shape("{D} = 0", Dist(), min_true=20),
    Shape("{D} = 2", Dist(swap=True), min_true=10),
    Shape("{D} BETWEEN 1 AND 3", Dist()),
    Shape("3 >= {D}", Dist(swap=True)),
    Shape("a.chrom = b.chrom AND {D} <= 1", Dist(), min_true=20),
    Shape("{D} BETWEEN -2 AND 3", Dist(signed=True)),
    Shape("{D} = -1", Dist(signed=True), min_true=5),
    Shape("{D} BETWEEN -2 AND 2", Dist(stranded=True)),
    Shape("{D} BETWEEN -3 AND 1", Dist(stranded=True, signed=True)),
    Shape("NOT ({D} > 2)", Dist()),
]
ALL_SHAPES = SHAPES + DISTANCE_SHAPES

# -- rows ---------------------------------------------------------------------

VALUES = list(range(-5, 6))
QUARTERS = [Fraction(k, 4) for k in range(-20, 21)]
ROWS_PER_SIDE = 8


def make_rows(rnd, alias: str, fractional: bool = False) -> list[dict]:
    """Rows of one side from a seeded Random: small values, NULLs about 1 in 12.

    Ends lie near the start, so zero-length (length 0), reversed (length < 0)
    and book-ended neighbours are frequent; an end is NULL on its own now
    and then. (Hypothesis draws only the seed, which keeps its per-example
    cost low; a failure reports the seed, which reproduces the rows.)
    """
    pool = QUARTERS if fractional else VALUES

    def num():
        return None if rnd.random() < 1 / 12 else rnd.choice(pool)

    out = []
    for _ in range(ROWS_PER_SIDE):
        start = num()
        length = rnd.choice([-2, -1, 0, 0, 1, 1, 2, 3, 5])
        end = num() if start is None or rnd.random() < 1 / 12 else start + length
        row = {"start": start, "end": end, "pos": num(), "ts": num(), "x": num(), "y": num(),
                      "chrom": rnd.choice(["c1", "c1", "c1", "c2", None]), "strand": rnd.choice(["+", "+", "-", ".", None])}
        row["iv.start"], row["iv.end"] = row["start"], row["end"]
        out.append({f"{alias}.{k}": v for k, v in row.items()})
    return out


# -- the property -----------------------------------------------------------


@dataclass
class Compiled:
    keys: list
    left: tuple | None
    right: tuple | None

    @staticmethod
    def of(band: Band) -> Compiled:
        hull = lambda h: None if h is None else (compile_sql(h.lo), compile_sql(h.hi))  # noqa: E731
        return Compiled([(compile_sql(a), compile_sql(b)) for a, b in band.keys], hull(band.left), hull(band.right))


def normalized(hull: tuple, row: dict) -> tuple:
    lo, hi = hull[0](row), hull[1](row)
    vals = [v for v in (lo, hi) if v is not None]
    assert vals, "both hull ends are NULL"
    assert lo is not None and hi is not None, f"a hull end is NULL: {lo}, {hi}"
    return min(vals), max(vals)


def check_pairs(cond: Callable, comp: Compiled, lefts: list, rights: list, seen: dict) -> None:
    used = seen["columns"]
    for lrow in lefts:
        # Each side's hull and keys are computed from that side's row alone.
        lhull = None
        for rrow in rights:
            if cond({**lrow, **rrow}) is not True:
                continue
            seen["true"] += 1
            seen["with_null"] += any(lrow.get(k, 0) is None or rrow.get(k, 0) is None for k in used)
            for kl, kr in comp.keys:
                vl, vr = kl(lrow), kr(rrow)
                assert vl is not None and vl == vr, f"keys {vl!r} != {vr!r} for {lrow} {rrow}"
            if comp.left is None:
                continue
            lhull = lhull or normalized(comp.left, lrow)
            rhull = normalized(comp.right, rrow)
            assert lhull[0] <= rhull[1] and rhull[0] <= lhull[1], \
                f"hulls {lhull} and {rhull} do not meet for {lrow} {rrow}"


PROPERTY = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def run_property(shape: Shape, band: Band, examples: int = 20, shrink: bool = True) -> dict:
    condition = shape.condition()
    # with_null: TRUE pairs with a NULL in a column the condition reads
    seen = {"true": 0, "with_null": 0, "columns": {column_key(c) for c in condition.find_all(exp.Column)}}
    fractional = not shape.integer_columns
    cond, comp = compile_sql(condition), Compiled.of(band)
    phases = list(Phase) if shrink else [Phase.generate]

    @settings(PROPERTY, max_examples=examples, phases=phases)
    @given(st.integers(0, 2 ** 64))
    def check(seed):
        rnd = random.Random(seed)
        lefts, rights = make_rows(rnd, shape.left, fractional), make_rows(rnd, shape.right, fractional)
        check_pairs(cond, comp, lefts, rights, seen)

    check()
    return seen


@pytest.mark.parametrize("shape", ALL_SHAPES, ids=str)
def test_pairs_satisfying_the_condition_meet(shape):
    band = shape.band()
    assert isinstance(band, Band), band
    seen = run_property(shape, band, shape.examples)
    # A property that holds vacuously proves nothing.
    assert seen["true"] >= shape.min_true, seen


def _shrunk(band: Band, which: str) -> Band:
    hull = getattr(band, which)
    smaller = Hull(hull.lo, exp.Sub(this=exp.Paren(this=hull.hi.copy()), expression=exp.Literal.number(1)))
    return replace(band, **{which: smaller})


@pytest.mark.parametrize("shape,which", [
    (SHAPES[0], "left"),
    (Shape('a."end" + 2 > b.start AND a.start - 2 < b."end"'), "left"),
    (Shape('b.pos >= a.start AND b.pos < a."end"'), "left"),
    (Shape('GREATEST(a.start, b.start) < LEAST(a."end", b."end")'), "right"),
    (DISTANCE_SHAPES[0], "left"),
    (DISTANCE_SHAPES[0], "right"),
], ids=lambda v: str(v) if isinstance(v, (Shape, str)) else "")
def test_a_hull_shrunk_by_one_is_caught(shape, which):
    band = _shrunk(shape.band(), which)
    with pytest.raises(AssertionError, match="do not meet"):
        run_property(shape, band, examples=60, shrink=False)


def test_null_pairs_are_exercised():
    # GREATEST / LEAST skip NULLs and DISTANCE's CASE falls through a NULL
    # condition: pairs with NULL columns do satisfy these conditions.
    for shape in (Shape('GREATEST(a.start, b.start) < LEAST(a."end", b."end")'), DISTANCE_SHAPES[0]):
        seen = run_property(shape, shape.band(), examples=60)
        assert seen["with_null"] >= 10, (shape, seen)


# -- tightness on the brief's examples ---------------------------------------


def _rows_for(alias: str) -> list[dict]:
    out = []
    for start in (-3000, -1, 0, 7, 2500):
        for length in (0, 1, 10, 5000):
            row = {"start": start, "end": start + length, "pos": start + 3, "ts": start, "x": 1, "y": 2,
                   "chrom": "c1", "strand": "+"}
            out.append({f"{alias}.{k}": v for k, v in row.items()})
    return out


TIGHT = [
    ("b.start BETWEEN a.start - 500 AND a.start + 500", None,
     ("a.start - 500", "a.start + 500"), ("b.start", "b.start")),
    ("a.start BETWEEN b.start - 500 AND b.start + 500", None,
     ("a.start - 500", "a.start + 500"), ("b.start", "b.start")),
    ('a."end" + 2000 > b.start AND a.start - 2000 < b."end"', None,
     ("a.start - 1999", 'a."end" + 1999'), ("b.start", 'b."end"')),
    ("ABS(a.start - b.start) <= 300", None, ("a.start - 300", "a.start + 300"), ("b.start", "b.start")),
    ("ABS(b.start - a.start) < 300", None, ("a.start - 299", "a.start + 299"), ("b.start", "b.start")),
    ('a.start <= b.start AND b."end" <= a."end"', None, ("a.start", 'a."end"'), ("b.start", 'b."end"')),
    ('b.pos >= a.start AND b.pos < a."end"', None, ("a.start", 'a."end" - 1'), ("b.pos", "b.pos")),
    ('a.pos >= b.start AND a.pos < b."end"', None, ("a.pos", "a.pos"),
     ('LEAST(b.start, b."end" - 1)', 'GREATEST(b.start, b."end" - 1)')),
    # Written by hand, overlap gives b.start <= a.end - 1 and b.end >= a.start + 1.
    ('GREATEST(a.start, b.start) < LEAST(a."end", b."end")', None,
     ("a.start + 1", 'a."end" - 1'), ("b.start", 'b."end"')),
    ("t1.ts > t2.ts - 3 AND t1.ts < t2.ts + 10", None, ("t1.ts - 9", "t1.ts + 2"), ("t2.ts", "t2.ts")),
    ("b.start BETWEEN a.start + -5 AND a.start - 0", None, ("a.start - 5", "a.start"), ("b.start", "b.start")),
    ("b.start BETWEEN a.start - -2 AND a.start - -7", None, ("a.start + 2", "a.start + 7"), ("b.start", "b.start")),
    ("b.start < a.start + 2.5 AND b.start > a.start - 2.5", None,
     ("a.start - 2", "a.start + 2"), ("b.start", "b.start")),
    ("{D} <= 1000", Dist(), ("a.start - 999", 'a."end" + 999'), ("b.start", 'b."end"')),
    ("a.chrom = b.chrom AND {D} < 100", Dist(), ("a.start - 98", 'a."end" + 98'), ("b.start", 'b."end"')),
    ("{D} = 0", Dist(), ("a.start + 1", 'a."end" - 1'), ("b.start", 'b."end"')),
    ("{D} BETWEEN -1000 AND 500", Dist(signed=True), ("a.start - 999", 'a."end" + 499'), ("b.start", 'b."end"')),
    ("{D} BETWEEN -1000 AND 500", Dist(stranded=True, signed=True),
     ("a.start - 999", 'a."end" + 999'), ("b.start", 'b."end"')),
]


@pytest.mark.parametrize("sql,dist,left,right", TIGHT, ids=[t[0] + (f" {t[1]}" if t[1] else "") for t in TIGHT])
def test_hulls_are_tight_on_examples(sql, dist, left, right):
    aliases = ("t1", "t2") if "t1." in sql else ("a", "b")
    cond = dist.marked(sql) if dist else parse(sql)
    band = derive_band(cond, {aliases[0]}, {aliases[1]})
    assert isinstance(band, Band), band
    for alias, hull, expected in ((aliases[0], band.left, left), (aliases[1], band.right, right)):
        got = [compile_sql(hull.lo), compile_sql(hull.hi)]
        want = [compile_sql(parse(e)) for e in expected]
        for row in _rows_for(alias):
            assert [f(row) for f in got] == [f(row) for f in want], (hull.sql(), expected, row)


def test_point_hull_and_describe():
    band = derive_band(parse("a.chrom = b.chrom AND b.start BETWEEN a.start - 500 AND a.start + 500"), {"a"}, {"b"})
    assert band.describe().splitlines() == [
        "key: a.chrom = b.chrom",
        "left hull: [a.start - 500, a.start + 500]",
        "right hull: [b.start, b.start]",
    ]
    assert [u.sql() for u in band.used] == ["a.chrom = b.chrom", "b.start BETWEEN a.start - 500 AND a.start + 500"]
    assert not band.unbounded


def test_multiple_keys_and_both_orientations():
    band = derive_band(parse('a.chrom = b.chrom AND b.strand = a.strand AND b."end" > a.start AND a."end" > b.start'),
                       {"a"}, {"b"})
    assert [(x.sql(), y.sql()) for x, y in band.keys] == [("a.chrom", "b.chrom"), ("a.strand", "b.strand")]
    assert band.left.sql() == "[a.start + 1, a.`end` - 1]"


def test_keys_only_band():
    band = derive_band(parse("a.chrom = b.chrom AND a.x * b.y > 5"), {"a"}, {"b"})
    assert band.left is None and band.right is None
    assert band.describe() == "key: a.chrom = b.chrom"


def test_distance_chromosome_key_is_nullable_without_an_explicit_equality():
    # giql's CASE skips "chrom_a <> chrom_b" when a chromosome is NULL and
    # goes on to compute a distance, so a NULL chromosome can match any other.
    bare = derive_band(Dist().marked("{D} <= 1000"), {"a"}, {"b"})
    assert bare.keys == () and [(x.sql(), y.sql()) for x, y in bare.nullable_keys] == [("a.chrom", "b.chrom")]
    keyed = derive_band(Dist().marked("a.chrom = b.chrom AND {D} <= 1000"), {"a"}, {"b"})
    assert [(x.sql(), y.sql()) for x, y in keyed.keys] == [("a.chrom", "b.chrom")] and keyed.nullable_keys == ()
    case = compile_sql(Dist().marked("{D}"))
    row = {"a.chrom": None, "a.start": 10, "a.end": 20, "b.chrom": "c9", "b.start": 25, "b.end": 30}
    assert case(row) == 6


def test_distance_case_semantics():
    d = compile_sql(Dist().marked("{D}"))
    base = {"a.chrom": "c1", "b.chrom": "c1", "a.start": 10, "a.end": 20}
    assert d({**base, "b.start": 15, "b.end": 30}) == 0   # overlapping
    assert d({**base, "b.start": 20, "b.end": 30}) == 1   # book-ended
    assert d({**base, "b.start": 0, "b.end": 10}) == 1
    assert d({**base, "b.start": 25, "b.end": 30}) == 6
    assert d({**base, "b.chrom": "c2", "b.start": 25, "b.end": 30}) is None
    signed = compile_sql(Dist(signed=True).marked("{D}"))
    assert signed({**base, "b.start": 0, "b.end": 5}) == -6


def test_hulls_render_to_spark_sql_over_their_own_side():
    for shape in ALL_SHAPES:
        band = shape.band()
        for alias, hull in ((shape.left, band.left), (shape.right, band.right)):
            if hull is None:
                continue
            for end in (hull.lo, hull.hi):
                text = end.sql(dialect="spark")
                again = sqlglot.parse_one(text, read="spark")
                assert {c.parts[0].name for c in again.find_all(exp.Column)} <= {alias}, (shape, text)


def test_unbounded_ends_are_guarded_by_nulls():
    band = derive_band(parse('GREATEST(a.start, b.start) < LEAST(a."end", b."end")'), {"a"}, {"b"})
    assert band.unbounded
    lo = compile_sql(band.left.lo)
    assert lo({"a.start": 5, "a.end": 9}) == 6
    assert lo({"a.start": None, "a.end": 9}) == -HULL_INF


# -- blocked --------------------------------------------------------------------

BLOCKED = [
    ("a.x * b.y > 5", "a.x * b.y > 5: product of columns from both sides"),
    ("a.x <> b.y", "a.x <> b.y: <> excludes one value"),
    ("a.start < b.start", "a.start < b.start: bounds the right side from below only"),
    ("POWER(a.x - b.y, 2) < 100", "POWER(a.x - b.y, 2) < 100: POW"),
    ("b.s BETWEEN a.s - 10 AND a.s + 10 OR b.e BETWEEN a.e - 10 AND a.e + 10", "an OR of unrelated windows"),
    ("a.x > 5 AND b.y < 3", "no conjunct relates the two sides"),
    ("CASE WHEN a.x > b.y THEN 1 ELSE 0 END = 1", "CASE over both sides"),
    ("a.x IN (b.y, b.z)", "a.x IN (b.y, b.z): IN is not understood"),
    ("a.start < c.start", "column c.start is of neither side"),
]


@pytest.mark.parametrize("sql,reason", BLOCKED, ids=[b[0] for b in BLOCKED])
def test_blocked_names_the_conjunct(sql, reason):
    result = derive_band(parse(sql), {"a"}, {"b"})
    assert isinstance(result, Blocked), result
    assert reason in result.reason, result.reason


def test_blocked_distance_needs_both_bounds_when_signed():
    result = derive_band(Dist(signed=True).marked("{D} <= 1000"), {"a"}, {"b"})
    assert isinstance(result, Blocked)
    assert result.reason.startswith("(DISTANCE(a.chrom, a.`start`, a.`end`, b.chrom, b.`start`, b.`end`, 'signed'))")
    assert "bound it from both sides" in result.reason
    assert isinstance(derive_band(Dist(stranded=True).marked("{D} <= 1000"), {"a"}, {"b"}), Blocked)


def test_an_unusable_conjunct_is_ignored_when_another_gives_a_band():
    band = derive_band(parse("b.pos BETWEEN a.start AND a.start + 5 AND a.x * b.y > 5"), {"a"}, {"b"})
    assert isinstance(band, Band)
    assert [u.sql() for u in band.used] == ["b.pos BETWEEN a.start AND a.start + 5"]


# -- random conditions --------------------------------------------------------

_A = ["a.start", 'a."end"', "a.pos"]
_B = ["b.start", 'b."end"', "b.pos"]


def _terms():
    leaf = st.sampled_from(_A + _B) | st.integers(-3, 3).map(str)
    return st.recursive(leaf, lambda t: st.one_of(
        st.tuples(t, st.integers(-3, 3)).map(lambda p: f"({p[0]} + {p[1]})"),
        st.tuples(st.sampled_from([-2, -1, 0, 2]), t).map(lambda p: f"{p[0]} * {p[1]}"),
        st.tuples(t, t).map(lambda p: f"ABS({p[0]} - {p[1]})"),
        st.tuples(t, t).map(lambda p: f"GREATEST({p[0]}, {p[1]})"),
        st.tuples(t, t).map(lambda p: f"LEAST({p[0]}, {p[1]})"),
    ), max_leaves=3)


def _conditions(with_distance: bool = True):
    ops = st.sampled_from(["<", "<=", ">", ">=", "=", "<>"])
    small = st.integers(-3, 4)
    atoms = [
        st.tuples(_terms(), ops, _terms()).map(" ".join),
        st.tuples(_terms(), _terms(), _terms()).map(lambda p: f"{p[0]} BETWEEN {p[1]} AND {p[2]}"),
    ]
    if with_distance:
        atoms += [
            st.tuples(ops, small).map(lambda p: f"{{D}} {p[0]} {p[1]}"),
            st.tuples(small, small).map(lambda p: f"{{D}} BETWEEN {min(p)} AND {max(p)}"),
        ]
    atom = st.one_of(*atoms)
    return st.recursive(atom, lambda f: st.one_of(
        st.tuples(f, f).map(lambda p: f"({p[0]} AND {p[1]})"),
        st.tuples(f, f).map(lambda p: f"({p[0]} OR {p[1]})"),
        f.map(lambda p: f"NOT ({p})"),
        f.map(lambda p: f"a.chrom = b.chrom AND {p}"),
    ), max_leaves=4)


def fuzz(examples: int, seeds: int, derandomize: bool = True, with_distance: bool = True,
         max_distances: int = 9) -> dict:
    seen = {"bands": 0, "true": 0}

    @settings(PROPERTY, max_examples=examples, derandomize=derandomize)
    @given(_conditions(with_distance).filter(lambda sql: sql.count("{D}") <= max_distances),
           st.builds(Dist, st.booleans(), st.booleans(), st.booleans(), st.booleans()))
    def check(sql, dist):
        shape = Shape(sql, dist if "{D}" in sql else None)
        band = shape.band()
        if not isinstance(band, Band):
            return
        seen["bands"] += 1
        condition = shape.condition()
        cond, comp = compile_sql(condition), Compiled.of(band)
        state = {"true": 0, "with_null": 0, "columns": set()}
        for seed in range(seeds):
            rnd = random.Random(seed)
            check_pairs(cond, comp, make_rows(rnd, "a"), make_rows(rnd, "b"), state)
        seen["true"] += state["true"]

    check()
    return seen


def test_random_conditions_that_give_a_band_are_sound():
    # Kept small for the suite's speed, and without DISTANCE atoms (a stranded
    # DISTANCE in an OR can take a second to derive; DISTANCE has its own
    # shapes above). For a deeper search run fuzz(1500, 8, derandomize=False)
    # by hand; while writing this, 1500 + 1200 + 700 + 500 random conditions
    # (the last three with DISTANCE atoms) found no violation.
    seen = fuzz(examples=60, seeds=6, with_distance=False)
    assert seen["bands"] >= 20 and seen["true"] >= 600, seen


def test_condition_dag_prunes_streaming_state():
    # From the newest a.start seen (1e6), the lowest b.end that can still match.
    from math import inf

    from giql_spark.band import condition_dag
    from giql_spark.interval_arith import Interval, column_range
    cond = parse("a.chrom = b.chrom AND a.\"end\" + 2000 > b.start AND a.start - 2000 < b.\"end\" AND a.strand = '+'")
    dag = condition_dag(cond, {"a"}, {"b"})
    assert column_range(dag, {"a.start": Interval(1_000_000, inf)}, "b.end") == Interval(998_001, inf, integer=True)
    # DISTANCE: its CASE is expanded; overlapping b end after a.start, upstream
    # ones within 1000 of it, downstream ones start (so end) after a.end.
    dist = condition_dag(Dist().marked('b.start <= b."end" AND {D} <= 1000'), {"a"}, {"b"})
    got = column_range(dist, {"a.start": Interval(1_000_000, inf), "a.end": Interval(1_000_000, inf)}, "b.end")
    assert got == Interval(999_001, inf, integer=True)
