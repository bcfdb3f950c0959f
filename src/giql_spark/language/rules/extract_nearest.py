"""Rule: feed giql's decorrelated NEAREST with a k-nearest candidate operator.

giql expands a correlated NEAREST (no LATERAL on Spark) into a subquery that
cross-joins every target with every reference of its chromosome and ranks
them. The subquery's inner join is replaced with a
:class:`~giql_spark.planner.nodes.Nearest` node's result: per reference, only
the targets that can rank within the k nearest. giql's ranking SQL above it
stays as emitted.
"""

from __future__ import annotations

from sqlglot import exp

from ...joins.spec import NearestSpec
from ...planner.nodes import Nearest, Side
from ..relations import alias_of, install_result, new_name, record, sides
from ..schema import Schema
from ..target import NEAREST_CANDIDATES, NEAREST_TAG_META


def _extract(subquery: exp.Subquery, schema: Schema) -> None:
    request = subquery.meta[NEAREST_CANDIDATES]
    tag = subquery.meta.get(NEAREST_TAG_META)
    try:
        inner = subquery.this.args["from_"].this.this
        join = inner.args["joins"][0]
    except (KeyError, AttributeError, TypeError, IndexError):
        return
    if not isinstance(inner, exp.Select) or len(inner.args["joins"]) != 1 or tag is None:
        return
    (lsql, laliases, lscope), (rsql, raliases, rscope) = sides(inner, 0, schema)
    target_alias = alias_of(inner.args["from_"].this)
    ref_alias = alias_of(join.this)
    chrom, start, end = request.target_cols
    key = f"{tag}_rk_"
    ref_strand = f"{key}strand" if request.stranded and request.reference_stranded else None
    target_strand = request.target_strand_col if request.stranded else None
    spec = NearestSpec(
        k=request.k,
        stranded=request.stranded and ref_strand is not None and target_strand is not None,
        target=(target_alias, chrom, start, end, target_strand),
        reference=(ref_alias, f"{key}chrom", f"{key}start", f"{key}end", ref_strand),
    )
    node = Nearest(new_name(), Side(lsql, laliases, lscope), Side(rsql, raliases, rscope), spec)
    install_result(inner, 0, node)
    record(inner, node)


def extract_nearest(tree: exp.Expression, schema: Schema) -> exp.Expression:
    for sub in list(tree.find_all(exp.Subquery)):
        if NEAREST_CANDIDATES in sub.meta:
            _extract(sub, schema)
    return tree
