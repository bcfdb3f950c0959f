"""Pick a physical strategy for each operator the rewrite produced."""

from __future__ import annotations

from ..joins import STRATEGIES
from ..joins.binned import DEFAULT_BIN_SIZE
from ..joins.sweep import DEFAULT_TILE_SIZE
from .rewrite import PhysicalNode


def choose(node: PhysicalNode, options: dict) -> dict:
    """Return ``{"strategy": name, "params": {...}, "reason": text}``.

    A strategy or bin size set in ``options`` (the session's) wins. Otherwise
    interval joins use the binned equi-join, which never compares pairs that
    are not within one bin of each other.
    """
    if node.kind == "nearest":
        return {"strategy": "nearest-index", "params": {}, "reason": "k-nearest candidates per chromosome from a sorted index"}
    strategy = options.get("strategy") or "binned"
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown join strategy {strategy!r}; available: {', '.join(sorted(STRATEGIES))}")
    params: dict = {}
    if strategy == "binned":
        params["bin_size"] = int(options.get("bin_size") or DEFAULT_BIN_SIZE)
    elif strategy == "sweep":
        params["tile_size"] = int(options.get("tile_size") or DEFAULT_TILE_SIZE)
    reason = "set by the session" if options.get("strategy") else "default for interval joins"
    return {"strategy": strategy, "params": params, "reason": reason}
