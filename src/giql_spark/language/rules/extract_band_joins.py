"""Rule: a join whose condition bounds one side's positions by the other's becomes a band join.

Any join left after :mod:`.interval_join` (DISTANCE <= d, windows, slop,
``ABS(a.pos - b.pos) < k``, a point in an interval written by hand, a
time-series band) would run as Spark plans it: a hash join on its equality
keys, or none, with the range as a filter — a nested loop per key. Its
condition's conjuncts that relate the two sides are handed to
:func:`giql_spark.band.derive_band`, which finds equality keys and a
hull per side such that every pair satisfying the condition has equal keys
and hulls that share a point. With hulls, the join becomes an
:class:`~giql_spark.planner.nodes.IntervalJoin` of predicate ``band``: the
interval strategies run it on those keys and hulls, and the exact condition
still decides every pair, so the band only prunes.

A join whose condition is only equalities is left to Spark's hash join. A
join no band can be derived for is left as it was, and the reason (which
conjunct blocked it) is kept for EXPLAIN (:data:`UNPLANNED`).
"""

from __future__ import annotations

from sqlglot import exp

from ...joins.spec import band_spec
from ...band import Blocked, derive_band
from ...planner.nodes import IntervalJoin, Side
from ..relations import (aliases_of, and_, conjuncts, each_select, install_result, join_type, kept_for_spark, new_name,
                         record, sides)
from ..schema import Schema, relations
from .extract_interval_joins import fields_read, kept_fields

#: Meta key of the root: ``{join: reason}`` for the joins no band was derived for.
UNPLANNED = "giql_spark_unplanned"
_INTEGRAL = {"tinyint", "smallint", "int", "bigint", "byte", "short", "integer", "long"}


def _aliases(node: exp.Expression) -> set[str]:
    return {c.table.lower() for c in node.find_all(exp.Column) if c.table}


def _relates(part: exp.Expression, left: set[str], right: set[str]) -> bool:
    """Whether ``part`` reads both sides and nothing else (and no subquery)."""
    if part.find(exp.Subquery, exp.Exists, exp.Select) is not None:
        return False
    used = _aliases(part)
    return bool(used & left) and bool(used & right) and used <= left | right


def _equalities_only(parts: list[exp.Expression]) -> bool:
    return all(isinstance(p, exp.EQ) for p in parts)


def _types(select: exp.Select, parts: list[exp.Expression], schema: Schema) -> dict[str, str | None]:
    """Spark's type name of each column ``alias.name`` the parts read (None: not known)."""
    by_alias = {r.alias_or_name.lower(): r for r in relations(select)}
    out = {}
    for col in (c for p in parts for c in p.find_all(exp.Column)):
        rel = by_alias.get(col.table.lower())
        out[f"{col.table}.{col.name}".lower()] = schema.column_type(rel, col.name) if rel is not None else None
    return out


def _integer_columns(select: exp.Select, parts: list[exp.Expression], schema: Schema) -> bool:
    """Whether the columns the range conjuncts compute with are all known
    integers, so strict comparisons may tighten by one. Strings (a
    chromosome inside a DISTANCE, say) take no part in the arithmetic."""
    ranged = [p for p in parts if not isinstance(p, exp.EQ)]
    types = _types(select, ranged, schema).values()
    return all(t is not None and (t.lower() in _INTEGRAL or t.lower() == "string") for t in types)


def _is_number(t: str) -> bool:
    return t.lower() in _INTEGRAL or t.lower().startswith(("decimal", "double", "float"))


def _not_numeric(band, select: exp.Select, schema: Schema) -> str | None:
    """A hull column known not to hold numbers, which no hull can be made of."""
    for name, t in _types(select, _ends(band), schema).items():
        if t is not None and not _is_number(t):
            return f"{name} is {t}, not a number: the range cannot be ordered by position"
    return None


def _ends(band) -> list[exp.Expression]:
    return [band.left.lo, band.left.hi, band.right.lo, band.right.hi]


def _ends_numeric(band, select: exp.Select, schema: Schema) -> bool:
    """Whether every column the hull ends read is known to be a number."""
    return all(t is not None and _is_number(t) for t in _types(select, _ends(band), schema).values())


def _extract(select: exp.Select, schema: Schema) -> bool:
    from_ = select.args.get("from_")
    if from_ is None:
        return False
    left = {a.lower() for a in aliases_of(from_.this)}
    for i, join in enumerate(select.args.get("joins") or []):
        right = {a.lower() for a in aliases_of(join.this)}
        if kept_for_spark(join) or len(right) != 1:
            left |= right
            continue
        on = join.args.get("on")
        where = select.args.get("where")
        if on is not None:
            place, parts = "on", conjuncts(on)
        elif join_type(join) == "inner" and where is not None:
            place, parts = "where", conjuncts(where.this)
        else:
            left |= right
            continue
        cross = [p for p in parts if _relates(p, left, right)]
        if not cross or _equalities_only(cross):
            left |= right
            continue
        band = derive_band(and_(cross), left, right, integer_columns=_integer_columns(select, cross, schema))
        why = (band.reason if isinstance(band, Blocked)
               else f"the condition gives equality keys but no range: {band.blocked}" if band.left is None
               else _not_numeric(band, select, schema))
        if why is not None:
            what = f"{join_type(join).upper()} join of ({', '.join(sorted(left))}) x ({', '.join(sorted(right))})"
            select.root().meta.setdefault(UNPLANNED, {})[what] = why
            left |= right
            continue
        (lsql, laliases, lscope), (rsql, raliases, rscope) = sides(select, i, schema)
        fields = fields_read(select, {**lscope, **rscope})
        if place == "on":
            condition = on.copy()
        else:
            condition = and_([p.copy() for p in cross])
            rest = [p for p in parts if not any(p is c for c in cross)]
            select.set("where", exp.Where(this=and_(rest)) if rest else None)
        spec = band_spec(join_type(join), condition, band, ends_numeric=_ends_numeric(band, select, schema))
        node = IntervalJoin(new_name(), Side(lsql, laliases, lscope), Side(rsql, raliases, rscope), spec, fields)
        install_result(select, i, node)
        node.kept = kept_fields(select, {**lscope, **rscope})
        record(select, node)
        return True
    return False


def extract_band_joins(tree: exp.Expression, schema: Schema) -> exp.Expression:
    return each_select(tree, _extract, schema)


__all__ = ["UNPLANNED", "extract_band_joins"]
