"""Differential tests of the partitioned sort-sweep interval join (inner joins)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import giql_spark.jvm as gj
from giql_spark.jvm.marker import band_sql

from test_jvm_join import plain_condition, rows, table  # noqa: E402  (same helpers)


@pytest.fixture(scope="module")
def jspark(spark):
    gj.install(spark)
    return spark


def run_both(spark, keys, residual, opts, frm=("l", "r"), lo_hi=("a.s", "a.e", "b.s", "b.e"),
             select="*"):
    marker = band_sql([k[0] for k in keys], lo_hi[0], lo_hi[1], [k[1] for k in keys], lo_hi[2],
                      lo_hi[3]).replace("giql_band(''", f"giql_band('{opts}'")
    plain = plain_condition(keys, *lo_hi)
    res = f" AND ({residual})" if residual else ""
    q = f"SELECT {select} FROM {frm[0]} a JOIN {frm[1]} b ON " + "{}"
    fast = spark.sql(q.format(marker + res))
    slow = spark.sql(q.format(plain + res))
    got = Counter(fast.collect())
    plan = fast._jdf.queryExecution().executedPlan().toString()
    assert "SweepIntervalJoin" in plan, plan
    assert got == Counter(slow.collect())
    return sum(got.values())


@pytest.mark.parametrize("seed", range(6))
def test_sweep_matches_spark(jspark, seed):
    rnd = random.Random(500 + seed)
    table(jspark, rows(seed + 300, rnd.randrange(0, 60) if seed else 0), "l")
    table(jspark, rows(seed + 400, rnd.randrange(1, 60)), "r")
    keys = rnd.choice([[("a.chrom", "b.chrom")], [("a.chrom", "b.chrom"), ("a.strand", "b.strand")],
                       []])
    residual = rnd.choice([None, "a.score + b.score > 3", "a.s < b.e AND b.s < a.e",
                           "a.s + 1 < b.e AND b.s <= a.e - 1"])
    tile = rnd.choice([1, 3, 7, 20, 1000])
    run_both(jspark, keys, residual, f"algo=sweep;tile={tile}")


def test_sweep_wide_intervals_cross_many_tiles(jspark):
    table(jspark, rows(601, 200, span=2000), "l")
    jspark.sql("SELECT id, chrom, strand, s, s + 700 AS e, name, score FROM l WHERE id % 10 = 0 "
               "UNION ALL SELECT * FROM l").createOrReplaceTempView("lw")
    table(jspark, rows(602, 150, span=2000), "r")
    n = run_both(jspark, [("a.chrom", "b.chrom")], None, "algo=sweep;tile=50", frm=("lw", "r"),
                 select="a.id, b.id")
    assert n > 100


def test_sweep_struct_sides_and_count(jspark):
    table(jspark, rows(611, 50), "l0")
    table(jspark, rows(612, 50), "r0")
    jspark.sql("SELECT struct(t.*) AS a FROM l0 t").createOrReplaceTempView("ls")
    jspark.sql("SELECT struct(t.*) AS b FROM r0 t").createOrReplaceTempView("rs")
    run_both(jspark, [("a.a.chrom", "b.b.chrom")], "a.a.name <> b.b.name", "algo=sweep;tile=5",
             frm=("ls", "rs"), lo_hi=("a.a.s", "a.a.e", "b.b.s", "b.b.e"))
    run_both(jspark, [("a.a.chrom", "b.b.chrom")], None, "algo=sweep;tile=9",
             frm=("ls", "rs"), lo_hi=("a.a.s", "a.a.e", "b.b.s", "b.b.e"), select="count(*)")


def test_auto_picks_sweep_past_the_broadcast_limit(jspark, tmp_path):
    # sizes must be known (a DataFrame from Python rows has none): go through Parquet
    for name, seed in (("l", 621), ("r", 622)):
        table(jspark, rows(seed, 40), name + "0").write.parquet(str(tmp_path / name))
        jspark.read.parquet(str(tmp_path / name)).createOrReplaceTempView(name)
    jspark.conf.set("spark.giql.broadcastMaxBytes", "1")
    try:
        m = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
        inner = "\n".join(r[0] for r in jspark.sql(
            f"EXPLAIN SELECT * FROM l a JOIN r b ON {m}").collect())
        assert "SweepIntervalJoin" in inner and "IntervalTiles" in inner
        assert "Exchange hashpartitioning" in inner and "Sort [" in inner
        outer = "\n".join(r[0] for r in jspark.sql(
            f"EXPLAIN SELECT * FROM l a LEFT JOIN r b ON {m}").collect())
        assert "BroadcastIntervalJoin" in outer  # the sweep is inner-only
    finally:
        jspark.conf.unset("spark.giql.broadcastMaxBytes")
