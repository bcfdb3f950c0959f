"""What the planner knows about a join side, as plain values: no Spark.

:class:`SideStats` holds one side's statistics (tier, rows, size, interval
widths, rows and extent per chromosome, sortedness, and what could not be
read); :func:`from_sample` computes them from sampled Arrow columns. Rows with
a NULL chromosome or coordinate join nothing and are not counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ...kernels import coords

#: The most rows a tier-2 sample holds.
SAMPLE_ROWS = 300_000


@dataclass(frozen=True, eq=False)
class Widths:
    """Interval widths (``end - start``, canonical coordinates) of a sample."""

    sample: np.ndarray  # int64 widths of the sampled rows

    @property
    def n(self) -> int:
        return int(self.sample.shape[0])

    def quantile(self, q: float) -> float:
        return float(np.quantile(self.sample, q)) if self.n else 0.0

    @property
    def mean(self) -> float:
        return float(self.sample.mean()) if self.n else 0.0

    @property
    def cv(self) -> float:
        m = self.mean
        return float(self.sample.std() / m) if self.n and m > 0 else 0.0

    def describe(self) -> str:
        return (f"widths median {self.quantile(0.5):,.0f}, p95 {self.quantile(0.95):,.0f}, "
                f"p99 {self.quantile(0.99):,.0f}, mean {self.mean:,.0f}, cv {self.cv:.2f} "
                f"(sample of {self.n:,})")


class Chroms(Mapping):
    """Rows and extent per chromosome, kept as arrays sorted by name.

    Reads like ``{name: (rows, extent)}``; the cost model uses the arrays, so
    ten thousand contigs cost no Python loop.
    """

    def __init__(self, names=(), rows=(), extent=()):
        names = np.asarray(names, dtype=str)
        order = np.argsort(names, kind="stable")
        self.names = names[order]
        self.rows = np.asarray(rows, dtype=np.int64).reshape(-1)[order]
        self.extent = np.asarray(extent, dtype=np.int64).reshape(-1)[order]

    @classmethod
    def of(cls, value) -> Chroms:
        """``value`` itself if it is a :class:`Chroms`, else one built from a ``{name: (rows, extent)}`` dict."""
        if isinstance(value, Chroms):
            return value
        items = list((value or {}).items())
        return cls([k for k, _ in items], [v[0] for _, v in items], [v[1] for _, v in items])

    def _index(self, name) -> int:
        i = int(np.searchsorted(self.names, name))
        if i < len(self.names) and self.names[i] == name:
            return i
        raise KeyError(name)

    def __getitem__(self, name) -> tuple[int, int]:
        i = self._index(name)
        return int(self.rows[i]), int(self.extent[i])

    def __iter__(self):
        return (str(n) for n in self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"Chroms({len(self)} chromosomes, {int(self.rows.sum()):,} rows)"

    def aligned(self, names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, extent) at each of the sorted ``names``; 0 where absent."""
        if not len(self.names):
            return np.zeros(len(names), dtype=np.int64), np.zeros(len(names), dtype=np.int64)
        i = np.minimum(np.searchsorted(self.names, names), len(self.names) - 1)
        hit = self.names[i] == names
        return np.where(hit, self.rows[i], 0), np.where(hit, self.extent[i], 0)


@dataclass(frozen=True, eq=False)
class SideStats:
    """What the planner knows about one join side; None means unknown.

    ``chroms`` maps a chromosome to ``(estimated rows, extent)`` where the
    extent is the largest interval end seen on it (a lower bound on its
    length). ``tier`` is the highest tier that contributed.
    """

    size_bytes: int | None
    tier: int = 0
    rows: int | None = None
    widths: Widths | None = None
    chroms: Mapping = field(default_factory=Chroms)
    sorted: bool | None = None
    source: str = "Spark estimate"
    #: True when the files' footers count no NULL in any column the side's
    #: interval reads (its chromosome aside): then a band's hull ends guarded
    #: by ``IS NULL`` (unbounded, :class:`~giql_spark.band.Band`) are
    #: never taken on this side.
    null_free: bool | None = None
    #: Facts that could not be had, each with why (for EXPLAIN).
    notes: tuple[str, ...] = ()
    #: Row groups of the side's Parquet files (the merge join reads whole row
    #: groups, so they bound how finely it can cut a chromosome).
    row_groups: int | None = None
    #: Files the side reads on an object store, where each open is a round trip (0: none there).
    store_files: int = 0

    def describe(self) -> str:
        if self.size_bytes is None and self.rows is None:
            return "size unknown"
        parts = []
        if self.rows is not None:
            parts.append(f"{self.rows:,} rows")
        if self.size_bytes is not None:
            parts.append(f"~{_human(self.size_bytes)}")
        return f"{', '.join(parts)} ({self.source})"

    def details(self) -> list[str]:
        """Lines for EXPLAIN: every statistic the cost model may read."""
        out = [f"tier {self.tier}: {self.describe()}"]
        if self.widths is not None:
            out.append(self.widths.describe())
        if self.chroms:
            c = Chroms.of(self.chroms)
            top = np.argsort(-c.rows, kind="stable")[:3]
            out.append(f"{len(c):,} chromosomes; largest " +
                       ", ".join(f"{c.names[i]} ~{int(c.rows[i]):,} rows" for i in top))
        if self.sorted is not None:
            out.append("sorted by (chrom, start)" if self.sorted else "not sorted by (chrom, start)")
        if self.null_free:
            out.append("no NULL positions (Parquet footers)")
        out.extend(f"not known: {n}" for n in self.notes)
        return out


def from_sample(size: int | None, rows: int | None, chrom, start, end,
                *, tier: int, source: str, sorted_: bool | None) -> SideStats:
    """Tier-2 statistics from sampled Arrow columns, scaled to ``rows``.

    ``chrom`` may be any string or dictionary array; it is counted through
    dictionary codes, never decoded row by row.
    """
    codes, names, s, e = _columns(chrom, start, end)
    # Scaled by all sampled rows, so NULL rows count in ``rows`` but not per chromosome.
    scale = (rows / len(chrom)) if rows and len(chrom) else 1.0
    lo, hi = np.minimum(s, e), np.maximum(s, e)
    chroms = Chroms()
    if len(codes):
        counts = np.bincount(codes, minlength=len(names))
        extent = np.zeros(len(names), dtype=np.int64)
        np.maximum.at(extent, codes, hi)
        seen = counts > 0
        chroms = Chroms(names[seen], np.maximum(1, np.round(counts[seen] * scale)), extent[seen])
    return SideStats(size, tier=tier, rows=rows, widths=Widths(hi - lo), chroms=chroms, sorted=sorted_,
                     source=source)


def in_order(chrom, start) -> bool:
    """Whether the rows (NULLs left out) are sorted by (chrom, start)."""
    codes, _, s, _ = _columns(chrom, start, start)
    # Codes index the sorted distinct names, so they compare like the names.
    return bool(np.all((codes[1:] > codes[:-1]) | ((codes[1:] == codes[:-1]) & (s[1:] >= s[:-1]))))


def chrom_codes(chrom) -> tuple[np.ndarray, np.ndarray]:
    """(per row, the index of its chromosome in the sorted distinct names or -1
    for NULL; those names), through dictionary codes: no string is decoded
    per row."""
    return coords.chrom_codes(chrom, sorted_names=True)


def _columns(chrom, start, end) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(chromosome codes as :func:`chrom_codes`, the names, start, end) of the non-NULL rows."""
    c = coords.coords(chrom, start, end, sorted_names=True)
    return c.codes[c.valid], c.names, c.a[c.valid], c.b[c.valid]


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
