"""Rule: read each registered table through a placeholder its DataFrame is bound to.

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

from ..schema import Schema, cte_in_scope, table_placeholder


def bind_tables(tree: exp.Expression, schema: Schema) -> exp.Expression:
    """Replace, in place, each reference to a registered table by its placeholder."""
    for table in list(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier) or table.args.get("db") or table.args.get("catalog"):
            continue
        name = schema.registered(table.name)
        if name is None or cte_in_scope(table, table.name) is not None:
            continue
        if not table.args.get("alias"):
            table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
        table.set("this", exp.to_identifier(table_placeholder(name)))
    return tree
