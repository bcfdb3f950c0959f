"""Rule: a correlated NEAREST joined back to its outer rows becomes one node for the rows whole.

giql's decorrelated NEAREST (see :mod:`.nearest` and :mod:`.nearest_keys`) is
``<outer> JOIN (SELECT x.*, ROW_NUMBER() OVER (PARTITION BY <reference key>
ORDER BY ...) AS rn FROM (SELECT <target>.*, <distance>, <key> FROM <candidates>
WHERE ...) AS x) AS b ON b.<key> <=> <outer column> AND ... AND b.rn <= k``.
Where it has exactly that shape (an inner join, every reference key joined
back, the rank bounded by the NEAREST's k), the join is replaced with a
:class:`~giql_spark.planner.nodes.NearestRows` node: each outer row's k
nearest targets can then come from one k-nearest join, with no distinct
reference keys, no ranking shuffle and no join back. The join as giql wrote
it stays in the node as its fallback. Runs after the interval-join rules, so
outer relations already joined by an operator are that operator's result.
"""

from __future__ import annotations

from sqlglot import exp

from ...planner.nodes import Nearest, NearestRows, Side
from ..relations import (NODE, aliases_of, and_, conjuncts, each_select, install_result, join_type, kept_for_spark, new_name,
                         qualify_stars, record, scope_nodes, side_sql, sides, spark)
from ..schema import Schema, relations
from .extract_band_joins import UNPLANNED
from ..target import NEAREST_TAG_META


def _ranked(sub: exp.Subquery, tag: str):
    """(rank column, candidates alias, window order, candidates select, Nearest node), or None
    when the subquery is not giql's ranking over one Nearest node's candidates."""
    ranked = sub.this
    if not isinstance(ranked, exp.Select) or ranked.args.get("joins") or ranked.args.get("where"):
        return None
    cols = ranked.expressions
    source = ranked.args.get("from_") and ranked.args["from_"].this
    if len(cols) != 2 or not isinstance(source, exp.Subquery) or not isinstance(source.this, exp.Select):
        return None
    star, rank = cols
    ranked_alias = source.alias_or_name
    if not (isinstance(star, exp.Column) and isinstance(star.this, exp.Star) and star.table == ranked_alias):
        return None
    if not (isinstance(rank, exp.Alias) and rank.alias == f"{tag}_rn" and isinstance(rank.this, exp.Window)
            and isinstance(rank.this.this, exp.RowNumber)):
        return None
    order = rank.this.args.get("order")
    inner = source.this
    table = inner.args.get("from_") and inner.args["from_"].this
    node = table.meta.get(NODE) if isinstance(table, exp.Table) else None
    if not isinstance(node, Nearest) or inner.args.get("joins") or inner.args.get("group") is not None:
        return None
    return rank.alias, ranked_alias, [spark(o) for o in (order.expressions if order else [])], inner, node


def _key_equality(c: exp.Expression, spec) -> bool:
    """Whether ``c`` equates the reference's chromosome (or strand) with the target's: the
    k-nearest join's own keys, which it need not test again per pair."""
    if not isinstance(c, exp.EQ) or not all(isinstance(x, exp.Column) for x in (c.this, c.expression)):
        return False
    r_alias, r_chrom, _, _, r_strand = spec.reference
    t_alias, t_chrom, _, _, t_strand = spec.target
    pairs = [(r_chrom, t_chrom)] + ([(r_strand, t_strand)] if spec.stranded else [])
    sides = {(c.this.table, c.this.name), (c.expression.table, c.expression.name)}
    return any(sides == {(r_alias, r), (t_alias, t)} for r, t in pairs)


def _keys_joined_back(on: exp.Expression | None, alias: str, tag: str, k: int) -> dict[str, str] | None:
    """Each reference key field of ``alias`` and the outer expression it is joined to, when the
    ON clause is exactly those null-safe equalities and ``rn <= k``."""
    keys: dict[str, str] = {}
    bounded = False
    for c in conjuncts(on):
        if isinstance(c, exp.NullSafeEQ):
            mine, other = c.this, c.expression
            if not (isinstance(mine, exp.Column) and mine.table == alias):
                mine, other = other, mine
            if (isinstance(mine, exp.Column) and mine.table == alias and mine.name.startswith(f"{tag}_rk_")
                    and not any(isinstance(col, exp.Column) and col.table == alias for col in other.find_all(exp.Column))):
                keys[mine.name] = spark(other)
                continue
            return None
        if (isinstance(c, exp.LTE) and isinstance(c.this, exp.Column) and c.this.table == alias
                and c.this.name == f"{tag}_rn" and isinstance(c.expression, exp.Literal)
                and c.expression.is_int and int(c.expression.name) == k):
            bounded = True
            continue
        return None
    return keys if bounded else None


def _bare_columns(select: exp.Select) -> bool:
    """Whether ``select`` reads a column without its alias (outside its joins' ON clauses and
    output names in ORDER BY): over the node's result it would not resolve."""
    outputs = {e.alias.lower() for e in select.expressions if e.alias}
    for n in scope_nodes(select):
        if not isinstance(n, exp.Column) or n.table or isinstance(n.this, exp.Star):
            continue
        join = n.find_ancestor(exp.Join)
        if join is not None and join.parent is select:
            continue
        if n.find_ancestor(exp.Order) is not None and n.name.lower() in outputs:
            continue
        return True
    return False


def _step(select: exp.Select, schema: Schema) -> bool:
    for i, join in enumerate(select.args.get("joins") or []):
        sub = join.this
        tag = sub.meta.get(NEAREST_TAG_META) if isinstance(sub, exp.Subquery) else None
        if tag is None or kept_for_spark(join) or join_type(join) != "inner":
            continue
        found = _ranked(sub, tag)
        if found is None:
            continue
        rank, ranked_alias, order, inner, cand = found
        alias = sub.alias_or_name
        keys = _keys_joined_back(join.args.get("on"), alias, tag, cand.spec.k)
        _, r_chrom, r_start, r_end, r_strand = cand.spec.reference
        needed = {r_chrom, r_start, r_end} | ({r_strand} if r_strand else set())
        if keys is None or not needed <= set(keys):
            continue
        if _bare_columns(select):
            continue
        (lsql, laliases, lscope), _ = sides(select, i, schema)
        # the node's rows carry the outer structs beside the target's and the reference's
        if {cand.spec.target[0], cand.spec.reference[0], alias} & set(laliases):
            continue
        lefts = relations(select)[: i + 1]
        fallback = side_sql(select, [*lefts, sub], (select.args.get("joins") or [])[: i + 1])
        where = and_([c for c in conjuncts(inner.args["where"].this if inner.args.get("where") else None)
                      if not _key_equality(c, cand.spec)])
        node = NearestRows(
            new_name(), Side(lsql, laliases, lscope), cand.left, cand.spec, keys, alias,
            columns=[spark(e) for e in inner.expressions], where=spark(where) if where is not None else None,
            rank=rank, ranked_alias=ranked_alias, order=order,
            fallback=Side(fallback, [*laliases, alias]),
        )
        later = [a for j in (select.args.get("joins") or [])[i + 1:] if join_type(j) not in ("semi", "anti")
                 for a in aliases_of(j.this)]
        qualify_stars(select, [*laliases, alias, *later])
        # the band rule listed this join as left to Spark; it is not any more
        unplanned = select.root().meta.get(UNPLANNED, {})
        for what in [w for w in unplanned if w.endswith(f" x ({alias})")]:
            del unplanned[what]
        install_result(select, i, node)
        record(select, node)
        return True
    return False


def nearest_rows(tree: exp.Expression, schema: Schema) -> exp.Expression:
    return each_select(tree, _step, schema)
