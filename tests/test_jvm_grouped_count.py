"""Differential tests of a COUNT grouped by left columns over an interval join, counted per left row.

The merge and broadcast operators report one row per left row with its number of join rows, and
Spark's aggregate sums them per group (GroupedCount.java). Each query runs with the
``giql_band(...)`` marker and with the same condition in Spark's own expressions; the results
must be equal as multisets, and the plan must show the per-row count where it applies.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pyspark.sql import functions as F
from conftest import task_error, task_errors

from giql_spark.jvm.marker import band_sql

from test_jvm_join import plain_condition  # noqa: E402
from test_jvm_merge import (NATURAL, gen, jspark, register, sort_rows,  # noqa: F401,E402
                            unsorted_within_keys, write)

PER_ROW = "count per left row"

# (join, select list, group by): each reaches the per-row count
GROUPED = [
    ("JOIN", "a.chrom, a.s, count(*) AS n", "a.chrom, a.s"),
    ("LEFT JOIN", "a.id, a.name, count(*) AS n, max(a.score) AS m", "a.id, a.name"),
    ("LEFT JOIN", "a.chrom, count(1) + 1 AS n, min(a.e) AS lo", "a.chrom"),
    ("JOIN", "a.s div 7 AS k, count(*) AS n, max(a.chrom) AS c", "a.s div 7"),
    ("LEFT JOIN", "a.name, count(*) AS n", "a.name"),
    # sums of integral expressions over the join rows: right, left (repeats count), both sides
    ("LEFT JOIN", "a.id, count(*) AS n, sum(b.id) AS t", "a.id"),
    ("JOIN", "a.chrom, sum(a.s) AS t, sum(b.e - b.s) + count(*) AS w", "a.chrom"),
    ("LEFT JOIN", "a.id, coalesce(sum(CASE WHEN b.id IS NOT NULL THEN least(a.e, b.e) "
     "- greatest(a.s, b.s) END), 0) AS bases, max(a.s) AS m", "a.id"),
    ("LEFT JOIN", "a.name, sum(a.id) AS t", "a.name"),
    # counts of columns that may be NULL, on either side (a padded row's right side is NULL)
    ("LEFT JOIN", "a.id, count(b.id) AS n", "a.id"),
    ("LEFT JOIN", "a.chrom, count(a.name) AS n, count(b.name, b.s) AS m, count(*) AS k", "a.chrom"),
    ("JOIN", "a.name, count(b.score) AS n", "a.name"),
]
# these keep Spark's aggregate over the pairs: a right-side group, a sum of a fractional column,
# a distinct count, a distinct sum
NOT_PER_ROW = [
    ("JOIN", "b.chrom, count(*) AS n", "b.chrom"),
    ("LEFT JOIN", "a.id, count(*) AS n, sum(CAST(b.score AS decimal(10, 2))) AS t", "a.id"),
    ("LEFT JOIN", "a.id, count(DISTINCT b.id) AS n", "a.id"),
    ("JOIN", "a.id, sum(DISTINCT b.id) AS t", "a.id"),
]


def run_grouped(spark, join, select, group, *, residual=None, opts="", per_row=True):
    marker = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
    if opts:
        marker = marker.replace("giql_band(''", f"giql_band('{opts}'")
    plain = plain_condition([("a.chrom", "b.chrom")], "a.s", "a.e", "b.s", "b.e")
    res = f" AND ({residual})" if residual else ""
    q = "SELECT {sel} FROM l a {j} r b ON {cond} GROUP BY {g}"
    fast = spark.sql(q.format(sel=select, j=join, cond=marker + res, g=group))
    slow = spark.sql(q.format(sel=select, j=join, cond=plain + res, g=group))
    got = Counter(fast.collect())
    plan = fast._jdf.queryExecution().executedPlan().toString()
    assert (PER_ROW in plan) == per_row, plan
    exp = Counter(slow.collect())
    assert got == exp, (join, select, residual, sorted(got.items())[:8], sorted(exp.items())[:8])
    return plan


@pytest.fixture(params=["1", "24"], ids=["chromosomes", "ranges"])
def merge_tasks(jspark, request):
    """The merge's tasks: one (whole chromosomes: a task boundary is what cuts one), or more
    tasks than chromosomes, so that chromosomes are cut into ranges of positions. Yields
    whether there are ranges."""
    jspark.conf.set("spark.giql.merge.tasks", request.param)
    yield request.param != "1"
    jspark.conf.unset("spark.giql.merge.tasks")


def sorted_sides(spark, tmp_path, seed, row_groups=None):
    """Sorted files l and r (registered) with NULL keys and bounds, zero-length and wide rows,
    left rows twice; odd seeds add reversed rows, so the merge's first pass fails over.
    ``row_groups``: (left, right) rows per row group, else drawn. Returns the rows (left, right)."""
    rnd = random.Random(seed)
    rev = 0.1 if seed % 2 else 0.0
    left = gen(seed, rnd.randrange(30, 80), reversed_rate=rev)
    left += [dict(r) for r in left[:10]]  # the same left row twice: both count
    right = gen(seed + 50, rnd.randrange(1, 80), reversed_rate=rev)
    write(tmp_path / "l", sort_rows(left, NATURAL[:5], rnd.choice(["first", "last"])),
          row_group=row_groups[0] if row_groups else rnd.choice([3, 7, 50]), files=rnd.choice([1, 2]))
    write(tmp_path / "r", sort_rows(right, NATURAL[:5], "first"),
          row_group=row_groups[1] if row_groups else rnd.choice([5, 50]))
    register(spark, "l", str(tmp_path / "l"))
    register(spark, "r", str(tmp_path / "r"))
    return left, right


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_grouped_counts_on_the_merge_and_the_broadcast(jspark, tmp_path, seed, merge_tasks):
    """Sorted files with NULL keys and bounds, zero-length, reversed and wide rows, duplicated
    left rows; odd seeds have reversed intervals, so the merge's first pass fails over. With
    more tasks than chromosomes, each left row is counted in one range of its chromosome."""
    sorted_sides(jspark, tmp_path, seed, row_groups=(3, 5) if merge_tasks else None)
    # seed 3: an exact integer residual, checked on values (the right side is read lean)
    residual = [None, "a.score + b.score > 2", "a.name <> b.name", "a.id >= b.id AND a.s < b.e"][seed]
    for join, select, group in GROUPED:
        plan = run_grouped(jspark, join, select, group, residual=residual)
        assert "MergeIntervalJoin" in plan, plan
        assert ("ranges of a key" in plan) == bool(merge_tasks), plan
        plan = run_grouped(jspark, join, select, group, residual=residual, opts="algo=broadcast")
        assert "BroadcastIntervalJoin" in plan, plan
    for join, select, group in NOT_PER_ROW:
        run_grouped(jspark, join, select, group, residual=residual, per_row=False)


def test_empty_sides(jspark, tmp_path):
    rows = sort_rows(gen(7, 40), NATURAL[:5])
    for left, right in (([], rows), (rows, []), ([], [])):
        write(tmp_path / f"l{len(left)}{len(right)}", left)
        write(tmp_path / f"r{len(left)}{len(right)}", right)
        register(jspark, "l", str(tmp_path / f"l{len(left)}{len(right)}"))
        register(jspark, "r", str(tmp_path / f"r{len(left)}{len(right)}"))
        for join, select, group in GROUPED[:2]:
            run_grouped(jspark, join, select, group, opts="algo=broadcast")
            run_grouped(jspark, join, select, group)


def test_unsorted_right_side_is_exact_or_a_clear_error(jspark, tmp_path):
    """Positions shuffled within each key on the right: a left row's count reported before the
    disorder showed would be wrong, so the task fails and says why, or the count is exact."""
    left, right = unsorted_within_keys(9)
    write(tmp_path / "l", left, row_group=1000)
    write(tmp_path / "r", right, row_group=1000)
    register(jspark, "l", str(tmp_path / "l"))
    register(jspark, "r", str(tmp_path / "r"))
    for join, select, group in GROUPED:
        try:
            run_grouped(jspark, join, select, group)
        except task_errors() as e:
            assert "is not sorted by (key, start)" in task_error(e)


@pytest.mark.parametrize("seed", [4, 5])
def test_unsorted_left_side_fails_over_to_exact_counts(jspark, tmp_path, seed):
    """Positions shuffled within each key on the left, the right sorted, no residual: the plain
    per-row count reports each left row as soon as the right side is read past it, so the rows
    it reported before the disorder showed are exact, and the sweep over sorted copies counts
    the rest. The query must succeed with the exact counts."""
    right, left = unsorted_within_keys(seed)  # its sorted side becomes the right
    write(tmp_path / "l", left, row_group=1000)
    write(tmp_path / "r", right, row_group=1000)
    register(jspark, "l", str(tmp_path / "l"))
    register(jspark, "r", str(tmp_path / "r"))
    for join, select, group in GROUPED[:5]:
        run_grouped(jspark, join, select, group)


def test_giql_group_by_reaches_the_per_row_count(tmp_path):
    """The GIQL form, as a user writes it: counts per gene equal bedtools-style pair counts."""
    import giql_spark as gs
    import pyarrow as pa
    import pyarrow.parquet as pq

    rnd = random.Random(4)
    def rows(n):
        out = []
        for _ in range(n):
            s = rnd.randrange(0, 5000)
            out.append({"chrom": rnd.choice(["chr1", "chr2"]), "start": s,
                        "end": s + rnd.randrange(0, 300)})
        out.sort(key=lambda r: (r["chrom"], r["start"]))
        return out
    a, b = rows(300), rows(500)
    for name, data in (("a", a), ("b", b)):
        pq.write_table(pa.Table.from_pylist(data), tmp_path / f"{name}.parquet")
    s = gs.Session()
    s.register("genes", str(tmp_path / "a.parquet"))
    s.register("reads", str(tmp_path / "b.parquet"))
    q = ("SELECT g.chrom, g.start, g.end, COUNT(*) AS n FROM genes g JOIN reads r "
         "ON g.interval INTERSECTS r.interval GROUP BY g.chrom, g.start, g.end")
    df = s.sql(q)
    got = Counter(map(tuple, df.collect()))
    per_gene = Counter()
    for g in a:
        n = sum(1 for r in b if r["chrom"] == g["chrom"] and r["start"] < g["end"]
                and g["start"] < r["end"])
        if n:
            per_gene[(g["chrom"], g["start"], g["end"])] += n
    assert got == Counter(k + (n,) for k, n in per_gene.items())
    plan = df._jdf.queryExecution().executedPlan().toString()
    if "IntervalJoin" in plan:  # a JVM operator was chosen: it counts per left row
        assert PER_ROW in plan, plan
    # The cost model prices the join as reduced per gene: counted inside the JVM operators,
    # aggregated by Spark over the pairs of the others.
    explained = s.explain(q)
    assert "per row" in explained and "aggregate" in explained, explained


@pytest.mark.parametrize("seed", [0, 1])
def test_count_overlaps_and_coverage_per_row_in_the_jvm(jspark, tmp_path, seed, merge_tasks):
    """gs.count_overlaps and gs.coverage on a session with the extension: each df1 row
    (duplicates, NULLs, zero-length and wide rows included) gets its count or covered bases from
    the merge over sorted files (whole chromosomes, or cut into ranges of positions) and from
    the broadcast over in-memory tables, without pairs (and for counts without an aggregate),
    equal to a direct count and a base-by-base union."""
    import giql_spark as gs

    rnd = random.Random(seed)
    left = gen(seed, rnd.randrange(30, 80), reversed_rate=0.0)
    left += [dict(r) for r in left[:10]]
    right = gen(seed + 50, rnd.randrange(1, 80), reversed_rate=0.0)
    groups = rnd.choice([3, 50]), rnd.choice([5, 50])
    if merge_tasks:
        groups = (3, 5)  # small row groups, so that the chromosomes can be cut
    write(tmp_path / "l", sort_rows(left, NATURAL[:5]), row_group=groups[0])
    write(tmp_path / "r", sort_rows(right, NATURAL[:5]), row_group=groups[1])
    cols = ("chrom", "s", "e")

    def want():
        out = Counter()
        for a in left:
            n = 0
            if None not in (a["chrom"], a["s"], a["e"]):
                ae = a["e"] + (a["e"] == a["s"])  # bioframe's one-base zero-length rows
                for b in right:
                    if None in (b["chrom"], b["s"], b["e"]) or b["chrom"] != a["chrom"]:
                        continue
                    be = b["e"] + (b["e"] == b["s"])
                    n += a["s"] < be and b["s"] < ae
            out[(a["id"], a["chrom"], a["s"], a["e"], n)] += 1
        return out

    def covered():
        out = Counter()
        for a in left:
            bases = set()
            if None not in (a["chrom"], a["s"], a["e"]):
                for b in right:
                    if None not in (b["chrom"], b["s"], b["e"]) and b["chrom"] == a["chrom"]:
                        bases.update(range(max(a["s"], b["s"]), min(a["e"], b["e"])))
            out[(a["id"], a["chrom"], a["s"], a["e"], len(bases))] += 1
        return out

    files = jspark.read.parquet(str(tmp_path / "l")), jspark.read.parquet(str(tmp_path / "r"))
    frames = tuple(jspark.createDataFrame(f.collect(), f.schema) for f in files)
    for (d1, d2), operator in ((files, "MergeIntervalJoin"), (frames, "BroadcastIntervalJoin")):
        df = gs.count_overlaps(d1, d2, cols1=cols, cols2=cols)
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert PER_ROW in plan and operator in plan and "Aggregate" not in plan, plan
        if operator == "MergeIntervalJoin":
            # the row id the operator's count replaced is not computed for every row
            assert "monotonically_increasing_id" not in plan, plan
            # the hull of a zero-length row (end = start as a number) has bounds: the ranges cut
            assert ("ranges of a key" in plan) == merge_tasks, plan
        got = Counter((r["id"], r["chrom"], r["s"], r["e"], r["count"]) for r in df.collect())
        assert got == want(), operator
        # An aggregate over the result prunes the left side under the row id's Project: the
        # same operator still plans, and counts the same.
        for total in (df.agg(F.sum("count").alias("n")),
                      df.groupBy("chrom").agg(F.sum("count").alias("n"))):
            plan = total._jdf.queryExecution().executedPlan().toString()
            assert operator in plan, plan
            by_chrom = Counter()
            for (_, chrom, _, _, n), k in want().items():
                by_chrom[chrom if "chrom" in total.columns else None] += n * k
            got = {r["chrom"] if "chrom" in total.columns else None: r["n"] for r in total.collect()}
            assert got == dict(by_chrom), operator

        # each left row's covered runs kept by the operator (giql_covered): no pairs, no aggregate
        df = gs.coverage(d1, d2, cols1=cols, cols2=cols)
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert "covered points" in plan and operator in plan and "Aggregate" not in plan, plan
        assert operator != "MergeIntervalJoin" or "monotonically_increasing_id" not in plan, plan
        assert operator != "MergeIntervalJoin" or ("ranges of a key" in plan) == merge_tasks, plan
        got = Counter((r["id"], r["chrom"], r["s"], r["e"], r["coverage"]) for r in df.collect())
        assert got == covered(), operator


def test_a_sum_overflowing_bigint_fails_with_one_line(jspark, tmp_path):
    """Two right rows at 2^62 sum past BIGINT for the one left row: the per-row sum fails the
    query, as ANSI SUM does, with its own message on one line (no wrapped value, no Java stack)."""
    big = 2**62
    left = [{"id": 1, "chrom": "c1", "s": 0, "e": big + 100, "name": "a", "score": 1.0}]
    right = [{"id": i, "chrom": "c1", "s": big, "e": big + 10, "name": "b", "score": 1.0} for i in (1, 2)]
    write(tmp_path / "l", left, row_group=10)
    write(tmp_path / "r", right, row_group=10)
    register(jspark, "l", str(tmp_path / "l"))
    register(jspark, "r", str(tmp_path / "r"))
    marker = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
    df = jspark.sql(f"SELECT a.id, sum(b.s) AS t FROM l a JOIN r b ON {marker} GROUP BY a.id")
    assert PER_ROW in df._jdf.queryExecution().executedPlan().toString()
    with pytest.raises(task_errors()) as e:
        df.collect()
    text = task_error(e.value)
    assert text.startswith("giql per-row count: SUM(") and "overflows BIGINT" in text, text[:300]
