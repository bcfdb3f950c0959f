"""Each rewrite rule on its own, and the plan they make, without Spark.

The rules are pure functions of a tree and a Schema, so these tests build
both from GIQL text and registered columns: no SparkSession is started.
"""

from __future__ import annotations

import pytest
from giql import Table
from sqlglot import exp

from giql_spark.errors import QueryError
from giql_spark.language.compile import compile_giql
from giql_spark.language.relations import NODES, plan_nodes
from giql_spark.language.rules import RULES, rewrite
from giql_spark.language.rules.bind_tables import bind_tables
from giql_spark.language.rules.prune_ctes import prune_ctes
from giql_spark.language.rules.exists_to_semi import exists_to_semi
from giql_spark.language.rules.extract_interval_joins import extract_interval_joins
from giql_spark.language.rules.extract_nearest import extract_nearest
from giql_spark.language.rules.null_safe_nearest_keys import null_safe_nearest_keys
from giql_spark.language.rules.nearest_rows import nearest_rows
from giql_spark.language.rules.qualify import qualify
from giql_spark.language.rules.expand_star_replace import expand_star_replace
from giql_spark.language.schema import RESULT, Schema
from giql_spark.planner.nodes import IntervalJoin, Nearest, NearestRows
from giql_spark.language.plan import plan

COLS = ["chrom", "start", "end", "name", "score", "strand"]
COLUMNS = {"peaks": COLS, "genes": COLS + ["biotype"]}


def tables(**conventions) -> dict[str, Table]:
    return {n: Table(n, **conventions.get(n, {})) for n in COLUMNS}


def compiled(query: str, **conventions) -> exp.Expression:
    return compile_giql(query, tables(**conventions))


def upto(rule, query: str, **conventions) -> exp.Expression:
    """The tree after every rule up to and including ``rule``."""
    tree, schema = compiled(query, **conventions), Schema(COLUMNS)
    for r in RULES:
        tree = r(tree, schema)
        if r is rule:
            return tree
    raise AssertionError(rule)


def sql(tree: exp.Expression) -> str:
    return tree.sql(dialect="spark")


def test_rules_run_in_the_documented_order():
    assert [r.__name__ for r in RULES] == ["refuse_unsupported", "read_hints", "expand_star_replace",
                                           "explicit_using_stars", "eliminate_star_qualify", "bind_tables", "exists_to_semi",
                                           "qualify", "fold_offsets", "null_safe_nearest_keys", "extract_nearest",
                                           "extract_interval_joins",
                                           "extract_band_joins", "nearest_rows", "prune_ctes"]


def test_fold_offsets_moves_integer_constants_across_a_comparison():
    """A region literal on a 1-based table tests ``start - 1 < x``; moved, it is a filter Spark pushes."""
    from sqlglot import parse_one

    from giql_spark.language.rules.fold_offsets import fold_offsets

    tree = compile_giql("SELECT * FROM v WHERE interval INTERSECTS 'chr7:55000000-56000000'",
                        {"v": Table("v", coordinate_system="1based", interval_type="closed")})
    assert "`start` < 56000001" in fold_offsets(tree, Schema({})).sql(dialect="spark")
    out = fold_offsets(parse_one("SELECT 1 WHERE 5 >= x + 3 AND y - -2 = 4 AND (z + 1) > -4 AND a.s - 1 < b.e "
                                 "AND w - 1.5 < 3"), Schema({})).sql()
    assert out == "SELECT 1 WHERE x <= 2 AND y = 2 AND z > -5 AND a.s - 1 < b.e AND w - 1.5 < 3"


CORRELATED_NEAREST = ("SELECT a.name, b.name AS g FROM peaks a CROSS JOIN LATERAL "
                      "NEAREST(genes, reference := a.interval, k := 2, stranded := true) b")


def test_nearest_join_back_matches_null_reference_keys():
    """Every reference-key equality of the join back becomes <=>; the rank bound stays."""
    before = upto(qualify, CORRELATED_NEAREST)
    on = next(j for j in before.find_all(exp.Join) if j.args.get("on") is not None).args["on"]
    keys = [eq for eq in on.find_all(exp.EQ) if "_rk_" in eq.this.name + eq.expression.name]
    assert len(keys) == 4  # chrom, start, end, strand
    tree = null_safe_nearest_keys(before, Schema(COLUMNS))
    assert not [eq for eq in on.find_all(exp.EQ) if "_rk_" in eq.this.name + eq.expression.name]
    assert len(list(on.find_all(exp.NullSafeEQ))) == 4
    assert "IS NOT DISTINCT FROM" in sql(tree) and any(isinstance(c, exp.LTE) for c in on.find_all(exp.LTE))


# giql canonicalizes a 1-based NEAREST target in a CTE, ``SELECT * REPLACE (start - 1 AS start, ...)``.
ONE_BASED_NEAREST = "SELECT * FROM NEAREST(peaks, reference := 'chr1:100-200', k := 2)"
ONE_BASED = {"peaks": {"coordinate_system": "1based", "interval_type": "closed"}}


def test_star_replace_keeps_the_column_order():
    before = compiled(ONE_BASED_NEAREST, **ONE_BASED)
    assert any(s.args.get("replace") for s in before.find_all(exp.Star))
    tree = expand_star_replace(before, Schema(COLUMNS))
    assert not any(s.args.get("replace") for s in tree.find_all(exp.Star))
    canon = next(c for c in tree.find_all(exp.CTE))
    assert [e.alias_or_name for e in canon.this.expressions] == COLS
    assert sql(canon.this.expressions[1]) == "(`start` - 1) AS `start`"


def test_star_replace_of_an_unknown_relation_keeps_the_portable_form():
    tree = expand_star_replace(compiled(ONE_BASED_NEAREST, **ONE_BASED), Schema({}))
    star = next(s for s in tree.find_all(exp.Star) if s.args.get("except"))
    assert [c.name for c in star.args["except"]] == ["start", "end"]


def test_bind_names_registered_tables_by_placeholder_and_keeps_the_alias():
    tree = bind_tables(compiled("SELECT peaks.name FROM peaks JOIN genes g ON peaks.chrom = g.chrom"),
                       Schema(COLUMNS))
    text = sql(tree)
    assert "FROM __gs_t_peaks AS peaks" in text and "JOIN __gs_t_genes AS g" in text
    assert "peaks.name" in text


def test_bind_leaves_a_cte_of_the_same_name():
    tree = bind_tables(compiled("WITH peaks AS (SELECT * FROM genes) SELECT name FROM peaks"), Schema(COLUMNS))
    text = sql(tree)
    assert "FROM __gs_t_genes AS genes" in text and "SELECT name FROM peaks" in text


def test_exists_over_an_interval_predicate_becomes_a_semi_join():
    q = "SELECT name FROM peaks p WHERE p.score > 2 AND EXISTS (SELECT 1 FROM genes b WHERE p.interval INTERSECTS b.interval AND biotype = 'x')"
    tree = upto(exists_to_semi, q)
    join = next(tree.find_all(exp.Join))
    assert (join.side, join.kind) == ("LEFT", "SEMI")
    assert "b.biotype = 'x'" in sql(join)  # the bare column moved out of its scope, qualified
    assert "p.score > 2" in sql(tree.args["where"]) and not tree.find(exp.Exists)
    anti = upto(exists_to_semi, q.replace("AND EXISTS", "AND NOT EXISTS"))
    assert next(anti.find_all(exp.Join)).kind == "ANTI"


def test_exists_without_an_interval_predicate_is_left_alone():
    tree = upto(exists_to_semi, "SELECT name FROM peaks p WHERE EXISTS (SELECT 1 FROM genes b WHERE b.name = p.name)")
    assert tree.find(exp.Exists) is not None and tree.find(exp.Join) is None


def test_qualify_gives_each_bare_column_its_alias():
    q = ("SELECT name, biotype, COUNT(*) AS n FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval "
         "WHERE biotype <> 'x' GROUP BY name, biotype ORDER BY n")
    with pytest.raises(QueryError, match="column 'name' is ambiguous: it is in a, b"):
        upto(qualify, q)
    text = sql(upto(qualify, q.replace("SELECT name", "SELECT a.name").replace("BY name", "BY a.name")))
    assert "b.biotype <> 'x'" in text and "ORDER BY n" in text


def test_qualify_spells_out_a_bare_star_without_a_semi_joins_right_side():
    text = sql(upto(qualify, "SELECT * FROM peaks a LEFT SEMI JOIN genes b ON a.interval INTERSECTS b.interval"))
    assert text.startswith("SELECT a.* FROM")
    text = sql(upto(qualify, "SELECT * FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval"))
    assert text.startswith("SELECT a.*, b.* FROM")


def test_an_interval_join_becomes_a_node_and_a_placeholder():
    q = ("SELECT a.name, b.name AS g FROM peaks a LEFT JOIN genes b "
         "ON a.interval INTERSECTS b.interval AND b.score > 5 WHERE a.score > 1")
    tree = upto(extract_interval_joins, q)
    (node,) = tree.meta[NODES]
    assert isinstance(node, IntervalJoin)
    assert (node.spec.how, node.spec.predicate) == ("left", "intersects")
    assert sql(node.spec.residual) == "b.score > 5"
    assert node.left.aliases == ["a"] and node.right.aliases == ["b"]
    assert node.left.scope == {"a": COLS} and node.right.scope == {"b": COLS + ["biotype"]}
    # The join's own condition reads the intervals; nothing reads biotype or strand.
    assert node.fields == {"a": ["chrom", "start", "end", "name", "score"], "b": ["chrom", "start", "end", "name", "score"]}
    assert node.left.sql == "SELECT struct(`a`.*) AS `a` FROM __gs_t_peaks AS a"
    placeholder = tree.args["from_"].this
    assert placeholder.name == node.name and placeholder.meta[RESULT] == node.output
    assert sql(tree) == f"SELECT a.name, b.name AS g FROM `{node.name}` WHERE a.score > 1"


@pytest.mark.parametrize("select, group, per_row", [
    ("a.name, COUNT(*) AS n", "a.chrom, a.start, a.end, a.name", True),
    ("a.name, COUNT(b.name) AS n, SUM(b.score) AS s, MIN(a.score) AS m", "a.name", True),
    ("a.name, COUNT(DISTINCT b.name) AS n", "a.name", False),
    ("b.name, COUNT(*) AS n", "b.name", False),
    ("a.name, AVG(b.score) AS m", "a.name", False),
    ("a.name, b.name AS g", None, False),
])
def test_a_join_grouped_by_its_left_row_is_marked_per_row(select, group, per_row):
    q = f"SELECT {select} FROM peaks a LEFT JOIN genes b ON a.interval INTERSECTS b.interval"
    (node,) = upto(extract_interval_joins, q + (f" GROUP BY {group}" if group else "")).meta[NODES]
    assert node.per_row is per_row


@pytest.mark.parametrize("select, join, count_only", [
    ("COUNT(*)", "JOIN", True), ("COUNT(*) AS n", "JOIN", True), ("COUNT(*)", "LEFT JOIN", False),
    ("COUNT(b.name)", "JOIN", False), ("COUNT(*), MAX(a.score)", "JOIN", False),
])
def test_a_join_only_counted_is_marked(select, join, count_only):
    q = f"SELECT {select} FROM peaks a {join} genes b ON a.interval INTERSECTS b.interval"
    (node,) = upto(extract_interval_joins, q).meta[NODES]
    assert node.count_only is count_only


def test_a_chain_of_interval_joins_reads_the_earlier_result():
    q = ("SELECT a.name, c.name AS c FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval "
         "JOIN peaks c ON b.interval WITHIN c.interval")
    tree = upto(extract_interval_joins, q)
    first, second = tree.meta[NODES]
    assert first.name in second.left.sql and second.left.aliases == ["a", "b"]
    assert second.spec.predicate == "within" and second.left.scope == first.output
    assert [n.name for n in plan_nodes(tree)] == [first.name, second.name]


def test_a_predicate_in_where_over_a_comma_join_is_extracted():
    tree = upto(extract_interval_joins, "SELECT a.name FROM peaks a, genes b WHERE b.interval CONTAINS a.interval "
                                        "AND a.score < b.score")
    (node,) = tree.meta[NODES]
    # The predicate was written right-to-left: the spec is flipped to the join's sides.
    assert node.spec.predicate == "within" and node.spec.residual is None
    # It left WHERE, but the operator still reads the intervals it compares.
    assert {"chrom", "start", "end"} <= set(node.fields["a"]) and {"chrom", "start", "end"} <= set(node.fields["b"])
    assert "a.score < b.score" in sql(tree.args["where"])


def test_nearest_becomes_a_candidate_node():
    q = ("SELECT a.name, n.name AS g FROM peaks a CROSS JOIN LATERAL "
         "NEAREST(genes, reference := a.interval, k := 3, stranded := true) n")
    tree = upto(extract_nearest, q)
    (node,) = tree.meta[NODES]
    assert isinstance(node, Nearest) and node.spec.k == 3 and node.spec.stranded
    assert node.spec.target[1:4] == ("chrom", "start", "end")


def test_nearest_joined_back_becomes_one_node_for_the_rows():
    q = ("SELECT a.name, n.name AS g, n.distance FROM peaks a CROSS JOIN LATERAL "
         "NEAREST(genes, reference := a.interval, k := 2, stranded := true) n")
    tree = upto(nearest_rows, q)
    cand, rows = tree.meta[NODES]
    assert isinstance(cand, Nearest) and isinstance(rows, NearestRows)
    assert rows.spec is cand.spec and rows.alias == "n" and rows.left.aliases == ["a"]
    assert {v.replace("`", "") for v in rows.keys.values()} == {"a.chrom", "a.start", "a.end", "a.strand"}
    # the statement reads the node alone: no ranking, no join back
    out = sql(tree)
    assert "ROW_NUMBER" not in out and " JOIN " not in out and rows.name in out
    # the key equality is the join's own key; the fallback is giql's join back, over the candidates
    assert rows.where is None or "chrom" not in rows.where
    assert "ROW_NUMBER" in rows.fallback.sql and cand.name in rows.fallback.sql
    assert [n.name for n in plan_nodes(tree)] == [cand.name, rows.name]


@pytest.mark.parametrize("q", [
    # the outer relation named as the targets: the node's rows could not hold both structs
    "SELECT genes.name, n.name AS g FROM genes CROSS JOIN LATERAL NEAREST(genes, reference := genes.interval) n",
    # a bare column would not resolve over the node's struct columns
    "SELECT a.name, distance FROM peaks a CROSS JOIN LATERAL NEAREST(genes, reference := a.interval, k := 1) n",
])
def test_nearest_rows_leaves_other_shapes_to_the_join_back(q):
    tree = upto(nearest_rows, q)
    assert not any(isinstance(n, NearestRows) for n in tree.meta[NODES])
    assert "ROW_NUMBER" in sql(tree)


def test_ctes_only_a_replaced_join_read_are_dropped():
    q = ("WITH hot AS (SELECT * FROM genes WHERE score > 2), cold AS (SELECT 1 AS x) "
         "SELECT a.name, h.name AS g FROM peaks a JOIN hot h ON a.interval INTERSECTS h.interval")
    before = upto(extract_interval_joins, q)
    assert "WITH" in sql(before)
    tree = prune_ctes(before, Schema(COLUMNS))
    assert "WITH" not in sql(tree)
    (node,) = tree.meta[NODES]
    assert node.right.sql.startswith("WITH hot AS")


def test_plan_needs_no_spark():
    p = plan("SELECT /*+ INTERVAL_JOIN(sweep) */ a.name FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
             tables(), COLUMNS)
    assert p.options["strategy"] == "sweep" and len(p.nodes) == 1
    assert p.sql == f"SELECT a.name FROM `{p.nodes[0].name}`"
    assert plan("SELECT name FROM peaks", tables(), COLUMNS).nodes == []


def test_a_bare_select_list_over_one_join_is_a_projection():
    join = "FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval"
    p = plan(f"SELECT a.name, b.score + 1 AS s, COUNT(*) OVER () AS n {join}", tables(), COLUMNS)
    assert p.projection == (p.nodes[0].name, ["a.name", "b.score + 1 AS s", "COUNT(*) OVER () AS n"])
    p = plan(f"SELECT COUNT(*) {join}", tables(), COLUMNS)
    assert p.projection == (p.nodes[0].name, ["COUNT(*)"])
    # anything beside the select list, or a source that is not one operator's result, is bound as SQL
    for rest in ("WHERE a.name < b.name", "ORDER BY a.name", "LIMIT 3", "GROUP BY a.name"):
        assert plan(f"SELECT a.name {join} {rest}", tables(), COLUMNS).projection is None, rest
    assert plan(f"SELECT DISTINCT a.name {join}", tables(), COLUMNS).projection is None
    assert plan("SELECT name FROM peaks", tables(), COLUMNS).projection is None
    assert plan(f"SELECT a.name {join} JOIN peaks c ON c.name = a.name", tables(), COLUMNS).projection is None


def test_rewrite_applies_the_rules_given():
    tree = rewrite(compiled("SELECT name FROM peaks"), Schema(COLUMNS), rules=(bind_tables,))
    assert "__gs_t_peaks" in sql(tree)


def test_a_range_join_becomes_a_band_node_and_a_blocked_one_is_named():
    q = ("SELECT a.name, b.name AS g FROM peaks a JOIN genes b "
         "ON a.chrom = b.chrom AND b.start BETWEEN a.start - 500 AND a.start + 500 AND b.score > 1")
    tree = rewrite(compiled(q), Schema(COLUMNS, {n: {"start": "bigint", "end": "bigint", "chrom": "string",
                                                     "score": "double"} for n in COLUMNS}))
    (node,) = tree.meta[NODES]
    assert node.spec.predicate == "band" and node.spec.how == "inner"
    assert [(sql(k), sql(v)) for k, v in node.spec.keys] == [("a.chrom", "b.chrom")]
    assert (sql(node.spec.left.start), sql(node.spec.left.end)) == ("a.start - 500", "a.start + 500")
    assert (sql(node.spec.right.start), sql(node.spec.right.end)) == ("b.start", "b.start")
    assert "b.score > 1" in sql(node.spec.condition)  # the exact condition decides every pair
    blocked = plan("SELECT a.name FROM peaks a JOIN genes b ON a.chrom = b.chrom AND a.start * b.start > 5",
                   tables(), COLUMNS)
    assert blocked.nodes == [] and list(blocked.unplanned.values()) == [
        "the condition gives equality keys but no range: a.start * b.start > 5: product of columns from both sides"]
