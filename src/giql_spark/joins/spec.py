"""The description of one join, shared by every physical operator.

Expressions are sqlglot trees, parsed once where the join is found (or from
Spark SQL text where a caller builds a spec by hand) and rendered to Spark
SQL where an operator needs text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import sqlglot
from sqlglot import exp


def quote(name: str) -> str:
    """A column or field name quoted for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


def expression(value: exp.Expression | str) -> exp.Expression:
    """``value`` as a sqlglot tree; text is read as Spark SQL."""
    return value if isinstance(value, exp.Expression) else sqlglot.parse_one(value, read="spark")


#: Prefixes of the tree metadata giql and giql-spark keep (plan nodes, predicates, the query).
_OWN_META = ("giql_spark", "__giql")


def spark(e: exp.Expression) -> str:
    """Spark SQL text of a tree.

    sqlglot generates from a deep copy of the tree, metadata included, and giql-spark's
    metadata holds plan nodes with trees of their own: copying them was half of a small
    statement's planning. The generator reads none of it (only sqlglot's own keys, such as a
    function's written name), so it is set aside while the text is made.
    """
    held = []
    for node in e.walk():
        meta = node._meta  # the attribute, not the property, which would add an empty dict
        if meta and any(k.startswith(_OWN_META) for k in meta):
            held.append((node, meta))
            node._meta = {k: v for k, v in meta.items() if not k.startswith(_OWN_META)}
    try:
        return e.sql(dialect="spark")
    finally:
        for node, meta in held:
            node._meta = meta


JOIN_TYPES = ("inner", "left", "right", "full", "semi", "anti")
PREDICATES = ("intersects", "contains", "within", "band")


@dataclass(frozen=True)
class Interval:
    """Expressions, over one side's columns, for its canonical interval.

    ``start`` and ``end`` are 0-based half-open after canonicalization; a
    1-based or closed table's expressions already carry the offset. Text
    arguments are read as Spark SQL.
    """

    chrom: exp.Expression
    start: exp.Expression
    end: exp.Expression

    def __post_init__(self) -> None:
        for name in ("chrom", "start", "end"):
            object.__setattr__(self, name, expression(getattr(self, name)))

    @cached_property
    def text(self) -> tuple[str, str, str]:
        """Spark SQL of (chrom, start, end)."""
        return spark(self.chrom), spark(self.start), spark(self.end)


@dataclass(frozen=True)
class JoinSpec:
    """What to join; every strategy returns the same rows for the same spec.

    Attributes
    ----------
    how
        One of :data:`JOIN_TYPES`. ``semi`` and ``anti`` return left columns
        only; the outer joins fill the missing side with NULL.
    predicate
        One of :data:`PREDICATES`; informational, since ``condition`` is exact.
    left, right
        The canonical interval of each side: its chromosome (for a band join,
        the equality keys as one value) and the ends of its hull.
    condition
        The exact pair predicate (chromosome equality included). A pair is
        joined iff ``condition`` and ``residual`` are both true; a NULL
        coordinate or chromosome makes it false. Every pair satisfying
        ``condition`` must have closed hulls ``[min(start,end), max(start,end)]``
        that share a point on the same chromosome: true for INTERSECTS,
        CONTAINS and WITHIN, which is what lets strategies prune by position.
    residual
        Further conditions on the pair (``b.score > 5``), or None.
    """

    how: str
    predicate: str
    left: Interval
    right: Interval
    condition: exp.Expression
    residual: exp.Expression | None = None
    #: The equality keys as (left, right) expression pairs; None means the
    #: chromosomes, ``((left.chrom, right.chrom),)``. A band join derives them.
    keys: tuple | None = None
    #: Some hull ends are ``±HULL_INF``: rows with NULLs that match without
    #: limit; a strategy that expands hulls into bins or tiles clips them.
    unbounded: bool = False
    #: The derived band of a band join (:class:`giql_spark.band.Band`), for EXPLAIN.
    band: object = field(default=None, compare=False)
    #: A band join whose hull ends read only columns the rules know to be
    #: numbers: the runtime need not ask Spark their types.
    ends_numeric: bool = field(default=False, compare=False)
    options: dict = field(default_factory=dict, compare=False)
    #: The condition is exactly "the keys are equal and the closed hulls
    #: ``[start, end]`` share a point", with ``start <= end`` on both sides and
    #: ``end`` NULL when any column it reads is: a strategy that tests keys
    #: and hulls itself need not evaluate it again.
    exact_hulls: bool = False

    def __post_init__(self) -> None:
        if self.how not in JOIN_TYPES:
            raise ValueError(f"join type must be one of {JOIN_TYPES}, got {self.how!r}")
        if self.predicate not in PREDICATES:
            raise ValueError(f"predicate must be one of {PREDICATES}, got {self.predicate!r}")
        object.__setattr__(self, "condition", expression(self.condition))
        if self.residual is not None:
            object.__setattr__(self, "residual", expression(self.residual))

    def stats_intervals(self) -> tuple[Interval, Interval]:
        """Each side's interval as the statistics read it: the first key
        (the chromosome, or a constant for no key) and the hull ends."""
        if self.keys is None or len(self.keys) < 2:
            return self.left, self.right
        (lk, rk), *_ = self.keys
        return Interval(lk, self.left.start, self.left.end), Interval(rk, self.right.start, self.right.end)

    @property
    def key_pairs(self) -> tuple:
        """The equality keys as (left, right) expression pairs."""
        return self.keys if self.keys is not None else ((self.left.chrom, self.right.chrom),)

    @cached_property
    def full(self) -> exp.Expression:
        """``condition AND residual`` as one tree."""
        if self.residual is None:
            return exp.Paren(this=self.condition.copy())
        return exp.and_(exp.Paren(this=self.condition.copy()), exp.Paren(this=self.residual.copy()))

    @cached_property
    def full_condition(self) -> str:
        """:attr:`full` as Spark SQL."""
        return spark(self.full)

    def describe(self) -> str:
        """The condition for EXPLAIN."""
        return spark(self.condition) + (f" AND {spark(self.residual)}" if self.residual is not None else "")


@dataclass(frozen=True)
class NearestSpec:
    """Candidate pairs for a correlated NEAREST.

    For each reference (a row of the right side) the result must hold every
    target (a row of the left side) on the same chromosome — and, when
    ``stranded``, strand — whose key ``(|distance|, start, end)`` is at most
    the k-th smallest, NULL distances first as SQL orders them. giql's SQL
    above the result applies its filters and picks the top k. Each side is
    named ``(struct column, chrom field, start field, end field, strand
    field or None)``.
    """

    k: int
    stranded: bool
    target: tuple[str, str, str, str, str | None]
    reference: tuple[str, str, str, str, str | None]


def band_key(exprs: list[exp.Expression]) -> exp.Expression:
    """Equality keys as one value, for strategies that group by a single key:
    the key itself, a NUL-separated concatenation (a NULL part makes it
    NULL, which matches nothing), or a constant when there is none."""
    if not exprs:
        return exp.Literal.string("")
    if len(exprs) == 1:
        return exprs[0].copy()
    parts: list[exp.Expression] = []
    for i, e in enumerate(exprs):
        if i:
            parts.append(exp.Literal.string("\u0000"))
        parts.append(exp.Cast(this=e.copy(), to=exp.DataType.build("string")))
    return exp.Concat(expressions=parts)


def band_spec(how: str, condition: exp.Expression, band, *, ends_numeric: bool = False) -> JoinSpec:
    """The spec of a band join: ``condition`` exact, joined on ``band``'s keys
    and hulls (a :class:`giql_spark.band.Band` with hulls);
    ``ends_numeric``: every column the hull ends read is known to be a number."""
    return JoinSpec(
        how=how, predicate="band",
        left=Interval(band_key([k for k, _ in band.keys]), band.left.lo, band.left.hi),
        right=Interval(band_key([k for _, k in band.keys]), band.right.lo, band.right.hi),
        condition=condition, keys=band.keys, unbounded=band.unbounded, band=band,
        ends_numeric=ends_numeric,
    )
