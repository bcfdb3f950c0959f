"""Remember which coordinate convention a DataFrame's start/end columns use.

``Session.read``/``Session.register`` record the convention of the
DataFrames they return so ``Session.write`` can convert BED output back to
0-based half-open without being told.  Entries are weak: they disappear with
the DataFrame.  A DataFrame derived from a recorded one (a select, a join, a
query result) is a new object and is NOT recorded.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

__all__ = ["Convention", "convention_of", "remember"]

_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Convention(NamedTuple):
    """Which columns hold the interval, and giql's coordinate convention for them."""

    chrom_col: str
    start_col: str
    end_col: str
    coordinate_system: str  # "0based" or "1based"
    interval_type: str  # "half_open" or "closed"


def remember(df, convention: Convention) -> None:
    try:
        _SEEN[df] = convention
    except TypeError:  # a DataFrame class that cannot be weakly referenced
        pass


def convention_of(df) -> Convention | None:
    try:
        return _SEEN.get(df)
    except TypeError:
        return None
