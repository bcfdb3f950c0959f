"""Bad queries and bad input get one clear line naming what is wrong, never a wrong answer."""

import pytest

import giql_spark as gs

SCHEMA = "chrom string, start bigint, `end` bigint, name string"


@pytest.fixture()
def s(session):
    session.register("peaks", session.spark.createDataFrame([("chr1", 0, 10, "p1")], SCHEMA))
    return session


@pytest.mark.parametrize(
    "query, error, words",
    [
        ("SELECT * FROM peaks WHERE interval INTERSECTS", gs.QuerySyntaxError, ["line 1", "column 45"]),
        ("SELECT *\nFROM peaks WHERE interval INTERSECTS 'chr1:1-2' AND (", gs.QuerySyntaxError, ["line 2"]),
        ("SELECT * FROM nope", gs.UnknownTableError, ["'nope'", "peaks"]),
        ("SELECT a.* FROM peaks a JOIN missing b ON a.interval INTERSECTS b.interval", gs.UnknownTableError, ["missing"]),
        ("SELECT foo FROM peaks", gs.UnknownColumnError, ["foo"]),
        ("SELECT a.foo FROM peaks a JOIN peaks b ON a.interval INTERSECTS b.interval", gs.UnknownColumnError, ["foo"]),
        ("SELECT * FROM peaks WHERE interval INTERSECTS 'chr1:abc'", gs.QueryError, ["chr1:abc"]),
        ("SELECT * FROM peaks; DROP TABLE peaks", gs.QuerySyntaxError, ["one GIQL statement"]),
    ],
)
def test_query_errors_are_one_clear_line(s, query, error, words):
    with pytest.raises(error) as info:
        s.sql(query).collect()
    message = str(info.value)
    assert "\n" not in message
    for w in words:
        assert w in message


def test_register_rejects_names_that_are_not_identifiers(s):
    df = s.table("peaks")
    with pytest.raises(gs.GiqlSparkError, match="plain identifier"):
        s.register("x; DROP TABLE peaks", df)


def test_register_names_a_missing_mapped_column(s):
    with pytest.raises(gs.UnknownColumnError, match="table 't' has no column 'chr' for chrom_col"):
        s.register("t", s.table("peaks"), chrom_col="chr")


def test_register_missing_file(s, tmp_path):
    with pytest.raises(ValueError, match="not found"):
        s.register("t", str(tmp_path / "absent.bed"))


def test_malformed_bed_names_file_and_line(s, tmp_path):
    path = tmp_path / "bad.bed"
    path.write_text("track name=x\nchr1\t0\t10\nchr1\t50\t20\n")
    with pytest.raises(ValueError) as info:
        s.register("bad", str(path))
    assert "bad.bed" in str(info.value) and "line 3" in str(info.value)


def test_skip_reports_how_many_rows_were_dropped(s, tmp_path):
    path = tmp_path / "some_bad.bed"
    path.write_text("chr1\t0\t10\nchr1\t-5\t20\nchr1\tx\t9\nchr2\t1\t2\n")
    df = s.register("some", str(path), on_error="skip")
    assert s.tables["some"].skipped_rows == 2
    assert sorted(r.chrom for r in df.collect()) == ["chr1", "chr2"]


def test_odd_column_names_cannot_break_the_sql(session):
    odd = "`my chrom` string, `s``t` bigint, `e;--` bigint, `na``me` string"
    session.register("peaks", session.spark.createDataFrame([("chr1", 0, 10, "p1")], SCHEMA))
    session.register(
        "odd", session.spark.createDataFrame([("chr1", 5, 20, "x")], odd),
        chrom_col="my chrom", start_col="s`t", end_col="e;--",
    )
    rows = session.sql('SELECT a.name, b."na`me" AS m FROM peaks a JOIN odd b ON a.interval INTERSECTS b.interval').collect()
    assert [tuple(r) for r in rows] == [("p1", "x")]


def test_spark_errors_reach_the_user_as_themselves(s):
    """PySpark logs a failed query through its own logger class; creating that
    logger first as a plain ``logging.Logger`` turned every later Spark error
    into ``TypeError: Logger._log() got an unexpected keyword argument``."""
    import logging

    from pyspark.errors import AnalysisException

    # As in a fresh process: the logger does not exist until giql-spark asks.
    logging.Logger.manager.loggerDict.pop("SQLQueryContextLogger", None)
    s.sql("SELECT name FROM peaks").collect()
    with pytest.raises(AnalysisException, match="UNRESOLVED_COLUMN"):
        s.spark.sql("SELECT nosuch FROM range(1)").collect()
    with pytest.raises(Exception, match="CAST_INVALID_INPUT") as info:
        s.sql("SELECT CAST(name AS INT) AS n FROM peaks").collect()
    assert not isinstance(info.value, TypeError)


def test_truncated_gzip_bed_is_one_line_naming_the_file(s, tmp_path):
    import gzip

    data = gzip.compress("".join(f"chr1\t{i}\t{i + 5}\tn{i}\n" for i in range(50_000)).encode())
    path = tmp_path / "cut.bed.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError) as info:
        s.register("cut", str(path))
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message and "truncated or corrupt" in message
