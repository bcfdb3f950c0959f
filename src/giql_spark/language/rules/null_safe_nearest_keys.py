"""Rule: giql's decorrelated NEAREST joins its ranked rows back to the outer rows null-safely.

giql's fallback form (no LATERAL on Spark) ranks candidates once per distinct
reference key and joins them back with ``b.<key> = a.<column>`` on each key
column. A reference with a NULL coordinate is one distinct key too and gets
ranked candidates (giql's distance CASE gives such a pair NULL or a number,
see :mod:`giql_spark.joins.batch.nearest`), but ``=`` never matches NULL, so
the outer row lost them, where DuckDB's correlated LATERAL keeps them.
``<=>`` (``IS NOT DISTINCT FROM``) matches NULL to NULL and is otherwise
``=``: the join back is the per-row LATERAL semantics again.
"""

from __future__ import annotations

from sqlglot import exp

from ..schema import Schema
from ..target import NEAREST_TAG_META


def _key_column(node: exp.Expression, alias: str, prefix: str) -> bool:
    return isinstance(node, exp.Column) and node.table == alias and node.name.startswith(prefix)


def null_safe_nearest_keys(tree: exp.Expression, schema: Schema) -> exp.Expression:
    for sub in list(tree.find_all(exp.Subquery)):
        tag = sub.meta.get(NEAREST_TAG_META)
        join = sub.parent
        if tag is None or not isinstance(join, exp.Join) or join.args.get("on") is None:
            continue
        alias, prefix = sub.alias_or_name, f"{tag}_rk_"
        for eq in list(join.args["on"].find_all(exp.EQ)):
            if _key_column(eq.this, alias, prefix) or _key_column(eq.expression, alias, prefix):
                eq.replace(exp.NullSafeEQ(this=eq.this.copy(), expression=eq.expression.copy()))
    return tree
