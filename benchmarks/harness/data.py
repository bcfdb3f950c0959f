"""Generated interval data: hg38-shaped, seeded (deterministic), written once to
``benchmarks/data/`` (git-ignored) and reused by every benchmark.

Each chromosome gets a multinomial share of the rows in proportion to its length;
starts are uniform over the positions where the interval fits; rows are sorted by
chromosome and start, like a BED file. Columns: chrom, start, end (int64, 0-based
half-open), name.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

BENCHMARKS = Path(__file__).resolve().parent.parent
DATA_DIR = BENCHMARKS / "data"
REPORTS_DIR = BENCHMARKS / "reports"

# hg38 primary assembly, chr1..chr22, chrX, chrY (UCSC chrom.sizes).
HG38 = {
    "chr1": 248_956_422, "chr2": 242_193_529, "chr3": 198_295_559, "chr4": 190_214_555,
    "chr5": 181_538_259, "chr6": 170_805_979, "chr7": 159_345_973, "chr8": 145_138_636,
    "chr9": 138_394_717, "chr10": 133_797_422, "chr11": 135_086_622, "chr12": 133_275_309,
    "chr13": 114_364_328, "chr14": 107_043_718, "chr15": 101_991_189, "chr16": 90_338_345,
    "chr17": 83_257_441, "chr18": 80_373_285, "chr19": 58_617_616, "chr20": 64_444_167,
    "chr21": 46_709_983, "chr22": 50_818_468, "chrX": 156_040_895, "chrY": 57_227_415,
}

PROFILES = {
    "uniform": "widths uniform 100-2000 bp",
    "heavy": "gene-like widths: lognormal, median 10 kb (sigma 1.2), clipped to [100 bp, 2.5 Mb]",
    "middle": "widths uniform 100-1000 bp, plus 0.5% of intervals uniform 1-5 Mb wide",
}
PROFILE_SEED = {"uniform": 1000, "heavy": 2000, "middle": 3000}
ROW_GROUP = 131_072  # several row groups per file so Spark reads each table in >1 split


def generate(profile: str, n: int, seed: int, prefix: str, chroms: dict[str, int] | None = None,
             weights=None) -> pa.Table:
    """n intervals of a width profile over ``chroms`` (name -> length; default hg38).

    Rows go to chromosomes multinomially by ``weights`` (default: in proportion
    to length); starts are uniform over the positions where the interval fits.
    """
    rng = np.random.default_rng(seed)
    chroms = HG38 if chroms is None else chroms
    names = list(chroms)
    lengths = np.array([chroms[c] for c in names], dtype=np.int64)
    w = lengths / lengths.sum() if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
    per_chrom = rng.multinomial(n, w)
    if profile == "uniform":
        widths = rng.integers(100, 2001, size=n)
    elif profile == "heavy":
        widths = np.clip(np.round(rng.lognormal(np.log(10_000), 1.2, size=n)), 100, 2_500_000).astype(np.int64)
    elif profile == "middle":
        widths = rng.integers(100, 1001, size=n)
        wide = rng.choice(n, size=max(1, round(n * 0.005)), replace=False)
        widths[wide] = rng.integers(1_000_000, 5_000_001, size=len(wide))
    else:
        raise ValueError(f"unknown profile {profile!r}")
    widths = widths.astype(np.int64)
    chrom_idx = np.repeat(np.arange(len(names)), per_chrom)
    chrom_len = lengths[chrom_idx]
    widths = np.minimum(widths, chrom_len)
    # start uniform over the positions where the whole interval fits
    starts = np.floor(rng.random(n) * (chrom_len - widths + 1)).astype(np.int64)
    ends = starts + widths
    order = np.lexsort((starts, chrom_idx))  # sorted like a BED file
    chrom_idx, starts, ends = chrom_idx[order], starts[order], ends[order]
    chrom = pa.DictionaryArray.from_arrays(pa.array(chrom_idx, pa.int32()), pa.array(names)).cast(pa.string())
    name = pa.array([f"{prefix}{i}" for i in range(n)], pa.string())
    return pa.table({"chrom": chrom, "start": pa.array(starts, pa.int64()),
                     "end": pa.array(ends, pa.int64()), "name": name})


def write_parquet(table: pa.Table, path: Path, row_group: int = ROW_GROUP) -> Path:
    """Write through a temporary name, so a killed run leaves no half-written file behind."""
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    pq.write_table(table, tmp, row_group_size=row_group)
    tmp.rename(path)
    return path


def with_groups(path: Path, rows: int) -> Path:
    """``path`` itself when its row groups hold ``rows`` rows, else a copy that does (made once)."""
    meta = pq.read_metadata(path)
    if meta.num_row_groups and meta.row_group(0).num_rows == rows:
        return path
    out = DATA_DIR / f"{path.stem}_rg{rows}.parquet"
    if not out.exists():
        write_parquet(pq.read_table(path), out, row_group=rows)
    return out


def data_paths(profile: str, size: int, order: str = "sorted") -> tuple[Path, Path]:
    """The left and right files of a profile at ``size`` rows a side (generated once).

    ``order="random"``: the same rows in a random order (a table nobody sorted).
    """
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    out = []
    for side, offset in (("left", 1), ("right", 2)):
        name = f"{profile}_{size}_{side}" + ("" if order == "sorted" else f"_{order}")
        p = DATA_DIR / f"{name}.parquet"
        if not p.exists():
            t = generate(profile, size, PROFILE_SEED[profile] + offset, "l" if side == "left" else "r")
            if order == "random":
                t = t.take(np.random.default_rng(PROFILE_SEED[profile] + 10 * offset).permutation(size))
            elif order != "sorted":
                raise ValueError(f"unknown order {order!r}")
            write_parquet(t, p)
        out.append(p)
    return out[0], out[1]


def scratch_dir(prefix: str) -> Path:
    """A new temporary directory under ``DATA_DIR`` (created first: a fresh clone has none)."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=str(DATA_DIR)))


def warmup_paths() -> tuple[Path, Path]:
    """20k x 20k intervals (middle profile) for the untimed warm-up runs."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    wl, wr = DATA_DIR / "warmup_left.parquet", DATA_DIR / "warmup_right.parquet"
    if not wl.exists() or not wr.exists():
        write_parquet(generate("middle", 20_000, 11, "l"), wl, row_group=5_000)
        write_parquet(generate("middle", 20_000, 12, "r"), wr, row_group=5_000)
    return wl, wr


def parquet_rows(path: Path) -> int:
    """Rows in the Parquet files under ``path``, from their footers."""
    return sum(pq.read_metadata(f).num_rows for f in Path(path).rglob("*.parquet"))
