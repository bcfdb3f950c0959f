"""Rule: refuse, in one line, the forms Spark SQL cannot run, before Spark analyses them.

giql parses DuckDB's forms too, and Spark rejects some of them only when it
analyses the query, with a message that names its own plan nodes (or, for
a subquery in ORDER BY, a whole plan dump). Each form is found here and
named with its position in the query and what to write instead.
"""

from __future__ import annotations

import re

from sqlglot import exp

from ...errors import QueryError
from ..schema import Schema
from .read_hints import QUERY


def _position(query: str | None, pattern: str) -> str:
    """`` at line L, column C`` of the first match of ``pattern`` in ``query`` (or nothing)."""
    m = re.search(pattern, query or "", flags=re.IGNORECASE | re.DOTALL)
    if m is None:
        return ""
    before = query[: m.start()]
    line = before.count("\n") + 1
    return f" at line {line}, column {m.start() - (before.rfind(chr(10)) + 1) + 1}"


def _subquery_in_order(tree: exp.Expression, query: str | None) -> None:
    for order in tree.find_all(exp.Order):
        for key in order.expressions:
            found = next((n for n in key.find_all(exp.Exists, exp.In)
                          if isinstance(n, exp.Exists) or n.args.get("query") is not None), None)
            if found is None:
                continue
            what = "EXISTS (...)" if isinstance(found, exp.Exists) else "IN (SELECT ...)"
            where = _position(query, r"\bORDER\s+BY\b.*?\b(EXISTS|IN)\s*\(")
            raise QueryError(
                f"ORDER BY {what}{where}: Spark runs EXISTS and IN subqueries only in WHERE, ON, "
                "SELECT and aggregates; select it as a column (... AS flag) and order by that column"
            )


def _aliased_star(tree: exp.Expression, query: str | None) -> None:
    for alias in tree.find_all(exp.Alias):
        star = alias.this
        if isinstance(star, exp.Star) or (isinstance(star, exp.Column) and isinstance(star.this, exp.Star)):
            text = star.sql(dialect="spark")
            where = _position(query, re.escape(text).replace(r"\.", r"\s*\.\s*") + r"\s+AS\b")
            raise QueryError(
                f"{text} AS {alias.alias}{where}: a star cannot be renamed in Spark SQL (a DuckDB form); "
                f"write struct({text}) AS {alias.alias} for one column holding the row, or name the columns"
            )


def _columns_expression(tree: exp.Expression, query: str | None) -> None:
    if tree.find(exp.Columns) is not None:
        where = _position(query, r"\bCOLUMNS\s*\(")
        raise QueryError(
            f"COLUMNS(...){where}: a DuckDB column-set expression, "
            "which Spark SQL does not have; name the columns"
        )


def refuse_unsupported(tree: exp.Expression, schema: Schema) -> exp.Expression:
    query = tree.meta.get(QUERY)
    _subquery_in_order(tree, query)
    _aliased_star(tree, query)
    _columns_expression(tree, query)
    return tree
