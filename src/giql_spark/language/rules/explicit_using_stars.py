"""Rule: ``SELECT *`` over ``JOIN ... USING`` (or ``NATURAL JOIN``) as explicit columns, in giql's order.

Spark lists a USING join's shared columns first, then each side's other
columns; giql on DuckDB keeps every relation's columns in their own order and
shows a shared column once, where its first relation has it, with the value
of ``COALESCE(left, right)`` (the left one for inner and left joins, the
right one where a right join's row has no left). So ``SELECT * FROM peaks a
JOIN genes b USING (name)`` gave ``name`` first on Spark and fourth on DuckDB;
Spark's ``a.*`` puts it first too. A star (bare, or one relation's) whose
relations' columns are known becomes those columns, qualified, in DuckDB's
order and with its values.
"""

from __future__ import annotations

from sqlglot import exp

from ..schema import Schema, relations


def _shared(join: exp.Join, left_cols: list[str], cols: list[str]) -> list[str]:
    """The columns ``join`` merges: its USING list, or for NATURAL the names both sides have."""
    if join.args.get("using"):
        return [u.name.lower() for u in join.args["using"]]
    if str(join.args.get("method") or "").upper() == "NATURAL":
        have = {c.lower() for c in left_cols}
        return [c.lower() for c in cols if c.lower() in have]
    return []


def _merged(name: str, left: str, right: str, side: str) -> exp.Expression:
    a, b = exp.column(name, table=left, quoted=True), exp.column(name, table=right, quoted=True)
    if side == "RIGHT":
        return b
    if side == "FULL":
        return exp.alias_(exp.Coalesce(this=a, expressions=[b]), name, quoted=True)
    return a


def _all_columns(select: exp.Select, rels: list, cols: list) -> list[exp.Expression]:
    """A bare star's columns, in DuckDB's order, shared ones merged."""
    joins = select.args.get("joins") or []
    out: list[exp.Expression] = []
    where: dict[str, int] = {}  # a shown column's name -> its place in out
    owner: dict[str, str] = {}  # ... and the relation it came from
    for i, (rel, names) in enumerate(zip(rels, cols)):
        alias = rel.alias_or_name
        shared = set(_shared(joins[i - 1], [c for cs in cols[:i] for c in cs], names)) if i else set()
        side = str(joins[i - 1].args.get("side") or "").upper() if i else ""
        for c in names:
            key = c.lower()
            if key in shared and key in where:
                out[where[key]] = _merged(c, owner[key], alias, side)
                continue
            where.setdefault(key, len(out))
            owner.setdefault(key, alias)
            out.append(exp.column(c, table=alias, quoted=True))
    return out


def _expand(select: exp.Select, schema: Schema) -> None:
    rels = relations(select)
    cols = [schema.star(r) for r in rels]
    if any(c is None for c in cols) or any(not r.alias_or_name for r in rels):
        return
    by_alias = {r.alias_or_name.lower(): (r.alias_or_name, c) for r, c in zip(rels, cols)}
    out: list[exp.Expression] = []
    for e in select.expressions:
        star = e if isinstance(e, exp.Star) else e.this if isinstance(e, exp.Column) and isinstance(
            e.this, exp.Star) else None
        if star is None or star.args.get("except") or star.args.get("replace"):
            out.append(e)
        elif isinstance(e, exp.Star):
            out.extend(_all_columns(select, rels, cols))
        elif e.table.lower() in by_alias:
            alias, names = by_alias[e.table.lower()]
            out.extend(exp.column(c, table=alias, quoted=True) for c in names)
        else:
            out.append(e)
    select.set("expressions", out)


def explicit_using_stars(tree: exp.Expression, schema: Schema) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        joins = select.args.get("joins") or []
        if any(j.args.get("using") or str(j.args.get("method") or "").upper() == "NATURAL" for j in joins):
            _expand(select, schema)
    return tree
