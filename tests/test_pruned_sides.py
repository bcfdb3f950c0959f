"""Strategies that move rows through Python read only the fields a query uses.

Spark cannot prune struct fields through ``mapInArrow``, so the planner drops
the fields a statement never reads before a broadcast or sweep join. The
answers must not change: every join shape of the operator tests runs here
with those two strategies forced, plus queries that use a row whole.
"""

import pytest
from sqlglot import parse_one

from data import genes, peaks
from giql_spark.language.rules.extract_interval_joins import fields_read as _fields_read
from test_giql_operators import JOINS

T = {"peaks": peaks(), "genes": genes()}

WHOLE_ROWS = [
    # A field read only inside a correlated subquery.
    "SELECT a.name FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval "
    "WHERE EXISTS (SELECT 1 FROM peaks c WHERE c.name = b.name)",
    # Fields read only by a later join's condition and by ORDER BY.
    "SELECT a.name, c.name AS c FROM peaks a LEFT JOIN genes b ON a.interval INTERSECTS b.interval "
    "JOIN peaks c ON a.interval INTERSECTS c.interval AND c.score >= b.score ORDER BY a.name",
    "SELECT COUNT(*) AS n FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
]


@pytest.mark.parametrize("strategy", ["broadcast", "sweep"])
@pytest.mark.parametrize("query", JOINS + WHOLE_ROWS)
def test_pruned_sides_give_the_same_rows(session, check, strategy, query):
    session.options["strategy"] = strategy
    check(query, T)


@pytest.mark.parametrize("strategy", ["broadcast", "sweep"])
def test_unread_columns_are_not_scanned(session, tmp_path, strategy):
    for name, t in T.items():
        session.spark.createDataFrame(t.rows, t.schema).write.parquet(str(tmp_path / name))
        session.register(name, str(tmp_path / name), format="parquet")
    session.options["strategy"] = strategy
    q = "SELECT a.name, COUNT(*) AS n FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval GROUP BY a.name"
    plan = session.explain(q)
    assert f"strategy: {strategy}" in plan
    schemas = [line.split("ReadSchema: ")[1] for line in plan.splitlines() if "ReadSchema: " in line]
    assert schemas, plan
    # (The broadcast's build side is collected, so only the probe side's scan shows.)
    assert all("start" in s and "end" in s for s in schemas)
    assert all("score" not in s and "strand" not in s for s in schemas), schemas


def test_fields_read_per_alias():
    cols = {"a": ["chrom", "start", "end", "name"], "b": ["chrom", "start", "end", "Score", "info"]}
    q = ("SELECT a.name, to_json(b) FROM v WHERE EXISTS (SELECT 1 FROM t WHERE t.x = a.start)")
    assert _fields_read(parse_one(q, dialect="spark"), cols) == {"a": ["start", "name"], "b": None}
    q = "SELECT A.NAME, b.info.gene, b.score FROM v"
    assert _fields_read(parse_one(q, dialect="spark"), cols) == {"a": ["name"], "b": ["Score", "info"]}
    q = "SELECT b.*, COUNT(*) FROM v"
    assert _fields_read(parse_one(q, dialect="spark"), cols) == {"a": [], "b": None}


@pytest.mark.parametrize("strategy", ["broadcast", None])
def test_planning_runs_no_spark_job(session, tmp_path, strategy):
    """to_sql() plans without Spark; explain() without analyze reads statistics
    (from Parquet footers: no job) and builds no broadcast side."""
    from conftest import needs_classic

    needs_classic(session.spark)
    for name, t in T.items():
        session.spark.createDataFrame(t.rows, t.schema).write.parquet(str(tmp_path / name))
        session.register(name, str(tmp_path / name), format="parquet")
    session.options["strategy"] = strategy
    q = "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval"
    sc = session.spark.sparkContext
    tracker = sc.statusTracker()
    group = f"giql-spark-planning-{strategy}"
    sc.setJobGroup(group, "planning only")
    try:
        assert "__giql_spark_v" in session.to_sql(q)
        assert "strategy:" in session.explain(q)
        assert list(tracker.getJobIdsForGroup(group)) == []
        session.sql(q).collect()  # running it does launch jobs, which the tracker sees
        assert list(tracker.getJobIdsForGroup(group))
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
