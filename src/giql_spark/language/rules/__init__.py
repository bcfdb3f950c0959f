"""The rewrite rules, in the order they run.

Each rule is a pure function ``(tree, schema) -> tree`` in its own module,
in the style of sqlglot's optimizer: it may change the tree in place and
returns it. The :class:`~giql_spark.language.schema.Schema` gives every
relation's columns without Spark, so the rules run (and are tested) without
a session. Rules that take work over for an operator record a plan node on
the root; :func:`giql_spark.language.relations.plan_nodes` lists them.
"""

from __future__ import annotations

from sqlglot import exp

from ..schema import Schema
from .bind_tables import bind_tables
from .eliminate_star_qualify import eliminate_star_qualify
from .exists_to_semi import exists_to_semi
from .expand_star_replace import expand_star_replace
from .explicit_using_stars import explicit_using_stars
from .extract_band_joins import extract_band_joins
from .extract_interval_joins import extract_interval_joins
from .extract_nearest import extract_nearest
from .fold_offsets import fold_offsets
from .nearest_rows import nearest_rows
from .null_safe_nearest_keys import null_safe_nearest_keys
from .prune_ctes import prune_ctes
from .qualify import qualify
from .read_hints import read_hints
from .refuse_unsupported import refuse_unsupported

RULES = (
    refuse_unsupported,      # forms Spark cannot run -> one line naming them
    read_hints,              # INTERVAL_JOIN hints -> options on the root
    expand_star_replace,     # * REPLACE (...) -> explicit columns
    explicit_using_stars,    # SELECT * over JOIN ... USING / NATURAL -> columns in giql's order
    eliminate_star_qualify,  # SELECT *, ... QUALIFY f -> SELECT * FROM (...) WHERE f
    bind_tables,             # registered tables -> placeholders bound at run time
    exists_to_semi,          # [NOT] EXISTS over an interval predicate -> SEMI/ANTI join
    qualify,                 # bare columns of statements with interval joins -> alias.column
    fold_offsets,            # (col - 1) < 56000000 -> col < 56000001 (a filter Spark pushes)
    null_safe_nearest_keys,  # NEAREST's join back on reference keys -> <=> (NULL keys kept)
    extract_nearest,         # correlated NEAREST -> Nearest node
    extract_interval_joins,  # interval joins -> IntervalJoin nodes
    extract_band_joins,      # joins whose condition bounds positions -> IntervalJoin nodes (band)
    nearest_rows,            # NEAREST joined back to its outer rows -> NearestRows node
    prune_ctes,              # CTEs only replaced joins read -> dropped
)


def rewrite(tree: exp.Expression, schema: Schema, rules=RULES) -> exp.Expression:
    """Apply ``rules`` to ``tree`` in order."""
    for rule in rules:
        tree = rule(tree, schema)
    return tree
