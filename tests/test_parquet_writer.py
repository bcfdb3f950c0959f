"""giql-spark's Parquet writer (the data source ``giql-parquet``, what ``Session.write`` uses for
Parquet): what it writes reads back as the rows written, through Spark and through pyarrow, with
row-group statistics that agree with the values (Spark prunes row groups by them), in every save
mode, codec and layout (NULLs, empty tables, dictionary and PLAIN strings, several pages and row
groups); what it cannot write goes to Spark's writer."""

from __future__ import annotations

import datetime
import glob
import math
import os

import pyarrow.parquet as pq
import pytest
from conftest import REMOTE, task_errors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

import giql_spark as gs
from giql_spark.io import InputError

SCHEMA = ("b boolean, t tinyint, sh smallint, i int, l bigint, f float, d double, s string, "
          "dt date, chrom string")
LONGS = st.integers(-(2**63), 2**63 - 1)


def _row():
    def nullable(s):
        return st.one_of(st.none(), s)

    return st.tuples(
        nullable(st.booleans()),
        nullable(st.integers(-128, 127)),
        nullable(st.integers(-(2**15), 2**15 - 1)),
        nullable(st.integers(-(2**31), 2**31 - 1)),
        nullable(LONGS),
        nullable(st.floats(width=32, allow_nan=True)),
        nullable(st.floats(allow_nan=True)),
        nullable(st.text(max_size=12)),
        nullable(st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31))),
        nullable(st.sampled_from(["chr1", "chr2", "chrX", "chr10"])),
    )


def _norm(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v
    return v


def _rows(records) -> list:
    return sorted((tuple(_norm(x) for x in r) for r in records), key=repr)


def _files(path) -> list[str]:
    return sorted(glob.glob(os.path.join(str(path), "*.parquet")))


def _written_by_giql(path) -> bool:
    return all(pq.ParquetFile(f).metadata.created_by.startswith("giql-spark") for f in _files(path))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(_row(), max_size=40), parts=st.integers(1, 4))
def test_what_is_written_reads_back_as_written(spark, tmp_path_factory, rows, parts):
    """Spark and pyarrow read the rows back; Spark's own writer of the same rows agrees."""
    out = tmp_path_factory.mktemp("w") / "out.parquet"
    df = spark.createDataFrame(rows, SCHEMA).repartition(parts)
    gs.Session(spark).write(df, str(out), mode="overwrite")
    assert _files(out) and _written_by_giql(out)
    want = _rows(df.collect())
    assert _rows(spark.read.parquet(str(out)).collect()) == want
    table = pq.read_table(str(out))
    assert table.num_rows == len(rows)
    assert table.schema.names == [c.split(" ")[0] for c in SCHEMA.split(", ")]
    got = [tuple(r[c] for c in table.schema.names) for r in table.to_pylist()]
    # pyarrow reads a float column as float32 widened: compare with what Spark held
    assert _rows(got) == want


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(st.tuples(st.one_of(st.none(), LONGS), st.one_of(st.none(), st.text(max_size=6)),
                               st.one_of(st.none(), st.floats(allow_nan=True))), min_size=1, max_size=60))
def test_statistics_agree_with_the_values(spark, tmp_path_factory, rows):
    """Each row group's min, max and NULL count are those of its values (what a reader prunes by)."""
    out = tmp_path_factory.mktemp("s") / "out.parquet"
    df = spark.createDataFrame(rows, "l bigint, s string, d double").coalesce(1)
    gs.Session(spark).write(df, str(out), mode="overwrite")
    (f,) = _files(out)
    meta = pq.ParquetFile(f).metadata
    assert meta.num_row_groups == 1
    for j, name in enumerate(["l", "s", "d"]):
        values = [r[j] for r in rows]
        present = [v for v in values if v is not None]
        stats = meta.row_group(0).column(j).statistics
        assert stats.null_count == len(values) - len(present)
        if name == "d" and any(math.isnan(v) for v in present):
            assert not stats.has_min_max  # a NaN leaves no order to bound by
        elif present:
            key = (lambda v: v.encode()) if name == "s" else (lambda v: v)
            assert stats.has_min_max
            lo, hi = min(present, key=key), max(present, key=key)
            assert (stats.min, stats.max) == (lo, hi) or name == "d" and stats.min == lo == 0 and stats.max == hi
        else:
            assert not stats.has_min_max


def test_spark_prunes_row_groups_by_the_statistics_and_still_answers_right(spark, tmp_path):
    out = tmp_path / "out.parquet"
    df = spark.range(0, 300_000, 1, 3).select(
        (F.col("id") * 7).alias("start"), F.concat(F.lit("chr"), (F.col("id") % 3).cast("string")).alias("chrom"))
    gs.Session(spark).write(df, str(out))
    back = spark.read.parquet(str(out))
    for lo in (0, 700_000, 2_099_993, 5_000_000):
        assert back.where(F.col("start") >= lo).count() == df.where(F.col("start") >= lo).count()
    assert back.where(F.col("chrom") == "chr2").count() == 100_000


def test_pages_and_row_groups_and_plain_strings(spark, tmp_path):
    """More rows than a row group (2^20) and a page (2^16), and a string column that leaves its
    dictionary for PLAIN (every value distinct) next to one that keeps it."""
    out = tmp_path / "out.parquet"
    n = (1 << 20) + 70_000
    df = spark.range(n).coalesce(1).select(
        "id", F.concat(F.lit("name"), F.col("id").cast("string")).alias("name"),
        F.when(F.col("id") % 5 == 0, None).otherwise(F.concat(F.lit("c"), (F.col("id") % 7).cast("string"))).alias("c"))
    gs.Session(spark).write(df, str(out))
    (f,) = _files(out)
    meta = pq.ParquetFile(f).metadata
    assert meta.num_row_groups == 2 and meta.row_group(0).num_rows == 1 << 20
    encodings = {meta.row_group(0).column(j).path_in_schema: meta.row_group(0).column(j).encodings for j in range(3)}
    assert "PLAIN_DICTIONARY" not in encodings["name"] and "PLAIN_DICTIONARY" in encodings["c"]
    t = pq.read_table(f)
    assert t.column("id").to_pylist() == list(range(n))
    assert t.column("name").to_pylist()[-1] == f"name{n - 1}"
    assert t.column("c").null_count == (n + 4) // 5
    back = spark.read.parquet(str(out))
    assert back.agg(F.sum("id"), F.count("c"), F.countDistinct("name")).first() == (n * (n - 1) // 2, n - (n + 4) // 5, n)


def test_an_empty_table_is_a_file_with_its_schema(spark, tmp_path):
    out = tmp_path / "out.parquet"
    df = spark.createDataFrame([], "chrom string, start bigint")
    gs.Session(spark).write(df, str(out))
    assert len(_files(out)) == 1 and _written_by_giql(out)
    back = spark.read.parquet(str(out))
    assert back.count() == 0 and back.schema.simpleString() == "struct<chrom:string,start:bigint>"


def test_save_modes(spark, tmp_path):
    s = gs.Session(spark)
    out = str(tmp_path / "out.parquet")
    one = spark.createDataFrame([("chr1", 1)], "chrom string, start bigint")
    two = spark.createDataFrame([("chr2", 2), ("chr3", 3)], "chrom string, start bigint")
    s.write(one, out)
    with pytest.raises(InputError, match="output already exists: .*out.parquet .pass mode='overwrite'."):
        s.write(two, out)
    s.write(two, out, mode="append")
    assert sorted(spark.read.parquet(out).collect()) == sorted(one.collect() + two.collect())
    s.write(two, out, mode="overwrite")
    assert sorted(spark.read.parquet(out).collect()) == sorted(two.collect())
    assert _written_by_giql(out)
    s.write(one, out, mode="ignore")  # Spark's writer, which leaves an existing path alone
    assert sorted(spark.read.parquet(out).collect()) == sorted(two.collect())
    assert not os.path.exists(os.path.join(out, "_temporary"))
    assert os.path.exists(os.path.join(out, "_SUCCESS"))


@pytest.mark.parametrize("codec", ["snappy", "zstd", "gzip", "uncompressed"])
def test_each_codec(spark, tmp_path, codec):
    out = tmp_path / "out.parquet"
    df = spark.range(5000).select("id", F.concat(F.lit("x"), (F.col("id") % 9).cast("string")).alias("s"))
    df.write.format("giql-parquet").option("compression", codec).mode("overwrite").save(str(out))
    (f, *_) = _files(out)
    assert pq.ParquetFile(f).metadata.row_group(0).column(0).compression == codec.upper()
    assert sorted(spark.read.parquet(str(out)).collect()) == sorted(df.collect())


def test_what_it_cannot_write_goes_to_sparks_writer(spark, tmp_path):
    s = gs.Session(spark)
    df = spark.createDataFrame([("chr1", 1, [1, 2])], "chrom string, start bigint, xs array<int>") \
        .withColumn("amount", F.lit(1.5).cast("decimal(10,2)"))
    out = tmp_path / "nested.parquet"
    s.write(df, str(out))
    assert not _written_by_giql(out)
    assert spark.read.parquet(str(out)).collect() == df.collect()
    with pytest.raises(Exception, match="giql-parquet cannot write column 'xs' of type array<int>"):
        df.write.format("giql-parquet").mode("overwrite").save(str(tmp_path / "direct"))
    plain = spark.createDataFrame([("chr1", 1)], "chrom string, start bigint")
    with pytest.raises(Exception, match="giql-parquet cannot write compression 'lz4'"):
        plain.write.format("giql-parquet").option("compression", "lz4").mode("overwrite").save(str(tmp_path / "lz4"))
    spark.conf.set("spark.sql.parquet.compression.codec", "lz4")
    try:
        s.write(plain, str(tmp_path / "lz4.parquet"))
        assert not _written_by_giql(tmp_path / "lz4.parquet")
    finally:
        spark.conf.unset("spark.sql.parquet.compression.codec")
    s.write(plain, str(tmp_path / "by_chrom.parquet"), partition_by_chrom=True)
    assert os.path.isdir(tmp_path / "by_chrom.parquet" / "chrom=chr1")


def test_spark_writer_on_request(spark, tmp_path):
    s = gs.Session(spark)
    df = spark.createDataFrame([("chr1", 1)], "chrom string, start bigint")
    spark.conf.set("spark.giql.parquet.writer", "spark")
    try:
        s.write(df, str(tmp_path / "a.parquet"))
    finally:
        spark.conf.unset("spark.giql.parquet.writer")
    assert not _written_by_giql(tmp_path / "a.parquet")


def test_a_failed_write_leaves_no_part_file(spark, tmp_path):
    out = tmp_path / "out.parquet"
    df = spark.range(0, 20_000, 1, 4).select(
        F.when(F.col("id") == 15_000, F.raise_error(F.lit("boom"))).otherwise(F.col("id")).alias("id"))
    with pytest.raises(task_errors(), match="boom"):
        gs.Session(spark).write(df, str(out))
    assert _files(out) == []
    assert not os.path.exists(out / "_temporary") and not os.path.exists(out / "_SUCCESS")


def test_per_row_results_written(spark, tmp_path):
    """gs.count_overlaps written through Session.write: the counts read back, by giql's writer."""
    if REMOTE:
        pytest.skip("the registered example files are read by a classic session here")
    s = gs.Session(spark)
    s.register("peaks", gs.example_path("peaks.bed"))
    s.register("genes", gs.example_path("genes.bed"))
    res = gs.count_overlaps(s.table("peaks"), s.table("genes"))
    s.write(res, str(tmp_path / "counts.parquet"))
    assert _written_by_giql(tmp_path / "counts.parquet")
    assert sorted(spark.read.parquet(str(tmp_path / "counts.parquet")).collect()) == sorted(res.collect())


def test_per_row_names_off_dictionary_and_plain_pages(spark, tmp_path):
    """gs.coverage by the merge over Parquet tables whose name column is dictionary-encoded in
    the first part of each row group and PLAIN after it (a dictionary page that overflows), with
    NULL, empty and non-ASCII names: the operator copies each name off the scan's vectors, the
    writer reads it off the row, and every name and coverage reads back, against an oracle."""
    if REMOTE:
        pytest.skip("the Parquet inputs are local files")
    import numpy as np
    import pyarrow as pa

    def table(n, seed, named):
        rng = np.random.default_rng(seed)
        chrom = np.where(np.arange(n) < n // 2, "chr1", "chr2")
        start = rng.integers(0, 50_000, n)
        t = {"chrom": chrom, "start": start, "end": start + rng.integers(0, 400, n)}
        if named:
            t["name"] = [None if i % 97 == 0 else "" if i % 89 == 0 else f"ü{i}-" + "x" * (i % 40)
                         for i in range(n)]
        t = pa.table(t)
        return t.take(np.lexsort((t["start"].to_numpy(), t["chrom"].to_numpy(zero_copy_only=False))))

    left, right = table(3000, 1, True), table(2000, 2, False)
    # a small dictionary page: each row group's names overflow it and go on in PLAIN pages
    pq.write_table(left, tmp_path / "l.parquet", row_group_size=1000, dictionary_pagesize_limit=8_000,
                   write_batch_size=64, data_page_size=2_000)
    pq.write_table(right, tmp_path / "r.parquet", row_group_size=500)
    s = gs.Session(spark)
    s.register("l", str(tmp_path / "l.parquet"))
    s.register("r", str(tmp_path / "r.parquet"))
    res = gs.coverage(s.table("l"), s.table("r"))
    assert "MergeIntervalJoin" in res._jdf.queryExecution().executedPlan().toString()
    s.write(res, str(tmp_path / "cov.parquet"))
    assert _written_by_giql(tmp_path / "cov.parquet")
    got = sorted((r["chrom"], r["start"], r["end"], r["name"] or "", r["name"] is None, r["coverage"])
                 for r in pq.read_table(str(tmp_path / "cov.parquet")).to_pylist())
    # the oracle: each chromosome's covered bases as a prefix sum
    prefix = {}
    for c in ("chr1", "chr2"):
        mask = np.zeros(51_000, dtype=np.int64)
        for r in right.to_pylist():
            if r["chrom"] == c:
                mask[r["start"]:r["end"]] = 1
        prefix[c] = np.concatenate([[0], np.cumsum(mask)])
    want = sorted((r["chrom"], r["start"], r["end"], r["name"] or "", r["name"] is None,
                   int(prefix[r["chrom"]][r["end"]] - prefix[r["chrom"]][r["start"]]))
                  for r in left.to_pylist())
    assert got == want
    assert sum(w[5] for w in want) > 0 and any(w[4] for w in want) and any(w[3] == "" and not w[4] for w in want)
