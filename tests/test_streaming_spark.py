"""Streaming joins on Spark: the same rows fed as a stream in random micro-batches give the batch join's rows.

Files land in a directory between triggers (``processAllAvailable``); the
result of each streaming query is compared with the batch ``Session.sql``
of the same query over the same rows. A micro-batch here costs seconds on a
small machine, so the queries of one test run side by side over one feed and
every test uses few triggers.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from streams import END, SCHEMA, Collect, Feed, chunks, markers, sorted_rows

import giql_spark as gs
from giql_spark.streaming import reason

CONDITIONS = {
    "intersects": "x.interval INTERSECTS y.interval",
    "window": "x.chrom = y.chrom AND y.start BETWEEN x.start - 500 AND x.start + 500",
    "distance": "DISTANCE(x.interval, y.interval) <= 200",
}
HOWS = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN", "semi": "LEFT SEMI JOIN",
        "anti": "LEFT ANTI JOIN"}


def query(condition: str, how: str) -> str:
    cols = "x.name" if how in ("semi", "anti") else "x.name, y.name"
    return f"SELECT {cols} FROM a x {HOWS[how]} b y ON {condition}"


def batch(spark, q: str, a_rows, b_rows) -> Counter:
    s = gs.Session(spark)
    s.register("a", spark.createDataFrame(a_rows, SCHEMA))
    s.register("b", spark.createDataFrame(b_rows, SCHEMA))
    return Counter(tuple(r) for r in s.sql(q).collect())


def start(df, collect: Collect, checkpoint: str):
    return (df.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
            .trigger(processingTime="0 seconds").start())


def launch(runs) -> list:
    """Start each (DataFrame, sink, checkpoint) and let it take its first micro-batch before the next starts.

    A stateful query's first micro-batch starts a Python process on the driver that has 10 s (fixed in
    Spark) to connect back; several starting at once on a loaded two-core machine miss that.
    """
    queries = []
    try:
        for df, collect, checkpoint in runs:
            queries.append(start(df, collect, checkpoint))
            queries[-1].processAllAvailable()
    except BaseException:
        for q in queries:
            q.stop()
        raise
    return queries


def drain(queries) -> None:
    for q in queries:
        q.processAllAvailable()


def finish(feed, last, queries) -> None:
    """Feed the last part of both sides, then both sides' end markers, draining the
    queries after each; stop them whatever happens."""
    try:
        feed.put("a", last[0])
        feed.put("b", last[1])
        drain(queries)
        feed.put("a", markers())
        feed.put("b", markers())
        drain(queries)
    finally:
        for q in queries:
            q.stop()


def metric(q, name: str) -> list[int]:
    """``name`` of the join's observed metrics in every progress report the query kept."""
    out = []
    for p in q.recentProgress:
        for values in (p.get("observedMetrics") or {}).values():
            if name in values:
                out.append(values[name])
    return out


@pytest.fixture()
def feed(spark, tmp_path):
    return Feed(spark, tmp_path / "in")


def streams(spark, feed: Feed, strategy: str | None = None, **contract) -> gs.Session:
    s = gs.Session(spark, strategy=strategy)
    s.register("a", feed.stream("a"), **contract.get("a", {}))
    s.register("b", feed.stream("b"), **contract.get("b", {}))
    return s


#: Which join types run with which condition: the five of the issue with INTERSECTS, some with each band condition
#: (the operator's per-type logic is tested against brute force for every pair in test_streaming_operator).
PLAN = {"intersects": ["inner", "left", "right", "full", "semi"], "window": ["inner", "left", "full"],
        "distance": ["right", "semi", "anti", "full"]}


def by_type(full: Counter, how: str) -> Counter:
    """The rows of join type ``how`` read off the FULL join's (x.name, y.name) rows (names are unique)."""
    pairs = Counter({r: n for r, n in full.items() if None not in r})
    if how == "full":
        return full
    if how == "inner":
        return pairs
    if how == "semi":
        return Counter({(a,): 1 for a, _ in pairs})
    if how == "anti":
        return Counter({(a,): n for (a, b), n in full.items() if b is None})
    keep = 0 if how == "left" else 1
    return pairs + Counter({r: n for r, n in full.items() if r[keep] is not None and None in r})


#: The Python operator (Spark Connect's route) on a few of the same joins.
PYTHON_PLAN = {"intersects": ["inner", "full"], "distance": ["semi", "anti"]}


@pytest.mark.parametrize("condition, strategy",
                         [(c, "jvm_stream_state") for c in PLAN] + [(c, "stream_state") for c in PYTHON_PLAN])
def test_stream_stream_equals_batch(spark, feed, tmp_path, condition, strategy):
    """The queries of ``condition`` in :data:`PLAN` run side by side over one feed cut at random places
    (a handful at a time: more concurrent queries than that start Python workers faster than a loaded
    two-core machine connects them); each gives the batch rows."""
    rng = random.Random(len(condition))
    gap = {"intersects": 500, "window": 1500, "distance": 700}[condition]  # leaves rows of each side unmatched
    a_rows = sorted_rows(rng, "a", n=25, gap=gap, width=200)
    b_rows = sorted_rows(rng, "b", n=25, gap=gap, width=200)
    s = streams(spark, feed, strategy)
    plan = (PLAN if strategy == "jvm_stream_state" else PYTHON_PLAN)[condition]
    runs = {how: Collect() for how in plan}
    parts = list(zip(chunks(rng, a_rows, 2), chunks(rng, b_rows, 2)))
    feed.put("a", parts[0][0])
    feed.put("b", parts[0][1])
    queries = launch((s.sql(query(CONDITIONS[condition], how)), collect, str(tmp_path / f"ck_{how}"))
                     for how, collect in runs.items())
    finish(feed, parts[1], queries)
    full = batch(spark, query(CONDITIONS[condition], "full"), a_rows, b_rows)
    # The data leaves rows of both sides unmatched, so the outer joins differ from the inner one.
    assert any(r[0] is None for r in full) and any(r[1] is None for r in full)
    for how in plan:
        want, got = by_type(full, how), Counter(runs[how].rows)
        assert got == want, f"{condition} {how}: missing {want - got}, extra {got - want}"
        assert sum(want.values()) > 0


def with_wide(rng: random.Random, rows: list, prefix: str, widths=(5_000, 2**40)) -> list:
    """``rows`` plus, on each chromosome, one row of each of ``widths`` at a random place, in start order."""
    out = list(rows)
    for c in sorted({r[0] for r in rows}):
        starts = [r[1] for r in rows if r[0] == c]
        for i, w in enumerate(widths):
            at = rng.choice(starts)
            out.append((c, at, at + w, f"{prefix}{c}_wide{i}"))
    return sorted(out, key=lambda r: (r[0], r[1]))


@pytest.mark.parametrize("width", [250, 4_000])
def test_position_ranges_give_each_pair_once(spark, feed, tmp_path, width):
    """Keys cut into ranges narrower than the rows (most rows cross a cut; a 5 kb row and one reaching
    2^40 cross more than MAX_RANGES and are kept in every bucket): the INTERSECTS and window pairs are
    the batch's, none doubled, while the operator's metrics show rows copied into several ranges."""
    rng = random.Random(width)
    a_rows = with_wide(rng, sorted_rows(rng, "a", n=30, gap=300, width=400), "a")
    b_rows = with_wide(rng, sorted_rows(rng, "b", n=30, gap=300, width=400), "b")
    spark.conf.set("spark.giql.streaming.rangeWidth", str(width))
    try:
        s = streams(spark, feed)
        texts = {c: query(CONDITIONS[c], "inner") for c in ("intersects", "window")}
        assert f"position ranges of {width:,}" in s.explain(texts["intersects"])
        runs = {c: Collect() for c in texts}
        parts = list(zip(chunks(rng, a_rows, 3), chunks(rng, b_rows, 3)))
        feed.put("a", parts[0][0])
        feed.put("b", parts[0][1])
        queries = launch((s.sql(t), runs[c], str(tmp_path / f"ck_{c}")) for c, t in texts.items())
        feed.put("a", parts[1][0])
        feed.put("b", parts[1][1])
        drain(queries)
        finish(feed, parts[2], queries)
    finally:
        spark.conf.unset("spark.giql.streaming.rangeWidth")
    for c, t in texts.items():
        want, got = batch(spark, t, a_rows, b_rows), Counter(runs[c].rows)
        assert got == want, f"{c}: missing {want - got}, extra {got - want}"
        assert sum(want.values()) > 0
        assert any("wide" in r[0] and "wide" not in r[1] for r in want)
    added = sum(metric(queries[0], "left_rows_added")) + sum(metric(queries[0], "right_rows_added"))
    assert added > len(a_rows) + len(b_rows)  # copies in several ranges (and wide rows in every bucket)


def test_restart_from_checkpoint_loses_and_repeats_nothing(spark, feed, tmp_path):
    rng = random.Random(7)
    a_rows = sorted_rows(rng, "a", n=25, gap=500, width=200)
    b_rows = sorted_rows(rng, "b", n=25, gap=500, width=200)
    q = query(CONDITIONS["intersects"], "full")
    collect, ck = Collect(), str(tmp_path / "ck")
    parts = list(zip(chunks(rng, a_rows, 3), chunks(rng, b_rows, 3)))
    run = start(streams(spark, feed).sql(q), collect, ck)
    try:
        for pa_, pb in parts[:2]:
            feed.put("a", pa_)
            feed.put("b", pb)
            run.processAllAvailable()
    finally:
        run.stop()
    held = metric(run, "left_rows_in_state")[-1] + metric(run, "right_rows_in_state")[-1]
    assert held > 0  # the restart has state to restore
    feed.put("a", parts[2][0] + markers())  # arrives while the query is down
    feed.put("b", parts[2][1] + markers())
    run = start(streams(spark, feed).sql(q), collect, ck)  # the same sink: a replayed batch replaces itself
    try:
        run.processAllAvailable()
    finally:
        run.stop()
    want = batch(spark, q, a_rows, b_rows)
    got = Counter(collect.rows)
    assert got == want, f"missing {want - got}, extra {got - want}"


def test_a_restart_with_other_position_ranges_fails_in_one_line(spark, feed, tmp_path):
    """The state's units are position ranges of the width it was written with: a restart with another width
    would look for held rows in the wrong units, so the operator refuses it and names the setting."""
    rng = random.Random(11)
    a_rows = sorted_rows(rng, "a", n=20, gap=400, width=300)
    b_rows = sorted_rows(rng, "b", n=20, gap=400, width=300)
    q = query(CONDITIONS["intersects"], "inner")
    ck = str(tmp_path / "ck")
    parts = list(zip(chunks(rng, a_rows, 2), chunks(rng, b_rows, 2)))
    spark.conf.set("spark.giql.streaming.rangeWidth", "1000")
    try:
        run = start(streams(spark, feed).sql(q), Collect(), ck)
        try:
            feed.put("a", parts[0][0])
            feed.put("b", parts[0][1])
            run.processAllAvailable()
        finally:
            run.stop()
        assert metric(run, "left_rows_in_state")[-1] + metric(run, "right_rows_in_state")[-1] > 0
        spark.conf.set("spark.giql.streaming.rangeWidth", "2000")
        run = start(streams(spark, feed).sql(q), Collect(), ck)
        try:
            feed.put("a", parts[1][0])
            feed.put("b", parts[1][1])
            with pytest.raises(Exception) as failed:
                run.processAllAvailable()
        finally:
            run.stop()
    finally:
        spark.conf.unset("spark.giql.streaming.rangeWidth")
    assert reason(failed.value) == ("giql-spark: this query's state was written with position ranges of 1000 "
                                    "and it now runs with 2000; restart it with "
                                    "spark.giql.streaming.rangeWidth=1000")


def test_a_killed_query_restarts_from_its_checkpoint_exactly_once(spark, feed, tmp_path):
    """The query runs in a process of its own, writing to a Parquet file sink; the process and its JVM are
    killed (SIGKILL) while files are still arriving, and a new process resumes from the checkpoint: the sink
    holds the batch join's rows, none lost, none doubled."""
    import os
    import signal
    import subprocess
    import sys

    rng = random.Random(13)
    a_rows = sorted_rows(rng, "a", n=40, gap=500, width=300)
    b_rows = sorted_rows(rng, "b", n=40, gap=500, width=300)
    parts = list(zip(chunks(rng, a_rows, 4), chunks(rng, b_rows, 4)))
    out, ck = str(tmp_path / "out"), str(tmp_path / "ck")
    child = [sys.executable, os.path.join(os.path.dirname(__file__), "stream_child.py"), feed.root, out, ck]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")])}
    feed.put("a", parts[0][0])
    feed.put("b", parts[0][1])
    log = open(tmp_path / "child.log", "w")
    proc = subprocess.Popen(child, stdout=subprocess.PIPE, stderr=log, text=True, env=env, start_new_session=True)

    def line(timeout: float = 300) -> str:
        import selectors

        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                tail = (tmp_path / "child.log").read_text()[-3000:]
                raise AssertionError(f"the query process said nothing for {timeout} s: {tail}")
        return proc.stdout.readline()

    try:
        first = line()
        assert first.startswith("batch "), first
        for pa_, pb in parts[1:3]:  # files keep landing (one a side per micro-batch) ...
            feed.put("a", pa_)
            feed.put("b", pb)
        assert line().startswith("batch ")
    finally:  # ... and the process tree dies mid-stream
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
    feed.put("a", parts[3][0] + markers())
    feed.put("b", parts[3][1] + markers())
    done = subprocess.run(child + ["--drain"], capture_output=True, text=True, env=env, timeout=600)
    assert "drained" in done.stdout, done.stderr[-3000:]
    got = Counter(tuple(r) for r in spark.read.parquet(out).collect())
    want = batch(spark, "SELECT x.name, y.name FROM a x FULL JOIN b y ON x.interval INTERSECTS y.interval",
                 a_rows, b_rows)
    assert got == want, f"missing {want - got}, extra {got - want}"


def test_late_rows_fail_the_query_or_are_dropped_and_counted(spark, feed, tmp_path):
    rng = random.Random(3)
    a_rows = sorted_rows(rng, "a", chroms=("chr1",), n=30, gap=200, width=300)
    b_rows = sorted_rows(rng, "b", chroms=("chr1",), n=30, gap=200, width=300)
    first_a, rest_a = a_rows[:15], a_rows[15:]
    newest = first_a[-1][1]
    late = ("chr1", newest - 60, newest + 100, "late")  # 60 below the newest start; max_disorder is 50
    q = query(CONDITIONS["intersects"], "inner")
    fail = streams(spark, feed, a={"max_disorder": 50})
    drop = streams(spark, feed, a={"max_disorder": 50, "late_rows": "drop"})
    dropped = Collect()
    feed.put("a", first_a)
    feed.put("b", b_rows[:15])
    runs = launch([(fail.sql(q), Collect(), str(tmp_path / "ck_fail")), (drop.sql(q), dropped, str(tmp_path / "ck_drop"))])
    try:
        feed.put("a", [late] + rest_a + markers(("chr1",)))
        feed.put("b", b_rows[15:] + markers(("chr1",)))
        with pytest.raises(Exception) as failed:
            runs[0].processAllAvailable()
        runs[1].processAllAvailable()
    finally:
        for r in runs:
            r.stop()
    line = reason(failed.value)
    assert line.startswith("giql-spark: a late row on stream 'x', key 'chr1': "
                           f"x.start = {newest - 60} is below the bound {newest - 50} ")
    assert reason(runs[0].exception()) == line
    assert sum(metric(runs[1], "left_late_rows")) == 1
    want = batch(spark, q, a_rows, b_rows)
    assert Counter(dropped.rows) == want
    with_late = batch(spark, q, a_rows + [late], b_rows)
    assert with_late != want  # the dropped row would have joined


def test_state_stays_bounded_on_a_stream_50_times_the_band(spark, feed, tmp_path):
    """Both sides advance a stretch of the genome per trigger. A held row of one side ends at or after the
    other side's newest start, which is in the previous stretch at worst: so a side holds only rows whose
    starts lie within two stretches and one band (the widest interval) of each other."""
    rng = random.Random(5)
    band, stretch, n = 100, 1600, 80
    a_rows = sorted_rows(rng, "a", chroms=("chr1",), n=n, gap=200, width=band)
    b_rows = sorted_rows(rng, "b", chroms=("chr1",), n=n, gap=200, width=band)
    span = max(r[1] for r in a_rows + b_rows)
    assert span > 50 * band
    q = query(CONDITIONS["intersects"], "inner")
    collect = Collect()
    run = start(streams(spark, feed).sql(q), collect, str(tmp_path / "ck"))
    try:
        for lo in range(0, span + 1, stretch):
            feed.put("a", [r for r in a_rows if lo <= r[1] < lo + stretch])
            feed.put("b", [r for r in b_rows if lo <= r[1] < lo + stretch])
            run.processAllAvailable()
    finally:
        run.stop()
    held = [x + y for x, y in zip(metric(run, "left_rows_in_state"), metric(run, "right_rows_in_state"))]
    starts = sorted(r[1] for r in a_rows + b_rows)
    reach = 2 * stretch + 2 * band
    allowed = max(sum(1 for p2 in starts if p <= p2 < p + reach) for p in starts)
    assert len(held) >= 5 and max(held) <= allowed < len(starts) / 2, (held, allowed)
    assert sum(metric(run, "left_rows_pruned")) + sum(metric(run, "right_rows_pruned")) > len(starts) / 2
    assert Counter(collect.rows) == batch(spark, q, a_rows, b_rows)


def test_explain_shows_the_state_and_its_metrics(spark, feed):
    text = streams(spark, feed).explain(query(CONDITIONS["window"], "left"))
    assert "strategy: jvm_stream_state" in text
    assert "state: the JVM operator (flatMapGroupsWithState), typed rows, one unit per key" in text
    assert "y rows are held while y.start >= P - 500" in text
    assert "left_rows_in_state, right_rows_in_state" in text
    inner = streams(spark, feed).explain(query(CONDITIONS["intersects"], "inner"))
    assert "keys cut into position ranges of 1,000,000" in inner
    python = streams(spark, feed, "stream_state").explain(query(CONDITIONS["window"], "left"))
    assert "strategy: stream_state" in python and "rows as JSON" in python


STATIC_JOINS = {"inner": "JOIN", "left": "LEFT JOIN", "semi": "LEFT SEMI JOIN", "anti": "LEFT ANTI JOIN"}


def test_the_operator_leaves_out_the_key_equality_a_unit_holds(spark, feed):
    """Rows meet only within a unit, which holds one key: a plain column key's equality is left out of
    the condition the operator tests per pair; a key computed by an expression keeps it."""
    s = streams(spark, feed)
    plain = s.explain(query(CONDITIONS["window"], "inner"))
    assert "exact condition: in the operator, as (y.start BETWEEN x.start - 500 AND x.start + 500) (a unit's rows " \
           "share their key)" in plain
    computed = s.explain("SELECT x.name, y.name FROM a x JOIN b y "
                         "ON upper(x.chrom) = upper(y.chrom) AND y.start BETWEEN x.start - 500 AND x.start + 500")
    assert "exact condition: in the operator" in computed
    assert "share their key" not in computed


def test_stream_static_equals_batch(spark, feed, tmp_path):
    rng = random.Random(9)
    a_rows = sorted_rows(rng, "a", n=25, gap=500, width=200)
    b_rows = sorted_rows(rng, "b", n=25, gap=500, width=200)
    s = gs.Session(spark)
    s.register("a", feed.stream("a"))
    s.register("b", spark.createDataFrame(b_rows, SCHEMA))
    texts = {how: f"SELECT x.name{'' if how in ('semi', 'anti') else ', y.name'} FROM a x {j} b y "
                  f"ON {CONDITIONS['distance']}" for how, j in STATIC_JOINS.items()}
    texts["right"] = f"SELECT y.name, x.name FROM b y RIGHT JOIN a x ON {CONDITIONS['intersects']}"
    runs = {how: Collect() for how in texts}
    parts = chunks(rng, a_rows, 2)
    feed.put("a", parts[0])
    queries = launch((s.sql(t), runs[how], str(tmp_path / f"ck_{how}")) for how, t in texts.items())
    try:
        feed.put("a", parts[1])
        drain(queries)
    finally:
        for q in queries:
            q.stop()
    for how, t in texts.items():
        want = batch(spark, t, a_rows, b_rows)
        assert Counter(runs[how].rows) == want, how
        assert sum(want.values()) > 0
    with pytest.raises(gs.GiqlSparkError, match="stream-static join may preserve only the stream's rows"):
        s.sql(f"SELECT x.name FROM a x FULL JOIN b y ON {CONDITIONS['intersects']}")


def test_dataframe_api_takes_streams(spark, feed, tmp_path):
    rng = random.Random(11)
    a_rows = sorted_rows(rng, "a", n=20, gap=500, width=200)
    b_rows = sorted_rows(rng, "b", n=20, gap=500, width=200)
    sa, sb = feed.stream("a"), feed.stream("b")
    static_b = spark.createDataFrame(b_rows, SCHEMA)
    frames = {"overlap": gs.overlap(sa, sb, how="outer", suffixes=("", "_b")),
              "window": gs.window(sa, static_b, w=300, suffixes=("", "_b"))}
    assert all(df.isStreaming for df in frames.values())
    runs = {k: Collect() for k in frames}
    parts = list(zip(chunks(rng, a_rows, 2), chunks(rng, b_rows, 2)))
    feed.put("a", parts[0][0])
    feed.put("b", parts[0][1])
    queries = launch((df, runs[k], str(tmp_path / f"ck_{k}")) for k, df in frames.items())
    finish(feed, parts[1], queries)
    ba, bb = spark.createDataFrame(a_rows, SCHEMA), static_b
    wants = {"overlap": gs.overlap(ba, bb, how="outer", suffixes=("", "_b")),
             "window": gs.window(ba, bb, w=300, suffixes=("", "_b"))}
    for k, want_df in wants.items():
        want = Counter(tuple(r) for r in want_df.collect())
        assert Counter(runs[k].rows) == want, k
        assert sum(want.values()) > 0
    with pytest.raises(gs.GiqlSparkError, match="max_disorder and late_rows apply to streaming"):
        gs.overlap(ba, bb, late_rows="drop")


@pytest.mark.parametrize("buckets", [1, 12, 16])
def test_the_state_groups_deal_consecutive_buckets_to_consecutive_partitions(spark, buckets):
    """Each bucket's grouping key is placed by Spark's own hash partitioning (the one a stateful
    operator's shuffle uses) on partition ``bucket % P`` for every partition count P dividing the
    largest power of two not above the bucket count: a key's neighbouring ranges, which a
    micro-batch of sorted streams brings together, then spread evenly over the tasks."""
    from pyspark.sql import functions as F

    groups = [int(g) for g in spark.sparkContext._jvm.io.giql.spark.stream.StreamRules.groups(buckets)]
    assert len(set(groups)) == buckets
    power = 1 << (buckets.bit_length() - 1)
    for parts in [p for p in (1, 2, 4, 8, 16) if power % p == 0]:
        df = spark.createDataFrame([(b, g) for b, g in enumerate(groups)], "b int, g bigint")
        placed = df.repartition(parts, "g").select("b", F.spark_partition_id().alias("p")).collect()
        assert sorted((r.b, r.p) for r in placed) == [(b, b % parts) for b in range(buckets)], parts
