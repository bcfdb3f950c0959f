"""Physical operators: the interval-join strategies (one module each, listed in
:mod:`giql_spark.planner.registry`, one signature ``join(left, right, spec, *, dry_run=False,
**params) -> DataFrame``), the NEAREST candidate operator (:mod:`.nearest`)
and count_overlaps (:mod:`.count`). The per-batch work of the Python ones
is in :mod:`.batch`.
"""

from __future__ import annotations

from .spec import Interval, JoinSpec, NearestSpec


def __getattr__(name: str):
    # count imports PySpark; modules that only need the spec or the batch
    # functions do not pay for it.
    if name == "count_overlaps":
        from .count import count_overlaps

        return count_overlaps
    raise AttributeError(name)


__all__ = ["count_overlaps", "JoinSpec", "Interval", "NearestSpec"]
