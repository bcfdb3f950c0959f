"""mark_runs, merge_runs and pair_by_distance against bioframe 0.8 on the same data.

As in test_ops_bioframe: each hypothesis example is a batch of independent
cases on their own chromosomes ("03|chr1"), checked in one Spark run. bioframe
expects its input sorted, so the oracle gets the rows sorted by (chrom, start,
end, name) with a default index; Spark gets them shuffled and must sort
itself (rows with equal coordinates it orders by their other columns, name
first, which is the oracle's order too).
"""

from __future__ import annotations

import random

import bioframe as bf
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from giql_spark.dataframe.pairs import pair_by_distance
from giql_spark.dataframe.runs import mark_runs, merge_runs
from giql_spark.errors import GiqlSparkError, UnknownColumnError
from test_ops_bioframe import (
    CASES,
    SETTINGS,
    assert_bags,
    bag,
    bag_of,
    batch,
    frame,
    intervals,
    labelled,
    pdf,
)

VALUES = ["+", "-", ".", None]
# Hypothesis' first example is its simplest (every case empty, only the fixed
# case left); two more are random batches.
SETTINGS = settings(SETTINGS, max_examples=3)


@st.composite
def tracks(draw, max_rows=9):
    """bedGraph-like rows, (chrom, start, end, value), no two overlapping as bioframe's
    overlap has it: book-ended and zero-length rows are common, values come in runs."""
    rows = []
    for chrom in draw(st.lists(st.sampled_from(["chr1", "chr2", "chr3"]), max_size=3, unique=True)):
        pos, point, value = draw(st.integers(0, 3)), False, draw(st.sampled_from(VALUES))
        for _ in range(draw(st.integers(1, max_rows))):
            gap = draw(st.sampled_from([0, 0, 0, 1, 3]))
            # A zero-length row acts as one base: the next row must start past it.
            start = pos + max(gap, 1 if point else 0)
            width = draw(st.sampled_from([0, 1, 1, 2, 3, 5]))
            if draw(st.integers(0, 2)) == 0:
                value = draw(st.sampled_from(VALUES))
            rows.append((chrom, start, start + width, value))
            pos, point = start + width, width == 0
    return rows


# Book-ended runs, a gap inside a run, zero-length rows, NULL runs, a value
# that comes back after another.
FIXED_TRACK = [("chr1", 0, 5, "+"), ("chr1", 5, 10, "+"), ("chr1", 12, 12, "+"), ("chr1", 13, 20, "+"),
               ("chr1", 20, 20, None), ("chr1", 21, 25, None), ("chr1", 25, 27, None), ("chr1", 27, 30, "-"),
               ("chr1", 30, 31, "+"),
               ("chr2", 0, 0, "-"), ("chr2", 1, 1, "-"), ("chr2", 2, 4, None)]
TRACKS = st.lists(tracks(), min_size=CASES, max_size=CASES)
SINGLES = st.lists(intervals(10), min_size=CASES, max_size=CASES)


def oracle_rows(rows):
    return sorted(rows, key=lambda r: (r[0], r[1], r[2], r[3]))


def shuffled(rows, seed=0):
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows


def sorted_pdf(rows) -> pd.DataFrame:
    return pdf(oracle_rows(rows)).reset_index(drop=True)


# -- mark_runs and merge_runs ---------------------------------------------------

AGG = {"n": ("name", "count"), "first_name": ("name", "first"), "last_name": ("name", "last"),
       "size": ("strand", "size"), "kinds": ("strand", "nunique"), "lo": ("start", "min"),
       "hi": ("end", "max"), "total": ("end", "sum"), "mean_start": ("start", "mean"),
       "median_end": ("end", "median")}


@SETTINGS
@given(cases=TRACKS)
def test_runs_of_a_track_match_bioframe(spark, cases):
    rows = batch(cases, FIXED_TRACK, "a")
    p, d = sorted_pdf(rows), frame(spark, shuffled(rows))
    got = labelled({
        "reset": mark_runs(d, "strand"),
        "global": mark_runs(d, "strand", reset_counter=False, run_col="run id"),
    })
    assert_bags(got["reset"], bag_of(bf.mark_runs(p, "strand")), "mark_runs")
    want = bf.mark_runs(p, "strand", reset_counter=False, run_col="run id")
    assert_bags(got["global"], bag_of(want), "mark_runs reset_counter=False")
    assert want["run id"].max() > bf.mark_runs(p, "strand")["run"].max(), "runs numbered across chromosomes"
    # run_col replaces a column of that name in place.
    got = mark_runs(d, "start", run_col="strand", reset_counter=False)
    want = bf.mark_runs(p, "start", run_col="strand", reset_counter=False)
    assert got.columns == list(want.columns)
    assert_bags(bag(got.collect()), bag_of(want), "mark_runs run_col='strand'")

    want = bf.merge_runs(p, "strand")
    got = labelled({"plain": merge_runs(d, "strand"), "overlaps-allowed": merge_runs(d, "strand", allow_overlaps=True)})
    assert_bags(got["plain"], bag_of(want), "merge_runs")
    assert_bags(got["overlaps-allowed"], bag_of(want), "merge_runs allow_overlaps=True")
    assert len(want) < len(p) and want["strand"].isna().any()

    width = {"width": F.sum(F.col("end") - F.col("start"))}
    got = merge_runs(d, "strand", agg={**AGG, **width}).collect()
    want = bf.merge_runs(p.assign(width=p["end"] - p["start"]), "strand", agg={**AGG, "width": ("width", "sum")})
    assert list(want.columns) == ["chrom", "start", "end", "strand", *AGG, "width"]
    assert_bags(bag(got), bag_of(want), "merge_runs with agg")


@SETTINGS
@given(cases=SINGLES, nulls=st.lists(st.booleans(), min_size=CASES, max_size=CASES))
def test_runs_of_overlapping_intervals_match_bioframe(spark, cases, nulls):
    """allow_overlaps=True: identical, nested and zero-length rows; '.' read as NULL in some cases."""
    cases = [[(c, s, e, None if (null and t == ".") else t) for c, s, e, t in rows]
             for rows, null in zip(cases, nulls)]
    fixed = [("chr1", 0, 5, "+"), ("chr1", 0, 5, "-"), ("chr1", 0, 5, "+"), ("chr1", 2, 2, None),
             ("chr1", 3, 9, None), ("chr1", 9, 9, None), ("chr1", 20, 30, "+"), ("chr1", 22, 25, "+")]
    rows = batch(cases, fixed, "a")
    p, d = sorted_pdf(rows), frame(spark, shuffled(rows, 1))
    got = labelled({
        "reset": mark_runs(d, "strand", allow_overlaps=True),
        "global": mark_runs(d, "strand", allow_overlaps=True, reset_counter=False),
    })
    assert_bags(got["reset"], bag_of(bf.mark_runs(p, "strand", allow_overlaps=True)), "mark_runs")
    assert_bags(got["global"], bag_of(bf.mark_runs(p, "strand", allow_overlaps=True, reset_counter=False)),
                "mark_runs reset_counter=False")
    want = bf.merge_runs(p, "strand", allow_overlaps=True, agg={"n": ("name", "size"), "last": ("name", "last")})
    # A bare aggregation name aggregates the column of the key's name.
    got = merge_runs(d, "strand", allow_overlaps=True, agg={"name": "size", "last": ("name", "last")}).collect()
    assert_bags(bag(got), bag_of(want), "merge_runs allow_overlaps=True")


FLOATS = [0.0, 1.0, 1.0 + 1e-6, 1.0 + 1e-4, 1e5, 1e5 + 1, float("nan"), None, float("inf"), float("-inf")]
# Book-ended rows on one chromosome: which neighbours numpy.isclose calls equal.
FIXED_FLOATS = [1.0, 1.0 + 1e-6, 1.0 + 1e-4, 1e5, 1e5 + 1, float("nan"), None, float("nan"), float("inf"),
                float("inf"), float("-inf"), 0.0, 1e-9]


@SETTINGS
@given(cases=TRACKS, values=st.lists(st.sampled_from(FLOATS), min_size=40, max_size=40))
def test_runs_of_float_values_compare_as_isclose(spark, cases, values):
    """Float values join a run when numpy.isclose says so (NaN equal to NaN; NULL is NaN to pandas)."""
    picked, prev, it = [], None, iter(values * 20)
    for r in oracle_rows(batch(cases, [], "a")):
        # Values in runs: a row keeps the previous value unless its strand changed.
        value = next(it) if prev is None or r[4] != prev[4] or r[0] != prev[0] else picked[-1][4]
        picked.append((r[0], r[1], r[2], r[3], value))
        prev = r
    picked += [("99|fixed", 10 * i, 10 * i + 10, f"f{i:02d}", v) for i, v in enumerate(FIXED_FLOATS)]
    schema = "chrom string, start bigint, `end` bigint, name string, value double"
    d = spark.createDataFrame(shuffled(picked, 2), schema)
    p = pd.DataFrame(picked, columns=["chrom", "start", "end", "name", "value"]).astype({"value": float})
    float_agg = {f: ("value", f) for f in ("first", "last", "min", "max", "count", "size")}
    got = labelled({"runs": mark_runs(d, "value").select("name", "run")})
    want = bf.mark_runs(p, "value")
    assert_bags(got["runs"], bag_of(want, ["name", "run"]), "mark_runs on floats")
    got = merge_runs(d, "value", agg=float_agg).collect()
    assert_bags(bag(got), bag_of(bf.merge_runs(p, "value", agg=float_agg)), "merge_runs on floats")
    fixed = want[want["chrom"] == "99|fixed"].sort_values("start")["run"].tolist()
    # 1 ~ 1+1e-6, 1e5 ~ 1e5+1, NaN ~ NULL ~ NaN, inf ~ inf, 0 ~ 1e-9; 1+1e-4 and -inf alone.
    assert fixed == [0, 0, 1, 2, 2, 3, 3, 3, 4, 4, 5, 6, 6]


def test_runs_with_unusual_column_names(spark):
    rows = [("c", 0, 5, "x", "+"), ("c", 5, 7, "y", "+"), ("c", 7, 7, "z", "+"), ("c", 9, 12, "w", "-"),
            ("d", 3, 4, "v", "-")]
    names = {"chrom": "chr om", "start": "st.art", "end": "e`nd", "strand": "val ue"}
    d = frame(spark, shuffled(rows)).withColumnsRenamed(names)
    p = sorted_pdf(rows).rename(columns=names)
    cols = ("chr om", "st.art", "e`nd")
    got = labelled({"mark": mark_runs(d, "val ue", cols=cols, run_col="r.un"),
                    "global": mark_runs(d, "val ue", cols=cols, reset_counter=False)})
    # bioframe's overlap check ignores cols= (it fails on these names), so the
    # oracle skips it: the rows do not overlap.
    want = bf.mark_runs(p, "val ue", cols=cols, run_col="r.un", allow_overlaps=True)
    assert_bags(got["mark"], bag_of(want), "mark_runs cols=")
    want_global = bf.mark_runs(p, "val ue", cols=cols, reset_counter=False, allow_overlaps=True)
    assert_bags(got["global"], bag_of(want_global), "reset_counter")
    assert mark_runs(d, "val ue", cols=cols, run_col="r.un").columns == list(want.columns)
    merged = merge_runs(d, "val ue", cols=cols, agg={"n a": ("name", "count")})
    # bioframe's merge_runs does not pass cols= on: the oracle runs on the default names.
    plain = sorted_pdf(rows).rename(columns={"strand": "val ue"})
    want = bf.merge_runs(plain, "val ue", agg={"n a": ("name", "count")}).rename(columns=names)
    assert merged.columns == list(want.columns) == [*cols, "val ue", "n a"]
    assert_bags(bag(merged.collect()), bag_of(want), "merge_runs cols=")
    assert sorted(map(tuple, want.values.tolist())) == [("c", 0, 7, "+", 3), ("c", 9, 12, "-", 1),
                                                        ("d", 3, 4, "-", 1)]


DOC = [("chr1", 0, 100, 1), ("chr1", 100, 200, 1), ("chr1", 200, 300, 1), ("chr1", 300, 400, 2),
       ("chr1", 400, 500, 2), ("chr1", 500, 600, 2)]


def test_bioframe_docstring_examples(spark):
    d = spark.createDataFrame(shuffled(DOC), "chrom string, start long, `end` long, value long")
    p = pd.DataFrame(DOC, columns=["chrom", "start", "end", "value"])

    def rows(df, *order):
        return [tuple(r) for r in df.orderBy(*order).collect()]

    want = bf.mark_runs(p, "value")
    assert rows(mark_runs(d, "value"), "start") == list(want.itertuples(index=False, name=None))
    assert [r[-1] for r in rows(mark_runs(d, "value"), "start")] == [0, 0, 0, 1, 1, 1]
    assert rows(merge_runs(d, "value"), "start") == [("chr1", 0, 300, 1), ("chr1", 300, 600, 2)]
    assert rows(merge_runs(d, "value", agg={"sum": ("value", "sum")}), "start") == list(
        bf.merge_runs(p, "value", agg={"sum": ("value", "sum")}).itertuples(index=False, name=None))
    assert merge_runs(d, "value", agg={"sum": ("value", "sum")}).columns == ["chrom", "start", "end", "value", "sum"]


# Whether bioframe calls the rows overlapping: a zero-length row acts as one base.
OVERLAP_CASES = {
    "book-ended": ([(0, 5), (5, 9)], False),
    "point at an end": ([(0, 5), (5, 5)], False),
    "point at a start": ([(5, 5), (5, 9)], True),
    "point inside": ([(0, 9), (4, 4)], True),
    "two points at one place": ([(4, 4), (4, 4)], True),
    "points apart": ([(4, 4), (5, 5)], False),
    "nested": ([(0, 9), (2, 3), (10, 12)], True),
    "under the running end": ([(0, 10), (2, 4), (6, 8)], True),
}


@pytest.mark.parametrize("case", OVERLAP_CASES)
def test_overlapping_rows_fail_as_bioframe_raises(spark, case):
    spans, overlapping = OVERLAP_CASES[case]
    rows = [("c", s, e, f"n{i}", "+") for i, (s, e) in enumerate(spans)] + [("other", 0, 1, "m", "+")]
    p = sorted_pdf(rows)
    try:
        bf.mark_runs(p, "strand")
        raised = False
    except ValueError:
        raised = True
    assert raised == overlapping, "the table of cases disagrees with bioframe"
    d = frame(spark, shuffled(rows))
    for fn in (mark_runs, merge_runs):
        if overlapping:
            with pytest.raises(Exception, match=rf"{fn.__name__}: not a proper bedGraph: interval c:\d+-\d+ overlaps"):
                fn(d, "strand").collect()
        else:
            assert fn(d, "strand").count() == len(bf.mark_runs(p, "strand") if fn is mark_runs
                                                  else bf.merge_runs(p, "strand"))
        assert fn(d, "strand", allow_overlaps=True).count() > 0


# -- pair_by_distance -------------------------------------------------------------

# The left probe is empty (z = 1 in pairs.separation_range) for (0, 1), (1, 3), (2, 3).
SEPS = [(0, 1), (1, 3), (2, 3), (0, 2), (3, 10), (2, 7)]


@SETTINGS
@given(cases=SINGLES)
def test_pair_by_distance_matches_bioframe(spark, cases):
    rows = batch(cases, [("chr1", 0, 5, "+"), ("chr1", 0, 5, "-"), ("chr1", 5, 5, "+"), ("chr1", 5, 10, "+"),
                         ("chr1", 2, 2, "."), ("chr1", 8, 30, "."), ("chr2", 3, 3, "+")], "a")
    p, d = sorted_pdf(rows), frame(spark, shuffled(rows, 3))
    runs = {f"{lo}-{hi} {rel}": {"min_sep": lo, "max_sep": hi, "relative_to": rel}
            for lo, hi in SEPS for rel in ("midpoints", "endpoints")}
    runs["intervening 1-2"] = {"min_sep": 0, "max_sep": 12, "min_intervening": 1, "max_intervening": 2}
    runs["intervening 0-0 endpoints"] = {"min_sep": 0, "max_sep": 9, "max_intervening": 0, "relative_to": "endpoints"}
    runs["intervening from 2"] = {"min_sep": 1, "max_sep": 15, "min_intervening": 2, "max_intervening": 100}
    runs["binned"] = {"min_sep": 2, "max_sep": 9, "strategy": "binned", "bin_size": 3}
    runs["sweep"] = {"min_sep": 0, "max_sep": 6, "relative_to": "endpoints", "strategy": "sweep", "tile_size": 4}
    got = labelled({k: pair_by_distance(d, **kw) for k, kw in runs.items()})
    total = 0
    for k, kw in runs.items():
        kw = {a: v for a, v in kw.items() if a not in ("strategy", "bin_size", "tile_size")}
        want = bf.pair_by_distance(p, **kw)
        assert_bags(got[k], bag_of(want), f"pair_by_distance {k}")
        total += len(want)
    assert total > 0

    idx = {"index": {"min_sep": 1, "max_sep": 8, "return_index": True, "suffixes": ("", "_")},
           "named": {"min_sep": 0, "max_sep": 1, "return_index": "i", "suffixes": ("_a", "_b"),
                     "max_intervening": 1, "relative_to": "endpoints"}}
    got = labelled({k: pair_by_distance(d, **kw) for k, kw in idx.items()})
    for k, kw in idx.items():
        want = bf.pair_by_distance(p, **kw)
        assert pair_by_distance(d, **kw).columns == list(want.columns)
        assert_bags(got[k], bag_of(want), f"pair_by_distance {k}")
        assert len(want) > 0

    kw = {"min_sep": 2, "max_sep": 11, "keep_order": True, "return_index": True}
    got = [tuple(r) for r in pair_by_distance(d, **kw).collect()]
    want = bf.pair_by_distance(p, **kw)
    # Sorted by (index_1, index_2), which no two pairs share: bioframe's exact order.
    assert got == list(want.itertuples(index=False, name=None)) and len(got) > 1
    kw["return_index"] = False
    got = [tuple(r) for r in pair_by_distance(d, **kw).collect()]
    assert got == list(want.drop(columns=["index_1", "index_2"]).itertuples(index=False, name=None))


def test_pair_by_distance_unusual_names_and_the_planner(spark, monkeypatch):
    from giql_spark import runtime

    seen = []
    real = runtime.build

    def spy(node, left, right, choice, **kw):
        seen.append(choice.strategy)
        return real(node, left, right, choice, **kw)

    monkeypatch.setattr(runtime, "build", spy)
    rows = [("c", 0, 4, "a", "+"), ("c", 6, 8, "b", "+"), ("c", 10, 10, "x", "-"), ("c", 12, 20, "y", "-"),
            ("d", 1, 2, "z", "+"), ("d", 5, 9, "w", "+")]
    names = {"chrom": "chr om", "start": "st.art", "end": "e`nd"}
    d = frame(spark, shuffled(rows)).withColumnsRenamed(names)
    cols = tuple(names.values())
    out = pair_by_distance(d, 0, 10, cols=cols, suffixes=(".1", " 2"), return_index=True, strategy="binned",
                           bin_size=2)
    # bioframe's pair_by_distance does not pass cols= on to its overlap: the
    # oracle runs on the default names.
    want = bf.pair_by_distance(sorted_pdf(rows), 0, 10, suffixes=(".1", " 2"), return_index=True)
    assert out.columns == [f"{n}{s}" for s in (".1", " 2") for n in ["index", *cols, "name", "strand"]]
    assert_bags(bag(out.collect()), bag_of(want), "pair_by_distance cols=")
    assert len(want) >= 4 and seen == ["binned"]
    pair_by_distance(d, 0, 10, cols=cols)
    assert len(seen) == 2  # the planner chose again, for the unforced join


def test_null_rows_are_left_out(spark):
    rows = [("c", 0, 5, "a", None), ("c", 5, 9, "b", None), (None, 1, 2, "n", "+"), ("c", None, None, "m", "+"),
            ("c", 12, 14, "d", "+")]
    d = spark.createDataFrame(rows, "chrom string, start bigint, `end` bigint, name string, strand string")
    assert sorted(r["name"] for r in mark_runs(d, "strand").collect()) == ["a", "b", "d"]
    assert sorted((r["start"], r["end"]) for r in merge_runs(d, "strand").collect()) == [(0, 9), (12, 14)]
    pairs = pair_by_distance(d, 0, 12, max_intervening=0).select("name_1", "name_2").collect()
    assert sorted(map(tuple, pairs)) == [("a", "b"), ("b", "d")]


def test_bad_arguments_fail_at_once_with_one_line(spark):
    d = spark.createDataFrame([("chr1", 1, 2, "x", "+")], "chrom string, start bigint, `end` bigint, name string, "
                                                          "strand string")
    with pytest.raises(UnknownColumnError, match=r"^mark_runs: df has no column 'value'"):
        mark_runs(d, "value")
    with pytest.raises(UnknownColumnError, match=r"^merge_runs: agg\['n'\] names column 'nope'"):
        merge_runs(d, "strand", agg={"n": ("nope", "sum")})
    with pytest.raises(GiqlSparkError, match=r"^merge_runs: agg\['n'\] uses aggregation 'prod'; supported: sum"):
        merge_runs(d, "strand", agg={"n": ("name", "prod")})
    with pytest.raises(GiqlSparkError, match=r"^merge_runs: agg\['n'\] must be \(column, aggregation\)"):
        merge_runs(d, "strand", agg={"n": ("name", "sum", 1)})
    with pytest.raises(UnknownColumnError, match=r"^merge_runs: df has no column 'begin'"):
        merge_runs(d, "strand", cols=("chrom", "begin", "end"))
    for kw, msg in [({"min_sep": 5, "max_sep": 5}, "min_sep must be less than max_sep"),
                    ({"min_sep": -1, "max_sep": 5}, "min_sep must be >= 0"),
                    ({"min_sep": 0, "max_sep": 5, "min_intervening": 3, "max_intervening": 2},
                     "min_intervening must be less or equal to max_intervening"),
                    ({"min_sep": 0, "max_sep": 5, "min_intervening": -1}, "min_intervening must be >= 0"),
                    ({"min_sep": 0, "max_sep": 5, "relative_to": "starts"}, "relative_to must be"),
                    ({"min_sep": 0.5, "max_sep": 5}, "min_sep must be an integer"),
                    ({"min_sep": 0, "max_sep": 5, "suffixes": ("", "")}, "two output columns would be named"),
                    ({"min_sep": 0, "max_sep": 5, "return_index": 1}, "return_index must be")]:
        with pytest.raises(GiqlSparkError, match=rf"^pair_by_distance: {msg}"):
            pair_by_distance(d, **kw)
        # bioframe refuses the same arguments (its suffixes and return_index take more).
        if "suffixes" not in kw and "return_index" not in kw and kw["min_sep"] != 0.5:
            with pytest.raises(ValueError):
                bf.pair_by_distance(pd.DataFrame({"chrom": ["c"], "start": [1], "end": [2]}), **kw)


def test_bad_coordinates_fail_the_job_with_one_line(spark):
    backwards = spark.createDataFrame([("chr1", 1, 2, "+"), ("chr1", 9, 4, "+")],
                                      "chrom string, start bigint, `end` bigint, strand string")
    for fn, args in ((mark_runs, ("strand",)), (merge_runs, ("strand",)), (pair_by_distance, (0, 5))):
        with pytest.raises(Exception, match=rf"{fn.__name__}: df has an invalid interval chr1:9-4"):
            fn(backwards, *args).collect()
