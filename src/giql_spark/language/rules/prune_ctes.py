"""Rule: drop the CTE definitions nothing reads any more (their joins became operators).

A side's SQL carries its own copy of the CTEs it reads, so a CTE whose only
reader was a replaced join is dead in the statement; Spark's CTE handling
trips over definitions nothing references.
"""

from __future__ import annotations

from sqlglot import exp

from ..relations import NODES, referenced
from ..schema import Schema


def prune_ctes(tree: exp.Expression, schema: Schema) -> exp.Expression:
    if not tree.meta.get(NODES):
        return tree
    # Deepest first: an outer CTE that only a pruned inner one read is dead too.
    for with_ in sorted(tree.find_all(exp.With), key=lambda w: -w.depth):
        owner = with_.parent
        body = [
            node
            for key, value in owner.args.items()
            if key != "with_"
            for node in (value if isinstance(value, list) else [value])
            if isinstance(node, exp.Expression)
        ]
        kept = referenced(list(with_.expressions), body)
        if kept:
            with_.set("expressions", kept)
        else:
            owner.set("with_", None)
    return tree
