"""The broadcast k-nearest join (giql_band option nearest=k) against a brute-force oracle.

Each left row must get min(k, rows of its key within maxgap) right rows, nearest by the gap
between closed hulls [least(lo, hi), greatest(lo, hi)] (0 when they meet), ties broken by
(lo, hi); rows of equal (gap, lo, hi) are interchangeable, so the oracle compares the sorted
(gap, lo, hi) of each left row's picks. NULL keys or bounds join nothing; a left join keeps such
rows once with NULLs, an inner join drops them.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import PySparkException

from giql_spark.jvm.join import band_join, band_sql

from test_jvm_join import jspark  # noqa: F401  (the session with the extension)

SCHEMA = "id int, chrom string, lo bigint, hi bigint"
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))

coord = st.one_of(st.none(), st.integers(0, 60)) | st.integers(0, 60)
ROW = st.tuples(st.sampled_from(["c1", "c2", None]), coord, coord)
SIDES = st.tuples(st.lists(ROW, max_size=12), st.lists(ROW, max_size=25))


def frame(spark, rows):
    return spark.createDataFrame([(i, *r) for i, r in enumerate(rows)], SCHEMA)


def gap(a, b):
    (al, ah), (bl, bh) = sorted(a), sorted(b)
    return max(0, bl - ah, al - bh)


def oracle(left, right, k, max_gap, how):
    out = {}
    for i, (c, lo, hi) in enumerate(left):
        picks = []
        if None not in (c, lo, hi):
            cands = sorted((gap((lo, hi), (rlo, rhi)), min(rlo, rhi), max(rlo, rhi))
                           for rc, rlo, rhi in right if rc == c and None not in (rlo, rhi))
            picks = [x for x in cands if max_gap is None or x[0] <= max_gap][:k]
        if picks or how == "left":
            out[i] = picks
    return out


@SETTINGS
@given(sides=SIDES, k=st.integers(1, 4), max_gap=st.one_of(st.none(), st.integers(0, 12)),
       how=st.sampled_from(["left", "inner"]), index=st.sampled_from(["scan", "tree"]))
def test_k_nearest_join_matches_the_oracle(jspark, sides, k, max_gap, how, index):
    left, right = sides
    a, b = frame(jspark, left).alias("a"), frame(jspark, right).alias("b")
    df = band_join(a, b, left_keys=["a.chrom"], left_lo="a.lo", left_hi="a.hi", right_keys=["b.chrom"],
                   right_lo="b.lo", right_hi="b.hi", how=how, algo="broadcast", build="right",
                   index=index, nearest=k, maxgap="none" if max_gap is None else max_gap)
    assert picks(df, "lo", "hi") == oracle(left, right, k, max_gap, how)


def picks(df, lo, hi):
    """Per left id, the sorted (gap, lo, hi) of its right rows (empty for a padded row)."""
    got = {}
    for r in df.select("a.id", f"a.{lo}", f"a.{hi}", F_b("id"), F_b(lo), F_b(hi)).collect():
        mine = got.setdefault(r[0], [])
        if r[3] is not None:
            mine.append((gap((r[1], r[2]), (r[4], r[5])), min(r[4], r[5]), max(r[4], r[5])))
    return {i: sorted(p) for i, p in got.items()}


def F_b(name):
    from pyspark.sql import functions as F

    return F.col(f"b.{name}").alias(f"b_{name}")


def test_k_nearest_join_refuses_what_it_cannot_run(jspark):
    a = frame(jspark, [("c1", 1, 5)]).alias("a")
    b = frame(jspark, [("c1", 9, 12)]).alias("b")
    kw = dict(left_keys=["a.chrom"], left_lo="a.lo", left_hi="a.hi", right_keys=["b.chrom"],
              right_lo="b.lo", right_hi="b.hi", nearest=1)
    with pytest.raises(PySparkException) as err:
        band_join(a, b, how="right", **kw).collect()
    msg = str(err.value)
    assert "k-nearest join" in msg and "\tat " not in msg, msg
    with pytest.raises(ValueError, match="positive integer"):
        band_sql(["a"], "s", "e", ["b"], "s", "e", nearest=0)
    with pytest.raises(ValueError, match="non-negative integer"):
        band_sql(["a"], "s", "e", ["b"], "s", "e", nearest=1, maxgap="-2")
    for options, words in (("nearest=0", "positive integer"), ("nearest=2;maxgap=x", "non-negative integer")):
        with pytest.raises(PySparkException) as err:
            jspark.sql(f"SELECT * FROM VALUES ('c', 1L, 2L) a(c, s, e) JOIN VALUES ('c', 1L, 2L) b(c, s, e) "
                       f"ON giql_band('{options}', a.c, a.s, a.e, b.c, b.s, b.e)").collect()
        assert words in str(err.value) and "\tat " not in str(err.value)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_k_nearest_join_on_the_merge_matches_the_oracle(jspark, tmp_path, seed):
    """The same join on sorted Parquet files with algo=merge: each key's right rows indexed in
    its task, the left rows probing them, nothing broadcast. Files of several row groups (and two
    files on the left), NULL keys and bounds, zero-length, wide and reversed rows."""
    import random

    from test_jvm_merge import NATURAL, gen, register, sort_rows, write

    spark = jspark
    rnd = random.Random(seed)
    # reversed rows (odd seeds) put hulls out of order: the index does not mind
    rev = 0.1 if seed % 2 else 0.0
    left = gen(seed, rnd.randrange(20, 70), reversed_rate=rev)
    right = gen(seed + 100, rnd.randrange(0, 90), reversed_rate=rev)
    write(tmp_path / "l", sort_rows(left, NATURAL[:5], rnd.choice(["first", "last"])),
          row_group=rnd.choice([3, 7, 50]), files=rnd.choice([1, 2]))
    write(tmp_path / "r", sort_rows(right, NATURAL[:5], "first"), row_group=rnd.choice([4, 50]))
    register(spark, "nl", str(tmp_path / "l"))
    register(spark, "nr", str(tmp_path / "r"))
    k, max_gap = rnd.randint(1, 4), rnd.choice([None, 0, 7])
    how = rnd.choice(["left", "inner"])
    a, b = spark.table("nl").alias("a"), spark.table("nr").alias("b")
    df = band_join(a, b, left_keys=["a.chrom"], left_lo="a.s", left_hi="a.e", right_keys=["b.chrom"],
                   right_lo="b.s", right_hi="b.e", how=how, algo="merge", build="right", nearest=k,
                   maxgap="none" if max_gap is None else max_gap)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "MergeIntervalJoin" in plan and "nearest" in plan, plan
    got = picks(df, "s", "e")
    want = oracle([(r["chrom"], r["s"], r["e"]) for r in left], [(r["chrom"], r["s"], r["e"]) for r in right],
                  k, max_gap, how)
    ids = [r["id"] for r in left]
    assert got == {ids[i]: p for i, p in want.items()}


def test_the_dataframe_nearest_prices_its_sides_from_their_files(jspark, tmp_path, monkeypatch):
    """``gs.nearest`` renames both sides' columns before the join. The cost model must still
    read each side's files (rows per chromosome: a k-nearest merge's tasks are whole
    chromosomes); a renamed side once had only Spark's size estimate, and the merge was priced
    as one task."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import giql_spark as gs
    from giql_spark.planner import choose

    for name, n in (("l", 300), ("r", 500)):
        rows = sorted((c, 10 * i, 10 * i + 5) for c in ("chr1", "chr2", "chr3") for i in range(n // 3))
        pq.write_table(pa.table({"chrom": [r[0] for r in rows], "start": [r[1] for r in rows],
                                 "end": [r[2] for r in rows]}), tmp_path / f"{name}.parquet", row_group_size=64)
    seen = []
    real = choose.choose_nearest

    def spy(k, left, right, *args, **kwargs):
        seen.append((left, right))
        return real(k, left, right, *args, **kwargs)

    monkeypatch.setattr(choose, "choose_nearest", spy)
    a, b = (jspark.read.parquet(str(tmp_path / f"{n}.parquet")) for n in ("l", "r"))
    got = gs.nearest(a, b).collect()
    assert len(got) == 300 and {r["distance"] for r in got} == {0}
    (left, right), = seen
    assert (left.rows, right.rows) == (300, 498)
    assert [len(s.chroms) for s in (left, right)] == [3, 3], (left, right)
