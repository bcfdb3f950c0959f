"""Differential tests of the JVM interval joins: the operator's rows == Spark's own join.

Every query runs twice on the same local Spark: once with ``giql_band(...)`` in the join
condition (planned as BroadcastIntervalJoin) and once with the same condition written with
Spark's own expressions (planned by Spark); the results are compared as multisets.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pyspark.errors import PySparkException

import giql_spark.jvm as gj
from giql_spark.jvm.marker import band, band_join, band_sql

JOIN_SQL = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN",
            "semi": "LEFT SEMI JOIN", "anti": "LEFT ANTI JOIN"}
SCHEMA = "id int, chrom string, strand string, s bigint, e bigint, name string, score double"


@pytest.fixture(scope="module")
def jspark(spark):
    gj.install(spark)
    ok, why = gj.available(spark)
    assert ok, why
    return spark


def rows(seed: int, n: int, *, null_rate=0.1, span=60, chroms=("c1", "c2", "c3")):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        kind = rnd.random()
        s = rnd.randrange(span)
        if kind < 0.15:
            e = s  # zero length
        elif kind < 0.25:
            e = s - rnd.randrange(1, 10)  # reversed
        else:
            e = s + rnd.randrange(1, 15)
        chrom = rnd.choice(chroms)
        strand = rnd.choice("+-")
        if rnd.random() < null_rate:
            chrom = None
        if rnd.random() < null_rate:
            s = None
        if rnd.random() < null_rate:
            e = None
        if rnd.random() < null_rate / 2:
            strand = None
        out.append((i, chrom, strand, s, e, f"n{rnd.randrange(5)}", round(rnd.random() * 4, 2)))
    # identical rows and book-ended neighbours
    if n >= 4:
        out.append((n, *out[0][1:]))
        r = out[1]
        if r[4] is not None:
            out.append((n + 1, r[1], r[2], r[4], r[4] + 5, "book", 1.0))
    return out


def table(spark, data, name):
    df = spark.createDataFrame(data, SCHEMA)
    df.createOrReplaceTempView(name)
    return df


def plain_condition(keys, lo_l, hi_l, lo_r, hi_r):
    terms = [f"{lk} = {rk}" for lk, rk in keys]
    terms += [f"{b} IS NOT NULL" for b in (lo_l, hi_l, lo_r, hi_r)]
    terms += [f"least({lo_l}, {hi_l}) <= greatest({lo_r}, {hi_r})",
              f"least({lo_r}, {hi_r}) <= greatest({lo_l}, {hi_l})"]
    return " AND ".join(terms)


def both(spark, how, keys, lo_l, hi_l, lo_r, hi_r, residual=None, frm=("l", "r"), opts="",
         select="*"):
    marker = band_sql([k[0] for k in keys], lo_l, hi_l, [k[1] for k in keys], lo_r, hi_r)
    if opts:
        marker = marker.replace("giql_band(''", f"giql_band('{opts}'")
    plain = plain_condition(keys, lo_l, hi_l, lo_r, hi_r)
    res = f" AND ({residual})" if residual else ""
    q = "SELECT {sel} FROM {l} a {j} {r} b ON {cond}"
    fast = spark.sql(q.format(sel=select, l=frm[0], j=JOIN_SQL[how], r=frm[1], cond=marker + res))
    slow = spark.sql(q.format(sel=select, l=frm[0], j=JOIN_SQL[how], r=frm[1], cond=plain + res))
    return fast, slow


def assert_same(fast, slow):
    plan = fast._jdf.queryExecution().executedPlan().toString()
    got = Counter(fast.collect())
    plan_after = fast._jdf.queryExecution().executedPlan().toString()
    exp = Counter(slow.collect())
    assert "BroadcastIntervalJoin" in plan + plan_after
    assert got == exp, (sorted(got.items())[:20], sorted(exp.items())[:20])
    return sum(got.values())


CASES = []
for seed in range(10):
    rnd = random.Random(1000 + seed)
    CASES.append((seed, rnd.choice(["auto", "left", "right"]), rnd.choice(["auto", "tree", "scan"])))


@pytest.mark.parametrize("seed,build,index", CASES)
def test_every_join_type_matches_spark(jspark, seed, build, index):
    rnd = random.Random(seed)
    table(jspark, rows(seed, rnd.randrange(0, 40) if seed else 0), "l")  # seed 0: empty left
    table(jspark, rows(seed + 100, rnd.randrange(1, 40) if seed != 1 else 0), "r")  # 1: empty right
    residual = rnd.choice([None, "a.score + b.score > 3", "a.name <> b.name OR a.id % 3 = 0",
                           "b.score > a.score * 0.5", "b.chrom = a.chrom AND a.s < b.e",
                           "a.s + 1 < b.e AND b.s - 2 <= a.e AND a.id >= b.id"])
    keys = rnd.choice([[("a.chrom", "b.chrom")], [("a.chrom", "b.chrom"), ("a.strand", "b.strand")],
                       []])
    opts = f"build={build};index={index}"
    for how in JOIN_SQL:
        fast, slow = both(jspark, how, keys, "a.s", "a.e", "b.s", "b.e", residual, opts=opts)
        assert_same(fast, slow)


def test_many_keys_and_rows_both_index_kinds(jspark):
    chroms = tuple(f"k{i}" for i in range(25))
    table(jspark, rows(7, 400, chroms=chroms, span=3000), "l")
    table(jspark, rows(8, 300, chroms=chroms, span=3000), "r")
    # a few very wide intervals make 'auto' pick the tree
    jspark.sql("SELECT * FROM r UNION ALL SELECT 1000 + id, chrom, strand, s, s + 2500, name, "
               "score FROM r WHERE id < 5").createOrReplaceTempView("rw")
    total = 0
    for index in ("tree", "scan"):
        for how in ("inner", "full", "anti"):
            fast, slow = both(jspark, how, [("a.chrom", "b.chrom")], "a.s", "a.e", "b.s", "b.e",
                              frm=("l", "rw"), opts=f"index={index}")
            total += assert_same(fast, slow)
    assert total > 0


def test_struct_column_sides(jspark):
    table(jspark, rows(21, 30), "l0")
    table(jspark, rows(22, 30), "r0")
    jspark.sql("SELECT struct(t.*) AS a FROM l0 t").createOrReplaceTempView("ls")
    jspark.sql("SELECT struct(t.*) AS b FROM r0 t").createOrReplaceTempView("rs")
    for how in JOIN_SQL:
        fast, slow = both(jspark, how, [("a.a.chrom", "b.b.chrom")], "a.a.s", "a.a.e - 1",
                          "b.b.s", "b.b.e - 1", residual="a.a.score < b.b.score + 1",
                          frm=("ls", "rs"))
        assert_same(fast, slow)


def test_int_bounds_and_int_keys(jspark):
    data = [(i, i % 3, i * 7 % 50, i * 7 % 50 + i % 9) for i in range(60)]
    jspark.createDataFrame(data, "id int, k int, s int, e int").createOrReplaceTempView("li")
    jspark.createDataFrame(data[::2], "id int, k int, s int, e int").createOrReplaceTempView("ri")
    for how in ("inner", "right", "semi"):
        for residual in (None, "a.s < b.e AND b.s <= a.e + 2", "a.id > b.id AND a.e >= b.s"):
            fast, slow = both(jspark, how, [("a.k", "b.k")], "a.s", "a.e", "b.s", "b.e",
                              frm=("li", "ri"), residual=residual)
            assert_same(fast, slow)


def test_residual_constant_that_overflows_follows_spark(jspark):
    """A residual term like end + 9e18 overflows: the direct comparison defers to Spark's own
    predicate, which raises (ANSI) or wraps exactly as the plain join does."""
    data = [(1, "c", 10, 20), (2, "c", 9_000_000_000_000_000_000 // 1000, 15)]
    jspark.createDataFrame(data, "id int, chrom string, s bigint, e bigint") \
        .createOrReplaceTempView("lo")
    cond = "a.e + 9000000000000000000 > b.s"
    outcomes = []
    for marker in (True, False):
        m = (band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e") if marker else
             plain_condition([("a.chrom", "b.chrom")], "a.s", "a.e", "b.s", "b.e"))
        try:
            rows_ = jspark.sql(f"SELECT a.id, b.id FROM lo a JOIN lo b ON {m} AND {cond}").collect()
            outcomes.append(("rows", Counter(map(tuple, rows_))))
        except Exception as e:  # noqa: BLE001 - compare the kind of failure
            outcomes.append(("error", "ARITHMETIC_OVERFLOW" in str(e)))
    assert outcomes[0] == outcomes[1]


def test_dataframe_api_and_half_open_residual(jspark):
    left = table(jspark, rows(31, 50, null_rate=0.05), "l").alias("a")
    right = table(jspark, rows(32, 50, null_rate=0.05), "r").alias("b")
    from pyspark.sql import functions as F

    for how in ("inner", "left", "right", "full", "semi", "anti"):
        fast = band_join(left, right, left_keys=[F.col("a.chrom")], left_lo=F.col("a.s"),
                         left_hi=F.col("a.e"), right_keys=[F.col("b.chrom")], right_lo="b.s",
                         right_hi="b.e", residual="a.s < b.e AND b.s < a.e", how=how)
        jt = {"semi": "left_semi", "anti": "left_anti"}.get(how, how)
        slow = left.join(right, F.expr("a.chrom = b.chrom AND a.s < b.e AND b.s < a.e"), jt)
        assert_same(fast, slow)


def test_optimizer_rewrites_keep_the_operator(jspark):
    """Predicate pushdown, column pruning and a three-way join (reordering) with AQE."""
    table(jspark, rows(41, 40), "t1")
    table(jspark, rows(42, 40), "t2")
    table(jspark, rows(43, 40), "t3")
    m12 = band_sql(["x.chrom"], "x.s", "x.e", ["y.chrom"], "y.s", "y.e")
    m23 = band_sql(["z.chrom"], "z.s", "z.e", ["y.chrom"], "y.s", "y.e")  # written right-to-left
    p12 = plain_condition([("x.chrom", "y.chrom")], "x.s", "x.e", "y.s", "y.e")
    p23 = plain_condition([("z.chrom", "y.chrom")], "z.s", "z.e", "y.s", "y.e")
    q = ("SELECT x.id, z.name FROM t1 x, t2 y, t3 z WHERE {a} AND {b} AND x.score > 1 "
         "AND y.name <> 'n1' AND z.id > x.id - 30")
    fast = jspark.sql(q.format(a=m12, b=m23))
    slow = jspark.sql(q.format(a=p12, b=p23))
    got = Counter(fast.collect())
    plan = fast._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
    assert plan.count("BroadcastIntervalJoin") == 2, plan
    for bad in ("BroadcastNestedLoopJoin", "CartesianProduct"):
        assert bad not in plan
    assert got == Counter(slow.collect())


def test_explain_shows_the_operator(jspark):
    table(jspark, rows(51, 30), "l")
    table(jspark, rows(52, 30), "r")
    m = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
    for how in JOIN_SQL:
        text = "\n".join(r[0] for r in jspark.sql(
            f"EXPLAIN SELECT * FROM l a {JOIN_SQL[how]} r b ON {m} AND a.s < b.e").collect())
        assert "BroadcastIntervalJoin" in text and "IntervalIndexMode" in text, text
        for bad in ("BroadcastNestedLoopJoin", "CartesianProduct", "SortMergeJoin"):
            assert bad not in text


def test_exchange_reuse(jspark):
    table(jspark, rows(61, 30), "l")
    table(jspark, rows(62, 30), "r")
    m = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e", build="right")
    q = (f"SELECT count(*) FROM l a JOIN r b ON {m} UNION ALL "
         f"SELECT count(*) FROM l a JOIN r b ON {m} AND a.id > 3")
    df = jspark.sql(q)
    df.collect()
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "ReusedExchange" in plan, plan


def test_marker_alone_is_the_plain_test(jspark):
    got = jspark.sql("""
        SELECT giql_band('', c1, a, b, c2, x, y) AS m,
               coalesce(c1 = c2 AND a IS NOT NULL AND b IS NOT NULL AND x IS NOT NULL
                        AND y IS NOT NULL AND least(a, b) <= greatest(x, y)
                        AND least(x, y) <= greatest(a, b), false) AS p
        FROM VALUES ('c', 1L, 5L, 'c', 5L, 9L), ('c', 9L, 1L, 'c', 0L, 1L), ('c', 1L, 5L, 'd', 1L, 5L),
                    ('c', NULL, 5L, 'c', 1L, 5L), (NULL, 1L, 5L, NULL, 1L, 5L), ('c', 6L, 7L, 'c', 1L, 5L)
             AS t(c1, a, b, c2, x, y)""").collect()
    assert [r.m for r in got] == [r.p for r in got] == [True, True, False, False, False, False]


@pytest.mark.parametrize("sql,words", [
    ("giql_band('', a.chrom, a.s, b.chrom, b.s, b.e)", "same number of keys"),
    ("giql_band('colour=red', a.chrom, a.s, a.e, b.chrom, b.s, b.e)", "no option 'colour'"),
    ("giql_band('index=hash', a.chrom, a.s, a.e, b.chrom, b.s, b.e)", "index=hash"),
    ("giql_band('algo=sweep;tile=-3', a.chrom, a.s, a.e, b.chrom, b.s, b.e)", "positive integer"),
    ("giql_band(a.name, a.chrom, a.s, a.e, b.chrom, b.s, b.e)", "string literal"),
    ("giql_band('', a.chrom, a.name, a.e, b.chrom, b.s, b.e)", "must be integers"),
    ("giql_band('', a.chrom, a.s, a.e, b.id, b.s, b.e)", "cast them to one type"),
])
def test_bad_calls_are_python_errors(jspark, sql, words):
    table(jspark, rows(71, 5), "l")
    table(jspark, rows(72, 5), "r")
    with pytest.raises(PySparkException) as err:
        jspark.sql(f"SELECT * FROM l a JOIN r b ON {sql}").collect()
    msg = str(err.value)
    assert words in msg
    assert "\tat " not in msg and "at org.apache" not in msg


def test_python_helpers_validate(jspark):
    with pytest.raises(ValueError, match="same number"):
        band(["a"], "s", "e", [], "s", "e")
    with pytest.raises(ValueError, match="not one of"):
        band_sql(["a"], "s", "e", ["b"], "s", "e", build="middle")
    with pytest.raises(ValueError, match="positive integer"):
        band_sql(["a"], "s", "e", ["b"], "s", "e", algo="sweep", tile=0)
    assert "tile=5" in band_sql(["a"], "s", "e", ["b"], "s", "e", algo="sweep", tile=5)
    with pytest.raises(ValueError, match="unknown join type"):
        band_join(jspark.range(1), jspark.range(1), left_keys=[], left_lo="id", left_hi="id",
                  right_keys=[], right_lo="id", right_hi="id", how="sideways")


def test_available_reports_a_session_without_the_extension(jspark):
    class NoFunction:
        class catalog:
            @staticmethod
            def functionExists(name):
                return False

    ok, why = gj.available(NoFunction())
    assert not ok and "no giql_band function" in why
    assert gj.available(jspark) == (True, "")
    assert gj.install(jspark) == "already available"


def test_projection_fused_into_outer_joins(jspark):
    """A Project above the join is computed by the operator itself (including NULL padding)."""
    table(jspark, rows(81, 40), "l")
    table(jspark, rows(82, 40), "r")
    select = ("a.id, b.s + 1 AS x, coalesce(b.name, 'none') AS bn, a.e IS NULL AS ae, "
              "struct(b.id, a.name) AS st")
    for how in ("inner", "left", "right", "full"):
        fast, slow = both(jspark, how, [("a.chrom", "b.chrom")], "a.s", "a.e", "b.s", "b.e",
                          residual="a.s <= b.e", select=select)
        assert "output [" in fast._jdf.queryExecution().executedPlan().toString()
        assert_same(fast, slow)
    agg = "count(*) AS n, count(b.id) AS nb, sum(a.id) AS sa"
    for how in ("left", "full"):
        fast, slow = both(jspark, how, [("a.chrom", "b.chrom")], "a.s", "a.e", "b.s", "b.e",
                          select=agg)
        assert_same(fast, slow)


def test_too_large_broadcast_side_is_a_clear_error(jspark):
    table(jspark, rows(91, 3000, span=100000), "l")
    table(jspark, rows(92, 3000, span=100000), "r")
    m = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e", build="right")
    jspark.conf.set("spark.giql.broadcastMaxRowBytes", "1k")
    try:
        with pytest.raises(PySparkException) as err:
            jspark.sql(f"SELECT count(*) FROM l a JOIN r b ON {m}").collect()
        msg = str(err.value)
        assert "giql interval join: the broadcast side has more than" in msg and "algo=sweep" in msg
        assert "at org.apache" not in msg
    finally:
        jspark.conf.unset("spark.giql.broadcastMaxRowBytes")
    assert jspark.sql(f"SELECT count(*) FROM l a JOIN r b ON {m}").collect()[0][0] >= 0


@pytest.mark.parametrize("seed,build,index", CASES)
@pytest.mark.parametrize("chunk", [None, 3])
def test_count_inside_the_broadcast(jspark, seed, build, index, chunk):
    """COUNT(*) of an inner join counted by the broadcast itself (stream rows sorted in chunks,
    here also of 3 rows, then probed in order; a residual without an exact form on values
    counts the joined rows as they come): equal to Spark's count of the same join."""
    rnd = random.Random(seed)
    table(jspark, rows(seed, rnd.randrange(0, 60) if seed else 0), "l")
    table(jspark, rows(seed + 100, rnd.randrange(1, 60) if seed != 1 else 0), "r")
    residual = rnd.choice([None, "a.s < b.e AND b.s < a.e", "a.s + 1 < b.e AND b.s - 2 <= a.e",
                           "a.name <> b.name OR a.id % 3 = 0", "b.score > a.score * 0.5"])
    keys = rnd.choice([[("a.chrom", "b.chrom")], [("a.chrom", "b.chrom"), ("a.strand", "b.strand")],
                       []])
    system = jspark._jvm.java.lang.System
    if chunk:
        system.setProperty("giql.count.chunk", str(chunk))
    try:
        fast, slow = both(jspark, "inner", keys, "a.s", "a.e", "b.s", "b.e", residual,
                          opts=f"build={build};index={index}", select="count(*) AS n")
        plan = fast._jdf.queryExecution().executedPlan().toString()
        assert "count of join rows" in plan and "SumIntervalJoinCounts" in plan, plan
        assert fast.collect() == slow.collect(), residual
    finally:
        system.clearProperty("giql.count.chunk")
