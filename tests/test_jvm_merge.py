"""Differential tests of the merge interval join (sorted Parquet scans, no shuffle).

Every query runs with ``giql_band(...)`` (planned as MergeIntervalJoin when the files allow it)
and with the same condition in Spark's own expressions; results are compared as multisets. The
files are written with pyarrow so that row groups, their boundaries and the order of the rows
are under the test's control.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import task_error, task_errors

import giql_spark.jvm as gj
from giql_spark.jvm.marker import band_sql

from test_jvm_join import plain_condition  # noqa: E402  (same helper)

JOIN_SQL = {"inner": "JOIN", "left": "LEFT JOIN", "semi": "LEFT SEMI JOIN",
            "anti": "LEFT ANTI JOIN"}
SCHEMA = pa.schema([("id", pa.int32()), ("chrom", pa.string()), ("s", pa.int64()),
                    ("e", pa.int64()), ("name", pa.string()), ("score", pa.float64())])
NATURAL = ["c1", "c2", "c3", "c9", "c10", "c11", "x"]


@pytest.fixture(scope="module")
def jspark(spark):
    """No sampling of the order when planning: the operator itself must cope with unsorted rows
    (test_sample_of_the_order_keeps_unsorted_files_out turns it back on)."""
    gj.install(spark)
    spark.conf.set("spark.giql.merge.sampleRows", "0")
    yield spark
    spark.conf.unset("spark.giql.merge.sampleRows")


def gen(seed, n, *, chroms=NATURAL[:5], span=80, null_rate=0.05, reversed_rate=0.1):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        s = rnd.randrange(span)
        kind = rnd.random()
        if kind < 0.1:
            e = s
        elif kind < 0.1 + reversed_rate:
            e = s - rnd.randrange(1, 8)  # reversed: its hull starts before s
        elif kind < 0.25:
            e = s + rnd.randrange(20, 60)  # wide
        else:
            e = s + rnd.randrange(1, 12)
        c = rnd.choice(chroms)
        if rnd.random() < null_rate:
            c = None
        if rnd.random() < null_rate:
            s = None
        if rnd.random() < null_rate:
            e = None
        out.append({"id": i, "chrom": c, "s": s, "e": e, "name": f"n{rnd.randrange(4)}",
                    "score": round(rnd.random() * 4, 2)})
    return out


def sort_rows(rows, order, nulls="first", rnd=None):
    """By (chromosome in ``order``, s) like a BED file; NULL chromosomes first, last or
    scattered. A reversed interval (e < s) is then out of order for its hull."""
    rank = {c: i for i, c in enumerate(order)}
    keyed = sorted((r for r in rows if r["chrom"] is not None),
                   key=lambda r: (rank[r["chrom"]], -1 if r["s"] is None else r["s"]))
    nul = [r for r in rows if r["chrom"] is None]
    if nulls == "first":
        return nul + keyed
    if nulls == "last":
        return keyed + nul
    out = list(keyed)
    for r in nul:
        out.insert((rnd or random).randrange(len(out) + 1), r)
    return out


def write(path, rows, *, row_group=5, files=1, empty_groups=False, **writer):
    """``rows`` in order into ``files`` Parquet files (part-0..), ``row_group`` rows each;
    ``writer``: options of pyarrow's ParquetWriter (encodings, page sizes)."""
    path.mkdir(parents=True, exist_ok=True)
    per = max(1, -(-len(rows) // files)) if rows else 1
    for f in range(files):
        chunk = rows[f * per:(f + 1) * per]
        table = pa.Table.from_pylist(chunk, schema=SCHEMA)
        with pq.ParquetWriter(path / f"part-{f:03d}.parquet", SCHEMA, **writer) as w:
            if not chunk:
                continue
            for i in range(0, len(chunk), row_group):
                if empty_groups and i:
                    w.write_table(table.slice(0, 0))
                w.write_table(table.slice(i, row_group))
    return str(path)


def write_runs(path, rows, row_group, **writer):
    """``rows`` in order into one file, a row group per run of one key (at most ``row_group``)."""
    path.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(path / "part-000.parquet", SCHEMA, **writer) as w:
        i = 0
        while i < len(rows):
            j = i + 1
            while j < len(rows) and j - i < row_group and rows[j]["chrom"] == rows[i]["chrom"]:
                j += 1
            w.write_table(pa.Table.from_pylist(rows[i:j], schema=SCHEMA))
            i = j
    return str(path)


def register(spark, name, path):
    spark.read.parquet(path).createOrReplaceTempView(name)


def load(jspark, tmp_path, left, right, *, row_groups=(1000, 1000), files=(1, 1)):
    """Both sides written (rows in order, ``row_groups`` rows per group) and registered as l, r."""
    for name, rows, group, n in zip("lr", (left, right), row_groups, files):
        register(jspark, name, write(tmp_path / name, rows, row_group=group, files=n))


def run_both(spark, how, *, residual=None, frm=("l", "r"), select="*", opts="",
             keys=(("a.chrom", "b.chrom"),), lo_hi=("a.s", "a.e", "b.s", "b.e"), expect=True):
    marker = band_sql([k[0] for k in keys], lo_hi[0], lo_hi[1], [k[1] for k in keys], lo_hi[2],
                      lo_hi[3])
    if opts:
        marker = marker.replace("giql_band(''", f"giql_band('{opts}'")
    plain = plain_condition(list(keys), *lo_hi)
    res = f" AND ({residual})" if residual else ""
    q = "SELECT {sel} FROM {l} a {j} {r} b ON {cond}"
    fast = spark.sql(q.format(sel=select, l=frm[0], j=JOIN_SQL[how], r=frm[1], cond=marker + res))
    slow = spark.sql(q.format(sel=select, l=frm[0], j=JOIN_SQL[how], r=frm[1], cond=plain + res))
    got = Counter(fast.collect())
    plan = fast._jdf.queryExecution().executedPlan().toString()
    decision = str(spark.sparkContext._jvm.io.giql.spark.PlanMetrics.recentMergeDecisions())
    if expect is not None:
        assert ("MergeIntervalJoin" in plan) == expect, (decision, plan)
    exp = Counter(slow.collect())
    assert got == exp, (how, residual, sorted(got.items())[:10], sorted(exp.items())[:10])
    return fast, sum(got.values())


def failovers(spark, df) -> int:
    text = str(spark.sparkContext._jvm.io.giql.spark.PlanMetrics.describe(
        df._jdf.queryExecution().executedPlan()))
    for part in text.split("|"):
        if part.strip().startswith("numFailovers="):
            return int(part.strip().split("=")[1])
    return 0


RESIDUALS = [None, "a.s < b.e AND b.s < a.e", "a.score + b.score > 3", "a.name <> b.name",
             "a.s + 1 < b.e AND b.s <= a.e - 1 AND a.id >= b.id"]


@pytest.mark.parametrize("seed", [0, 1, 2, 5])  # empty left; lexicographic, shuffled, same order
def test_sorted_files_every_join_type_and_count(jspark, tmp_path, seed):
    rnd = random.Random(seed)
    order_l = list(NATURAL[:5])
    order_r = list(order_l)
    if seed % 3 == 1:
        order_r = sorted(order_r)  # lexicographic on the right: c1, c10, c2, ...
    if seed % 3 == 2:
        rnd.shuffle(order_r)
    rev = 0.1 if seed % 2 else 0.0  # reversed intervals make the first pass fail over
    left = gen(seed, rnd.randrange(0, 70) if seed else 0, reversed_rate=rev)  # 0: empty left
    right = gen(seed + 100, rnd.randrange(1, 70), reversed_rate=rev)
    write(tmp_path / "l", sort_rows(left, order_l, rnd.choice(["first", "last", "mixed"]), rnd),
          row_group=rnd.choice([1, 3, 7, 50]), files=rnd.choice([1, 2, 3]),
          empty_groups=seed % 2 == 0)
    write(tmp_path / "r", sort_rows(right, order_r, rnd.choice(["first", "last", "mixed"]), rnd),
          row_group=rnd.choice([2, 5, 50]), files=rnd.choice([1, 2]))
    register(jspark, "l", str(tmp_path / "l"))
    register(jspark, "r", str(tmp_path / "r"))
    residual = RESIDUALS[seed % len(RESIDUALS)]
    for how in JOIN_SQL:
        run_both(jspark, how, residual=residual)
    # counts inside the operator equal the pair counts
    for how in ("inner", "left", "semi", "anti"):
        fast, _ = run_both(jspark, how, residual=residual, select="count(*)")
        assert "SumIntervalJoinCounts" in fast._jdf.queryExecution().executedPlan().toString()


def test_null_chromosomes_only_in_some_row_groups(jspark, tmp_path):
    left = gen(11, 60, null_rate=0.2)
    right = gen(12, 60, null_rate=0.2)
    load(jspark, tmp_path, sort_rows(left, NATURAL[:5], "mixed", random.Random(1)),
         sort_rows(right, NATURAL[:5], "last"), row_groups=(4, 6))
    for how in JOIN_SQL:
        run_both(jspark, how)
        run_both(jspark, how, select="count(*)")


def test_is_not_null_on_other_columns_in_some_row_groups(jspark, tmp_path):
    """A side's own IS NOT NULL filter on a column the join does not use: a row group (a batch)
    with no NULL there passes whole, one with NULLs drops just those rows."""
    rnd = random.Random(31)
    left = sort_rows(gen(31, 80, null_rate=0.0), NATURAL[:5])
    right = sort_rows(gen(32, 80, null_rate=0.0), NATURAL[:5])
    groups = {"name": (left, 4), "score": (right, 5)}
    for column, (rows, size) in groups.items():
        # NULLs in every other row group only, half its rows
        for i, row in enumerate(rows):
            if (i // size) % 2 and rnd.random() < 0.5:
                row[column] = None
        with_nulls = {i // size for i, row in enumerate(rows) if row[column] is None}
        assert 0 < len(with_nulls) < -(-len(rows) // size)
    load(jspark, tmp_path, left, right, row_groups=(4, 5))
    frm = ("(SELECT * FROM l WHERE name IS NOT NULL)", "(SELECT * FROM r WHERE score IS NOT NULL)")
    for how in JOIN_SQL:
        run_both(jspark, how, frm=frm)
        run_both(jspark, how, frm=frm, select="count(*)")


def test_empty_files_and_row_groups(jspark, tmp_path):
    left = sort_rows(gen(21, 30), NATURAL[:5])
    write(tmp_path / "l", left, row_group=4, empty_groups=True)
    pq.write_table(pa.Table.from_pylist([], schema=SCHEMA), tmp_path / "l" / "part-zzz.parquet")
    write(tmp_path / "r", sort_rows(gen(22, 30), NATURAL[:5]), row_group=3)
    write(tmp_path / "e", [])
    for name, p in (("l", "l"), ("r", "r"), ("e", "e")):
        register(jspark, name, str(tmp_path / p))
    for how in JOIN_SQL:
        run_both(jspark, how)
        run_both(jspark, how, frm=("e", "r"))
        run_both(jspark, how, frm=("l", "e"))
    run_both(jspark, "inner", frm=("e", "e"), select="count(*)")


def test_row_groups_spanning_chromosomes_and_many_tasks(jspark, tmp_path):
    chroms = [f"k{i}" for i in range(30)]
    left = sort_rows(gen(31, 400, chroms=chroms, span=300), chroms)
    right = sort_rows(gen(32, 300, chroms=chroms, span=300), chroms)
    load(jspark, tmp_path, left, right, row_groups=(17, 23), files=(3, 2))
    for tasks in ("1", "7"):
        jspark.conf.set("spark.giql.merge.tasks", tasks)
        try:
            for how in JOIN_SQL:
                run_both(jspark, how, residual="a.s < b.e AND b.s < a.e")
            run_both(jspark, "inner", select="count(*)")
        finally:
            jspark.conf.unset("spark.giql.merge.tasks")


ENCODINGS = {  # name -> (pyarrow writer options, a row group per run of one key)
    "plain": ({"use_dictionary": False}, True),
    # the dictionary outgrows its page a few rows into each column chunk: the rest is plain
    "dictionary then plain": ({"dictionary_pagesize_limit": 24, "data_page_size": 64,
                               "write_batch_size": 4}, True),
    # each row group's dictionary numbers its one key 0: ids must not carry over row groups
    "dictionary, a key per row group": ({}, True),
    "dictionary, row groups shared by keys": ({}, False),
    "row reader": ({}, False),
}


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_counts_read_keys_and_bounds_of_every_encoding(jspark, tmp_path, encoding):
    """A count reads keys and bounds straight off Spark's column vectors: keys stored plain, in a
    dictionary that falls back to plain within a row group, in dictionaries per row group, and
    rows from Spark's row-by-row reader (the vectorized one turned off) give the oracle's counts,
    NULLs and row groups read by several units included."""
    chroms = [f"k{i}" for i in range(12)]
    writer, runs = ENCODINGS[encoding]
    # no reversed intervals: the files are in order, so a unit swept again (a failover, which
    # reads through Spark's projections) would mean the vectors were misread
    left = sort_rows(gen(61, 500, chroms=chroms, span=200, null_rate=0.08, reversed_rate=0),
                     chroms, "mixed", random.Random(3))
    right = sort_rows(gen(62, 400, chroms=chroms, span=200, null_rate=0.08, reversed_rate=0),
                      chroms, "last")
    if runs:
        # without a full dictionary the footer tells a row group's key only by min == max
        register(jspark, "l", write_runs(tmp_path / "l", left, 37, **writer))
        register(jspark, "r", write_runs(tmp_path / "r", right, 29, **writer))
    else:
        register(jspark, "l", write(tmp_path / "l", left, row_group=37, files=2))
        register(jspark, "r", write(tmp_path / "r", right, row_group=29))
    if encoding == "row reader":
        jspark.conf.set("spark.sql.parquet.enableVectorizedReader", "false")
    jspark.conf.set("spark.giql.merge.tasks", "3")
    try:
        for how in JOIN_SQL:
            for residual in (None, "a.s < b.e AND b.s < a.e"):
                fast, n = run_both(jspark, how, residual=residual, select="count(*)")
                assert "SumIntervalJoinCounts" in fast._jdf.queryExecution().executedPlan().toString()
                assert failovers(jspark, fast) == 0
        assert n > 0
    finally:
        jspark.conf.unset("spark.sql.parquet.enableVectorizedReader")
        jspark.conf.unset("spark.giql.merge.tasks")


def test_filters_and_projections_on_the_scans(jspark, tmp_path):
    write(tmp_path / "l", sort_rows(gen(41, 80), NATURAL[:5]), row_group=6)
    write(tmp_path / "r", sort_rows(gen(42, 80), NATURAL[:5]), row_group=5)
    register(jspark, "l0", str(tmp_path / "l"))
    register(jspark, "r0", str(tmp_path / "r"))
    jspark.sql("SELECT chrom, s, e + 0 AS e, name, score, id FROM l0 WHERE score > 1 "
               "AND chrom <> 'c2'").createOrReplaceTempView("l")
    jspark.sql("SELECT chrom AS chrom, s, e, upper(name) AS name, score * 2 AS score, id "
               "FROM r0 WHERE name <> 'n1'").createOrReplaceTempView("r")
    for how in JOIN_SQL:
        run_both(jspark, how, residual="a.score < b.score")
        run_both(jspark, how, select="count(*)")
    # a key that is not a plain column: another operator, the same rows
    jspark.sql("SELECT upper(chrom) AS chrom, s, e, name, score, id FROM l0") \
        .createOrReplaceTempView("lu")
    jspark.sql("SELECT upper(chrom) AS chrom, s, e, name, score, id FROM r0") \
        .createOrReplaceTempView("ru")
    run_both(jspark, "inner", frm=("lu", "ru"), expect=False)
    decision = str(jspark.sparkContext._jvm.io.giql.spark.PlanMetrics.recentMergeDecisions())
    assert "no equality key is a plain" in decision


@pytest.mark.parametrize("seed", [0, 1])
def test_scan_filters_with_nulls_and_a_raising_guard(jspark, tmp_path, seed):
    """Comparisons of integer columns (int and bigint, cast or not) under AND, OR and NOT, and a
    guard raising an error (CASE WHEN c THEN raise_error ELSE true, as the DataFrame API checks
    intervals), over rows with NULLs: the operator's scan filter gives Spark's own rows. A guard
    whose rows an earlier filter drops raises nothing; one whose condition a row meets raises
    its one line."""
    write(tmp_path / "l", sort_rows(gen(61 + seed, 120), NATURAL[:5]), row_group=7)
    write(tmp_path / "r", sort_rows(gen(62 + seed, 120), NATURAL[:5]), row_group=9)
    register(jspark, "l0", str(tmp_path / "l"))
    register(jspark, "r0", str(tmp_path / "r"))
    guard = "CASE WHEN s > 70 THEN raise_error(concat('bad row ', id)) ELSE true END"
    jspark.sql("SELECT * FROM l0 WHERE (s > 5 OR e < 3) AND NOT (s = 40) AND id >= 2 "
               f"AND CAST(id AS BIGINT) <= 110 AND s <= 70 AND {guard}").createOrReplaceTempView("l")
    jspark.sql("SELECT * FROM r0 WHERE e >= s AND NOT (id < 3 OR id > 100) AND "
               "CASE WHEN e < 0 THEN raise_error('negative') ELSE true END").createOrReplaceTempView("r")
    for how in JOIN_SQL:
        fast, n = run_both(jspark, how)
    assert n > 0
    _, n = run_both(jspark, "inner", select="count(*)")
    assert n == 1
    jspark.sql(f"SELECT * FROM l0 WHERE id >= 0 AND {guard}").createOrReplaceTempView("l")
    bad = [r for r in gen(61 + seed, 120) if r["s"] is not None and r["s"] > 70 and r["id"] >= 0]
    assert bad  # the data has rows the guard raises on
    marker = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
    df = jspark.sql(f"SELECT count(*) FROM l a JOIN r b ON {marker}")
    assert "MergeIntervalJoin" in df._jdf.queryExecution().executedPlan().toString()
    with pytest.raises(Exception) as e:
        df.collect()
    assert task_error(e.value).startswith("bad row "), task_error(e.value)[:300]


def test_a_filter_of_guards_alone_is_tested_a_batch_at_a_time(jspark, tmp_path):
    """A scan filter made only of guards (CASE WHEN c THEN raise_error ELSE true, c comparing
    integer columns and constants under AND / OR: the DataFrame API's interval check) is tested a
    batch at a time. Where no row meets c the rows are Spark's own, batches with NULLs in the
    columns c reads included; a row that meets c raises its one line."""
    write(tmp_path / "l", sort_rows(gen(71, 3000, null_rate=0.0, reversed_rate=0.1), NATURAL[:5]), row_group=1000)
    write(tmp_path / "r", sort_rows(gen(72, 3000, reversed_rate=0.0), NATURAL[:5]), row_group=700)
    register(jspark, "l0", str(tmp_path / "l"))
    register(jspark, "r0", str(tmp_path / "r"))
    check = "s < 0 OR (s > e AND id > {}) OR e >= 1152921504606846976"
    guard = "CASE WHEN {} THEN raise_error(concat('bad row ', id)) ELSE true END"
    jspark.sql("SELECT * FROM r0 WHERE " + guard.format(check.format(10**6))).createOrReplaceTempView("r")
    jspark.sql("SELECT * FROM l0 WHERE " + guard.format(check.format(10**6))).createOrReplaceTempView("l")
    pairs = {how: run_both(jspark, how)[1] for how in JOIN_SQL}
    assert pairs["inner"] > 0 and pairs["semi"] > 0
    reversed_ids = [r["id"] for r in gen(71, 3000, null_rate=0.0, reversed_rate=0.1)
                    if None not in (r["s"], r["e"]) and r["s"] > r["e"]]
    assert reversed_ids  # the left file has rows the guard below raises on
    jspark.sql("SELECT * FROM l0 WHERE " + guard.format(check.format(max(reversed_ids) - 1))) \
        .createOrReplaceTempView("l")
    marker = band_sql(["a.chrom"], "a.s", "a.e", ["b.chrom"], "b.s", "b.e")
    df = jspark.sql(f"SELECT count(*) FROM l a JOIN r b ON {marker}")
    assert "MergeIntervalJoin" in df._jdf.queryExecution().executedPlan().toString()
    with pytest.raises(Exception) as e:
        df.collect()
    assert re.match(rf"bad row {max(reversed_ids)}\b", task_error(e.value)), task_error(e.value)[:300]


def test_two_keys_the_second_checked_in_the_residual(jspark, tmp_path):
    rows = gen(51, 80)
    for r in rows:
        r["name"] = random.Random(r["id"]).choice(["+", "-"])
    load(jspark, tmp_path, sort_rows(rows, NATURAL[:5]), sort_rows(gen(52, 60), NATURAL[:5]),
         row_groups=(7, 4))
    for how in JOIN_SQL:
        run_both(jspark, how, keys=(("a.name", "b.name"), ("a.chrom", "b.chrom")))


def test_unsorted_positions_fail_over_to_sorted_copies(jspark, tmp_path):
    """One row group per file: the footer cannot see the order; the rows tell."""
    rnd = random.Random(61)
    left = sort_rows(gen(61, 80, null_rate=0), NATURAL[:5])
    right = sort_rows(gen(62, 80, null_rate=0), NATURAL[:5])
    shuffled = list(right)
    rnd.shuffle(shuffled)
    # keys stay grouped (the footer's dictionary order), positions inside each key shuffled
    rank = {c: i for i, c in enumerate(NATURAL[:5])}
    shuffled.sort(key=lambda r: rank[r["chrom"]])
    load(jspark, tmp_path, left, shuffled)
    fast, _ = run_both(jspark, "inner", residual="a.s < b.e AND b.s < a.e")
    assert failovers(jspark, fast) >= 1
    fast, _ = run_both(jspark, "inner", select="count(*)")
    assert failovers(jspark, fast) >= 1
    # unsorted left side: every join type still exact (the right side is in order)
    register(jspark, "l", str(tmp_path / "r"))
    register(jspark, "r", str(tmp_path / "l"))
    for how in JOIN_SQL:
        fast, _ = run_both(jspark, how)
        assert failovers(jspark, fast) >= 1


def assert_one_clear_line(e):
    """The user sees the operator's message itself (see conftest.task_error)."""
    text = task_error(e)
    assert text.startswith("giql merge interval join:"), text[:300]


def unsorted_within_keys(seed):
    """A sorted left side and a right side whose positions are shuffled within each key (the
    keys stay in order, so only the rows can show the disorder); 60 rows each, 3 keys."""
    rnd = random.Random(seed)
    left = sort_rows(gen(seed, 60, null_rate=0, chroms=NATURAL[:3]), NATURAL[:3])
    right = gen(seed + 1, 60, null_rate=0, chroms=NATURAL[:3])
    rank = {c: i for i, c in enumerate(NATURAL[:3])}
    rnd.shuffle(right)
    right.sort(key=lambda r: rank[r["chrom"]])
    return left, right


def test_unsorted_right_side_is_exact_or_a_clear_error(jspark, tmp_path):
    load(jspark, tmp_path, *unsorted_within_keys(71))
    for how in JOIN_SQL:
        try:
            run_both(jspark, how)
        except task_errors() as e:
            assert "is not sorted by (key, start)" in str(e) and how in ("left", "anti")
            assert_one_clear_line(e)


def test_a_wrong_left_join_over_unsorted_files_fails_with_one_line(jspark, tmp_path):
    """Some of these right sides show their disorder only after a left row was reported
    unmatched: the query must fail, and the user must see the operator's message alone."""
    failed = 0
    for seed in range(60, 70):
        load(jspark, tmp_path / str(seed), *unsorted_within_keys(seed))
        try:
            run_both(jspark, "left")
        except task_errors() as e:
            assert_one_clear_line(e)
            failed += 1
    assert failed > 0


def test_shuffled_files_are_not_merged(jspark, tmp_path):
    rows = gen(81, 200, null_rate=0)
    random.Random(3).shuffle(rows)
    load(jspark, tmp_path, rows, sort_rows(gen(82, 100), NATURAL[:5]), row_groups=(20, 20))
    run_both(jspark, "inner", expect=False)
    decision = str(jspark.sparkContext._jvm.io.giql.spark.PlanMetrics.recentMergeDecisions())
    assert "not in one run" in decision or "not sorted" in decision, decision
    # the merge can be turned off, and is not used for right and full outer joins
    register(jspark, "l", str(tmp_path / "r"))
    jspark.conf.set("spark.giql.merge.enabled", "false")
    try:
        run_both(jspark, "inner", expect=False)
    finally:
        jspark.conf.unset("spark.giql.merge.enabled")
    run_both(jspark, "inner", opts="algo=broadcast", expect=False)


def test_spark_written_sorted_table_and_int_keys(jspark, tmp_path):
    data = gen(91, 300, null_rate=0.02)
    df = jspark.createDataFrame([tuple(r.values()) for r in data],
                                "id int, chrom string, s bigint, e bigint, name string, "
                                "score double")
    df.repartitionByRange(3, "chrom", "s").sortWithinPartitions("chrom", "s") \
        .write.option("parquet.block.size", 2048).parquet(str(tmp_path / "l"))
    df.where("id % 2 = 0").orderBy("chrom", "s").coalesce(1).write.parquet(str(tmp_path / "r"))
    register(jspark, "l", str(tmp_path / "l"))
    register(jspark, "r", str(tmp_path / "r"))
    for how in JOIN_SQL:
        run_both(jspark, how, residual="a.s < b.e")
    # an integer key
    ints = jspark.sql("SELECT cast(substr(chrom, 2) AS int) AS k, s, e, id FROM l")
    ints.orderBy("k", "s").coalesce(1).write.parquet(str(tmp_path / "li"))
    ints.where("id % 3 = 0").orderBy("k", "s").coalesce(1).write.parquet(str(tmp_path / "ri"))
    register(jspark, "li", str(tmp_path / "li"))
    register(jspark, "ri", str(tmp_path / "ri"))
    for how in JOIN_SQL:
        run_both(jspark, how, frm=("li", "ri"), keys=(("a.k", "b.k"),))


def test_inputs_that_are_not_parquet_scans_keep_the_other_operators(jspark, tmp_path):
    write(tmp_path / "r", sort_rows(gen(101, 40), NATURAL[:5]), row_group=5)
    register(jspark, "r", str(tmp_path / "r"))
    jspark.createDataFrame(gen(102, 40), "id int, chrom string, s bigint, e bigint, name string, "
                           "score double").createOrReplaceTempView("l")
    run_both(jspark, "inner", expect=False)
    assert "not a scan" in str(jspark.sparkContext._jvm.io.giql.spark.PlanMetrics
                               .recentMergeDecisions())
    run_both(jspark, "inner", select="count(*)", expect=False)


def test_sample_of_the_order_keeps_unsorted_files_out(jspark, tmp_path):
    """One row group holding every key: only the rows can tell that it is not sorted."""
    rows = gen(111, 300, null_rate=0, reversed_rate=0)
    rank = {c: i for i, c in enumerate(NATURAL[:5])}
    random.Random(5).shuffle(rows)
    rows.sort(key=lambda r: rank[r["chrom"]])  # grouped by key, positions shuffled
    load(jspark, tmp_path, rows, sort_rows(gen(112, 100, reversed_rate=0), NATURAL[:5]))
    jspark.conf.set("spark.giql.merge.sampleRows", "4096")
    try:
        run_both(jspark, "left", expect=False)
        assert "the first rows are not sorted" in str(
            jspark.sparkContext._jvm.io.giql.spark.PlanMetrics.recentMergeDecisions())
        register(jspark, "l", str(tmp_path / "r"))
        run_both(jspark, "left", expect=True)
    finally:
        jspark.conf.set("spark.giql.merge.sampleRows", "0")


#: giql's DISTANCE(a, b) <= 5 between (chrom, s, e) rows, and the hulls the band rule derives
#: for it: a row with a NULL end (left) or start (right) gets an end of +/-2**60 (unbounded).
DISTANCE_5 = ("CASE WHEN a.chrom <> b.chrom THEN NULL WHEN a.s < b.e AND a.e > b.s THEN 0 "
              "WHEN a.e <= b.s THEN b.s - a.e + 1 ELSE a.s - b.e + 1 END <= 5")
DISTANCE_HULLS = ("least(a.e, a.s - 4)",
                  "greatest(a.e + 4, a.s, CASE WHEN a.e IS NULL THEN 1152921504606846976 END)",
                  "least(b.e, b.s, CASE WHEN b.s IS NULL THEN -1152921504606846976 END)",
                  "greatest(b.e, b.s)")


@pytest.mark.parametrize("nulls", ["first", "last", "mixed"])
def test_unbounded_hull_ends_are_exact(jspark, tmp_path, nulls):
    """The planner sends an unbounded band to the merge only where the footers count no NULL;
    were they wrong (rows with NULL positions, so hull ends of +/-2**60, anywhere in a key's
    run), the operator must still be exact, or fail with its clear order error (an outer or
    anti row already reported)."""
    rnd = random.Random(91)
    rank = {c: i for i, c in enumerate(NATURAL[:3])}

    def order(rows):
        # by (chrom, s), rows with a NULL start first, last or anywhere in their key's run
        place = {"first": lambda: -1, "last": lambda: 10**9, "mixed": lambda: rnd.randrange(100)}[nulls]
        keyed = [r for r in rows if r["chrom"] is not None]
        keyed.sort(key=lambda r: (rank[r["chrom"]], place() if r["s"] is None else r["s"]))
        return [r for r in rows if r["chrom"] is None] + keyed

    left = order(gen(91, 90, null_rate=0.1, reversed_rate=0.05, chroms=NATURAL[:3]))
    right = order(gen(92, 90, null_rate=0.1, reversed_rate=0.05, chroms=NATURAL[:3]))
    load(jspark, tmp_path, left, right, row_groups=(9, 7))
    for how in JOIN_SQL:
        try:
            _, n = run_both(jspark, how, residual=DISTANCE_5, lo_hi=DISTANCE_HULLS)
        except task_errors() as e:
            assert "is not sorted by (key, start)" in str(e) and how in ("left", "anti"), e
            assert_one_clear_line(e)
            continue
        assert n > 0 or how == "anti", how


def skewed(seed, n, span):
    """Most rows on c1 (one busy chromosome), some wider than the whole span, zero-length,
    reversed and NULL ones among them."""
    rows = gen(seed, n, chroms=["c1"] * 8 + ["c2", "c3"], span=span, reversed_rate=0.05)
    rnd = random.Random(seed + 7)
    for r in rows:
        if r["s"] is not None and rnd.random() < 0.02:
            r["e"] = r["s"] + span * 2  # reaches past every range of its chromosome
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_busy_chromosome_cut_into_ranges(jspark, tmp_path, seed):
    """With more tasks than chromosomes, a busy chromosome is cut into ranges of positions; each
    left row is in one range, so every join type and count gives the oracle's rows, none twice:
    wide intervals crossing every cut, reversed ones (a failover), NULLs, row groups shared by
    chromosomes, hulls shifted by constants."""
    rnd = random.Random(seed)
    span = 3000
    left = sort_rows(skewed(seed, 700, span), NATURAL[:3], rnd.choice(["first", "last", "mixed"]), rnd)
    right = sort_rows(skewed(seed + 50, 600, span), NATURAL[:3], "last")
    load(jspark, tmp_path, left, right, row_groups=(rnd.choice([16, 40]), rnd.choice([16, 50])),
         files=(rnd.choice([1, 2]), 1))
    jspark.conf.set("spark.giql.merge.tasks", str(rnd.choice([6, 32])))
    try:
        for lo_hi in (("a.s", "a.e", "b.s", "b.e"), ("a.s - 40", "a.e + 40", "b.s", "b.e")):
            for how in JOIN_SQL:
                fast, _ = run_both(jspark, how, residual=RESIDUALS[(seed + len(how)) % 5],
                                   lo_hi=lo_hi)
                assert "ranges of a key" in fast._jdf.queryExecution().executedPlan().toString()
                run_both(jspark, how, select="count(*)", lo_hi=lo_hi)
    finally:
        jspark.conf.unset("spark.giql.merge.tasks")


@pytest.mark.parametrize("tasks", [5, 7, 13])
def test_tasks_are_equal_runs_across_chromosome_ends(jspark, tmp_path, tasks):
    """The tasks cut the genome's order into equal runs: a chromosome is cut where a task's run
    ends inside it, whatever its size, so a task holds the end of one chromosome, whole ones
    and the start of the next, and no task carries much more than its share (chromosomes of
    50%, 20%, 12%, 8%, 6% and 4% of the rows; row groups of 25 rows); a task reads its left row
    groups in a few byte ranges; the answers are the oracle's."""
    weights = {"c1": 50, "c2": 20, "c3": 12, "c9": 8, "c10": 6, "c11": 4}
    chroms = [c for c, w in weights.items() for _ in range(w)]
    rows = []
    for seed in (71, 72):
        part = gen(seed, 2400, chroms=chroms, span=20_000, null_rate=0.0, reversed_rate=0.0)
        rows.append(sort_rows(part, list(weights)))
    load(jspark, tmp_path, rows[0], rows[1], row_groups=(25, 25), files=(2, 1))
    jspark.conf.set("spark.giql.merge.tasks", str(tasks))
    try:
        for how in ("inner", "left"):
            run_both(jspark, how, residual="a.s < b.e AND b.s < a.e")
        fast, _ = run_both(jspark, "inner", select="count(*)")
        plan = fast._jdf.queryExecution().executedPlan().toString()
        assert f"{tasks} tasks" in plan and "ranges of a key" in plan, plan
        largest = float(re.search(r"the largest task ([\d.]+)% of the work", plan).group(1))
        assert largest <= 100 / tasks * 1.25, plan
        # a unit reads its left row groups in one byte range per file, not one per group (each
        # is a footer parsed; c1 alone is 96 groups of 25 rows a side): with no NULL bound in
        # the footers, no group's NULL-bound rows need telling apart; one unit may span the
        # two files
        units = int(re.search(r"(\d+) units", plan).group(1))
        reads = int(re.search(r"byte ranges read (\d+) \+", plan).group(1))
        assert reads <= units + 1, plan
    finally:
        jspark.conf.unset("spark.giql.merge.tasks")


@pytest.mark.parametrize("tasks", [24, 32, 40])
def test_tasks_cut_where_row_groups_end(jspark, tmp_path, tasks):
    """A task decodes every row group it reads, kept rows or not, so the cut weighs the row
    groups it decodes as well as the rows it keeps: with a task's share about one row group (960
    rows a side in groups of 25, 24-40 tasks), the largest task's cost with its decoded row
    groups is less than when the cut weighs the kept rows alone
    (``spark.giql.merge.decodedWeight`` 0), and no more than twice the mean. The answers are the
    oracle's either way."""
    rows = []
    for seed in (91, 92):
        part = gen(seed, 960, chroms=["c1", "c2"], span=40_000, null_rate=0.0, reversed_rate=0.0)
        rows.append(sort_rows(part, ["c1", "c2"]))
    load(jspark, tmp_path, rows[0], rows[1], row_groups=(25, 25), files=(1, 1))
    jspark.conf.set("spark.giql.merge.tasks", str(tasks))
    largest = {}
    try:
        for weight in ("0", None):
            if weight is None:
                jspark.conf.unset("spark.giql.merge.decodedWeight")
            else:
                jspark.conf.set("spark.giql.merge.decodedWeight", weight)
            run_both(jspark, "inner", residual="a.s < b.e AND b.s < a.e")
            fast, _ = run_both(jspark, "left", select="count(*)")
            plan = fast._jdf.queryExecution().executedPlan().toString()
            found = re.search(r"(\d+) tasks, .*the largest task ([\d.]+)% of the cost with the "
                              r"row groups it decodes", plan)
            assert found and "ranges of a key" in plan, plan
            largest[weight] = float(found.group(2))
            assert largest[weight] <= 2 * 100 / int(found.group(1)), plan
        assert largest[None] < largest["0"], largest
    finally:
        jspark.conf.unset("spark.giql.merge.tasks")
        jspark.conf.unset("spark.giql.merge.decodedWeight")


def dense_and_sparse(seed: int, n: int) -> list[dict]:
    """``n`` rows on each of c1 (on 2,000 positions) and c2 (on 200,000), widths 1-60: a c1 row
    meets about a hundred times the pairs of a c2 row."""
    rnd = random.Random(seed)
    rows = []
    for chrom, span in (("c1", 2_000), ("c2", 200_000)):
        for _ in range(n):
            s = rnd.randrange(span)
            rows.append({"id": len(rows), "chrom": chrom, "s": s, "e": s + rnd.randrange(1, 61),
                         "name": "n", "score": 1.0})
    return sort_rows(rows, ["c1", "c2"])


def test_tasks_carry_equal_work_counting_pairs(jspark, tmp_path):
    """With pairs weighed (``spark.giql.merge.pairWeight``), the tasks are equal in estimated
    work, not rows: equal rows on a dense and a sparse chromosome put most tasks on the dense
    one, so the largest task holds far more than its share of the rows; weighed at 0, the tasks
    are equal in rows again. The answers are the oracle's either way."""
    left, right = dense_and_sparse(81, 1200), dense_and_sparse(82, 1200)
    load(jspark, tmp_path, left, right, row_groups=(50, 50), files=(1, 1))
    tasks = 8
    jspark.conf.set("spark.giql.merge.tasks", str(tasks))
    # the widths come from the plan's sample of each side (off in this module's session)
    jspark.conf.set("spark.giql.merge.sampleRows", "4096")
    try:
        jspark.conf.set("spark.giql.merge.pairWeight", "1")
        run_both(jspark, "inner", residual="a.s < b.e AND b.s < a.e")
        fast, _ = run_both(jspark, "inner", select="count(*)")
        plan = fast._jdf.queryExecution().executedPlan().toString()
        found = re.search(r"the largest task ([\d.]+)% of the work \(rows, and pairs at 1 of a "
                          r"row\) and ([\d.]+)% of the rows", plan)
        assert found, plan
        work, rows = float(found.group(1)), float(found.group(2))
        assert work <= 100 / tasks * 1.25, plan
        # c2's half of the rows goes to about one task of the eight
        assert rows >= 100 / tasks * 2.5, plan
        jspark.conf.set("spark.giql.merge.pairWeight", "0")
        fast, _ = run_both(jspark, "inner", select="count(*)")
        plan = fast._jdf.queryExecution().executedPlan().toString()
        found = re.search(r"the largest task ([\d.]+)% of the work \(rows\)", plan)
        assert found and float(found.group(1)) <= 100 / tasks * 1.25, plan
    finally:
        jspark.conf.unset("spark.giql.merge.tasks")
        jspark.conf.unset("spark.giql.merge.pairWeight")
        jspark.conf.set("spark.giql.merge.sampleRows", "0")


def test_a_reader_is_made_once_for_queries_that_read_alike(jspark, tmp_path):
    """Making a side's reader broadcasts the Hadoop settings, 10-20 ms of the driver's time a
    side: a later query that reads the same way reuses the reader, tables of the same schema at
    other paths included; a changed SQL setting makes a new one. The rows are Spark's each time."""
    readers = jspark.sparkContext._jvm.io.giql.spark.files.Readers
    load(jspark, tmp_path / "one", sort_rows(gen(81, 90), NATURAL[:5]), sort_rows(gen(82, 90), NATURAL[:5]),
         row_groups=(7, 9))
    run_both(jspark, "inner", select="count(*)")
    made = readers.made()
    first = run_both(jspark, "inner", select="count(*)")[0].collect()[0][0]
    assert readers.made() == made
    load(jspark, tmp_path / "two", sort_rows(gen(83, 90), NATURAL[:5]), sort_rows(gen(84, 90), NATURAL[:5]),
         row_groups=(5, 11))
    second = run_both(jspark, "inner", select="count(*)")[0].collect()[0][0]
    assert readers.made() == made and second != first
    run_both(jspark, "left")
    jspark.conf.set("spark.sql.parquet.enableVectorizedReader", "false")
    try:
        run_both(jspark, "inner", select="count(*)")
        assert readers.made() > made
    finally:
        jspark.conf.unset("spark.sql.parquet.enableVectorizedReader")
