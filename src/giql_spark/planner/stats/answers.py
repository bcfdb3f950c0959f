"""Answers of a Spark job over one side, kept while the side and its files are unchanged.

Some facts a plan needs can only be read by scanning every row (the widest
interval, whether a row is one the k-nearest join cannot rank). A scan of ten
million rows is a second or more, paid again by every query over the same
table. Such an answer is kept per side plan (Spark's semantic hash: the same
relation, filters and projections) and per file the side reads (path, size,
modification time, inode, as :mod:`.filestats` keys file statistics), so a
file rewritten in place is scanned again.

A fact whose staleness would give a wrong answer (not just a slower plan) is
kept only for a side that reads local files: an in-memory or remote source,
whose content a hash or a stat cannot vouch for, is scanned each time. Other
facts are kept for such a side by its plan and file names alone.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from pyspark.sql import DataFrame

from ...io.formats import local_path
from . import filestats
from .lru import MISSING, LRU

T = TypeVar("T")

#: Answers kept; each is a small value.
MAX_ENTRIES = 256

_entries = LRU(MAX_ENTRIES)


def _key(df: DataFrame, question: tuple, files_required: bool) -> tuple | None:
    try:
        plan = df.semanticHash()
    except Exception:  # a plan Spark cannot hash
        return None
    try:
        files = list(df.inputFiles())
    except Exception:
        files = []
    local = [local_path(f) for f in files]
    # None when a file is remote or cannot be stat'ed: nothing vouches for its content
    ids = filestats.key(local, (), False) if files and None not in local else None
    if ids is not None:
        return (plan, question, ids)
    return None if files_required else (plan, question, tuple(sorted(files)))


def kept(df: DataFrame, question: tuple, compute: Callable[[], T], *, files_required: bool = True) -> T:
    """``compute()``, the answer to ``question`` about ``df``, read once per unchanged side.

    ``files_required``: keep the answer only where ``df`` reads local files (see the
    module's notes); else a side without files is keyed by its plan alone."""
    key = _key(df, question, files_required)
    if key is not None:
        found = _entries.get(key)
        if found is not MISSING:
            return found
    value = compute()
    if key is not None:
        _entries.put(key, value)
    return value


def clear() -> None:
    """Forget every kept answer."""
    _entries.clear()
