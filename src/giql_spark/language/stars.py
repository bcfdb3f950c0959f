"""Spell out ``* REPLACE (...)`` for Spark, which has no such projection.

giql keeps a table's column order when it re-encodes coordinates by emitting
``SELECT * REPLACE (expr AS start, ...)``; Spark only has ``* EXCEPT``, with
which the replaced columns would move to the end. Since the columns of every
registered table are known, each ``REPLACE`` star becomes the explicit column
list, in order, with the replaced columns' expressions in place.
"""

from __future__ import annotations

from sqlglot import exp


def _cte(select: exp.Expression, name: str) -> exp.CTE | None:
    node = select
    while node is not None:
        with_ = node.args.get("with_")
        if with_ is not None:
            for cte in with_.expressions:
                if cte.alias_or_name.lower() == name.lower():
                    return cte
        node = node.parent
    return None


def _relation(select: exp.Select, qualifier: str | None) -> exp.Expression | None:
    from_ = select.args.get("from_")
    rels = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    if qualifier is None:
        return rels[0] if len(rels) == 1 else None
    for rel in rels:
        if rel.alias_or_name.lower() == qualifier.lower():
            return rel
    return None


def _star_of(node: exp.Expression) -> exp.Star | None:
    if isinstance(node, exp.Star):
        return node
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
        return node.this
    return None


def _columns(rel: exp.Expression | None, scope: exp.Expression, tables: dict[str, list[str]], depth: int = 0) -> list[str] | None:
    """Output column names of a relation, or None when they cannot be told."""
    if rel is None or depth > 20:
        return None
    if isinstance(rel, exp.Subquery):
        return _select_columns(rel.this, tables, depth + 1)
    if not isinstance(rel, exp.Table):
        return None
    cte = _cte(scope, rel.name)
    if cte is not None:
        return _select_columns(cte.this, tables, depth + 1)
    for name, cols in tables.items():
        if name.lower() == rel.name.lower():
            return list(cols)
    return None


def _select_columns(select: exp.Expression, tables: dict[str, list[str]], depth: int) -> list[str] | None:
    if not isinstance(select, exp.Select):
        return None
    out: list[str] = []
    for e in select.expressions:
        star = _star_of(e)
        if star is None:
            if not e.alias_or_name:
                return None
            out.append(e.alias_or_name)
            continue
        qualifier = e.table if isinstance(e, exp.Column) else None
        cols = _columns(_relation(select, qualifier), select, tables, depth)
        if cols is None:
            return None
        dropped = {c.name.lower() for c in star.args.get("except") or []}
        out.extend(c for c in cols if c.lower() not in dropped)
    return out


def expand_star_replace(tree: exp.Expression, tables: dict[str, list[str]]) -> exp.Expression:
    """Rewrite every ``[x.]* REPLACE (...)`` in ``tree`` (in place) as explicit columns.

    ``tables`` maps registered table names to their columns in order. A star
    whose relation cannot be resolved keeps giql's portable form instead:
    ``* EXCEPT (replaced), replaced expressions`` (same rows, replaced
    columns last).
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
        cols = _columns(_relation(select, qualifier), select, tables)
        by_name = {a.alias.lower(): a for a in replace}
        if cols is not None:
            new = [
                by_name[c.lower()].copy() if c.lower() in by_name else exp.column(c, table=qualifier, quoted=True)
                for c in cols
                if c.lower() not in {x.name.lower() for x in star.args.get("except") or []}
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
