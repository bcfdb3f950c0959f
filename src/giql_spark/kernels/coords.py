"""Coordinates out of Arrow columns: the one place rows with a NULL are told apart.

A row takes part in an interval operation only when its chromosome and both
coordinates are present. :func:`coords` returns, for a chromosome column and
two integer columns, the chromosome of every row as a small integer code
(counted through Arrow's dictionary encoding: no string is decoded per row),
both coordinates as int64 (NULL read as 0) and the rows where all three are
present.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def array(a) -> pa.Array:
    """One Arrow array from a chunked column, an array or a Python sequence."""
    if isinstance(a, pa.ChunkedArray):
        return a.combine_chunks() if a.num_chunks != 1 else a.chunk(0)
    if isinstance(a, pa.Array):
        return a
    return pa.array(a)


def chrom_codes(chrom, sorted_names: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(per row, the index of its chromosome in ``names`` or -1 for NULL; ``names``).

    With ``sorted_names`` the names are the sorted distinct values, so codes
    compare as the names do; otherwise they are in first-seen order.
    """
    chrom = array(chrom)
    if not pa.types.is_dictionary(chrom.type):
        chrom = pc.dictionary_encode(chrom.cast(pa.string()))
    codes = chrom.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    names = np.array([str(x) for x in chrom.dictionary.to_pylist()], dtype=object)
    # A NULL dictionary entry is a NULL chromosome.
    null_entries = np.flatnonzero(~chrom.dictionary.is_valid().to_numpy(zero_copy_only=False))
    if len(null_entries):
        codes = np.where(np.isin(codes, null_entries), -1, codes)
    if sorted_names:
        names, remap = np.unique(names.astype(str), return_inverse=True)
        if len(remap):
            codes = np.where(codes >= 0, remap.reshape(-1)[np.maximum(codes, 0)], -1)
    return codes, names


@dataclass(frozen=True)
class Coords:
    """Per row: chromosome code (-1: NULL) into ``names``, ``a`` and ``b`` as
    int64 (NULL read as 0); ``valid``: the rows where all three are present."""

    codes: np.ndarray
    names: np.ndarray
    a: np.ndarray
    b: np.ndarray
    valid: np.ndarray


def _ints(col: pa.Array) -> np.ndarray:
    return col.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def coords(chrom, a, b, *, sorted_names: bool = False) -> Coords:
    """:class:`Coords` of the columns ``chrom``, ``a``, ``b`` (arrays or chunked columns)."""
    codes, names = chrom_codes(chrom, sorted_names)
    a, b = array(a), array(b)
    ok = (codes >= 0) & pc.and_(a.is_valid(), b.is_valid()).to_numpy(zero_copy_only=False)
    return Coords(codes, names, _ints(a), _ints(b), np.flatnonzero(ok))


def of(table, chrom: str, a: str, b: str, **kw) -> Coords:
    """:func:`coords` of three named columns of a table or record batch."""
    return coords(table.column(chrom), table.column(a), table.column(b), **kw)


def by_chrom(c: Coords, rows: np.ndarray | None = None):
    """Yield (chromosome, row indexes) for ``rows`` (default: the valid rows)."""
    rows = c.valid if rows is None else rows
    if not len(rows):
        return
    sub = c.codes[rows]
    for g in np.unique(sub):
        yield c.names[g], rows[sub == g]
