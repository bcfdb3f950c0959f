#!/usr/bin/env python
"""Measured, not projected: each strategy on a standalone cluster of two workers (one core each).

    PYTHONPATH=src python benchmarks/cluster.py --size 10000000 --profiles uniform,skewed \
        --out benchmarks/reports/CLUSTER-10M.md

A master and two workers are started from the installed PySpark on 127.0.0.1 (no download),
the driver runs in this process; every strategy runs the GIQL ``COUNT(*)`` of INTERSECTS on the
sorted files of ``projected.py`` (``skewed``: a third of the rows on chr1), forced, once untimed
and ``--runs`` times timed (median), and ``auto`` is the cost model's own pick. Peak memory is
the resident set of the whole process tree: this driver, its JVM, the master, both workers and
their executors. Every process started is stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.data import data_paths  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT  # noqa: E402
from harness.rss import TreePeak  # noqa: E402
from projected import skewed_paths  # noqa: E402

STRATEGIES = ("jvm_merge", "jvm_broadcast", "jvm_sweep", "binned", "auto")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


def start_cluster(work: Path, workers: int, memory: str) -> tuple[str, list[subprocess.Popen]]:
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1",
               SPARK_WORKER_DIR=str(work), PYSPARK_PYTHON=sys.executable)

    def start(args: list[str], log: str) -> subprocess.Popen:
        return subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env,
                                stdout=open(work / log, "w"), stderr=subprocess.STDOUT)

    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = [start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                    "--webui-port", str(free_port())], "master.log")]
    wait_for_port(port)
    for i in range(workers):
        procs.append(start(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
                            "--memory", memory, "--webui-port", str(free_port()),
                            "--work-dir", str(work / f"work{i}")], f"worker{i}.log"))
    return url, procs


def stop(procs: list[subprocess.Popen]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def run_profile(session, profile: str, size: int, runs: int) -> dict:
    left, right = data_paths("uniform", size) if profile == "uniform" else skewed_paths(size)
    session.register("l", str(left))
    session.register("r", str(right))
    out = {}
    for strategy in STRATEGIES:
        if strategy == "auto":
            session.options.pop("strategy", None)
            plan = session.explain(GIQL_COUNT)
            picked = plan.split("strategy: ", 1)[1].split()[0] if "strategy: " in plan else "?"
        else:
            session.options["strategy"] = strategy
            picked = strategy
        try:
            session.sql(GIQL_COUNT).collect()  # untimed
            times, count = [], None
            for _ in range(runs):
                t0 = time.perf_counter()
                count = session.sql(GIQL_COUNT).collect()[0][0]
                times.append(time.perf_counter() - t0)
            out[strategy] = {"times": times, "median": statistics.median(times), "count": count, "picked": picked}
        except Exception as e:  # a strategy the cluster cannot run: its one line
            out[strategy] = {"error": " ".join(str(e).split())[:200], "picked": picked}
        print(f"{profile} {strategy}: {out[strategy]}", flush=True)
    session.options.pop("strategy", None)
    return out


def report(results: dict, args, load: tuple[str, str], peak: int) -> str:
    lines = ["# Measured on a standalone cluster: two workers of one core each", "",
             f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by `benchmarks/cluster.py` "
             "(method in its docstring); raw numbers in the `.json` next to this file.", "", "```",
             "PYTHONPATH=src python benchmarks/cluster.py " + " ".join(sys.argv[1:]), "```", "",
             f"Machine: 2 cores; master, two workers (1 core, {args.worker_memory} each) and the driver on "
             f"127.0.0.1. 1-minute load average {load[0]} at the start, {load[1]} at the end. Peak resident "
             f"memory of the whole process tree over the run: {peak / 2**30:.1f} GiB. Medians of {args.runs} "
             "timed runs after one untimed.", ""]
    for profile, runs in results.items():
        counts = {r["count"] for r in runs.values() if "count" in r}
        lines += [f"## {args.size:,} × {args.size:,}, {profile}", "",
                  f"Pairs: {', '.join(f'{c:,}' for c in sorted(counts))}"
                  + (" (the same for every strategy)" if len(counts) == 1 else " (DIFFERENT)"), "",
                  "| strategy | median s | runs s | vs the fastest |", "|---|---|---|---|"]
        best = min(r["median"] for r in runs.values() if "median" in r)
        for name, r in runs.items():
            label = f"auto ({r['picked']})" if name == "auto" else name
            if "median" in r:
                lines.append(f"| {label} | {r['median']:.2f} | {', '.join(f'{t:.2f}' for t in r['times'])} | "
                             f"{r['median'] / best:.2f}× |")
            else:
                lines.append(f"| {label} | failed: {r['error']} | | |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--profiles", default="uniform,skewed")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--worker-memory", default="5g")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    import tempfile

    import giql_spark as gs

    start = load_averages()
    with tempfile.TemporaryDirectory(prefix="giql-cluster-") as d, TreePeak(os.getpid()) as peak:
        url, procs = start_cluster(Path(d), 2, args.worker_memory)
        try:
            session = gs.Session(master=url, config={
                "spark.executor.memory": "4g", "spark.cores.max": "2", "spark.driver.memory": "6g",
                "spark.ui.enabled": "false"})
            results = {p: run_profile(session, p, args.size, args.runs) for p in args.profiles.split(",")}
            session.stop()
        finally:
            stop(procs)
    load = (start, load_averages())
    args.out.write_text(report(results, args, load, peak.bytes))
    args.out.with_suffix(".json").write_text(json.dumps({"results": results, "peak_rss": peak.bytes}, indent=1))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
