"""A join side's interval expressions evaluated on Arrow columns read from its files.

A side's interval is expressions over its columns: ``a.start`` and
``a.end``, ``(a.start - 1)`` for a 1-based table, or a band join's hull,
``a.start - 500`` and ``greatest(a.end + 99, a.start)``. The Parquet tiers
read the columns these expressions use and evaluate the expressions here,
with Spark's rules for what they contain: integer arithmetic, NULL
propagation, NULL-skipping GREATEST / LEAST, FLOOR / CEIL, ABS, integer
casts, and CASE WHEN ... IS [NOT] NULL (what band hulls use to guard rows
with NULLs), comparisons (a boolean cast to an integer) and NULLIF (the
exact hulls of the DataFrame operations). Anything else is None, and the caller falls back to a Spark
sample, where Spark evaluates the expression itself.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

_INT_TYPES = {"TINYINT", "SMALLINT", "INT", "BIGINT", "LONG", "INTEGER", "SHORT", "BYTE"}


def columns(e: exp.Expression) -> set[str] | None:
    """The column names (last part) ``e`` reads, or None if it holds
    anything :func:`evaluate` does not."""
    names = set()
    for node in e.walk():
        if isinstance(node, exp.Column):
            names.add(node.name)
        elif not isinstance(node, _SUPPORTED):
            return None
    return names


def evaluate(e: exp.Expression, table) -> pa.Array:
    """``e`` on the columns of ``table`` (a table or record batch), as int64 or double."""
    n = table.num_rows
    return _eval(e, table, n)


def _int(a: pa.Array) -> pa.Array:
    if pa.types.is_integer(a.type):
        return a.cast(pa.int64())
    return a


def _eval(e: exp.Expression, t, n: int):
    if isinstance(e, exp.Paren):
        return _eval(e.this, t, n)
    if isinstance(e, exp.Column):
        col = t.column(e.name)
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        return _int(col)
    if isinstance(e, exp.Literal):
        if e.is_string:
            return pa.array([e.this] * n, pa.string())
        value = float(e.this) if any(ch in e.this for ch in ".eE") else int(e.this)
        return pa.array([value] * n)
    if isinstance(e, exp.Null):
        return pa.nulls(n, pa.int64())
    if isinstance(e, exp.Neg):
        return pc.negate(_eval(e.this, t, n))
    if isinstance(e, (exp.Add, exp.Sub, exp.Mul)):
        fn = {exp.Add: pc.add, exp.Sub: pc.subtract, exp.Mul: pc.multiply}[type(e)]
        return fn(_eval(e.this, t, n), _eval(e.expression, t, n))
    if isinstance(e, exp.Div):
        return pc.divide(pc.cast(_eval(e.this, t, n), pa.float64()), pc.cast(_eval(e.expression, t, n), pa.float64()))
    if isinstance(e, exp.Abs):
        return pc.abs(_eval(e.this, t, n))
    if isinstance(e, (exp.Floor, exp.Ceil)):
        v = _eval(e.this, t, n)
        if pa.types.is_integer(v.type):
            return v
        return pc.cast((pc.floor if isinstance(e, exp.Floor) else pc.ceil)(v), pa.int64())
    if isinstance(e, (exp.Greatest, exp.Least)):
        args = [_eval(a, t, n) for a in [e.this, *e.expressions]]
        fn = pc.max_element_wise if isinstance(e, exp.Greatest) else pc.min_element_wise
        return fn(*args, skip_nulls=True)
    if isinstance(e, exp.Cast):
        v = _eval(e.this, t, n)
        if e.to.this.name in _INT_TYPES or str(e.to).upper() in _INT_TYPES:
            return pc.cast(v, pa.int64(), safe=False)
        return v
    if isinstance(e, tuple(_COMPARE)):
        return _COMPARE[type(e)](_eval(e.this, t, n), _eval(e.expression, t, n))
    if isinstance(e, exp.Nullif):
        a, b = _eval(e.this, t, n), _eval(e.expression, t, n)
        # CASE WHEN a = b THEN NULL ELSE a END: a NULL comparison keeps a
        return pc.if_else(pc.fill_null(pc.equal(a, b), False), pa.nulls(n, a.type), a)
    if isinstance(e, exp.Case):
        out = _eval(e.args["default"], t, n) if e.args.get("default") is not None else None
        for branch in reversed(e.args.get("ifs") or []):
            value = _eval(branch.args["true"], t, n)
            cond = _condition(branch.this, t, n)
            out = pc.if_else(cond, value, out if out is not None else pa.nulls(n, value.type))
        return out if out is not None else pa.nulls(n, pa.int64())
    raise ValueError(f"cannot evaluate {e.sql()}")


def _condition(e: exp.Expression, t, n: int):
    if isinstance(e, exp.Paren):
        return _condition(e.this, t, n)
    if isinstance(e, exp.Is) and isinstance(e.expression, exp.Null):
        return pc.is_null(_eval(e.this, t, n))
    if isinstance(e, exp.Not):
        return pc.invert(_condition(e.this, t, n))
    if isinstance(e, exp.And):
        return pc.and_kleene(_condition(e.this, t, n), _condition(e.expression, t, n))
    if isinstance(e, exp.Or):
        return pc.or_kleene(_condition(e.this, t, n), _condition(e.expression, t, n))
    if isinstance(e, tuple(_COMPARE)):
        return _eval(e, t, n)
    raise ValueError(f"cannot evaluate {e.sql()}")


_COMPARE = {exp.EQ: pc.equal, exp.NEQ: pc.not_equal, exp.LT: pc.less, exp.LTE: pc.less_equal,
            exp.GT: pc.greater, exp.GTE: pc.greater_equal}

_SUPPORTED = (*_COMPARE, exp.Nullif, exp.Paren, exp.Column, exp.Identifier, exp.Literal, exp.Null, exp.Neg, exp.Add, exp.Sub, exp.Mul,
              exp.Div, exp.Abs, exp.Floor, exp.Ceil, exp.Greatest, exp.Least, exp.Cast, exp.DataType, exp.Case,
              exp.If, exp.Is, exp.Not, exp.And, exp.Or)
