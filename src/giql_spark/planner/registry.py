"""The interval-join strategies, one entry each.

An entry names the strategy's join function in :mod:`giql_spark.joins` (one
signature: ``join(left, right, spec, *, dry_run=False, **params) ->
DataFrame``), its cost function in :mod:`.cost`, its parameters with their
defaults, and whether rows cross into Python workers. The chooser, EXPLAIN,
calibration, query hints, the command line and the DataFrame API all read
this table, so adding a strategy means one module, its cost, and one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..joins import binned, broadcast, jvm, naive, sweep
from . import cost
from .stats.spark import within_broadcast_limit


@dataclass(frozen=True)
class Param:
    """A strategy parameter.

    ``chosen``: the cost model picks it when it is not given (a bin size, a
    build side); otherwise ``default`` applies. ``size``: a positive integer
    a session option, a query hint and the command line may set.
    ``shown``: listed in the choice's parameters even when it is the default.
    """

    name: str
    default: object = None
    chosen: bool = False
    size: bool = False
    shown: bool = True


@dataclass(frozen=True)
class StreamFacts:
    """What the chooser knows of a join with a streaming side: no statistics
    (no Spark job runs on a stream), only its shape and what Spark estimates."""

    both: bool                 # both sides are streams
    how: str
    static_bytes: int | None   # Spark's size estimate of the static side (stream x static)
    #: Why the exact condition cannot be evaluated inside a Python operator (None: it can).
    uncompiled: str | None = None
    #: Why the bound that frees a stream-stream join's held rows is not the other side's
    #: progress plus a constant, which the JVM operator needs (None: it is).
    bound_shape: str | None = None


@dataclass(frozen=True)
class Fit:
    """How a strategy fits a streaming join: ``rank`` orders the candidates
    (lowest first), ``reason`` says why it fits; ``refused`` says why it
    cannot run this join although it runs the shape."""

    rank: int
    reason: str = ""
    refused: str | None = None


@dataclass(frozen=True)
class Strategy:
    name: str
    #: ``join(left, right, spec, *, dry_run=False, **params)``; None for an
    #: operator that only joins streams (built by :mod:`giql_spark.streaming.build`).
    join: Callable | None
    #: The batch cost (:mod:`.cost`); None for a strategy that does not join batches.
    cost: Callable | None
    params: tuple[Param, ...] = ()
    #: Rows cross into Python workers: Spark cannot prune struct fields through
    #: ``mapInArrow``, so the sides are pruned to the fields a statement reads first.
    python: bool = False
    #: ``(left rows, right rows)`` ``giql-spark calibrate`` times it at, for a
    #: base size, and on which of its data profiles (None: all).
    calibration: Callable[[int], tuple[int, int]] = lambda n: (n, n)
    calibration_profiles: tuple[str, ...] | None = None
    #: ``available(spark) -> (bool, reason)`` for a strategy only some
    #: sessions can run (None: every session).
    available: Callable | None = None
    #: Takes a band's unbounded hull ends (``±HULL_INF``) in its stride: an
    #: index does; a strategy that cuts hulls into fixed tiles must clip them
    #: first, which the JVM sweep cannot.
    unbounded: bool = True
    #: Takes them where both sides' files count no NULL in the hull's columns
    #: (the guarded ends are then never taken): the merge checks every row's
    #: order and re-sorts a unit whose order breaks, so a stale count costs a
    #: re-sort, never a wrong answer; a tiling strategy would be flooded instead.
    unbounded_if_null_free: bool = False
    #: ``refusal(left, right, spec) -> str | None``: why this strategy cannot
    #: run one particular join (its inputs' layout), checked when the
    #: statement is planned (None: it runs any join its cost accepts).
    refusal: Callable | None = None
    #: ``stream(facts: StreamFacts) -> Fit | None``: how it joins with a streaming
    #: side, None where it cannot take that shape (a stream is read in micro-batches).
    stream: Callable[[StreamFacts], Fit | None] | None = None
    #: ``(size parameter, piece)``: it cuts each row into pieces of that size (a bin, a tile),
    #: so a row wider than ``joins.hull.MAX_PIECES`` pieces refuses it.
    cut: tuple[str, str] | None = None
    #: It tests the condition itself on any columns: given a statement's rows flat, its join is
    #: planned without the struct per side (``runtime.flat_sides``).
    flat: bool = False
    #: The JVM k-nearest join's ``algo`` (``joins.jvm.nearest_join``) it runs a NEAREST as, or
    #: None where it runs none.
    nearest_algo: str | None = None
    #: ``nearest_refusal(left, right, left_keys, left_hull, right_keys, right_hull) -> str | None``:
    #: why it cannot run this k-nearest join (None: it can).
    nearest_refusal: Callable | None = None
    #: Counts a join per left row inside the JVM without building pairs (the extension's
    #: GroupedCount): its place among those that do when no statistics price them (lower
    #: first), and the options it counts with; None where it does not.
    per_row_rank: int | None = None
    per_row_options: tuple[tuple[str, str], ...] = ()
    #: ``rule(left, right) -> reason | None`` (both :class:`~.stats.model.SideStats`): where no
    #: statistics price the strategies, the first by ``rule_rank`` (lower first) whose rule gives
    #: a reason is taken; None where no rule takes it.
    rule: Callable | None = None
    rule_rank: int = 0
    #: It runs any condition, with no band to prune by (Spark's own join of the condition):
    #: the strategy of a join whose hull ends are not positions.
    unbanded: bool = False
    #: A stream x static join through it indexes the static side once, when the query is planned
    #: (``streaming.static``), instead of running its join function in each micro-batch.
    static_index: bool = False
    #: The size parameter ``giql-spark calibrate`` times it at each size of its grid, to fit the
    #: shuffle and candidate constants from those runs (None: timed once per profile).
    calibration_sweep: str | None = None
    summary: str = ""
    #: A few words for a reason line (EXPLAIN), where it is not the summary's.
    short: str = ""

    @property
    def batch(self) -> bool:
        return self.cost is not None

    def given(self, options: dict) -> dict:
        """The parameters ``options`` fix, plus the defaults of those the model does not choose."""
        out = {}
        for p in self.params:
            if options.get(p.name) is not None:
                out[p.name] = options[p.name]
            elif not p.chosen and p.default is not None:
                out[p.name] = p.default
        return out

    def settled(self, options: dict) -> bool:
        """Whether ``options`` fix every parameter the model would choose."""
        return all(options.get(p.name) is not None for p in self.params if p.chosen)

    def params_for(self, options: dict, estimate=None) -> dict:
        """The parameters to run with: given, else chosen by ``estimate``, else the default."""
        out = {}
        for p in self.params:
            if options.get(p.name) is not None:
                out[p.name] = int(options[p.name]) if p.size else options[p.name]
            elif estimate is not None and p.name in estimate.params:
                value = estimate.params[p.name]
                if p.shown or value != p.default:
                    out[p.name] = value
            elif p.default is not None and p.shown:
                out[p.name] = p.default
        return out


#: Below this size (Spark's estimate) a JVM operator re-broadcasting the static side each micro-batch is cheap.
SMALL_STATIC_BYTES = 16 * 2**20


def _jvm_broadcast_stream(f: StreamFacts) -> Fit | None:
    if f.both:
        return None
    if f.static_bytes is not None and f.static_bytes <= SMALL_STATIC_BYTES:
        return Fit(0, f"the static side is small (~{f.static_bytes:,} bytes by Spark's estimate), so the JVM "
                      "operator broadcasting it each micro-batch is cheap")
    if f.uncompiled is not None:
        return Fit(2, f"the condition cannot be evaluated in Python ({f.uncompiled})")
    return Fit(2, "the JVM operator broadcasts and indexes the static side each micro-batch")


def _broadcast_stream(f: StreamFacts) -> Fit | None:
    if f.both:
        return None
    if f.how != "inner" and f.uncompiled is not None:
        return Fit(1, refused=f"the condition of this {f.how.upper()} join cannot be evaluated in the "
                              f"operator ({f.uncompiled})")
    return Fit(1, "the static side is indexed once, when the query is planned, and each micro-batch probes "
                  "it in compiled code")


def _naive_stream(f: StreamFacts) -> Fit | None:
    return None if f.both else Fit(3, "Spark's own join compares every pair on a key")


def _jvm_stream_state_stream(f: StreamFacts) -> Fit | None:
    if not f.both:
        return None
    if f.bound_shape is not None:
        return Fit(0, refused=f.bound_shape)
    return Fit(0, "a JVM stateful operator holds each side's rows, typed, while the other side's progress lets "
                  "them match")


def _stream_state_stream(f: StreamFacts) -> Fit | None:
    return Fit(1, "a stateful operator holds each side's rows while the other side's progress lets them "
                  "match") if f.both else None


#: Both sides below this (Spark's size estimate) run as plain SQL when nothing else is known.
TINY_BYTES = 256 * 1024
#: Without row statistics, a right side up to this size is broadcast.
BROADCAST_BYTES = 2 * 1024 * 1024


def _sizes(left, right) -> str:
    return f"left {left.describe()}, right {right.describe()}"


def _naive_rule(left, right) -> str | None:
    if left.size_bytes is not None and right.size_bytes is not None and \
            max(left.size_bytes, right.size_bytes) <= TINY_BYTES:
        return f"both sides tiny ({_sizes(left, right)})"
    return None


def _broadcast_rule(left, right) -> str | None:
    if right.size_bytes is not None and right.size_bytes <= BROADCAST_BYTES:
        return f"right side fits a broadcast index ({_sizes(left, right)})"
    return None


def _binned_rule(left, right) -> str:
    return f"no side known to be small ({_sizes(left, right)}); binned needs no driver memory"


def _nearest_broadcast_refusal(left, right, *_) -> str | None:
    if not within_broadcast_limit(right):
        return "the right side is larger than spark.giql.broadcastMaxBytes"
    return None


STRATEGIES: dict[str, Strategy] = {s.name: s for s in (
    Strategy("binned", binned.join, cost.binned_cost,
             (Param("bin_size", binned.DEFAULT_BIN_SIZE, chosen=True, size=True),), cut=("bin_size", "bin"),
             rule=_binned_rule, rule_rank=2, calibration_sweep="bin_size",
             summary="intervals expanded to fixed-size bins; an equi-join on (chromosome, bin) in the JVM"),
    Strategy("broadcast", broadcast.join, cost.broadcast_cost,
             (Param("build", "right", chosen=True, shown=False),), python=True,
             calibration=lambda n: (n, max(1, n // 10)), stream=_broadcast_stream,
             rule=_broadcast_rule, rule_rank=1, static_index=True,
             summary="the small side indexed and shipped to every task; the other side probes it in Python"),
    Strategy("sweep", sweep.join, cost.sweep_cost,
             (Param("tile_size", sweep.DEFAULT_TILE_SIZE, size=True),), python=True, cut=("tile_size", "tile"),
             summary="both sides cut into genome tiles, sorted and swept per tile in Python"),
    Strategy("naive", naive.join, cost.naive_cost, calibration=lambda n: (2_000, 2_000),
             calibration_profiles=("uniform",), stream=_naive_stream,
             rule=_naive_rule, rule_rank=0, unbanded=True,
             summary="Spark's own join: a nested loop per chromosome"),
    Strategy("jvm_broadcast", jvm.broadcast_join, cost.jvm_broadcast_cost,
             (Param("build", "auto", chosen=True, shown=False),), available=jvm.available,
             stream=_jvm_broadcast_stream, flat=True, nearest_algo="broadcast", short="broadcast index",
             nearest_refusal=_nearest_broadcast_refusal, per_row_rank=1, per_row_options=(("build", "right"),),
             summary="the small side indexed in the JVM and broadcast; the other side probes it in the JVM"),
    Strategy("jvm_sweep", jvm.sweep_join, cost.jvm_sweep_cost,
             (Param("tile_size", 1_000_000, size=True),), available=jvm.available, unbounded=False,
             cut=("tile_size", "tile"), flat=True,
             summary="both sides cut into genome tiles, shuffled, sorted and swept per tile in the JVM"),
    Strategy("jvm_merge", jvm.merge_join, cost.jvm_merge_cost, available=jvm.available, unbounded=False,
             unbounded_if_null_free=True,
             refusal=jvm.merge_refusal, flat=True, nearest_algo="merge", short="sorted-file merge",
             nearest_refusal=jvm.nearest_merge_refusal, per_row_rank=0,
             summary="Parquet files sorted by (chromosome, start) read range by range and swept in the JVM, no shuffle"),
    Strategy("jvm_stream_state", None, None, available=jvm.stream_available, stream=_jvm_stream_state_stream,
             summary="stream x stream in the JVM: each side's rows held, typed, in Spark's state store while "
                     "the other side's progress lets them match; busy keys cut into position ranges"),
    Strategy("stream_state", None, None, python=True, stream=_stream_state_stream,
             summary="stream x stream: each side's rows held in Spark's state store while the other side's "
                     "progress lets them match"),
)}
#: The strategies that join batches (the cost model prices these).
BATCH: dict[str, Strategy] = {n: s for n, s in STRATEGIES.items() if s.batch}


@dataclass(frozen=True)
class Candidates:
    """How a NEAREST's candidate rows are found (the statement's SQL ranks them afterwards)."""

    name: str
    reason: str
    #: What a reason line calls it when it cannot run.
    label: str = ""
    #: The batch strategy whose operator finds them (None: a per-chromosome kernel in Python,
    #: which every session runs).
    runs: str | None = None
    #: It collects and broadcasts the targets: targets over ``spark.giql.broadcastMaxBytes``
    #: refuse it.
    broadcast: bool = False


#: The ways to a NEAREST's candidates, the first a session can run taken.
CANDIDATES: tuple[Candidates, ...] = (
    Candidates("jvm_nearest", "k-nearest candidates of well-formed intervals from the JVM broadcast index of "
               "the targets (ties at the k-th kept); the other rows' from the per-chromosome kernel",
               label="JVM index", runs="jvm_broadcast", broadcast=True),
    Candidates("nearest-index", "k-nearest candidates per chromosome from a sorted index"),
)


#: A NEAREST's rows by giql's own SQL (its ranking joined back to the outer rows), where no
#: strategy of :func:`nearest_joins` can run the k-nearest join.
RANKED = "ranked"


def candidates(unavailable: dict[str, str]) -> tuple[Candidates, str]:
    """The first way to a NEAREST's candidates not in ``unavailable`` (by its name or the
    strategy it runs), and the reason line: why the ways before it could not run."""
    why = []
    for c in CANDIDATES:
        blocked = unavailable.get(c.name) or (unavailable.get(c.runs) if c.runs else None)
        if blocked is None:
            return c, c.reason + (f" ({'; '.join(why)})" if why else "")
        why.append(f"{c.label or c.name}: {blocked}")
    raise AssertionError("the last of CANDIDATES runs in every session")


def candidates_named(name: str) -> Candidates:
    return next(c for c in CANDIDATES if c.name == name)


def by_rules(left, right) -> tuple[str, str]:
    """The strategy the registry's rules take where no statistics price the strategies, and why."""
    for name, s in sorted(((n, s) for n, s in STRATEGIES.items() if s.rule is not None),
                          key=lambda kv: kv[1].rule_rank):
        why = s.rule(left, right)
        if why:
            return name, why
    raise AssertionError("the last rule takes every join")


def unbanded() -> str:
    """The strategy of a join with no band to prune by (it runs any condition)."""
    return next(n for n, s in STRATEGIES.items() if s.unbanded)


def get(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown join strategy {name!r}; available: {', '.join(sorted(STRATEGIES))}") from None


def per_row_counters() -> list[tuple[str, dict]]:
    """The strategies that count a join per left row inside the JVM, with their options, in
    the order to take them when no statistics give their costs (the merge first: it reads
    sorted files with no shuffle and collects nothing on the driver)."""
    counters = sorted((s.per_row_rank, n) for n, s in STRATEGIES.items() if s.per_row_rank is not None)
    return [(n, dict(STRATEGIES[n].per_row_options)) for _, n in counters]


def nearest_joins() -> dict[str, Strategy]:
    """The strategies that run a k-nearest join in the JVM, by name."""
    return {n: s for n, s in STRATEGIES.items() if s.nearest_algo}


def unavailable(spark) -> dict[str, str]:
    """The strategies ``spark`` cannot run, each with why."""
    out = {}
    for name, s in STRATEGIES.items():
        if s.available is not None:
            ok, why = s.available(spark)
            if not ok:
                out[name] = why
    return out


def refusals(left, right, spec, skip=()) -> dict[str, str]:
    """The strategies that cannot run this join for its inputs' layout, each
    with why; ``skip``: strategies not to check (the session lacks them)."""
    out = {}
    for name, s in STRATEGIES.items():
        if s.refusal is not None and name not in skip:
            why = s.refusal(left, right, spec)
            if why:
                out[name] = why
    return out


def size_params() -> tuple[str, ...]:
    """The size parameters any strategy takes (``bin_size``, ``tile_size``)."""
    return tuple(dict.fromkeys(p.name for s in STRATEGIES.values() for p in s.params if p.size))


def settled(options: dict) -> bool:
    """Whether ``options`` force a batch strategy and every parameter it would have chosen."""
    name = options.get("strategy")
    return name in BATCH and BATCH[name].settled(options)


def plan(left, right, spec, strategy: str = "binned", **params):
    """Join ``left`` and ``right`` as ``spec`` says, with the named strategy.

    The output has ``left``'s columns then ``right``'s (``left``'s only for
    semi and anti joins); rows are those of ``spec``'s semantics, in no order.
    """
    return get(strategy).join(left, right, spec, **params)
