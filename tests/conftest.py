"""Shared fixtures: one local Spark for the run, and the giql + DuckDB oracle."""

from __future__ import annotations

import math
import os
import sys
from collections import Counter

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The local S3 server of the fsspec tests (moto, started by the ``s3`` fixture): its address and
# test credentials are set before Spark starts, so that Spark's Python workers inherit them.
S3_PORT = _free_port()
os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1",
                  FSSPEC_S3_ENDPOINT_URL=f"http://127.0.0.1:{S3_PORT}",
                  AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{S3_PORT}")

SCHEMA = "chrom string, start bigint, `end` bigint, name string, score double, strand string"


#: Set (e.g. to ``local[2]``) to run the suite against a Spark Connect
#: session instead of a classic one; tests/test_connect.py does so for a subset.
REMOTE = os.environ.get("GIQL_SPARK_TEST_REMOTE")
CONFIG = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "2g",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
}


@pytest.fixture(scope="session")
def spark():
    if REMOTE:
        import warnings

        from pyspark.sql import SparkSession

        from giql_spark.jvm import spark_config

        # A local server started by PySpark gets these confs at its start, the
        # JVM extension included; the client then cannot set the static ones
        # again, and says so once per conf.
        builder = SparkSession.builder.remote(REMOTE)
        for k, v in spark_config({k: v for k, v in CONFIG.items() if k.startswith("spark.sql.")}).items():
            builder = builder.config(k, v)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Failed to set spark")
            spark = builder.getOrCreate()
    else:
        from giql_spark import local_spark

        spark = local_spark("local[2]", config=CONFIG)
    yield spark
    spark.stop()


@pytest.fixture(scope="session")
def s3():
    """A bucket on a local S3 server (moto in server mode on 127.0.0.1), read and written with s3fs."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=S3_PORT, verbose=False)
    server.start()
    import fsspec

    fs = fsspec.filesystem("s3", skip_instance_cache=True)
    fs.mkdir("giql-test")
    yield "s3://giql-test"
    server.stop()


def needs_classic(spark):
    """Skip a test that reads a classic session's JVM or SparkContext."""
    if REMOTE:
        pytest.skip("needs a classic SparkSession")


@pytest.fixture()
def session(spark):
    import giql_spark as gs

    return gs.Session(spark)


class Table:
    """Rows plus the giql mapping used to register them on both engines."""

    def __init__(self, rows, schema=SCHEMA, **mapping):
        self.rows = [tuple(r) for r in rows]
        self.schema = schema
        self.mapping = mapping

    def __repr__(self):  # hypothesis prints a failing case's tables with it
        return f"Table({self.rows!r}, {self.schema!r}, **{self.mapping!r})"

    def columns(self):
        return [c.strip().split(" ")[0].strip("`") for c in self.schema.split(",")]


def _norm(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return round(v, 9)
    return v


def rows_of(records) -> Counter:
    return Counter(tuple(_norm(v) for v in r) for r in records)


def run_duckdb(query: str, tables: dict[str, Table]):
    import duckdb
    import giql
    import pyarrow as pa

    con = duckdb.connect()
    specs = []
    for name, t in tables.items():
        cols = t.columns()
        types = [c.strip().split(" ", 1)[1].strip() for c in t.schema.split(",")]
        arrow_types = {"string": pa.string(), "bigint": pa.int64(), "double": pa.float64(), "int": pa.int32()}
        arrays = [pa.array([r[i] for r in t.rows], type=arrow_types[ty]) for i, ty in enumerate(types)]
        con.register(f"__src_{name}", pa.table(arrays, names=cols))
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "__src_{name}"')
        mapping = dict(t.mapping)
        if "strand_col" not in mapping and "strand" not in cols:
            mapping["strand_col"] = None
        specs.append(giql.Table(name, **mapping))
    sql = giql.transpile(query, tables=specs, dialect="duckdb")
    res = con.execute(sql)
    names = [d[0] for d in res.description]
    return names, res.fetchall()


def run_spark(session, query: str, tables: dict[str, Table]):
    for name, t in tables.items():
        df = session.spark.createDataFrame(t.rows, t.schema)
        session.register(name, df, **t.mapping)
    df = session.sql(query)
    return df.columns, [tuple(r) for r in df.collect()]


@pytest.fixture()
def check(session):
    """Assert giql-spark returns the same rows (a multiset) as giql on DuckDB.

    Returns the rows so a test can assert more about them.
    """

    def _check(query: str, tables: dict[str, Table], *, names: bool = True, min_rows: int = 0):
        d_names, d_rows = run_duckdb(query, tables)
        s_names, s_rows = run_spark(session, query, tables)
        if names:
            assert [n.lower() for n in s_names] == [n.lower() for n in d_names]
        assert rows_of(s_rows) == rows_of(d_rows), (
            f"\nquery: {query}\nspark only: {rows_of(s_rows) - rows_of(d_rows)}"
            f"\nduckdb only: {rows_of(d_rows) - rows_of(s_rows)}"
        )
        assert len(d_rows) >= min_rows, f"expected at least {min_rows} rows, got {len(d_rows)}"
        return s_rows

    return _check


def task_error(e: BaseException) -> str:
    """The one line a user sees for an error a giql-spark operator raised in a task, without
    Spark's label: on Spark 4 the exception's text itself (checked: one line, no Java stack, no
    "Job aborted"); Spark 3.5 wraps every task failure, its own errors too, in "Job aborted due
    to stage failure" with the Java stack, so there it is ``errors.spark_message``'s line."""
    from giql_spark import spark_version
    from giql_spark.errors import spark_message

    if spark_version.LINE >= (4, 0):
        text = str(e)
        assert "\tat " not in text and "Job aborted" not in text and len(text.splitlines()) == 1, text[:300]
        label = "[USER_RAISED_EXCEPTION] "
    else:
        text = spark_message(e)
        label = "java.lang.RuntimeException: "
    assert text.startswith(label), text[:300]
    return text[len(label):]


def task_errors() -> tuple:
    """What PySpark raises for a failed task (3.5: a Py4J error, not a PySparkException)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return (PySparkException, Py4JJavaError)
