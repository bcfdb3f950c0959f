"""Pick a physical strategy for each node the rules produced.

With statistics, by the cost model (:mod:`.cost`): the cheapest estimate that
is not refused, with its parameters (the bin size that minimises the binned
estimate, the broadcast build side). Without any size for a side, by rules
that need none. A strategy or parameter set by the session or by a query
hint always wins; what it leaves open is still chosen by the model. The
strategies and their parameters come from :mod:`.registry`.
"""

from __future__ import annotations

from ..errors import QueryError
from . import registry
from . import constants as constants_mod
from .cost import alternatives, shape
from .nodes import Choice, Nearest
from .stats.model import SideStats

#: Both sides below this (Spark's size estimate) run as plain SQL when nothing else is known.
TINY_BYTES = 256 * 1024
#: Without row statistics, a right side up to this size is broadcast.
BROADCAST_BYTES = 2 * 1024 * 1024


def choose(node, options: dict, left: SideStats | None = None, right: SideStats | None = None,
           constants: tuple[dict, str] | None = None, unavailable: dict[str, str] | None = None) -> Choice:
    """The :class:`~.nodes.Choice` for ``node`` given both sides' statistics.

    ``unavailable`` names the strategies the session cannot run, with why
    (the JVM operators without giql-spark's extension): their estimates are
    refused with that reason, and forcing one is an error."""
    unavailable = dict(unavailable or {})
    if isinstance(node, Nearest):
        return Choice("nearest-index", reason="k-nearest candidates per chromosome from a sorted index")
    left = left or SideStats(None)
    right = right or SideStats(None)
    if getattr(node.spec, "unbounded", False):
        null_free = bool(left.null_free and right.null_free)
        unavailable.update({name: "it cannot take the band's unbounded hull ends (rows with NULLs)"
                            for name, s in registry.STRATEGIES.items()
                            if not s.unbounded and not (null_free and s.unbounded_if_null_free)})
    consts, origin = constants or constants_mod.load()
    sh = shape(left, right, consts)
    estimates = []
    if sh is not None:
        costs = {name: (s.cost, s.given(options)) for name, s in registry.STRATEGIES.items()}
        estimates = alternatives(sh, consts, node.spec.how, costs)
        for e in estimates:
            if e.strategy in unavailable and not e.refused:
                e.refused = unavailable[e.strategy]
        estimates.sort(key=lambda e: (e.refused is not None, e.seconds))
    forced = options.get("strategy")
    if forced:
        if registry.get(forced).name in unavailable:
            raise QueryError(f"join strategy {forced!r} cannot run this join: {unavailable[forced]}")
        strategy, reason = registry.get(forced).name, f"set by the {options.get('_source', 'session')}"
    elif estimates:
        strategy = estimates[0].strategy
        reason = f"lowest estimated cost (~{estimates[0].seconds:.2f} s)"
    else:
        strategy, reason = _by_rules(left, right)
    estimate = next((e for e in estimates if e.strategy == strategy), None)
    params = registry.get(strategy).params_for(options, estimate)
    return Choice(strategy, params, reason, estimates, origin)


def _by_rules(left: SideStats, right: SideStats) -> tuple[str, str]:
    sizes = f"left {left.describe()}, right {right.describe()}"
    if left.size_bytes is not None and right.size_bytes is not None and \
            max(left.size_bytes, right.size_bytes) <= TINY_BYTES:
        return "naive", f"both sides tiny ({sizes})"
    if right.size_bytes is not None and right.size_bytes <= BROADCAST_BYTES:
        return "broadcast", f"right side fits a broadcast index ({sizes})"
    return "binned", f"no side known to be small ({sizes}); binned needs no driver memory"
