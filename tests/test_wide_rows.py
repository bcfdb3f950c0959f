"""A row too wide to cut into bins or tiles stops a forced binned or sweep join with one line.

A whole-chromosome interval (end at the 2^60 sentinel) would make Spark build
an array of ~10^13 bins; the join must refuse it by name, never exhaust
memory or fail deep inside Spark.
"""

import pytest

from conftest import Table

WIDE = 2 ** 60


def _tables():
    peaks = Table([("chr1", 100, 200, "p1", 1.0, "+"), ("chrX", 0, WIDE, "all", 1.0, "+")])
    genes = Table([("chrX", 500, 900, "g1", 1.0, "+"), ("chr1", 150, 160, "g2", 1.0, "-")])
    return {"peaks": peaks, "genes": genes}


@pytest.mark.parametrize("strategy, size, piece", [("binned", 1000, "bins"), ("sweep", 10_000, "tiles")])
@pytest.mark.parametrize("how", ["JOIN", "LEFT JOIN"])
def test_forced_strategy_refuses_a_row_too_wide_in_one_line(session, strategy, size, piece, how):
    for name, t in _tables().items():
        session.register(name, session.spark.createDataFrame(t.rows, t.schema))
    key = "bin_size" if strategy == "binned" else "tile_size"
    session.options.update({"strategy": strategy, key: size})
    try:
        with pytest.raises(Exception) as err:
            session.sql(f"SELECT a.name, b.name AS g FROM peaks a {how} genes b "
                        "ON a.interval INTERSECTS b.interval").collect()
    finally:
        session.options.update(strategy=None, bin_size=None, tile_size=None)
    msg = str(err.value)
    assert f"{strategy} join: a row whose interval spans {WIDE} bases would be cut into more than 1,000,000 " \
           f"{piece}" in msg, msg
    assert "\n\tat " not in msg  # no Java stack


def test_forced_jvm_sweep_refuses_a_row_too_wide_in_one_line(session):
    """(The JVM sweep joins INNER joins only.)"""
    from giql_spark.errors import spark_message

    for name, t in _tables().items():
        session.register(name, session.spark.createDataFrame(t.rows, t.schema))
    session.options.update({"strategy": "jvm_sweep", "tile_size": 10_000})
    try:
        with pytest.raises(Exception) as err:
            session.sql("SELECT a.name, b.name AS g FROM peaks a JOIN genes b "
                        "ON a.interval INTERSECTS b.interval").collect()
    finally:
        session.options.update(strategy=None, tile_size=None)
    msg = spark_message(err.value)
    assert (f"giql sweep join: a row whose interval spans {WIDE} bases would be cut into more than 1,000,000 "
            "tiles of 10,000" in msg), msg
    assert "\n\tat " not in msg  # no Java stack


@pytest.mark.parametrize("strategy", ["jvm_broadcast", "broadcast", "naive"])
def test_strategies_that_do_not_cut_rows_run_a_whole_chromosome_interval(session, strategy):
    """(The merge join's unbounded rows are tested in test_jvm_merge.)"""
    for name, t in _tables().items():
        session.register(name, session.spark.createDataFrame(t.rows, t.schema))
    session.options.update({"strategy": strategy})
    try:
        rows = session.sql("SELECT a.name, b.name AS g FROM peaks a JOIN genes b "
                           "ON a.interval INTERSECTS b.interval").collect()
    finally:
        session.options.update(strategy=None)
    assert sorted(tuple(r) for r in rows) == [("all", "g1"), ("p1", "g2")]


def test_the_model_runs_a_whole_chromosome_interval(check):
    rows = check("SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
                 _tables(), min_rows=2)
    assert ("all", "g1") in rows
