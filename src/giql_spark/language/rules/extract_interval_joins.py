"""Rule: replace each join driven by a marked interval predicate with an operator's result.

``FROM <left relations> JOIN <right> ON <interval predicate> AND <rest>``
(or a comma/CROSS join with the predicate in WHERE) becomes
``FROM <placeholder>`` and an :class:`~giql_spark.planner.nodes.IntervalJoin`
node, recorded on the statement's root (:func:`..relations.record`).
Statements are taken deepest first, so a side that reads an earlier node's
result finds it installed. The rule expects :mod:`.qualify` to have
qualified the statement's columns.
"""

from __future__ import annotations

from sqlglot import exp

from ...joins.spec import Interval, JoinSpec
from ...planner.nodes import IntervalJoin, Side
from ..relations import (aliases_of, and_, conjuncts, each_select, install_result, join_type, kept_for_spark, new_name,
                         record, sides)
from ..schema import Schema, relations
from ..target import INTERVAL_PREDICATE

_FLIP = {"intersects": "intersects", "contains": "within", "within": "contains"}


def find_interval_join(select: exp.Select):
    """The first join of ``select`` driven by a marked interval predicate.

    Returns ``(index, predicate node, "on" or "where", left interval, right
    interval, predicate name)`` or None.
    """
    if select.args.get("from_") is None:
        return None
    left_aliases = set(aliases_of(select.args["from_"].this))
    for i, join in enumerate(select.args.get("joins") or []):
        if kept_for_spark(join):
            left_aliases |= set(aliases_of(join.this))
            continue
        right_alias = join.this.alias_or_name
        on = join.args.get("on")
        places = [("on", c) for c in conjuncts(on)]
        if on is None and join_type(join) == "inner":
            where = select.args.get("where")
            places += [("where", c) for c in conjuncts(where and where.this)]
        for place, node in places:
            pred = node.meta.get(INTERVAL_PREDICATE)
            if pred is None:
                continue
            lt, rt = pred.aliases()
            if lt <= left_aliases and rt == {right_alias}:
                return i, node, place, Interval(*pred.left), Interval(*pred.right), pred.op
            if rt <= left_aliases and lt == {right_alias}:
                return i, node, place, Interval(*pred.right), Interval(*pred.left), _FLIP[pred.op]
        left_aliases |= set(aliases_of(join.this))
    return None


def fields_read(select: exp.Expression, scope: dict[str, list[str] | None]) -> dict[str, list[str] | None]:
    """Per alias, the fields ``select`` (nested queries included) reads from it.

    None where the row is used whole: ``a.*``, or ``a`` alone (``to_json(a)``,
    a lambda variable that happens to share the name), or where the alias's
    fields are not known. Over-reading is harmless; a field missed would make
    Spark fail to resolve it, loudly.
    """
    lower = {a.lower(): a for a in scope}
    read: dict[str, set[str] | None] = {a: (set() if scope[a] is not None else None) for a in scope}
    for col in select.find_all(exp.Column):
        parts = col.parts
        alias = lower.get(parts[0].name.lower()) if isinstance(parts[0], exp.Identifier) else None
        if alias is None or read[alias] is None:
            continue
        if len(parts) == 1 or isinstance(parts[1], exp.Star):
            read[alias] = None
        else:
            read[alias].add(parts[1].name.lower())
    return {a: None if names is None else [f for f in scope[a] if f.lower() in names] for a, names in read.items()}


def kept_fields(select: exp.Expression, scope: dict[str, list[str] | None]) -> dict[str, list[str] | None] | None:
    """Per alias, the fields ``select`` reads once its interval join is replaced by the join's result
    (:func:`fields_read`), or None when a ``*`` other than ``a.*`` or ``COUNT(*)`` may read every column."""
    if any(not isinstance(s.parent, (exp.Column, exp.Count)) for s in select.find_all(exp.Star)):
        return None
    return fields_read(select, scope)


#: Aggregates whose value per group the JVM operators can give from per-left-row counts and sums.
_PER_ROW_AGGREGATES = (exp.Count, exp.Sum, exp.First, exp.Last, exp.Min, exp.Max)


def _per_left_row(select: exp.Select, left_aliases: list[str]) -> bool:
    """Whether ``select`` (its only join the interval join) groups by the left side's columns
    alone and aggregates only by counts, sums and the like: then the JVM operators count per
    left row instead of making pairs. An estimate for the cost model; the JVM decides exactly."""
    group = select.args.get("group")
    if group is None or not group.expressions or len(select.args.get("joins") or []) != 1:
        return False
    left = {a.lower() for a in left_aliases}
    cols = [c for g in group.expressions for c in g.find_all(exp.Column)]
    if not cols or any(c.table.lower() not in left for c in cols):
        return False
    for agg in select.find_all(exp.AggFunc):
        if isinstance(agg, exp.Count) and isinstance(agg.this, exp.Distinct):
            return False
        if not isinstance(agg, _PER_ROW_AGGREGATES):
            return False
    return True


def _count_only(select: exp.Select) -> bool:
    """Whether ``select`` (its only join the interval join, inner) returns just ``COUNT(*)``."""
    if select.args.get("group") or len(select.args.get("joins") or []) != 1 or len(select.expressions) != 1:
        return False
    e = select.expressions[0]
    e = e.this if isinstance(e, exp.Alias) else e
    return isinstance(e, exp.Count) and isinstance(e.this, exp.Star)


def _extract(select: exp.Select, schema: Schema) -> bool:
    found = find_interval_join(select)
    if found is None:
        return False
    i, pred_node, place, left_iv, right_iv, op = found
    join = select.args["joins"][i]
    (lsql, laliases, lscope), (rsql, raliases, rscope) = sides(select, i, schema)
    per_row = _per_left_row(select, laliases)
    count_only = join_type(join) == "inner" and _count_only(select)
    # Read before the predicate leaves WHERE: the operator evaluates it on these fields.
    fields = fields_read(select, {**lscope, **rscope})
    if place == "on":
        residual = [c for c in conjuncts(join.args.get("on")) if c is not pred_node]
    else:
        residual = []
        where = [c for c in conjuncts(select.args["where"].this) if c is not pred_node]
        select.set("where", exp.Where(this=and_(where)) if where else None)
    spec = JoinSpec(how=join_type(join), predicate=op, left=left_iv, right=right_iv,
                    condition=pred_node.copy(), residual=and_([r.copy() for r in residual]))
    node = IntervalJoin(new_name(), Side(lsql, laliases, lscope), Side(rsql, raliases, rscope), spec,
                        fields=fields, per_row=per_row, count_only=count_only)
    install_result(select, i, node)
    node.kept = kept_fields(select, {**lscope, **rscope})
    record(select, node)
    return True


def extract_interval_joins(tree: exp.Expression, schema: Schema) -> exp.Expression:
    return each_select(tree, _extract, schema)


def joined_selects(tree: exp.Expression) -> list[exp.Select]:
    """The statements that have an interval join to extract."""
    return [s for s in tree.find_all(exp.Select) if find_interval_join(s) is not None]


__all__ = ["extract_interval_joins", "fields_read", "kept_fields", "find_interval_join", "joined_selects", "relations"]
