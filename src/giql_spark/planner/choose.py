"""Pick a physical strategy for each operator the rewrite produced."""

from __future__ import annotations

from ..joins import STRATEGIES
from ..joins.binned import DEFAULT_BIN_SIZE
from ..joins.sweep import DEFAULT_TILE_SIZE
from .rewrite import PhysicalNode
from .stats import SideStats

#: Both sides below this run as plain SQL: planning and Python workers would cost more than the join.
TINY_BYTES = 256 * 1024
#: A right side up to this size is collected, indexed and shipped to every task.
#: Measured (benchmarks/RESULTS.md): at 1M x 1M (about 20 MB of Parquet a side)
#: the binned join beat the broadcast index on every width profile, so only a
#: genuinely small side is broadcast.
BROADCAST_BYTES = 2 * 1024 * 1024


def choose(node: PhysicalNode, options: dict, left: SideStats | None = None, right: SideStats | None = None) -> dict:
    """Return ``{"strategy": name, "params": {...}, "reason": text}``.

    A strategy set in ``options`` (the session's) wins. Otherwise, from
    Spark's size estimates: plain SQL when both sides are tiny, the broadcast
    index when the right side is known to fit, and the binned equi-join, which
    needs no driver memory, when a side is large or its size unknown.
    """
    if node.kind == "nearest":
        return {"strategy": "nearest-index", "params": {}, "reason": "k-nearest candidates per chromosome from a sorted index"}
    left = left or SideStats(None)
    right = right or SideStats(None)
    sizes = f"left {left.describe()}, right {right.describe()}"
    strategy = options.get("strategy")
    if strategy:
        reason = "set by the session"
    elif left.size_bytes is not None and right.size_bytes is not None and max(left.size_bytes, right.size_bytes) <= TINY_BYTES:
        strategy, reason = "naive", f"both sides tiny ({sizes})"
    elif right.size_bytes is not None and right.size_bytes <= BROADCAST_BYTES:
        strategy, reason = "broadcast", f"right side fits a broadcast index ({sizes})"
    else:
        strategy, reason = "binned", f"no side known to be small ({sizes})"
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown join strategy {strategy!r}; available: {', '.join(sorted(STRATEGIES))}")
    params: dict = {}
    if strategy == "binned":
        params["bin_size"] = int(options.get("bin_size") or DEFAULT_BIN_SIZE)
    elif strategy == "sweep":
        params["tile_size"] = int(options.get("tile_size") or DEFAULT_TILE_SIZE)
    return {"strategy": strategy, "params": params, "reason": reason}
