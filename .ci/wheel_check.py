"""Run by .ci/wheel inside a fresh environment holding only the wheel and one PySpark, with
javac out of reach: every JVM operator must be there, from ``gs.Session()`` and from
``gs.Session(spark)`` over a session of the user's own, and no jar may have been compiled."""

import os
import sys
from pathlib import Path

import giql_spark as gs
from giql_spark import jvm
from giql_spark.jvm import build
from giql_spark.planner import registry

assert build.shutil.which("javac") is None and not os.environ.get("JAVA_HOME"), "javac is in reach"
jar = build.prebuilt_jar()
assert jar is not None, f"the wheel carries no jar for PySpark {build.pyspark_version()}"

JOINS = (("jvm_broadcast", "BroadcastIntervalJoin"), ("jvm_sweep", "SweepIntervalJoin"),
         ("jvm_merge", "MergeIntervalJoin"))


# Two chromosomes a side, as the merge join reads them (row groups it can key by chromosome);
# the answer by brute force.
A = [(c, s, s + 30, f"a{i}") for i, (c, s) in enumerate((c, s) for c in ("chr1", "chr2") for s in range(0, 2000, 70))]
B = [(c, s, s + 5, f"b{i}") for i, (c, s) in enumerate((c, s) for c in ("chr1", "chr3") for s in range(0, 2000, 45))]
EXPECTED = sorted((a[3], b[3]) for a in A for b in B if a[0] == b[0] and a[1] < b[2] and b[1] < a[2])
assert EXPECTED


def check(session: gs.Session, how: str) -> None:
    spark = session.spark
    ok, why = jvm.available(spark)
    assert ok, f"{how}: {why}"
    missing = registry.unavailable(spark)
    assert not missing, f"{how}: {missing}"
    schema = "chrom string, start long, `end` long, name string"
    for strategy, op in JOINS:
        s = gs.Session(spark, strategy=strategy)
        for name, rows in (("a", A), ("b", B)):
            df = spark.createDataFrame(rows, schema)
            if strategy == "jvm_merge":  # the merge join reads Parquet files sorted by (chrom, start)
                path = f"{os.environ['WHEEL_CHECK_TMP']}/{how[:5]}-{name}.parquet"
                df.coalesce(1).sortWithinPartitions("chrom", "start").write.mode("overwrite").parquet(path)
                df = spark.read.parquet(path)
            s.register(name, df)
        df = s.sql("SELECT a.name, b.name FROM a JOIN b ON a.interval INTERSECTS b.interval")
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert op in plan, f"{how}, {strategy}: {op} not in the plan:\n{plan}"
        assert sorted(tuple(r) for r in df.collect()) == EXPECTED, f"{how}, {strategy}"
    # The genomic reader is a JVM data source too: the shipped example VCF through it.
    vcf = Path(gs.__file__).parent / "data" / "variants.vcf"
    session.register("v", str(vcf))
    plan = session.sql("SELECT count(*) AS n FROM v")._jdf.queryExecution().executedPlan().toString()
    assert "giql-genomic" in plan or "GenomicScan" in plan, f"{how}: the VCF did not take the JVM reader:\n{plan}"
    print(f"{how}: every JVM operator ({len(JOINS)} joins and the genomic reader checked)")


if sys.argv[1:] == ["own"]:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    check(gs.Session(spark), "gs.Session(spark)")
else:
    session = gs.Session()
    spark = session.spark
    check(session, "gs.Session()")
spark.stop()  # before this environment's folder goes
cache = Path(os.environ["GIQL_SPARK_CACHE"]) / "jvm"
assert not cache.exists() or not any(cache.iterdir()), f"a jar was compiled into {cache}"
print(f"PySpark {build.pyspark_version()}: the wheel's {jar.name}")
