"""gs.window against bioframe's expand + overlap, gs.band_join against brute force."""

from __future__ import annotations

from collections import Counter

import bioframe as bf
import numpy as np
import pandas as pd
import pytest

import giql_spark as gs
from giql_spark.errors import GiqlSparkError


def _frame(rng, n: int, prefix: str, zero_length: bool = True) -> pd.DataFrame:
    start = rng.integers(0, 4000, n)
    width = rng.integers(0 if zero_length else 1, 60, n)
    return pd.DataFrame({"chrom": rng.choice(["chr1", "chr2", "chrX"], n), "start": start, "end": start + width,
                         "name": [f"{prefix}{i}" for i in range(n)]})


@pytest.fixture(scope="module")
def tables(spark):
    rng = np.random.default_rng(7)
    a, b = _frame(rng, 250, "a"), _frame(rng, 250, "b")
    return a, b, spark.createDataFrame(a), spark.createDataFrame(b)


@pytest.mark.parametrize("w", [0, 1, 40])
@pytest.mark.parametrize("strategy", [None, "binned", "broadcast", "sweep", "naive", "jvm_broadcast"])
def test_window_is_bioframe_expand_then_overlap(tables, w, strategy):
    a, b, A, B = tables
    want = bf.overlap(bf.expand(a, pad=w), b, how="inner", suffixes=("", "_"))
    got = gs.window(A, B, w, strategy=strategy).select("name", "name_").toPandas()
    assert Counter(zip(got.name, got.name_)) == Counter(zip(want.name, want.name_))
    assert len(want) > 100


def test_window_left_right_and_how(tables):
    a, b, A, B = tables
    got = gs.window(A, B, left=30, right=0).select("name", "name_").toPandas()
    widened = a.assign(start=a.start - 30)
    want = bf.overlap(widened, b, how="inner", suffixes=("", "_"))
    assert Counter(zip(got.name, got.name_)) == Counter(zip(want.name, want.name_))
    lone = set(gs.window(A, B, 0, how="anti").toPandas().name)
    assert lone == set(a.name) - set(bf.overlap(a, b, how="inner").name) and lone
    with pytest.raises(GiqlSparkError, match="window: left must be an integer >= 0"):
        gs.window(A, B, left=-1)


def test_band_join_matches_brute_force(tables):
    a, b, A, B = tables
    got = gs.band_join(A, B, "r.start BETWEEN l.start - 100 AND l.start + 100", on=["chrom"])
    pairs = Counter(zip(*[got.toPandas()[c] for c in ("name", "name_")]))
    want = Counter((x.name, y.name) for x in a.itertuples() for y in b.itertuples()
                   if x.chrom == y.chrom and x.start - 100 <= y.start <= x.start + 100)
    assert pairs == want and len(want) > 300
    semi = gs.band_join(A, B, "ABS(l.start - r.start) < 3", how="semi").toPandas()
    assert set(semi.name) == {x.name for x in a.itertuples() if any(abs(x.start - y.start) < 3 for y in b.itertuples())}


def test_band_join_without_a_range_runs_as_spark_joins(tables):
    a, b, A, B = tables
    got = gs.band_join(A, B, "l.start * r.start = 0").count()
    assert got == sum(1 for x in a.itertuples() for y in b.itertuples() if x.start * y.start == 0)
    with pytest.raises(GiqlSparkError, match="must be qualified by l"):
        gs.band_join(A, B, "start < r.start")
    with pytest.raises(GiqlSparkError, match="df2 has no column 'pos'"):
        gs.band_join(A, B, "r.pos < l.start")
