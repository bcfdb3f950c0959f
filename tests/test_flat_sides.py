"""The JVM operators join registered tables' rows flat (``runtime.flat_sides``).

A side is packed as one struct column per alias; for the JVM operators' inner, semi and anti
joins of registered tables the runtime joins the tables' own columns under the aliases instead,
and packs the result again only where the statement does not read it alike. The answers and
the columns' names must not change, and the path must be the one taken.
"""

from __future__ import annotations

import pytest
from conftest import needs_classic, rows_of, run_duckdb

from data import genes, peaks
from giql_spark import runtime
from test_giql_operators import JOINS

T = {"peaks": peaks(), "genes": genes()}

ON = "FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval"
SELECTS = [
    f"SELECT COUNT(*) {ON}",
    f"SELECT a.*, b.* {ON}",
    f"SELECT a.name, b.name AS g, b.score {ON}",
    f"SELECT a.start + 1, b.name {ON}",  # named after its text: packed again
    f"SELECT COUNT(*) AS n {ON}",
    f"SELECT a.name AS x, b.end {ON} WHERE b.score > 2",
    "SELECT a.*, b.* FROM peaks a JOIN peaks b ON a.interval INTERSECTS b.interval",
    "SELECT p.name FROM peaks p WHERE EXISTS (SELECT 1 FROM genes b WHERE p.interval INTERSECTS b.interval)",
    "SELECT p.* FROM peaks p WHERE NOT EXISTS (SELECT 1 FROM genes b WHERE p.interval INTERSECTS b.interval)",
    "SELECT a.name, COUNT(*) AS n FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval GROUP BY a.name",
]


UNNAMED = {SELECTS[0], SELECTS[3]}


@pytest.fixture()
def jsession(session):
    needs_classic(session.spark)
    import giql_spark.jvm as gj

    gj.install(session.spark)
    assert gj.available(session.spark)[0]
    return session


def flat_below_join(df) -> bool:
    """Whether no struct is built below the analysed plan's join: its sides are flat (the
    optimizer may remove a packed side's struct, or not: it does for a COUNT)."""
    lines = df._jdf.queryExecution().analyzed().toString().splitlines()
    at = next(i for i, line in enumerate(lines) if "Join " in line)
    return "struct(" not in "\n".join(lines[at + 1:])


def both(session, query, monkeypatch):
    """The statement's DataFrame with flat sides, and with the packed sides as before."""
    flat = session.sql(query)
    with monkeypatch.context() as m:
        m.setattr(runtime, "FLAT_SIDES", False)
        packed = session.sql(query)
    return flat, packed


@pytest.mark.parametrize("strategy", ["jvm_broadcast", "jvm_sweep"])
@pytest.mark.parametrize("query", JOINS + SELECTS)
def test_flat_sides_give_giqls_rows_and_names(jsession, check, strategy, query):
    jsession.options["strategy"] = strategy
    # DuckDB names an unaliased expression otherwise (giql's ``__giql_agg_0`` for COUNT(*)); the
    # names against the packed sides' are compared below
    check(query, T, names=query not in UNNAMED)


@pytest.mark.parametrize("strategy", ["jvm_broadcast", "jvm_sweep"])
@pytest.mark.parametrize("query", SELECTS)
def test_flat_and_packed_sides_alike(jsession, monkeypatch, strategy, query):
    jsession.options["strategy"] = strategy
    for name, t in T.items():
        jsession.register(name, jsession.spark.createDataFrame(t.rows, t.schema), **t.mapping)
    flat, packed = both(jsession, query, monkeypatch)
    assert flat.columns == packed.columns
    assert flat.schema == packed.schema
    assert rows_of(flat.collect()) == rows_of(packed.collect())
    assert flat_below_join(flat), flat._jdf.queryExecution().analyzed().toString()
    assert not flat_below_join(packed)


def test_outer_joins_keep_packed_sides(jsession):
    """A missing side is a NULL struct, which the flat columns packed again would not be."""
    jsession.options["strategy"] = "jvm_broadcast"
    for name, t in T.items():
        jsession.register(name, jsession.spark.createDataFrame(t.rows, t.schema), **t.mapping)
    df = jsession.sql("SELECT a.name, b.name AS g FROM peaks a LEFT JOIN genes b ON a.interval INTERSECTS b.interval")
    assert not flat_below_join(df)
    assert ("p9", None) in {tuple(r) for r in df.collect()}


def test_merge_of_sorted_files_on_flat_sides(jsession, monkeypatch, tmp_path):
    spark = jsession.spark
    for name, t in T.items():
        path = str(tmp_path / name)
        (spark.createDataFrame(t.rows, t.schema).orderBy("chrom", "start").coalesce(1)
         .write.option("parquet.block.size", 256).parquet(path))
        jsession.register(name, path, format="parquet", **t.mapping)
    jsession.options["strategy"] = "jvm_merge"
    for query in SELECTS:
        flat, packed = both(jsession, query, monkeypatch)
        assert "MergeIntervalJoin" in flat._jdf.queryExecution().executedPlan().toString(), query
        assert flat_below_join(flat) and not flat_below_join(packed), query
        assert flat.columns == packed.columns, query
        _, expected = run_duckdb(query, T)
        assert rows_of(flat.collect()) == rows_of(expected), query
