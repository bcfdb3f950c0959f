"""expand: pad or rescale every interval, a column expression per coordinate."""

from __future__ import annotations

from numbers import Real

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from .frames import checked, col, interval_cols


def expand(df: DataFrame, pad: int | None = None, scale: float | None = None, side: str = "both",
           cols=None) -> DataFrame:
    """Grow or shrink each interval, as ``bioframe.expand``.

    With ``pad`` (an integer), ``start - pad`` and/or ``end + pad`` by
    ``side`` (``"both"``, ``"left"``, ``"right"``); a negative pad shrinks,
    but never past the midpoint ``start + (end - start) // 2``. With
    ``scale`` (>= 0), each chosen side moves by ``0.5 * (scale - 1) *
    (end - start)`` and the result is rounded half to even and cast back to
    the column's type (``scale=0`` gives midpoints, ``1`` the input).
    Exactly one of ``pad`` and ``scale`` is required.

    Other columns are unchanged; a NULL coordinate stays NULL. Results are
    not trimmed: a start may become negative, as in bioframe.
    """
    op = "expand"
    c, s, e = interval_cols(df, cols, "df", op)
    if side not in ("both", "left", "right"):
        raise GiqlSparkError(f"{op}: side must be 'both', 'left' or 'right', got {side!r}")
    if pad is not None and scale is not None:
        raise GiqlSparkError(f"{op}: only one of pad or scale can be given")
    if pad is None and scale is None:
        raise GiqlSparkError(f"{op}: either pad or scale must be given")
    # a start below 0 is what an earlier expand leaves at a chromosome's start: kept, as bioframe does
    df = checked(df, (c, s, e), "df", op, negative=True)
    types = {f.name: f.dataType for f in df.schema.fields}
    start, end = col(s), col(e)
    left, right = side in ("both", "left"), side in ("both", "right")
    if pad is not None:
        if isinstance(pad, bool) or not isinstance(pad, int):
            raise GiqlSparkError(f"{op}: pad must be an integer, got {pad!r}")
        new_start = start.cast("long") - pad if left else start.cast("long")
        new_end = end.cast("long") + pad if right else end.cast("long")
        if pad < 0:
            mid = start.cast("long") + F.floor((end - start) / 2).cast("long")
            new_start, new_end = F.least(new_start, mid), F.greatest(new_end, mid)
    else:
        if isinstance(scale, bool) or not isinstance(scale, Real) or scale < 0:
            raise GiqlSparkError(f"{op}: scale must be a number >= 0, got {scale!r}")
        # Same float arithmetic as bioframe, so results round identically.
        shift = F.lit(0.5 * (scale - 1)) * (end - start).cast("double")
        new_start = F.bround(start.cast("double") - shift, 0) if left else start
        new_end = F.bround(end.cast("double") + shift, 0) if right else end
    return df.withColumns({s: new_start.cast(types[s]), e: new_end.cast(types[e])})
