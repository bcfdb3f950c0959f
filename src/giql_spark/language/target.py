"""The Spark target for giql, and the expanders that mark work for the planner.

giql expands every GIQL operator to standard SQL for a target. Spark SQL runs
almost all of that output as is; two shapes it would run badly, so their
expansions carry a mark (an entry in the node's ``meta``) that the planner
finds after expansion and replaces with a physical operator:

* a column-to-column INTERSECTS / CONTAINS / WITHIN predicate, which Spark would
  plan as a nested loop per chromosome (:data:`INTERVAL_PREDICATE`);
* a correlated NEAREST, whose decorrelated form cross-joins every reference with
  every target row of its chromosome (:data:`NEAREST_CANDIDATES`).

The SQL giql emits stays the source of truth for the result: the planner only
replaces the pair generation under it, so coordinates, canonicalization and
tie-breaking are giql's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from giql import REGISTRY, Capabilities, Target
from giql.expanders import intersects as giql_intersects
from giql.expanders import nearest as giql_nearest
from giql.expanders._params import coerce_bool_param
from giql.expressions import Contains, GIQLNearest, Intersects, Within
from giql.resolver import ResolvedColumn
from sqlglot import exp

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

    ``left`` and ``right`` are giql's resolved operands: SQL fragments already
    in canonical 0-based half-open coordinates, qualified by table alias.
    """

    op: str  # "intersects" | "contains" | "within"
    left: ResolvedColumn
    right: ResolvedColumn


def _column_predicate(op: str, generic):
    def expand(node: exp.Expression, ctx) -> exp.Expression:
        result = generic(node, ctx)
        res = ctx.resolution
        right = res.column("expression") if res is not None else None
        left = res.column("this") if res is not None else None
        if right is not None and left is not None:
            result.meta[INTERVAL_PREDICATE] = IntervalPredicate(op, left, right)
        return result

    return expand


@dataclass(frozen=True)
class NearestRequest:
    """Parameters of a correlated NEAREST, read before giql expands it."""

    k: int
    stranded: bool
    target_cols: tuple[str, str, str]
    target_strand_col: str | None


def _expand_nearest(node: exp.Expression, ctx) -> exp.Expression:
    lateral = node.parent
    join = lateral.parent if isinstance(lateral, exp.Lateral) else None
    result = giql_nearest.expand_nearest(node, ctx)
    if join is None or lateral.parent is not None:
        # Standalone NEAREST (literal reference): a single ORDER BY ... LIMIT k
        # scan, which Spark runs as a top-k without pairing anything.
        return result
    # giql swapped the LATERAL for its decorrelated subquery in place.
    subquery = join.this
    table = _target_table(ctx)
    subquery.meta[NEAREST_CANDIDATES] = NearestRequest(
        k=int(str(node.args["k"])) if node.args.get("k") else 1,
        stranded=coerce_bool_param(node.args.get("stranded")),
        target_cols=tuple(ctx.resolution.slot("this").cols),
        target_strand_col=table.strand_col if table is not None else None,
    )
    return result


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


#: giql's own mark on the subquery of its decorrelated NEAREST; the reserved
#: reference-key columns inside it are named after its value.
NEAREST_TAG_META = giql_nearest._FALLBACK_TAG_META

REGISTRY.register(SPARK, Intersects, _column_predicate("intersects", giql_intersects.expand_intersects))
REGISTRY.register(SPARK, Contains, _column_predicate("contains", giql_intersects.expand_contains))
REGISTRY.register(SPARK, Within, _column_predicate("within", giql_intersects.expand_within))
REGISTRY.register(SPARK, GIQLNearest, _expand_nearest)
