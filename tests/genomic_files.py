"""Genomic files written for the reader tests, each with the rows a correct reader returns.

Every generator draws records whose fields take odd but valid values (positions up to 2^40,
every optional field missing or present, quoted and percent-encoded attributes, tags of every
type), writes them as the format's text, and gives the rows read back must equal: what was
written, in giql-spark's columns. Headers are drawn odd but valid too (``##fileformat=VCF4.1``,
spaces inside structured lines, a bare ``@CO``, UCSC track lines).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import pytest
from hypothesis import strategies as st

POS = st.one_of(st.integers(1, 2_000), st.integers(1, 2**31 + 5_000), st.integers(2**31 - 3, 2**40))
#: Positions oxbow's 32-bit fields hold (its reader refuses larger ones).
POS32 = st.one_of(st.integers(1, 2_000), st.integers(1, 2**31 - 10**6 - 60))
CHROM = st.sampled_from(["chr1", "chr2", "1", "chrUn_KI270742v1", "HLA-A*01:01:01:01"])
BASES = st.text("ACGTN", min_size=1, max_size=6)


def f32(x: float) -> float:
    """``x`` as a 32-bit float widened back (how VCF QUAL and Float values are stored)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def tool(name: str) -> str:
    """A samtools/bcftools/bgzip/tabix binary; skipped where missing (CI installs them and sets
    GIQL_SPARK_REQUIRE_TOOLS, which makes a missing one a failure)."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("GIQL_SPARK_REQUIRE_TOOLS"):
            pytest.fail(f"{name} is not installed (apt-get install samtools bcftools tabix)")
        pytest.skip(f"{name} is not installed")
    return path


def run(*cmd: str) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(cmd)}: {out.stderr[-2000:]}"
    return out.stdout


# ---------------------------------------------------------------------------- VCF

VCF_INFO = [
    '##INFO=<ID=DP,Number=1,Type=Integer,Description="Read depth">',
    '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency, one per ALT">',
    '##INFO=<ID=DB,Number=0,Type=Flag,Description="In \\"dbSNP\\"">',
    '##INFO=<ID=SVTYPE,Number=1,Type=String,Description="Structural variant type">',
    '##INFO=<ID=END,Number=1,Type=Integer,Description="End of the variant">',
    '##INFO=<ID=LS,Number=.,Type=String,Description="Labels">',
]
VCF_FORMAT = [
    '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">',
    # spaces inside a structured line, as some tools write them
    '##FORMAT=<ID=DP, Number=1, Type=Integer, Description="Depth">',
    '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="Allele depths">',
]


@st.composite
def vcf_record(draw, samples: int, positions=POS, odd: bool = True):
    chrom, pos, ref = draw(CHROM), draw(positions), draw(BASES)
    ids = draw(st.sampled_from([".", "rs1", "rs2;rs3"]))
    alts = draw(st.lists(st.sampled_from(["A", "C", "TT", "<DEL>", "*"]), max_size=3))
    qual = draw(st.one_of(st.none(), st.integers(0, 4000).map(lambda q: q / 4)))
    filt = draw(st.sampled_from([".", "PASS", "q10", "q10;s50"]))
    info, values = [], {"DP": None, "AF": None, "DB": None, "SVTYPE": None, "END": None, "LS": None}
    if draw(st.booleans()):
        values["DP"] = draw(st.integers(0, 2**31 - 1))
        info.append(f"DP={values['DP']}")
    if alts and draw(st.booleans()):
        afs = [draw(st.one_of(st.none(), st.integers(0, 8).map(lambda x: x / 8))) for _ in alts]
        if not odd and len(afs) > 1 and all(a is None for a in afs):
            afs[0] = 0.5  # oxbow reads "AF=.,." as NULL, where it is a list of two missing values
        values["AF"] = None if afs == [None] else afs  # "AF=." is a missing value, not a list of one
        info.append("AF=" + ",".join("." if a is None else repr(a) for a in afs))
    if draw(st.booleans()):
        values["DB"] = True
        info.append("DB")
    if draw(st.booleans()):
        values["SVTYPE"] = draw(st.sampled_from(["DEL", "INV"]))
        info.append(f"SVTYPE={values['SVTYPE']}")
    if draw(st.booleans()):
        values["END"] = pos + draw(st.integers(0, 10**6))
        info.append(f"END={values['END']}")
    if draw(st.booleans()):
        values["LS"] = draw(st.lists(st.sampled_from(["a", "b", "x y"]), min_size=1, max_size=3))
        info.append("LS=" + ",".join(values["LS"]))
    fields = [chrom, str(pos), ids, ref, ",".join(alts) or ".", "." if qual is None else repr(qual), filt,
              ";".join(info) or "."]
    genotypes = []
    if samples:
        fields.append("GT:DP")
        for _ in range(samples):
            gt = draw(st.sampled_from(["0/1", "1|1", "./.", "0", "."]))
            dp = draw(st.one_of(st.none(), st.integers(0, 99)))
            fields.append(f"{gt}:{'.' if dp is None else dp}")
            genotypes.append((gt, dp))
    end = values["END"] if values["END"] is not None else pos + len(ref) - 1
    row = (chrom, pos, end, None if ids == "." else ids, ref, alts, None if qual is None else f32(qual),
           None if filt == "." else filt,
           (values["DP"], values["END"], None if values["AF"] is None else [None if a is None else f32(a) for a in values["AF"]],
            values["DB"], values["SVTYPE"], values["LS"]))
    return "\t".join(fields), row, genotypes


@st.composite
def vcf_file(draw, samples: int = 0, odd: bool = True):
    """(text, expected rows, genotypes per record) of a VCF; ``odd``: odd but valid headers and
    positions past 2^31 (else what oxbow reads too)."""
    records = draw(st.lists(vcf_record(samples, POS if odd else POS32, odd), max_size=12))
    versions = ["##fileformat=VCFv4.2", "##fileformat=VCF4.1", "##fileformat=VCFv4.3"] if odd else ["##fileformat=VCFv4.2"]
    header = [draw(st.sampled_from(versions))]
    header += ['##FILTER=<ID=q10,Description="Quality below 10">', "##source=a tool, with commas"]
    header += VCF_INFO + ((VCF_FORMAT if odd else [f.replace(", ", ",") for f in VCF_FORMAT]) if samples else [])
    header.append("\t".join(["#CHROM", "POS", "ID", "REF", "ALT", "QUAL", "FILTER", "INFO"]
                            + (["FORMAT"] + [f"S{i}" for i in range(samples)] if samples else [])))
    text = "\n".join(header + [r[0] for r in records]) + "\n"
    return text, [r[1] for r in records], [r[2] for r in records]


def vcf_rows(df) -> list:
    return sorted(
        ((r.chrom, r.start, r.end, r.id, r.ref, list(r.alt), r.qual, r.filter,
          (r.info.DP, r.info.END, None if r.info.AF is None else list(r.info.AF), r.info.DB, r.info.SVTYPE,
           None if r.info.LS is None else list(r.info.LS)))
         for r in df.collect()), key=repr)


# ---------------------------------------------------------------------------- SAM

TAGS = [("NM", "i", st.integers(-2**31, 2**31 - 1)), ("RG", "Z", st.sampled_from(["g1", "a b"])),
        ("XF", "f", st.integers(-40, 40).map(lambda x: x / 4)), ("XA", "A", st.sampled_from(["c", "!"])),
        ("XB", "B:i", st.lists(st.integers(-5, 5), max_size=3)), ("XH", "H", st.sampled_from(["1AE3", "00"]))]


@st.composite
def sam_record(draw, refs: list[str], i: int, positions=POS):
    rname = draw(st.sampled_from(refs))
    pos = draw(positions)
    flag = draw(st.integers(0, 0xFFF)) & ~4
    mapq = draw(st.sampled_from([0, 30, 60, 255]))
    ops = draw(st.lists(st.tuples(st.integers(1, 50), st.sampled_from("MIDNSHP=X")), min_size=0, max_size=4))
    cigar = "".join(f"{n}{o}" for n, o in ops) or "*"
    rnext = draw(st.sampled_from(["*", "=", refs[0]]))
    pnext = draw(st.one_of(st.just(0), positions))
    tlen = draw(st.integers(-2**40, 2**40) if positions is POS else st.integers(-2**31 + 1, 2**31 - 1))
    seq = draw(st.one_of(st.just("*"), BASES))
    qual = "*" if seq == "*" or draw(st.booleans()) else "I" * len(seq)
    tags, tagvals = [], {}
    for name, kind, values in TAGS:
        if draw(st.booleans()):
            v = draw(values)
            tagvals[name] = v
            text = ("i," + ",".join(map(str, v))) if kind == "B:i" else str(v)
            tags.append(f"{name}:{'B' if kind == 'B:i' else kind}:{text}")
    fields = [f"q{i}", str(flag), rname, str(pos), str(mapq), cigar, rnext, str(pnext), str(tlen), seq, qual] + tags
    span = sum(n for n, o in ops if o in "MDN=X")
    row = (rname, pos, pos + max(span, 1) - 1, f"q{i}", flag, None if mapq == 255 else mapq,
           None if cigar == "*" else cigar, {"*": None, "=": rname}.get(rnext, rnext), pnext or None, tlen,
           None if seq == "*" else seq, None if qual == "*" else qual,
           tuple(tagvals.get(n) for n in ("NM", "RG", "XA", "XB", "XF", "XH")))
    return "\t".join(fields), row


@st.composite
def sam_file(draw, odd: bool = True):
    refs = ["chr1", "chr2", "HLA-A*01:01"]
    n = draw(st.integers(0, 12))
    records = [draw(sam_record(refs, i, POS if odd else POS32)) for i in range(n)]
    header = ["@HD\tVN:1.6"] + [f"@SQ\tSN:{r}\tLN:{2**41 if odd else 2**31 - 1}" for r in refs]
    header += draw(st.sampled_from([["@CO"], ["@CO\ta comment"], [], ["@RG\tID:g1", "@CO"]] if odd
                                   else [["@CO\ta comment"], []]))
    return "\n".join(header + [r[0] for r in records]) + "\n", [r[1] for r in records]


def sam_rows(df) -> list:
    names = [f.name for f in df.schema["tags"].dataType.fields]
    out = []
    for r in df.collect():
        t = r.tags.asDict() if names else {}
        tags = tuple(None if t.get(n) is None else (list(t[n]) if n == "XB" else t[n])
                     for n in ("NM", "RG", "XA", "XB", "XF", "XH"))
        out.append((r.chrom, r.start, r.end, r.qname, r.flag, r.mapq, r.cigar, r.rnext, r.pnext, r.tlen, r.seq,
                    r.qual, tags))
    return sorted(out, key=repr)


# ---------------------------------------------------------------------------- GFF3 / GTF

@st.composite
def gff_file(draw, gtf: bool = False, odd: bool = True):
    rows, lines = [], []
    for i in range(draw(st.integers(0, 12))):
        start = draw(POS if odd else POS32)
        end = start + draw(st.integers(0, 10**6))
        score = draw(st.one_of(st.none(), st.integers(0, 40).map(lambda x: x / 4)))
        strand = draw(st.sampled_from(["+", "-", ".", "?"] if odd else ["+", "-", "."]))  # oxbow reads "?" as NULL
        phase = draw(st.sampled_from([None, 0, 1, 2]))
        chrom = draw(CHROM)
        gene = f"g{i}"
        if gtf or (odd and draw(st.booleans())):  # GTF-style column 9, also in a .gff (as bedtools' files have)
            tags = draw(st.lists(st.sampled_from(["basic", "mane"]), max_size=2))
            attrs = f'gene_id "{gene}"; transcript_id "t{i}";' + "".join(f' tag "{t}";' for t in tags)
            values = (gene, None, None, tags or None, f"t{i}")
        else:
            parents = draw(st.lists(st.sampled_from(["p1", "p2"]), min_size=1, max_size=2))
            attrs = f"ID={gene};Parent={','.join(parents)};Note=a%3Bb%2Cc"
            values = (None, gene, parents, None, None)
        lines.append("\t".join([chrom, "src", "gene", str(start), str(end), "." if score is None else repr(score),
                                strand, "." if phase is None else str(phase), attrs]))
        rows.append((chrom, start, end, "src", "gene", None if score is None else f32(score),
                     None if strand == "." else strand, phase, values))
    header = ["##gff-version 3"] if not gtf else []
    header += draw(st.sampled_from([[], ["browser position chr1:1-100", "track name=genes"], ["# a comment"]] if odd
                                   else [[], ["# a comment"]]))
    text = "\n".join(header + lines) + "\n"
    if not gtf and draw(st.booleans()):
        text += "##FASTA\n>chr1\nACGTACGTNN\nacgt\n"
    return text, rows


def gff_rows(df) -> list:
    names = {f.name for f in df.schema["attributes"].dataType.fields}

    def get(a, n):
        v = a[n] if n in names else None
        if isinstance(v, str) and n in ("Parent", "tag"):
            return [v]  # a list attribute no drawn record repeated is found as one value
        return list(v) if isinstance(v, list) else v

    return sorted(((r.chrom, r.start, r.end, r.source, r.type, r.score, r.strand, r.phase,
                    (get(r.attributes, "gene_id"), get(r.attributes, "ID"), get(r.attributes, "Parent"),
                     get(r.attributes, "tag"), get(r.attributes, "transcript_id")))
                   for r in df.collect()), key=repr)


def gff_expected(rows) -> list:
    return sorted(rows, key=repr)


# ---------------------------------------------------------------------------- BGZF

def bgzf(data: bytes, block: int = 65280) -> bytes:
    """``data`` as BGZF with blocks of ``block`` uncompressed bytes (small blocks put records
    across block boundaries), ending with the EOF block, as bgzip writes it."""
    import zlib

    out = bytearray()
    chunks = [data[i:i + block] for i in range(0, len(data), block)] + [b""]
    for chunk in chunks:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = c.compress(chunk) + c.flush()
        bsize = 18 + len(body) + 8 - 1
        out += b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff\x06\x00BC\x02\x00" + struct.pack("<H", bsize)
        out += body + struct.pack("<II", zlib.crc32(chunk) & 0xFFFFFFFF, len(chunk))
    return bytes(out)


def write(path, text: str, compression: str = "plain", block: int = 65280) -> str:
    """``text`` at ``path`` as plain text, plain gzip or BGZF."""
    import gzip

    data = text.encode()
    if compression == "gzip":
        data = gzip.compress(data)
    elif compression == "bgzf":
        data = bgzf(data, block)
    with open(path, "wb") as fh:
        fh.write(data)
    return str(path)


def scan_metric(df, name: str) -> int:
    """The sum of the giql-genomic scan's metric ``name`` after ``df`` ran."""
    plan = df._jdf.queryExecution().executedPlan()
    total = 0
    nodes = [plan]
    while nodes:
        node = nodes.pop()
        metrics = node.metrics()
        if metrics.contains(name):
            total += metrics.apply(name).value()
        children = node.children()
        nodes += [children.apply(i) for i in range(children.size())]
        if node.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
            nodes.append(node.executedPlan())
    return total
