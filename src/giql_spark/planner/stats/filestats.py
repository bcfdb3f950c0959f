"""Statistics of Parquet files, kept for the process while the files are unchanged.

Footers, the width sample and the chromosome count describe files, not
queries or sessions: a second query, a new :class:`~giql_spark.Session` or a
table registered again over the same files reads them once. An entry is keyed
by every file's path, size, modification time (ns) and inode, plus the
columns read and whether a sample was taken, so a file rewritten in place is
read again. At most :data:`MAX_ENTRIES` entries are kept, the least recently
used dropped first. :func:`clear` empties the cache.
"""

from __future__ import annotations

import os

from .lru import LRU

#: Entries kept; each holds one side's width sample (at most ~100K int64) and per-chromosome arrays.
MAX_ENTRIES = 64

_entries = LRU(MAX_ENTRIES)


def key(files: list[str], cols: tuple, sample: bool) -> tuple | None:
    """The cache key of ``files`` read through ``cols`` (what the interval
    reads of them); None when a file cannot be stat'ed."""
    ids = []
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            return None
        ids.append((os.path.realpath(f), st.st_size, st.st_mtime_ns, st.st_ino))
    return (tuple(sorted(ids)), tuple(cols), bool(sample))


def remote_key(spark, files: list[str], cols: tuple, sample: bool) -> tuple | None:
    """:func:`key` for files at URIs (``hdfs://``, ``s3a://`` ...): each one's URI, size and
    modification time as its file system reports them; None when one cannot be stat'ed."""
    from ...io import files as files_io

    ids = []
    for f in files:
        try:
            st = files_io.status(spark, f)
        except Exception:  # noqa: BLE001 - a file system error: no key, the statistics are read again
            return None
        if st is None:
            return None
        ids.append((f, st[0], st[1]))
    return (tuple(sorted(ids)), tuple(cols), bool(sample))


def get(k: tuple | None):
    """The stored statistics for ``k``, or None."""
    return None if k is None else _entries.get(k, None)


def put(k: tuple | None, value) -> None:
    if k is not None:
        _entries.put(k, value)


def clear() -> None:
    """Forget every file's statistics (the next plan reads them again)."""
    _entries.clear()
