"""Rule: spell out ``* REPLACE (...)`` for Spark, which has no such projection.

giql keeps a table's column order when it re-encodes coordinates by emitting
``SELECT * REPLACE (expr AS start, ...)``; Spark only has ``* EXCEPT``, with
which the replaced columns would move to the end. Since the columns of every
registered table are known, each ``REPLACE`` star becomes the explicit column
list, in order, with the replaced columns' expressions in place.
"""

from __future__ import annotations

from sqlglot import exp

from ..schema import Schema, relations


def _relation(select: exp.Select, qualifier: str | None) -> exp.Expression | None:
    rels = relations(select)
    if qualifier is None:
        return rels[0] if len(rels) == 1 else None
    return next((r for r in rels if r.alias_or_name.lower() == qualifier.lower()), None)


def expand_star_replace(tree: exp.Expression, schema: Schema) -> exp.Expression:
    """Rewrite every ``[x.]* REPLACE (...)`` in ``tree`` (in place) as explicit columns.

    A star whose relation's columns cannot be told keeps giql's portable form
    instead: ``* EXCEPT (replaced), replaced expressions`` (same rows,
    replaced columns last).
    """
    for star in list(tree.find_all(exp.Star)):
        replace = star.args.get("replace")
        if not replace:
            continue
        holder = star.parent if isinstance(star.parent, exp.Column) else star
        select = holder.parent
        if not isinstance(select, exp.Select):
            continue
        qualifier = holder.table if isinstance(holder, exp.Column) else None
        rel = _relation(select, qualifier)
        cols = schema.star(rel) if rel is not None else None
        by_name = {a.alias.lower(): a for a in replace}
        if cols is not None:
            dropped = {x.name.lower() for x in star.args.get("except") or []}
            new = [
                by_name[c.lower()].copy() if c.lower() in by_name else exp.column(c, table=qualifier, quoted=True)
                for c in cols
                if c.lower() not in dropped
            ]
        else:
            star.set("replace", None)
            star.set("except", [exp.column(a.alias, quoted=True) for a in replace])
            new = [holder] + [a.copy() for a in replace]
        exprs = []
        for e in select.expressions:
            exprs.extend(new if e is holder else [e])
        select.set("expressions", exprs)
    return tree
