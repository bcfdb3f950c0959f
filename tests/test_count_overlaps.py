"""count_overlaps against a direct count, on random tables with the awkward cases."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from giql_spark.joins import Interval, count_overlaps

SCHEMA = "chrom string, start bigint, `end` bigint, name string"
IV = Interval("chrom", "start", "`end`")

row = st.tuples(
    st.sampled_from(["chr1", "chr1", "chr2", None]),
    st.one_of(st.integers(0, 40), st.none()),
    st.integers(0, 12),
    st.booleans(),
)


def rows(draw_rows, prefix):
    out = []
    for i, (chrom, start, width, reverse) in enumerate(draw_rows):
        end = None if start is None else start + width
        if reverse and start is not None and width:
            start, end = end, start  # start > end: bad data must still be counted right
        out.append((chrom, start, end, f"{prefix}{i}"))
    return out


def expected(left, right):
    out = {}
    for c, s, e, n in left:
        out[n] = sum(
            1 for c2, s2, e2, _ in right
            if None not in (c, s, e, c2, s2, e2) and c == c2 and s2 < e and e2 > s
        )
    return out


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(left=st.lists(row, max_size=15), right=st.lists(row, max_size=15))
def test_count_overlaps_matches_a_direct_count(spark, left, right):
    left, right = rows(left, "l"), rows(right, "r")
    ldf = spark.createDataFrame(left, SCHEMA)
    rdf = spark.createDataFrame(right, SCHEMA)
    got = {r["name"]: r["count"] for r in count_overlaps(ldf, rdf, IV, IV).collect()}
    assert got == expected(left, right)


def test_count_column_must_be_new(spark):
    df = spark.createDataFrame([("chr1", 1, 2, "x")], SCHEMA)
    import pytest

    with pytest.raises(ValueError, match="already exists"):
        count_overlaps(df, df, IV, IV, column="name")
