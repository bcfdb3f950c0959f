"""The Spark target for giql, and the expanders that mark work for the planner.

giql expands every GIQL operator to standard SQL for a target. Spark SQL runs
almost all of that output as is; the shapes it would run badly carry a mark
(an entry in the node's ``meta``) that the rules find after expansion:

* a column-to-column INTERSECTS / CONTAINS / WITHIN predicate, which Spark would
  plan as a nested loop per chromosome (:data:`INTERVAL_PREDICATE`);
* a correlated NEAREST, whose decorrelated form cross-joins every reference with
  every target row of its chromosome (:data:`NEAREST_CANDIDATES`);
* a DISTANCE, whose CASE a range join may bound (``DISTANCE_META``: what the
  CASE computes, for the band derivation).

The SQL giql emits stays the source of truth for the result: the planner only
replaces the pair generation under it, so coordinates, canonicalization and
tie-breaking are giql's own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from giql import REGISTRY, Capabilities, Target
from giql.dialect import GIQLDialect
from giql.expanders import disjoin as giql_disjoin
from giql.expanders import distance as giql_distance
from giql.expanders import intersects as giql_intersects
from giql.expanders import nearest as giql_nearest
from giql.expanders._params import coerce_bool_param
from giql.expressions import Contains, GIQLDisjoin, GIQLDistance, GIQLNearest, Intersects, Within
from giql.resolver import ResolvedColumn, ResolvedInterval
from sqlglot import exp, maybe_parse

from ..band import DISTANCE_META, DistanceMark

INTERVAL_PREDICATE = "giql_spark_interval_predicate"
NEAREST_CANDIDATES = "giql_spark_nearest"


@dataclass(frozen=True)
class SparkTarget(Target):
    """Spark SQL 4.x.

    LATERAL is declared unsupported on purpose: Spark accepts a correlated
    ``LATERAL ... LIMIT k`` but runs it as a join of every pair on the
    chromosome. The decorrelated form giql emits instead is something the
    planner can feed with a k-nearest candidate set.
    """

    name: str = "spark"
    sqlglot_dialect: str | None = "spark"
    capabilities: Capabilities = Capabilities(
        supports_lateral=False,
        # Spark has no ``* REPLACE``; language.stars spells it out, keeping
        # column order the way giql's DuckDB output does.
        supports_star_replace=True,
        supports_qualify=False,
    )


SPARK = SparkTarget()


@dataclass(frozen=True)
class IntervalPredicate:
    """A column-to-column interval predicate found in the query.

    ``left`` and ``right`` are giql's resolved operands as (chrom, start, end)
    expressions, already in canonical 0-based half-open coordinates and
    qualified by table alias; they are parsed here, once.
    """

    op: str  # "intersects" | "contains" | "within"
    left: tuple[exp.Expression, exp.Expression, exp.Expression]
    right: tuple[exp.Expression, exp.Expression, exp.Expression]

    def aliases(self) -> tuple[set[str], set[str]]:
        """The table aliases each operand's chromosome reads."""
        return ({c.table for c in self.left[0].find_all(exp.Column) if c.table},
                {c.table for c in self.right[0].find_all(exp.Column) if c.table})


def _operand(col: ResolvedColumn) -> tuple[exp.Expression, exp.Expression, exp.Expression]:
    return tuple(maybe_parse(f, dialect=GIQLDialect) for f in (col.chrom, col.start, col.end))


def _column_predicate(op: str, generic):
    def expand(node: exp.Expression, ctx) -> exp.Expression:
        result = generic(node, ctx)
        res = ctx.resolution
        right = res.column("expression") if res is not None else None
        left = res.column("this") if res is not None else None
        if right is not None and left is not None:
            result.meta[INTERVAL_PREDICATE] = IntervalPredicate(op, _operand(left), _operand(right))
        return result

    return expand


@dataclass(frozen=True)
class NearestRequest:
    """Parameters of a correlated NEAREST, read before giql expands it."""

    k: int
    stranded: bool
    target_cols: tuple[str, str, str]
    target_strand_col: str | None
    #: Whether the reference has a strand; giql drops the strand condition where it has none.
    reference_stranded: bool = True


@dataclass(frozen=True)
class _OuterRelation:
    """Stands in for the reference's table where giql's fallback only reads ``name``."""

    name: str


def _attach_outer_relation(node: exp.Expression, ctx) -> None:
    """Give a correlated NEAREST's reference the relation it reads.

    giql's canonicalizer blanks the reference's table once it has made the
    start/end fragments canonical (a 1-based or closed table), and its
    decorrelated form then reads the alias as if it were a table
    (``FROM a AS a``). The relation is found by that alias in the enclosing
    FROM: a table or CTE by name, a subquery by its SQL.
    """
    res = ctx.resolution
    ref = res.slot("reference") if res is not None else None
    if not isinstance(ref, ResolvedInterval) or ref.table is not None or ref.kind == "literal_range":
        return
    col = maybe_parse(ref.chrom, dialect=GIQLDialect)
    alias = col.table if isinstance(col, exp.Column) else ""
    select = node.find_ancestor(exp.Select)
    if not alias or select is None:
        return
    from_ = select.args.get("from_")
    rels = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    for rel in rels:
        if rel.alias_or_name != alias:
            continue
        if isinstance(rel, exp.Table):
            bare = rel.copy()
            bare.set("alias", None)
            name = bare.sql(dialect=GIQLDialect)
        elif isinstance(rel, exp.Subquery):
            name = exp.Paren(this=rel.this.copy()).sql(dialect=GIQLDialect)
        else:
            return
        res.slots["reference"] = replace(ref, table=_OuterRelation(name))
        return


def _unqualified_reference(ctx) -> bool:
    """A column reference without a table (``reference := interval``): inside
    the LATERAL its columns resolve to the target table, the innermost scope,
    as SQL (and giql on DuckDB) resolves them, so nothing is correlated."""
    res = ctx.resolution
    ref = res.slot("reference") if res is not None else None
    if not isinstance(ref, ResolvedInterval) or ref.kind != "column":
        return False
    col = maybe_parse(ref.chrom, dialect=GIQLDialect)
    return isinstance(col, exp.Column) and not col.table


def _uncorrelated_lateral(node: exp.Expression, ctx) -> exp.Expression:
    """``CROSS JOIN LATERAL NEAREST(...)`` whose reference reads no outer
    column: giql's standalone top-k, joined as a plain derived table."""
    lateral = node.parent
    alias = lateral.args.get("alias")
    if alias is None or not alias.name:
        alias = exp.TableAlias(this=exp.to_identifier(ctx.alias()))
    res = ctx.resolution
    ranked = giql_nearest._lateral_form(node, ctx, res.slot("this").name, res.slot("this"), res.slot("reference"))
    subquery = ranked if isinstance(ranked, exp.Subquery) else exp.Subquery(this=ranked)
    subquery.set("alias", alias.copy())
    lateral.replace(subquery)
    return node  # detached: the expander's own replace is a no-op


def _expand_nearest(node: exp.Expression, ctx) -> exp.Expression:
    lateral = node.parent
    join = lateral.parent if isinstance(lateral, exp.Lateral) else None
    if join is not None and _unqualified_reference(ctx):
        return _uncorrelated_lateral(node, ctx)
    if join is not None:
        _attach_outer_relation(node, ctx)
    side = (join.args.get("side") or "").upper() if join is not None else ""
    result = giql_nearest.expand_nearest(node, ctx)
    if join is None or lateral.parent is not None:
        # Standalone NEAREST (literal reference): a single ORDER BY ... LIMIT k
        # scan, which Spark runs as a top-k without pairing anything.
        return result
    # giql swapped the LATERAL for its decorrelated subquery in place, as an inner join. A
    # LEFT JOIN LATERAL keeps the outer rows that have no nearest row (NULLs), as DuckDB's
    # correlated LATERAL does: the join back must stay a LEFT join.
    if side == "LEFT":
        join.set("side", "LEFT")
    subquery = join.this
    table = _target_table(ctx)
    subquery.meta[NEAREST_CANDIDATES] = NearestRequest(
        k=int(str(node.args["k"])) if node.args.get("k") else 1,
        stranded=coerce_bool_param(node.args.get("stranded")),
        target_cols=tuple(ctx.resolution.slot("this").cols),
        target_strand_col=table.strand_col if table is not None else None,
        reference_stranded=_reference_stranded(ctx),
    )
    return result


def _reference_stranded(ctx) -> bool:
    res = ctx.resolution
    ref = res.slot("reference") if res is not None else None
    return ref is not None and getattr(ref, "strand", None) is not None


def _target_table(ctx):
    res = ctx.resolution
    if res is None:
        return None
    table = res.output_tables.get("this")
    if table is not None:
        return table
    slot = res.slot("this")
    if slot is None:
        return None
    return slot.table or (ctx.tables.get(slot.name) if slot.name else None)


def _tag_contains_point(node: exp.Expression, interval: tuple, point: tuple) -> exp.Expression:
    """Mark ``node`` (a conjunction) as "interval holds point" for the planner.

    ``interval`` is (chrom, start, end) and ``point`` (chrom, pos) as column
    nodes; the point is the zero-width hull [pos, pos].
    """
    holder = tuple(c.copy() for c in interval)
    dot = (point[0].copy(), point[1].copy(), point[1].copy())
    wrapped = exp.Paren(this=node.copy())
    wrapped.meta[INTERVAL_PREDICATE] = IntervalPredicate("contains", holder, dot)
    return wrapped


def _comparisons(node: exp.Expression) -> dict:
    """Map comparison class -> node for a flat AND of comparisons."""
    out = {}
    for c in node.flatten() if isinstance(node, exp.And) else [node]:
        out[type(c)] = c
    return out


def _expand_disjoin(node: exp.Expression, ctx) -> exp.Expression:
    """giql's DISJOIN, with its two range joins marked for the planner.

    giql cuts each target at the breakpoints strictly inside it
    (``bp.chrom = t.chrom AND bp.pos > t.start AND bp.pos < t.end``) and, with
    a reference table, keeps segments whose start a reference covers (an
    ``EXISTS`` with ``r.start <= s.seg_start AND r.end > s.seg_start``). Both
    are interval-holds-point joins that Spark would otherwise run as a loop
    over all pairs of a chromosome.
    """
    result = giql_disjoin.expand_disjoin(node, ctx)
    for join in list(result.find_all(exp.Join)):
        on = join.args.get("on")
        if not (isinstance(join.this, exp.Table) and join.this.name == "__giql_dj_bp" and on is not None):
            continue
        cmp = _comparisons(on)
        eq, gt, lt = cmp.get(exp.EQ), cmp.get(exp.GT), cmp.get(exp.LT)
        if eq is not None and gt is not None and lt is not None and len(cmp) == 3:
            # bp.chrom = t.chrom AND bp.pos > t.start AND bp.pos < t.end
            join.set("on", _tag_contains_point(on, (eq.expression, gt.expression, lt.expression), (eq.this, gt.this)))
    for sub in list(result.find_all(exp.Exists)):
        select = sub.this
        where = select.args.get("where") if isinstance(select, exp.Select) else None
        if where is None:
            continue
        cmp = _comparisons(where.this)
        eq, lte, gt = cmp.get(exp.EQ), cmp.get(exp.LTE), cmp.get(exp.GT)
        if eq is not None and lte is not None and gt is not None and len(cmp) == 3:
            # r.chrom = s.kc AND r.start <= s.seg_start AND r.end > s.seg_start
            where.set("this", _tag_contains_point(
                where.this, (eq.this, lte.this, gt.this), (eq.expression, lte.expression)))
    return result


def _expand_distance(node: exp.Expression, ctx) -> exp.Expression:
    """giql's DISTANCE CASE, marked with what it computes (a
    :class:`~giql_spark.band.DistanceMark`), so that a range join on
    a distance is recognised here, where giql expands it, and never by the
    shape of the CASE."""
    result = giql_distance.expand_distance(node, ctx)
    res = ctx.resolution
    a = res.column("this") if res is not None else None
    b = res.column("expression") if res is not None else None
    if a is not None and b is not None:
        stranded = coerce_bool_param(node.args.get("stranded")) and a.strand is not None and b.strand is not None
        result.meta[DISTANCE_META] = DistanceMark((a.chrom, a.start, a.end), (b.chrom, b.start, b.end),
                                                  stranded, coerce_bool_param(node.args.get("signed")))
    return result


#: giql's own mark on the subquery of its decorrelated NEAREST; the reserved
#: reference-key columns inside it are named after its value.
NEAREST_TAG_META = giql_nearest._FALLBACK_TAG_META

REGISTRY.register(SPARK, Intersects, _column_predicate("intersects", giql_intersects.expand_intersects))
REGISTRY.register(SPARK, Contains, _column_predicate("contains", giql_intersects.expand_contains))
REGISTRY.register(SPARK, Within, _column_predicate("within", giql_intersects.expand_within))
REGISTRY.register(SPARK, GIQLNearest, _expand_nearest)
REGISTRY.register(SPARK, GIQLDisjoin, _expand_disjoin)
REGISTRY.register(SPARK, GIQLDistance, _expand_distance)
