"""The giql-spark command line, run in-process on the shared test SparkSession."""

from __future__ import annotations

from importlib import resources

import pytest

from giql_spark.cli import DEMO_QUERIES, main

DATA = resources.files("giql_spark").joinpath("data")
PEAKS = str(DATA / "peaks.bed")
GENES = str(DATA / "genes.bed")
TABLES = ["--table", f"peaks={PEAKS}", "--table", f"genes={GENES}"]
JOIN = "SELECT p.name AS peak, g.name AS gene FROM peaks p JOIN genes g ON p.interval INTERSECTS g.interval"


def _bed_lines(path: str) -> list[str]:
    with open(path) as fh:
        return [line for line in fh if line.strip()]


@pytest.fixture(scope="module")
def join_count(spark) -> int:
    """Rows of JOIN, computed through the Python API."""
    import giql_spark as gs

    session = gs.Session(spark)
    session.register("peaks", PEAKS)
    session.register("genes", GENES)
    return session.sql(JOIN).count()


def test_example_data_is_sorted_bed6():
    for path in (PEAKS, GENES):
        rows = [line.rstrip("\n").split("\t") for line in _bed_lines(path)]
        assert all(len(r) == 6 and int(r[1]) <= int(r[2]) and r[5] in "+-" for r in rows)
        assert rows == sorted(rows, key=lambda r: (r[0], int(r[1])))
    assert any(int(r.split("\t")[1]) == int(r.split("\t")[2]) for r in _bed_lines(PEAKS))


def test_demo(spark, capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for _, query in DEMO_QUERIES:
        assert query in out
    assert out.count(" rows") + out.count(" row)") >= len(DEMO_QUERIES)
    assert "NEAREST(genes, reference := p.interval, k := 2) AS n" in out
    # the session survives the command
    assert spark.range(3).count() == 3


def test_query_to_stdout_with_limit(spark, capsys):
    assert main(["query", JOIN + " ORDER BY peak, gene", *TABLES, "--limit", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["peak", "gene"]
    assert set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + 5 + 1
    assert lines[-1].startswith("(") and "rows, first 5 shown)" in lines[-1]


def test_query_output_tsv(tmp_path, capsys, join_count):
    out = tmp_path / "pairs.tsv"
    args = ["query", JOIN, *TABLES, "--output", str(out)]
    assert main(args) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "peak\tgene"
    n = len(lines) - 1
    assert n == join_count
    assert all(len(line.split("\t")) == 2 for line in lines[1:])
    # Refuses to overwrite, unless asked to.
    assert main(args) == 2
    assert "already exists" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    assert len(out.read_text().splitlines()) == n + 1


def test_query_output_parquet(spark, tmp_path, join_count):
    out = tmp_path / "pairs.parquet"
    assert main(["query", JOIN, *TABLES, "--output", str(out), "--strategy", "naive"]) == 0
    back = spark.read.parquet(str(out))
    assert back.columns == ["peak", "gene"]
    rows = back.collect()
    assert len(rows) == join_count
    assert len(rows) > 0 and all(r.gene.startswith("GENE") for r in rows)
    # written as Session.write writes Parquet: by giql-spark's writer
    import pyarrow.parquet as pq

    assert all(pq.ParquetFile(f).metadata.created_by.startswith("giql-spark") for f in out.glob("*.parquet"))
    assert main(["query", JOIN, *TABLES, "--output", str(out), "--strategy", "naive", "--overwrite"]) == 0
    assert spark.read.parquet(str(out)).count() == join_count


def test_explain(capsys):
    assert main(["explain", JOIN, *TABLES, "--strategy", "binned", "--bin-size", "5000"]) == 0
    out = capsys.readouterr().out
    assert "interval join" in out and "binned" in out


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["query", "SELECT * FROM nosuch", "--table", f"peaks={PEAKS}"], ["nosuch"]),
        (["query", "SELECT * FROM peaks WHERE interval INTERSECTS", "--table", f"peaks={PEAKS}"], ["line"]),
        (["query", "SELECT * FROM peaks", "--table", "peaks=/no/such/file.bed"], ["/no/such/file.bed"]),
        (["query", "SELECT * FROM peaks", "--table", "peaks"], ["--table", "NAME=PATH"]),
        (["query", "SELECT * FROM peaks", "--table", f"peaks={PEAKS},colour=red"], ["colour"]),
    ],
    ids=["unknown-table", "syntax", "missing-file", "bad-table-spec", "bad-table-option"],
)
def test_user_errors(spark, capsys, argv, needles):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("giql-spark: error: ") and "\n" not in err
    assert "Traceback" not in captured.err
    for needle in needles:
        assert needle in err


def test_malformed_bed(spark, tmp_path, capsys):
    bad = tmp_path / "bad.bed"
    bad.write_text("chr1\t10\t20\ta\nchr1\t50\t40\tb\n")
    assert main(["query", "SELECT * FROM t", "--table", f"t={bad}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("giql-spark: error: ")
    assert str(bad) in err and "line 2" in err


def test_select_star_written_gets_distinct_names(spark, tmp_path, capsys):
    """``SELECT *`` over a join repeats chrom, start, ...; files need distinct
    names, so repeats get DuckDB's suffixes instead of failing to write."""
    import pyarrow.parquet as pq

    out = str(tmp_path / "pairs.parquet")
    assert main(["query", "SELECT * FROM peaks p JOIN genes g ON p.interval INTERSECTS g.interval",
                 *TABLES, "--output", out]) == 0
    names = pq.read_table(out).column_names
    assert names[:6] == ["chrom", "start", "end", "name", "score", "strand"]
    assert names[6:] == ["chrom_1", "start_1", "end_1", "name_1", "score_1", "strand_1"]
    tsv = str(tmp_path / "pairs.tsv")
    assert main(["query", "SELECT * FROM peaks p JOIN genes g ON p.interval INTERSECTS g.interval",
                 *TABLES, "--output", tsv]) == 0
    with open(tsv) as fh:
        assert fh.readline().rstrip("\n").split("\t")[6] == "chrom_1"


def test_a_spark_error_is_one_line(spark, capsys):
    assert main(["query", "SELECT CAST(name AS INT) FROM peaks", *TABLES]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("giql-spark: error: ") and "CAST_INVALID_INPUT" in err
    assert "\n" not in err and "at org.apache" not in err


def test_truncated_input_is_one_line(spark, tmp_path, capsys):
    import gzip

    data = gzip.compress("".join(f"chr1\t{i}\t{i + 5}\n" for i in range(50_000)).encode())
    path = tmp_path / "cut.bed.gz"
    path.write_bytes(data[: len(data) // 2])
    assert main(["query", "SELECT COUNT(*) FROM t", "--table", f"t={path}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"giql-spark: error: {path}: cannot be read") and "\n" not in err


class _Terminal:
    """A stderr that says it is a terminal and keeps what is written."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return True


@pytest.mark.parametrize("quiet", [False, True])
def test_progress_bar_on_a_terminal(spark, monkeypatch, capsys, quiet):
    import sys

    term = _Terminal()
    monkeypatch.setenv("GIQL_SPARK_PROGRESS_DELAY", "0")
    monkeypatch.setattr(sys, "stderr", term)
    # Slow enough for the bar's poll (every 0.2 s) to see a running stage: every
    # joined row sleeps 5 ms (Thread.sleep returns void, so reflect gives NULL). No
    # "OR TRUE": Spark folds it away, and the JVM join is then too quick to be seen.
    query = ("SELECT COUNT(*) FROM peaks p JOIN genes g ON p.interval INTERSECTS g.interval "
             "WHERE reflect('java.lang.Thread', 'sleep', CAST(5 AS BIGINT)) IS NULL")
    assert main(["query", query, *TABLES, *(["--quiet"] if quiet else [])]) == 0
    if quiet:
        assert "tasks" not in term.text
    else:
        assert "tasks (" in term.text and "\r" in term.text
        assert term.text.endswith("\r")  # erased: the result starts on a clean line


def test_no_progress_bar_when_not_a_terminal(spark, monkeypatch, capsys):
    monkeypatch.setenv("GIQL_SPARK_PROGRESS_DELAY", "0")
    assert main(["query", JOIN, *TABLES]) == 0
    assert "tasks" not in capsys.readouterr().err
