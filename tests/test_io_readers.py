"""Tests for giql_spark.io.readers: BED / Parquet / CSV / TSV loading and BED validation."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from giql_spark.io import InputError, detect_format, read_path
from giql_spark.io import readers


@pytest.fixture()
def spark_io(spark):
    return spark


def write(tmp_path, name, lines, gz=False):
    path = tmp_path / name
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def rows(df):
    return [tuple(r) for r in df.collect()]


BED3 = ["chr1\t10\t20", "chr1\t30\t40", "chr2\t0\t5"]
BED6 = [
    "browser position chr1:1-1000",
    "track name=peaks description=test",
    "# a comment",
    "",
    "chr1\t100\t200\tp1\t5.5\t+",
    "chr1\t150\t250\tp2\t0\t-",
    "chrX\t0\t1\tp3\t1000\t.",
]
BED12 = [
    "chr1\t100\t500\tg1\t0\t+\t120\t480\t255,0,0\t2\t50,60,\t0,340,",
    "chr2\t1000\t2000\tg2\t900\t-\t1000\t2000\t0\t1\t1000,\t0,",
]


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "name,fmt",
    [
        ("a.bed", "bed"), ("a.BED", "bed"), ("a.bed.gz", "bed"), ("a.parquet", "parquet"),
        ("a.csv", "csv"), ("a.csv.gz", "csv"), ("a.tsv", "tsv"), ("a.tsv.gz", "tsv"),
    ],
)
def test_detect_format(name, fmt):
    assert detect_format(name) == fmt


@pytest.mark.parametrize("name", ["a.txt", "a.bedgraph", "a.gz", "a"])
def test_detect_format_unknown_lists_accepted(name):
    with pytest.raises(InputError) as err:
        detect_format(name)
    msg = str(err.value)
    assert "\n" not in msg and name in msg
    for ext in (".bed", ".bed.gz", ".parquet", ".csv", ".tsv", ".csv.gz", ".tsv.gz"):
        assert ext in msg


def test_detect_format_parquet_directory(tmp_path):
    # Partitioned layout: the part file sits below a key=value folder.
    part_dir = tmp_path / "dataset" / "chrom=chr1"
    part_dir.mkdir(parents=True)
    pq.write_table(pa.table({"start": [1], "end": [2]}), str(part_dir / "part-0.parquet"))
    assert detect_format(str(tmp_path / "dataset")) == "parquet"
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    with pytest.raises(InputError, match="no .parquet files"):
        detect_format(str(empty))


def test_read_partitioned_parquet_directory(tmp_path, spark_io):
    part_dir = tmp_path / "dataset" / "chrom=chr1"
    part_dir.mkdir(parents=True)
    pq.write_table(pa.table({"start": [1, 7], "end": [2, 9]}), str(part_dir / "part-0.parquet"))
    df, skipped = read_path(spark_io, str(tmp_path / "dataset"))
    assert skipped == 0
    assert sorted(df.columns) == ["chrom", "end", "start"]
    assert sorted((r.chrom, r.start, r.end) for r in df.collect()) == [("chr1", 1, 2), ("chr1", 7, 9)]


def test_missing_file(tmp_path, spark_io):
    path = str(tmp_path / "nope.bed")
    with pytest.raises(InputError, match="file not found: .*nope.bed"):
        read_path(spark_io, path)


def test_bad_arguments(tmp_path, spark_io):
    path = write(tmp_path, "a.bed", BED3)
    with pytest.raises(InputError, match="unknown format"):
        read_path(spark_io, path, format="vcf")
    with pytest.raises(ValueError, match="on_error"):
        read_path(spark_io, path, on_error="ignore")


# ---------------------------------------------------------------- BED happy path


@pytest.mark.parametrize("gz", [False, True])
def test_bed3(tmp_path, spark_io, gz):
    path = write(tmp_path, "a.bed.gz" if gz else "a.bed", BED3, gz=gz)
    df, skipped = read_path(spark_io, path)
    assert skipped == 0
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("chrom", "string"), ("start", "bigint"), ("end", "bigint"),
    ]
    assert rows(df) == [("chr1", 10, 20), ("chr1", 30, 40), ("chr2", 0, 5)]


@pytest.mark.parametrize("gz", [False, True])
def test_bed6_with_headers(tmp_path, spark_io, gz):
    path = write(tmp_path, "peaks.bed.gz" if gz else "peaks.bed", BED6, gz=gz)
    df, skipped = read_path(spark_io, path)
    assert skipped == 0
    assert df.columns == ["chrom", "start", "end", "name", "score", "strand"]
    types = dict((f.name, f.dataType.simpleString()) for f in df.schema.fields)
    assert types == {
        "chrom": "string", "start": "bigint", "end": "bigint",
        "name": "string", "score": "double", "strand": "string",
    }
    assert rows(df) == [
        ("chr1", 100, 200, "p1", 5.5, "+"),
        ("chr1", 150, 250, "p2", 0.0, "-"),
        ("chrX", 0, 1, "p3", 1000.0, "."),
    ]


def test_bed12(tmp_path, spark_io):
    path = write(tmp_path, "genes.bed", BED12)
    df, skipped = read_path(spark_io, path)
    assert skipped == 0
    assert df.columns == list(readers.BED_COLUMNS)
    types = dict((f.name, f.dataType.simpleString()) for f in df.schema.fields)
    for col in ("start", "end", "thickStart", "thickEnd", "blockCount"):
        assert types[col] == "bigint"
    assert types["score"] == "double"
    for col in ("chrom", "name", "strand", "itemRgb", "blockSizes", "blockStarts"):
        assert types[col] == "string"
    assert rows(df)[0] == ("chr1", 100, 500, "g1", 0.0, "+", 120, 480, "255,0,0", 2, "50,60,", "0,340,")
    assert df.count() == 2


def test_bed_dot_score_is_null(tmp_path, spark_io):
    path = write(tmp_path, "dots.bed", ["chr1\t1\t2\tx\t.\t.", "chr1\t3\t4\ty\t7\t+"])
    df, _ = read_path(spark_io, path)
    assert rows(df) == [("chr1", 1, 2, "x", None, "."), ("chr1", 3, 4, "y", 7.0, "+")]


def test_bed_ragged_rows(tmp_path, spark_io):
    # BED6 file where one row lacks the strand and another has an extra field.
    path = write(tmp_path, "ragged.bed", ["chr1\t1\t2\ta\t1\t+", "chr1\t3\t4\tb\t2", "chr1\t5\t6\tc\t3\t-\textra"])
    df, skipped = read_path(spark_io, path)
    assert skipped == 0
    assert df.columns == ["chrom", "start", "end", "name", "score", "strand"]
    assert rows(df) == [
        ("chr1", 1, 2, "a", 1.0, "+"),
        ("chr1", 3, 4, "b", 2.0, None),
        ("chr1", 5, 6, "c", 3.0, "-"),
    ]


def test_bed_only_comments(tmp_path, spark_io):
    path = write(tmp_path, "empty.bed", ["# nothing", "track name=x"])
    df, skipped = read_path(spark_io, path)
    assert (df.columns, df.count(), skipped) == (["chrom", "start", "end"], 0, 0)


def test_bed_crlf_and_explicit_format(tmp_path, spark_io):
    path = tmp_path / "win.txt"
    path.write_bytes(b"#h\r\nchr1\t1\t2\r\nchr2\t3\t4\r\n")
    df, _ = read_path(spark_io, str(path), format="bed")
    assert rows(df) == [("chr1", 1, 2), ("chr2", 3, 4)]


def test_bed_zero_length_interval_is_valid(tmp_path, spark_io):
    path = write(tmp_path, "ins.bed", ["chr1\t5\t5"])
    df, skipped = read_path(spark_io, path)
    assert (rows(df), skipped) == ([("chr1", 5, 5)], 0)


# ---------------------------------------------------------------- BED validation

# (bad line, its physical line number once placed after the BED6 header block, expected message)
HEADER = ["track name=t", "# comment", "", "chr1\t0\t10\ta\t1\t+"]  # bad line goes on line 5
MALFORMED = [
    ("chr1\t500\t100\tb\t1\t+", "start 500 > end 100"),
    ("chr1\t-5\t100\tb\t1\t+", "negative start -5"),
    ("chr1\tabc\t100\tb\t1\t+", "non-integer start 'abc'"),
    ("chr1\t1.5\t100\tb\t1\t+", "non-integer start '1.5'"),
    ("chr1\t1\t1e3\tb\t1\t+", "non-integer end '1e3'"),
    ("chr1\t10", "expected at least 3 tab-separated fields, got 2"),
    ("chr1 10 20", "expected at least 3 tab-separated fields, got 1"),
    ("\t1\t2\tb\t1\t+", "empty chrom"),
]


@pytest.mark.parametrize(
    "bad,reason,gz", [(b, r, False) for b, r in MALFORMED] + [(b, r, True) for b, r in MALFORMED[:2]]
)
def test_bed_malformed_raises(tmp_path, spark_io, bad, reason, gz):
    name = "peaks.bed.gz" if gz else "peaks.bed"
    path = write(tmp_path, name, HEADER + [bad, "chr2\t1\t2\tc\t1\t-"], gz=gz)
    with pytest.raises(InputError) as err:
        read_path(spark_io, path)
    msg = str(err.value)
    assert "\n" not in msg
    assert name in msg
    assert msg.endswith(f"line 5: {reason}")


def test_bed_malformed_reports_first_bad_line(tmp_path, spark_io):
    lines = ["# c"] + ["chr1\t1\t2"] * 5 + ["chr1\t9\t3", "chr1\tx\t3"]
    path = write(tmp_path, "many.bed", lines)
    with pytest.raises(InputError, match=r"many\.bed line 7: start 9 > end 3$"):
        read_path(spark_io, path)


def test_bed_duplicate_bad_lines_locate_first(tmp_path, spark_io):
    path = write(tmp_path, "dup.bed", ["chr1\t1\t2", "chr1\t5\t4", "chr1\t5\t4"])
    with pytest.raises(InputError, match=r"line 2: start 5 > end 4$"):
        read_path(spark_io, path)


@pytest.mark.parametrize("gz", [False, True])
def test_bed_skip_counts_bad_rows(tmp_path, spark_io, gz):
    bad = [b for b, _ in MALFORMED]
    path = write(tmp_path, "mixed.bed.gz" if gz else "mixed.bed", HEADER + bad + ["chr2\t1\t2\tc\t1\t-"], gz=gz)
    df, skipped = read_path(spark_io, path, on_error="skip")
    assert skipped == len(bad)
    assert rows(df) == [("chr1", 0, 10, "a", 1.0, "+"), ("chr2", 1, 2, "c", 1.0, "-")]


def test_bed_skip_with_no_bad_rows(tmp_path, spark_io):
    path = write(tmp_path, "ok.bed", BED3)
    df, skipped = read_path(spark_io, path, on_error="skip")
    assert (skipped, df.count()) == (0, 3)


def test_locate_line_spark_multi_partition(tmp_path, spark_io):
    # The remote-file fallback numbers lines across several input partitions.
    lines = ["# header"] + [f"chr1\t{i}\t{i + 1}" for i in range(1000)]
    lines[900] = "chr1\t9\t1"
    path = write(tmp_path, "big.bed", lines)
    old = spark_io.conf.get("spark.sql.files.maxPartitionBytes")
    spark_io.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    try:
        assert spark_io.read.text(path).rdd.getNumPartitions() > 1
        assert readers._locate_line_spark(spark_io, path, "chr1\t9\t1") == 901
        assert readers._locate_line_spark(spark_io, path, "chr1\t999\t1000") == 1001
    finally:
        spark_io.conf.set("spark.sql.files.maxPartitionBytes", old)


# ---------------------------------------------------------------- Parquet / CSV / TSV


def test_parquet_round_trip(tmp_path, spark_io):
    table = pa.table(
        {"chrom": ["chr1", "chr2"], "start": pa.array([1, 10], pa.int64()),
         "end": pa.array([5, 20], pa.int64()), "name": ["a", None]}
    )
    out = str(tmp_path / "iv.parquet")
    pq.write_table(table, out)
    df, skipped = read_path(spark_io, out)
    assert skipped == 0
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("chrom", "string"), ("start", "bigint"), ("end", "bigint"), ("name", "string"),
    ]
    assert rows(df) == [("chr1", 1, 5, "a"), ("chr2", 10, 20, None)]


@pytest.mark.parametrize("fmt,sep,gz", [("csv", ",", False), ("tsv", "\t", False), ("csv", ",", True)])
def test_delimited_round_trip(tmp_path, spark_io, fmt, sep, gz):
    lines = [sep.join(["chrom", "start", "end", "score"]), sep.join(["chr1", "1", "5", "0.5"]),
             sep.join(["chr2", "10", "20", "2.0"])]
    path = write(tmp_path, f"iv.{fmt}" + (".gz" if gz else ""), lines, gz=gz)
    df, skipped = read_path(spark_io, path)
    assert skipped == 0
    assert df.columns == ["chrom", "start", "end", "score"]
    types = dict((f.name, f.dataType.simpleString()) for f in df.schema.fields)
    assert types["chrom"] == "string" and types["score"] == "double"
    assert types["start"] in ("int", "bigint") and types["end"] in ("int", "bigint")
    assert rows(df) == [("chr1", 1, 5, 0.5), ("chr2", 10, 20, 2.0)]


def test_csv_no_header_custom_sep(tmp_path, spark_io):
    path = write(tmp_path, "iv.csv", ["chr1;1;5", "chr2;10;20"])
    df, _ = read_path(spark_io, path, header=False, sep=";")
    assert df.count() == 2 and len(df.columns) == 3
    assert rows(df)[1] == ("chr2", 10, 20)


def _many_types():
    import datetime
    import decimal

    return pa.table({
        "chrom": pa.array(["chr1", None]).dictionary_encode(),
        "start": pa.array([1, 2], pa.int32()), "end": pa.array([5, 9], pa.uint32()),
        "small": pa.array([1, -1], pa.int8()), "big": pa.array([2**40, None], pa.uint64()),
        "score": pa.array([0.5, None], pa.float32()), "ok": [True, False],
        "when": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5)] * 2, pa.timestamp("us", tz="UTC")),
        "naive": pa.array([datetime.datetime(2024, 1, 2)] * 2, pa.timestamp("ms")),
        "day": pa.array([datetime.date(2024, 1, 2)] * 2), "amount": pa.array([decimal.Decimal("1.25")] * 2),
        "raw": [b"x", None], "tags": [["a"], []], "pair": [{"x": 1, "y": "s"}, None],
    })


def test_parquet_schema_from_footer_matches_spark_inference(tmp_path, spark_io):
    """The schema read from the footer on the driver (no Spark job) is the one
    Spark infers, for pyarrow files of many types, a Spark-written folder and a
    single Spark part file; layouts it does not answer fall back to Spark."""
    files = {"arrow.parquet": None}
    pq.write_table(_many_types(), str(tmp_path / "arrow.parquet"))
    spark_io.createDataFrame([("chr1", 1, 2, 1.5)], "chrom string, start long, end int, s double") \
        .write.parquet(str(tmp_path / "spark_dir"))
    files["spark_dir"] = None
    part = next((tmp_path / "spark_dir").glob("part-*.parquet"))
    files[str(part.relative_to(tmp_path))] = None
    answered = 0
    for name in files:
        path = str(tmp_path / name)
        inferred = spark_io.read.parquet(path).schema
        footer = readers._footer_schema(spark_io, path)
        if footer is not None:
            answered += 1
            assert footer == inferred, name
        df, _ = read_path(spark_io, path)
        assert df.schema == inferred, name
        assert df.count() == spark_io.read.parquet(path).count()
    if not _remote(spark_io):
        assert answered == len(files)
    # a partitioned folder is Spark's to discover
    part_dir = tmp_path / "parted" / "k=1"
    part_dir.mkdir(parents=True)
    pq.write_table(pa.table({"start": [1]}), str(part_dir / "p.parquet"))
    assert readers._footer_schema(spark_io, str(tmp_path / "parted")) is None
    assert read_path(spark_io, str(tmp_path / "parted"))[0].columns == ["start", "k"]


def test_parquet_registration_runs_no_spark_job(tmp_path, spark_io):
    if _remote(spark_io):
        pytest.skip("job counts are read from the classic SparkContext")
    out = str(tmp_path / "iv.parquet")
    pq.write_table(pa.table({"chrom": ["chr1"], "start": [1], "end": [2]}), out)
    sc = spark_io.sparkContext
    sc.setJobGroup("giql-register", "registration")
    try:
        read_path(spark_io, out)
        assert list(sc.statusTracker().getJobIdsForGroup("giql-register")) == []
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


def _remote(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")
