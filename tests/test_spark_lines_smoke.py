"""The smoke subset run on every supported Spark line (.ci/spark-lines): a few minutes per line.

Each interval-join strategy on a small case against giql + DuckDB, a band join, the DataFrame
API, a genomic reader, a stream, EXPLAIN and the command line, and a session started from a jar
built ahead of time with javac out of reach. The whole suite runs on the newest line only.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from conftest import Table, rows_of, run_duckdb
from streams import SCHEMA, Collect, Feed, markers, sorted_rows

import giql_spark as gs
from giql_spark import spark_version

pytestmark = pytest.mark.smoke

DATA = Path(__file__).parent / "data"
STRATEGIES = ["binned", "broadcast", "sweep", "naive", "jvm_broadcast", "jvm_sweep", "jvm_merge"]
JVM_OPERATORS = {"jvm_broadcast": "BroadcastIntervalJoin", "jvm_sweep": "SweepIntervalJoin",
                 "jvm_merge": "MergeIntervalJoin"}


def _tables() -> dict[str, Table]:
    rng = random.Random(28)
    a = sorted((rng.choice(["chr1", "chr2"]), s, s + rng.randint(0, 300), f"a{i}", float(i), "+-"[i % 2])
               for i, s in enumerate(rng.sample(range(0, 20_000), 60)))
    b = sorted((rng.choice(["chr1", "chr2", "chr3"]), s, s + rng.randint(1, 400), f"b{i}", float(i), "+-"[i % 2])
               for i, s in enumerate(rng.sample(range(0, 20_000), 50)))
    return {"a": Table(a), "b": Table(b)}


def _register(session, tables: dict[str, Table], parquet_dir: Path | None = None) -> None:
    spark = session.spark
    for name, t in tables.items():
        df = spark.createDataFrame(t.rows, t.schema)
        if parquet_dir is not None:  # jvm_merge reads sorted Parquet files
            path = str(parquet_dir / f"{name}.parquet")
            df.coalesce(1).sortWithinPartitions("chrom", "start").write.mode("overwrite").parquet(path)
            df = spark.read.parquet(path)
        session.register(name, df)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_strategy_matches_duckdb(spark, tmp_path, strategy):
    tables = _tables()
    q = "SELECT a.name, b.name FROM a JOIN b ON a.interval INTERSECTS b.interval"
    s = gs.Session(spark, strategy=strategy)
    _register(s, tables, tmp_path if strategy == "jvm_merge" else None)
    got = [tuple(r) for r in s.sql(q).collect()]
    want = run_duckdb(q, tables)[1]
    assert rows_of(got) == rows_of(want) and len(want) > 0
    if strategy in JVM_OPERATORS:
        plan = s.sql(q)._jdf.queryExecution().executedPlan().toString()
        assert JVM_OPERATORS[strategy] in plan


def test_left_join_and_band_join_match_duckdb(spark):
    tables = _tables()
    s = gs.Session(spark, strategy="jvm_broadcast")
    _register(s, tables)
    for q in ("SELECT a.name, b.name FROM a LEFT JOIN b ON a.interval INTERSECTS b.interval",
              "SELECT a.name, b.name FROM a JOIN b ON a.chrom = b.chrom AND b.start BETWEEN a.start - 300 "
              "AND a.start + 300",
              "SELECT a.name, b.name FROM a JOIN b ON DISTANCE(a.interval, b.interval) <= 200"):
        got = [tuple(r) for r in s.sql(q).collect()]
        assert rows_of(got) == rows_of(run_duckdb(q, tables)[1]), q


def test_dataframe_api(spark):
    t = _tables()
    a = spark.createDataFrame(t["a"].rows, t["a"].schema)
    b = spark.createDataFrame(t["b"].rows, t["b"].schema)
    jvm = gs.overlap(a, b, how="inner", strategy="jvm_broadcast").select("name", "name_").collect()
    naive = gs.overlap(a, b, how="inner", strategy="naive").select("name", "name_").collect()
    assert Counter(map(tuple, jvm)) == Counter(map(tuple, naive)) and jvm
    counts = gs.count_overlaps(a, b).collect()
    assert len(counts) == len(t["a"].rows)


def test_bioframe_breadth(spark, tmp_path):
    """The functions beyond the pair joins, against bioframe on one small case: each
    route (windows, broadcast views, Spark-generated bins, the FASTA data source) per line."""
    import bioframe as bf
    import pandas as pd

    t = _tables()
    a = spark.createDataFrame(t["a"].rows, t["a"].schema).drop("score")
    b = spark.createDataFrame(t["b"].rows, t["b"].schema).drop("score")
    pa_, pb = (pd.DataFrame(t[k].rows, columns=["chrom", "start", "end", "name", "score", "strand"])
               .drop(columns="score") for k in ("a", "b"))
    sizes = {"chr1": 20_000, "chr2": 19_000, "chr3": 20_500}

    def same(got, want):
        got = Counter(tuple(None if pd.isna(v) else v for v in r) for r in got.collect())
        want = Counter(tuple(None if pd.isna(v) else (int(v) if isinstance(v, float) else v) for v in r)
                       for r in want.itertuples(index=False))
        assert got == want and got

    near = gs.closest(a, b, k=2, ignore_upstream=True, direction_col="strand").select("name", "name_", "distance")
    assert {r["name"] for r in near.collect()} == set(pa_["name"])
    same(gs.trim(gs.expand(a, pad=400), sizes), bf.trim(bf.expand(pa_, pad=400), sizes))
    same(gs.select(a, "chr2:1k-9k"), bf.select(pa_, "chr2:1k-9k"))
    same(gs.binnify(sizes, 3_000), bf.binnify(pd.Series(sizes), 3_000))
    same(gs.merge_runs(a, "strand", allow_overlaps=True),
         bf.merge_runs(pa_.sort_values(["chrom", "start"]), "strand", allow_overlaps=True))
    fasta = tmp_path / "g.fa"
    fasta.write_text(">chr1\nACGTNNacgtGGCC\nAT\n>chr2\nGGGG\n")
    got = gs.frac_gc(spark.createDataFrame([("chr1", 0, 16), ("chr1", 3, 9), ("chr2", 1, 3)],
                                           "chrom string, start long, `end` long"), str(fasta))
    seq = "ACGTNNacgtGGCCAT"
    assert sorted(tuple(r) for r in got.collect()) == [("chr1", 0, 16, bf.seq_gc(seq)), ("chr1", 3, 9, bf.seq_gc(seq[3:9])),
                                                     ("chr2", 1, 3, bf.seq_gc("GG"))]


def test_parquet_written_by_giqls_writer(spark, tmp_path):
    """Session.write's Parquet goes through the giql-parquet data source on every line, and
    Spark and pyarrow read back what was written, NULLs and every type it takes included."""
    import datetime

    import pyarrow.parquet as pq

    rows = [("chr1", 1, 10, "a", 1.5, True, 3, datetime.date(2020, 1, 2)),
            ("chr2", None, 20, None, float("-inf"), None, None, None),
            ("chr1", -5, 2**40, "é", -0.0, False, -7, datetime.date(1500, 3, 1))]
    df = spark.createDataFrame(rows, "chrom string, start bigint, `end` bigint, name string, score double, "
                                     "flag boolean, i int, d date").repartition(2)
    out = str(tmp_path / "out.parquet")
    gs.Session(spark).write(df, out)
    files = sorted(Path(out).glob("*.parquet"))
    assert files and all(pq.ParquetFile(f).metadata.created_by.startswith("giql-spark") for f in files)
    assert sorted(map(tuple, spark.read.parquet(out).collect()), key=repr) == sorted(rows, key=repr)
    got = [tuple(r.values()) for r in pq.read_table(out).to_pylist()]
    assert sorted(got, key=repr) == sorted(rows, key=repr)


def test_genomic_reader_joins(spark):
    s = gs.Session(spark)
    s.register("v", str(DATA / "variants.vcf.gz"))
    rows = s.sql("SELECT COUNT(*) AS n FROM v").collect()
    assert rows[0][0] > 0
    s.register("w", str(DATA / "variants.vcf.gz"))
    joined = s.sql("SELECT COUNT(*) AS n FROM v JOIN w ON v.interval INTERSECTS w.interval").collect()
    assert joined[0][0] >= rows[0][0]


JOINS = {"intersects": "JOIN b y ON x.interval INTERSECTS y.interval",
         # BETWEEN: an expression the JVM operator evaluates itself in an outer join (Spark 4 writes it as With)
         "left window": "LEFT JOIN b y ON x.chrom = y.chrom AND y.start BETWEEN x.start - 300 AND x.start + 300"}


@pytest.mark.parametrize("streams, join", [(("a",), "intersects"), (("a", "b"), "intersects"),
                                           (("a", "b"), "left window")],
                         ids=["stream-static", "stream-stream", "stream-stream-left"])
def test_stream_join_equals_batch(spark, tmp_path, streams, join):
    rng = random.Random(5)
    rows = {"a": sorted_rows(rng, "a", n=15, gap=500, width=200),
            "b": sorted_rows(rng, "b", n=15, gap=500, width=200)}
    feed = Feed(spark, tmp_path / "feed")
    s = gs.Session(spark)
    for name in rows:
        if name in streams:
            # end markers close each chromosome, so an outer join's last unmatched rows come out
            feed.put(name, rows[name] + (markers() if len(streams) == 2 else []))
            s.register(name, feed.stream(name))
        else:
            s.register(name, spark.createDataFrame(rows[name], SCHEMA))
    q = f"SELECT x.name, y.name FROM a x {JOINS[join]}"
    if len(streams) == 2:
        assert "strategy: jvm_stream_state" in s.explain(q)
    sink = Collect()
    query = (s.sql(q).writeStream.foreachBatch(sink).option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start())
    query.awaitTermination(300)
    batch = gs.Session(spark)
    for name in rows:
        batch.register(name, spark.createDataFrame(rows[name], SCHEMA))
    want = Counter(tuple(r) for r in batch.sql(q).collect())
    assert Counter(sink.rows) == want and want


def test_explain_and_cli(spark, capsys):
    from giql_spark.cli import main

    s = gs.Session(spark, strategy="jvm_sweep")
    _register(s, _tables())
    text = s.explain("SELECT a.name, b.name FROM a JOIN b ON a.interval INTERSECTS b.interval")
    assert "jvm_sweep" in text
    assert main(["demo"]) == 0
    assert "rows" in capsys.readouterr().out


_CHILD = textwrap.dedent("""
    import shutil, sys
    from pyspark.sql import SparkSession
    import giql_spark as gs
    assert shutil.which("javac") is None, "javac is reachable"
    jar = sys.argv[1]
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.jars", jar)
             .config("spark.sql.extensions", "io.giql.spark.GiqlSparkExtensions").getOrCreate())
    s = gs.Session(spark, strategy="jvm_broadcast")
    s.register("a", spark.createDataFrame([("chr1", 0, 100, "a")], "chrom string, start long, `end` long, name string"))
    s.register("b", spark.createDataFrame([("chr1", 50, 60, "b")], "chrom string, start long, `end` long, name string"))
    df = s.sql("SELECT a.name, b.name FROM a JOIN b ON a.interval INTERSECTS b.interval")
    assert "BroadcastIntervalJoin" in df._jdf.queryExecution().executedPlan().toString()
    print(sorted(tuple(r) for r in df.collect()))
""")


def test_prebuilt_jar_without_javac(tmp_path):
    """A jar built ahead of time for this line, on spark.jars: the session never needs javac."""
    from giql_spark.jvm.build import build_for

    jar = build_for(spark_version.VERSION, out=tmp_path / "giql-spark-jvm.jar")
    # A PATH with every tool of the current one but javac; java stays for Spark itself.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if name in ("javac",) or (bin_dir / name).exists():
                continue
            target = os.path.join(d, name)
            if os.access(target, os.X_OK):
                (bin_dir / name).symlink_to(target)
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env.update(PATH=str(bin_dir), GIQL_SPARK_CACHE=str(tmp_path / "empty-cache"), PYSPARK_PYTHON=sys.executable)
    out = subprocess.run([sys.executable, "-c", _CHILD, str(jar)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "[('a', 'b')]" in out.stdout
    assert not (tmp_path / "empty-cache").exists()


_OWN_SESSION = textwrap.dedent("""
    from pyspark.sql import SparkSession
    import giql_spark as gs
    from giql_spark import jvm
    from giql_spark.planner import registry
    # A session of the user's own, as a notebook or a cluster starts it: no extension, no jar.
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    s = gs.Session(spark)
    ok, why = jvm.available(spark)
    assert ok, why
    missing = registry.unavailable(spark)
    assert not missing, missing
    for strategy, op in (("jvm_broadcast", "BroadcastIntervalJoin"), ("jvm_sweep", "SweepIntervalJoin")):
        s = gs.Session(spark, strategy=strategy)
        s.register("a", spark.createDataFrame([("chr1", 0, 100, "a")], "chrom string, start long, `end` long, name string"))
        s.register("b", spark.createDataFrame([("chr1", 50, 60, "b")], "chrom string, start long, `end` long, name string"))
        df = s.sql("SELECT a.name, b.name FROM a JOIN b ON a.interval INTERSECTS b.interval")
        assert op in df._jdf.queryExecution().executedPlan().toString(), strategy
        assert [tuple(r) for r in df.collect()] == [("a", "b")]
    print("every JVM operator")
""")


def test_a_session_of_the_users_own_gets_every_jvm_operator():
    """``gs.Session(spark)`` over ``SparkSession.builder...getOrCreate()`` installs the extension
    into the running session (on 4.2 and later the function registry takes only three-part
    names, which once lost every operator there)."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    out = subprocess.run([sys.executable, "-c", _OWN_SESSION], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "every JVM operator" in out.stdout


def test_a_failed_install_is_named_by_every_refusal(monkeypatch):
    """When the extension cannot be installed, EXPLAIN's refusal of a JVM strategy carries the
    install's own error, not a generic line."""
    from giql_spark import jvm

    class Session:  # a stand-in session: the install fails as it failed on 4.2/4.3
        class catalog:
            @staticmethod
            def functionExists(name):
                return False

    own = Session()
    monkeypatch.setattr(jvm, "_install", lambda s: (_ for _ in ()).throw(
        RuntimeError("assertion failed: Function identifier must be fully qualified (3-part): giql_band")))
    with pytest.raises(RuntimeError):
        jvm.install(own)
    ok, why = jvm.available(own)
    assert not ok
    assert "installing giql-spark's JVM operators into this session failed" in why
    assert "Function identifier must be fully qualified (3-part): giql_band" in why
    from giql_spark.planner import registry

    refused = registry.unavailable(own)
    assert {"jvm_broadcast", "jvm_sweep", "jvm_merge"} <= set(refused)
    assert all("(3-part): giql_band" in why for why in refused.values())
