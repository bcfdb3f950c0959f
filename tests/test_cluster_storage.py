"""Data where clusters keep it: every format read, planned and written at URIs Python cannot open.

Two real file systems stand in for a cluster's: Hadoop's ``viewfs://`` (a mount table onto a local
folder, inside PySpark's Hadoop), which only the JVM opens, as with ``hdfs://`` or ``s3a://``;
and a local S3 server (moto in server mode) read through fsspec/s3fs, as a local session or a
Connect client reads ``s3://``. Each format reads the same rows as from the local file, the
planner reads the same statistics and picks the same strategy, and ``Session.write`` writes there.
"""

from __future__ import annotations

import re
import uuid

import pytest
from conftest import needs_classic
from genomic_files import run, tool, write

from giql_spark.io import InputError

pytestmark = pytest.mark.usefixtures("s3")


@pytest.fixture()
def viewfs(spark, tmp_path):
    """(a viewfs:// URI of ``tmp_path``, ``tmp_path``): a mount table of the session's Hadoop."""
    needs_classic(spark)
    name = "m" + uuid.uuid4().hex[:10]
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{name}.link./data", tmp_path.as_uri())
    return f"viewfs://{name}/data", tmp_path


def _sorted_sides(spark, folder, n=30_000):
    for side, step in (("a", 37), ("b", 53)):
        (spark.range(n).selectExpr(f"concat('chr', cast(id % 3 + 1 as string)) AS chrom",
                                   f"id * {step} AS start", f"id * {step} + 40 + id % 17 AS `end`")
         .repartition(1).sortWithinPartitions("chrom", "start")
         .write.mode("overwrite").parquet(str(folder / f"{side}.parquet")))


def _plan_lines(text: str) -> list[str]:
    """EXPLAIN's statistics and choice lines, without timings, file names or file systems."""
    keep = []
    for line in text.splitlines():
        if "optimizer time" in line or "Spark physical plan" in line:
            continue
        if re.search(r"statistics|strategy|chromosomes|widths|rows|\* |- ", line) and "Parquet" not in line[:3]:
            keep.append(re.sub(r" on viewfs://", "", line))
        if line.startswith("Spark SQL"):
            break
    return keep


def test_the_planner_reads_the_same_statistics_through_viewfs(session, viewfs):
    uri, folder = viewfs
    _sorted_sides(session.spark, folder)
    q = "SELECT COUNT(*) FROM {a} x JOIN {b} y ON x.interval INTERSECTS y.interval"
    for name, root in (("l", str(folder)), ("v", uri)):
        session.register(f"{name}a", f"{root}/a.parquet")
        session.register(f"{name}b", f"{root}/b.parquet")
    local = session.explain(q.format(a="la", b="lb"))
    remote = session.explain(q.format(a="va", b="vb"))
    assert "Parquet footers on viewfs://" in remote and "not known: footers" not in remote
    assert "strategy: jvm_merge" in remote, remote
    assert _plan_lines(local) == _plan_lines(remote)
    counts = [session.sql(q.format(a=f"{n}a", b=f"{n}b")).collect()[0][0] for n in ("l", "v")]
    assert counts[0] == counts[1] > 0


@pytest.fixture(scope="module")
def genomic_folder(tmp_path_factory):
    """One file of each genomic format, with its index, written by the reference tools."""
    samtools, bcftools, bgzip, tabix = tool("samtools"), tool("bcftools"), tool("bgzip"), tool("tabix")
    d = tmp_path_factory.mktemp("genomic")
    seq = "".join("ACGT"[(i * 7 + i // 3) % 4] for i in range(30_000))
    write(d / "ref.fa", ">chr1\n" + "\n".join(seq[i:i + 60] for i in range(0, len(seq), 60)) + "\n>chr2\nACGTNNACGT\n")
    run(samtools, "faidx", str(d / "ref.fa"))
    vcf = ["##fileformat=VCFv4.2", "##contig=<ID=chr1,length=30000>", "##contig=<ID=chr2,length=10>",
           '##INFO=<ID=DP,Number=1,Type=Integer,Description="d">', "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"]
    vcf += [f"chr1\t{100 + 13 * i}\tv{i}\t{seq[99 + 13 * i]}\tN\t{i % 60}\tPASS\tDP={i}" for i in range(1500)]
    write(d / "v.vcf", "\n".join(vcf) + "\n")
    run(bgzip, "-f", str(d / "v.vcf"))
    run(tabix, "-p", "vcf", str(d / "v.vcf.gz"))
    run(bcftools, "view", "-O", "b", "-o", str(d / "v.bcf"), str(d / "v.vcf.gz"))
    run(bcftools, "index", str(d / "v.bcf"))
    sam = ["@HD\tVN:1.6\tSO:coordinate", "@SQ\tSN:chr1\tLN:30000", "@SQ\tSN:chr2\tLN:10"]
    sam += [f"r{i}\t{16 * (i % 2)}\tchr1\t{1 + 17 * i}\t{i % 61}\t40M\t*\t0\t0\t{seq[17 * i:17 * i + 40]}\t{'I' * 40}\tNM:i:{i % 3}"
            for i in range(1500)]
    sam += ["u1\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII"]
    write(d / "r.sam", "\n".join(sam) + "\n")
    run(samtools, "view", "-b", "-o", str(d / "r.bam"), str(d / "r.sam"))
    run(samtools, "index", str(d / "r.bam"))
    run(samtools, "view", "-C", "-T", str(d / "ref.fa"), "-o", str(d / "r.cram"), str(d / "r.sam"))
    run(samtools, "index", str(d / "r.cram"))
    gff = ["##gff-version 3"] + [f"chr1\tsrc\tgene\t{10 + 9 * i}\t{30 + 9 * i}\t.\t{'+-'[i % 2]}\t.\tID=g{i};Name=n{i}"
                                 for i in range(800)]
    write(d / "g.gff3", "\n".join(gff) + "\n")
    gtf = [f'chr1\tsrc\texon\t{10 + 9 * i}\t{30 + 9 * i}\t.\t+\t.\tgene_id "g{i}"; transcript_id "t{i}";' for i in range(800)]
    write(d / "g.gtf", "\n".join(gtf) + "\n")
    return d


FILES = [("v.vcf.gz", {}), ("v.bcf", {}), ("r.bam", {}), ("r.sam", {}), ("g.gff3", {}), ("g.gtf", {}),
         ("ref.fa", {"chunk_size": 7000, "partition_size": 14000})]


def _rows(df) -> list[str]:
    return sorted(repr(tuple(r)) for r in df.collect())


def test_every_format_reads_the_same_rows_through_viewfs(session, genomic_folder, spark):
    needs_classic(spark)
    name = "g" + uuid.uuid4().hex[:10]
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{name}.link./data",
                                                      genomic_folder.as_uri())
    for f, options in FILES + [("r.cram", {"reference": "REF"})]:
        local_options = {k: str(genomic_folder / "ref.fa") if v == "REF" else v for k, v in options.items()}
        remote_options = {k: f"viewfs://{name}/data/ref.fa" if v == "REF" else v for k, v in options.items()}
        local = session.read(str(genomic_folder / f), **local_options)
        remote = session.read(f"viewfs://{name}/data/{f}", **remote_options)
        assert local.schema == remote.schema, f
        assert _rows(local) == _rows(remote), f


def test_every_format_reads_the_same_rows_from_s3(session, genomic_folder, s3):
    import fsspec

    fs = fsspec.filesystem("s3")
    prefix = f"{s3}/{uuid.uuid4().hex[:8]}"
    for p in genomic_folder.iterdir():
        fs.put_file(str(p), f"{prefix}/{p.name}")
    for f, options in FILES + [("r.cram", {"reference": str(genomic_folder / "ref.fa")})]:
        local = session.read(str(genomic_folder / f), **options)
        remote = session.read(f"{prefix}/{f}", **options)
        assert local.schema == remote.schema, f
        assert _rows(local) == _rows(remote), f


def test_session_write_to_viewfs_and_to_s3(session, viewfs, s3):
    uri, folder = viewfs
    df = session.spark.createDataFrame([("chr1", 10, 20, "a", 1.0, "+"), ("chr2", 5, 9, "b", 2.0, "-")],
                                       "chrom string, start long, `end` long, name string, score double, strand string")
    want = sorted(tuple(r) for r in df.collect())
    for root in (uri, f"{s3}/{uuid.uuid4().hex[:8]}"):
        session.write(df, f"{root}/out.parquet")
        assert sorted(tuple(r) for r in session.read(f"{root}/out.parquet").collect()) == want
        session.write(df, f"{root}/one.bed", single_file=True)
        assert sorted(tuple(r) for r in session.read(f"{root}/one.bed").collect()) == want
        with pytest.raises(InputError, match="output already exists"):
            session.write(df, f"{root}/one.bed", single_file=True)
        session.write(df, f"{root}/one.bed", single_file=True, mode="overwrite")
    assert (folder / "one.bed").is_file() and not any(p.name.endswith(".tmp") for p in folder.iterdir())


def test_missing_files_are_named_in_one_line(session, viewfs, s3):
    uri, folder = viewfs
    for path in (f"{uri}/nope.vcf.gz", f"{s3}/nope.bam", f"{uri}/nope.parquet"):
        with pytest.raises(InputError, match=f"input file not found: {re.escape(path)}"):
            session.read(path)
    write(folder / "x.vcf", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n")
    with pytest.raises(InputError, match=f"index file not found: {re.escape(uri)}/x.vcf.tbi"):
        session.read(f"{uri}/x.vcf", index=f"{uri}/x.vcf.tbi")


def test_big_files_split_inside_chromosomes_through_viewfs(session, viewfs):
    """A bgzipped VCF without an index and a BAM with one, through viewfs://: more tasks than
    chromosomes, the same rows as bcftools and samtools print."""
    samtools, bcftools, bgzip = tool("samtools"), tool("bcftools"), tool("bgzip")
    uri, folder = viewfs
    vcf = ["##fileformat=VCFv4.2", "##contig=<ID=chr1>", "##contig=<ID=chr2>",
           "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"]
    vcf += [f"chr{1 + i // 15000}\t{1 + 7 * i}\tv{i}\tA\tC\t.\tPASS\t." for i in range(30000)]
    write(folder / "n.vcf", "\n".join(vcf) + "\n")
    run(bgzip, "-f", str(folder / "n.vcf"))
    sam = ["@HD\tVN:1.6\tSO:coordinate", "@SQ\tSN:chr1\tLN:1000000", "@SQ\tSN:chr2\tLN:1000000"]
    sam += [f"r{i}\t0\tchr{1 + i // 15000}\t{1 + 31 * (i % 15000)}\t30\t20M\t*\t0\t0\t{'ACGT' * 5}\t{'I' * 20}"
            for i in range(30000)]
    write(folder / "r.sam", "\n".join(sam) + "\n")
    run(samtools, "view", "-b", "-o", str(folder / "r.bam"), str(folder / "r.sam"))
    run(samtools, "index", str(folder / "r.bam"))
    want_vcf = sorted(run(bcftools, "query", "-f", "%CHROM:%POS:%ID\n", str(folder / "n.vcf.gz")).split())
    want_bam = sorted(ln.split("\t")[0] for ln in run(samtools, "view", str(folder / "r.bam")).splitlines())
    spark = session.spark
    key = "spark.sql.files.maxPartitionBytes"
    spark.conf.set(key, str(40_000))
    try:
        v = session.read(f"{uri}/n.vcf.gz")
        b = session.read(f"{uri}/r.bam")
        assert v.rdd.getNumPartitions() > 2 and b.rdd.getNumPartitions() > 2
        assert sorted(f"{r.chrom}:{r.start}:{r.id}" for r in v.collect()) == want_vcf
        assert sorted(r.qname for r in b.collect()) == want_bam
    finally:
        spark.conf.unset(key)
