"""trim, sort_bedframe, assign_view, binnify and make_chromarms against bioframe 0.8.

As in test_ops_bioframe.py, one hypothesis example is a batch of cases, each
on its own chromosomes ("03|chr1"), checked in one Spark run. Several
results are gathered in one job as JSON rows (``gather``); sort_bedframe's
results are collected one by one, since their row order is what is tested.

assign_view picks, among regions an interval overlaps equally, the one that
starts first; bioframe's pick among such ties follows its internal row
order. The oracle (``oracle_pick``) is bioframe's overlap plus that rule, and
is itself checked against bioframe's assign_view on every row: the same
region where the largest overlap is unique, one as large where it is not.
trim and sort_bedframe are then compared with bioframe given those picks as
``df_view_col``, and, with no view or a dict view where ties cannot occur,
with bioframe as it is.
"""

from __future__ import annotations

import json
from collections import Counter
from unittest import mock

import bioframe as bf
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from giql_spark.dataframe.bins import BLOCK, binnify, make_chromarms
from giql_spark.dataframe.expand import expand
from giql_spark.dataframe.views import assign_view, sort_bedframe, trim
from giql_spark.errors import GiqlSparkError, UnknownColumnError

from test_ops_bioframe import (
    CASES,
    FIXED_1,
    SETTINGS,
    SINGLES,
    _plain,
    assert_bags,
    bag_of,
    batch,
    frame,
)

INT64_MAX = 2**63 - 1
# Two examples: hypothesis tries the simplest one first (empty cases, zero
# sizes: the fixed rows only), the second is random.
SETTINGS = settings(SETTINGS, max_examples=2)
ODD = ["Chromosome", "Start End", "stop", "name", "strand"]  # unusual column names
# Rows with NULLs: a whole NULL interval, and a good interval with a NULL strand.
NULL_ROWS = [(None, None, None, "null_interval", "+"), ("00|chr1", 3, 6, "null_strand", None)]
# Intervals overlapping two regions of the split view ([0, 10) and [10, 20)) equally.
TIE_ROWS = [("98|tie", 5, 15, "tie_1", "+"), ("98|tie", 8, 12, "tie_2", "-"), ("98|tie", 9, 10, "tie_3", "+"),
            ("98|tie", 10, 10, "tie_4", "+")]


def pdf(rows, columns=("chrom", "start", "end", "name", "strand")) -> pd.DataFrame:
    """Like test_ops_bioframe.pdf, with nullable integers so NULL intervals fit."""
    df = pd.DataFrame(rows, columns=list(columns))
    return df.astype({columns[1]: "Int64", columns[2]: "Int64"})


def gather(parts: dict) -> dict[str, Counter]:
    """Several results of any shapes in one Spark job: each row as JSON, split by label."""
    union = None
    for label, df in parts.items():
        fields = [F.col(f"`{c}`").alias(f"c{i:03d}") for i, c in enumerate(df.columns)]
        one = df.select(F.lit(label).alias("label"), F.to_json(F.struct(*fields), {"ignoreNullFields": "false"}).alias("row"))
        union = one if union is None else union.unionByName(one)
    out: dict[str, Counter] = {label: Counter() for label in parts}
    for label, row in union.collect():
        values = json.loads(row)
        out[label][tuple(values[k] for k in sorted(values))] += 1
    return out


def ordered(df) -> list[tuple]:
    return [tuple(r) for r in df.collect()]


def rows_of(frame_: pd.DataFrame) -> list[tuple]:
    return [tuple(_plain(v) for v in r) for r in frame_.itertuples(index=False, name=None)]


def assert_same_order(got: list[tuple], want: list[tuple], key, what: str) -> None:
    """Same sequence of sort keys; rows equal in the key may come in any order."""
    assert [key(r) for r in got] == [key(r) for r in want], f"{what}: order differs\n{got}\n{want}"
    def runs(rows):
        out, last = [], object()
        for r in rows:
            if key(r) != last:
                out.append(Counter())
                last = key(r)
            out[-1][r] += 1
        return out
    assert runs(got) == runs(want), f"{what}: rows differ"


def oracle_pick(p: pd.DataFrame, view: pd.DataFrame, name_col: str = "name", cols=None, cols_view=None) -> list:
    """Per row of ``p``: the view region it overlaps most, ties to the one starting
    first (then listed first), None for none. Checked against bf.assign_view."""
    cv, sv, ev = cols_view or ("chrom", "start", "end")
    ck, sk, ek = cols or ("chrom", "start", "end")
    v = view.reset_index(drop=True)
    p = p.reset_index(drop=True)
    ov = bf.overlap(p, v, how="inner", suffixes=("", "__v"), return_overlap=True, return_index=True,
                    cols1=cols, cols2=cols_view)
    best: dict[int, tuple] = {}
    lengths: dict[int, dict] = {}
    for i, j, os_, oe in ov[["index", "index__v", f"overlap_{sk}", f"overlap_{ek}"]].itertuples(index=False, name=None):
        key = (int(oe) - int(os_), -int(v[sv][j]), -int(j))
        lengths.setdefault(int(i), {})[v[name_col][j]] = key[0]
        if int(i) not in best or key > best[int(i)]:
            best[int(i)] = key
    picks = [v[name_col][-best[i][2]] if i in best else None for i in range(len(p))]
    theirs = bf.assign_view(p, v, view_name_col=name_col, cols=cols, cols_view=cols_view)["view_region"]
    for i, (mine, their) in enumerate(zip(picks, theirs)):
        if mine is None:
            assert pd.isna(their), (i, their)
        else:
            assert lengths[i][their] == lengths[i][mine], (i, mine, their, lengths[i])
    return picks


def case_of(chrom: str) -> int:
    return int(chrom[:2])


def views_for(rows, sizes):
    """A dict of sizes missing some chromosomes, and a list of two named regions per
    chromosome with a gap between them (book-ended on the tie chromosome)."""
    chroms = sorted({r[0] for r in rows if r[0] is not None and not r[0].startswith("98|")})
    size = {c: sizes[case_of(c)] + 3 for c in chroms}
    # Every third case's chromosomes are not in the dict view.
    dict_view = {c: n for c, n in size.items() if case_of(c) % 3 != 1}
    dict_view["99|chrEmpty"] = 17
    dict_view["98|tie"] = 20
    split = [(c, 0, size[c] // 2, f"{c}:lo") for c in chroms]
    split += [(c, size[c] // 2 + 2, size[c] + 2, f"{c}:hi") for c in chroms]
    split += [("98|tie", 0, 10, "tie:a"), ("98|tie", 10, 20, "tie:b")]
    return dict_view, split


SIZES = st.lists(st.integers(0, 40), min_size=CASES + 1, max_size=CASES + 1)


# -- trim -----------------------------------------------------------------------


@SETTINGS
@given(cases=SINGLES, sizes=SIZES)
def test_trim_matches_bioframe(spark, cases, sizes):
    rows = batch(cases, FIXED_1, "a") + NULL_ROWS + TIE_ROWS
    p, d = pdf(rows), frame(spark, rows)
    dict_view, split = views_for(rows, sizes)
    split_pdf = pd.DataFrame(split, columns=["chrom", "start", "end", "name"])
    # expand first: starts become negative, ends pass the chromosome ends.
    pe, de = bf.expand(p, pad=4), expand(d, pad=4)
    assert (pe["start"] < 0).any()
    pe_picked = pe.assign(pick=oracle_pick(pe, split_pdf))
    assert pe_picked["pick"].isna().any() and pe_picked["pick"].notna().any()
    picks = spark.createDataFrame(list(zip(pe_picked["name"], pe_picked["pick"])), "name string, pick string")
    de_picked = de.join(picks, on="name").select(*pe_picked.columns)
    # A Spark view with odd column names and its own name column.
    odd_view = spark.createDataFrame(split, "`Chromosome` string, `Start End` bigint, stop bigint, `region name` string")
    odd_view_cols = ("Chromosome", "Start End", "stop")
    odd_pdf = split_pdf.set_axis(["Chromosome", "Start End", "stop", "region name"], axis=1)
    parts = {
        "none": trim(de),
        "none-view-columns": trim(de, return_view_columns=True, view_name_col="strand"),
        "dict": trim(de, view_df=dict_view),
        "dict-view-columns": trim(de, view_df=dict_view, return_view_columns=True),
        "split-assigned": trim(de, view_df=split),
        "spark-view-given-col": trim(de_picked, view_df=odd_view, df_view_col="pick", view_name_col="region name",
                                     cols_view=odd_view_cols, return_view_columns=True),
    }
    got = gather(parts)
    want = {
        "none": bf.trim(pe),
        "none-view-columns": bf.trim(pe, return_view_columns=True, view_name_col="strand"),
        "dict": bf.trim(pe, view_df=dict_view),
        "dict-view-columns": bf.trim(pe, view_df=dict_view, return_view_columns=True),
        "split-assigned": bf.trim(pe_picked, view_df=split, df_view_col="pick").drop(columns="pick"),
        "spark-view-given-col": bf.trim(pe_picked, view_df=odd_pdf, df_view_col="pick",
                                        view_name_col="region name", cols_view=odd_view_cols,
                                        return_view_columns=True),
    }
    for label, w in want.items():
        assert list(parts[label].columns) == list(w.columns), label
        if label == "none-view-columns":
            # bioframe keeps 2^63 - 1 as a float there (it has NaN rows): compare it apart.
            assert {r[parts[label].columns.index("end_view")] for r in got[label]} == {INT64_MAX, None}
            w = w.assign(end_view=np.where(w["end_view"].isna(), None, INT64_MAX))
        assert_bags(got[label], bag_of(w), f"trim {label}")
    assert ("98|tie", 1, 10, "tie_1", "+") in got["split-assigned"], "a tie goes to the region starting first"
    # The view rows were used: some intervals lost bases to a region end.
    assert bag_of(want["dict"]) != bag_of(pe)


@SETTINGS
@given(cases=SINGLES, sizes=SIZES)
def test_trim_odd_columns_and_int_types(spark, cases, sizes):
    """cols= with unusual names, 32-bit coordinates, a pandas view with an extra column."""
    rows = batch(cases, FIXED_1, "a")
    p = pdf(rows, ODD).astype({"Start End": "int32", "stop": "int32"})
    d = frame(spark, rows).toDF(*ODD).withColumn("Start End", F.col("`Start End`").cast("int")) \
        .withColumn("stop", F.col("stop").cast("int"))
    cols = ("Chromosome", "Start End", "stop")
    dict_view, split = views_for(rows, sizes)
    view = pd.DataFrame(split, columns=["c", "s", "e", "name"]).assign(extra=1.5)
    picks = oracle_pick(p, view.rename(columns={"c": "Chromosome", "s": "Start End", "e": "stop"}), cols=cols,
                        cols_view=cols)
    p = p.assign(region=picks)
    d = d.join(spark.createDataFrame(list(zip(p["name"], picks)), "name string, region string"), on="name") \
        .select(*ODD, "region")
    parts = {
        "given": trim(d, view_df=view, df_view_col="region", cols=cols, cols_view=("c", "s", "e"),
                      return_view_columns=True),
        "assigned": trim(d.drop("region"), view_df=view, cols=cols, cols_view=("c", "s", "e"),
                         return_view_columns=True),
        "sizes": trim(d, view_df=pd.Series(dict_view), cols=cols),
    }
    assert dict(parts["given"].dtypes)["Start End"] == "int" and dict(parts["sizes"].dtypes)["stop"] == "int"
    got = gather(parts)
    want = bf.trim(p, view_df=view, df_view_col="region", cols=cols, cols_view=("c", "s", "e"),
                   return_view_columns=True)
    assert parts["given"].columns == list(want.columns)
    assert_bags(got["given"], bag_of(want), "trim, given region column")
    # Assigned here: the same rows, the region column named view_region and placed after df's columns.
    want_assigned = want.rename(columns={"region": "view_region"})
    want_assigned = want_assigned[ODD + ["view_region"] + [c for c in want.columns if c not in ODD + ["region"]]]
    assert parts["assigned"].columns == list(want_assigned.columns)
    assert_bags(got["assigned"], bag_of(want_assigned), "trim, assigned")
    assert_bags(got["sizes"], bag_of(bf.trim(p, view_df=pd.Series(dict_view), cols=cols)),
                "trim, Series view")


# -- assign_view ----------------------------------------------------------------


@SETTINGS
@given(cases=SINGLES, sizes=SIZES)
def test_assign_view_matches_bioframe(spark, cases, sizes):
    rows = batch(cases, FIXED_1, "a") + NULL_ROWS + TIE_ROWS
    p, d = pdf(rows), frame(spark, rows)
    dict_view, split = views_for(rows, sizes)
    split_pdf = pd.DataFrame(split, columns=["chrom", "start", "end", "fruit"])
    picks = oracle_pick(p, split_pdf, name_col="fruit")
    assert picks[-4:] == ["tie:a", "tie:a", "tie:a", "tie:b"]
    spark_view = spark.createDataFrame(split, "chrom string, start bigint, `end` bigint, fruit string")
    parts = {
        "dict": assign_view(d, dict_view),
        "dict-drop": assign_view(d, dict_view, drop_unassigned=True),
        "split": assign_view(d, split_pdf, view_name_col="fruit", df_view_col="my region"),
        "spark-view": assign_view(d, spark_view, view_name_col="fruit"),
        "split-drop": assign_view(d, split, drop_unassigned=True),
    }
    got = gather(parts)
    # A dict view has one region per chromosome: no ties, bioframe as it is.
    for label, drop in (("dict", False), ("dict-drop", True)):
        want = bf.assign_view(p, dict_view, drop_unassigned=drop)
        assert parts[label].columns == list(want.columns)
        assert_bags(got[label], bag_of(want), f"assign_view {label}")
    with_picks = p.assign(**{"my region": picks})
    assert parts["split"].columns == list(with_picks.columns)
    assert_bags(got["split"], bag_of(with_picks), "assign_view, split view")
    assert_bags(got["spark-view"], bag_of(with_picks), "assign_view, Spark view")
    assert ("98|tie", 5, 15, "tie_1", "+", "tie:a") in got["spark-view"], "a tie goes to the region starting first"
    # drop_unassigned drops the unassigned rows and, as bioframe does, any row with a NULL.
    kept = with_picks[with_picks["my region"].notna() & with_picks.notna().all(axis=1)]
    assert "null_strand" not in set(kept["name"]) and len(kept) < len(with_picks)
    assert_bags(got["split-drop"], bag_of(kept), "assign_view, drop_unassigned")


# -- sort_bedframe ---------------------------------------------------------------


@SETTINGS
@given(cases=SINGLES, sizes=SIZES)
def test_sort_bedframe_matches_bioframe_order(spark, cases, sizes):
    rows = batch(cases, FIXED_1, "a") + NULL_ROWS + TIE_ROWS
    p, d = pdf(rows), frame(spark, rows)
    dict_view, split = views_for(rows, sizes)
    # Views list chromosomes against string order, so the view's order shows.
    dict_view = dict(reversed(list(dict_view.items())))
    split = split[::-1]
    split_pdf = pd.DataFrame(split, columns=["chrom", "start", "end", "name"])
    picks = oracle_pick(p, split_pdf)
    key = lambda r: r[:3]  # noqa: E731

    got = ordered(sort_bedframe(d))
    want = rows_of(bf.sort_bedframe(p))
    assert_same_order(got, want, key, "no view")
    assert got[-1][0] is None and got[0][0] == "00|chr1"

    got = ordered(sort_bedframe(d, view_df=dict_view))
    want = rows_of(bf.sort_bedframe(p, view_df=dict_view))
    assert_same_order(got, want, key, "dict view")
    assert [r[:3] for r in got] != [r[:3] for r in rows_of(bf.sort_bedframe(p))], "the view's order shows"

    # Regions named in a column of df, some NULL: bioframe with the same column.
    p_named = p.assign(region=picks)
    d_named = d.join(spark.createDataFrame(list(zip(p["name"], picks)), "name string, region string"), on="name")
    d_named = d_named.select(*p_named.columns)
    got = ordered(sort_bedframe(d_named, view_df=split, df_view_col="region"))
    want = rows_of(bf.sort_bedframe(p_named, view_df=split, df_view_col="region"))
    assert_same_order(got, want, key, "df_view_col")

    # Regions assigned: the same order as with the picks given.
    got = ordered(sort_bedframe(d, view_df=spark.createDataFrame(split, "chrom string, start bigint, `end` bigint, name string")))
    assert_same_order(got, [r[:-1] for r in want], key, "assigned from a Spark view")


# -- binnify ---------------------------------------------------------------------------


@SETTINGS
@given(lengths=st.lists(st.integers(0, 60), min_size=1, max_size=40), binsize=st.sampled_from([4, 1, 2, 3, 5, 7, 13]))
def test_binnify_matches_bioframe(spark, lengths, binsize):
    sizes = {f"chr{i}": n for i, n in enumerate(lengths)}
    sizes["chrLast"] = binsize * 3 + 1  # a binsize that does not divide the length
    series = pd.Series(sizes)
    spark_sizes = spark.createDataFrame(list(sizes.items()), "chrom string, length int")
    parts = {
        "dict": binnify(sizes, binsize),
        "series-ids": binnify(series, binsize, rel_ids=True),
        "spark-ids": binnify(spark_sizes, binsize, rel_ids=True),
    }
    got = gather(parts)
    want = bf.binnify(series, binsize)
    want_ids = bf.binnify(series, binsize, rel_ids=True)
    assert parts["dict"].columns == list(want.columns) and parts["spark-ids"].columns == list(want_ids.columns)
    assert_bags(got["dict"], bag_of(want), "binnify")
    assert_bags(got["series-ids"], bag_of(want_ids), "binnify, rel_ids")
    assert_bags(got["spark-ids"], bag_of(want_ids), "binnify, Spark chromsizes")
    assert ("chrLast", 3 * binsize, 3 * binsize + 1, 3) in got["spark-ids"]


def test_binnify_spans_blocks(spark):
    """A chromosome of more bins than a block holds: every bin once, none past the end."""
    n = 2 * BLOCK + 5
    bins = binnify({"big": n * 3 - 1, "small": 4}, 3, rel_ids=True)
    row = bins.groupBy("chrom").agg(
        F.count("*").alias("n"), F.countDistinct("start").alias("starts"), F.max("end").alias("last"),
        F.max("rel_id").alias("top"), F.sum(F.col("end") - F.col("start")).alias("bases"),
        F.sum(F.when(F.col("start") != F.col("rel_id") * 3, 1).otherwise(0)).alias("misplaced"),
    ).orderBy("chrom").collect()
    assert [tuple(r) for r in row] == [("big", n, n, n * 3 - 1, n - 1, n * 3 - 1, 0), ("small", 2, 2, 4, 1, 4, 0)]


# -- make_chromarms --------------------------------------------------------------------


@SETTINGS
@given(
    lengths=st.lists(st.integers(0, 30), min_size=12, max_size=12),
    mids=st.lists(st.one_of(st.none(), st.integers(-3, 33)), min_size=12, max_size=12),
)
def test_make_chromarms_matches_bioframe(spark, lengths, mids):
    sizes = {f"c{i}": n for i, n in enumerate(lengths)}
    # Midpoints at a chromosome end, past it, negative, missing; one chromosome
    # has the same midpoint twice, one a midpoint at 0 and one inside.
    mid_rows = [(f"c{i}", m) for i, m in enumerate(mids) if m is not None]
    sizes.update({"twice": 20, "zero_and_inside": 20, "at_end": 20})
    mid_rows += [("twice", 7), ("twice", 7), ("zero_and_inside", 0), ("zero_and_inside", 9), ("at_end", 20),
                 ("not_a_chrom", 5)]
    mids_pdf = pd.DataFrame(mid_rows, columns=["chrom", "mid"])
    mids_spark = spark.createDataFrame(mid_rows, "chrom string, mid bigint")
    chroms3 = pd.DataFrame([(c, 0, n) for c, n in sizes.items()], columns=["Chr", "lo", "hi"])
    mids3 = mids_pdf.rename(columns={"chrom": "Chr", "mid": "loc"})
    parts = {
        "dict": make_chromarms(sizes, mids_pdf),
        "series": make_chromarms(pd.Series(sizes), mids_spark, suffixes=("L", "R")),
        "three": make_chromarms(chroms3, spark.createDataFrame(mids3), cols_chroms=("Chr", "lo", "hi"),
                                cols_mids=("Chr", "loc")),
        "two": make_chromarms(spark.createDataFrame(chroms3), mids3, cols_chroms=("Chr", "hi"),
                              cols_mids=("Chr", "loc")),
    }
    got = gather(parts)
    want = {
        "dict": bf.make_chromarms(sizes, mids_pdf),
        "series": bf.make_chromarms(pd.Series(sizes), mids_pdf, suffixes=("L", "R")),
        "three": bf.make_chromarms(chroms3, mids3, cols_chroms=("Chr", "lo", "hi"), cols_mids=("Chr", "loc")),
        "two": bf.make_chromarms(chroms3, mids3, cols_chroms=("Chr", "hi"), cols_mids=("Chr", "loc")),
    }
    for label, w in want.items():
        assert parts[label].columns == list(w.columns), label
        assert_bags(got[label], bag_of(w), f"make_chromarms {label}")
    assert ("twice", 7, 20, "twice_q") in got["dict"] and ("zero_and_inside", 9, 20, "zero_and_insideR") in got["series"]


# -- bioframe's own examples ---------------------------------------------------------------


def test_bioframe_examples(spark):
    """The cases of bioframe's tests (test_ops.py, test_extras.py), in one job."""
    sdf = lambda rows, cols: spark.createDataFrame(  # noqa: E731
        rows, ", ".join(f"`{c}` {'string' if i in (0, 3) else 'bigint'}" for i, c in enumerate(cols)))
    view_df = pd.DataFrame([["chr1", 0, 12, "chr1p"], ["chr1", 13, 26, "chr1q"], ["chrX", 1, 8, "chrX_0"]],
                           columns=["chrom", "start", "end", "name"])
    df = sdf([["chr1", -6, 12, "chr1p"], ["chr1", 0, 12, "chr1p"], ["chr1", 32, 36, "chr1q"], ["chrX", 1, 8, "chrX_0"]],
             ["chrom", "start", "end", "view_region"])
    trimmed = [("chr1", 0, 12, "chr1p"), ("chr1", 0, 12, "chr1p"), ("chr1", 26, 26, "chr1q"), ("chrX", 1, 8, "chrX_0")]
    with pytest.raises(GiqlSparkError, match="trim: df already has a column 'view_region'"):
        trim(df, view_df=view_df)
    fruit_view = pd.DataFrame([["chrX", 1, 8, "oranges"], ["chrX", 8, 20, "grapefruit"], ["chr1", 0, 10, "apples"]],
                              columns=["chrom", "start", "end", "fruit"])
    fruits = sdf([["chr1", 0, 10, "+"], ["chrX", 5, 10, "+"], ["chrX", 0, 5, "+"], ["chr2", 5, 10, "+"]],
                 ["chrom", "start", "end", "strand"])
    arms_df = sdf([["chrX", 0, 8]], ["chromosome", "lo", "hi"])
    arms_mids = pd.DataFrame([["chrX", 4]], columns=["chromosome", "loc"])
    na = spark.createDataFrame([("chr1", -4, 12, "chr1p"), (None, None, None, "chr1q"), ("chrX", -5, -1, "chrX_0")],
                               "chrom string, start bigint, `end` bigint, region string")
    parts = {
        "trim-given": trim(df, view_df=view_df, df_view_col="view_region"),
        "trim-funky-view": trim(df, view_df=view_df.rename(columns={"chrom": "chr"}), df_view_col="view_region",
                                cols_view=["chr", "start", "end"]),
        "trim-sizes": trim(sdf([["chr1", 0, 12], ["chr1", 13, 26], ["chrX_0", 1, 8]], ["chrom", "startFunky", "end"]),
                           view_df={"chr1": 20, "chrX_0": 5}, cols=["chrom", "startFunky", "end"]),
        "trim-none": trim(na),
        "assign": assign_view(sdf([["chr11", 0, 10, "+"]], ["chrom", "start", "end", "strand"]),
                              pd.DataFrame([["chr11", 1, 8, "chr11p"]], columns=["chrom", "start", "end", "name"])),
        "assign-fruit": assign_view(fruits, fruit_view, view_name_col="fruit", df_view_col="funny_view_region",
                                    drop_unassigned=True),
        "assign-fruit-keep": assign_view(fruits, fruit_view, view_name_col="fruit", df_view_col="funny_view_region"),
        "arms-3": make_chromarms(arms_df, arms_mids, cols_chroms=["chromosome", "lo", "hi"],
                                 cols_mids=["chromosome", "loc"]),
        "arms-2": make_chromarms(arms_df, arms_mids, cols_chroms=["chromosome", "hi"], cols_mids=["chromosome", "loc"]),
        "arms-dict": make_chromarms({"chrX": 8}, {"chrX": 4}),
        "bins-max": binnify({"chrTESTX": 5, "chrTEST2": 7}, 7),
        "bins-min": binnify({"chrTESTX": 5, "chrTEST2": 7}, 5),
        "bins-1": binnify({"chrTESTX": 5, "chrTEST2": 7}, 1),
    }
    got = gather(parts)
    assert got["trim-given"] == Counter(trimmed) == got["trim-funky-view"]
    assert got["trim-sizes"] == Counter([("chr1", 0, 12), ("chr1", 13, 20), ("chrX_0", 1, 5)])
    assert got["trim-none"] == Counter([("chr1", 0, 12, "chr1p"), (None, None, None, "chr1q"), ("chrX", 0, 0, "chrX_0")])
    assert got["assign"] == Counter([("chr11", 0, 10, "+", "chr11p")])
    assigned = [("chr1", 0, 10, "+", "apples"), ("chrX", 5, 10, "+", "oranges"), ("chrX", 0, 5, "+", "oranges")]
    assert got["assign-fruit"] == Counter(assigned)
    assert got["assign-fruit-keep"] == Counter(assigned + [("chr2", 5, 10, "+", None)])
    assert parts["assign-fruit"].columns == ["chrom", "start", "end", "strand", "funny_view_region"]
    arms = Counter([("chrX", 0, 4, "chrX_p"), ("chrX", 4, 8, "chrX_q")])
    assert got["arms-3"] == got["arms-2"] == got["arms-dict"] == arms
    assert parts["arms-3"].columns == ["chromosome", "lo", "hi", "name"]
    assert parts["arms-2"].columns == ["chromosome", "start", "end", "name"]
    assert dict(parts["arms-2"].dtypes)["start"] == "bigint"
    assert sum(got["bins-max"].values()) == 2 and sum(got["bins-min"].values()) == 3
    assert sum(got["bins-1"].values()) == 12

    # sort_bedframe: the order itself.
    sorted_plain = [("chr1", 0, 10, "+"), ("chr2", 5, 10, "+"), ("chrX", 0, 5, "+"), ("chrX", 5, 10, "+")]
    by_view = [("chrX", 0, 5, "+"), ("chrX", 5, 10, "+"), ("chr1", 0, 10, "+"), ("chr2", 5, 10, "+")]
    assert ordered(sort_bedframe(fruits)) == sorted_plain
    assert ordered(sort_bedframe(fruits, fruit_view, view_name_col="fruit")) == by_view
    assert ordered(sort_bedframe(fruits, view_df=fruit_view.rename(columns={"chrom": "chr"}), view_name_col="fruit",
                                 cols_view=["chr", "start", "end"])) == by_view
    assert ordered(sort_bedframe(fruits, view_df={"chrX": 20, "chr1": 10})) == by_view
    with pytest.raises(UnknownColumnError, match="sort_bedframe: df has no column 'view_region'"):
        sort_bedframe(fruits, fruit_view, view_name_col="fruit", df_view_col="view_region")
    with_na = fruits.unionByName(spark.createDataFrame([(None, None, None, "+")], fruits.schema))
    assert ordered(sort_bedframe(with_na))[-1][0] is None
    last = sort_bedframe(with_na, fruit_view, view_name_col="fruit")
    assert ordered(last)[-1][0] is None and last.dtypes == with_na.dtypes


# -- errors ------------------------------------------------------------------------------------


def test_bad_arguments_fail_at_once_with_one_line(spark):
    d = frame(spark, [("chr1", 1, 5, "x", "+")])
    cases = [
        (lambda: trim(d, cols=("chrom", "begin", "end")), UnknownColumnError, r"trim: df has no column 'begin'"),
        (lambda: trim(d, view_df={"chr1": 10}, df_view_col="region"), UnknownColumnError,
         r"trim: df has no column 'region'"),
        (lambda: trim(d, view_df=[("chr1", 0, 5, "a"), ("chr1", 3, 9, "b")]), GiqlSparkError,
         r"trim: view_df regions must not overlap"),
        (lambda: assign_view(d, [("chr1", 0, 5, "a"), ("chr1", 6, 9, "a")]), GiqlSparkError,
         r"assign_view: view_df region names \(column 'name'\) must be unique"),
        (lambda: assign_view(d, {"chr1": 10}, df_view_col="name"), GiqlSparkError,
         r"assign_view: df already has a column 'name'"),
        (lambda: assign_view(d, 42), GiqlSparkError, r"assign_view: view_df must be a dict of sizes"),
        (lambda: sort_bedframe(d, [("chr1", 5, 2)]), GiqlSparkError, r"sort_bedframe: view_df region 'chr1' has start > end"),
        (lambda: sort_bedframe(d, pd.DataFrame({"chrom": ["chr1"], "begin": [0], "end": [5]})), UnknownColumnError,
         r"sort_bedframe: view_df has no column 'start'"),
        (lambda: binnify({"chr1": 10}, 2.5), GiqlSparkError, r"binnify: binsize must be int"),
        (lambda: binnify({"chr1": 10}, 0), GiqlSparkError, r"binnify: binsize must be positive"),
        (lambda: binnify(d, 5), UnknownColumnError, r"binnify: chromsizes has no column 'length'"),
        (lambda: make_chromarms({"c": 10}, {"c": 4}, cols_chroms=("chrom", "size")), UnknownColumnError,
         r"make_chromarms: chromsizes has no column 'size'"),
        (lambda: make_chromarms({"c": 10}, {"c": 4}, cols_chroms=("a", "b", "c", "d")), GiqlSparkError,
         r"make_chromarms: invalid number of cols_chroms"),
        (lambda: make_chromarms({"c": 10}, [4]), GiqlSparkError, r"make_chromarms: unknown input type for midpoints"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message):
            call()
    with mock.patch.object(SparkSession, "getActiveSession", return_value=None):
        with pytest.raises(GiqlSparkError, match=r"no active SparkSession: pass spark="):
            binnify({"chr1": 10}, 5)
    # Given a session, no active one is needed.
    with mock.patch.object(SparkSession, "getActiveSession", return_value=None):
        assert binnify({"chr1": 10}, 5, spark=spark).count() == 2


def test_bad_rows_fail_the_job_with_one_line(spark):
    backwards = frame(spark, [("chr1", 1, 2, "x", "+"), ("chr1", 9, 4, "y", "+")])
    half_null = spark.createDataFrame([("chr1", None, 5, "x", "+")], "chrom string, start bigint, `end` bigint, name string, strand string")
    named = frame(spark, [("chr1", 1, 2, "chr7", "+")])
    spark_view = spark.createDataFrame([("chr1", 5, 2)], "chrom string, start bigint, `end` bigint")
    cases = [
        (lambda: trim(backwards), r"trim: df has an invalid interval chr1:9-4 \(need start <= end\)"),
        (lambda: assign_view(half_null, {"chr1": 9}), r"assign_view: df has an invalid interval chr1:null-5"),
        (lambda: sort_bedframe(backwards), r"sort_bedframe: df has an invalid interval chr1:9-4"),
        (lambda: trim(named, view_df={"chr1": 9}, df_view_col="name"),
         r"trim: df column 'name' names region chr7, which is not in view_df"),
        (lambda: sort_bedframe(named, {"chr1": 9}, df_view_col="name"),
         r"sort_bedframe: df column 'name' names region chr7, which is not in view_df"),
        (lambda: trim(named, view_df=spark_view), r"trim: view_df has an invalid region chr1:5-2 named chr1"),
        (lambda: binnify(spark.createDataFrame([("c", -1)], "chrom string, length int"), 3),
         r"binnify: chromsizes gives chromosome c the invalid length -1"),
        (lambda: make_chromarms({"c": 10}, pd.DataFrame({"chrom": ["c", "c"], "mid": [3, 6]})),
         r"make_chromarms: chromosome c split into more than two arms"),
        (lambda: make_chromarms(spark.createDataFrame([("c", 1, 10)], "chrom string, start int, `end` int"), {"c": 4},
                                cols_chroms=("chrom", "start", "end")),
         r"make_chromarms: all values in starts column must be zero"),
    ]
    for call, message in cases:
        with pytest.raises(Exception, match=message):
            call().collect()
    # Negative starts are not refused: trim exists to clip them.
    assert ordered(trim(frame(spark, [("chr1", -3, -1, "x", "+")]))) == [("chr1", 0, 0, "x", "+")]
