"""Genomic formats through Session.read/register/write: values, coordinates, GIQL joins, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from conftest import Table, rows_of, run_duckdb

from giql_spark.io import InputError, detect_format, read_source

DATA = Path(__file__).parent / "data"

VCF_HEADER = [
    "##fileformat=VCFv4.2",
    "##contig=<ID=chr1,length=10000>",
    "##contig=<ID=chr2,length=10000>",
    '##FILTER=<ID=q10,Description="Quality below 10">',
    '##INFO=<ID=DP,Number=1,Type=Integer,Description="Read depth">',
    '##INFO=<ID=END,Number=1,Type=Integer,Description="End position of a symbolic allele">',
    '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency">',
    '##INFO=<ID=DB,Number=0,Type=Flag,Description="In dbSNP">',
    '##INFO=<ID=SVTYPE,Number=1,Type=String,Description="Structural variant type">',
    "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO",
]
# Same records as tests/data/variants.vcf.gz.  1-based closed intervals:
# rs1 [100,100], rs2 [200,203] (REF length 4), sv1 [300,450] (INFO END), rs4 [50,50].
VARIANTS = [
    "chr1\t100\trs1\tA\tG\t50\tPASS\tDP=10;AF=0.5;DB",
    "chr1\t200\trs2\tACGT\tA\t.\tq10\tDP=3",
    "chr1\t300\tsv1\tN\t<DEL>\t99\tPASS\tEND=450;SVTYPE=DEL",
    "chr2\t50\trs4\tC\tT,CA\t20\t.\t.",
]
# BED peaks, 0-based half-open.  p2 starts right after rs1 (0-based 99) and p3
# starts right after rs2 ends, so an off-by-one in either direction shows.
PEAKS = [
    "track name=peaks",
    "chr1\t99\t100\tp1\t10\t+",
    "chr1\t100\t150\tp2\t20\t+",
    "chr1\t203\t250\tp3\t30\t-",
    "chr1\t449\t500\tp4\t40\t+",
    "chr1\t202\t205\tp7\t70\t+",
    "chr2\t0\t49\tp5\t50\t-",
    "chr2\t49\t60\tp6\t60\t+",
]
VARIANT_PEAKS = {("rs1", "p1"), ("rs2", "p7"), ("sv1", "p4"), ("rs4", "p6")}
# GTF genes, 1-based closed: G1 [150,220] holds rs2; G2 starts right after sv1 ends.
GTF = [
    "#!genome-build test",
    'chr1\ttest\tgene\t150\t220\t.\t+\t.\tgene_id "G1"; gene_name "ONE"; tag "basic"; tag "mane";',
    'chr1\ttest\texon\t150\t180\t.\t+\t.\tgene_id "G1"; transcript_id "T1"; exon_number 1;',
    'chr1\ttest\tgene\t451\t600\t5\t-\t.\tgene_id "G2";',
    'chr2\ttest\tgene\t1\t49\t.\t+\t.\tgene_id "G3";',
]
GFF3 = [
    "##gff-version 3",
    "##sequence-region chr1 1 10000",
    "chr1\tsrc\tgene\t150\t400\t.\t+\t.\tID=g1;Name=GENE1;Alias=a,b",
    "chr1\tsrc\tCDS\t150\t220\t3.5\t+\t2\tID=c1;Parent=g1",
    "###",
    "chr2\tsrc\tgene\t10\t60\t.\t-\t.\tID=g2",
]
SAM_LINES = [
    "@HD\tVN:1.6\tSO:coordinate",
    "@SQ\tSN:chr1\tLN:10000",
    "@SQ\tSN:chr2\tLN:10000",
    "r1\t0\tchr1\t100\t60\t10M\t*\t0\t0\tACGTACGTAC\tIIIIIIIIII\tNM:i:0\tRG:Z:g1",
    "r2\t16\tchr1\t150\t30\t5M2D5M\t*\t0\t0\tACGTACGTAC\t*\tNM:i:2",
    "r3\t0\tchr2\t20\t10\t3S7M\t*\t0\t0\tACGTACGTAC\tIIIIIIIIII",
    "r4\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII",
]
# (qname, chrom, start, end, flag, mapq): end is the last reference base (5M2D5M spans 12).
READS = {
    ("r1", "chr1", 100, 109, 0, 60), ("r2", "chr1", 150, 161, 16, 30),
    ("r3", "chr2", 20, 26, 0, 10), ("r4", None, None, None, 4, 0),
}
NARROW = [
    "track type=narrowPeak",
    "chr1\t10\t60\tn1\t1000\t.\t8.5\t12.25\t-1\t25",
    "chr2\t5\t9\tn2\t0\t+\t1.5\t-1\t3.5\t-1",
]


def write(tmp_path, name, lines, gz=False):
    path = tmp_path / name
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def variant_rows(rows):
    return sorted((r.chrom, r.start, r.end, r.id, r.ref, tuple(r.alt), r.qual, r.filter) for r in rows)


EXPECTED_VARIANTS = [
    ("chr1", 100, 100, "rs1", "A", ("G",), 50.0, "PASS"),
    ("chr1", 200, 203, "rs2", "ACGT", ("A",), None, "q10"),
    ("chr1", 300, 450, "sv1", "N", ("<DEL>",), 99.0, "PASS"),
    ("chr2", 50, 50, "rs4", "C", ("T", "CA"), 20.0, None),
]


# ---------------------------------------------------------------- detection and missing files


@pytest.mark.parametrize(
    "name,fmt",
    [
        ("a.narrowPeak", "narrowpeak"), ("a.NARROWPEAK.GZ", "narrowpeak"), ("a.broadPeak.gz", "broadpeak"),
        ("a.vcf", "vcf"), ("a.VCF.GZ", "vcf"), ("a.bcf", "bcf"), ("a.gff", "gff"), ("a.gff3.gz", "gff"),
        ("a.GTF", "gtf"), ("a.gtf.gz", "gtf"), ("a.sam", "sam"), ("a.bam", "bam"), ("a.cram", "cram"),
    ],
)
def test_detect_genomic_formats(name, fmt):
    assert detect_format(name) == fmt


def test_unknown_extension_lists_the_accepted_ones(session, tmp_path):
    path = write(tmp_path, "calls.maf", ["x"])
    with pytest.raises(InputError) as err:
        session.read(path)
    msg = str(err.value)
    assert "\n" not in msg and "calls.maf" in msg
    for ext in (".bed", ".narrowPeak", ".broadPeak", ".vcf.gz", ".bcf", ".gff3", ".gtf", ".bam", ".cram", ".parquet"):
        assert ext in msg


def test_missing_file_is_reported_before_spark_runs(tmp_path):
    # spark=None: the check must not need Spark at all.
    with pytest.raises(InputError, match="not found") as err:
        read_source(None, str(tmp_path / "absent.vcf.gz"))
    assert "absent.vcf.gz" in str(err.value)


# ---------------------------------------------------------------- readers


def test_narrowpeak_and_broadpeak_typed_columns(session, tmp_path):
    df = session.read(write(tmp_path, "p.narrowPeak.gz", NARROW, gz=True))
    assert df.columns == ["chrom", "start", "end", "name", "score", "strand", "signalValue", "pValue", "qValue", "peak"]
    assert dict(df.dtypes)["peak"] == "bigint" and dict(df.dtypes)["signalValue"] == "double"
    assert sorted(tuple(r) for r in df.collect()) == [
        ("chr1", 10, 60, "n1", 1000.0, ".", 8.5, 12.25, -1.0, 25),
        ("chr2", 5, 9, "n2", 0.0, "+", 1.5, -1.0, 3.5, -1),
    ]
    broad = session.read(write(tmp_path, "p.broadPeak", [line.rsplit("\t", 1)[0] for line in NARROW]))
    assert broad.columns[-1] == "qValue"
    session.register("np", df)  # the convention recorded by read() carries over
    assert session.tables["np"].table.coordinate_system == "0based"


def test_vcf_values_coordinates_and_info(session, tmp_path):
    path = write(tmp_path, "calls.vcf", VCF_HEADER + VARIANTS)
    df = session.register("calls", path)
    assert df.columns[:8] == ["chrom", "start", "end", "id", "ref", "alt", "qual", "filter"]
    rows = df.collect()
    assert variant_rows(rows) == EXPECTED_VARIANTS
    info = {r.id: r.info for r in rows}
    assert info["rs1"].DP == 10 and info["rs1"].DB is True and info["sv1"].SVTYPE == "DEL"
    table = session.tables["calls"].table
    assert (table.coordinate_system, table.interval_type) == ("1based", "closed")


def test_indexed_vcf_reads_a_region_through_its_index(session):
    df = session.read(str(DATA / "variants.vcf.gz"))
    assert variant_rows(df.collect()) == EXPECTED_VARIANTS
    region = df.where("chrom = 'chr2' AND start <= 60")
    assert variant_rows(region.collect()) == EXPECTED_VARIANTS[3:]
    plan = region._jdf.queryExecution().executedPlan().toString()
    assert "read through the index: 1 chunk(s)" in plan, plan


def test_gtf_and_gff3(session, tmp_path):
    gtf = session.read(write(tmp_path, "genes.gtf.gz", GTF, gz=True))  # plain gzip, not BGZF
    assert gtf.columns == ["chrom", "start", "end", "source", "type", "score", "strand", "phase", "attributes"]
    rows = gtf.collect()
    got = sorted((r.chrom, r.start, r.end, r.type, r.score, r.strand, r.attributes.gene_id) for r in rows)
    assert got == [
        ("chr1", 150, 180, "exon", None, "+", "G1"), ("chr1", 150, 220, "gene", None, "+", "G1"),
        ("chr1", 451, 600, "gene", 5.0, "-", "G2"), ("chr2", 1, 49, "gene", None, "+", "G3"),
    ]
    tags = {r.attributes.gene_name: r.attributes.tag for r in rows}
    assert tags["ONE"] == ["basic", "mane"]
    gff = session.read(write(tmp_path, "feat.GFF3", GFF3))
    got = sorted((r.chrom, r.start, r.end, r.type, r.score, r.phase, r.attributes.ID) for r in gff.collect())
    assert got == [
        ("chr1", 150, 220, "CDS", 3.5, 2, "c1"), ("chr1", 150, 400, "gene", None, None, "g1"),
        ("chr2", 10, 60, "gene", None, None, "g2"),
    ]


def test_sam_and_indexed_bam(session, tmp_path):
    sam = session.read(write(tmp_path, "reads.sam", SAM_LINES))
    bam = session.read(str(DATA / "reads.bam"))
    for df in (sam, bam):
        assert df.columns[:3] == ["chrom", "start", "end"]
        rows = df.collect()
        assert {(r.qname, r.chrom, r.start, r.end, r.flag, r.mapq) for r in rows} == READS
    assert {r.qname: r.tags.NM for r in rows}["r2"] == 2


# ---------------------------------------------------------------- GIQL across formats


@pytest.fixture()
def genomic_tables(session, tmp_path):
    session.register("variants", str(DATA / "variants.vcf.gz"))
    session.register("peaks", write(tmp_path, "peaks.bed", PEAKS))
    session.register("genes", write(tmp_path, "genes.gtf", GTF))
    return session


def test_giql_joins_vcf_bed_and_gtf(genomic_tables):
    s = genomic_tables
    pairs = s.sql("SELECT v.id, p.name FROM variants v JOIN peaks p ON v.interval INTERSECTS p.interval").collect()
    assert {tuple(r) for r in pairs} == VARIANT_PEAKS
    three = s.sql(
        "SELECT v.id, p.name, g.start AS gene_start FROM variants v "
        "JOIN peaks p ON v.interval INTERSECTS p.interval "
        "JOIN genes g ON v.interval INTERSECTS g.interval WHERE g.type = 'gene'"
    ).collect()
    assert [tuple(r) for r in three] == [("rs2", "p7", 150)]
    # A region literal is read in GIQL's 0-based half-open convention:
    # chr1:199-200 holds only rs2's first base (POS 200).
    hits = s.sql("SELECT id FROM variants WHERE interval INTERSECTS 'chr1:199-200'").collect()
    assert [r.id for r in hits] == ["rs2"]
    # The same join by giql on DuckDB, given the mapping register chose.
    query = "SELECT v.id, p.name FROM variants v JOIN peaks p ON v.interval INTERSECTS p.interval"
    variants = Table(
        [(c, st, e, i) for c, st, e, i, *_ in EXPECTED_VARIANTS],
        "chrom string, start bigint, `end` bigint, id string",
        coordinate_system="1based", interval_type="closed",
    )
    peaks = Table(
        [(f[0], int(f[1]), int(f[2]), f[3]) for f in (line.split("\t") for line in PEAKS[1:])],
        "chrom string, start bigint, `end` bigint, name string",
    )
    _, expected = run_duckdb(query, {"variants": variants, "peaks": peaks})
    assert rows_of(tuple(r) for r in pairs) == rows_of(expected)


def test_explicit_mapping_wins(session, tmp_path):
    path = write(tmp_path, "calls.vcf", VCF_HEADER + VARIANTS)
    session.register("v0", path, coordinate_system="0based", interval_type="half_open")
    table = session.tables["v0"].table
    assert (table.coordinate_system, table.interval_type) == ("0based", "half_open")


# ---------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    "name,lines,where,reason",
    [
        ("bad.vcf", VCF_HEADER + VARIANTS[:2] + ["chr1\tabc\t.\tA\tG\t1\t.\t."], "line 13", "POS"),
        ("bad.gtf", GTF[:2] + ["chr1\ttest\tgene\t300\t200\t.\t+\t.\tgene_id \"G9\";"], "line 3", "start 300 > end 200"),
        ("short.gff3", GFF3[:3] + ["chr1\tsrc\tgene\t5"], "line 4", "fields"),
        ("bad.sam", SAM_LINES[:4] + ["r9\tzz\tchr1\t100\t60\t10M\t*\t0\t0\tACGT\tIIII"], "line 5", "FLAG"),
        ("bad.narrowPeak", ["chr1\t1\t5\tx\t0\t."], "line 1", "expected at least 10"),
    ],
)
def test_malformed_record_names_file_and_line(session, tmp_path, name, lines, where, reason):
    path = write(tmp_path, name, lines)
    with pytest.raises(InputError) as err:
        session.read(path)
    msg = str(err.value)
    assert "\n" not in msg and name in msg and where in msg and reason in msg


def test_gff_line_oxbow_would_skip_is_reported(session, tmp_path):
    # With attribute_defs given nothing is discovered up front, and oxbow's
    # scan drops a short line silently: the line count check must catch it.
    path = write(tmp_path, "skip.gff3", GFF3[:3] + ["chr1\tsrc\tgene\t5"] + GFF3[3:])
    with pytest.raises(InputError, match=r"skip.gff3 line 4: too few tab-separated fields \(4\)"):
        session.read(path, attribute_defs=[("ID", "String")])


def test_malformed_record_found_by_the_spark_validation_job(session, tmp_path, monkeypatch):
    from giql_spark.io import datasource

    monkeypatch.setattr(datasource, "LOCAL_CHECK_BYTES", 0)  # files above it are checked by a Spark job
    path = write(tmp_path, "late.vcf", VCF_HEADER + VARIANTS + ["chr2\tx70\t.\tA\tG\t1\t.\t."])
    with pytest.raises(InputError) as err:
        session.read(path)
    assert str(err.value) == f"{path} line 15: missing or non-integer POS"


def test_unreadable_binary_file(session, tmp_path):
    path = tmp_path / "junk.bam"
    path.write_bytes(b"not a bam file")
    with pytest.raises(InputError, match="junk.bam") as err:
        session.read(str(path))
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------- writers


def test_write_bed_from_vcf_round_trips_as_half_open(session, tmp_path):
    session.register("variants", str(DATA / "variants.vcf.gz"))
    out = tmp_path / "variants.bed"
    session.write("variants", str(out), single_file=True)
    assert out.is_file()
    lines = out.read_text().splitlines()
    assert lines[0] == "chr1\t99\t100"  # POS 100 is base [99, 100)
    back = session.read(str(out))
    assert sorted(tuple(r) for r in back.collect()) == [
        ("chr1", 99, 100), ("chr1", 199, 203), ("chr1", 299, 450), ("chr2", 49, 50),
    ]


def test_write_bed_keeps_bed_columns_and_directory_output(session, tmp_path):
    src = session.read(write(tmp_path, "peaks.bed", PEAKS))
    expected = sorted(tuple(r) for r in src.collect())
    session.write(src, str(tmp_path / "out.bed"))  # a Spark directory of part files
    assert (tmp_path / "out.bed").is_dir()
    assert sorted(tuple(r) for r in session.read(str(tmp_path / "out.bed")).collect()) == expected
    single = tmp_path / "one.bed.gz"
    session.write(src, str(single), single_file=True)
    assert gzip.decompress(single.read_bytes()).decode().splitlines()[0] == "chr1\t99\t100\tp1\t10\t+"
    assert sorted(tuple(r) for r in session.read(str(single)).collect()) == expected


def test_write_parquet_partitioned_by_chrom_and_tsv(session, tmp_path):
    df = session.read(str(DATA / "variants.vcf.gz"))
    out = tmp_path / "variants.parquet"
    session.write(df, str(out), partition_by_chrom=True)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["chrom=chr1", "chrom=chr2"]
    back = session.read(str(out))
    assert sorted((r.chrom, r.start, r.end, r.id) for r in back.collect()) == [
        (c, s, e, i) for c, s, e, i, *_ in EXPECTED_VARIANTS
    ]
    tsv = tmp_path / "variants.tsv"
    session.write(df, str(tsv), single_file=True)
    header, first = tsv.read_text().splitlines()[:2]
    assert header.split("\t")[:4] == ["chrom", "start", "end", "id"]
    assert first.startswith("chr1\t100\t100\trs1\tA\t")  # TSV keeps the table's own values
    with pytest.raises(InputError, match="already exists"):
        session.write(df, str(tsv), single_file=True)


def test_every_format_entry_has_a_reader_and_is_found_by_its_suffixes():
    from giql_spark.io.formats import REGISTRY, detect_format
    from giql_spark.io.readers import READERS
    from giql_spark.io.writers import WRITE_FORMATS, write_format

    for name, entry in REGISTRY.items():
        assert entry.reader in READERS, name
        for suffix in entry.suffixes:
            assert detect_format(f"/x/y{suffix.upper()}") == name, suffix
            if name in WRITE_FORMATS:
                assert write_format(f"/x/y{suffix}") == name, suffix
    assert set(WRITE_FORMATS) == {"bed", "csv", "tsv", "parquet"}
