"""``giql_covered``: the points covered by the intersections of two closed hulls, per group.

Against a point-by-point oracle: as an aggregate Spark evaluates itself (any grouping, rows in
any order across partitions), and kept per left row by the merge and broadcast operators where a
group is one left row and its bounds are the join's own hulls.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from giql_spark.jvm.marker import band_sql

from test_jvm_grouped_count import merge_tasks, sorted_sides  # noqa: F401
from test_jvm_merge import jspark  # noqa: F401

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
PER_ROW = "covered points as"

coord = st.one_of(st.none(), st.integers(-5, 60)) | st.integers(-5, 60)
ROW = st.tuples(st.sampled_from(["k1", "k2", "k3"]), coord, coord, coord, coord)


def points(llo, lhi, rlo, rhi):
    """The integer points of the two closed hulls' intersection."""
    lo = max(min(llo, lhi), min(rlo, rhi))
    hi = min(max(llo, lhi), max(rlo, rhi))
    return set(range(lo, hi + 1))


@SETTINGS
@given(rows=st.lists(ROW, max_size=40), parts=st.integers(1, 4))
def test_spark_evaluates_the_aggregate(jspark, rows, parts):
    """Grouped and over the whole table, split over partitions so that partial buffers merge in
    any order; reversed hulls, NULL bounds (add nothing) and groups with no point (0)."""
    df = jspark.createDataFrame(rows, "k string, a int, b bigint, c int, d bigint").repartition(parts)
    df.createOrReplaceTempView("cov")
    want = {}
    for k, *b in rows:
        got = want.setdefault(k, set())
        if None not in b:
            got |= points(*b)
    q = "SELECT k, giql_covered(a, b, c, d) AS n FROM cov GROUP BY k"
    assert {r["k"]: r["n"] for r in jspark.sql(q).collect()} == {k: len(v) for k, v in want.items()}
    total = jspark.sql("SELECT giql_covered(a, b, c, d) AS n FROM cov").collect()[0]["n"]
    assert total == len(set().union(*want.values()))


def test_bad_arguments_are_one_line(jspark):
    from pyspark.errors import PySparkException

    with pytest.raises(PySparkException, match="takes 4 arguments"):
        jspark.sql("SELECT giql_covered(1, 2, 3)").collect()
    with pytest.raises(PySparkException, match="bounds must be integers"):
        jspark.sql("SELECT giql_covered(1, 2, 3, 'x')").collect()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_covered_points_per_left_row_on_the_merge_and_the_broadcast(jspark, tmp_path, seed, merge_tasks):
    """Sorted files with NULL keys and bounds, zero-length, wide and (odd seeds) reversed rows,
    so the merge's first pass fails over to sorted copies: each left row's covered points, kept
    by the operator, equal the oracle; grouped by a chromosome (several left rows a group),
    Spark evaluates the aggregate over the pairs, to the oracle's union. With more tasks than
    chromosomes, each left row is in one range of its chromosome."""
    left, right = sorted_sides(jspark, tmp_path, seed, row_groups=(3, 5) if merge_tasks else None)

    def pts(a):
        out = set()
        if None in (a["chrom"], a["s"], a["e"]):
            return out
        for b in right:
            if b["chrom"] == a["chrom"] and None not in (b["s"], b["e"]):
                out |= points(a["s"], a["e"], b["s"], b["e"])
        return out

    marker = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
    covered = "giql_covered(a.s, a.e, b.s, b.e)"
    for opts in ("", "algo=broadcast"):
        on = marker.replace("giql_band(''", f"giql_band('{opts}'") if opts else marker
        for join in ("LEFT JOIN", "JOIN"):
            q = (f"SELECT a.id, {covered} AS c, count(*) AS n FROM (SELECT *, "
                 f"monotonically_increasing_id() AS rid FROM l) a {join} r b ON {on} "
                 "GROUP BY a.rid, a.id")
            df = jspark.sql(q)
            plan = df._jdf.queryExecution().executedPlan().toString()
            assert PER_ROW in plan and "Aggregate" not in plan, plan
            assert ("BroadcastIntervalJoin" if opts else "MergeIntervalJoin") in plan, plan
            if merge_tasks and not opts:
                assert "ranges of a key" in plan, plan
            # the grouping row id is replaced by the operator's per-row output: not computed
            assert opts or "monotonically_increasing_id" not in plan, plan
            want = Counter()
            for a in left:
                p = pts(a)
                n = sum(1 for b in right if b["chrom"] == a["chrom"] and a["chrom"] is not None
                        and None not in (a["s"], a["e"], b["s"], b["e"])
                        and min(a["s"], a["e"]) <= max(b["s"], b["e"])
                        and min(b["s"], b["e"]) <= max(a["s"], a["e"]))
                if n or join == "LEFT JOIN":
                    want[(a["id"], len(p), max(n, 1))] += 1
            assert Counter((r["id"], r["c"], r["n"]) for r in df.collect()) == want, (opts, join)

        q = f"SELECT a.chrom, {covered} AS c FROM l a JOIN r b ON {on} GROUP BY a.chrom"
        df = jspark.sql(q)
        assert PER_ROW not in df._jdf.queryExecution().executedPlan().toString()
        want = {}
        for a in left:  # a pair's hulls share a point: a left row with a pair has points
            if p := pts(a):
                want.setdefault(a["chrom"], set()).update(p)
        assert {r["chrom"]: r["c"] for r in df.collect()} == {k: len(v) for k, v in want.items()}
