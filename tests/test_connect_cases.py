"""Results that stand alone, and statistics through public APIs.

These run in the main suite (classic PySpark) and again on Spark Connect
(tests/test_connect.py), where each of them once failed: a result read a
per-thread scratch view by name, so a later call on the same thread changed
it, and the planner read no statistics at all.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import giql_spark as gs

SCHEMA = "chrom string, start bigint, `end` bigint, name string"


def _frames(spark, chrom: str, n: int, schema: str = SCHEMA):
    x = spark.createDataFrame([(chrom, i * 10, i * 10 + 15, f"x{i}") for i in range(n)], schema)
    y = spark.createDataFrame([(chrom, i * 7, i * 7 + 5, f"y{i}") for i in range(n)], schema)
    return x, y


def _pairs(x, y) -> Counter:
    """Brute force: rows of x and y that overlap (same chromosome, half-open)."""
    xs, ys = x.collect(), y.collect()
    return Counter((a[3], b[3]) for a in xs for b in ys if a[0] == b[0] and a[1] < b[2] and b[1] < a[2])


@pytest.mark.parametrize("strategy", ["binned", "broadcast", "sweep", "naive"])
def test_two_calls_on_one_thread_keep_their_own_rows(spark, strategy):
    x1, y1 = _frames(spark, "chr1", 60)
    x2, y2 = _frames(spark, "chr2", 6)
    first = gs.overlap(x1, y1, how="inner", strategy=strategy)
    counts = gs.count_overlaps(x1, y1, strategy=strategy)
    gs.overlap(x2, y2, how="inner", strategy=strategy).collect()
    gs.count_overlaps(x2, y2, strategy=strategy).collect()
    # A second call with another schema once made the first fail with FIELD_NOT_FOUND.
    other = "c string, s bigint, e bigint, label string"
    x3, y3 = _frames(spark, "chr3", 5, other)
    gs.overlap(x3, y3, how="inner", strategy=strategy, cols1=("c", "s", "e"), cols2=("c", "s", "e")).collect()
    got = Counter((r["name"], r["name_"]) for r in first.collect())
    assert got == _pairs(x1, y1) and sum(got.values()) > 60
    expected = Counter(a for a, _ in _pairs(x1, y1).elements())
    assert {r["name"]: r["count"] for r in counts.collect()} == {f"x{i}": expected[f"x{i}"] for i in range(60)}


def test_per_row_operations_by_default(spark):
    """count_overlaps, coverage and nearest as a user calls them (the JVM operators where the
    session has the extension, on Connect too), against brute force."""
    x, y = _frames(spark, "chr1", 30)
    xs, ys = x.collect(), y.collect()
    counts = {r["name"]: r["count"] for r in gs.count_overlaps(x, y).collect()}
    assert counts == {a[3]: sum(a[1] < b[2] and b[1] < a[2] for b in ys) for a in xs}
    covered = {r["name"]: r["coverage"] for r in gs.coverage(x, y).collect()}
    assert covered == {a[3]: len({p for b in ys for p in range(max(a[1], b[1]), min(a[2], b[2]))}) for a in xs}
    near = {r["name"]: r["distance"] for r in gs.nearest(x, y).collect()}
    assert near == {a[3]: min(max(0, a[1] - b[2], b[1] - a[2]) for b in ys) for a in xs}


def test_a_result_keeps_the_table_it_was_planned_on(spark):
    s = gs.Session(spark)
    x1, y1 = _frames(spark, "chr1", 40)
    s.register("x", x1)
    s.register("y", y1)
    query = "SELECT a.name, b.name AS g FROM x a JOIN y b ON a.interval INTERSECTS b.interval"
    result = s.sql(query)
    scan = s.sql("SELECT name FROM x WHERE start < 100")
    x2, y2 = _frames(spark, "chr2", 3)
    s.register("x", x2)
    s.register("y", y2)
    assert Counter(map(tuple, result.collect())) == _pairs(x1, y1)
    assert sorted(r["name"] for r in scan.collect()) == sorted(f"x{i}" for i in range(10))
    assert Counter(map(tuple, s.sql(query).collect())) == _pairs(x2, y2)


def test_no_views_pile_up(spark):
    s = gs.Session(spark)
    x, y = _frames(spark, "chr1", 20)
    s.register("x", x)
    s.register("y", y)
    for strategy in ("binned", "broadcast", "sweep"):
        s.options["strategy"] = strategy
        s.sql("SELECT COUNT(*) FROM x a JOIN y b ON a.interval INTERSECTS b.interval").collect()
        gs.overlap(x, y, strategy=strategy).collect()
    views = {r["viewName"] for r in spark.sql("SHOW VIEWS").collect()}
    assert {"x", "y"} <= views
    assert not [v for v in views if v.startswith(("__giql", "__gs", "_pyspark"))], views


@pytest.fixture()
def parquet_sides(tmp_path):
    paths = []
    for side, width in (("l", 300), ("r", 700)):
        n = 20_000
        start = pa.array([(i * 997) % 5_000_000 for i in range(n)], pa.int64())
        table = pa.table({"chrom": pa.array(["chr1", "chr2"] * (n // 2)), "start": start,
                          "end": pa.array([v + width for v in start.to_pylist()], pa.int64())})
        path = str(tmp_path / f"{side}.parquet")
        pq.write_table(table, path, row_group_size=4_000)
        paths.append(path)
    return paths


def test_statistics_come_from_footers(spark, parquet_sides):
    """On Spark Connect the planner once read nothing and fell back to rules."""
    s = gs.Session(spark)
    s.register("l", parquet_sides[0])
    s.register("r", parquet_sides[1])
    plan = s.explain("SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval")
    assert plan.count("tier 2: 20,000 rows") == 2, plan
    assert "Parquet footers: 1 file(s), 5 row group(s)" in plan
    assert "widths median 300" in plan and "widths median 700" in plan
    assert "lowest estimated cost" in plan and "not known" not in plan


def test_missing_statistics_are_named(spark, parquet_sides):
    s = gs.Session(spark)
    s.register("x", spark.read.parquet(parquet_sides[0]).limit(5))
    s.register("y", parquet_sides[1])
    plan = s.explain("SELECT COUNT(*) FROM x a JOIN y b ON a.interval INTERSECTS b.interval")
    assert "not known: footers: the side's plan has a GlobalLimit" in plan
    assert "tier 2: 20,000 rows" in plan  # the other side


def test_in_memory_sides_report_their_rows(spark):
    s = gs.Session(spark)
    x, y = _frames(spark, "chr1", 30)
    s.register("x", x)
    s.register("y", y)
    plan = s.explain("SELECT COUNT(*) FROM x a JOIN y b ON a.interval INTERSECTS b.interval")
    assert plan.count("30 rows") >= 2 and "size unknown" not in plan


def test_parquet_written_by_giqls_writer(spark, tmp_path):
    """Session.write's Parquet reaches the giql-parquet data source through the session (on
    Spark Connect: the server's, found by its short name); the rows read back."""
    x, _ = _frames(spark, "chr1", 40)
    out = str(tmp_path / "x.parquet")
    gs.Session(spark).write(x, out)
    files = sorted(Path(out).glob("*.parquet"))
    assert files and all(pq.ParquetFile(f).metadata.created_by.startswith("giql-spark") for f in files)
    assert sorted(spark.read.parquet(out).collect()) == sorted(x.collect())


def _mount(spark, folder) -> str:
    """A viewfs:// URI of ``folder``: a mount table set as a session conf, which every Hadoop
    configuration the session makes (Spark's readers', giql-spark's) takes in, on Connect too."""
    import uuid

    name = "c" + uuid.uuid4().hex[:10]
    spark.conf.set(f"fs.viewfs.mounttable.{name}.link./data", Path(folder).as_uri())
    return f"viewfs://{name}/data"


def test_statistics_through_viewfs_are_read_where_spark_reads(spark, parquet_sides):
    """Footers at a URI only the JVM opens: read through the driver's JVM (classic) or a task
    on the server (Connect), never the client's disk; the same statistics as the local path."""
    root = _mount(spark, Path(parquet_sides[0]).parent)
    s = gs.Session(spark)
    s.register("l", f"{root}/{Path(parquet_sides[0]).name}")
    s.register("r", f"{root}/{Path(parquet_sides[1]).name}")
    plan = s.explain("SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval")
    assert plan.count("tier 2: 20,000 rows") == 2, plan
    assert "Parquet footers on viewfs://: 1 file(s), 5 row group(s)" in plan
    assert "widths median 300" in plan and "not known" not in plan


def test_genomic_files_read_by_the_jvm_reader(spark, tmp_path):
    """VCF and FASTA through giql-spark's JVM reader: on Connect, inside the server."""
    vcf = tmp_path / "v.vcf"
    vcf.write_text("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                   + "".join(f"chr1\t{10 * i + 1}\tv{i}\tA\tC\t.\tPASS\t.\n" for i in range(50)))
    fa = tmp_path / "g.fa"
    fa.write_text(">chr1\n" + "ACGT" * 50 + "\n")
    root = _mount(spark, tmp_path)
    s = gs.Session(spark)
    for path in (str(vcf), f"{root}/v.vcf"):
        df = s.read(path)
        assert df.count() == 50 and df.where("start > 250").count() == 25
    for path in (str(fa), f"{root}/g.fa"):
        assert [r.seq for r in s.read(path).collect()] == ["ACGT" * 50]
    s.register("v", f"{root}/v.vcf")
    assert s.sql("SELECT COUNT(*) FROM v WHERE interval INTERSECTS 'chr1:100-200'").collect()[0][0] == 10
