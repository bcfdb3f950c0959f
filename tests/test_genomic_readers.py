"""The JVM genomic readers (giql-genomic): records read back as written, across splits.

Generated VCF, SAM, GFF3 and GTF files (positions up to 2^40, every optional field missing or
present, odd but valid headers) are read back equal to what was written, whole and cut into many
splits (plain text by byte offsets, BGZF with small blocks so records straddle blocks and
splits, plain gzip as one split); BAM and indexed files written by samtools, bcftools, bgzip and
tabix are read back equal to what those tools print; a region is read through the index.
"""

from __future__ import annotations

import contextlib
import gzip
import os

import pytest
from genomic_files import (bgzf, f32, gff_file, gff_rows, run, sam_file, sam_rows, scan_metric, tool, vcf_file,
                           vcf_rows, write)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from giql_spark.io import InputError

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
COMPRESSIONS = st.sampled_from(["plain", "bgzf", "gzip"])


@contextlib.contextmanager
def split_bytes(spark, n: int):
    """Spark's maxPartitionBytes set to ``n`` (many small splits) for the block's reads."""
    key = "spark.sql.files.maxPartitionBytes"
    old = spark.conf.get(key, None)
    spark.conf.set(key, str(n))
    try:
        yield
    finally:
        if old is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, old)


@SETTINGS
@given(f=vcf_file(), comp=COMPRESSIONS, split=st.sampled_from([1 << 20, 97, 301]), block=st.sampled_from([50, 4096]))
def test_vcf_records_read_back_as_written(session, tmp_path_factory, f, comp, split, block):
    text, rows, _ = f
    path = write(tmp_path_factory.mktemp("vcf") / ("x.vcf" + {"plain": "", "gzip": ".gz", "bgzf": ".gz"}[comp]),
                 text, comp, block)
    with split_bytes(session.spark, split):
        df = session.read(path)
        assert vcf_rows(df) == sorted(rows, key=repr)
        if comp != "gzip" and split < 1000 and len(text) > 3 * split:
            assert df.rdd.getNumPartitions() > 1


@SETTINGS
@given(f=vcf_file(samples=2))
def test_vcf_genotypes(session, tmp_path_factory, f):
    text, rows, genotypes = f
    path = write(tmp_path_factory.mktemp("vcf") / "g.vcf", text)
    got = session.read(path, samples="*").collect()
    by_pos = {}
    for r in got:
        by_pos.setdefault((r.chrom, r.start, r.ref), []).append(r)
    for row, gts in zip(rows, genotypes):
        match = by_pos[(row[0], row[1], row[4])]
        assert any(_genotypes(r) == gts for r in match), (gts, [_genotypes(r) for r in match])


def _genotypes(r):
    out = []
    for s in r.samples:
        gt = s.GT
        if gt is None:
            text = "."
        else:
            alleles = ["." if a is None else str(a) for a in gt.allele]
            seps = ["|" if p else "/" for p in gt.phased[1:]]
            text = alleles[0] + "".join(x + a for x, a in zip(seps, alleles[1:]))
        out.append((text, s.DP))
    return out


@SETTINGS
@given(f=sam_file(), comp=COMPRESSIONS, split=st.sampled_from([1 << 20, 113]))
def test_sam_records_read_back_as_written(session, tmp_path_factory, f, comp, split):
    text, rows = f
    path = write(tmp_path_factory.mktemp("sam") / ("x.sam" + ("" if comp == "plain" else ".gz")), text, comp, 200)
    with split_bytes(session.spark, split):
        assert sam_rows(session.read(path)) == sorted(rows, key=repr)


@SETTINGS
@given(f=gff_file(), comp=COMPRESSIONS, split=st.sampled_from([1 << 20, 89]))
def test_gff_records_read_back_as_written(session, tmp_path_factory, f, comp, split):
    text, rows = f
    path = write(tmp_path_factory.mktemp("gff") / ("x.gff3" + ("" if comp == "plain" else ".gz")), text, comp, 150)
    with split_bytes(session.spark, split):
        assert gff_rows(session.read(path)) == sorted(rows, key=repr)


@SETTINGS
@given(f=gff_file(gtf=True))
def test_gtf_records_read_back_as_written(session, tmp_path_factory, f):
    text, rows = f
    path = write(tmp_path_factory.mktemp("gtf") / "x.gtf", text)
    assert gff_rows(session.read(path)) == sorted(rows, key=repr)


# ---------------------------------------------------------------- big files, many splits


def _big_vcf(n: int, long_every: int = 0) -> tuple[str, list]:
    header = "##fileformat=VCFv4.2\n" + '##INFO=<ID=LS,Number=.,Type=String,Description="x">\n'
    header += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
    lines, keys = [], []
    for i in range(n):
        chrom = ("chr1", "chr2", "chr10")[i * 3 // n]
        pos = 1000 + 37 * i
        info = "LS=" + ",".join(["x" * 90] * 1200) if long_every and i % long_every == 0 else "."
        lines.append(f"{chrom}\t{pos}\tv{i}\tA\tC\t{i % 50}\tPASS\t{info}")
        keys.append((chrom, pos, f"v{i}"))
    return header + "\n".join(lines) + "\n", keys


def test_bgzf_vcf_without_an_index_is_read_by_many_tasks_inside_chromosomes(session, tmp_path):
    """Lines longer than a block (108 kB) and splits far smaller than a chromosome: every record
    read once, by the split it starts in."""
    text, keys = _big_vcf(6000, long_every=500)
    path = write(tmp_path / "big.vcf.gz", text, "bgzf", 65280)
    with split_bytes(session.spark, os.path.getsize(path) // 40):
        df = session.read(path)
        parts = df.rdd.getNumPartitions()
        got = sorted((r.chrom, r.start, r.id) for r in df.select("chrom", "start", "id").collect())
    assert parts > 10  # three chromosomes, many more tasks
    assert got == sorted(keys)


def test_bgzip_and_tabix_written_vcf_split_and_region(session, tmp_path):
    bgzip, tabix, bcftools = tool("bgzip"), tool("tabix"), tool("bcftools")
    text, keys = _big_vcf(20000)
    plain = write(tmp_path / "t.vcf", text)
    run(bgzip, "-f", plain)
    path = plain + ".gz"
    run(tabix, "-p", "vcf", path)
    want = [tuple(line.split("\t")) for line in run(bcftools, "query", "-f", "%CHROM\t%POS\t%ID\n", path).splitlines()]
    with split_bytes(session.spark, os.path.getsize(path) // 10):
        df = session.read(path)
        assert df.rdd.getNumPartitions() > 3
        got = [(r.chrom, str(r.start), r.id) for r in df.select("chrom", "start", "id").collect()]
    assert sorted(got) == sorted(want)
    # a region: only the index's chunks for it are decompressed
    region = df.where("chrom = 'chr2' AND start <= 300000 AND `end` >= 280000")
    rows = sorted((r.chrom, r.start) for r in region.collect())
    assert rows == sorted((c, p) for c, p, _ in keys if c == "chr2" and 280000 <= p <= 300000) and rows
    decoded = scan_metric(region, "decodedRecords")
    assert len(rows) <= decoded < 2000, decoded  # of 20,000
    plan = region._jdf.queryExecution().executedPlan().toString()
    assert "region chr2:280000-300000 read through the index" in plan
    # the same region written in GIQL: the 1-based table's `start - 1 < x` folds to a filter Spark pushes
    session.register("tv", path)
    giql = session.sql("SELECT id FROM tv WHERE interval INTERSECTS 'chr2:279999-300000'")
    assert len(giql.collect()) == len(rows)
    assert scan_metric(giql, "decodedRecords") < 2000


def test_bam_written_by_samtools_split_by_its_index_and_read_by_region(session, tmp_path):
    samtools = tool("samtools")
    refs = ["chr1", "chr2", "chr3"]
    lines = ["@HD\tVN:1.6\tSO:coordinate"] + [f"@SQ\tSN:{r}\tLN:10000000" for r in refs]
    for c, ref in enumerate(refs):
        for i in range(8000):
            lines.append(f"r{c}_{i}\t{16 if i % 3 else 0}\t{ref}\t{100 + 50 * i}\t{i % 61}\t30M2D20M\t=\t{400 + 50 * i}\t"
                         f"{300 + i}\t{'ACGT' * 12 + 'AC'}\t{'I' * 50}\tNM:i:{i % 7}\tRG:Z:g{c}\tXF:f:{i / 4}")
    lines += [f"u{i}\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII" for i in range(300)]
    sam = write(tmp_path / "r.sam", "\n".join(lines) + "\n")
    bam = str(tmp_path / "r.bam")
    run(samtools, "view", "-b", "-o", bam, sam)
    run(samtools, "index", bam)
    want = sorted(run(samtools, "view", bam).splitlines())
    with split_bytes(session.spark, os.path.getsize(bam) // 12):
        df = session.read(bam)
        assert df.rdd.getNumPartitions() > 6  # more than one task per chromosome
        got = sorted(
            "\t".join([r.qname, str(r.flag), r.chrom or "*", str(r.start or 0), str(r.mapq), r.cigar or "*",
                       "=" if r.rnext is not None and r.rnext == r.chrom else (r.rnext or "*"), str(r.pnext or 0),
                       str(r.tlen), r.seq, r.qual]
                      + ([f"NM:i:{r.tags.NM}", f"RG:Z:{r.tags.RG}", f"XF:f:{r.tags.XF:g}"] if r.tags.RG else []))
            for r in df.collect())
    assert got == want
    region = df.where("chrom = 'chr3' AND start < 2000 AND `end` > 1000")
    hits = region.count()
    assert hits == sum(1 for i in range(8000) if 100 + 50 * i < 2000 and 100 + 50 * i + 51 > 1000)
    assert scan_metric(region, "decodedRecords") < 2000


def test_gff_fasta_section_across_splits(session, tmp_path):
    """Splits that start inside the trailing FASTA section read no records from it."""
    recs = [f"chr1\tsrc\tgene\t{10 + i}\t{20 + i}\t.\t+\t.\tID=g{i}" for i in range(300)]
    fasta = ">chr1\n" + "\n".join("ACGT" * 20 for _ in range(400)) + "\n"
    path = write(tmp_path / "f.gff3", "##gff-version 3\n" + "\n".join(recs) + "\n##FASTA\n" + fasta)
    with split_bytes(session.spark, 512):
        df = session.read(path)
        assert df.rdd.getNumPartitions() > 20
        assert sorted(r.attributes.ID for r in df.collect()) == sorted(f"g{i}" for i in range(300))


# ---------------------------------------------------------------- what the issue's files showed


def test_positions_past_2_31_read_as_written(session, tmp_path):
    big = 10_009_999_919
    vcf = write(tmp_path / "long.vcf", "##fileformat=VCFv4.2\n##contig=<ID=chr1,length=20000000000>\n"
                '##INFO=<ID=END,Number=1,Type=Integer,Description="e">\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n'
                f"chr1\t{big}\t.\tA\tT\t.\t.\tEND={big + 1}\n")
    r = session.read(vcf).collect()[0]
    assert (r.start, r.end, r.info.END) == (big, big + 1, big + 1)
    sam = write(tmp_path / "long.sam", f"@SQ\tSN:chr1\tLN:{2 * big}\nq\t0\tchr1\t{big}\t60\t10M\t=\t{big + 5}\t15\tACGTACGTAC\t*\n")
    r = session.read(sam).collect()[0]
    assert (r.start, r.end, r.pnext) == (big, big + 9, big + 5)
    gff = write(tmp_path / "long.gff3", f"##gff-version 3\nchr1\ts\tgene\t{big}\t{big + 100}\t.\t+\t.\tID=a\n")
    r = session.read(gff).collect()[0]
    assert (r.start, r.end) == (big, big + 100)


def test_info_end_declared_number_dot(session, tmp_path):
    path = write(tmp_path / "e.vcf", '##fileformat=VCFv4.2\n##INFO=<ID=END,Number=.,Type=Integer,Description="e">\n'
                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\nchr1\t100\t.\tA\t<DEL>\t.\t.\tEND=250\n")
    r = session.read(path).collect()[0]
    assert (r.start, r.end) == (100, 250)


def test_duplicate_format_key_is_refused_with_its_line(session, tmp_path):
    path = write(tmp_path / "dup.vcf", "##fileformat=VCFv4.2\n"
                 '##FORMAT=<ID=GT,Number=1,Type=String,Description="g">\n'
                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"
                 "chr1\t100\t.\tA\tT\t.\t.\t.\tGT\t0/1\nchr1\t200\t.\tA\tT\t.\t.\t.\tGT:GT\t0/1:1/1\n")
    with pytest.raises(InputError, match=r"dup.vcf line 5: FORMAT names GT twice"):
        session.read(path)


def test_odd_but_valid_headers(session, tmp_path):
    sam = write(tmp_path / "co.sam", "@HD\tVN:1.6\n@SQ\tSN:c1\tLN:100\n@CO\n@CO\tplain\nr\t0\tc1\t5\t0\t4M\t*\t0\t0\tACGT\t*\n")
    assert [r.start for r in session.read(sam).collect()] == [5]
    vcf = write(tmp_path / "v41.vcf", "##fileformat=VCF4.1\n"
                '##FORMAT=<ID=GT, Number=1, Type=String, Description="Genotype, with a comma">\n'
                "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS\nc1\t7\t.\tA\tC\t.\t.\t.\tGT\t0|1\n")
    r = session.read(vcf, samples="*").collect()[0]
    assert (r.start, list(r.samples.S.GT.allele)) == (7, [0, 1])
    gff = write(tmp_path / "ucsc.gff", "browser position c1:1-100\ntrack name=x\nc1\ts\tgene\t5\t9\t.\t+\t.\tID=a\n")
    assert [r.attributes.ID for r in session.read(gff).collect()] == ["a"]


def test_gtf_attributes_in_a_gff_file(session, tmp_path):
    """bedtools' test GFFs carry GTF-style column 9; reading them once hung the reader."""
    path = write(tmp_path / "b.gff", 'chr1\tt\tgene\t10\t100\t.\t+\t.\tgene_id "g1"; transcript_id "t1";\n'
                 'chr1\tt\texon\t20\t50\t.\t+\t.\tgene_id "g1"; transcript_id "t1"; tag "x"; tag "y";\n')
    rows = sorted((r.start, r.attributes.gene_id, r.attributes.tag) for r in session.read(path).collect())
    assert rows == [(10, "g1", None), (20, "g1", ["x", "y"])]


def test_sam_gz_and_bed12_extensions(session, tmp_path):
    text = "@SQ\tSN:c1\tLN:100\nr\t0\tc1\t5\t0\t4M\t*\t0\t0\tACGT\t*\n"
    for comp in ("gzip", "bgzf"):
        path = write(tmp_path / f"{comp}.sam.gz", text, comp)
        assert [r.start for r in session.read(path).collect()] == [5]
    bed12 = write(tmp_path / "a.bed12", "c1\t10\t100\tx\t0\t+\t10\t100\t0\t2\t10,20,\t0,70,\n")
    assert session.read(bed12).collect()[0].blockCount == 2


def test_header_problem_names_its_line(session, tmp_path):
    path = write(tmp_path / "h.vcf", '##fileformat=VCFv4.2\n##INFO=<ID=DP,Number=1,Type=Integger,Description="x">\n'
                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\nc1\t1\t.\tA\tC\t.\t.\t.\n")
    with pytest.raises(InputError, match=r"h.vcf header line 2: INFO/DP has the unknown Type Integger"):
        session.read(path)


def test_a_damaged_bgzf_block_is_named(session, tmp_path):
    text, _ = _big_vcf(3000)
    data = bytearray(bgzf(text.encode(), 4096))
    data[len(data) // 2: len(data) // 2 + 40] = b"\0" * 40
    path = tmp_path / "bad.vcf.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"bad.vcf.gz") as err:
        session.read(str(path))
    assert "\n" not in str(err.value)


def test_truncated_gzip_is_named(session, tmp_path):
    text, _ = _big_vcf(3000)
    data = gzip.compress(text.encode())
    path = tmp_path / "cut.vcf.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut.vcf.gz") as err:
        session.read(str(path))
    assert "\n" not in str(err.value)


def test_values_equal_f32(session, tmp_path):
    path = write(tmp_path / "q.vcf", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                 "c1\t1\t.\tA\tC\t50.3\t.\t.\n")
    assert session.read(path).collect()[0].qual == f32(50.3)


BCF_HEADER = ['##FILTER=<ID=s50,Description="s">'] + [
    f"##contig=<ID={c}>" for c in ("chr1", "chr2", "1", "chrUn_KI270742v1", "HLA-A*01:01:01:01")]


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(f=vcf_file(samples=2, odd=False))
def test_bcf_written_by_bcftools_reads_as_its_vcf(session, tmp_path_factory, f):
    """bcftools converts a generated VCF to BCF; the BCF reads back as what was written, and
    as the VCF reads (genotypes included)."""
    bcftools = tool("bcftools")
    text, rows, _ = f
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("#CHROM"))
    d = tmp_path_factory.mktemp("bcf")
    vcf = write(d / "x.vcf", "\n".join(lines[:at] + BCF_HEADER + lines[at:]))
    bcf = str(d / "x.bcf")
    run(bcftools, "view", "-O", "b", "-o", bcf, vcf)
    got, as_vcf = session.read(bcf, samples="*"), session.read(vcf, samples="*")
    assert vcf_rows(got) == sorted(rows, key=repr)
    assert sorted(map(repr, got.collect())) == sorted(map(repr, as_vcf.collect()))


def test_indexed_bcf_split_and_region(session, tmp_path):
    bcftools = tool("bcftools")
    text, keys = _big_vcf(20000)
    lines = text.split("\n")
    vcf = write(tmp_path / "b.vcf", "\n".join(lines[:2] + ["##contig=<ID=chr1>", "##contig=<ID=chr2>",
                                                           "##contig=<ID=chr10>"] + lines[2:]))
    bcf = str(tmp_path / "b.bcf")
    run(bcftools, "view", "-O", "b", "-o", bcf, vcf)
    run(bcftools, "index", bcf)
    with split_bytes(session.spark, os.path.getsize(bcf) // 8):
        df = session.read(bcf)
        assert df.rdd.getNumPartitions() > 4
        got = sorted((r.chrom, r.start, r.id) for r in df.select("chrom", "start", "id").collect())
    assert got == sorted(keys)
    region = df.where("chrom = 'chr10' AND start <= 700000 AND `end` >= 650000")
    rows = sorted((r.chrom, r.start) for r in region.collect())
    assert rows == sorted((c, p) for c, p, _ in keys if c == "chr10" and 650000 <= p <= 700000) and rows
    assert scan_metric(region, "decodedRecords") < 3000


def test_bam_and_bcf_without_an_index_split_at_the_records_their_bytes_hold(session, tmp_path):
    """No index: byte ranges, each split reading from the first record its bytes hold (a
    record's fields checked for the next three records); every record read once."""
    samtools, bcftools = tool("samtools"), tool("bcftools")
    lines = ["@HD\tVN:1.6\tSO:unsorted", "@SQ\tSN:chr1\tLN:10000000", "@SQ\tSN:chr2\tLN:10000000"]
    lines += [f"q{i}\t{4 if i % 97 == 0 else 0}\t{'*' if i % 97 == 0 else 'chr' + str(1 + i % 2)}\t"
              f"{0 if i % 97 == 0 else 1 + 37 * i}\t30\t{'*' if i % 97 == 0 else '20M'}\t*\t0\t0\t"
              f"{'ACGT' * 5}\t{'I' * 20}\tXS:Z:{'x' * (i % 300)}" for i in range(30000)]
    sam = write(tmp_path / "u.sam", "\n".join(lines) + "\n")
    bam = str(tmp_path / "u.bam")
    run(samtools, "view", "-b", "-o", bam, sam)
    text, keys = _big_vcf(20000)
    vl = text.split("\n")
    vcf = write(tmp_path / "u.vcf", "\n".join(vl[:2] + ["##contig=<ID=chr1>", "##contig=<ID=chr2>",
                                                        "##contig=<ID=chr10>"] + vl[2:]))
    bcf = str(tmp_path / "u.bcf")
    run(bcftools, "view", "-O", "b", "-o", bcf, vcf)
    for path, want in ((bam, sorted(f"q{i}" for i in range(30000))), (bcf, sorted(k[2] for k in keys))):
        with split_bytes(session.spark, os.path.getsize(path) // 17):
            df = session.read(path)
            assert df.rdd.getNumPartitions() > 10, path
            names = sorted(r[0] for r in df.select("qname" if path == bam else "id").collect())
        assert names == want, path
