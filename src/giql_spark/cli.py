"""The ``giql-spark`` command line: run GIQL queries on interval files with Spark.

Subcommands:

* ``giql-spark demo`` runs one example query per GIQL operator family on the
  bundled example files (``peaks.bed`` and ``genes.bed``) and prints the
  results.
* ``giql-spark query "GIQL" --table NAME=PATH[,key=value...]`` runs a query and
  prints the result or writes it (``--output``: .parquet, .tsv or .csv).
* ``giql-spark explain "GIQL" --table ...`` prints the plan: each interval
  operator, the statistics read, every strategy's estimated cost, the
  strategy chosen, and Spark's physical plan; ``--analyze`` also runs the
  query and shows actual rows and times.
* ``giql-spark calibrate`` times the join strategies on generated data and
  stores cost-model factors for this machine.

A ``--table`` spec is ``NAME=PATH`` optionally followed by ``,key=value``
pairs passed to :meth:`Session.register` (chrom_col, start_col, end_col,
strand_col, coordinate_system, interval_type, format, on_error);
``strand_col=none`` maps no strand column. Paths may not contain commas.

User errors (bad queries, bad input files, bad options) print one line,
``giql-spark: error: <message>``, to stderr and exit with status 2; an
error Spark raises while running the query prints Spark's message the same
way and exits with status 1.

``main()`` never stops the SparkSession: when it runs in-process (tests, a
notebook) the caller's active session is reused and stays usable afterwards.
A console run ends with the Python process, which shuts Spark down.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from .examples import example_path

PROG = "giql-spark"

#: Session.register keyword arguments a ``--table`` spec may set.
TABLE_OPTIONS = (
    "chrom_col", "start_col", "end_col", "strand_col",
    "coordinate_system", "interval_type", "format", "on_error",
)

#: (title, GIQL) pairs run by ``giql-spark demo`` on tables ``peaks`` and ``genes``.
DEMO_QUERIES = [
    (
        "INTERSECTS with a literal region",
        "SELECT chrom, start, end, name, score FROM peaks "
        "WHERE interval INTERSECTS 'chr1:100000-400000' ORDER BY start",
    ),
    (
        "INTERSECTS join with a residual predicate (same strand, high-scoring genes)",
        "SELECT p.name AS peak, g.name AS gene, p.strand, g.score AS gene_score "
        "FROM peaks p JOIN genes g ON p.interval INTERSECTS g.interval AND p.strand = g.strand "
        "WHERE g.score > 500 ORDER BY p.chrom, p.start, g.name",
    ),
    (
        "LEFT JOIN: every peak with its overlapping gene, or NULL between genes",
        "SELECT p.name AS peak, p.chrom, p.start, p.end, g.name AS gene "
        "FROM peaks p LEFT JOIN genes g ON p.interval INTERSECTS g.interval "
        "ORDER BY p.chrom, p.start, p.name, gene",
    ),
    (
        "CONTAINS / WITHIN: peaks lying entirely inside a gene, counted per gene",
        "SELECT g.name AS gene, COUNT(*) AS peaks_within "
        "FROM peaks p JOIN genes g ON p.interval WITHIN g.interval "
        "GROUP BY g.name ORDER BY peaks_within DESC, gene",
    ),
    (
        "DISTANCE: peak-gene pairs less than 5 kb apart (0 = overlapping, 1 = book-ended)",
        "SELECT p.name AS peak, g.name AS gene, DISTANCE(p.interval, g.interval) AS dist "
        "FROM peaks p CROSS JOIN genes g WHERE DISTANCE(p.interval, g.interval) <= 5000 "
        "ORDER BY dist DESC, peak, gene",
    ),
    (
        "NEAREST: the two closest genes to every peak",
        "SELECT p.name AS peak, n.name AS gene, n.distance "
        "FROM peaks p CROSS JOIN LATERAL NEAREST(genes, reference := p.interval, k := 2) AS n "
        "ORDER BY p.chrom, p.start, p.name, n.distance, gene",
    ),
    (
        "CLUSTER: label peaks within 1 kb of each other with a shared cluster id",
        "SELECT chrom, start, end, name, CLUSTER(interval, 1000) AS cluster_id "
        "FROM peaks ORDER BY chrom, start, name",
    ),
    (
        "MERGE with aggregates: collapse overlapping peaks, count and score them",
        "SELECT MERGE(interval), COUNT(*) AS n_peaks, MAX(score) AS max_score FROM peaks "
        "ORDER BY n_peaks DESC, chrom, start",
    ),
    (
        "DISJOIN: split genes at peak boundaries into non-overlapping pieces",
        "SELECT name, disjoin_chrom, disjoin_start, disjoin_end FROM DISJOIN(genes, reference := peaks) "
        "ORDER BY disjoin_chrom, disjoin_start, name",
    ),
]


class UsageError(ValueError):
    """A bad command-line value (reported like any other user error)."""


# ---------------------------------------------------------------------------
# argument parsing


def _parse_table(spec: str) -> tuple[str, str, dict]:
    """``NAME=PATH[,key=value...]`` -> ``(name, path, register_kwargs)``."""
    name, sep, rest = spec.partition("=")
    if not sep or not name.strip() or not rest:
        raise UsageError(f"bad --table {spec!r}: expected NAME=PATH[,key=value...]")
    path, *pairs = rest.split(",")
    options: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep:
            raise UsageError(f"bad --table option {pair!r} in {spec!r}: expected key=value")
        if key not in TABLE_OPTIONS:
            raise UsageError(f"unknown --table option {key!r}; accepted: {', '.join(TABLE_OPTIONS)}")
        value = value.strip()
        # strand_col=none: the table has no strand column.
        options[key] = None if key == "strand_col" and value.lower() in ("", "none") else value
    return name.strip(), path, options


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="GIQL genomic interval queries on Apache Spark.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def spark_options(p: argparse.ArgumentParser) -> None:
        from .planner import registry

        p.add_argument("--master", help="Spark master URL (default: local[*])")
        p.add_argument("--strategy", choices=sorted(registry.STRATEGIES),
                       help="force an interval-join strategy (default: chosen by the cost model)")
        for param in registry.size_params():
            users = ", ".join(n for n, s in registry.STRATEGIES.items() if any(x.name == param for x in s.params))
            p.add_argument("--" + param.replace("_", "-"), type=_positive_int,
                           help=f"{param.replace('_', ' ')} of the {users} strategies")

    def query_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("giql", metavar="GIQL", help="the GIQL query")
        p.add_argument(
            "--table", "-t", action="append", default=[], metavar="NAME=PATH[,key=value...]",
            help=f"register a table (repeatable); keys: {', '.join(TABLE_OPTIONS)}",
        )
        p.add_argument("--quiet", "-q", action="store_true",
                       help="no progress bar (it is shown on stderr only when stderr is a terminal)")
        spark_options(p)

    demo = sub.add_parser("demo", help="run example queries on bundled example data")
    demo.add_argument("--master", help="Spark master URL (default: local[*])")

    query = sub.add_parser("query", help="run a GIQL query")
    query_options(query)
    query.add_argument("--output", "-o", metavar="PATH",
                       help="write the result to .parquet (a directory), .tsv or .csv (one file)")
    query.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    query.add_argument("--limit", type=_positive_int, default=20, help="rows to print (default 20)")

    explain = sub.add_parser("explain", help="show how a GIQL query is planned")
    query_options(explain)
    explain.add_argument("--analyze", action="store_true",
                         help="also run the query and show actual rows and times next to the estimates")

    cal = sub.add_parser("calibrate", help="time the join strategies here and store cost-model factors")
    cal.add_argument("--master", help="Spark master URL (default: local[*])")
    cal.add_argument("--rows", type=_positive_int, default=1_000_000, help="rows per side (default 1000000)")
    cal.add_argument("--repeats", type=_positive_int, default=3, help="runs per measurement (default 3)")
    return parser


# ---------------------------------------------------------------------------
# output


def format_table(columns: list[str], rows: list) -> str:
    """Rows as an aligned text table: a header, a rule, then one line per row."""

    def cell(v) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, float):
            return f"{v:.6g}"
        return str(v)

    body = [[cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in body]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body]
    return "\n".join(lines)


def _print_result(df, limit: int, *, collect_all: bool = False) -> None:
    """Print the first ``limit`` rows, then the total row count when rows were cut off.

    ``collect_all`` (the demo, whose results are small) fetches every row in
    one Spark job and always prints the count; otherwise only ``limit + 1``
    rows are fetched and the query runs again to count when there are more.
    """
    rows = df.collect() if collect_all else df.limit(limit + 1).collect()
    total = len(rows) if collect_all or len(rows) <= limit else df.count()
    _print_rows(df.columns, rows, limit, total, always_count=collect_all)


def _print_rows(columns: list[str], rows: list, limit: int, total: int, *, always_count: bool = False) -> None:
    print(format_table(columns, rows[:limit]))
    if always_count or total > limit:
        shown = min(limit, total)
        print(f"({total} row{'s' if total != 1 else ''}" + (f", first {shown} shown)" if shown < total else ")"))


def _output_kind(path: str, overwrite: bool) -> str:
    """'parquet', 'tsv' or 'csv' from the --output extension; checked before any Spark work."""
    lower = path.lower()
    if lower.endswith(".parquet"):
        kind = "parquet"
    elif lower.endswith((".tsv", ".csv")):
        kind = lower[-3:]
    else:
        raise UsageError(f"--output {path}: unknown extension; accepted: .parquet, .tsv, .csv")
    from .io.files import is_url

    if is_url(path):  # a cluster URI or an fsspec URL: Session.write checks it when it writes
        return kind
    if os.path.lexists(path) and not overwrite:
        raise UsageError(f"--output {path} already exists (pass --overwrite to replace it)")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"--output {path}: directory {parent} does not exist")
    return kind


def _write_output(session, df, path: str, kind: str, overwrite: bool = True) -> None:
    """Write ``df`` to ``path``: Parquet (a directory, by ``Session.write``: giql-spark's Parquet
    writer where it can), or one .tsv/.csv file with a header row.

    An existing ``path`` is replaced (``_output_kind`` has already refused it
    unless --overwrite was given). Repeated column names get a suffix
    (:func:`giql_spark.io.writers.distinct_columns`).
    """
    from .io.files import is_url
    from .io.writers import distinct_columns

    df = distinct_columns(df)
    if is_url(path):  # hdfs://, s3a://, viewfs://, or an fsspec URL: through Session.write
        session.write(df, path, format=kind, single_file=kind != "parquet", mode="overwrite" if overwrite else "error")
        return
    if kind == "parquet":
        if os.path.lexists(path):
            _remove(path)
        session.write(df, path, format="parquet")
        return
    parent = os.path.dirname(os.path.abspath(path))
    # Spark writes a directory of part files; write one part next to the
    # target, then move it into place.
    tmp = tempfile.mkdtemp(prefix=".giql-spark-", dir=parent)
    try:
        out = os.path.join(tmp, "out")
        (df.coalesce(1).write.option("header", True).option("sep", "\t" if kind == "tsv" else ",")
         .option("emptyValue", "").csv(out))
        parts = sorted(f for f in os.listdir(out) if f.startswith("part-"))
        if parts:
            src = os.path.join(out, parts[0])
        else:  # no rows and no part file: write the header alone
            src = os.path.join(tmp, "header")
            with open(src, "w") as fh:
                fh.write(("\t" if kind == "tsv" else ",").join(df.columns) + "\n")
        if os.path.lexists(path):
            _remove(path)
        shutil.move(src, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


# ---------------------------------------------------------------------------
# commands


def _session(args):
    """A Session for the command's options.

    Without --master, an already active SparkSession (``main()`` called
    in-process) is reused as it is, its configuration untouched; otherwise
    ``Session`` starts (or attaches to) Spark with ``master`` (default local[*]).
    """
    from pyspark.sql import SparkSession

    from .session import Session

    from .planner import registry

    options = {"strategy": getattr(args, "strategy", None),
               **{p: getattr(args, p, None) for p in registry.size_params()}}
    active = SparkSession.getActiveSession() if args.master is None else None
    if active is not None:
        return Session(active, **options)
    return Session(master=args.master, **options)


def _register_tables(session, specs: list[tuple[str, str, dict]]) -> None:
    for name, path, options in specs:
        session.register(name, path, **options)


def _cmd_demo(args) -> int:
    session = _session(args)
    peaks, genes = example_path("peaks.bed"), example_path("genes.bed")
    session.register("peaks", peaks)
    session.register("genes", genes)
    print(f"Tables: peaks ({peaks}), genes ({genes})")
    for i, (title, query) in enumerate(DEMO_QUERIES, 1):
        print()
        print(f"== [{i}/{len(DEMO_QUERIES)}] {title}")
        print(f"   {query}")
        print()
        _print_result(session.sql(query), 10, collect_all=True)
    return 0


def _progress(session, args):
    from .progress import progress

    return progress(session.spark, sys.stderr, enabled=not args.quiet)


def _cmd_query(args, tables) -> int:
    kind = _output_kind(args.output, args.overwrite) if args.output else None
    session = _session(args)
    with _progress(session, args):
        _register_tables(session, tables)
        df = session.sql(args.giql)
        if kind:
            _write_output(session, df, args.output, kind, args.overwrite)
        else:
            rows = df.limit(args.limit + 1).collect()
            total = df.count() if len(rows) > args.limit else len(rows)
    if kind:
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        _print_rows(df.columns, rows, args.limit, total)
    return 0


def _cmd_explain(args, tables) -> int:
    session = _session(args)
    with _progress(session, args):
        _register_tables(session, tables)
        text = session.explain(args.giql, analyze=args.analyze)
    print(text)
    return 0


def _cmd_calibrate(args) -> int:
    from .planner.calibrate import calibrate

    calibrate(_session(args), rows=args.rows, repeats=args.repeats)
    return 0


def _is_user_error(exc: ValueError) -> bool:
    """True for errors about the user's query, data or options.

    GiqlSparkError and InputError (both ValueErrors), our UsageError, and the
    plain ValueErrors that giql-spark or giql raise for bad option values
    (``on_error=``, ``coordinate_system=``...). A ValueError from anywhere
    else is a bug and keeps its traceback.
    """
    from .errors import GiqlSparkError
    from .io.readers import InputError

    if isinstance(exc, (GiqlSparkError, InputError, UsageError)):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return module.split(".")[0] in ("giql_spark", "giql")


def _quiet_pyspark_error_log() -> None:
    """PySpark logs each failed query as a JSON record with the JVM's stack
    trace before raising it; the command line prints the error as one line."""
    import logging

    from .spark_version import query_loggers

    for log in query_loggers():
        log.setLevel(logging.CRITICAL)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 user error).

    Never stops the SparkSession, so an in-process caller keeps its session.
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or argparse's own usage errors (status 2)
        return int(exc.code or 0)
    _quiet_pyspark_error_log()
    try:
        if args.command == "demo":
            return _cmd_demo(args)
        if args.command == "calibrate":
            return _cmd_calibrate(args)
        tables = [_parse_table(spec) for spec in args.table]
        if args.command == "query":
            return _cmd_query(args, tables)
        return _cmd_explain(args, tables)
    except ValueError as exc:
        if not _is_user_error(exc):
            raise
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2
    except Exception as exc:
        from .errors import is_spark_error, spark_message

        if not is_spark_error(exc):
            raise
        # A failure while Spark ran the query (a bad CAST, a lost executor):
        # Spark's own message, without its stack trace.
        print(f"{PROG}: error: {spark_message(exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
