"""The oxbow reader, which reads genomic files where a session has no giql-spark jar (a Spark
Connect server started without it), and CRAM and BCF everywhere.

Its rows equal the JVM reader's on generated files both can read; what oxbow cannot hold (a
position past 2^31) is refused in one line, never wrapped; CRAM files split by container, with
the reference found as samtools finds it, or refused in one line.
"""

from __future__ import annotations

import hashlib
import os

import pytest
from genomic_files import gff_file, gff_rows, run, sam_file, sam_rows, tool, vcf_file, vcf_rows, write
from hypothesis import HealthCheck, given, settings

from giql_spark.io import InputError, jvm_source

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture()
def without_jvm(monkeypatch):
    """Session.read through oxbow, as in a session without giql-spark's jar."""
    monkeypatch.setattr(jvm_source, "available", lambda spark: False)


def both(session, path, monkeypatch, **options):
    """The rows of ``path`` read by the JVM reader and by oxbow."""
    jvm = session.read(path, **options)
    with monkeypatch.context() as m:
        m.setattr(jvm_source, "available", lambda spark: False)
        ox = session.read(path, **options)
    assert jvm.schema == ox.schema
    return jvm, ox


@SETTINGS
@given(f=vcf_file(samples=2, odd=False))
def test_vcf_rows_equal_the_jvm_readers(session, tmp_path_factory, f):
    text, rows, _ = f
    path = write(tmp_path_factory.mktemp("v") / "x.vcf", text)
    with pytest.MonkeyPatch.context() as mp:
        jvm, ox = both(session, path, mp, samples="*")
    assert vcf_rows(jvm) == vcf_rows(ox) == sorted(rows, key=repr)
    assert sorted(map(repr, jvm.collect())) == sorted(map(repr, ox.collect()))


@SETTINGS
@given(f=sam_file(odd=False))
def test_sam_rows_equal_the_jvm_readers(session, tmp_path_factory, f):
    text, rows = f
    path = write(tmp_path_factory.mktemp("s") / "x.sam", text)
    with pytest.MonkeyPatch.context() as mp:
        jvm, ox = both(session, path, mp)
    assert sam_rows(ox) == sorted(rows, key=repr)
    assert sam_rows(jvm) == sam_rows(ox)


@SETTINGS
@given(f=gff_file(odd=False))
def test_gff_rows_equal_the_jvm_readers(session, tmp_path_factory, f):
    text, rows = f
    path = write(tmp_path_factory.mktemp("g") / "x.gff3", text)
    with pytest.MonkeyPatch.context() as mp:
        jvm, ox = both(session, path, mp)
    assert gff_rows(jvm) == gff_rows(ox) == sorted(rows, key=repr)


def test_a_position_past_2_31_is_refused_not_wrapped(session, tmp_path, without_jvm):
    path = write(tmp_path / "long.vcf", "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                 "chr1\t5\t.\tA\tT\t.\t.\t.\nchr1\t10009999919\t.\tA\tT\t.\t.\t.\n")
    with pytest.raises(InputError, match=r"long.vcf line 4: position 10009999919 is past 2\^31 - 1"):
        session.read(path)
    df = session.read(path, validate=False)  # the read itself refuses it too
    with pytest.raises(Exception, match=r"long.vcf line 4: position 10009999919"):
        df.collect()
    end = write(tmp_path / "end.vcf", '##fileformat=VCFv4.2\n##INFO=<ID=END,Number=1,Type=Integer,Description="e">\n'
                "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\nchr1\t5\t.\tA\t<DEL>\t.\t.\tEND=3000000000\n")
    with pytest.raises(InputError, match=r"end.vcf line 4: INFO/END 3000000000"):
        session.read(end)


def test_gff_with_gtf_attributes_ends_and_reads_them(session, tmp_path, without_jvm):
    path = write(tmp_path / "b.gff", 'chr1\tt\tgene\t10\t100\t.\t+\t.\tgene_id "g1"; transcript_id "t1";\n'
                 'chr1\tt\texon\t20\t50\t.\t+\t.\tgene_id "g1"; transcript_id "t1";\n')
    rows = sorted((r.start, r.attributes.gene_id, r.attributes.transcript_id) for r in session.read(path).collect())
    assert rows == [(10, "g1", "t1"), (20, "g1", "t1")]


def test_info_end_declared_number_dot(session, tmp_path, without_jvm):
    path = write(tmp_path / "e.vcf", '##fileformat=VCFv4.2\n##INFO=<ID=END,Number=.,Type=Integer,Description="e">\n'
                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\nchr1\t100\t.\tA\t<DEL>\t.\t.\tEND=250\n")
    r = session.read(path).collect()[0]
    assert (r.start, r.end, r.info.END) == (100, 250, 250)


def test_a_header_line_oxbow_cannot_read_is_named(session, tmp_path, without_jvm):
    path = write(tmp_path / "co.sam", "@HD\tVN:1.6\n@SQ\tSN:c1\tLN:100\n@CO\nr\t0\tc1\t5\t0\t4M\t*\t0\t0\tACGT\t*\n")
    with pytest.raises(InputError, match=r"co.sam header line 3: "):
        session.read(path)


def _sam_for_cram(tmp_path, n=3000):
    seq = "".join("ACGT"[(i * 7 + i // 5) % 4] for i in range(20000))
    ref = write(tmp_path / "ref.fa", ">chr1\n" + "\n".join(seq[i:i + 60] for i in range(0, len(seq), 60)) + "\n")
    lines = ["@HD\tVN:1.6\tSO:coordinate", f"@SQ\tSN:chr1\tLN:{len(seq)}"]
    for i in range(n):
        p = 1 + (i * 6) % (len(seq) - 60)
        lines.append(f"r{i}\t0\tchr1\t{p}\t60\t50M\t*\t0\t0\t{seq[p - 1:p + 49]}\t{'I' * 50}")
    lines += [f"u{i}\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII" for i in range(40)]
    lines[2:2 + n] = sorted(lines[2:2 + n], key=lambda x: int(x.split("\t")[3]))
    return write(tmp_path / "r.sam", "\n".join(lines) + "\n"), ref, seq


def test_indexed_cram_split_by_container_with_unplaced_reads(session, tmp_path):
    samtools = tool("samtools")
    sam, ref, _ = _sam_for_cram(tmp_path)
    cram = str(tmp_path / "r.cram")
    run(samtools, "view", "-C", "-T", ref, "--output-fmt-option", "seqs_per_slice=200", "-o", cram, sam)
    run(samtools, "index", cram)
    want = sorted((f[0], f[2], int(f[3])) for f in (ln.split("\t") for ln in run(samtools, "view", "-T", ref, cram).splitlines()))
    from giql_spark.io import cram as cram_io

    old = cram_io.SPLIT_BYTES
    cram_io.SPLIT_BYTES = os.path.getsize(cram) // 6
    try:
        df = session.read(cram, reference=ref)
    finally:
        cram_io.SPLIT_BYTES = old
    assert df.rdd.getNumPartitions() > 3
    got = sorted((r.qname, r.chrom or "*", r.start or 0) for r in df.collect())
    assert got == want and len(got) == 3040


def test_cram_reference_found_by_its_checksum(session, tmp_path, monkeypatch):
    samtools = tool("samtools")
    sam, ref, seq = _sam_for_cram(tmp_path, n=100)
    cram = str(tmp_path / "r.cram")
    run(samtools, "view", "-C", "-T", ref, "-o", cram, sam)
    os.remove(ref + ".fai")  # the UR: path in the header is no longer a usable FASTA
    os.remove(ref)
    with pytest.raises(InputError, match=r"r.cram: its reads are stored against a reference sequence that was not "
                                         r"given and not found: pass reference="):
        session.read(cram)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / hashlib.md5(seq.encode()).hexdigest()).write_text(seq)
    monkeypatch.setenv("REF_PATH", str(cache / "%s"))
    assert session.read(cram).count() == 140


def test_bam_reference_names_with_colons(session, tmp_path, without_jvm):
    samtools = tool("samtools")
    sam = write(tmp_path / "c.sam", "@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:chr2:1-5\tLN:100\n@SQ\tSN:HLA-A*01:01\tLN:100\n"
                "r1\t0\tchr2:1-5\t5\t60\t4M\t*\t0\t0\tACGT\t*\nr2\t0\tHLA-A*01:01\t7\t60\t4M\t*\t0\t0\tACGT\t*\n")
    bam = str(tmp_path / "colons.bam")
    run(samtools, "view", "-b", "-o", bam, sam)
    run(samtools, "index", bam)
    assert sorted((r.qname, r.chrom, r.start) for r in session.read(bam).collect()) == [
        ("r1", "chr2:1-5", 5), ("r2", "HLA-A*01:01", 7)]


def test_reader_work_that_does_not_end_is_given_up_with_the_file_named(session, tmp_path, without_jvm, monkeypatch):
    """A header scan that loops for ever (oxbow's once did, holding Python's lock) fails in one
    line after the time limit instead of hanging the user's process."""
    from giql_spark.io import bounded, genomic

    def forever(*args):
        while True:
            pass

    monkeypatch.setattr(genomic, "describe", forever)
    monkeypatch.setattr(bounded, "SECONDS", 2.0)
    path = write(tmp_path / "stuck.gff", "chr1\tt\tgene\t10\t100\t.\t+\t.\tID=a\n")
    with pytest.raises(InputError, match=r"stuck.gff: reading its header and first records did not finish in 2 s"):
        session.read(path)


def test_a_repeated_format_key_is_refused(session, tmp_path, without_jvm):
    path = write(tmp_path / "dup.vcf", "##fileformat=VCFv4.2\n"
                 '##FORMAT=<ID=GT,Number=1,Type=String,Description="g">\n'
                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n"
                 "chr1\t100\t.\tA\tT\t.\t.\t.\tGT\t0/1\nchr1\t200\t.\tA\tT\t.\t.\t.\tGT:GT\t0/1:1/1\n")
    with pytest.raises(InputError, match=r"dup.vcf line 5: FORMAT names GT twice"):
        session.read(path)
