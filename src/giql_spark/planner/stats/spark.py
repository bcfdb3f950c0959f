"""What Spark's own plan says about a join side: size, shape, input files.

This is the one module that reads Spark's internals (a classic session's
JVM through Py4J); everything else uses public APIs. A classic session is
asked through its JVM (the analysed logical plan: one round trip, nothing is
optimized or run). A Spark Connect session has no JVM on the client, so the
same facts come from public calls: ``DataFrame.explain(mode="cost")`` prints
the optimized plan with Spark's size estimate on each node, and
``DataFrame.inputFiles()`` lists the files. A fact that cannot be had is
None, and :attr:`PlanFacts.notes` says which and why, for EXPLAIN.
"""

from __future__ import annotations

import io
import re
import sys
import threading
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from ...spark_sql import is_connect

#: Spark reports a size it cannot estimate as ``spark.sql.defaultSizeInBytes``
#: (Long.MaxValue by default); anything this large reads as unknown.
UNKNOWN_SIZE = 2**62
#: Plan nodes that keep a side's rows those of one scan, maybe filtered.
SCAN_NODES = {"Project", "Filter", "SubqueryAlias", "View", "Relation"}
_TREE = re.compile(r"^[\s:|+-]*(\w+)")
_SIZE = re.compile(r"Statistics\(sizeInBytes=([0-9.E+]+)\s*([KMGTPE]i)?B")
_ROWS = re.compile(r"Statistics\(.*rowCount=([0-9.E+]+)")
_UNITS = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


@dataclass
class PlanFacts:
    """Spark's size estimate in bytes, whether the side is one scan under
    projections and filters, and that scan's files; None where unknown."""

    size: int | None = None
    #: Spark's row count, when it knows it exactly (an in-memory relation).
    rows: int | None = None
    single_scan: bool | None = None
    files: list[str] | None = None
    notes: list[str] = field(default_factory=list)


def cluster_cores(spark) -> tuple[int | None, int]:
    """(the task slots a query gets, Spark's shuffle partitions): ``spark.giql.cores`` where
    set (a cluster not yet started, or a share of one), else the default parallelism (a classic
    session's, or ``spark.default.parallelism`` on Spark Connect); None when neither is known."""

    def conf_int(key: str) -> int | None:
        try:
            v = spark.conf.get(key, None)
            return int(v) if v not in (None, "") else None
        except (ValueError, TypeError, Exception):  # "auto" and the like, or no such key
            return None

    cores = conf_int("spark.giql.cores")
    if cores is None and not is_connect(spark):
        try:
            cores = int(spark.sparkContext.defaultParallelism)
        except Exception:
            cores = None
    if cores is None:
        cores = conf_int("spark.default.parallelism")
    return (cores if cores and cores > 0 else None), conf_int("spark.sql.shuffle.partitions") or 200


def within_broadcast_limit(df: DataFrame) -> bool:
    """Whether Spark's size estimate of ``df`` is within the broadcast limit of the
    JVM operators (``spark.giql.broadcastMaxBytes``; an unknown size is within it)."""
    limit = df.sparkSession.conf.get("spark.giql.broadcastMaxBytes", "2g")
    size = plan_facts(df, files=False).size
    return size is None or size <= _bytes(limit)


def _bytes(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().rstrip("b")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def plan_facts(df: DataFrame, files: bool = True) -> PlanFacts:
    """The facts about ``df``; its input files only when ``files`` and it is one scan."""
    if is_connect(df):
        return _connect_facts(df, files)
    return _classic_facts(df, files)


def analysed_plan(df: DataFrame):
    """Spark's analysed logical plan of a classic DataFrame (a JVM object), or None.

    A DataFrame is analysed when it is made, so this costs one round trip;
    optimizing the side alone (which the whole query's plan does again) cost
    about ten times more and gives the same size estimate, which sums the
    relation's size scaled by the columns kept.
    """
    try:
        return df._jdf.queryExecution().analyzed()
    except Exception:
        return None


def single_scan(plan_text: str) -> tuple[bool, str]:
    """Whether a plan tree's text is one relation under projections and
    filters only (a limit, sample, join or aggregate makes the footers
    describe other rows), and, when not, the first other node."""
    nodes = [m.group(1) for m in map(_TREE.match, plan_text.splitlines()) if m]
    other = next((n for n in nodes if n not in SCAN_NODES), None)
    if other is not None:
        return False, f"the side's plan has a {other}"
    if nodes.count("Relation") != 1:
        return False, f"the side reads {nodes.count('Relation')} relations"
    return True, ""


def _classic_facts(df: DataFrame, files: bool) -> PlanFacts:
    facts = PlanFacts()
    plan = analysed_plan(df)
    if plan is None:
        facts.notes.append("size: Spark's plan could not be read")
        return facts
    try:
        stats = plan.stats()
        size = int(str(stats.sizeInBytes()))
        facts.size = None if size >= UNKNOWN_SIZE else size
        if stats.rowCount().isDefined():
            facts.rows = int(str(stats.rowCount().get()))
    except Exception:  # a plan Spark cannot size
        pass
    if facts.size is None:
        facts.notes.append("size: Spark has no size estimate for this side's source")
    facts.single_scan, why = single_scan(str(plan.toString()))
    if not facts.single_scan:
        facts.notes.append(f"footers: {why}")
    elif files:
        try:
            # Off the analysed plan's leaf: df.inputFiles() optimizes the plan
            # first, about ten times the cost.
            leaves = plan.collectLeaves()
            facts.files = list(leaves.head().relation().inputFiles())
        except Exception:  # not a file relation
            facts.files = list(df.inputFiles())
    return facts


def _connect_facts(df: DataFrame, files: bool) -> PlanFacts:
    facts = PlanFacts()
    try:
        text = _printed(lambda: df.explain(mode="cost"))
    except Exception as e:  # the server could not plan it; the query will say why
        facts.notes.append(f"size: Spark Connect could not explain the side ({type(e).__name__})")
        return facts
    optimized = text.split("== Optimized Logical Plan ==", 1)[-1].split("== Physical Plan ==", 1)[0].strip()
    root = optimized.splitlines()[0] if optimized else ""
    m = _SIZE.search(root)
    if m is not None:
        size = int(float(m.group(1)) * _UNITS[m.group(2)])
        facts.size = None if size >= UNKNOWN_SIZE else size
    m = _ROWS.search(root)
    if m is not None:
        facts.rows = int(float(m.group(1)))
    if facts.size is None:
        facts.notes.append("size: Spark has no size estimate for this side's source")
    # The optimized plan: views and aliases are gone, projections and
    # filters over one relation remain as they are in the analysed plan.
    facts.single_scan, why = single_scan(_SIZE_SUFFIX.sub("", optimized))
    if not facts.single_scan:
        facts.notes.append(f"footers: {why}")
    elif files:
        facts.files = list(df.inputFiles())
    return facts


_SIZE_SUFFIX = re.compile(r",\s*Statistics\(.*\)\s*$", re.MULTILINE)


class _ByThread:
    """A stdout that sends the writes of threads capturing their prints to
    their own buffers and everything else to the real stdout, so that the
    sides' concurrent ``explain`` calls (and the user's prints) stay apart."""

    def __init__(self, real):
        self.real = real
        self.buffers: dict[int, io.StringIO] = {}

    def write(self, text: str) -> int:
        return self.buffers.get(threading.get_ident(), self.real).write(text)

    def flush(self) -> None:
        self.real.flush()

    def __getattr__(self, name):
        return getattr(self.real, name)


_lock = threading.Lock()
_router: _ByThread | None = None


def _printed(call) -> str:
    """What ``call()`` prints to stdout in this thread (``explain`` only prints)."""
    global _router
    buf = io.StringIO()
    me = threading.get_ident()
    with _lock:
        if _router is None:
            _router = _ByThread(sys.stdout)
            sys.stdout = _router
        _router.buffers[me] = buf
    try:
        call()
    finally:
        with _lock:
            del _router.buffers[me]
            if not _router.buffers:
                sys.stdout = _router.real
                _router = None
    return buf.getvalue()
