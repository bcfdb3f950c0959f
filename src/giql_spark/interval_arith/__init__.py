"""Interval arithmetic and constraint propagation over SQL-like expressions.

* :mod:`.interval` — :class:`Interval` (open / closed / infinite ends,
  integer or real) and three-valued truth :class:`Tv`;
* :mod:`.symbolic` — interval ends that are expressions over columns;
* :mod:`.nodes` — the expression DAG, SQL evaluation, NNF, NULL folding;
* :mod:`.graph` — interval evaluation and constraint propagation.
"""

from __future__ import annotations

from .graph import Infeasible, bounds, column_range, narrow_columns, propagate
from .interval import Interval, Tv, greatest, least
from .nodes import (Abs, Add, And, Between, Case, Cmp, Col, Const, Greatest, IsNull, Least, Neg, Not, Or,
                    Scale, Sub, evaluate, fold, nnf)

__all__ = [
    "Abs", "Add", "And", "Between", "Case", "Cmp", "Col", "Const", "Greatest", "Infeasible", "Interval",
    "IsNull", "Least", "Neg", "Not", "Or", "Scale", "Sub", "Tv", "bounds", "column_range", "evaluate",
    "fold", "greatest", "least", "narrow_columns", "nnf", "propagate",
]
