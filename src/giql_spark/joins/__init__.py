"""Physical interval-join strategies, one module each, one signature:
``join(left, right, spec, **params) -> DataFrame``."""

from __future__ import annotations

from pyspark.sql import DataFrame

from . import binned, broadcast, naive, sweep
from .count import count_overlaps
from .spec import Interval, JoinSpec

STRATEGIES = {
    "broadcast": broadcast.join,
    "binned": binned.join,
    "sweep": sweep.join,
    "naive": naive.join,
}


def plan(left: DataFrame, right: DataFrame, spec: JoinSpec, strategy: str = "binned", **params) -> DataFrame:
    """Join ``left`` and ``right`` as ``spec`` says, with the named strategy.

    The output has ``left``'s columns then ``right``'s (``left``'s only for
    semi and anti joins); rows are those of ``spec``'s semantics, in no order.
    """
    try:
        fn = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(
            f"unknown join strategy {strategy!r}; available: {', '.join(sorted(STRATEGIES))}"
        ) from None
    return fn(left, right, spec, **params)


__all__ = ["plan", "count_overlaps", "JoinSpec", "Interval", "STRATEGIES"]
