"""giql_spark.jvm through Spark Connect: a server started with spark_config() runs the interval
join from SQL text and DataFrame calls; a server without it is reported, not crashed on.

Each server runs in its own process (a JVM can host one SparkContext, and the test session's
is already running).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("grpc")

SRC = str(Path(__file__).resolve().parents[1] / "src")

SCRIPT = textwrap.dedent("""
    import json, os, sys, uuid
    os.environ["PYSPARK_PYTHON"] = sys.executable
    port, with_ext = sys.argv[1], sys.argv[2] == "1"
    from pyspark.sql import SparkSession
    import giql_spark.jvm as gj
    tok = str(uuid.uuid4())
    os.environ["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = tok
    conf = {"spark.ui.enabled": "false", "spark.connect.grpc.binding.port": port,
            "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
            "spark.sql.shuffle.partitions": "2"}
    if with_ext:
        conf = gj.spark_config(conf)
    b = SparkSession.builder.master("local[2]")
    for k, v in conf.items():
        b = b.config(k, v)
    server = b.getOrCreate()
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    from pyspark.sql.connect.session import SparkSession as Remote
    from pyspark.sql import functions as F
    spark = Remote.builder.remote(f"sc://localhost:{port}/;token={tok}").getOrCreate()
    out = {"available": list(gj.available(spark))}
    if with_ext:
        from giql_spark.jvm.marker import band_join, band_sql
        l = spark.createDataFrame([("c", 1, 10, "x"), ("c", 20, 30, "y"), (None, 1, 5, "z")],
                                  "chrom string, s long, e long, n string").alias("a")
        r = spark.createDataFrame([("c", 5, 6), ("c", 40, 50)],
                                  "chrom string, s long, e long").alias("b")
        df = band_join(l, r, left_keys=[F.col("a.chrom")], left_lo=F.col("a.s"),
                       left_hi=F.col("a.e"), right_keys=[F.col("b.chrom")], right_lo=F.col("b.s"),
                       right_hi=F.col("b.e"), how="left")
        out["left_join"] = sorted(str(x) for x in df.collect())
        l.createOrReplaceTempView("l")
        r.createOrReplaceTempView("r")
        m = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
        out["full_count"] = spark.sql(f"SELECT count(*) FROM l a FULL JOIN r b ON {m}").collect()[0][0]
        out["explain"] = spark.sql(f"EXPLAIN SELECT * FROM l a JOIN r b ON {m}").collect()[0][0]
    print("RESULT " + json.dumps(out))
    spark.stop()
    server.stop()
""")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_server(tmp_path, with_ext: bool) -> dict:
    script = tmp_path / "connect_check.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SPARK_REMOTE", None)
    res = subprocess.run([sys.executable, str(script), str(free_port()), "1" if with_ext else "0"],
                         capture_output=True, text=True, env=env, timeout=600)
    lines = [x for x in res.stdout.splitlines() if x.startswith("RESULT ")]
    assert lines, res.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_connect_server_with_the_extension(tmp_path):
    out = run_server(tmp_path, True)
    assert out["available"] == [True, ""]
    assert out["left_join"] == sorted([
        "Row(chrom='c', s=1, e=10, n='x', chrom='c', s=5, e=6)",
        "Row(chrom='c', s=20, e=30, n='y', chrom=None, s=None, e=None)",
        "Row(chrom=None, s=1, e=5, n='z', chrom=None, s=None, e=None)",
    ])
    assert out["full_count"] == 4
    assert "BroadcastIntervalJoin" in out["explain"]


def test_connect_server_without_the_extension(tmp_path):
    out = run_server(tmp_path, False)
    ok, why = out["available"]
    assert ok is False
    assert "Spark Connect server has no giql_band" in why
