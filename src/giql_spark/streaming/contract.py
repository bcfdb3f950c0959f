"""The order contract of a streaming input: what the stateful join may assume about it.

A stream joined with another stream must arrive, within each equality key
(the chromosome), in non-decreasing order of one column (the start), up to
``max_disorder`` of slack. That is what lets the join forget rows: once a
side has reached position ``x`` on a key, no later row of it lies below
``x - max_disorder``, and interval arithmetic over the join condition gives
the lowest position of the other side that can still match.

A row that breaks the contract is never joined silently wrong: with
``late_rows="fail"`` (the default) the query fails with a message naming the
key, the position and the bound; with ``late_rows="drop"`` the row is
dropped and counted in the query's progress.

A row whose order column holds :data:`END` or more is an end marker: it says
that its side will send no more rows for its key, so the other side's rows
on that key that are still held can be released (outer joins emit their
unmatched rows then). It joins nothing and is not output.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import GiqlSparkError

#: The late-row policies.
LATE_ROWS = ("fail", "drop")
#: An order value of at least this closes its key on its side (below the
#: DataFrame API's coordinate limit of 2^60, so a marker row passes its checks).
END = 2**60 - 1


@dataclass(frozen=True)
class Contract:
    """How one streaming input is ordered.

    ``order_col``: the column non-decreasing within each key (None: not
    declared; a stream-stream join then refuses the input).
    ``interval``: the (start, end) columns of a table with intervals, or
    None; ``start <= end`` is part of the contract where both are given.
    ``max_disorder``: how far below the newest order value seen on its key
    a row may still arrive, in the order column's units.
    ``late_rows``: ``"fail"`` or ``"drop"``.
    """

    order_col: str | None
    interval: tuple[str, str] | None = None
    max_disorder: int = 0
    late_rows: str = "fail"

    def describe(self) -> str:
        return (f"non-decreasing {self.order_col} within each key, max_disorder={self.max_disorder}, "
                f"late_rows={self.late_rows}")


def contract(columns: list[str], *, name: str, interval: tuple[str, str] | None = None,
             order_col: str | None = None, max_disorder: int | None = None,
             late_rows: str | None = None) -> Contract:
    """The contract of the streaming input ``name`` with ``columns``, checked.

    ``order_col`` defaults to the start column of ``interval``; ``max_disorder``
    to 0 and ``late_rows`` to ``"fail"``.
    """
    by_lower = {c.lower(): c for c in columns}
    if interval is not None:
        interval = tuple(by_lower.get(c.lower(), c) for c in interval)
    if order_col is None and interval is not None:
        order_col = interval[0]
    if order_col is not None:
        if not isinstance(order_col, str) or order_col.lower() not in by_lower:
            raise GiqlSparkError(f"stream {name!r}: order_col {order_col!r} is not one of its columns "
                                 f"({', '.join(columns)})")
        order_col = by_lower[order_col.lower()]
    max_disorder = 0 if max_disorder is None else max_disorder
    if isinstance(max_disorder, bool) or not isinstance(max_disorder, int) or max_disorder < 0:
        raise GiqlSparkError(f"stream {name!r}: max_disorder must be an integer >= 0, got {max_disorder!r}")
    late_rows = "fail" if late_rows is None else late_rows
    if late_rows not in LATE_ROWS:
        raise GiqlSparkError(f"stream {name!r}: late_rows must be one of {', '.join(LATE_ROWS)}, got {late_rows!r}")
    return Contract(order_col, interval, max_disorder, late_rows)


def stream_options_given(order_col, max_disorder, late_rows) -> bool:
    """Whether any order-contract option was passed (they apply to streams only)."""
    return any(v is not None for v in (order_col, max_disorder, late_rows))
