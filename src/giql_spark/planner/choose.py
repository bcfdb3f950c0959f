"""Pick a physical strategy for each operator the rewrite produced.

With statistics, by the cost model (:mod:`.cost`): the cheapest estimate that
is not refused, with its parameters (the bin size that minimises the binned
estimate, the broadcast build side). Without any size for a side, by rules
that need none. A strategy or bin/tile size set by the session or by a query
hint always wins; what it leaves open is still chosen by the model.
"""

from __future__ import annotations

from ..joins import STRATEGIES
from ..joins.binned import DEFAULT_BIN_SIZE
from ..joins.sweep import DEFAULT_TILE_SIZE
from . import constants as constants_mod
from .cost import alternatives, shape
from .rewrite import PhysicalNode
from .stats import SideStats

#: Both sides below this (Spark's size estimate) run as plain SQL when nothing else is known.
TINY_BYTES = 256 * 1024
#: Without row statistics, a right side up to this size is broadcast.
BROADCAST_BYTES = 2 * 1024 * 1024


def choose(node: PhysicalNode, options: dict, left: SideStats | None = None, right: SideStats | None = None,
           constants: tuple[dict, str] | None = None) -> dict:
    """Return ``{"strategy", "params", "reason", "estimates", "constants"}``.

    ``estimates`` lists every strategy's :class:`~.cost.Estimate`, cheapest
    feasible first (empty when a side's size is unknown); ``constants`` says
    whether the cost constants are the shipped defaults or a calibration.
    """
    if node.kind == "nearest":
        return {"strategy": "nearest-index", "params": {}, "estimates": [], "constants": "",
                "reason": "k-nearest candidates per chromosome from a sorted index"}
    left = left or SideStats(None)
    right = right or SideStats(None)
    consts, origin = constants or constants_mod.load()
    tile = int(options.get("tile_size") or DEFAULT_TILE_SIZE)
    sh = shape(left, right, consts)
    estimates = (alternatives(sh, consts, node.spec.how, tile, options.get("bin_size"))
                 if sh is not None else [])
    forced = options.get("strategy")
    if forced:
        if forced not in STRATEGIES:
            raise ValueError(f"unknown join strategy {forced!r}; available: {', '.join(sorted(STRATEGIES))}")
        strategy, reason = forced, f"set by the {options.get('_source', 'session')}"
    elif estimates:
        best = estimates[0]
        strategy = best.strategy
        reason = f"lowest estimated cost (~{best.seconds:.2f} s)"
    else:
        strategy, reason = _by_rules(left, right)
    params: dict = {}
    if strategy == "binned":
        if options.get("bin_size"):
            params["bin_size"] = int(options["bin_size"])
        elif sh is not None:
            params["bin_size"] = next(e for e in estimates if e.strategy == "binned").params["bin_size"]
        else:
            params["bin_size"] = DEFAULT_BIN_SIZE
    elif strategy == "sweep":
        params["tile_size"] = tile
    elif strategy == "broadcast":
        est = next((e for e in estimates if e.strategy == "broadcast"), None)
        if est is not None and est.params.get("build") == "left":
            params["build"] = "left"
    return {"strategy": strategy, "params": params, "reason": reason, "estimates": estimates,
            "constants": origin}


def _by_rules(left: SideStats, right: SideStats) -> tuple[str, str]:
    sizes = f"left {left.describe()}, right {right.describe()}"
    if left.size_bytes is not None and right.size_bytes is not None and \
            max(left.size_bytes, right.size_bytes) <= TINY_BYTES:
        return "naive", f"both sides tiny ({sizes})"
    if right.size_bytes is not None and right.size_bytes <= BROADCAST_BYTES:
        return "broadcast", f"right side fits a broadcast index ({sizes})"
    return "binned", f"no side known to be small ({sizes}); binned needs no driver memory"
