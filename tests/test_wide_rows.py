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


def test_auto_never_cuts_a_row_the_sample_missed(spark, tmp_path):
    """One whole-chromosome row among 200,000 in a row group the statistics do not
    sample: the widest row is read exactly before a strategy that cuts rows is
    chosen, and that strategy is refused with why. The same files without the wide
    row keep it, so the refusal comes from the row, not from the data's shape."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from giql_spark.planner import select
    from giql_spark.dataframe.engine import _side
    from giql_spark.dataframe.overlap import overlap_spec
    from giql_spark.planner.nodes import IntervalJoin

    n = 200_000
    starts = np.arange(n, dtype=np.int64) * 50
    cols = ("chrom", "start", "end")

    def side(name, wide):
        ends = starts + 100
        chrom = np.array(["chr1"] * n, dtype=object)
        if wide:  # row group 1 of 5: the sample reads groups 0, 2 and 4
            ends[50_000], chrom[50_000] = WIDE, "chr1"
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"chrom": chrom, "start": starts, "end": ends}), path, row_group_size=40_000)
        return spark.read.parquet(str(path)).selectExpr("struct(*) AS x")

    def choice(wide):
        l, r = side(f"l{wide}", wide), side(f"r{wide}", False).selectExpr("x AS y")
        spec = overlap_spec("inner", cols, cols, [], ("x", "y"))
        node = IntervalJoin("", _side(l), _side(r), spec)
        return select.choice_for(node, l, r, {"_only": ["binned", "broadcast"], "_only_why": "this test"})

    plain = choice(False)
    assert plain.strategy == "binned", plain
    wide = choice(True)
    assert wide.strategy == "broadcast", [(e.strategy, e.refused) for e in wide.estimates]
    binned = next(e for e in wide.estimates if e.strategy == "binned")
    assert binned.refused and f"a row spans {WIDE - 50_000 * 50:,} bases, more than 1,000,000 bins" in binned.refused, binned
