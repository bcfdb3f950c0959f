"""Pick a physical strategy for each node the rules produced, batch or stream.

With statistics, by the cost model (:mod:`.cost`): the cheapest estimate that
is not refused, with its parameters (the bin size that minimises the binned
estimate, the broadcast build side). Without any size for a side, by rules
that need none. A strategy or parameter set by the session or by a query
hint always wins; what it leaves open is still chosen by the model. The
strategies and their parameters come from :mod:`.registry`.

A join with a streaming side has no statistics (no Spark job runs on a
stream): :func:`choose_stream` asks each strategy of the registry how it fits
the join's shape and takes the best-ranked one that can run it.
"""

from __future__ import annotations

from ..errors import QueryError
from . import registry
from . import constants as constants_mod
from . import cost as cost_mod
from .cost import Cluster, alternatives, project, shape
from .nodes import Choice, Nearest
from .stats.model import SideStats
from .stats.spark import cluster_cores


def choose(node, options: dict, left: SideStats | None = None, right: SideStats | None = None,
           constants: tuple[dict, str] | None = None, unavailable: dict[str, str] | None = None) -> Choice:
    """The :class:`~.nodes.Choice` for ``node`` given both sides' statistics.

    ``unavailable`` names the strategies the session cannot run, with why
    (the JVM operators without giql-spark's extension): their estimates are
    refused with that reason, and forcing one is an error."""
    unavailable = dict(unavailable or {})
    if isinstance(node, Nearest):
        way, reason = registry.candidates(unavailable)
        return Choice(way.name, reason=reason)
    left = left or SideStats(None)
    right = right or SideStats(None)
    if getattr(node.spec, "unbounded", False):
        null_free = bool(left.null_free and right.null_free)
        unavailable.update({name: "it cannot take the band's unbounded hull ends (rows with NULLs)"
                            for name, s in registry.BATCH.items()
                            if not s.unbounded and not (null_free and s.unbounded_if_null_free)})
    only = options.get("_only")
    if only:  # an operation whose sides only these strategies can read (the DataFrame API's flat sides)
        unavailable.update({name: f"{options.get('_only_why', 'this operation')} runs on {', '.join(only)} only"
                            for name in registry.BATCH if name not in only and name not in unavailable})
    consts, origin = constants or constants_mod.load()
    sh = shape(left, right, consts, per_row=getattr(node, "per_row", False),
               count_only=getattr(node, "count_only", False))
    cluster = _cluster(options, consts)
    estimates = []
    if sh is not None:
        costs = {name: (s.cost, s.given(options)) for name, s in registry.BATCH.items()}
        estimates = alternatives(sh, consts, node.spec.how, costs, cluster)
        for e in estimates:
            if e.strategy in unavailable and not e.refused:
                e.refused = unavailable[e.strategy]
        estimates.sort(key=lambda e: (e.refused is not None, e.seconds))
    forced = options.get("strategy")
    if forced and not registry.get(forced).batch:
        raise QueryError(f"join strategy {forced!r} joins streams only; this join reads no stream")
    if forced:
        if registry.get(forced).name in unavailable:
            raise QueryError(f"join strategy {forced!r} cannot run this join: {unavailable[forced]}")
        strategy, reason = registry.get(forced).name, f"set by the {options.get('_source', 'session')}"
    elif estimates:
        strategy = estimates[0].strategy
        reason = f"lowest estimated cost (~{estimates[0].seconds:.2f} s at {cluster.cores} cores)"
    else:
        strategy, reason = registry.by_rules(left, right)
    estimate = next((e for e in estimates if e.strategy == strategy), None)
    params = registry.get(strategy).params_for(options, estimate)
    return Choice(strategy, params, reason, estimates, origin)


def session_cluster(spark) -> Cluster | None:
    """The cluster ``spark``'s queries run on (:func:`.stats.spark.cluster_cores`), or None."""
    cores, partitions = cluster_cores(spark)
    if not cores:
        return None
    try:
        split = str(spark.conf.get("spark.giql.merge.splitKeys", "true")).strip().lower() != "false"
    except Exception:  # a Connect server that refuses the key
        split = True
    return Cluster(cores, partitions, split)


def _cluster(options: dict, consts: dict) -> Cluster:
    """The cluster the runtime found (``_cluster``), else the machine the constants describe."""
    return options.get("_cluster") or Cluster(int(consts["calibration_cores"]))


def choose_nearest(k: int, left: SideStats | None, right: SideStats | None, unavailable: dict[str, str],
                   constants: tuple[dict, str] | None = None, cluster: Cluster | None = None) -> Choice:
    """The JVM operator for a k-nearest join (``jvm_broadcast`` or ``jvm_merge``), by the cost
    model where the sides' rows are known, else the merge where it can run (nothing is
    collected on the driver). ``unavailable``: the operators that cannot run it, with why.
    The choice's strategy is None when neither can."""
    consts, origin = constants or constants_mod.load()
    sh = shape(left or SideStats(None), right or SideStats(None), consts)
    estimates = []
    if sh is not None:
        cl = cluster or _cluster({}, consts)
        estimates = [project(cost_mod.jvm_nearest(sh, consts, k, algo), sh, consts, cl)
                     for algo in sorted((s.nearest_algo for s in registry.nearest_joins().values()),
                                        key=lambda a: a != "merge")]
        for e in estimates:
            if e.strategy in unavailable and not e.refused:
                e.refused = unavailable[e.strategy]
        estimates.sort(key=lambda e: (e.refused is not None, e.seconds))
        if not estimates[0].refused:
            return Choice(estimates[0].strategy, {}, f"lowest estimated cost (~{estimates[0].seconds:.2f} s at "
                          f"{cl.cores} cores)", estimates, origin)
        return Choice(None, {}, "; ".join(f"{e.strategy}: {e.refused}" for e in estimates), estimates, origin)
    # the merge first: it collects nothing on the driver
    for name, s in sorted(registry.nearest_joins().items(), key=lambda kv: kv[1].nearest_algo != "merge"):
        if name not in unavailable:
            return Choice(name, {}, "the sides' rows are not known" + (
                "; the merge reads sorted files with nothing collected on the driver"
                if s.nearest_algo == "merge" else ""))
    return Choice(None, {}, "; ".join(f"{n}: {w}" for n, w in unavailable.items()))


#: Why a streaming join's strategy is chosen by rule, not by cost.
STREAM_BASIS = "a side is a stream: no statistics are read (no Spark job runs on a stream); chosen by rule"


def choose_stream(facts: registry.StreamFacts, options: dict, unavailable: dict[str, str] | None = None) -> Choice:
    """The strategy for a join with a streaming side: the best-ranked strategy
    whose :class:`~.registry.Fit` for ``facts`` is not refused, or the one the
    session or a hint forces (an error where it cannot run this join)."""
    unavailable = unavailable or {}
    shape = "stream-stream" if facts.both else "stream-static"
    fits = {}
    for name, s in registry.STRATEGIES.items():
        fit = s.stream(facts) if s.stream is not None else None
        if fit is not None:
            fits[name] = fit if name not in unavailable else registry.Fit(fit.rank, fit.reason, unavailable[name])
    forced = options.get("strategy")
    if forced:
        name = registry.get(forced).name
        if name not in fits:
            raise QueryError(f"join strategy {forced!r} cannot run with a streaming side; a {shape} join runs as "
                             f"{' or '.join(sorted(fits))}")
        if fits[name].refused:
            raise QueryError(f"join strategy {forced!r} cannot run this join: {fits[name].refused}")
        return Choice(name, reason=f"set by the {options.get('_source', 'session')}")
    ranked = sorted(fits.items(), key=lambda kv: (kv[1].rank, kv[0]))
    runnable = [(n, f) for n, f in ranked if not f.refused]
    if not runnable:
        raise QueryError(f"no strategy can run this {shape} join: "
                         + "; ".join(f"{n}: {f.refused}" for n, f in ranked))
    name, fit = runnable[0]
    passed = [f"{n}: {f.refused}" for n, f in ranked if f.refused and f.rank < fit.rank]
    reason = f"{STREAM_BASIS}: {fit.reason}" + (f" (not {'; '.join(passed)})" if passed else "")
    return Choice(name, reason=reason)
