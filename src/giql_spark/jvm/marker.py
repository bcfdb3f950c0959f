"""Python entry points to the JVM interval joins: the ``giql_band`` marker and a join helper.

The join of ``left`` and ``right`` computed here is exactly Spark's own join on
``keys equal AND hulls share a point AND residual`` (with the given join type): a pair joins when
every key pair is equal (a NULL key matches nothing), the closed hulls
``[least(lo, hi), greatest(lo, hi)]`` of the two rows share a point (a NULL bound matches
nothing) and the residual is TRUE. The hulls only prune; the residual is always applied.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from . import FUNCTION

JOIN_TYPES = {
    "inner": "inner", "cross": "inner",
    "left": "left", "left_outer": "left", "leftouter": "left",
    "right": "right", "right_outer": "right", "rightouter": "right",
    "full": "full", "outer": "full", "full_outer": "full", "fullouter": "full",
    "semi": "left_semi", "left_semi": "left_semi", "leftsemi": "left_semi",
    "anti": "left_anti", "left_anti": "left_anti", "leftanti": "left_anti",
}
OPTIONS = {"algo": ("auto", "broadcast", "sweep", "merge"), "build": ("auto", "left", "right"),
           "index": ("auto", "tree", "scan"), "tile": ("auto", "<positive integer>"),
           "nearest": ("<positive integer>",), "maxgap": ("none", "<non-negative integer>"),
           "ties": ("false", "true"), "side": ("both", "left", "right", "left_or_meeting", "right_or_meeting"),
           "prefilter": ("false", "true")}
# option -> (smallest whole number it takes, the word it also takes)
_NUMBERS = {"tile": (1, "auto"), "nearest": (1, None), "maxgap": (0, "none")}


def options_string(**options: str) -> str:
    """``algo=...;build=...;index=...`` after checking the names and values."""
    parts = []
    for k, v in options.items():
        if v is None:
            continue
        if k not in OPTIONS:
            raise ValueError(f"unknown interval-join option {k!r} (options: {', '.join(OPTIONS)})")
        v = str(v).lower()
        if k in _NUMBERS and v != _NUMBERS[k][1]:
            least, word = _NUMBERS[k]
            if not v.isdigit() or int(v) < least:
                kind = "a positive" if least else "a non-negative"
                raise ValueError(f"interval-join option {k}={v!r} is not {kind} integer"
                                 + (f" or {word}" if word else ""))
        elif v not in OPTIONS[k]:
            raise ValueError(f"interval-join option {k}={v!r} is not one of {', '.join(OPTIONS[k])}")
        parts.append(f"{k}={v}")
    return ";".join(parts)


def _col(c) -> Column:
    return c if isinstance(c, Column) else F.expr(c)


def _check_keys(left_keys, right_keys):
    if len(left_keys) != len(right_keys):
        raise ValueError(f"left has {len(left_keys)} keys and right has {len(right_keys)}; "
                         "give the same number on each side")


def band(left_keys: Sequence[Column | str], left_lo: Column | str, left_hi: Column | str,
         right_keys: Sequence[Column | str], right_lo: Column | str, right_hi: Column | str,
         **options: str) -> Column:
    """The ``giql_band(...)`` marker as a Column (strings are parsed as SQL expressions)."""
    left_keys, right_keys = list(left_keys), list(right_keys)
    _check_keys(left_keys, right_keys)
    args = [F.lit(options_string(**options))]
    args += [_col(c) for c in left_keys] + [_col(left_lo), _col(left_hi)]
    args += [_col(c) for c in right_keys] + [_col(right_lo), _col(right_hi)]
    return F.call_function(FUNCTION, *args)


def band_sql(left_keys: Sequence[str], left_lo: str, left_hi: str,
             right_keys: Sequence[str], right_lo: str, right_hi: str, **options: str) -> str:
    """The marker as Spark SQL text, for a ``JOIN ... ON`` clause."""
    left_keys, right_keys = list(left_keys), list(right_keys)
    _check_keys(left_keys, right_keys)
    opts = options_string(**options).replace("'", "")
    args = [f"'{opts}'", *left_keys, left_lo, left_hi, *right_keys, right_lo, right_hi]
    return f"{FUNCTION}({', '.join(args)})"


def band_join(left: DataFrame, right: DataFrame, *,
              left_keys: Sequence[Column | str], left_lo: Column | str, left_hi: Column | str,
              right_keys: Sequence[Column | str], right_lo: Column | str, right_hi: Column | str,
              residual: Column | str | None = None, how: str = "inner",
              **options: str) -> DataFrame:
    """``left.join(right, giql_band(...) AND residual, how)``.

    Expressions given as Columns should come from ``left[...]`` / ``right[...]`` (or aliased
    DataFrames) so that both sides stay unambiguous; strings are SQL over aliased sides.
    ``how``: inner, left, right, full, semi (left semi) or anti (left anti).
    """
    jt = JOIN_TYPES.get(how.lower().replace(" ", "_"))
    if jt is None:
        raise ValueError(f"unknown join type {how!r} (inner, left, right, full, semi, anti)")
    cond = band(left_keys, left_lo, left_hi, right_keys, right_lo, right_hi, **options)
    if residual is not None:
        cond = cond & _col(residual)
    return left.join(right, cond, jt)
