"""The broadcast k-nearest join (giql_band option nearest=k) against a brute-force oracle.

Each left row must get min(k, rows of its key within maxgap) right rows, nearest by the gap
between closed hulls [least(lo, hi), greatest(lo, hi)] (0 when they meet), ties broken by
(lo, hi); rows of equal (gap, lo, hi) are interchangeable, so the oracle compares the sorted
(gap, lo, hi) of each left row's picks. NULL keys or bounds join nothing; a left join keeps such
rows once with NULLs, an inner join drops them.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import PySparkException

from giql_spark.jvm.marker import band_join, band_sql

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


def oracle(left, right, k, max_gap, how, keep=None):
    """``keep(i, j)``: whether left row i may pair with right row j at all (a condition met
    before the search), or None."""
    out = {}
    for i, (c, lo, hi) in enumerate(left):
        picks = []
        if None not in (c, lo, hi):
            cands = sorted((gap((lo, hi), (rlo, rhi)), min(rlo, rhi), max(rlo, rhi))
                           for j, (rc, rlo, rhi) in enumerate(right)
                           if rc == c and None not in (rlo, rhi) and (keep is None or keep(i, j)))
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


def side_oracle(left, right, k, max_gap, side, keep=None):
    """Per left row, the sorted (gap, lo, hi) of the right rows wholly on ``side`` of its hull
    (left: hi <= its lo; right: lo >= its hi; ``..._or_meeting``: not wholly on the other side,
    lo <= its hi or hi >= its lo): the k nearest and every row at the k-th's gap."""
    out = {}
    for i, (c, lo, hi) in enumerate(left):
        picks = []
        if None not in (c, lo, hi):
            qlo, qhi = sorted((lo, hi))
            cands = []
            for j, (rc, rlo, rhi) in enumerate(right):
                if rc != c or None in (rlo, rhi) or (keep is not None and not keep(i, j)):
                    continue
                xlo, xhi = sorted((rlo, rhi))
                if side == "left" and xhi <= qlo:
                    cands.append((qlo - xhi, xlo, xhi))
                elif side == "right" and xlo >= qhi:
                    cands.append((xlo - qhi, xlo, xhi))
                elif (side == "left_or_meeting" and xlo <= qhi) or (side == "right_or_meeting" and xhi >= qlo):
                    cands.append((gap((qlo, qhi), (xlo, xhi)), xlo, xhi))
            cands = sorted(x for x in cands if max_gap is None or x[0] <= max_gap)
            picks = cands[:k] + [x for x in cands[k:] if len(cands) >= k and x[0] == cands[k - 1][0]]
        out[i] = picks
    return out


@SETTINGS
@given(sides=SIDES, k=st.integers(1, 4), max_gap=st.one_of(st.none(), st.integers(0, 12)),
       side=st.sampled_from(["left", "right", "left_or_meeting", "right_or_meeting"]),
       index=st.sampled_from(["scan", "tree"]), prefilter=st.booleans())
def test_k_nearest_join_on_one_side_matches_the_oracle(jspark, sides, k, max_gap, side, index, prefilter):
    """``side``: only the right rows wholly before or after the left row's hull (a directed
    closest's upstream or downstream rows), and with ``ties`` every one at the k-th's gap; with
    ``prefilter``, among the rows that meet the rest of the condition."""
    from pyspark.sql import functions as F

    left, right = sides
    a, b = frame(jspark, left).alias("a"), frame(jspark, right).alias("b")
    df = band_join(a, b, left_keys=["a.chrom"], left_lo="a.lo", left_hi="a.hi", right_keys=["b.chrom"],
                   right_lo="b.lo", right_hi="b.hi", how="left", algo="broadcast", build="right",
                   index=index, nearest=k, maxgap="none" if max_gap is None else max_gap, ties="true",
                   side=side, residual=F.expr(KEEP_SQL) if prefilter else None,
                   prefilter="true" if prefilter else None)
    assert "on the " + side.replace("_or_", " or ") in df._jdf.queryExecution().executedPlan().toString()
    assert picks(df, "lo", "hi") == side_oracle(left, right, k, max_gap, side, keep if prefilter else None)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_k_nearest_join_on_one_side_on_the_merge_matches_the_oracle(jspark, tmp_path, seed):
    """The same on sorted Parquet files, the merge split into 2 to 40 tasks: a task's right
    rows within reach decide a row's side only when nothing outside can come nearer."""
    import random

    from pyspark.sql import functions as F

    from test_jvm_merge import NATURAL, gen, register, sort_rows, write

    rnd = random.Random(seed)
    left = gen(seed, rnd.randrange(20, 70))
    right = gen(seed + 100, rnd.randrange(1, 90))
    write(tmp_path / "l", sort_rows(left, NATURAL[:5], "first"), row_group=rnd.choice([3, 7]), files=2)
    write(tmp_path / "r", sort_rows(right, NATURAL[:5], "first"), row_group=rnd.choice([4, 50]))
    register(jspark, "sl", str(tmp_path / "l"))
    register(jspark, "sr", str(tmp_path / "r"))
    k, side = rnd.randint(1, 3), ["left", "right", "left_or_meeting", "right_or_meeting"][seed]
    jspark.conf.set("spark.giql.merge.tasks", str(rnd.choice([2, 6, 40])))
    try:
        a, b = jspark.table("sl").alias("a"), jspark.table("sr").alias("b")
        # odd seeds: among the right rows that meet the rest of the condition (ids: see keep_ids)
        prefilter = seed % 2 == 1
        df = band_join(a, b, left_keys=["a.chrom"], left_lo="a.s", left_hi="a.e", right_keys=["b.chrom"],
                       right_lo="b.s", right_hi="b.e", how="left", algo="merge", build="right", nearest=k,
                       maxgap="none", ties="true", side=side,
                       residual=F.expr(KEEP_SQL) if prefilter else None, prefilter="true" if prefilter else None)
        plan = df._jdf.queryExecution().executedPlan().toString()
        got = picks(df, "s", "e")
    finally:
        jspark.conf.unset("spark.giql.merge.tasks")
    assert "MergeIntervalJoin" in plan and "on the " + side.replace("_or_", " or ") in plan, plan
    want = side_oracle([(r["chrom"], r["s"], r["e"]) for r in left],
                       [(r["chrom"], r["s"], r["e"]) for r in right], k, None, side,
                       keep_ids(left, right) if prefilter else None)
    ids = [r["id"] for r in left]
    assert got == {ids[i]: p for i, p in want.items()}


# the rest of the join's condition: the same id (a self-join's own row) and every third right row out
KEEP_SQL = "a.id <> b.id AND b.id % 3 <> 1"


def keep(i, j):
    return i != j and j % 3 != 1


def keep_ids(left, right):
    """:func:`keep` by the rows' ``id`` values, for rows listed in another order than their ids."""
    return lambda i, j: keep(left[i]["id"], right[j]["id"])


@SETTINGS
@given(sides=SIDES, k=st.integers(1, 4), max_gap=st.one_of(st.none(), st.integers(0, 12)),
       how=st.sampled_from(["left", "inner"]), index=st.sampled_from(["scan", "tree"]))
def test_k_nearest_among_the_rows_the_condition_accepts(jspark, sides, k, max_gap, how, index):
    """``prefilter=true``: the k nearest among the right rows that meet the rest of the join's
    condition, so a row still gets k where the nearest fail it (the default filters the k
    nearest, which may leave fewer)."""
    from pyspark.sql import functions as F

    left, right = sides
    a, b = frame(jspark, left).alias("a"), frame(jspark, right).alias("b")
    kw = dict(left_keys=["a.chrom"], left_lo="a.lo", left_hi="a.hi", right_keys=["b.chrom"], right_lo="b.lo",
              right_hi="b.hi", how=how, algo="broadcast", build="right", index=index, nearest=k,
              maxgap="none" if max_gap is None else max_gap, residual=F.expr(KEEP_SQL), prefilter="true")
    df = band_join(a, b, **kw)
    assert "among the rows the condition accepts" in df._jdf.queryExecution().executedPlan().toString()
    assert picks(df, "lo", "hi") == oracle(left, right, k, max_gap, how, keep)


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
    with pytest.raises(ValueError, match="side"):
        band_sql(["a"], "s", "e", ["b"], "s", "e", nearest=1, side="up")
    for options, words in (("nearest=0", "positive integer"), ("nearest=2;maxgap=x", "non-negative integer"),
                           ("nearest=1;side=up", "side=up is not one of both, left, right")):
        with pytest.raises(PySparkException) as err:
            jspark.sql(f"SELECT * FROM VALUES ('c', 1L, 2L) a(c, s, e) JOIN VALUES ('c', 1L, 2L) b(c, s, e) "
                       f"ON giql_band('{options}', a.c, a.s, a.e, b.c, b.s, b.e)").collect()
        assert words in str(err.value) and "\tat " not in str(err.value)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5, 6, 7])
def test_k_nearest_join_on_the_merge_matches_the_oracle(jspark, tmp_path, seed):
    """The same join on sorted Parquet files with algo=merge: each key's right rows indexed in
    its task, the left rows probing them, nothing broadcast. Files of several row groups (and two
    files on the left), NULL keys and bounds, zero-length, wide and reversed rows; planned for 2
    to 40 tasks, so that a key's left row groups are split between tasks (each with all of the
    key's right rows) or not."""
    import random

    from pyspark.sql import functions as F

    from test_jvm_merge import NATURAL, gen, register, sort_rows, write

    spark = jspark
    rnd = random.Random(seed)
    tasks = rnd.choice([2, 6, 40])
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
    spark.conf.set("spark.giql.merge.tasks", str(tasks))
    # three seeds: the k nearest among the right rows that meet the rest of the condition
    prefilter = seed in (2, 5, 7)
    try:
        df = band_join(a, b, left_keys=["a.chrom"], left_lo="a.s", left_hi="a.e", right_keys=["b.chrom"],
                       right_lo="b.s", right_hi="b.e", how=how, algo="merge", build="right", nearest=k,
                       maxgap="none" if max_gap is None else max_gap,
                       residual=F.expr(KEEP_SQL) if prefilter else None, prefilter="true" if prefilter else None)
        plan = df._jdf.queryExecution().executedPlan().toString()
        got = picks(df, "s", "e")
    finally:
        spark.conf.unset("spark.giql.merge.tasks")
    assert "MergeIntervalJoin" in plan and "nearest" in plan, plan
    want = oracle([(r["chrom"], r["s"], r["e"]) for r in left], [(r["chrom"], r["s"], r["e"]) for r in right],
                  k, max_gap, how, keep_ids(left, right) if prefilter else None)
    ids = [r["id"] for r in left]
    assert got == {ids[i]: p for i, p in want.items()}


@pytest.mark.parametrize("tasks,split", [(1, True), (2, True), (3, True), (8, True), (8, False)])
def test_k_nearest_merge_splits_a_busy_chromosome_between_tasks(jspark, tmp_path, tasks, split):
    """A chromosome holding most rows is not one task's: its left row groups are split into
    runs, one per task, each probing all of the chromosome's right rows (a left row's nearest
    may be at the far end of it); ``spark.giql.merge.splitKeys=false`` keeps it whole. The
    answers are the oracle's whatever the split; EXPLAIN shows the units."""
    import random

    from test_jvm_merge import register, write

    rnd = random.Random(tasks)

    def rows(n, seed):
        r = random.Random(seed)
        out = [{"id": i, "chrom": "c1" if i < n * 0.8 else "c2", "s": r.randrange(10_000)} for i in range(n)]
        for x in out:
            x["e"] = x["s"] + r.randrange(0, 40)
        return sorted(out, key=lambda x: (x["chrom"], x["s"]))

    left, right = rows(200, 1), rows(120, 2)
    # right rows only at the far ends of c1: the nearest of a middle left row lies in another piece's positions
    right = [x for x in right if x["chrom"] != "c1" or x["s"] < 500 or x["s"] > 9_500]
    write(tmp_path / "l", left, row_group=10)
    write(tmp_path / "r", right, row_group=7)
    register(jspark, "pl", str(tmp_path / "l"))
    register(jspark, "pr", str(tmp_path / "r"))
    k = rnd.randint(1, 3)
    jspark.conf.set("spark.giql.merge.tasks", str(tasks))
    jspark.conf.set("spark.giql.merge.splitKeys", str(split).lower())
    try:
        a, b = jspark.table("pl").alias("a"), jspark.table("pr").alias("b")
        df = band_join(a, b, left_keys=["a.chrom"], left_lo="a.s", left_hi="a.e", right_keys=["b.chrom"],
                       right_lo="b.s", right_hi="b.e", how="left", algo="merge", build="right", nearest=k,
                       maxgap="none")
        plan = df._jdf.queryExecution().executedPlan().toString()
        got = picks(df, "s", "e")
    finally:
        jspark.conf.unset("spark.giql.merge.tasks")
        jspark.conf.unset("spark.giql.merge.splitKeys")
    import re

    units = int(re.search(r"(\d+) units", plan).group(1))
    # c1 (about 170 of the 232 rows; 160 left rows in 16 groups) outweighs two tasks' shares
    # with 3 tasks or more: then it is cut into pieces, c2 stays whole
    assert units == 2 if tasks <= 2 or not split else 3 <= units <= tasks + 1, plan
    want = oracle([(r["chrom"], r["s"], r["e"]) for r in left], [(r["chrom"], r["s"], r["e"]) for r in right],
                  k, None, "left")
    assert got == {left[i]["id"]: p for i, p in want.items()}


def _metrics(spark, df) -> dict:
    """The merge's metrics after ``df`` ran, by name (one not shown is 0)."""
    text = str(spark.sparkContext._jvm.io.giql.spark.PlanMetrics.describe(
        df._jdf.queryExecution().executedPlan()))
    out = {"numFailovers": 0, "rowsRead": 0}
    for part in text.split("|"):
        name, _, value = part.strip().partition("=")
        if name in ("numFailovers", "rowsRead"):
            out[name] = int(value.split()[0].replace(",", ""))
    return out


@pytest.mark.parametrize("case", ["dense", "gap", "k beyond two groups", "gap within maxgap", "long right row",
                                  "doubled hulls"])
def test_k_nearest_merge_pieces_read_the_right_rows_within_reach(jspark, tmp_path, case):
    """A piece of a busy chromosome reads the right row groups that reach its left rows' span and
    one more group beyond each end, not all of the chromosome's right rows. A left row whose k
    nearest may lie beyond those (here: k more than two groups hold) makes its piece read them
    all, once: the answers are the oracle's either way. The rows read and the pieces read again
    (``numFailovers``) show which happened."""
    import random

    from pyspark.sql import functions as F

    from test_jvm_merge import register, write

    r = random.Random(7)
    left = sorted(({"id": i, "chrom": "c1" if i < 560 else "c2", "s": r.randrange(60_000)} for i in range(600)),
                  key=lambda x: (x["chrom"], x["s"]))
    right = [{"id": 1000 + i, "chrom": "c1" if i < 560 else "c2", "s": r.randrange(60_000)} for i in range(600)]
    if case.startswith("gap"):
        right = [x for x in right if not 20_000 <= x["s"] < 40_000]
    for x in left + right:
        x["e"] = x["s"] + r.randrange(0, 50)
    if case == "long right row":
        right.append({"id": 5000, "chrom": "c1", "s": 100, "e": 59_000})
    right.sort(key=lambda x: (x["chrom"], x["s"]))
    write(tmp_path / "l", left, row_group=20)
    write(tmp_path / "r", right, row_group=10)
    register(jspark, "wl", str(tmp_path / "l"))
    register(jspark, "wr", str(tmp_path / "r"))
    k = 40 if case == "k beyond two groups" else 2
    max_gap = 30 if case == "gap within maxgap" else None
    jspark.conf.set("spark.giql.merge.tasks", "8")
    try:
        a, b = jspark.table("wl").alias("a"), jspark.table("wr").alias("b")
        # doubled hulls (as gs.nearest makes them): the footers' bounds go through the product
        lo, hi = ("{}.s * 2", "{}.e * 2") if case == "doubled hulls" else ("{}.s", "{}.e")
        df = band_join(a, b, left_keys=["a.chrom"], left_lo=F.expr(lo.format("a")), left_hi=F.expr(hi.format("a")),
                       right_keys=["b.chrom"], right_lo=F.expr(lo.format("b")), right_hi=F.expr(hi.format("b")),
                       how="left", algo="merge", build="right", nearest=k,
                       maxgap="none" if max_gap is None else max_gap)
        plan = df._jdf.queryExecution().executedPlan().toString()
        ran = df.select("a.id", "a.s", "a.e", F_b("id"), F_b("s"), F_b("e"))
        rows = ran.collect()
        metrics = _metrics(jspark, ran)
    finally:
        jspark.conf.unset("spark.giql.merge.tasks")
    got = {}
    for x in rows:
        mine = got.setdefault(x[0], [])
        if x[3] is not None:
            mine.append((gap((x[1], x[2]), (x[4], x[5])), min(x[4], x[5]), max(x[4], x[5])))
    want = oracle([(x["chrom"], x["s"], x["e"]) for x in left], [(x["chrom"], x["s"], x["e"]) for x in right],
                  k, max_gap, "left")
    assert {i: sorted(p) for i, p in got.items()} == {left[i]["id"]: p for i, p in want.items()}
    near = re.search(r"(\d+) of them reading the right rows within reach", plan)
    assert near and int(near.group(1)) >= 3, plan
    c1_right = sum(x["chrom"] == "c1" for x in right)
    whole = len(left) + len(right)
    if case != "k beyond two groups":
        # every piece's answers were certain from its own right rows (the gap's nearest lie in
        # the group beyond each end; the long row's group reaches every piece): nothing read
        # again, and fewer rows read than pieces that each read all of c1's right rows
        assert metrics["numFailovers"] == 0, (metrics, plan)
        assert metrics["rowsRead"] < whole + c1_right, (metrics, plan)
    else:
        # a left row's 40 nearest reach past the group beyond its piece's end
        assert metrics["numFailovers"] >= 1, (metrics, plan)
        assert metrics["rowsRead"] > whole, (metrics, plan)


def test_the_dataframe_nearest_prices_its_sides_from_their_files(jspark, tmp_path, monkeypatch):
    """``gs.nearest`` renames both sides' columns before the join. The cost model must still
    read each side's files (rows per chromosome: a k-nearest merge's tasks are whole
    chromosomes, or pieces of the busiest); a renamed side once had only Spark's size estimate, and the merge was priced
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
