"""select, select_mask, parse_region and setdiff against bioframe 0.8."""

from __future__ import annotations

import bioframe as bf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import giql_spark as gs
from giql_spark.dataframe.select import parse_region
from giql_spark.errors import GiqlSparkError

from test_ops_bioframe import FIXED_1, PAIRS, SINGLES, SETTINGS, assert_bags, bag_of, batch, frame, labelled, pdf, tables

NUMBERS = st.one_of(
    st.integers(0, 3_000_000).map(str),
    st.integers(0, 3_000_000).map(lambda n: f"{n:,}"),
    st.tuples(st.integers(0, 999), st.sampled_from(["k", "K", "kb", "M", "Mb", "G", "gb"])).map(lambda t: f"{t[0]}{t[1]}"),
    st.tuples(st.integers(0, 99), st.integers(0, 99), st.sampled_from(["k", "M"])).map(lambda t: f"{t[0]}.{t[1]}{t[2]}"),
)


@settings(max_examples=300, deadline=None)
@given(chrom=st.sampled_from(["chr1", "chrX", "scaffold_12.1", " chr2 "]), a=NUMBERS, b=st.one_of(st.none(), NUMBERS),
       form=st.sampled_from(["range", "open", "chrom"]))
def test_region_strings_parse_as_bioframe_parses_them(chrom, a, b, form):
    region = chrom if form == "chrom" else f"{chrom}:{a}-" if form == "open" or b is None else f"{chrom}:{a}-{b}"
    try:
        want = bf.core.stringops.parse_region(region)
    except ValueError:
        with pytest.raises(GiqlSparkError):
            parse_region(region)
        return
    assert parse_region(region) == want


@SETTINGS
@given(cases=SINGLES, regions=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 12), st.sampled_from(["str", "tuple", "open", "chrom"])),
                                      min_size=6, max_size=6))
def test_select_matches_bioframe(spark, cases, regions):
    rows = batch(cases, FIXED_1, "a")
    p, d = pdf(rows), frame(spark, rows)
    asked = {}
    for i, (start, width, form) in enumerate(regions):
        chrom = sorted({r[0] for r in rows})[i % 3]
        asked[f"{i}"] = {"str": f"{chrom}:{start}-{start + width}", "tuple": (chrom, start, start + width),
                         "open": f"{chrom}:{start}-", "chrom": chrom}[form]
    asked["fixed point"] = ("00|chr1", 2, 9)  # the zero-length row at 2 sits at the region's start
    got = labelled({k: gs.select(d, r) for k, r in asked.items()})
    for k, r in asked.items():
        assert_bags(got[k], bag_of(bf.select(p, r)), f"select {r!r}")
    assert sum(got["fixed point"].values()) > 0


@SETTINGS
@given(pairs=PAIRS)
def test_setdiff_matches_bioframe(spark, pairs):
    r1, r2, d1, d2 = tables(spark, pairs)
    p1, p2 = pdf(r1), pdf(r2)
    got = labelled({"plain": gs.setdiff(d1, d2), "on strand": gs.setdiff(d1, d2, on=["strand"])})
    assert_bags(got["plain"], bag_of(bf.setdiff(p1, p2)), "setdiff")
    assert_bags(got["on strand"], bag_of(bf.setdiff(p1, p2, on=["strand"])), "setdiff on strand")


def test_select_mask_is_a_column_and_bad_regions_fail_in_one_line(spark):
    d = frame(spark, [("chr1", 5, 10, "a", "+"), ("chr1", 20, 20, "p", "+"), ("chr2", 0, 3, "b", "-")])
    assert sorted(r["name"] for r in d.where(gs.select_mask(d, "chr1:1k-2k")).collect()) == []
    assert sorted(r["name"] for r in d.where(gs.select_mask(d, "chr1:9-20")).collect()) == ["a"]
    # a zero-length interval at the region's start is selected, as in bioframe
    assert sorted(r["name"] for r in d.where(gs.select_mask(d, "chr1:20-30")).collect()) == ["p"]
    with pytest.raises(GiqlSparkError, match=r"region 'chr1:9-3': the end cannot be less than the start"):
        gs.select(d, "chr1:9-3")
    with pytest.raises(GiqlSparkError, match=r"region 'chr1:x-3': expected chrom:start-end"):
        gs.select(d, "chr1:x-3")


@SETTINGS
@given(pairs=PAIRS)
def test_frac_gene_coverage_matches_bioframe(spark, pairs):
    r1, r2, d1, _ = tables(spark, pairs)
    p1, p2 = pdf(r1), pdf(r2)
    mrna_p = p2.rename(columns={"chrom": "tName", "start": "tStart", "end": "tEnd"})
    mrna = frame(spark, r2).toDF("tName", "tStart", "tEnd", "qName", "strand")
    got = gs.frac_gene_coverage(d1, mrna)
    want = bf.frac_gene_coverage(p1, mrna_p.rename(columns={"name": "qName"}))
    assert got.columns == list(want.columns)
    assert_bags(bag_of(got.toPandas()), bag_of(want), "frac_gene_coverage")
    with pytest.raises(GiqlSparkError, match=r"ucsc_mrna must be a Spark DataFrame"):
        gs.frac_gene_coverage(d1, "hg38")
