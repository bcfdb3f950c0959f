"""The DataFrame operations against bioframe 0.8 on the same data.

Spark jobs are slow to start, so each hypothesis example is a *batch* of
independent cases: case ``i`` lives on its own chromosomes (``"03|chr1"``),
and since every operation works per chromosome, one Spark run and one
bioframe run over the concatenated tables check all cases at once. Every
batch also holds a fixed case with book-ended, identical, nested and
zero-length intervals. Results are compared as row multisets.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from unittest import mock

import bioframe as bf
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

import giql_spark as gs
from giql_spark.errors import GiqlSparkError, UnknownColumnError

from conftest import needs_classic

COLS = ["chrom", "start", "end", "name", "strand"]
SCHEMA = "chrom string, start bigint, `end` bigint, name string, strand string"
CASES = 20  # cases per batch: one batch is one Spark run per operation
# No shrinking: each example is a whole Spark run, and a failure message
# already names the cases that differ.
# Two examples: hypothesis tries the simplest one first (every case empty, so only the
# fixed case is checked); the second is drawn at random.
SETTINGS = settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck),
                    phases=[Phase.explicit, Phase.reuse, Phase.generate])

# (chrom, start, end, strand): book-ended, identical, nested and zero-length rows.
FIXED_1 = [("chr1", 0, 5, "+"), ("chr1", 5, 10, "+"), ("chr1", 5, 10, "-"), ("chr1", 2, 2, "+"),
           ("chr1", 5, 5, "-"), ("chr1", 20, 30, "+"), ("chr1", 22, 25, "-"), ("chr2", 3, 3, "+"),
           ("chr3", 1, 4, "+")]
FIXED_2 = [("chr1", 5, 5, "+"), ("chr1", 0, 5, "-"), ("chr1", 10, 12, "+"), ("chr1", 10, 12, "+"),
           ("chr1", 24, 24, "-"), ("chr1", 21, 29, "+"), ("chr2", 3, 3, "+"), ("chr2", 9, 14, "-")]


@st.composite
def intervals(draw, max_rows=7):
    """A small table where book-ended, identical, nested and zero-length rows are common."""
    rows = []
    for _ in range(draw(st.integers(0, max_rows))):
        chrom = draw(st.sampled_from(["chr1", "chr1", "chr2"]))
        start = draw(st.integers(0, 25))
        width = draw(st.sampled_from([0, 0, 1, 2, 3, 5, 8, 13]))
        strand = draw(st.sampled_from(["+", "-", "."]))
        rows.append((chrom, start, start + width, strand))
        if rows and draw(st.integers(0, 3)) == 0:
            c, s, e, t = rows[-1]
            kind = draw(st.sampled_from(["same", "abut", "nested", "point_start", "point_end"]))
            rows.append({
                "same": (c, s, e, t),
                "abut": (c, e, e + draw(st.integers(0, 4)), t),
                "nested": (c, s + (e - s) // 3, max(s + (e - s) // 3, e - 1), t),
                "point_start": (c, s, s, t),
                "point_end": (c, e, e, t),
            }[kind])
    return rows


def batch(per_case: list[list[tuple]], fixed: list[tuple], prefix: str) -> list[tuple]:
    """All cases' rows on their own chromosomes, named uniquely, plus the fixed case."""
    out = []
    for i, rows in enumerate([fixed] + per_case):
        for j, (c, s, e, t) in enumerate(rows):
            out.append((f"{i:02d}|{c}", s, e, f"{prefix}{i}_{j}", t))
    return out


PAIRS = st.lists(st.tuples(intervals(), intervals()), min_size=CASES, max_size=CASES)
SINGLES = st.lists(intervals(10), min_size=CASES, max_size=CASES)


def frame(spark, rows):
    """A Spark table of ``rows`` that Spark can size, as a table read from disk would be.

    Rows from Python have no size estimate, which sends every join to the
    binned strategy; inline rows are known to be tiny, so the planner picks
    plain SQL as it does for small tables. The strategies are forced
    explicitly where they are under test.
    """
    if not rows:
        return spark.createDataFrame([], SCHEMA)
    def lit(v):
        return "NULL" if v is None else (f"'{v}'" if isinstance(v, str) else str(int(v)))
    values = ", ".join("(" + ", ".join(lit(v) for v in r) + ")" for r in rows)
    return spark.sql(
        f"SELECT chrom, CAST(start AS BIGINT) AS start, CAST(`end` AS BIGINT) AS `end`, name, strand "
        f"FROM VALUES {values} AS t(chrom, start, `end`, name, strand)"
    )


def tables(spark, pairs):
    r1 = batch([p[0] for p in pairs], FIXED_1, "a")
    r2 = batch([p[1] for p in pairs], FIXED_2, "b")
    return r1, r2, frame(spark, r1), frame(spark, r2)


def pdf(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=COLS)
    return df.astype({"chrom": object, "start": np.int64, "end": np.int64, "name": object, "strand": object})


def _plain(v):
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    return v


def bag(records) -> Counter:
    return Counter(tuple(_plain(v) for v in r) for r in records)


def bag_of(frame: pd.DataFrame, columns=None) -> Counter:
    frame = frame if columns is None else frame[columns]
    return bag(frame.itertuples(index=False, name=None))


def labelled(parts: dict) -> dict[str, Counter]:
    """Collect several same-schema results in one Spark job; split them by label."""
    union = None
    for label, df in parts.items():
        # Positional names, so results whose columns are named differently line up.
        df = df.toDF(*[f"c{i}" for i in range(len(df.columns))]).withColumn("__label", F.lit(label))
        union = df if union is None else union.unionByName(df)
    out: dict[str, Counter] = {label: Counter() for label in parts}
    for row in union.collect():
        values = list(row)
        out[values[-1]][tuple(values[:-1])] += 1
    return out


def assert_bags(got: Counter, want: Counter, what: str) -> None:
    assert got == want, f"{what}\nspark only: {got - want}\nbioframe only: {want - got}"


# -- overlap ----------------------------------------------------------------

PAIR_HOWS = ["inner", "left", "right", "outer"]


@SETTINGS
@given(pairs=PAIRS)
def test_overlap_every_how_matches_bioframe(spark, pairs):
    r1, r2, d1, d2 = tables(spark, pairs)
    p1, p2 = pdf(r1), pdf(r2)
    parts = {h: gs.overlap(d1, d2, how=h, return_overlap=True) for h in PAIR_HOWS}
    parts["left-on-strand"] = gs.overlap(d1, d2, how="left", return_overlap=True, on=["strand"])
    got = labelled(parts)
    for how in PAIR_HOWS:
        want = bag_of(bf.overlap(p1, p2, how=how, return_overlap=True))
        assert_bags(got[how], want, f"how={how}")
    assert sum(got["inner"].values()) > 0
    want = bag_of(bf.overlap(p1, p2, how="left", return_overlap=True, on=["strand"]))
    assert_bags(got["left-on-strand"], want, "how=left, on=strand")

    got = labelled({h: gs.overlap(d1, d2, how=h) for h in ("semi", "anti")})
    paired = set(bf.overlap(p1, p2, how="inner")["name"])
    assert_bags(got["semi"], bag_of(p1[p1["name"].isin(paired)]), "how=semi")
    assert_bags(got["anti"], bag_of(bf.setdiff(p1, p2)), "how=anti")


STRATEGIES = {
    "naive": {"strategy": "naive"},
    "broadcast": {"strategy": "broadcast"},
    "binned-1": {"strategy": "binned", "bin_size": 1},
    "binned-7": {"strategy": "binned", "bin_size": 7},
    "sweep-4": {"strategy": "sweep", "tile_size": 4},
}


@SETTINGS
@given(pairs=PAIRS)
def test_overlap_and_count_through_every_strategy(spark, pairs):
    r1, r2, d1, d2 = tables(spark, pairs)
    p1, p2 = pdf(r1), pdf(r2)
    outer = bag_of(bf.overlap(p1, p2, how="outer"))
    got = labelled({name: gs.overlap(d1, d2, how="outer", **kw) for name, kw in STRATEGIES.items()})
    for name in STRATEGIES:
        assert_bags(got[name], outer, f"outer join, {name}")

    # Anti joins take their own path in the binned join and in the finishing
    # step the broadcast and sweep joins share.
    anti = bag_of(bf.setdiff(p1, p2))
    got = labelled({name: gs.overlap(d1, d2, how="anti", **STRATEGIES[name]) for name in ("binned-1", "broadcast")})
    for name in got:
        assert_bags(got[name], anti, f"anti join, {name}")

    counts = bag_of(bf.count_overlaps(p1.copy(), p2))
    # With a strategy, counting is that strategy's left join (tested above) plus an aggregate.
    parts = {
        "kernel": gs.count_overlaps(d1, d2),
        "binned-7": gs.count_overlaps(d1, d2, **STRATEGIES["binned-7"]),
        "kernel-on-strand": gs.count_overlaps(d1, d2, on=["strand"]),
        "sweep-on-strand": gs.count_overlaps(d1, d2, on=["strand"], **STRATEGIES["sweep-4"]),
    }
    got = labelled(parts)
    for name in parts:
        want = bag_of(bf.count_overlaps(p1.copy(), p2, on=["strand"])) if "strand" in name else counts
        assert_bags(got[name], want, f"count_overlaps, {name}")
    assert any(r[-1] > 1 for r in counts), "the fixed case has rows counted twice"


# -- coverage, subtract, complement ------------------------------------------


@SETTINGS
@given(pairs=PAIRS)
def test_coverage_and_subtract_match_bioframe(spark, pairs):
    r1, r2, d1, d2 = tables(spark, pairs)
    p1, p2 = pdf(r1), pdf(r2)
    got = labelled({
        "default": gs.coverage(d1, d2),
        "binned": gs.coverage(d1, d2, strategy="binned", bin_size=2),
    })
    want = bag_of(bf.coverage(p1.copy(), p2))
    assert_bags(got["default"], want, "coverage")
    assert_bags(got["binned"], want, "coverage, binned")
    assert any(r[-1] > 0 for r in want)

    got = labelled({
        "default": gs.subtract(d1, d2),
        "sweep": gs.subtract(d1, d2, strategy="sweep", tile_size=3),
    })
    want = bag_of(bf.subtract(p1, p2))
    assert_bags(got["default"], want, "subtract")
    assert_bags(got["sweep"], want, "subtract, sweep")


@SETTINGS
@given(cases=SINGLES, sizes=st.lists(st.integers(1, 40), min_size=CASES + 1, max_size=CASES + 1))
def test_complement_matches_bioframe(spark, cases, sizes):
    rows = batch(cases, FIXED_1, "a")
    p, d = pdf(rows), frame(spark, rows)
    chroms = sorted({r[0] for r in rows})
    # Sizes may cut intervals short; every chromosome gets a region, used or not.
    sizes_by_chrom = {c: sizes[int(c[:2])] + 3 for c in chroms}
    sizes_by_chrom["99|chrEmpty"] = 17
    # Two regions on one chromosome, named, with a hole between them.
    split = [(c, 0, sizes_by_chrom[c] // 2, f"{c}:lo") for c in chroms]
    split += [(c, sizes_by_chrom[c] // 2 + 2, sizes_by_chrom[c] + 2, f"{c}:hi") for c in chroms]
    # A Spark view without names: regions are named by chromosome, as for a dict.
    spark_view = spark.createDataFrame([(c, 0, n) for c, n in sizes_by_chrom.items()],
                                       "chrom string, start bigint, `end` bigint")
    got = labelled({
        "spark-view": gs.complement(d, view_df=spark_view),
        "regions": gs.complement(d, view_df=split, strategy="binned", bin_size=5),
        "none": gs.complement(d),
    })
    assert_bags(got["spark-view"], bag_of(bf.complement(p, view_df=sizes_by_chrom)), "complement, sizes")
    assert_bags(got["regions"], bag_of(bf.complement(p, view_df=split)), "complement, region list")
    assert_bags(got["none"], bag_of(bf.complement(p)), "complement, no view")


# -- merge, cluster, expand ---------------------------------------------------


@SETTINGS
@given(cases=SINGLES)
def test_merge_and_cluster_match_bioframe(spark, cases):
    rows = batch(cases, FIXED_1, "a")
    p, d = pdf(rows), frame(spark, rows)
    dists = {"0": 0, "None": None, "2": 2}
    got = labelled({k: gs.merge(d, min_dist=v) for k, v in dists.items()})
    for k, v in dists.items():
        assert_bags(got[k], bag_of(bf.merge(p, min_dist=v)), f"merge min_dist={k}")
    assert_bags(bag(gs.merge(d, on=["strand"]).collect()), bag_of(bf.merge(p, on=["strand"])), "merge on strand")

    got = labelled({k: gs.cluster(d, min_dist=v) for k, v in dists.items()})
    for k, v in dists.items():
        # Cluster ids are numbered as bioframe numbers them, so they compare exactly.
        assert_bags(got[k], bag_of(bf.cluster(p, min_dist=v)), f"cluster min_dist={k}")


@SETTINGS
@given(cases=SINGLES)
def test_expand_matches_bioframe(spark, cases):
    rows = batch(cases, FIXED_1, "a")
    p, d = pdf(rows), frame(spark, rows)
    runs = {f"pad={pad},{side}": {"pad": pad, "side": side} for pad in (-3, 0, 2) for side in ("both", "left", "right")}
    runs.update({f"scale={s}": {"scale": s} for s in (0, 0.5, 1, 1.5, 2.5)})
    runs["scale=0.5,right"] = {"scale": 0.5, "side": "right"}
    got = labelled({k: gs.expand(d, **kw) for k, kw in runs.items()})
    for k, kw in runs.items():
        assert_bags(got[k], bag_of(bf.expand(p, **kw)), f"expand {k}")


# -- nearest ------------------------------------------------------------------


def closest_oracle(p1, p2, k, max_distance=None):
    """Per df1 name, the sorted (rank, distance) of bioframe's k closest.

    bioframe.closest with k = len(df2) lists every candidate; it can list a
    df2 row twice next to zero-length intervals, so pairs are made unique
    first. rank is bioframe's ordering key: 0 for an overlap, else gap + 1.
    Also returns every candidate pair's (rank, distance) by names.
    """
    pairs = {}
    if len(p1) and len(p2):
        every = bf.closest(p1, p2, k=len(p2), suffixes=("", "_"))
        every = every[every["name_"].notna()]
        overlapping = set(map(tuple, bf.overlap(p1, p2, how="inner")[["name", "name_"]].values))
        for n1, n2, dist in every[["name", "name_", "distance"]].itertuples(index=False, name=None):
            pairs[(n1, n2)] = (0 if (n1, n2) in overlapping else int(dist) + 1, int(dist))
    per = defaultdict(list)
    for (n1, _), key in pairs.items():
        per[n1].append(key)
    want = {}
    for n1 in p1["name"]:
        top = sorted(per[n1])[:k]
        if max_distance is not None:
            top = [t for t in top if t[1] <= max_distance]
        want[n1] = top or [None]
    return want, pairs


def nearest_picks(rows, pairs, k):
    got = defaultdict(list)
    seen = set()
    for row in rows:
        n1, n2, dist = row["name"], row["name_"], row["distance"]
        if n2 is None:
            assert dist is None
            got[n1].append(None)
            continue
        assert (n1, n2) not in seen, f"{n2} returned twice for {n1}"
        seen.add((n1, n2))
        assert (n1, n2) in pairs, f"{n1} paired with {n2}, which is not a candidate"
        rank, want_dist = pairs[(n1, n2)]
        assert dist == want_dist, f"distance of {n1}-{n2}: {dist}, bioframe {want_dist}"
        got[n1].append((rank, dist))
    for n1, picks in got.items():
        assert len(picks) <= k, f"{n1} got {len(picks)} rows for k={k}"
        got[n1] = sorted(picks, key=lambda x: (x is None, x))
    return dict(got)


@SETTINGS
@given(pairs=PAIRS)
def test_nearest_matches_bioframe_closest(spark, pairs):
    r1, r2, d1, d2 = tables(spark, pairs)
    p1, p2 = pdf(r1), pdf(r2)
    runs = {"k=1": {"k": 1}, "k=2": {"k": 2}, "k=3,max=4": {"k": 3, "max_distance": 4}}
    runs["stranded,k=2"] = {"k": 2, "stranded": True}
    parts = {name: gs.nearest(d1, d2, **kw).select("name", "name_", "distance") for name, kw in runs.items()}
    # the same runs by the Python kernel, which a session without the JVM extension takes
    with mock.patch("giql_spark.dataframe.nearest.jvm_nearest", return_value=None):
        parts.update({f"python {name}": gs.nearest(d1, d2, **kw).select("name", "name_", "distance")
                      for name, kw in runs.items()})
    collected = {
        name: [dict(zip(("name", "name_", "distance"), values)) for values in found.elements()]
        for name, found in labelled(parts).items()
    }
    for name, kw in [*runs.items(), *((f"python {n}", kw) for n, kw in runs.items())]:
        k, md = kw["k"], kw.get("max_distance")
        if kw.get("stranded"):
            want, pairs_ = {}, {}
            for strand in ("+", "-", "."):
                w, pr = closest_oracle(p1[p1.strand == strand], p2[p2.strand == strand], k, md)
                want.update(w)
                pairs_.update(pr)
        else:
            want, pairs_ = closest_oracle(p1, p2, k, md)
        got = nearest_picks(collected[name], pairs_, k)
        assert got == want, f"nearest {name}"


def test_nearest_runs_in_the_jvm(spark):
    """With the extension, nearest is one broadcast k-nearest join: no Python worker, no window."""
    needs_classic(spark)
    d = spark.createDataFrame([("c", 5, 9, "a", "+")], SCHEMA)
    plan = gs.nearest(d, d, k=2, max_distance=3)._jdf.queryExecution().executedPlan().toString()
    assert "BroadcastIntervalJoin" in plan and "nearest 2 within gap 7" in plan, plan
    assert "Window" not in plan and "ArrowEvalPython" not in plan and "FlatMapCoGroups" not in plan, plan


@SETTINGS
@given(pairs=PAIRS)
def test_nearest_on_sorted_files_runs_on_the_merge(spark, tmp_path_factory, pairs):
    """Both tables Parquet files sorted by (chrom, start), in several row groups: the k-nearest
    join reads them range by range and indexes each chromosome's df2 rows in its task (the
    merge), and still gives bioframe's closest. Files this small are mostly priced cheaper on
    the broadcast (the merge's fixed cost), which must give the same rows; the merge is then
    forced through the chooser."""
    needs_classic(spark)
    import dataclasses

    import pyarrow as pa
    import pyarrow.parquet as pq

    from giql_spark.planner import choose

    r1, r2, _, _ = tables(spark, pairs)
    path = tmp_path_factory.mktemp("nearest")
    frames = []
    for name, rows in (("d1", r1), ("d2", r2)):
        table = pa.Table.from_pandas(pdf(sorted(rows, key=lambda r: (r[0], r[1]))), preserve_index=False)
        pq.write_table(table, path / f"{name}.parquet", row_group_size=7)
        frames.append(spark.read.parquet(str(path / f"{name}.parquet")))
    d1, d2 = frames
    p1, p2 = pdf(r1), pdf(r2)
    real = choose.choose_nearest

    def merge(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), strategy="jvm_merge")

    for kw in ({"k": 1}, {"k": 3, "max_distance": 4}):
        want, pairs_ = closest_oracle(p1, p2, kw["k"], kw.get("max_distance"))
        # as chosen (test_planner_choice pins which one: sizes decide), then the merge forced
        for forced, operators in ((False, ("BroadcastIntervalJoin", "MergeIntervalJoin")), (True, ("MergeIntervalJoin",))):
            with mock.patch.object(choose, "choose_nearest", merge if forced else real):
                df = gs.nearest(d1, d2, **kw)
                plan = df._jdf.queryExecution().executedPlan().toString()
                assert any(o in plan for o in operators) and "nearest" in plan, plan
                rows = [r.asDict() for r in df.select("name", "name_", "distance").collect()]
            assert nearest_picks(rows, pairs_, kw["k"]) == want, (kw, forced)


def test_nearest_prefers_overlap_to_book_ended_and_breaks_no_row_twice(spark):
    d1 = spark.createDataFrame([("c", 5, 5, "q", "+"), ("c", 20, 30, "r", "+")], SCHEMA)
    d2 = spark.createDataFrame([("c", 0, 5, "left", "+"), ("c", 5, 9, "at", "+"),
                                ("c", 30, 40, "abut", "+"), ("c", 10, 11, "mid", "+")], SCHEMA)
    got = {(r["name"], r["name_"], r["distance"]) for r in gs.nearest(d1, d2, k=1).collect()}
    # The point at 5 overlaps [5, 9) (bioframe) and only touches [0, 5): both are
    # at distance 0, the overlap ranks first. [20, 30) only touches [30, 40).
    assert got == {("q", "at", 0), ("r", "abut", 0)}


# -- empty tables, NULLs, errors ----------------------------------------------


def test_empty_tables(spark):
    """Whole tables empty: the paths that collect or index one side."""
    empty = spark.createDataFrame([], SCHEMA)
    one = spark.createDataFrame([("chr1", 2, 6, "x", "+")], SCHEMA)
    row = ("chr1", 2, 6, "x", "+")
    assert [tuple(r) for r in gs.count_overlaps(one, empty).collect()] == [row + (0,)]
    assert [tuple(r) for r in gs.nearest(one, empty).collect()] == [row + (None,) * 6]
    assert [tuple(r) for r in gs.complement(empty, view_df={"chr1": 9}).collect()] == [("chr1", 0, 9, "chr1")]
    got = labelled({
        "outer-broadcast": gs.overlap(empty, one, how="outer", strategy="broadcast").select("name_"),
        "subtract": gs.subtract(one, empty).select("name"),
        "cluster": gs.cluster(empty).select("name"),
    })
    assert got == {"outer-broadcast": Counter({("x",): 1}), "subtract": Counter({("x",): 1}), "cluster": Counter()}


def test_null_intervals_match_nothing(spark):
    """bioframe pairs NULL chromosomes with each other (pandas groups NaN keys
    together); here, as in SQL, a NULL chromosome or coordinate matches nothing."""
    rows = [(None, 1, 5, "nchrom", "+"), ("chr1", None, None, "ncoord", "+"), ("chr1", 2, 8, "ok", None)]
    d = spark.createDataFrame(rows, SCHEMA)
    got = labelled({
        "overlap": gs.overlap(d, d, how="left").select("name", "name_"),
        "nearest": gs.nearest(d, d).select("name", "name_"),
        "stranded": gs.nearest(d, d, stranded=True).select("name", "name_"),
        "count": gs.count_overlaps(d, d).select("name", F.col("count").cast("string")),
        "cluster": gs.cluster(d).select("name", F.col("cluster").cast("string")),
        "merge": gs.merge(d).select("chrom", F.col("n_intervals").cast("string")),
    })
    assert got["overlap"] == got["nearest"] == Counter({("nchrom", None): 1, ("ncoord", None): 1, ("ok", "ok"): 1})
    # A NULL strand pairs with nothing either.
    assert got["stranded"] == Counter({("nchrom", None): 1, ("ncoord", None): 1, ("ok", None): 1})
    assert got["count"] == Counter({("nchrom", "0"): 1, ("ncoord", "0"): 1, ("ok", "1"): 1})
    assert got["cluster"] == Counter({("nchrom", None): 1, ("ncoord", None): 1, ("ok", "0"): 1})
    assert got["merge"] == Counter({("chr1", "1"): 1})


def test_missing_and_mistyped_columns_fail_at_once(spark):
    d = spark.createDataFrame([("chr1", 1, 2, "x", "+")], SCHEMA)
    other = d.withColumnRenamed("start", "begin")
    with pytest.raises(UnknownColumnError, match=r"overlap: df2 has no column 'start'"):
        gs.overlap(d, other)
    with pytest.raises(UnknownColumnError, match=r"nearest: df1 has no column 'begin'"):
        gs.nearest(d, d, cols1=("chrom", "begin", "end"))
    with pytest.raises(UnknownColumnError, match=r"nearest: df2 has no column 'orientation'"):
        gs.nearest(d, d, stranded=True, strand_col=("strand", "orientation"))
    with pytest.raises(GiqlSparkError, match=r"merge: df column 'start' .* integer type, got string"):
        gs.merge(d.withColumn("start", F.col("start").cast("string")))
    with pytest.raises(GiqlSparkError, match=r"chromosomes and must be a string"):
        gs.cluster(d.withColumn("chrom", F.lit(1)))
    with pytest.raises(GiqlSparkError, match=r"how must be one of"):
        gs.overlap(d, d, how="full")
    with pytest.raises(GiqlSparkError, match=r"min_dist"):
        gs.merge(d, min_dist=-1)
    with pytest.raises(GiqlSparkError, match=r"k must be"):
        gs.nearest(d, d, k=0)
    with pytest.raises(GiqlSparkError, match=r"only one of pad or scale"):
        gs.expand(d, pad=1, scale=2)
    with pytest.raises(GiqlSparkError, match=r"region names \(column 'name'\) must be unique"):
        gs.complement(d, view_df=[("chr1", 0, 5, "a"), ("chr1", 6, 9, "a")])
    with pytest.raises(ValueError, match=r"unknown join strategy 'nope'"):
        gs.overlap(d, d, strategy="nope")


def test_expand_takes_starts_an_earlier_expand_moved_below_zero(spark):
    """``slop`` of a slopped interval: bioframe expands chr1:-10-60 again; so does expand."""
    import pandas as pd

    rows = [("chr1", -10, 60, "a", "+"), ("chr1", 5, 9, "b", "-")]
    d = spark.createDataFrame(rows, SCHEMA)
    p = pd.DataFrame(rows, columns=["chrom", "start", "end", "name", "strand"])
    for kw in ({"pad": 5}, {"pad": -3}, {"scale": 2.0}, {"pad": 20, "side": "left"}):
        assert_bags(bag(tuple(r) for r in gs.expand(d, **kw).collect()), bag_of(bf.expand(p, **kw)), f"expand {kw}")
    twice = gs.expand(gs.expand(d, pad=30), pad=30)
    assert sorted(tuple(r)[:3] for r in twice.collect()) == [("chr1", -70, 120), ("chr1", -55, 69)]
    backwards = spark.createDataFrame([("chr1", 9, 4, "y", "+")], SCHEMA)
    with pytest.raises(Exception, match=r"expand: df has an invalid interval chr1:9-4 \(need -2\^60 < start"):
        gs.expand(backwards, pad=1).collect()


def test_bad_coordinates_fail_the_job_with_one_line(spark):
    backwards = spark.createDataFrame([("chr1", 1, 2, "x", "+"), ("chr1", 9, 4, "y", "+")], SCHEMA)
    negative = spark.createDataFrame([("chr1", -3, 2, "x", "+")], SCHEMA)
    fine = spark.createDataFrame([("chr1", 1, 5, "z", "+")], SCHEMA)
    with pytest.raises(Exception, match=r"overlap: df2 has an invalid interval chr1:9-4"):
        gs.overlap(fine, backwards, how="inner").collect()
    with pytest.raises(Exception, match=r"merge: df has an invalid interval chr1:-3-2"):
        gs.merge(negative).collect()


def test_join_ops_use_the_planner_choice(spark, monkeypatch):
    from giql_spark import runtime

    seen = []
    real = runtime.build

    def spy(node, left, right, choice, **kw):
        seen.append((choice.strategy, choice.params))
        return real(node, left, right, choice, **kw)

    monkeypatch.setattr(runtime, "build", spy)
    # Both are tiny once their statistics are read: a range by Spark's estimate, rows
    # from Python by the sample that reads them all. Forced strategies win.
    sized = spark.range(3).selectExpr("'chr1' AS chrom", "id AS start", "id + 2 AS `end`")
    unsized = spark.createDataFrame([("chr1", 1, 5, "z", "+")], SCHEMA)
    gs.overlap(sized, sized)
    gs.overlap(unsized, unsized)
    gs.coverage(unsized, unsized, strategy="binned", bin_size=7)
    gs.subtract(unsized, unsized, strategy="sweep")
    assert seen == [
        ("naive", {}),
        ("naive", {}),
        ("binned", {"bin_size": 7}),
        ("sweep", {"tile_size": 2_000_000}),
    ]


@SETTINGS
@given(pairs=PAIRS)
def test_every_joining_operation_through_every_strategy(spark, pairs):
    """coverage, subtract, complement and count_overlaps with each strategy forced (the JVM broadcast too)."""
    r1, r2, d1, d2 = tables(spark, pairs)
    p1, p2 = pdf(r1), pdf(r2)
    forced = {**STRATEGIES, "jvm_broadcast": {"strategy": "jvm_broadcast"}}
    sizes = {c: 60 for c in {r[0] for r in r1}}
    ops = {
        "coverage": (lambda kw: gs.coverage(d1, d2, **kw), bf.coverage(p1.copy(), p2)),
        "subtract": (lambda kw: gs.subtract(d1, d2, **kw), bf.subtract(p1, p2)),
        "complement": (lambda kw: gs.complement(d1, view_df=sizes, **kw), bf.complement(p1, view_df=sizes)),
        "count_overlaps": (lambda kw: gs.count_overlaps(d1, d2, **kw), bf.count_overlaps(p1.copy(), p2)),
    }
    for op, (run, want) in ops.items():
        got = labelled({name: run(kw) for name, kw in forced.items()})
        for name in forced:
            assert_bags(got[name], bag_of(want), f"{op}, {name}")
    assert any(r[-1] > 0 for r in bag_of(ops["coverage"][1]))
