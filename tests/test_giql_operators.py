"""Every GIQL operator on Spark against giql on DuckDB, on edge-case data."""

import pytest

from data import empty, genes, peaks

T = {"peaks": peaks(), "genes": genes()}
ONE_BASED = {"peaks": peaks(), "genes": genes(coordinate_system="1based", interval_type="closed")}


LITERAL = [
    "SELECT * FROM peaks WHERE interval INTERSECTS 'chr1:150-260'",
    "SELECT * FROM peaks WHERE interval INTERSECTS 'chr1:[150,260)'",
    "SELECT * FROM peaks WHERE interval INTERSECTS 'chr1:[151,250]'",
    "SELECT * FROM peaks WHERE interval INTERSECTS 'chr1:160'",
    "SELECT * FROM peaks WHERE interval CONTAINS 'chr1:160'",
    "SELECT * FROM peaks WHERE interval CONTAINS 'chr1:120-180'",
    "SELECT * FROM peaks WHERE interval WITHIN 'chr1:0-1000'",
    "SELECT * FROM peaks WHERE interval INTERSECTS ANY('chr1:0-120', 'chr2:10-20', 'chrX:1500-1501')",
    "SELECT * FROM peaks WHERE interval INTERSECTS ALL('chr1:100-160', 'chr1:150-170')",
    "SELECT name FROM peaks WHERE NOT interval INTERSECTS 'chr1:0-1000'",
]


@pytest.mark.parametrize("query", LITERAL)
def test_literal_predicates(check, query):
    check(query, T, min_rows=1)


JOINS = [
    "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
    "SELECT * FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
    "SELECT a.*, b.name AS g FROM peaks a JOIN genes b ON b.interval INTERSECTS a.interval",
    "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval CONTAINS b.interval",
    "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval WITHIN b.interval",
    "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON b.interval WITHIN a.interval",
    "SELECT a.name, b.name AS g FROM peaks a LEFT JOIN genes b ON a.interval INTERSECTS b.interval",
    "SELECT a.name, b.name AS g FROM peaks a RIGHT JOIN genes b ON a.interval INTERSECTS b.interval",
    "SELECT a.name, b.name AS g FROM peaks a FULL OUTER JOIN genes b ON a.interval INTERSECTS b.interval",
    "SELECT a.name, b.name AS g FROM peaks a LEFT JOIN genes b ON a.interval INTERSECTS b.interval AND b.score > 5",
    "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval AND a.strand = b.strand",
    "SELECT a.name, b.name AS g FROM peaks a, genes b WHERE a.interval INTERSECTS b.interval AND b.score < 8",
    "SELECT a.name, b.name AS g FROM peaks a CROSS JOIN genes b WHERE a.interval INTERSECTS b.interval",
    "SELECT a.name, b.name AS b2 FROM peaks a JOIN peaks b ON a.interval INTERSECTS b.interval WHERE a.name < b.name",
    "SELECT a.name, b.name AS g, c.name AS c FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval "
    "JOIN peaks c ON b.interval INTERSECTS c.interval",
    "SELECT a.name, COUNT(*) AS n, SUM(b.score) AS s FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval "
    "GROUP BY a.name",
    "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval "
    "WHERE a.interval INTERSECTS 'chr1:0-200' ORDER BY a.name, g LIMIT 3",
    "SELECT name, chrom FROM peaks WHERE EXISTS (SELECT 1 FROM genes b WHERE peaks.interval INTERSECTS b.interval)",
    "SELECT name FROM peaks p WHERE NOT EXISTS (SELECT 1 FROM genes b WHERE p.interval INTERSECTS b.interval AND score > 5)",
    "SELECT name FROM peaks p WHERE p.score > 2 AND EXISTS "
    "(SELECT 1 FROM genes b WHERE p.interval INTERSECTS b.interval AND b.strand = p.strand)",
    "WITH hot AS (SELECT * FROM genes WHERE score > 2) "
    "SELECT a.name, h.name AS g FROM peaks a JOIN hot h ON a.interval INTERSECTS h.interval",
]


@pytest.mark.parametrize("query", JOINS)
def test_interval_joins(check, query):
    check(query, T, min_rows=1)


@pytest.mark.parametrize("query", JOINS[:10])
def test_interval_joins_one_based_closed(check, query):
    check(query, ONE_BASED, min_rows=1)


@pytest.mark.parametrize("query", JOINS[:9])
def test_interval_joins_with_an_empty_side(check, query):
    check(query, {"peaks": peaks(), "genes": empty()})
    check(query, {"peaks": empty(), "genes": genes()})


@pytest.mark.parametrize("strategy", ["binned", "broadcast", "sweep"])
def test_interval_join_is_not_a_nested_loop(session, check, strategy):
    session.options["strategy"] = strategy
    check(JOINS[0], T)
    plan = session.explain(JOINS[0])
    assert f"strategy: {strategy}" in plan
    assert "NestedLoopJoin" not in plan and "CartesianProduct" not in plan


def test_tiny_files_run_as_plain_sql(session, tmp_path):
    # Spark sizes file sources; an in-memory RDD it cannot size.
    for name, t in T.items():
        session.spark.createDataFrame(t.rows, t.schema).write.parquet(str(tmp_path / name))
        session.register(name, str(tmp_path / name), format="parquet")
    plan = session.explain(JOINS[0])
    assert "strategy: naive" in plan and "tiny" in plan


DISTANCE = [
    "SELECT a.name, b.name AS g, DISTANCE(a.interval, b.interval) AS d FROM peaks a CROSS JOIN genes b",
    "SELECT a.name, b.name AS g, DISTANCE(a.interval, b.interval, signed := true) AS d FROM peaks a CROSS JOIN genes b",
    "SELECT a.name, b.name AS g, DISTANCE(a.interval, b.interval, stranded := true) AS d "
    "FROM peaks a CROSS JOIN genes b",
    "SELECT a.name, b.name AS g, DISTANCE(a.interval, b.interval, stranded := true, signed := true) AS d "
    "FROM peaks a CROSS JOIN genes b",
    "SELECT a.name, b.name AS g FROM peaks a CROSS JOIN genes b WHERE DISTANCE(a.interval, b.interval) <= 60",
]


@pytest.mark.parametrize("query", DISTANCE)
@pytest.mark.parametrize("tables", [T, ONE_BASED], ids=["0based", "1based"])
def test_distance(check, query, tables):
    check(query, tables, min_rows=1)


NEAREST = [
    "SELECT * FROM NEAREST(genes, reference := 'chr1:150-160', k := 3)",
    "SELECT name FROM NEAREST(genes, reference := 'chr1:3000-3001', k := 2, max_distance := 500)",
    "SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL NEAREST(genes, reference := a.interval, k := 1) b",
    "SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL NEAREST(genes, reference := a.interval, k := 3) b",
    "SELECT a.name, b.* FROM peaks a CROSS JOIN LATERAL NEAREST(genes, reference := a.interval, k := 2) b",
    "SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
    "NEAREST(genes, reference := a.interval, k := 5, max_distance := 100) b",
    "SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
    "NEAREST(genes, reference := a.interval, k := 2, stranded := true) b",
    "SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
    "NEAREST(genes, reference := a.interval, k := 2, signed := true) b",
    "SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
    "NEAREST(genes, reference := a.interval, k := 2, stranded := true, signed := true) b",
]


@pytest.mark.parametrize("query", NEAREST)
@pytest.mark.parametrize("tables", [T, ONE_BASED], ids=["0based", "1based"])
def test_nearest(check, query, tables):
    check(query, tables, min_rows=1)


CONVENTIONS = [("0based", "half_open"), ("0based", "closed"), ("1based", "half_open"), ("1based", "closed")]
NEAREST_OPTIONS = [
    "k := 3",
    "k := 2, max_distance := 150",
    "k := 2, stranded := true",
    "k := 2, signed := true",
    "k := 2, stranded := true, signed := true, max_distance := 500",
]


@pytest.mark.parametrize("ref", CONVENTIONS, ids="-".join)
@pytest.mark.parametrize("target", CONVENTIONS, ids="-".join)
def test_nearest_every_convention_on_both_sides(check, ref, target):
    """The reference table's convention used to break the decorrelated form
    (``unknown table 'a'`` for a 1-based or closed reference)."""
    tables = {"peaks": peaks(coordinate_system=ref[0], interval_type=ref[1]),
              "genes": genes(coordinate_system=target[0], interval_type=target[1])}
    for options in NEAREST_OPTIONS:
        check("SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
              f"NEAREST(genes, reference := a.interval, {options}) b", tables, min_rows=1)
    for options in NEAREST_OPTIONS[:2]:
        check(f"SELECT name, distance FROM NEAREST(genes, reference := 'chr1:150-160', {options})", tables, min_rows=1)


def test_nearest_reference_from_a_subquery(check):
    tables = {"peaks": peaks(coordinate_system="1based", interval_type="closed"), "genes": genes()}
    check("SELECT a.name, b.name AS g, b.distance FROM (SELECT * FROM peaks WHERE score > 2) a "
          "CROSS JOIN LATERAL NEAREST(genes, reference := a.interval, k := 2) b", tables, min_rows=1)


@pytest.mark.parametrize("options", ["k := 1", "k := 2", "k := 1, stranded := true"])
def test_left_join_lateral_nearest_keeps_rows_without_a_nearest(check, options):
    """A chromosome the targets lack (and a NULL one) keeps its outer row, with NULLs, as a
    LEFT JOIN LATERAL does on DuckDB; it used to answer as an inner join."""
    Tab = __import__("conftest").Table
    tables = {"peaks": Tab([("chr1", 100, 200, "a1", 1.0, "+"), ("chr2", 100, 200, "a2", 1.0, "+"),
                            (None, 5, 9, "a3", 1.0, "-")]),
              "genes": Tab([("chr1", 300, 400, "b1", 1.0, "+"), ("chr1", 500, 600, "b2", 1.0, "-")])}
    rows = check("SELECT a.name, b.name AS g, b.distance FROM peaks a LEFT JOIN LATERAL "
                 f"NEAREST(genes, reference := a.interval, {options}) b ON true", tables, min_rows=3)
    assert ("a2", None, None) in rows and ("a3", None, None) in rows


def test_nearest_does_not_pair_every_row(session, check):
    query = NEAREST[3]
    check(query, T)
    plan = session.explain(query)
    assert "nearest" in plan and "CartesianProduct" not in plan and "NestedLoopJoin" not in plan


CLUSTER_MERGE = [
    "SELECT *, CLUSTER(interval) AS cid FROM peaks",
    "SELECT *, CLUSTER(interval, 100) AS cid FROM peaks",
    "SELECT *, CLUSTER(interval, stranded := true) AS cid FROM peaks",
    "SELECT name, CLUSTER(interval, 60, stranded := true) AS cid FROM genes",
    "SELECT MERGE(interval) FROM peaks",
    "SELECT MERGE(interval, 1000) FROM peaks",
    "SELECT MERGE(interval, stranded := true) FROM peaks",
    "SELECT MERGE(interval), COUNT(*) AS n, AVG(score) AS mean_score, MAX(name) AS top FROM peaks",
    "SELECT MERGE(interval, predicate := strand = PREV(strand)) FROM peaks",
    "SELECT *, CLUSTER(interval, predicate := score >= PREV(score)) AS cid FROM genes",
]


@pytest.mark.parametrize("query", CLUSTER_MERGE)
@pytest.mark.parametrize("tables", [T, ONE_BASED], ids=["0based", "1based"])
def test_cluster_and_merge(check, query, tables):
    check(query, tables, min_rows=1)


DISJOIN = [
    "SELECT * FROM DISJOIN(peaks)",
    "SELECT name, disjoin_start, disjoin_end FROM DISJOIN(genes, reference := peaks)",
]


@pytest.mark.parametrize("query", DISJOIN)
@pytest.mark.parametrize("tables", [T, ONE_BASED], ids=["0based", "1based"])
def test_disjoin(check, query, tables):
    check(query, tables, min_rows=1)


@pytest.mark.parametrize("query", [DISJOIN[0], DISJOIN[1], JOINS[17], JOINS[18]])
def test_range_joins_inside_operators_are_planned(session, check, query):
    check(query, T)
    plan = session.explain(query)
    assert "[1] interval join" in plan
    assert "NestedLoopJoin" not in plan and "CartesianProduct" not in plan


def test_custom_column_names(check):
    renamed = "seqname string, s bigint, e bigint, name string, score double, ori string"
    tables = {
        "peaks": peaks(),
        "genes": __import__("conftest").Table(
            genes().rows, renamed, chrom_col="seqname", start_col="s", end_col="e", strand_col="ori"
        ),
    }
    check("SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval", tables, min_rows=1)
    check("SELECT a.name, b.name AS g FROM peaks a CROSS JOIN LATERAL "
          "NEAREST(genes, reference := a.interval, k := 2, stranded := true) b", tables, min_rows=1)
