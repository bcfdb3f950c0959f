"""The user's entry point: a Spark session plus registered GIQL tables."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import time
from dataclasses import dataclass, field
from importlib import resources

from giql import Table
from pyspark.sql import DataFrame, SparkSession

from . import runtime, spark_sql
from .errors import GiqlSparkError, UnknownColumnError, UnknownTableError
from .language.schema import table_placeholder
from .planner.nodes import Built, IntervalJoin, NearestRows
from .language.plan import Plan, plan
from .planner.select import StatsCache

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: 'giql' (the default): Session.write writes Parquet with giql-spark's own writer where it can;
#: 'spark': always with Spark's.
PARQUET_WRITER_CONF = "spark.giql.parquet.writer"


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
        # Stream-stream interval joins keep their state in RocksDB (transformWithState needs it).
        "spark.sql.streaming.stateStore.providerClass":
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        # ... and commits each micro-batch's changes as a changelog, not a snapshot of the whole store.
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    }
    conf.update(config or {})
    master = master or "local[*]"
    conf = _local_disk(_with_extension(conf), master)
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _with_extension(conf: dict) -> dict:
    """``conf`` plus giql-spark's JVM extension (its jar is built on first use).

    Without a JDK that can build it the session starts without it: the
    interval joins then run by the Python strategies, and EXPLAIN says why.
    """
    from .jvm import JvmBuildError, spark_config

    try:
        return spark_config(conf)
    except JvmBuildError:
        return conf


def _local_disk(conf: dict, master: str) -> dict:
    """``conf`` plus what makes checkpoints on a local disk cheap (settings in ``conf`` win).

    Without Hadoop's native library (PySpark ships none) every checkpoint file a micro-batch
    writes starts a ``chmod`` process, and each rename of Spark's default checkpoint manager
    (Hadoop's ``FileContext``) two ``readlink`` processes: about 60 processes of ~5 ms per
    micro-batch of a stream-stream join, most of them on the stream's own thread. Spark's
    ``FileSystem``-based manager renames without them, and giql-spark's local file system sets
    permissions in the JVM. That one is for a local master (not ``local-cluster``) with the
    extension's jar only: Spark opens local files before it loads ``spark.jars``, so the jar goes
    on the driver's class path, and the driver is the only JVM.
    """
    from . import spark_version
    from .jvm import EXTENSION_CLASS, LOCAL_FILES_CLASS
    from .jvm.build import is_extension_jar

    out = dict(conf)
    out.setdefault("spark.sql.streaming.checkpointFileManagerClass", spark_version.checkpoint_file_manager())
    # the jar _with_extension put in spark.jars (asking build.jar_path again would hash the sources again)
    jars = [j for j in out.get("spark.jars", "").split(",") if is_extension_jar(j)]
    if (re.fullmatch(r"local(\[[^]]*\])?", master) and jars
            and EXTENSION_CLASS in out.get("spark.sql.extensions", "") and "spark.hadoop.fs.file.impl" not in out):
        out["spark.hadoop.fs.file.impl"] = LOCAL_FILES_CLASS
        path = [p for p in out.get("spark.driver.extraClassPath", "").split(os.pathsep) if p]
        out["spark.driver.extraClassPath"] = os.pathsep.join(path + jars[-1:])
    return out


def _add_extension(spark) -> None:
    """Load giql-spark's JVM operators into a classic session started without
    them; a Spark Connect server needs them at its own start (README)."""
    from .jvm import available, install

    if spark_sql.is_connect(spark) or available(spark)[0]:
        return
    try:
        install(spark)
    except Exception:  # no JDK, an unusual class loader: the Python strategies remain, and
        pass           # install() kept the reason, which every refusal of a JVM strategy names


@dataclass(frozen=True)
class Registered:
    """A table as the session knows it: its giql mapping and its source."""

    table: Table | None  # None: a plain relation, without intervals
    source: str  # a path, or "DataFrame"
    columns: list[str]
    skipped_rows: int = 0
    df: DataFrame | None = None
    types: dict = field(default_factory=dict)  # column -> Spark type name


class Session:
    """GIQL on Spark.

    ``Session()`` starts an embedded local Spark (``local[*]``);
    ``Session(spark)`` wraps an existing SparkSession (a cluster, or Spark
    Connect). Options: ``strategy`` forces an interval-join strategy (one of
    :data:`giql_spark.planner.registry.STRATEGIES`: ``"broadcast"``,
    ``"binned"``, ``"sweep"``, ``"naive"``), and a strategy's size
    parameters: ``bin_size`` the binned strategy's bin width, ``tile_size``
    the sweep's genome tile;
    ``stats_tier`` how much the planner reads about each join side (0:
    Spark's size estimate only; 1: also Parquet footers; 2, the default:
    also a bounded sample of interval widths and chromosomes). A query may
    carry the hint ``/*+ INTERVAL_JOIN(strategy, bin_size=N, tile_size=N) */``
    (any part optional), which wins over the session's options.
    """

    def __init__(self, spark: SparkSession | None = None, *, master: str | None = None,
                 config: dict | None = None, strategy: str | None = None, stats_tier: int = 2, **params):
        from .planner import registry

        unknown = sorted(set(params) - set(registry.size_params()))
        if unknown:
            raise TypeError(f"Session() got unexpected keyword argument(s) {', '.join(unknown)}; strategy "
                            f"parameters: {', '.join(registry.size_params())}")
        self.spark = spark if spark is not None else local_spark(master, config=config)
        _add_extension(self.spark)
        self.options: dict = {"strategy": strategy, **dict.fromkeys(registry.size_params()), **params,
                              "stats_tier": stats_tier}
        self._tables: dict[str, Registered] = {}
        self._stats = StatsCache()  # the planner's statistics, per side, until a table changes
        self._sides: dict = {}  # side SQL -> (the table's DataFrame, the side built on it), see runtime.analyse
        self._streams: dict = {}  # table name -> order contract of a streaming table

    # -- tables ---------------------------------------------------------------
    def register(self, name: str, source, *, format: str | None = None, chrom_col: str | None = None,
                 start_col: str | None = None, end_col: str | None = None, strand_col: str | None = "strand",
                 genomic_col: str = "interval", coordinate_system: str | None = None,
                 interval_type: str | None = None, on_error: str = "raise", order_col: str | None = None,
                 max_disorder: int | None = None, late_rows: str | None = None, **read_options) -> DataFrame:
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
        A strand column that the table lacks is ignored. A table that has
        none of ``chrom``, ``start`` and ``end`` (a time series, sensor
        readings) and is given no mapping registers as a plain relation: it
        takes part in joins on its columns (band joins on numeric ones) but
        has no ``interval``. Returns the table's DataFrame.

        A streaming DataFrame (``spark.readStream...``) registers as a stream;
        queries over it return streaming DataFrames. Its order contract, which
        a stream-stream join relies on (see :mod:`giql_spark.streaming`):
        ``order_col`` is non-decreasing within each key (default: the start
        column), up to ``max_disorder`` (default 0); ``late_rows`` (``"fail"``,
        the default, or ``"drop"``) says what a row that breaks it does.
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
        mapped = {"chrom_col": chrom_col, "start_col": start_col, "end_col": end_col}
        defaults = {"chrom_col": "chrom", "start_col": "start", "end_col": "end"}
        table = None
        if any(v is not None for v in mapped.values()) or any(d in columns for d in defaults.values()):
            mapped = {role: col if col is not None else defaults[role] for role, col in mapped.items()}
            for role, col in mapped.items():
                if col.lower() not in columns:
                    raise UnknownColumnError(
                        f"table {name!r} has no column {col!r} for {role} (columns: {', '.join(df.columns)})"
                    )
            if strand_col is not None and strand_col.lower() not in columns:
                strand_col = None
            table = Table(name, genomic_col=genomic_col, strand_col=strand_col, coordinate_system=coordinate_system,
                          interval_type=interval_type, **mapped)
            conventions.remember(df, conventions.Convention(mapped["chrom_col"], mapped["start_col"],
                                                            mapped["end_col"], coordinate_system, interval_type))
        self._streams.pop(name, None)
        if df.isStreaming:
            from .streaming.contract import contract

            interval = (mapped["start_col"], mapped["end_col"]) if table is not None else None
            self._streams[name] = contract(list(df.columns), name=name, interval=interval, order_col=order_col,
                                           max_disorder=max_disorder, late_rows=late_rows)
        elif any(v is not None for v in (order_col, max_disorder, late_rows)):
            raise GiqlSparkError(f"table {name!r}: order_col, max_disorder and late_rows apply to streaming "
                                 "DataFrames only")
        df.createOrReplaceTempView(name)
        self._stats.clear()  # statistics of sides that read the old table are stale
        self._sides.clear()
        self._tables[name] = Registered(table, origin, list(df.columns), skipped, df,
                                        {f.name: f.dataType.simpleString() for f in df.schema.fields})
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
        Spark directory; ``mode`` is Spark's save mode. Parquet is written by
        giql-spark's own writer (the data source ``giql-parquet``) where it
        can write the columns, else by Spark's; ``spark.giql.parquet.writer``
        = ``spark`` always uses Spark's.
        """
        from .io import conventions, write_path
        from .io.writers import write_format

        if isinstance(data, str):
            df = self.table(data)  # raises for an unknown table
            t = self._tables[data].table
            seen = (conventions.Convention(t.chrom_col, t.start_col, t.end_col, t.coordinate_system, t.interval_type)
                    if t is not None else conventions.Convention("chrom", "start", "end", "0based", "half_open"))
        elif isinstance(data, DataFrame):
            df = data
            seen = conventions.convention_of(df) or conventions.Convention(
                "chrom", "start", "end", "0based", "half_open"
            )
        else:
            raise GiqlSparkError(f"write: data must be a DataFrame or a table name, got {type(data).__name__}")
        write_path(
            df, os.fspath(path), format, partition_by_chrom=partition_by_chrom, single_file=single_file,
            # asked only for Parquet: the check may plan a probe join on a session without the jar
            parquet_writer=self._parquet_writer() if write_format(os.fspath(path), format) == "parquet" else "spark",
            mode=mode, chrom_col=seen.chrom_col, start_col=seen.start_col, end_col=seen.end_col,
            coordinate_system=coordinate_system or seen.coordinate_system,
            interval_type=interval_type or seen.interval_type,
        )

    def _parquet_writer(self) -> str:
        """'giql' when this session has giql-spark's Parquet writer and is not told to use Spark's."""
        from . import jvm

        if (self.spark.conf.get(PARQUET_WRITER_CONF, "giql") or "giql").lower() != "giql":
            return "spark"
        return "giql" if jvm.available(self.spark)[0] else "spark"

    def table(self, name: str) -> DataFrame:
        """The DataFrame registered as ``name``."""
        if name not in self._tables:
            raise UnknownTableError(f"unknown table {name!r} (registered tables: {', '.join(self._tables) or 'none'})")
        return self._tables[name].df

    @property
    def tables(self) -> dict[str, Registered]:
        return dict(self._tables)

    # -- queries --------------------------------------------------------------

    def _plan(self, query: str) -> Plan:
        """Parse and rewrite ``query`` over the registered tables: no Spark."""
        return plan(query, {n: r.table for n, r in self._tables.items()},
                    {n: r.columns for n, r in self._tables.items()}, {n: r.types for n, r in self._tables.items()})

    def _execute(self, query: str, *, always_stats: bool = False,
                 dry_run: bool = False) -> tuple[DataFrame, Plan, list[Built]]:
        p = self._plan(query)
        frames = {table_placeholder(n): r.df for n, r in self._tables.items()}
        options = {**self.options, **p.options, "streams": dict(self._streams)}
        df, built = runtime.run(self.spark, p, frames, options, read=self._stats,
                                always_stats=always_stats, dry_run=dry_run, sides=self._sides)
        return df, p, built

    def sql(self, query: str) -> DataFrame:
        """Run a GIQL query; return a lazy Spark DataFrame."""
        return self._execute(query)[0]

    def to_sql(self, query: str) -> str:
        """The Spark SQL that runs for ``query``; planning it runs nothing in Spark.

        Registered tables appear as ``__gs_t_<name>`` and each operator's
        result as ``__giql_spark_v<n>``: placeholders that are bound to
        DataFrames when the query runs, not session views.
        """
        return self._plan(query).sql

    def explain(self, query: str, analyze: bool = False) -> str:
        """The plan in words, then Spark's plan.

        For each interval join: the statistics read for each side (and their
        tier), every strategy's estimated cost with its terms or why it was
        refused, and the chosen strategy with its parameters. Without
        ``analyze`` nothing runs but the statistics: a broadcast side is not
        collected. With ``analyze=True`` the query also runs: each join's
        actual output rows and time, and the whole query's rows and time, are
        shown next to the estimates.
        """
        df, p, built = self._execute(query, always_stats=True, dry_run=not analyze)
        if analyze and df.isStreaming:
            raise GiqlSparkError("explain(analyze=True) runs the query, and a streaming query runs with "
                                 "writeStream; its progress (query.lastProgress) has the operator's metrics")
        out = [f"GIQL: {' '.join(query.split())}", ""]
        if not built:
            out.append("Interval operators: none (runs as Spark SQL)")
        for what, why in p.unplanned.items():
            out.append(f"[-] {what}: runs as Spark plans it; no band: {why}")
        for i, b in enumerate(built, 1):
            out.extend(_describe(i, b))
            # left unbuilt: candidates only a nearest-rows node's join back reads, and the join runs
            idle = b.df is None
            if idle:
                out.append("    not run: only the join back of the nearest rows reads it, and the join runs instead")
            if analyze and not idle:
                t0 = time.perf_counter()
                rows = b.df.count()
                out.append(f"    actual: {rows:,} rows in {time.perf_counter() - t0:.2f} s (this operator alone)")
        if analyze:
            t0 = time.perf_counter()
            rows = df.count()
            out += ["", f"Query actual: {rows:,} rows in {time.perf_counter() - t0:.2f} s"]
        out += ["", "Spark SQL:", f"  {p.sql}", ""]
        if df.isStreaming:  # Spark plans a stream per micro-batch, once it runs
            from .streaming.build import logical_plan

            out += ["Spark logical plan (query.explain() on the running query shows the physical plan):",
                    logical_plan(df)]
            return "\n".join(out)
        out.append("Spark physical plan:")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            df.explain()
        out.append(buf.getvalue().rstrip())
        return "\n".join(out)

    def stop(self) -> None:
        self.spark.stop()


def _describe(i: int, b: Built) -> list[str]:
    node, c = b.node, b.choice
    params = ", ".join(f"{k}={v}" for k, v in c.params.items())
    lines = []
    if isinstance(node, IntervalJoin) and node.spec.predicate == "band":
        s = node.spec
        lines.append(f"[{i}] band join: {s.how.upper()} ({', '.join(node.left.aliases)}) x "
                     f"({', '.join(node.right.aliases)})")
        lines.append(f"    condition: {s.describe()}")
        lines.extend(f"    {line}" for line in s.band.describe().splitlines())
    elif isinstance(node, IntervalJoin):
        s = node.spec
        lines.append(
            f"[{i}] interval join: {s.how.upper()} {s.predicate.upper()} "
            f"({', '.join(node.left.aliases)}) x ({', '.join(node.right.aliases)})"
        )
        lines.append(f"    condition: {s.describe()}")
    elif isinstance(node, NearestRows):
        s = node.spec
        lines.append(f"[{i}] nearest rows: k={s.k}{' stranded' if s.stranded else ''} "
                     f"({', '.join(node.left.aliases)}) with their nearest {s.target[0]} as {node.alias}")
    else:
        s = node.spec
        lines.append(f"[{i}] nearest: k={s.k}{' stranded' if s.stranded else ''} "
                     f"targets {s.target[0]} for references {s.reference[0]}")
    lines.append(f"    strategy: {c.strategy}" + (f" ({params})" if params else "") + f" — {c.reason}")
    lines.extend(f"    {note}" for note in c.notes)
    for name, st in zip(("left", "right"), c.stats):
        if st is not None:
            details = st.details()
            lines.append(f"    {name} statistics: {details[0]}")
            lines.extend(f"      {d}" for d in details[1:])
    if c.estimates:
        lines.append(f"    estimates ({c.constants}), cheapest first:")
        for e in c.estimates:
            mark = "*" if e.strategy == c.strategy and not e.refused else "-"
            lines.append(f"      {mark} {e.describe()}")
        pairs = c.estimates[0].pairs
        if pairs is not None:
            lines.append(f"    estimated output pairs: ~{pairs:,.0f}")
    if c.timing is not None and isinstance(node, IntervalJoin):
        lines.append(f"    optimizer time: statistics {c.timing.statistics:.3f} s, choice {c.timing.choice:.3f} s")
    return lines
