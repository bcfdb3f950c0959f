"""Rule: turn ``SELECT *, ... QUALIFY <filter>`` into a filtered subquery that keeps each column once.

Spark has no QUALIFY; sqlglot's Spark generator rewrites it as
``SELECT <outputs> FROM (<statement>) AS _t WHERE <filter>``. Its outputs
are the statement's projections by name, so a star beside a named one
(``SELECT *, CLUSTER(interval) AS cid ... QUALIFY cid > 1``) comes out as
``SELECT *, cid``, and ``cid`` twice. Here a statement with a star is
rewritten first: the outer query selects ``*`` of the subquery, less the
window columns the rewrite itself added for the filter. Statements without
a star are left to the generator, which handles them right.
"""

from __future__ import annotations

from sqlglot import exp, transforms

from ..schema import Schema


def _eliminate(select: exp.Select) -> exp.Select:
    before = set(select.named_selects)
    outer = transforms.eliminate_qualify(select)
    inner = outer.args["from_"].this.this
    added = [name for name in inner.named_selects if name not in before]
    star = exp.Star(except_=[exp.column(n, quoted=True) for n in added]) if added else exp.Star()
    outer.set("expressions", [star])
    return outer


def eliminate_star_qualify(tree: exp.Expression, schema: Schema) -> exp.Expression:
    # Deepest first, so an outer statement's subquery is already rewritten.
    for select in sorted(tree.find_all(exp.Select), key=lambda s: -s.depth):
        if not select.args.get("qualify") or not select.is_star:
            continue
        if select is tree:
            meta = dict(tree.meta)  # the query text and hints live on the root
            tree = _eliminate(select)
            tree.meta.update(meta)
            continue
        marker = exp.Null()
        select.replace(marker)
        marker.replace(_eliminate(select))
    return tree
