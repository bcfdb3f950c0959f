"""Physical operators: the interval-join strategies (one module each, listed in
:mod:`.registry`, one signature ``join(left, right, spec, *, dry_run=False,
**params) -> DataFrame``), the NEAREST candidate operator (:mod:`.nearest`)
and count_overlaps (:mod:`.count`). The per-batch work of the Python ones
is in :mod:`.batch`.
"""

from __future__ import annotations

from .spec import Interval, JoinSpec, NearestSpec


def __getattr__(name: str):
    # The registry imports every strategy (and PySpark); modules that only
    # need the spec or the batch functions do not pay for it.
    if name in ("plan", "STRATEGIES"):
        from . import registry

        return getattr(registry, name)
    if name == "count_overlaps":
        from .count import count_overlaps

        return count_overlaps
    raise AttributeError(name)


__all__ = ["plan", "count_overlaps", "JoinSpec", "Interval", "NearestSpec", "STRATEGIES"]
