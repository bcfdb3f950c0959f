"""Rule: a column shifted by a constant and compared with a constant compares the column itself.

GIQL's region literal on a 1-based table reads ``(start - 1) < 56000000``, which Spark keeps as
written: its optimizer folds constants but does not move them across a comparison, so the
filter on ``start`` is not pushed into the scan (Parquet's row-group skipping, the genomic
readers' index lookup) and every row is read to be tested. ``start < 56000001`` is the same
test on integers, and is pushed. Only integer literals move, so no rounding changes a result.
"""

from __future__ import annotations

from sqlglot import exp

from ..schema import Schema

_FLIP = {exp.LT: exp.LT, exp.LTE: exp.LTE, exp.GT: exp.GT, exp.GTE: exp.GTE, exp.EQ: exp.EQ}
_MIRROR = {exp.LT: exp.GT, exp.LTE: exp.GTE, exp.GT: exp.LT, exp.GTE: exp.LTE, exp.EQ: exp.EQ}


def _int(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and node.this.is_int:
        return -int(node.this.name)
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.name)
    return None


def _shifted(node: exp.Expression) -> tuple[exp.Column, int] | None:
    """``(column, k)`` for ``column + k`` or ``column - k`` (parentheses allowed)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.this, exp.Column):
        k = _int(node.expression)
        if k is not None:
            return node.this, k if isinstance(node, exp.Add) else -k
    return None


def _literal(value: int) -> exp.Expression:
    return exp.Literal.number(value) if value >= 0 else exp.Neg(this=exp.Literal.number(-value))


def fold_offsets(tree: exp.Expression, schema: Schema) -> exp.Expression:
    for cmp in list(tree.find_all(*_FLIP)):
        left, right = cmp.this, cmp.expression
        kind = type(cmp)
        shifted, constant = _shifted(left), _int(right)
        if shifted is None or constant is None:
            shifted, constant = _shifted(right), _int(left)
            kind = _MIRROR[kind]
        if shifted is None or constant is None:
            continue
        column, k = shifted
        cmp.replace(kind(this=column.copy(), expression=_literal(constant - k)))
    return tree
