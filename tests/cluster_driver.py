"""Driver run by tests/test_cluster.py against a standalone master: every
strategy's count, then the same counts while one executor is killed mid-query.

Usage: ``python cluster_driver.py spark://127.0.0.1:PORT WORKDIR``. Prints one
JSON line: the expected count and each run's count.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import giql_spark as gs
from giql_spark.kernels.overlap import count_intersects

QUERY = "SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval"


def write_side(path: str, n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    chrom = np.where(rng.random(n) < 0.6, "chr1", "chr2")
    start = rng.integers(0, 20_000_000, n)
    table = pa.table({"chrom": chrom, "start": start, "end": start + rng.integers(0, 3_000, n)})
    pq.write_table(table, path, row_group_size=50_000)
    return table


def expected_count(left: pa.Table, right: pa.Table) -> int:
    total = 0
    for c in ("chr1", "chr2"):
        lm = left.filter(pa.compute.equal(left["chrom"], c))
        rm = right.filter(pa.compute.equal(right["chrom"], c))
        total += int(count_intersects(lm["start"].to_numpy(), lm["end"].to_numpy(),
                                      rm["start"].to_numpy(), rm["end"].to_numpy()).sum())
    return total


def executor_pids() -> list[int]:
    # /proc, not ps: ps cuts a command line to its output width, and a JVM's class
    # path pushes the main class name past it when no terminal sets the width.
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if b"CoarseGrainedExecutorBackend" in f.read():
                    pids.append(int(d))
        except (OSError, ValueError):
            continue
    return sorted(pids)


def main() -> None:
    master, work = sys.argv[1], sys.argv[2]
    left, right = os.path.join(work, "l.parquet"), os.path.join(work, "r.parquet")
    expected = expected_count(write_side(left, 400_000, 1), write_side(right, 400_000, 2))
    s = gs.Session(master=master, config={"spark.executor.memory": "1g", "spark.cores.max": "2",
                                          "spark.sql.shuffle.partitions": "8", "spark.driver.memory": "1g"})
    s.register("l", left)
    s.register("r", right)
    runs = {}
    for strategy in ("binned", "broadcast", "sweep"):
        s.options["strategy"] = strategy
        runs[strategy] = s.sql(QUERY).collect()[0][0]
    # The naive plan compares every pair per chromosome: a smaller join.
    small = (QUERY.replace("FROM l a", "FROM (SELECT * FROM l WHERE start < 150000) a")
             .replace("JOIN r b", "JOIN (SELECT * FROM r WHERE start < 150000) b"))
    for strategy, key in (("naive", "naive"), ("binned", "naive_check")):
        s.options["strategy"] = strategy
        runs[key] = s.sql(small).collect()[0][0]

    killed = []
    tracker = s.spark.sparkContext.statusTracker()

    def kill_one_when_running() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            infos = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
            if any(i is not None and i.numActiveTasks > 0 for i in infos):
                pids = executor_pids()
                if pids:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
                return
            time.sleep(0.05)

    for strategy in ("binned", "broadcast", "sweep"):
        s.options["strategy"] = strategy
        killer = threading.Thread(target=kill_one_when_running)
        killer.start()
        runs[f"{strategy}_killed"] = s.sql(QUERY).collect()[0][0]
        killer.join()
    # The merge join on the same rows sorted: with more tasks than chromosomes each chromosome
    # is cut into ranges of positions, spread over both workers; then one executor is killed.
    ls, rs = os.path.join(work, "ls.parquet"), os.path.join(work, "rs.parquet")
    for src, dst in ((left, ls), (right, rs)):
        t = pq.read_table(src).sort_by([("chrom", "ascending"), ("start", "ascending")])
        pq.write_table(t, dst, row_group_size=25_000)
    s.register("ls", ls)
    s.register("rs", rs)
    s.spark.conf.set("spark.giql.merge.tasks", "8")
    s.options["strategy"] = "jvm_merge"
    merged = QUERY.replace("FROM l a", "FROM ls a").replace("JOIN r b", "JOIN rs b")
    df = s.sql(merged)
    plan = df._jdf.queryExecution().executedPlan().toString()
    runs["merge_ranges"] = "ranges of a key" in plan
    runs["merge"] = df.collect()[0][0]
    # the driver and both workers' executors, over which the eight tasks ran
    runs["merge_executors"] = len(s.spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos())
    # count_overlaps (bioframe's overlaps: a zero-length interval inside another counts) cut
    # into ranges against one task holding everything
    for tasks in ("8", "1"):
        s.spark.conf.set("spark.giql.merge.tasks", tasks)
        per_row = gs.count_overlaps(s.spark.read.parquet(ls), s.spark.read.parquet(rs))
        runs[f"count_overlaps_{tasks}"] = [per_row.count()] + list(
            per_row.agg({"count": "sum"}).collect()[0])
    # gs.nearest on the merge: both chromosomes split between the eight tasks by runs of their
    # left row groups (each piece indexing all of its chromosome's right rows), against whole;
    # the broadcast, which the cost model prefers at this size, ruled out
    s.spark.conf.set("spark.giql.broadcastMaxBytes", "1")
    for tasks in ("8", "1"):
        s.spark.conf.set("spark.giql.merge.tasks", tasks)
        near = gs.nearest(s.spark.read.parquet(ls), s.spark.read.parquet(rs))
        plan = near._jdf.queryExecution().executedPlan().toString()
        units = re.search(r"MergeIntervalJoin .* (\d+) tasks, (\d+) units", plan)
        runs[f"nearest_units_{tasks}"] = int(units.group(2)) if units else None
        runs[f"nearest_{tasks}"] = [near.count()] + list(near.agg({"distance": "sum"}).collect()[0])
    s.spark.conf.unset("spark.giql.broadcastMaxBytes")
    s.spark.conf.set("spark.giql.merge.tasks", "8")
    killer = threading.Thread(target=kill_one_when_running)
    killer.start()
    runs["merge_killed"] = s.sql(merged).collect()[0][0]
    killer.join()
    print(json.dumps({"expected": expected, "runs": runs, "killed": killed}))
    s.stop()


if __name__ == "__main__":
    main()
