"""FASTA reading and the sequence helpers against bioframe 0.8 (pyfaidx records).

Spark jobs are slow to start, so one hypothesis example is one FASTA of
several chromosomes (line widths, N/n runs, soft-masking, an empty one)
with many intervals, read plain, bgzip-indexed and gzip in one Spark run,
with chunks of a few bases so intervals and sites cross chunk boundaries.
"""

from __future__ import annotations


import gzip
import math
import random
import shutil
import struct
import zlib

import bioframe as bf
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F

from giql_spark.dataframe import sequence as S
from giql_spark.io import InputError, read_source
from giql_spark.io import fasta as fasta_io

pyfaidx = pytest.importorskip("pyfaidx")

SETTINGS = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck),
                    phases=[Phase.explicit, Phase.reuse, Phase.generate])
_BGZF_EOF = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")


# ---------------------------------------------------------------------------
# files


def fasta_text(records: list[tuple[str, str, int]]) -> str:
    """FASTA of (name, sequence, line width) records."""
    out = []
    for name, seq, width in records:
        out.append(f">{name} some description\n")
        out.extend(seq[i:i + width] + "\n" for i in range(0, len(seq), width))
    return "".join(out)


def bgzip(data: bytes, block: int) -> tuple[bytes, bytes]:
    """(BGZF bytes, .gzi bytes) with blocks of ``block`` uncompressed bytes, as htslib writes them."""
    out, pairs = bytearray(), []
    for i in range(0, len(data), block):
        if i:
            pairs.append((len(out), i))
        piece = data[i:i + block]
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = c.compress(piece) + c.flush()
        head = b"\x1f\x8b\x08\x04\0\0\0\0\0\xff" + struct.pack("<H", 6) + b"BC" + struct.pack("<HH", 2, 25 + len(body))
        out += head + body + struct.pack("<II", zlib.crc32(piece), len(piece))
    gzi = struct.pack("<Q", len(pairs)) + b"".join(struct.pack("<QQ", a, b) for a, b in pairs)
    return bytes(out) + _BGZF_EOF, gzi


def write_variants(tmp, records, block: int = 37) -> dict[str, str]:
    """The same FASTA plain (.fai by pyfaidx), bgzip (same .fai, a .gzi) and gzip (no index)."""
    text = fasta_text(records).encode()
    plain = tmp / "g.fa"
    plain.write_bytes(text)
    pyfaidx.Fasta(str(plain)).close()  # writes g.fa.fai: the index comes from another implementation
    packed, gzi = bgzip(text, block)
    assert gzip.decompress(packed) == text  # the writer is sound
    (tmp / "b.fa.gz").write_bytes(packed)
    (tmp / "b.fa.gz.gzi").write_bytes(gzi)
    shutil.copy(tmp / "g.fa.fai", tmp / "b.fa.gz.fai")
    (tmp / "z.fa.gz").write_bytes(gzip.compress(text))
    return {"plain": str(plain), "bgzf": str(tmp / "b.fa.gz"), "gzip": str(tmp / "z.fa.gz")}


# ---------------------------------------------------------------------------
# generated genomes


@st.composite
def sequences(draw, max_runs=12):
    """Runs of bases: N/n runs, soft-masked (lower-case) runs, G/C-rich runs."""
    runs = draw(st.lists(st.tuples(st.sampled_from("ACGTNnacgtGCgcRS"), st.integers(1, 9)), max_size=max_runs))
    return "".join(c * k for c, k in runs)


@st.composite
def genomes(draw):
    n = draw(st.integers(2, 5))
    records = [(f"chr{i}", draw(sequences()), draw(st.integers(5, 80))) for i in range(n)]
    records.insert(draw(st.integers(0, n)), ("empty", "", draw(st.integers(5, 80))))
    return records


@st.composite
def intervals_on(draw, records):
    rows = []
    for name, seq, _ in records:
        size = len(seq)
        # The ends of the chromosome, all of it, zero-length, and past its end.
        rows += [(name, 0, size), (name, size, size), (name, max(size - 1, 0), size), (name, size, size + 4),
                 (name, 0, 0)]
        for _ in range(draw(st.integers(0, 6))):
            start = draw(st.integers(0, size + 2))
            rows.append((name, start, start + draw(st.integers(0, 30))))
    return pd.DataFrame(rows, columns=["chrom", "start", "end"])


def bioframe_rows(frame: pd.DataFrame, value: str) -> list[tuple]:
    return sorted((r.chrom, r.start, r.end, _key(getattr(r, value))) for r in frame.itertuples())


def _key(x: float):
    return "nan" if math.isnan(x) else round(x, 12)


@SETTINGS
@given(data=st.data(), chunk=st.integers(1, 7))
def test_against_bioframe(spark, tmp_path_factory, data, chunk):
    records = data.draw(genomes())
    iv = data.draw(intervals_on(records))
    paths = write_variants(tmp_path_factory.mktemp("fa"), records)
    recs = bf.load_fasta(paths["plain"], engine="pyfaidx")
    # bioframe.frac_gc lines its results up with df's index only when rows are grouped by chrom.
    iv = iv.sort_values(["chrom", "start", "end"], kind="stable").reset_index(drop=True)
    df = spark.createDataFrame(iv)
    want = {
        "gc": bioframe_rows(bf.frac_gc(iv, recs), "GC"),
        "gc_all": bioframe_rows(bf.frac_gc(iv, recs, mapped_only=False), "GC"),
        "mapped": bioframe_rows(bf.frac_mapped(iv, recs), "frac_mapped"),
    }
    read = read_source(spark, paths["bgzf"], chunk_size=chunk, partition_size=3 * chunk).df
    runs = [
        (f"gc/{kind}", "gc", S.frac_gc(df, path, chunk_size=chunk)) for kind, path in paths.items()
    ] + [
        ("gc_all/plain", "gc_all", S.frac_gc(df, paths["plain"], mapped_only=False, chunk_size=chunk)),
        ("mapped/bgzf", "mapped", S.frac_mapped(df, paths["bgzf"], chunk_size=chunk)),
        ("mapped/gzip", "mapped", S.frac_mapped(df, paths["gzip"], chunk_size=chunk)),
        # A DataFrame already read, with a bin size other than its chunks'.
        ("gc/frame", "gc", S.frac_gc(df, read, chunk_size=chunk + 2)),
    ]
    union = None
    for tag, _, frame in runs:
        part = frame.select(F.lit(tag).alias("tag"), "chrom", "start", "end", F.col(frame.columns[-1]).alias("value"))
        union = part if union is None else union.unionByName(part)
    got = {tag: [] for tag, _, _ in runs}
    for row in union.collect():
        got[row[0]].append((row[1], row[2], row[3], _key(row[4])))
    for tag, name, _ in runs:
        assert sorted(got[tag]) == want[name], tag


@given(st.text(alphabet="ACGTNnacgtRSWY", max_size=60), st.booleans())
def test_seq_gc_matches_bioframe(seq, mapped_only):
    assert _key(S.seq_gc(seq, mapped_only)) == _key(bf.seq_gc(seq, mapped_only))


def test_seq_gc_refuses_non_strings():
    with pytest.raises(ValueError, match="str"):
        S.seq_gc(b"ACGT")


# ---------------------------------------------------------------------------
# reading


def _genome(seed: int, sizes=(700, 0, 311, 53)) -> list[tuple[str, str, int]]:
    rng = random.Random(seed)
    out = []
    for i, size in enumerate(sizes):
        seq = "".join(rng.choice("ACGTacgtNNGC") for _ in range(size))
        out.append((f"c{i}", seq, rng.randint(5, 80)))
    return out


@pytest.fixture(params=["jvm", "python"])
def fasta_reader(request, monkeypatch):
    """The FASTA reader: the JVM one (giql-spark's jar), or the Python one of a session without it."""
    from giql_spark.io import jvm_source

    if request.param == "python":
        monkeypatch.setattr(jvm_source, "available", lambda s: False)
    return request.param


def test_read_chunks_in_several_tasks(spark, tmp_path, fasta_reader):
    records = _genome(1)
    paths = write_variants(tmp_path, records)
    frames = {kind: read_source(spark, path, chunk_size=50, partition_size=200) for kind, path in paths.items()}
    union = None
    for kind, src in frames.items():
        assert src.format == "fasta" and (src.coordinate_system, src.interval_type) == ("0based", "half_open")
        part = src.df.select(F.lit(kind).alias("kind"), F.spark_partition_id().alias("task"), "*")
        union = part if union is None else union.unionByName(part)
    rows = union.collect()
    want = {name: seq for name, seq, _ in records}
    for kind in paths:
        mine = [r for r in rows if r["kind"] == kind]
        tasks = {r["task"] for r in mine}
        # The indexed files are split by their .fai; plain gzip is read whole by one task.
        assert (len(tasks) > 1) == (kind != "gzip"), (kind, tasks)
        got = {}
        for r in sorted(mine, key=lambda r: (r["chrom"], r["start"])):
            assert r["end"] - r["start"] == len(r["seq"]) <= 50 and r["start"] % 50 == 0
            assert r["start"] == len(got.get(r["chrom"], ""))  # chunks are contiguous
            got[r["chrom"]] = got.get(r["chrom"], "") + r["seq"]
        assert got == want, kind


def test_partitions_follow_the_index(tmp_path):
    paths = write_variants(tmp_path, _genome(2))
    spec = fasta_io.describe(paths["bgzf"], {"chunk_size": 100, "partition_size": 250})
    parts = fasta_io.partitions(spec)
    # 700 bases in 7 chunks, the empty record, 311 in 4 and 53 in 1; a task holds at most 250 bases.
    assert [len(p) for p in parts] == [2, 2, 2, 3, 3, 1]
    assert parts[3][1] == [1, 0, 0]
    assert fasta_io.partitions(fasta_io.describe(paths["gzip"], {})) == [None]


def _one_line_error(call, *needles):
    with pytest.raises(InputError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    for needle in needles:
        assert needle in message, message
    return message


def test_bad_input_is_one_line(spark, tmp_path, fasta_reader):
    paths = write_variants(tmp_path, _genome(3))
    fai = tmp_path / "b.fa.gz.fai"
    # bgzip without .fai, then without .gzi
    fai.rename(tmp_path / "moved.fai")
    _one_line_error(lambda: read_source(spark, paths["bgzf"]), paths["bgzf"], "b.fa.gz.fai")
    (tmp_path / "moved.fai").rename(fai)
    (tmp_path / "b.fa.gz.gzi").rename(tmp_path / "moved.gzi")
    _one_line_error(lambda: read_source(spark, paths["bgzf"]), "b.fa.gz.gzi")
    (tmp_path / "moved.gzi").rename(tmp_path / "b.fa.gz.gzi")
    lines = fai.read_text().splitlines()
    # a malformed line, a record past the end of the file
    fai.write_text("\n".join(lines[:2] + ["c2\t311\tx\t60\t61"] + lines[3:]) + "\n")
    _one_line_error(lambda: read_source(spark, paths["bgzf"]), "b.fa.gz.fai line 3", "'x'")
    fai.write_text("\n".join(lines[:3] + ["c3\t53\t999999\t60\t61"]) + "\n")
    _one_line_error(lambda: read_source(spark, paths["bgzf"]), "b.fa.gz.fai line 4", "past the end")
    fai.write_text("\n".join(lines[:1] + ["c1\t0\t5"]) + "\n")
    _one_line_error(lambda: read_source(spark, paths["bgzf"]), "line 2", "expected 5")
    # a file read whole: sequence before the first header, a name given twice
    bad = tmp_path / "bad.fa"
    bad.write_text("ACGT\n>c1\nAC\n")
    _one_line_error(lambda: read_source(spark, str(bad)), "bad.fa line 1", "before the first")
    _one_line_error(lambda: read_source(spark, paths["plain"], chunk_size="0"), "chunk_size")


@pytest.mark.parametrize("reader", ["jvm", "python"])
def test_empty_and_repeated_names_read_as_samtools_faidx_reads_them(spark, tmp_path, monkeypatch, reader):
    """A repeated name keeps its first record (the Python reader warns), an empty name is a
    name; with an index samtools faidx wrote, the same rows. Both readers: the JVM one, and the
    Python one of a session without giql-spark's jar."""
    import shutil
    import subprocess

    from giql_spark.io import jvm_source

    if reader == "python":
        monkeypatch.setattr(jvm_source, "available", lambda s: False)
    odd = tmp_path / "odd.fa"
    odd.write_text(">c1\nAC\n>c2\nGG\n>c1\nTT\n>\nCCA\n>c3 a description\nT\n")
    want = [("c1", 0, 2, "AC"), ("c2", 0, 2, "GG"), ("", 0, 3, "CCA"), ("c3", 0, 1, "T")]
    if reader == "python":
        with pytest.warns(UserWarning, match=r"odd.fa line 5: sequence name 'c1' appears again; kept its first"):
            got = [tuple(r) for r in read_source(spark, str(odd)).df.collect()]
    else:
        got = [tuple(r) for r in read_source(spark, str(odd)).df.collect()]
    assert sorted(got) == sorted(want)
    if shutil.which("samtools"):  # its .fai drops the repeated record: read through it, the same rows
        subprocess.run(["samtools", "faidx", str(odd)], check=True, capture_output=True)
        got = [tuple(r) for r in read_source(spark, str(odd)).df.collect()]
        assert sorted(got) == sorted(want)


def test_unknown_chromosome_is_refused(spark, tmp_path):
    paths = write_variants(tmp_path, _genome(4))
    df = spark.createDataFrame([("c0", 0, 5), ("chrX", 1, 2)], "chrom string, start long, `end` long")
    for call in (lambda: S.frac_gc(df, paths["plain"]), lambda: S.frac_mapped(df, paths["gzip"])):
        with pytest.raises(ValueError, match="'chrX' from intervals not in"):
            call()


# ---------------------------------------------------------------------------
# digest


def _cuts(frags: list[tuple]) -> set[tuple]:
    return {(c, e) for c, s, e in frags} | {(c, s) for c, s, e in frags}


def test_digest_against_bioframe(spark, tmp_path):
    pytest.importorskip("Bio.Restriction")  # bioframe.digest needs Biopython
    rng = random.Random(7)
    planted = ["GAATTC", "GATC", "CATG", "GACTC", "AGCT", "gaattc"]
    records = []
    for i, size in enumerate((400, 0, 90, 6, 30)):
        seq = list("".join(rng.choice("ACGTacgtN") for _ in range(size)))
        for _ in range(size // 15):  # plant sites, many across the 7-base chunk boundaries
            site = rng.choice(planted)
            at = rng.randint(0, max(size - len(site), 0))
            seq[at:at + len(site)] = site[:size - at]
        records.append((f"d{i}", "".join(seq)[:size], rng.randint(5, 80)))
    records.append(("edge", "GAATTCAAGATCCATGGATC", 7))  # sites at both ends of a chromosome
    paths = write_variants(tmp_path, records)
    recs = bf.load_fasta(paths["plain"], engine="pyfaidx")
    enzymes = ["EcoRI", "DpnII", "NlaIII", "HinfI", "AluI"]
    union = None
    for i, enzyme in enumerate(enzymes + ["G^AATTC"]):
        path = paths["bgzf"] if i % 2 else paths["plain"]
        part = S.digest(path, enzyme, chunk_size=7).withColumn("enzyme", F.lit(enzyme))
        union = part if union is None else union.unionByName(part)
    got = {}
    for r in union.collect():
        got.setdefault(r["enzyme"], []).append((r["chrom"], r["start"], r["end"]))
    order = {name: i for i, (name, _, _) in enumerate(records)}
    for enzyme in enzymes:
        frags = got[enzyme]
        want = [tuple(r) for r in bf.digest(recs, enzyme).itertuples(index=False)]
        # bioframe puts each boundary 2 bases after the cut: Bio.Restriction's positions are
        # already 1-based bases after the cut, and bioframe adds 1 more.
        lengths = {name: len(seq) for name, seq, _ in records}
        shifted = {(c, p if p in (0, lengths[c]) else p - 2) for c, s, e in want for p in (s, e)}
        assert _cuts(frags) == shifted, enzyme
        assert len(frags) == len(want), enzyme
        assert sorted(frags, key=lambda f: (order[f[0]], f[1])) == frags, enzyme  # FASTA order, then start
        assert all(s < e or (s == e == 0) for _, s, e in frags)
    assert got["G^AATTC"] == got["EcoRI"]
    assert ("d1", 0, 0) in got["EcoRI"]  # an empty chromosome is one fragment


def test_enzyme_sites():
    assert S.enzyme_site("EcoRI") == ("GAATTC", 1)
    assert S.enzyme_site("CATG^") == ("CATG", 4)
    with pytest.raises(ValueError, match="palindromic"):
        S.enzyme_site("GG^TCTC")
    with pytest.raises(ValueError, match="Unknown enzyme"):
        S.enzyme_site("NoSuchEnzyme")
    # Bio.Restriction's search, on sites across and at the ends, agrees with site_cuts.
    pytest.importorskip("Bio.Restriction")
    from Bio.Restriction import DpnII, NlaIII
    from Bio.Seq import Seq

    # NlaIII at 0 cuts the top strand at 4 but the bottom at 0: Bio.Restriction drops it, as must we.
    seq = "CATGATCAACATGAAGATCCATGATC"
    for enz, name in ((DpnII, "DpnII"), (NlaIII, "NlaIII")):
        site, cut = S.enzyme_site(name)
        assert S.site_cuts(seq, 0, len(seq), site, cut, 0, len(seq)) == [p - 1 for p in enz.search(Seq(seq))]
