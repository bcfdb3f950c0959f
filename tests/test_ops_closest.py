"""closest with bioframe's options and its one-table form, against bioframe 0.8.

Cases are batched on their own chromosomes as in ``test_ops_bioframe``. When
rows tie at the k-th place bioframe takes the lowest df2 index, which Spark
has not, so each df1 row's picks are compared as the sorted list of their
(rank, tie value, distance): rank is bioframe's order key (0 for an overlap,
else gap + 1), and every pick must be a candidate bioframe lists.
"""

from __future__ import annotations

from collections import defaultdict

import bioframe as bf
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import giql_spark as gs
from giql_spark.errors import GiqlSparkError

from test_ops_bioframe import FIXED_1, FIXED_2, PAIRS, SINGLES, SETTINGS, batch, labelled, pdf


def with_score(rows):
    """``rows`` with a ``score`` column (a tie breaker with repeats and NULLs)."""
    return [r + (None if i % 5 == 3 else (i * 7) % 4,) for i, r in enumerate(rows)]


SCHEMA = "chrom string, start bigint, `end` bigint, name string, strand string, score bigint"


def frame(spark, rows):
    return spark.createDataFrame(rows, SCHEMA)


def scored_pdf(rows):
    p = pdf([r[:5] for r in rows])
    p["score"] = pd.array([r[5] for r in rows], dtype="Float64").astype(float)
    return p


def oracle(p1, p2, k, opts, one_table=False):
    """Per df1 name: the sorted (rank, tie, distance) of its k best candidates, and
    every candidate pair's (rank, tie, distance). bioframe with k = every row lists
    each allowed candidate (some twice next to zero-length rows: kept once, best rank).
    bioframe 0.8's own ``tie_breaking_col`` fails (its tie array is per df2 row, the
    keys it sorts per candidate), so the tie value is looked up here and ranked as
    bioframe documents it: lower first."""
    tie = opts.get("tie_breaking_col")
    ties = dict(zip(p2["name"], p2[tie])) if tie else {}
    cands = {}
    if len(p1) and len(p2):
        kw = {key: v for key, v in opts.items() if key != "tie_breaking_col"}
        # The one-table form as two tables, self pairs dropped: bioframe's own
        # (df2=None) fails with ignore_overlaps, and can pair a zero-length row with itself.
        every = bf.closest(p1, p2.copy() if one_table else p2, k=len(p2) + 2, suffixes=("", "_"), **kw)
        every = every[every["name_"].notna()]
        if one_table:
            every = every[every["name"] != every["name_"]]
        ov = set(map(tuple, bf.overlap(p1, p2, how="inner")[["name", "name_"]].values))
        for r in every.itertuples(index=False):
            r = r._asdict()
            pair = (r["name"], r["name_"])
            dist = int(r["distance"])
            rank = 0 if (pair in ov and not opts.get("ignore_overlaps")) else dist + 1
            t = ties[r["name_"]] if tie else None
            t = None if t is None or (isinstance(t, float) and np.isnan(t)) else int(t)
            key = (rank, float("inf") if t is None else t, dist)
            cands[pair] = min(cands.get(pair, key), key)
    per = defaultdict(list)
    for (n1, _), key in cands.items():
        per[n1].append(key)
    want = {n1: (sorted(per[n1])[:k] or [None]) for n1 in p1["name"]}
    return want, cands


def picks(rows, cands, k, tie):
    got = defaultdict(list)
    for r in rows:
        n1, n2, dist = r["name"], r["name_"], r["distance"]
        if n2 is None:
            assert dist is None
            got[n1].append(None)
            continue
        assert (n1, n2) in cands, f"{n1} paired with {n2}, not a candidate bioframe lists"
        rank, t, want_dist = cands[(n1, n2)]
        assert dist == want_dist, f"distance {n1}-{n2}: {dist}, bioframe {want_dist}"
        got[n1].append((rank, t, dist))
    for n1, p in got.items():
        assert len(p) <= k, f"{n1}: {len(p)} rows for k={k}"
        assert len(set(map(str, [r for r in rows if r["name"] == n1 and r["name_"]]))) == len(
            [r for r in rows if r["name"] == n1 and r["name_"]]), f"{n1}: a row returned twice"
        got[n1] = sorted(p, key=lambda x: (x is None, x))
    return dict(got)


RUNS = {
    "default k=2": (2, {}),
    "ignore_overlaps": (1, {"ignore_overlaps": True}),
    "ignore_upstream k=2": (2, {"ignore_upstream": True}),
    "ignore_downstream": (1, {"ignore_downstream": True}),
    "upstream only, by strand": (2, {"ignore_downstream": True, "direction_col": "strand"}),
    "downstream, no overlaps, by strand": (1, {"ignore_upstream": True, "ignore_overlaps": True,
                                               "direction_col": "strand"}),
    "tie by score k=2": (2, {"tie_breaking_col": "score"}),
}


@SETTINGS
@given(pairs=PAIRS)
def test_closest_options_match_bioframe(spark, pairs):
    r1 = with_score(batch([p[0] for p in pairs], FIXED_1, "a"))
    r2 = with_score(batch([p[1] for p in pairs], FIXED_2, "b"))
    d1, d2 = frame(spark, r1), frame(spark, r2)
    p1, p2 = scored_pdf(r1), scored_pdf(r2)
    parts = {name: gs.closest(d1, d2, k=k, **opts).select("name", "name_", "distance")
             for name, (k, opts) in RUNS.items()}
    found = labelled(parts)
    for name, (k, opts) in RUNS.items():
        rows = [dict(zip(("name", "name_", "distance"), v)) for v in found[name].elements()]
        want, cands = oracle(p1, p2, k, opts)
        got = picks(rows, cands, k, opts.get("tie_breaking_col"))
        assert got == want, name
    # the options restrict: somewhere a default pick is ignored by them
    assert found["default k=2"] != found["ignore_overlaps"]


@SETTINGS
@given(cases=SINGLES)
def test_closest_within_one_table_matches_bioframe(spark, cases):
    rows = with_score(batch(cases, FIXED_1, "a"))
    d, p = frame(spark, rows), scored_pdf(rows)
    runs = {"k=1": (1, {}), "k=3": (3, {}), "no overlaps": (2, {"ignore_overlaps": True}),
            "downstream by strand": (1, {"ignore_upstream": True, "direction_col": "strand"})}
    found = labelled({n: gs.closest(d, k=k, **o).select("name", "name_", "distance") for n, (k, o) in runs.items()})
    for name, (k, opts) in runs.items():
        got_rows = [dict(zip(("name", "name_", "distance"), v)) for v in found[name].elements()]
        assert all(r["name"] != r["name_"] for r in got_rows), f"{name}: a row is its own closest"
        want, cands = oracle(p, p, k, opts, one_table=True)
        assert picks(got_rows, cands, k, None) == want, name


def test_closest_returns_bioframes_columns(spark):
    rows1 = [("chr1", 10, 20, "q", "+", 1), ("chr1", 50, 50, "z", "-", 2), ("chr2", 1, 2, "lone", "+", 3)]
    rows2 = [("chr1", 15, 30, "ov", "+", 1), ("chr1", 0, 5, "up", "+", 1), ("chr1", 60, 70, "down", "-", 1)]
    d1, d2 = frame(spark, rows1), frame(spark, rows2)
    p1, p2 = scored_pdf(rows1), scored_pdf(rows2)
    for kw in ({"return_overlap": True}, {"return_input": False, "return_overlap": True},
               {"ignore_overlaps": True, "return_overlap": True, "return_distance": False}):
        got = gs.closest(d1, d2, **kw)
        want = bf.closest(p1, p2, **kw)
        assert got.columns == list(want.columns), kw
        norm = lambda v: None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else (
            bool(v) if isinstance(v, (bool, np.bool_)) else int(v) if isinstance(v, (np.integer, float)) else v)
        got_rows = sorted((tuple(norm(v) for v in r) for r in got.collect()), key=str)
        want_rows = sorted((tuple(norm(v) for v in r) for r in want.itertuples(index=False)), key=str)
        assert got_rows == want_rows, kw


def test_closest_refusals(spark):
    d = frame(spark, [("chr1", 1, 2, "x", "+", 1)])
    with pytest.raises(GiqlSparkError, match=r"closest: return_index: a Spark DataFrame has no index"):
        gs.closest(d, d.select("*"), return_index=True)
    with pytest.raises(GiqlSparkError, match=r"pass df2=None"):
        gs.closest(d, d)
    with pytest.raises(GiqlSparkError, match=r"df2 has no column 'rank'"):
        gs.closest(d, d.select("*"), tie_breaking_col="rank")


def test_suffixes_may_repeat_names_as_in_bioframe(spark):
    rows1, rows2 = [("chr1", 1, 5, "a", "+", 1)], [("chr1", 3, 9, "b", "-", 2)]
    d1, d2 = frame(spark, rows1), frame(spark, rows2)
    p1, p2 = scored_pdf(rows1), scored_pdf(rows2)
    # how="inner": bioframe's left join sorts by its index columns, which ("", "") names alike.
    for got, want in ((gs.overlap(d1, d2, how="inner", suffixes=("", "")),
                       bf.overlap(p1, p2, how="inner", suffixes=("", ""))),
                      (gs.closest(d1, d2, suffixes=("", "")), bf.closest(p1, p2, suffixes=("", "")))):
        assert got.columns == list(want.columns)
        assert [tuple(r) for r in got.collect()] == [
            tuple(None if pd.isna(v) else (int(v) if isinstance(v, (np.integer, float)) else v) for v in r)
            for r in want.itertuples(index=False)]


@SETTINGS
@given(pairs=PAIRS)
def test_closest_through_every_strategy(spark, pairs):
    """The overlapping candidates by each strategy forced, the others by bioframe's route."""
    from test_ops_bioframe import STRATEGIES

    r1 = with_score(batch([p[0] for p in pairs], FIXED_1, "a"))
    r2 = with_score(batch([p[1] for p in pairs], FIXED_2, "b"))
    d1, d2 = frame(spark, r1), frame(spark, r2)
    p1, p2 = scored_pdf(r1), scored_pdf(r2)
    runs = {**STRATEGIES, "jvm_broadcast": {"strategy": "jvm_broadcast"}}
    found = labelled({name: gs.closest(d1, d2, k=2, **kw).select("name", "name_", "distance")
                      for name, kw in runs.items()})
    want, cands = oracle(p1, p2, 2, {})
    for name in runs:
        rows = [dict(zip(("name", "name_", "distance"), v)) for v in found[name].elements()]
        assert picks(rows, cands, 2, None) == want, name


def test_closest_with_unusual_names_and_nulls(spark):
    """Columns named as a user might (spaces, capitals), NULL chromosomes and coordinates:
    the NULL rows appear once, unpaired; the others as bioframe pairs them."""
    schema = "`Chrom Name` string, `Start Pos` bigint, `END` bigint, name string, strand string"
    rows1 = [("c1", 10, 20, "q", "+"), ("c1", 40, 40, "p", "-"), (None, 1, 2, "nc", "+"), ("c1", None, 5, "ns", "+"),
             ("c2", 5, 9, "far", "+")]
    rows2 = [("c1", 0, 8, "up", "+"), ("c1", 18, 30, "ov", "-"), ("c1", 41, 50, "down", "+"), (None, 0, 99, "nn", "+"),
             ("c2", 100, 110, "c2a", "-")]
    cols = ("Chrom Name", "Start Pos", "END")
    d1, d2 = spark.createDataFrame(rows1, schema), spark.createDataFrame(rows2, schema)
    p1 = pd.DataFrame([r for r in rows1 if None not in r[:3]], columns=list(cols) + ["name", "strand"])
    p2 = pd.DataFrame([r for r in rows2 if None not in r[:3]], columns=list(cols) + ["name", "strand"])
    for kw in ({"k": 2}, {"k": 1, "ignore_overlaps": True}, {"k": 2, "ignore_downstream": True, "direction_col": "strand"}):
        got = {(r["name"], r["name_"], r["distance"])
               for r in gs.closest(d1, d2, cols1=cols, cols2=cols, **kw).collect()}
        want = {(a, b, None if pd.isna(d) else int(d)) for a, b, d in
                bf.closest(p1, p2, cols1=cols, cols2=cols, **kw)[["name", "name_", "distance"]].itertuples(index=False)}
        want = {(a, None if pd.isna(b) else b, d) for a, b, d in want}
        assert got == want | {("nc", None, None), ("ns", None, None)}, kw
