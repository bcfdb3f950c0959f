"""Name each registered table in a statement by a placeholder its DataFrame is bound to.

Spark Connect resolves a table name whenever a result is used, so a result
that read ``peaks`` by name would read whatever ``peaks`` is registered as
then. Each reference to a registered table becomes a placeholder that
:func:`giql_spark.spark_sql.bound_sql` binds to the DataFrame registered when
the query was planned; the reference keeps its name as its alias, so
``peaks.start`` still resolves. A CTE of the same name shadows the table and
is left alone.
"""

from __future__ import annotations

from sqlglot import exp

PREFIX = "__gs_t_"


def placeholder(name: str) -> str:
    """The placeholder of registered table ``name`` (a plain identifier)."""
    return f"{PREFIX}{name}"


def _cte_names(node: exp.Expression) -> set[str]:
    names: set[str] = set()
    while node is not None:
        with_ = node.args.get("with_")
        if with_ is not None:
            names |= {c.alias_or_name.lower() for c in with_.expressions}
        node = node.parent
    return names


def bind_tables(tree: exp.Expression, registered: list[str]) -> dict[str, str]:
    """Replace, in place, each reference to a registered table by its placeholder.

    Returns ``{placeholder: registered name}`` for the tables referenced.
    """
    by_lower = {n.lower(): n for n in registered}
    used: dict[str, str] = {}
    for table in list(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier) or table.args.get("db") or table.args.get("catalog"):
            continue
        name = by_lower.get(table.name.lower())
        if name is None or table.name.lower() in _cte_names(table):
            continue
        if not table.args.get("alias"):
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
        mark = placeholder(name)
        table.set("this", exp.to_identifier(mark))
        used[mark] = name
    return used
