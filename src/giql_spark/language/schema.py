"""Which columns each relation of a statement has, known without Spark.

A registered table's columns are known from registration; a CTE's or a
subquery's from its select list, stars expanded through the relations they
read; a planned operator's result (the placeholder table a rule installs in
place of a join) from the operator itself: one struct column per alias of
the relations it replaced, whose fields are those relations' columns. Where
names cannot be told (a table function, an unknown table) the answer is
None, and an unnamed expression in a select list is left out: the rules only
act on what is known, and Spark reports anything left unresolved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlglot import exp

#: Meta key of a placeholder table: ``{alias: fields or None}`` of the planned
#: operator's result it stands for.
RESULT = "giql_spark_result"
#: Registered tables are read through placeholders (see :mod:`.rules.bind_tables`).
TABLE_PREFIX = "__gs_t_"

Scope = dict[str, "list[str] | None"]


def table_placeholder(name: str) -> str:
    """The placeholder a registered table ``name`` (a plain identifier) is read through."""
    return f"{TABLE_PREFIX}{name}"


def cte_in_scope(node: exp.Expression, name: str) -> exp.CTE | None:
    """The CTE named ``name`` visible from ``node``, innermost first.

    As SQL scopes them: inside a CTE's own body only the CTEs defined before
    it in the same WITH are visible (itself too under WITH RECURSIVE), so
    ``WITH t AS (SELECT * FROM t WHERE ...)`` reads the outer ``t``.
    """
    via: exp.CTE | None = None
    while node is not None:
        with_ = node.args.get("with_")
        if with_ is not None:
            ctes = list(with_.expressions)
            if via is not None and any(c is via for c in ctes):
                at = next(i for i, c in enumerate(ctes) if c is via)
                ctes = ctes[: at + 1] if with_.args.get("recursive") else ctes[:at]
            for cte in reversed(ctes):
                if cte.alias_or_name.lower() == name.lower():
                    return cte
        if isinstance(node, exp.CTE):
            via = node
        node = node.parent
    return None


def relations(select: exp.Select) -> list[exp.Expression]:
    """The relations of ``select``'s FROM and joins, in order."""
    from_ = select.args.get("from_")
    return ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]


def star_of(node: exp.Expression) -> exp.Star | None:
    """The star of ``*`` or ``x.*``, else None."""
    if isinstance(node, exp.Star):
        return node
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Star):
        return node.this
    return None


class Schema:
    """Column names of registered tables and of everything a statement builds on them."""

    def __init__(self, tables: Mapping[str, Sequence[str]], types: Mapping[str, Mapping[str, str]] | None = None):
        self._tables = {name.lower(): list(cols) for name, cols in tables.items()}
        self._names = {name.lower(): name for name in tables}
        self._types = {name.lower(): {c.lower(): t for c, t in ts.items()} for name, ts in (types or {}).items()}

    def column_type(self, rel: exp.Expression, column: str) -> str | None:
        """Spark's type name (``bigint``, ``string``...) of ``column`` of a
        registered table read directly by ``rel``; None when not known."""
        if not isinstance(rel, exp.Table) or rel.meta.get(RESULT) is not None:
            return None
        if cte_in_scope(rel, rel.name) is not None:
            return None
        key = rel.name.lower()
        if key.startswith(TABLE_PREFIX):
            key = key[len(TABLE_PREFIX):]
        return self._types.get(key, {}).get(column.lower())

    def registered(self, name: str) -> str | None:
        """The registered name ``name`` refers to (names are case-insensitive), or None."""
        return self._names.get(name.lower())

    def table(self, name: str) -> list[str] | None:
        """Columns of registered table ``name`` (or of its placeholder), in order."""
        key = name.lower()
        if key.startswith(TABLE_PREFIX):
            key = key[len(TABLE_PREFIX):]
        cols = self._tables.get(key)
        return None if cols is None else list(cols)

    def scope(self, rel: exp.Expression, depth: int = 0) -> Scope:
        """What ``q.col`` resolves against for each qualifier ``q`` that ``rel`` exposes.

        One entry, the relation's alias, for a table or subquery; one per
        struct column for a planned operator's result.
        """
        result = rel.meta.get(RESULT)
        if result is not None:
            return {a: (None if f is None else list(f)) for a, f in result.items()}
        alias = rel.alias_or_name
        if not alias:
            return {}
        return {alias: self._columns(rel, depth)}

    def star(self, rel: exp.Expression, depth: int = 0) -> list[str] | None:
        """The columns a bare ``*`` gives for ``rel``."""
        result = rel.meta.get(RESULT)
        if result is not None:
            return list(result)
        return self._columns(rel, depth)

    def select_columns(self, select: exp.Expression, depth: int = 0, strict: bool = False) -> list[str] | None:
        """Output column names of a query, stars expanded.

        An unnamed expression is left out, or, with ``strict``, makes the
        answer None (for callers that need every column in order).
        """
        if depth > 30:
            return None
        if isinstance(select, exp.Union):  # names come from the first branch
            return self.select_columns(select.this, depth + 1, strict)
        if isinstance(select, exp.Subquery):
            return self.select_columns(select.this, depth + 1, strict)
        if not isinstance(select, exp.Select):
            return None
        out: list[str] = []
        for e in select.expressions:
            star = star_of(e)
            if star is None:
                name = e.alias_or_name
                if name:
                    out.append(name)
                elif strict:
                    return None
                continue
            qualifier = e.table if isinstance(e, exp.Column) else None
            cols = self._star_columns(select, qualifier, depth)
            if cols is None:
                return None
            dropped = {c.name.lower() for c in star.args.get("except") or []}
            out.extend(c for c in cols if c.lower() not in dropped)
        return out

    def _star_columns(self, select: exp.Select, qualifier: str | None, depth: int) -> list[str] | None:
        rels = relations(select)
        if qualifier is None:
            parts = [self.star(r, depth + 1) for r in rels]
            return None if not parts or any(p is None for p in parts) else [c for p in parts for c in p]
        for rel in rels:
            found = {k.lower(): v for k, v in self.scope(rel, depth + 1).items()}
            if qualifier.lower() in found:
                return found[qualifier.lower()]
        return None

    def _columns(self, rel: exp.Expression, depth: int) -> list[str] | None:
        if isinstance(rel, exp.Subquery):
            return self.select_columns(rel.this, depth + 1)
        if not isinstance(rel, exp.Table) or not isinstance(rel.this, exp.Identifier):
            return None
        cte = cte_in_scope(rel, rel.name)
        if cte is not None and cte is not rel.find_ancestor(exp.CTE):
            return self.select_columns(cte.this, depth + 1)
        return self.table(rel.name)
