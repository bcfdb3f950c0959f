"""Rule: turn ``[NOT] EXISTS (SELECT .. FROM r WHERE <interval predicate> ..)`` into a join.

A top-level conjunct of WHERE that is an EXISTS over one relation, correlated
only through its WHERE, becomes ``LEFT SEMI JOIN r ON <its WHERE>`` (NOT
EXISTS: ``LEFT ANTI JOIN``), which the interval-join rule then plans. The
same holds for a WHERE with a conjunct other than an equality that relates
``r`` to the outer query (``b.start BETWEEN a.start - 500 AND a.start +
500``), which the band-join rule may plan; otherwise the join is what Spark
makes of the EXISTS itself. The subquery's bare columns are first qualified
with ``r`` where ``r`` has them, since they move out of the subquery's scope.
"""

from __future__ import annotations

from sqlglot import exp

from ..relations import aliases_of, and_, conjuncts, each_select
from ..schema import Schema
from ..target import INTERVAL_PREDICATE

_BLOCKING = ("joins", "group", "having", "limit", "distinct", "with_", "order")


def _tagged(node: exp.Expression | None) -> bool:
    return any(INTERVAL_PREDICATE in c.meta for c in conjuncts(node))


def _banded(node: exp.Expression | None, inner: str, outer: set[str]) -> bool:
    """Whether a conjunct other than an equality reads both ``inner`` and an outer alias."""
    for part in conjuncts(node):
        if isinstance(part, exp.EQ) or part.find(exp.Subquery, exp.Exists, exp.Select) is not None:
            continue
        used = {c.table.lower() for c in part.find_all(exp.Column) if c.table}
        if inner in used and used & outer:
            return True
    return False


def _one(select: exp.Select, schema: Schema) -> bool:
    where = select.args.get("where")
    if where is None or select.args.get("from_") is None:
        return False
    parts = conjuncts(where.this)
    for i, part in enumerate(parts):
        negated = isinstance(part, exp.Not)
        ex = part.this if negated else part
        if not isinstance(ex, exp.Exists) or not isinstance(ex.this, exp.Select):
            continue
        sub = ex.this
        if any(sub.args.get(k) for k in _BLOCKING):
            continue
        sub_from, sub_where = sub.args.get("from_"), sub.args.get("where")
        if sub_from is None or sub_where is None:
            continue
        rel = sub_from.this
        alias = rel.alias_or_name
        if not alias or not isinstance(rel, (exp.Table, exp.Subquery)):
            continue
        outer = {a.lower() for j in [select.args["from_"], *(select.args.get("joins") or [])]
                 for a in aliases_of(j.this)}
        if not (_tagged(sub_where.this) or (alias.lower() not in outer
                                            and _banded(sub_where.this, alias.lower(), outer))):
            continue
        names = {c.lower() for c in schema.scope(rel).get(alias) or []}
        cond = sub_where.this
        for col in list(cond.find_all(exp.Column)):
            if not col.table and col.name.lower() in names:
                col.set("table", exp.to_identifier(alias))
        join = exp.Join(this=rel.copy(), side="LEFT", kind="ANTI" if negated else "SEMI", on=cond.copy())
        select.set("joins", (select.args.get("joins") or []) + [join])
        rest = parts[:i] + parts[i + 1:]
        select.set("where", exp.Where(this=and_(rest)) if rest else None)
        return True
    return False


def exists_to_semi(tree: exp.Expression, schema: Schema) -> exp.Expression:
    return each_select(tree, _one, schema)
