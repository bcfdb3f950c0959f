"""The user's entry point: a Spark session plus registered GIQL tables."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import sys
import time
from dataclasses import dataclass
from importlib import resources

from giql import Table
from pyspark.logger import PySparkLogger
from pyspark.sql import DataFrame, SparkSession

from .errors import GiqlSparkError, QueryError, UnknownColumnError, UnknownTableError
from .language.bind import bind_tables
from .language.compile import compile_giql
from .planner.choose import choose
from .planner.hints import parse_hint
from .planner.rewrite import PhysicalNode, plan_physical
from .planner.stats import sides_stats
from .runtime import build_node
from .spark_sql import bound_sql

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _default_driver_memory() -> str:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "4g"
    # Local mode runs everything in the driver JVM; leave room for Python
    # workers and the OS.
    gib = max(1, min(16, int(total / 2**30 * 0.4)))
    return f"{gib}g"


def local_spark(master: str | None = None, app_name: str = "giql-spark", config: dict | None = None) -> SparkSession:
    """Start (or reuse) a SparkSession for this machine with quiet logs."""
    # Python workers must run the interpreter that has this package and its
    # dependencies, not whatever python3 is first on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    log4j = resources.files("giql_spark").joinpath("data/log4j2.properties")
    cores = os.cpu_count() or 2
    conf = {
        "spark.driver.memory": _default_driver_memory(),
        "spark.sql.shuffle.partitions": str(max(4, 2 * cores)),
        "spark.default.parallelism": str(max(2, cores)),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
        "spark.sql.session.timeZone": "UTC",
    }
    conf.update(config or {})
    builder = SparkSession.builder.master(master or "local[*]").appName(app_name)
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@dataclass(frozen=True)
class Registered:
    """A table as the session knows it: its giql mapping and its source."""

    table: Table
    source: str  # a path, or "DataFrame"
    columns: list[str]
    skipped_rows: int = 0
    df: DataFrame | None = None


class Session:
    """GIQL on Spark.

    ``Session()`` starts an embedded local Spark (``local[*]``);
    ``Session(spark)`` wraps an existing SparkSession (a cluster, or Spark
    Connect). Options: ``strategy`` forces an interval-join strategy
    (``"broadcast"``, ``"binned"``, ``"sweep"``, ``"naive"``), ``bin_size``
    the binned strategy's bin width, ``tile_size`` the sweep's genome tile,
    ``stats_tier`` how much the planner reads about each join side (0:
    Spark's size estimate only; 1: also Parquet footers; 2, the default:
    also a bounded sample of interval widths and chromosomes). A query may
    carry the hint ``/*+ INTERVAL_JOIN(strategy, bin_size=N, tile_size=N) */``
    (any part optional), which wins over the session's options.
    """

    def __init__(self, spark: SparkSession | None = None, *, master: str | None = None,
                 config: dict | None = None, strategy: str | None = None, bin_size: int | None = None,
                 tile_size: int | None = None, stats_tier: int = 2):
        self.spark = spark if spark is not None else local_spark(master, config=config)
        self.options: dict = {"strategy": strategy, "bin_size": bin_size, "tile_size": tile_size,
                              "stats_tier": stats_tier}
        self._tables: dict[str, Registered] = {}
        self._stats: dict = {}

    # -- tables ---------------------------------------------------------------
    def register(self, name: str, source, *, format: str | None = None, chrom_col: str = "chrom",
                 start_col: str = "start", end_col: str = "end", strand_col: str | None = "strand",
                 genomic_col: str = "interval", coordinate_system: str | None = None,
                 interval_type: str | None = None, on_error: str = "raise", **read_options) -> DataFrame:
        """Register ``source`` (a path or a Spark DataFrame) as table ``name``.

        Paths are read by extension (see :meth:`read`; ``format=``
        overrides). The mapping options are giql's :class:`giql.Table`:
        which columns hold chromosome, start, end and strand, and the
        coordinate convention of start/end. When ``coordinate_system`` or
        ``interval_type`` is not given it is the file format's own: 0-based
        half-open for BED and narrowPeak/broadPeak, 1-based closed for
        VCF/BCF, GFF3/GTF and SAM/BAM/CRAM (values stay as in the file);
        for a DataFrame returned by :meth:`read` the convention recorded
        then; otherwise 0-based half-open. Explicit arguments always win.
        A strand column that the table lacks is ignored. Returns the table's
        DataFrame.
        """
        from .io import conventions, read_source

        if not isinstance(name, str) or not _NAME.match(name):
            raise GiqlSparkError(f"table name {name!r} must be a plain identifier (letters, digits, _)")
        skipped = 0
        native = (None, None)
        if isinstance(source, DataFrame):
            df, origin = source, "DataFrame"
            seen = conventions.convention_of(df)
            if seen is not None:
                native = (seen.coordinate_system, seen.interval_type)
        elif isinstance(source, (str, os.PathLike)):
            src = read_source(self.spark, os.fspath(source), format, on_error=on_error, **read_options)
            df, skipped, origin = src.df, src.skipped_rows, os.fspath(source)
            native = (src.coordinate_system, src.interval_type)
        else:
            raise GiqlSparkError(
                f"table {name!r}: source must be a path or a Spark DataFrame, got {type(source).__name__}"
            )
        coordinate_system = coordinate_system or native[0] or "0based"
        interval_type = interval_type or native[1] or "half_open"
        columns = {c.lower() for c in df.columns}
        for role, col in (("chrom_col", chrom_col), ("start_col", start_col), ("end_col", end_col)):
            if col.lower() not in columns:
                raise UnknownColumnError(
                    f"table {name!r} has no column {col!r} for {role} (columns: {', '.join(df.columns)})"
                )
        if strand_col is not None and strand_col.lower() not in columns:
            strand_col = None
        table = Table(name, genomic_col=genomic_col, chrom_col=chrom_col, start_col=start_col,
                      end_col=end_col, strand_col=strand_col, coordinate_system=coordinate_system,
                      interval_type=interval_type)
        df.createOrReplaceTempView(name)
        self._stats.clear()  # statistics of sides that read the old table are stale
        conventions.remember(df, conventions.Convention(chrom_col, start_col, end_col, coordinate_system,
                                                        interval_type))
        self._tables[name] = Registered(table, origin, list(df.columns), skipped, df)
        return df

    def read(self, path, format: str | None = None, **options) -> DataFrame:
        """Read a file into a DataFrame without registering it.

        Formats by extension (case-insensitive; ``format=`` overrides): BED
        (.bed, .bed.gz), narrowPeak/broadPeak (optionally .gz), VCF (.vcf,
        .vcf.gz), BCF, GFF3 (.gff, .gff3) and GTF (optionally .gz), SAM, BAM,
        CRAM, Parquet (file or directory), CSV/TSV. Start/end are as in the
        file: 0-based half-open for BED and peaks, 1-based closed for the
        others; the convention is recorded so :meth:`register` and
        :meth:`write` apply it. ``options``: ``on_error`` (BED/peaks),
        ``header``/``sep`` (CSV/TSV), ``validate`` and format-specific ones
        (see :func:`giql_spark.io.datasource.read_genomic`).
        """
        from .io import conventions, read_source

        src = read_source(self.spark, os.fspath(path), format, **options)
        if src.coordinate_system is not None:
            conventions.remember(
                src.df, conventions.Convention("chrom", "start", "end", src.coordinate_system, src.interval_type)
            )
        return src.df

    def write(self, data, path, format: str | None = None, *, partition_by_chrom: bool = False,
              single_file: bool = False, mode: str = "error", coordinate_system: str | None = None,
              interval_type: str | None = None) -> None:
        """Write a DataFrame, or a registered table given by name, to ``path``.

        Formats by extension or ``format=``: BED (.bed, .bed.gz), TSV, CSV,
        Parquet; see :mod:`giql_spark.io.writers` for the exact rules.
        BED output is always 0-based half-open: the source convention is,
        in order, the explicit ``coordinate_system``/``interval_type``, the
        table's registration when ``data`` is a table name, the convention
        recorded for a DataFrame returned by :meth:`read`/:meth:`register`,
        else 0-based half-open (written unchanged). A DataFrame derived from
        those (a select, a query result) carries no convention: pass it.
        ``partition_by_chrom`` writes Parquet as one folder per chromosome;
        ``single_file`` writes BED/TSV/CSV as one plain file instead of a
        Spark directory; ``mode`` is Spark's save mode.
        """
        from .io import conventions, write_path

        if isinstance(data, str):
            df = self.table(data)  # raises for an unknown table
            t = self._tables[data].table
            seen = conventions.Convention(t.chrom_col, t.start_col, t.end_col, t.coordinate_system, t.interval_type)
        elif isinstance(data, DataFrame):
            df = data
            seen = conventions.convention_of(df) or conventions.Convention(
                "chrom", "start", "end", "0based", "half_open"
            )
        else:
            raise GiqlSparkError(f"write: data must be a DataFrame or a table name, got {type(data).__name__}")
        write_path(
            df, os.fspath(path), format, partition_by_chrom=partition_by_chrom, single_file=single_file,
            mode=mode, chrom_col=seen.chrom_col, start_col=seen.start_col, end_col=seen.end_col,
            coordinate_system=coordinate_system or seen.coordinate_system,
            interval_type=interval_type or seen.interval_type,
        )

    def table(self, name: str) -> DataFrame:
        """The DataFrame registered as ``name``."""
        if name not in self._tables:
            raise UnknownTableError(f"unknown table {name!r} (registered tables: {', '.join(self._tables) or 'none'})")
        return self._tables[name].df

    @property
    def tables(self) -> dict[str, Registered]:
        return dict(self._tables)

    # -- queries --------------------------------------------------------------

    def _analyse(self, sql: str, frames: dict[str, DataFrame] | None = None) -> DataFrame:
        try:
            with _quiet_spark_query_log():
                return bound_sql(self.spark, sql, frames or {})
        except Exception as e:  # AnalysisException and ParseException
            raise _spark_error(e) from None

    def _plan(self, query: str, always_stats: bool = False) -> tuple[str, dict[str, DataFrame], list[PhysicalNode]]:
        """(the Spark SQL, the DataFrames its placeholders are bound to, the operators)."""
        query, hint = parse_hint(query)
        options = {**self.options, **hint}
        tree = compile_giql(
            query,
            {n: r.table for n, r in self._tables.items()},
            {n: r.columns for n, r in self._tables.items()},
        )
        frames = {mark: self._tables[name].df for mark, name in bind_tables(tree, list(self._tables)).items()}
        # The rewrite reads a side's columns and the build then uses the same
        # side: analyse each side's SQL once per query.
        analysed: dict[str, DataFrame] = {}

        def side(sql: str) -> DataFrame:
            if sql not in analysed:
                analysed[sql] = self._analyse(sql, frames)
            return analysed[sql]

        def columns_of(sql: str) -> dict[str, list[str]]:
            return {f.name: list(f.dataType.fieldNames()) for f in side(sql).schema.fields}

        def build(node: PhysicalNode) -> None:
            left, right = side(node.left.sql), side(node.right.sql)
            t0 = time.perf_counter()
            # A strategy fixed with all its parameters needs no statistics,
            # except to show the estimates in EXPLAIN.
            if node.kind == "interval_join" and (always_stats or not _settled(options)):
                ls, rs = self._side_stats([(node.left.sql, left, node.spec.left),
                                           (node.right.sql, right, node.spec.right)],
                                          int(options.get("stats_tier", 2)))
            else:
                ls = rs = None
            t1 = time.perf_counter()
            node.choice = choose(node, options, ls, rs)
            node.choice["stats"] = (ls, rs)
            node.choice["timing"] = {"statistics": t1 - t0, "choice": time.perf_counter() - t1}
            # Building is lazy: no Spark job runs. Later sides and the final
            # statement read the result through its placeholder.
            node.df = build_node(node, left, right)
            frames[node.view] = node.df

        nodes = plan_physical(tree, columns_of, build)
        return tree.sql(dialect="spark"), frames, nodes

    def _side_stats(self, sides: list[tuple[str, DataFrame, object]], tier: int) -> tuple:
        """Statistics of each ``(sql, DataFrame, interval)`` side, cached per
        session until a table is re-registered (Parquet files' own statistics
        are kept longer, see :mod:`.planner.filestats`)."""
        keys = [(sql, interval, tier) for sql, _, interval in sides]
        missing = {k: df for k, (_, df, _) in zip(keys, sides) if k not in self._stats}
        found = sides_stats([(df, k[1]) for k, df in missing.items()], tier=tier)
        self._stats.update(zip(missing, found))
        return tuple(self._stats[k] for k in keys)

    def _execute(self, query: str, always_stats: bool = False) -> tuple[DataFrame, str, list[PhysicalNode]]:
        sql, frames, nodes = self._plan(query, always_stats)
        return self._analyse(sql, frames), sql, nodes

    def sql(self, query: str) -> DataFrame:
        """Run a GIQL query; return a lazy Spark DataFrame."""
        return self._execute(query)[0]

    def to_sql(self, query: str) -> str:
        """The Spark SQL that runs for ``query``.

        Registered tables appear as ``__gs_t_<name>`` and each planned
        operator's result as ``__giql_spark_v<n>``: placeholders that are
        bound to DataFrames when the query runs, not session views.
        """
        return self._plan(query)[0]

    def explain(self, query: str, analyze: bool = False) -> str:
        """The plan in words, then Spark's plan.

        For each interval join: the statistics read for each side (and their
        tier), every strategy's estimated cost with its terms or why it was
        refused, and the chosen strategy with its parameters. With
        ``analyze=True`` the query also runs: each join's actual output rows
        and time, and the whole query's rows and time, are shown next to the
        estimates.
        """
        df, sql, nodes = self._execute(query, always_stats=True)
        out = [f"GIQL: {' '.join(query.split())}", ""]
        if not nodes:
            out.append("Interval operators: none (runs as Spark SQL)")
        for i, node in enumerate(nodes, 1):
            out.extend(_describe(i, node))
            if analyze:
                t0 = time.perf_counter()
                rows = node.df.count()
                out.append(f"    actual: {rows:,} rows in {time.perf_counter() - t0:.2f} s (this operator alone)")
        if analyze:
            t0 = time.perf_counter()
            rows = df.count()
            out += ["", f"Query actual: {rows:,} rows in {time.perf_counter() - t0:.2f} s"]
        out += ["", "Spark SQL:", f"  {sql}", "", "Spark physical plan:"]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            df.explain()
        out.append(buf.getvalue().rstrip())
        return "\n".join(out)

    def stop(self) -> None:
        self.spark.stop()


def _describe(i: int, node: PhysicalNode) -> list[str]:
    c = node.choice
    params = ", ".join(f"{k}={v}" for k, v in c.get("params", {}).items())
    lines = []
    if node.kind == "interval_join":
        s = node.spec
        lines.append(
            f"[{i}] interval join: {s.how.upper()} {s.predicate.upper()} "
            f"({', '.join(node.left.aliases)}) x ({', '.join(node.right.aliases)})"
        )
        lines.append(f"    condition: {s.condition}" + (f" AND {s.residual}" if s.residual else ""))
    else:
        s = node.spec
        lines.append(f"[{i}] nearest: k={s.k}{' stranded' if s.stranded else ''} "
                     f"targets {s.target[0]} for references {s.reference[0]}")
    lines.append(f"    strategy: {c['strategy']}" + (f" ({params})" if params else "") + f" — {c['reason']}")
    stats = c.get("stats") or (None, None)
    for name, st in zip(("left", "right"), stats):
        if st is not None:
            details = st.details()
            lines.append(f"    {name} statistics: {details[0]}")
            lines.extend(f"      {d}" for d in details[1:])
    if c.get("estimates"):
        lines.append(f"    estimates ({c['constants']}), cheapest first:")
        for e in c["estimates"]:
            mark = "*" if e.strategy == c["strategy"] and not e.refused else "-"
            lines.append(f"      {mark} {e.describe()}")
        pairs = c["estimates"][0].pairs
        if pairs is not None:
            lines.append(f"    estimated output pairs: ~{pairs:,.0f}")
    if c.get("timing"):
        t = c["timing"]
        lines.append(f"    optimizer time: statistics {t['statistics']:.3f} s, choice {t['choice']:.3f} s")
    return lines


@contextlib.contextmanager
def _quiet_spark_query_log():
    # PySpark logs every failed query as a multi-line JSON record; the error
    # is re-raised as one clear line, so the record is only noise. The logger
    # must be PySpark's own class: PySpark logs through it with keyword
    # arguments a plain ``logging.Logger`` rejects, and whoever creates a
    # named logger first fixes its class for the life of the process.
    log = PySparkLogger.getLogger("SQLQueryContextLogger")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def _spark_error(e: Exception) -> GiqlSparkError:
    cond = ""
    params: dict = {}
    with contextlib.suppress(Exception):
        cond = e.getCondition() or ""
    with contextlib.suppress(Exception):
        params = e.getMessageParameters() or {}
    msg = " ".join(str(e).split())
    if cond.startswith("UNRESOLVED_COLUMN") or cond.startswith("UNRESOLVED_FIELD"):
        name = params.get("objectName") or params.get("fieldName") or "?"
        hint = params.get("proposal")
        return UnknownColumnError(f"unknown column {name}" + (f" (did you mean one of: {hint})" if hint else ""))
    if cond.startswith("FIELD_NOT_FOUND"):
        # Columns of joined tables are struct fields after the join rewrite.
        fields = params.get("fields")
        return UnknownColumnError(
            f"unknown column {params.get('fieldName', '?')}" + (f" (columns: {fields})" if fields else "")
        )
    if cond.startswith("TABLE_OR_VIEW_NOT_FOUND"):
        return UnknownTableError(f"unknown table {params.get('relationName', '?')}")
    return QueryError(msg[:500])


def _settled(options: dict) -> bool:
    """Whether the options fix the join strategy and every parameter it takes."""
    strategy = options.get("strategy")
    return strategy in ("naive", "sweep") or (strategy == "binned" and bool(options.get("bin_size")))
