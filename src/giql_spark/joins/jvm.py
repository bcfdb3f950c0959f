"""Interval and band joins by giql-spark's operators inside Spark's JVM.

The join is Spark's own join of the two sides on ``giql_band(...) AND
<exact condition>``: the marker (:mod:`giql_spark.jvm.marker`) carries the
equality keys and each side's hull, and the planner strategy the extension
injects replaces the join with an operator: a broadcast interval index
(``jvm_broadcast``: the smaller side indexed once, the other streamed past
it, no shuffle), a partitioned sort-sweep (``jvm_sweep``: both sides cut
into genome tiles, shuffled by (key, tile) and swept; inner joins) or a
merge of Parquet files already sorted by (key, start) (``jvm_merge``: each
task reads both sides' row groups of a range of keys and sweeps them, no
shuffle; inner, left, semi and anti joins). No row crosses into Python. The operators exist only where the session was started
with the extension (see :func:`available`).
"""

from __future__ import annotations

import threading
import weakref

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .spec import JoinSpec, spark

_SPARK_HOW = {"inner": "inner", "left": "left", "right": "right", "full": "full",
              "semi": "left_semi", "anti": "left_anti"}
_checked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_merge_checked: dict = {}


def available(session) -> tuple[bool, str]:
    """Whether ``session`` (a SparkSession) has the extension's operators, and
    why not; asked once per session (planning a tiny join, nothing runs)."""
    from .. import jvm

    with _lock:
        found = _checked.get(session)
        if found is None:
            found = jvm.available(session)
            try:
                _checked[session] = found
            except TypeError:  # a session class that cannot be weakly referenced
                pass
        return found


def stream_available(session) -> tuple[bool, str]:
    """Whether ``session`` can run the JVM stream-stream operator: the extension, and a classic
    session (the operator is planned through the driver's JVM, which Spark Connect does not expose)."""
    from ..spark_sql import is_connect

    if is_connect(session):
        return False, "a Spark Connect session: the operator is planned through the driver's JVM"
    return available(session)


def _join(left: DataFrame, right: DataFrame, spec: JoinSpec, options: dict) -> DataFrame:
    from ..jvm.marker import band_sql

    keys = spec.key_pairs
    (_, ls, le), (_, rs, re_) = spec.left.text, spec.right.text
    # the operators test keys and hulls themselves: an exact-hull condition is no residual
    exact = spec.exact_hulls and spec.residual is None
    if exact:  # ordered ends, NULL when any column is (least and greatest would skip a NULL)
        hulls = (ls, le), (rs, re_)
    else:
        hulls = (f"least({ls}, {le})", f"greatest({ls}, {le})"), (f"least({rs}, {re_})", f"greatest({rs}, {re_})")
    marker = band_sql([spark(k) for k, _ in keys], *hulls[0], [spark(k) for _, k in keys], *hulls[1], **options)
    # one SQL expression, not a Column per argument: each Column was a round trip to the JVM
    # while the query is planned (a COUNT made 65-68 of them, now 29-32; benchmarks/planning.py)
    condition = marker if exact else f"{marker} AND ({spec.full_condition})"
    return left.join(right, F.expr(condition), _SPARK_HOW[spec.how])


def broadcast_join(left: DataFrame, right: DataFrame, spec: JoinSpec, build: str = "auto", *,
                   dry_run: bool = False) -> DataFrame:
    """The broadcast interval-index join; ``build``: the side indexed (``auto``:
    the one Spark estimates smaller that the join type allows)."""
    return _join(left, right, spec, {"algo": "broadcast", "build": build})


def sweep_join(left: DataFrame, right: DataFrame, spec: JoinSpec, tile_size: int = 1_000_000, *,
               dry_run: bool = False) -> DataFrame:
    """The partitioned sort-sweep join (inner joins; other types take the broadcast operator)."""
    return _join(left, right, spec, {"algo": "sweep", "tile": str(int(tile_size))})


def merge_join(left: DataFrame, right: DataFrame, spec: JoinSpec, *, dry_run: bool = False) -> DataFrame:
    """The merge of sorted Parquet files; only chosen where :func:`merge_refusal` found none."""
    return _join(left, right, spec, {"algo": "merge"})


def nearest_join(left: DataFrame, right: DataFrame, left_keys: list[str], left_hull: tuple[str, str],
                 right_keys: list[str], right_hull: tuple[str, str], k: int, max_gap: int | None = None,
                 how: str = "left", ties: bool = False, algo: str = "broadcast", side: str = "both",
                 condition: str | None = None) -> DataFrame:
    """Each ``left`` row with the ``k`` ``right`` rows of equal keys whose closed hulls
    ``[lo, hi]`` are nearest to its own (gap 0 when they share a point), nearest first by
    (gap, lo, hi); with ``max_gap``, only rows within that gap; with ``ties``, also every row
    whose (gap, lo, hi) equals the k-th's. ``side``: ``left`` or ``right`` counts only the rows
    wholly before (``hi <= lo`` of the row) or after (``lo >= hi``) the row's hull, and ``ties``
    then brings every one at the k-th's gap; ``left_or_meeting`` / ``right_or_meeting`` also the
    rows meeting the hull (gap 0), leaving out only those wholly on the other side. ``how``: ``left`` keeps a row with none (NULL right
    columns), ``inner`` drops it. ``condition``: SQL over both sides' columns that a pair must
    meet; the ``k`` are the nearest among the ``right`` rows that meet it (a self-join leaving
    each row's own out), not the nearest then filtered. ``right`` is broadcast as an index;
    nothing crosses into Python. Expressions are SQL over the two sides' columns."""
    from ..jvm.marker import band_sql

    marker = band_sql(list(left_keys), *left_hull, list(right_keys), *right_hull, algo=algo, build="right",
                      nearest=str(int(k)), maxgap="none" if max_gap is None else str(int(max_gap)),
                      ties="true" if ties else None, side=None if side == "both" else side,
                      prefilter="true" if condition else None)
    on = marker if not condition else f"{marker} AND ({condition})"
    return left.join(right, F.expr(on), _SPARK_HOW[how])


def _merge_session_refusal(session) -> str | None:
    """Why no merge can run in ``session`` at all, or None."""
    from .. import spark_sql

    if spark_sql.is_connect(session):
        return "the files' order is checked only in a classic Spark session"
    if session.conf.get("spark.giql.merge.enabled", "true").lower() == "false":
        return "spark.giql.merge.enabled is false"
    return None


def _planned_refusal(df: DataFrame) -> str | None:
    """Why the extension did not plan ``df``'s marked join as a merge, or None (nothing runs)."""
    session = df.sparkSession
    return str(session.sparkContext._jvm.io.giql.spark.PlanMetrics.mergeRefusal(df._jdf)) or None


def _check_failed(e: Exception) -> str:
    return f"the merge check failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _remembered(key, check) -> str | None:
    """``check()``'s answer, kept for ``key`` (the same sides and join planned again: a statement
    re-run, EXPLAIN then the query). The extension decides again from the files when the query
    is planned, and a merge the files no longer allow runs as the broadcast, so a kept answer
    can cost speed, never rows."""
    with _lock:
        if key in _merge_checked:
            return _merge_checked[key]
    why = check()
    with _lock:
        if len(_merge_checked) > 256:
            _merge_checked.clear()
        _merge_checked[key] = why
    return why


def nearest_merge_refusal(left: DataFrame, right: DataFrame, left_keys: list[str], left_hull: tuple[str, str],
                          right_keys: list[str], right_hull: tuple[str, str]) -> str | None:
    """Why :func:`nearest_join` cannot run with ``algo="merge"`` on these sides, or None when
    it can (the extension plans it, which runs nothing)."""
    why = _merge_session_refusal(left.sparkSession)
    if why:
        return why

    def check():
        try:
            return _planned_refusal(nearest_join(left, right, left_keys, left_hull, right_keys, right_hull, 1,
                                                 algo="merge"))
        except Exception as e:  # a plan the check cannot read: the broadcast remains
            return _check_failed(e)

    key = ("nearest", left._jdf.semanticHash(), right._jdf.semanticHash(), tuple(left_keys), tuple(left_hull),
           tuple(right_keys), tuple(right_hull))
    return _remembered(key, check)


def merge_refusal(left: DataFrame, right: DataFrame, spec: JoinSpec) -> str | None:
    """Why the merge join cannot run this join, or None when it can.

    The extension's planner decides from the files' footers and a sample of
    their first rows (both sides plain scans of unpartitioned Parquet files
    sorted by (key, start); inner, left, semi or anti join); this plans the
    join with it, which runs nothing."""
    if spec.how not in ("inner", "left", "semi", "anti"):
        return f"the merge join does inner, left, semi and anti joins, not {spec.how}"
    why = _merge_session_refusal(left.sparkSession)
    if why:
        return why

    def check():
        try:
            return _planned_refusal(_join(left, right, spec, {"algo": "merge"}))
        except Exception as e:  # a plan the check cannot read: the other operators remain
            return _check_failed(e)

    try:
        key = (left._jdf.semanticHash(), right._jdf.semanticHash(), spec.how, spec.describe(),
               spec.left.text, spec.right.text, tuple(map(str, spec.key_pairs)))
    except Exception as e:
        return _check_failed(e)
    return _remembered(key, check)
