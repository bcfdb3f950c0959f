"""GIQL queries over Parquet files sorted by (chromosome, start): jvm_merge runs them (forced:
these tables are small enough for plain SQL; tests/test_planner_choice.py has the model pick it
on large ones), EXPLAIN says why when it cannot, and the rows equal those of the JVM broadcast
join.

The files are written with pyarrow (tests/test_jvm_merge.py's helpers) so that row groups and
chromosome boundaries inside them are under the test's control.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from conftest import needs_classic
from giql_spark.errors import QueryError
from test_jvm_merge import NATURAL, gen, sort_rows, write

QUERIES = {
    "inner": "SELECT a.id, b.id AS rid FROM l a JOIN r b ON a.interval INTERSECTS b.interval",
    "left": "SELECT a.id, b.id AS rid FROM l a LEFT JOIN r b ON a.interval INTERSECTS b.interval",
    "semi": "SELECT a.id FROM l a LEFT SEMI JOIN r b ON a.interval INTERSECTS b.interval",
    "anti": "SELECT a.id FROM l a LEFT ANTI JOIN r b ON a.interval INTERSECTS b.interval",
    "count": "SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval",
    "residual": "SELECT a.id, b.id AS rid FROM l a JOIN r b ON a.interval INTERSECTS b.interval "
                "AND a.score > b.score",
    "contains": "SELECT a.id, b.id AS rid FROM l a JOIN r b ON a.interval CONTAINS b.interval",
    "left count": "SELECT COUNT(*) FROM l a LEFT JOIN r b ON a.interval INTERSECTS b.interval",
}


def merge_refusal(session, query) -> str | None:
    """None when jvm_merge runs ``query``, else EXPLAIN's reason."""
    session.options["strategy"] = None
    text = session.explain(query)
    line = next(x for x in text.splitlines() if "jvm_merge" in x and "~" in x or "jvm_merge:" in x)
    return line.split("refused, ", 1)[1] if "refused, " in line else None


def both(session, query, merge=True):
    """(why jvm_merge cannot run it or None, rows by jvm_merge or the model's choice, rows by
    the JVM broadcast join)."""
    why = merge_refusal(session, query)
    session.options["strategy"] = "jvm_merge" if why is None else None
    try:
        if why is None:
            assert "MergeIntervalJoin" in session.explain(query)
        got = Counter(session.sql(query).collect())
        session.options["strategy"] = "jvm_broadcast"
        expected = Counter(session.sql(query).collect())
    finally:
        session.options["strategy"] = None
    return why, got, expected


def files(tmp_path, seed, *, null_rate, row_group, order_r=None, shuffle=False):
    rnd = random.Random(seed)
    left = sort_rows(gen(seed, 300, null_rate=null_rate, reversed_rate=0, span=400), NATURAL,
                     "first")
    right = gen(seed + 1, 200, null_rate=null_rate, reversed_rate=0, span=400)
    right = sort_rows(right, order_r or NATURAL, "last")
    if shuffle:
        rnd.shuffle(right)
    write(tmp_path / f"l{seed}", left, row_group=row_group, files=2)
    write(tmp_path / f"r{seed}", right, row_group=row_group + 3)
    return str(tmp_path / f"l{seed}"), str(tmp_path / f"r{seed}")


def register(session, lp, rp, **conv):
    session.register("l", lp, start_col="s", end_col="e", **conv)
    session.register("r", rp, start_col="s", end_col="e", **conv)


@pytest.mark.parametrize("conv", [{}, {"coordinate_system": "1based", "interval_type": "closed"}],
                         ids=["0based", "1based-closed"])
def test_sorted_files_take_the_merge_join(session, tmp_path, conv):
    needs_classic(session.spark)
    # chromosome boundaries fall inside row groups (7 and 10 rows), the right side's
    # chromosomes in another order
    lp, rp = files(tmp_path, 1, null_rate=0, row_group=7, order_r=sorted(NATURAL))
    register(session, lp, rp, **conv)
    # every query in one convention; the shapes the conversion changes in the other
    names = list(QUERIES) if not conv else ["inner", "left", "anti", "count"]
    for name in names:
        query = QUERIES[name]
        why, got, expected = both(session, query)
        assert why is None, (name, why)
        assert got == expected, name
        assert sum(got.values()) > 0, name
    session.options["strategy"] = "jvm_merge"
    try:
        plan = session.explain(QUERIES["count"])
    finally:
        session.options["strategy"] = None
    assert "SumIntervalJoinCounts" in plan and "HashAggregate" not in plan


def test_null_chromosomes_and_starts(session, tmp_path):
    needs_classic(session.spark)
    lp, rp = files(tmp_path, 2, null_rate=0.08, row_group=5)
    register(session, lp, rp)
    why = {}
    for name in ("inner", "left", "anti", "count", "left count"):
        why[name], got, expected = both(session, QUERIES[name])
        assert got == expected, name
    # rows with a NULL start are filtered before an inner join: their order does not matter
    assert why["inner"] is None and why["count"] is None, why


def test_unsorted_files_fall_back_and_explain_says_why(session, tmp_path):
    needs_classic(session.spark)
    lp, rp = files(tmp_path, 3, null_rate=0, row_group=6, shuffle=True)
    register(session, lp, rp)
    for name in ("inner", "left", "count"):
        why, got, expected = both(session, QUERIES[name])
        assert why is not None and "right" in why, why
        assert "not sorted" in why or "not in one run" in why, why
        assert got == expected, name
    session.options["strategy"] = "jvm_merge"
    try:
        with pytest.raises(QueryError, match="'jvm_merge' cannot run this join: right"):
            session.sql(QUERIES["inner"])
    finally:
        session.options["strategy"] = None


def test_empty_side_and_a_filter_on_a_side(session, tmp_path):
    needs_classic(session.spark)
    lp, rp = files(tmp_path, 4, null_rate=0, row_group=8)
    write(tmp_path / "empty", [])
    register(session, lp, rp)
    session.register("e", str(tmp_path / "empty"), start_col="s", end_col="e")
    for query in (QUERIES["inner"].replace("JOIN r b", "JOIN e b"),
                  QUERIES["left"].replace("JOIN r b", "JOIN e b"),
                  QUERIES["count"].replace("FROM l a", "FROM e a")):
        why, got, expected = both(session, query)
        assert why is None and got == expected, (query, why)
    # a filter on a side keeps the row groups aligned: the scan filters rows as it reads
    query = QUERIES["inner"] + " WHERE a.score > 1 AND b.name <> 'n1'"
    why, got, expected = both(session, query)
    assert got == expected and sum(got.values()) > 0
    assert why is None, why


def test_right_and_full_joins_are_refused_with_the_reason(session, tmp_path):
    needs_classic(session.spark)
    lp, rp = files(tmp_path, 5, null_rate=0, row_group=8)
    register(session, lp, rp)
    query = QUERIES["left"].replace("LEFT JOIN", "FULL JOIN")
    why, got, expected = both(session, query)
    assert "inner, left, semi and anti" in why
    assert got == expected


DISTANCE = {
    "inner": "SELECT a.id, b.id AS rid FROM l a JOIN r b ON a.chrom = b.chrom "
             "AND DISTANCE(a.interval, b.interval) <= 6",
    "anti": "SELECT a.id FROM l a LEFT ANTI JOIN r b ON a.chrom = b.chrom "
            "AND DISTANCE(a.interval, b.interval) <= 6",
    "count": "SELECT COUNT(*) FROM l a JOIN r b ON a.chrom = b.chrom "
             "AND DISTANCE(a.interval, b.interval) <= 6",
}


def test_distance_band_takes_the_merge_where_the_footers_count_no_nulls(session, tmp_path):
    """DISTANCE's hull is unbounded for rows with a NULL end: such a band takes the merge
    only where both sides' footers count no NULL in the hull's columns."""
    needs_classic(session.spark)
    lp, rp = files(tmp_path, 6, null_rate=0, row_group=7)
    register(session, lp, rp)
    assert "no NULL positions (Parquet footers)" in session.explain(DISTANCE["inner"])
    for name, query in DISTANCE.items():
        why, got, expected = both(session, query)
        assert why is None, (name, why)
        assert got == expected and sum(got.values()) > 0, name
    lp, rp = files(tmp_path, 7, null_rate=0.05, row_group=7)
    register(session, lp, rp)
    for name, query in DISTANCE.items():
        why, got, expected = both(session, query)
        assert "unbounded hull ends" in why, (name, why)
        assert got == expected, name


def test_a_count_inside_a_larger_query(session, tmp_path):
    """A count summed by the operator is collected by one job; inside a larger query (a
    projection, a union, a cross join) its plan is executed as a one-row input instead."""
    needs_classic(session.spark)
    lp, rp = files(tmp_path, 8, null_rate=0, row_group=7)
    register(session, lp, rp)
    count = QUERIES["count"]
    queries = [count, f"SELECT n + 1 FROM ({count.replace('COUNT(*)', 'COUNT(*) AS n')}) t",
               f"{count} UNION ALL {count.replace('JOIN r b', 'LEFT JOIN r b')}",
               f"SELECT * FROM ({count}) t CROSS JOIN (SELECT COUNT(*) FROM l) u"]
    counted = []
    for query in queries:
        why, got, expected = both(session, query)
        assert why is None and got == expected and sum(got.values()) > 0, (query, why)
        counted.append(sorted(tuple(r) for r in got.elements()))
    n = counted[0][0][0]
    assert n > 0 and counted[1] == [(n + 1,)] and (n,) in counted[2] and counted[3][0][0] == n, counted
    session.options["strategy"] = "jvm_merge"
    try:
        df = session.sql(count)
        df.collect()
        plan = df._jdf.queryExecution().executedPlan().toString()
    finally:
        session.options["strategy"] = None
    assert "SumIntervalJoinCounts" in plan and "Exchange" not in plan, plan
