"""Published GIQL cases that once gave a wrong answer, a stack trace or a refusal.

Each runs on giql-spark and on giql + DuckDB over the same tables (the
``check`` fixture); the forms Spark cannot run must fail with one line that
names the construct and its position.
"""

import pytest

from conftest import Table
from giql_spark.errors import QueryError

# (chrom, start, end, strand, name, score), as in the published cases
COLS = "chrom string, start bigint, `end` bigint, strand string, name string, score double"


def _tables():
    peaks = [
        ("chr1", 100, 200, "+", "p1", 1.0),
        ("chr1", 150, 250, "-", "p2", 2.0),
        ("chr1", 300, 400, "+", "p3", 3.0),
        ("chr2", 10, 90, "+", "p4", 1.0),
        ("chr2", 50, 50, "-", "p5", 2.0),
    ]
    genes = [
        ("chr1", 120, 180, "+", "g1", 1.0),
        ("chr1", 100, 200, "+", "p1", 1.0),  # agrees with p1 on every column
        ("chr1", 240, 320, "-", "g2", 2.0),
        ("chr2", 0, 60, "-", "p5", 5.0),     # agrees with p5 on name only
        ("chr2", 80, 120, "+", "g3", 4.0),
    ]
    return {"peaks": Table(peaks, COLS), "genes": Table(genes, COLS)}


def test_natural_join_equates_every_shared_column(check):
    rows = check("SELECT a.start, b.name FROM peaks a NATURAL JOIN genes b WHERE a.interval INTERSECTS b.interval",
                 _tables(), min_rows=1)
    assert rows == [(100, "p1")]


def test_natural_join_star_shows_shared_columns_once(check):
    check("SELECT * FROM peaks a NATURAL JOIN genes b WHERE a.interval INTERSECTS b.interval", _tables(), min_rows=1)


@pytest.mark.parametrize("using", ["name", "chrom, strand", "chrom, name"])
def test_using_join_equates_its_columns(check, using):
    check(f"SELECT a.start, b.start AS gs FROM peaks a JOIN genes b USING ({using}) "
          "WHERE a.interval INTERSECTS b.interval", _tables())


@pytest.mark.parametrize("join", ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
@pytest.mark.parametrize("using", ["name", "chrom, strand", "strand, name", "score"])
def test_using_join_star_lists_columns_as_giql_does(check, join, using):
    """SELECT * over USING: each relation's columns in its own order, a shared column once where
    the first relation has it (Spark lists the shared columns first), with COALESCE's value."""
    tables = _tables()
    tables["genes"].rows.append(("chr3", 5, 9, None, None, None))  # NULL keys match nothing
    check(f"SELECT * FROM peaks a {join} genes b USING ({using})", tables, min_rows=1)
    check(f"SELECT * FROM peaks a {join} genes b USING ({using}) WHERE a.interval INTERSECTS b.interval "
          "OR a.chrom IS NULL OR b.chrom IS NULL", tables)
    check(f"SELECT b.*, a.* FROM peaks a {join} genes b USING ({using})", tables, min_rows=1)
    check(f"SELECT *, a.score * 2 AS twice FROM peaks a {join} genes b USING ({using})", tables, min_rows=1)


@pytest.mark.parametrize("select", [
    "SELECT *, CLUSTER(interval) AS cid FROM peaks QUALIFY cid > 1",
    "SELECT *, CLUSTER(interval, 60) AS cid FROM peaks QUALIFY cid >= 1",
    "SELECT *, CLUSTER(interval, stranded := true) AS cid FROM peaks QUALIFY cid = 1",
    "SELECT *, ROW_NUMBER() OVER (PARTITION BY chrom ORDER BY start) AS rn FROM peaks QUALIFY rn = 1",
    "SELECT *, CLUSTER(interval) AS cid FROM peaks QUALIFY COUNT(*) OVER (PARTITION BY chrom) > 2",
    "SELECT a.*, CLUSTER(a.interval) AS cid FROM peaks a QUALIFY cid > 1",
    "SELECT * FROM (SELECT *, CLUSTER(interval) AS cid FROM peaks QUALIFY cid > 1) t",
])
def test_star_with_qualify_keeps_each_column_once(check, select):
    check(select, _tables(), min_rows=1)


def test_stranded_nearest_from_a_table_without_strand(check):
    t = _tables()
    nostr = Table([r[:3] + r[4:5] for r in t["peaks"].rows], "chrom string, start bigint, `end` bigint, name string")
    check("SELECT * FROM nostr CROSS JOIN LATERAL NEAREST(genes, k := 1, stranded := true)",
          {"nostr": nostr, "genes": t["genes"]}, min_rows=1)


def test_cte_shadowing_a_table_inside_disjoin_under_union_all(check):
    features = Table([("chr1", 0, 100, "+", "a", 1.0), ("chr1", 50, 150, "+", "b", 1.0),
                      ("chr1", 120, 200, "-", "a", 1.0), ("chr2", 5, 25, "+", "b", 1.0)], COLS)
    check("SELECT 'shadowed' AS tag, disjoin_chrom, disjoin_start, disjoin_end FROM (WITH features AS "
          "(SELECT * FROM features WHERE name = 'a') SELECT * FROM DISJOIN(features, reference := features)) AS s "
          "UNION ALL SELECT 'unshadowed' AS tag, disjoin_chrom, disjoin_start, disjoin_end FROM DISJOIN(features) "
          "ORDER BY tag, disjoin_start", {"features": features}, min_rows=4)


def test_cte_reads_the_table_it_shadows(check):
    check("WITH peaks AS (SELECT * FROM peaks WHERE score > 1) "
          "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
          _tables(), min_rows=1)


@pytest.mark.parametrize("k, stranded", [(3, "true"), (1, "false")])
def test_nearest_with_an_unqualified_reference(check, k, stranded):
    check(f"SELECT * FROM peaks CROSS JOIN LATERAL NEAREST(genes, reference := interval, k := {k}, "
          f"stranded := {stranded})", _tables(), min_rows=1)


@pytest.mark.parametrize("query, construct", [
    ("SELECT * FROM peaks ORDER BY EXISTS (SELECT 1 FROM genes WHERE genes.name = peaks.name)",
     "ORDER BY EXISTS (...) at line 1, column 21"),
    ("SELECT * FROM peaks ORDER BY name IN (SELECT name FROM genes)", "ORDER BY IN (SELECT ...) at line 1"),
    ("SELECT a.* AS x FROM peaks a", "a.* AS x at line 1, column 8"),
    ("SELECT MIN(COLUMNS(*)) FROM peaks", "COLUMNS(...) at line 1, column 12"),
    ("SELECT name,\n  COLUMNS('s.*') FROM peaks", "COLUMNS(...) at line 2, column 3"),
])
def test_forms_spark_cannot_run_get_one_line(session, query, construct):
    for name, t in _tables().items():
        session.register(name, session.spark.createDataFrame(t.rows, t.schema))
    with pytest.raises(QueryError) as err:
        session.sql(query)
    msg = str(err.value)
    assert msg.startswith(construct), msg
    assert "\n" not in msg and len(msg) < 300
