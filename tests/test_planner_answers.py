"""Answers of a scan kept per side while its files are unchanged (planner.stats.answers).

A kept answer that outlived its files would be a wrong answer for NEAREST's rows node (the
k-nearest join on rows it cannot rank), so the tests rewrite a file in place and check the
plan changes with it.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import Table, rows_of, run_duckdb
from giql_spark.planner.stats import answers

QUERY = ("SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
         "NEAREST(genes, reference := a.interval, k := 1) b")


def _write(path, rows):
    names = ["chrom", "start", "end", "name", "score", "strand"]
    pq.write_table(pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)},
                            schema=pa.schema([("chrom", pa.string()), ("start", pa.int64()), ("end", pa.int64()),
                                              ("name", pa.string()), ("score", pa.float64()),
                                              ("strand", pa.string())])), path)


def test_a_side_of_files_is_read_once_until_a_file_changes(session, tmp_path):
    path = tmp_path / "iv.parquet"
    _write(path, [("chr1", 1, 5, "a", 1.0, "+")])
    df = session.spark.read.parquet(str(path))
    calls = []

    def ask():
        calls.append(1)
        return df.count()

    assert answers.kept(df, ("rows",), ask) == 1
    assert answers.kept(session.spark.read.parquet(str(path)), ("rows",), ask) == 1
    assert len(calls) == 1
    assert answers.kept(df.where("start > 3"), ("rows",), lambda: df.where("start > 3").count()) == 0
    _write(path, [("chr1", 1, 5, "a", 1.0, "+"), ("chr1", 7, 9, "b", 1.0, "+")])
    again = session.spark.read.parquet(str(path))
    assert answers.kept(again, ("rows",), lambda: (calls.append(1), again.count())[1]) == 2
    assert len(calls) == 2


def test_a_side_without_files_is_read_each_time_unless_allowed(session):
    df = session.spark.createDataFrame([("chr1", 1, 5)], "chrom string, start long, `end` long")
    calls = []

    def ask():
        calls.append(1)
        return len(calls)

    assert [answers.kept(df, ("q",), ask) for _ in range(2)] == [1, 2]
    assert [answers.kept(df, ("p",), ask, files_required=False) for _ in range(2)] == [3, 3]


def test_nearest_rows_follow_a_target_file_rewritten_with_a_row_the_join_cannot_rank(session, tmp_path):
    peaks = [("chr1", 10, 20, "p1", 1.0, "+"), ("chr1", 50, 60, "p2", 1.0, "-")]
    genes = [("chr1", 30, 35, "g1", 1.0, "+"), ("chr1", 70, 90, "g2", 1.0, "+")]
    p, g = tmp_path / "peaks.parquet", tmp_path / "genes.parquet"
    _write(p, peaks)
    seen = []
    # the second set's zero-length gene is the nearest of p2 by giql's CASE (distance 0)
    for rows, strategy in ((genes, "strategy: jvm_"), (genes + [("chr1", 55, 55, "g3", 1.0, "+")], "strategy: ranked")):
        _write(g, rows)
        session.register("peaks", str(p))
        session.register("genes", str(g))
        plan = session.explain(QUERY)
        assert "nearest rows:" in plan and strategy in plan.split("nearest rows:")[1], plan
        got = [tuple(r) for r in session.sql(QUERY).collect()]
        _, want = run_duckdb(QUERY, {"peaks": Table(peaks), "genes": Table(rows)})
        assert rows_of(got) == rows_of(want)
        seen.append(rows_of(got))
    assert seen[0] != seen[1]


def test_a_registered_tables_side_is_kept_across_statements_until_it_is_registered_again(session):
    from giql_spark import runtime

    schema = "chrom string, start bigint, `end` bigint, name string"
    peaks = session.spark.createDataFrame([("chr1", 1, 5, "p")], schema)
    genes = session.spark.createDataFrame([("chr1", 2, 3, "g"), ("chr1", 4, 9, "h")], schema)
    session.register("peaks", peaks)
    session.register("genes", genes)
    join = "SELECT COUNT(*) FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval"
    assert session.sql(join).collect()[0][0] == 2
    kept = dict(session._sides)
    assert len(kept) == 2  # one side per table alias
    session.sql(join).collect()
    assert all(session._sides[k][1] is v[1] for k, v in kept.items())  # the same side DataFrames
    # a table registered again under the same name is read anew, never through the old side
    session.register("genes", session.spark.createDataFrame([("chr1", 2, 3, "g")], schema))
    assert session.sql(join).collect()[0][0] == 1
    # a side is kept only on the very DataFrame it was built on
    sql = next(iter(kept))
    name = sql.rsplit(" FROM ", 1)[1].split()[0]
    other = {name: session.spark.createDataFrame([("chr2", 1, 2, "x")], schema)}
    memo = {sql: kept[sql]}
    assert runtime.analyse(session.spark, sql, other, memo) is not kept[sql][1]
