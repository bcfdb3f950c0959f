#!/usr/bin/env python
"""Band-join benchmark: giql-spark's range joins against today's plan, DuckDB and the interval libraries.

    PYTHONPATH=src python benchmarks/bands.py --sizes 100000,1000000 --repeats 3 \\
        --peers-python peers/bin/python --out benchmarks/reports/BANDS.md

Two band queries (``--window`` and ``--distance`` set their constants)::

    window:   a.chrom = b.chrom AND b.start BETWEEN a.start - 500 AND a.start + 500
    distance: a.chrom = b.chrom AND DISTANCE(a.interval, b.interval) <= 1000

each as ``SELECT COUNT(*)`` (count) and as every pair written to Parquet (pairs), on the
``uniform`` and ``heavy`` profiles of ``harness/data.py`` (hg38, 0-based half-open). The 1M size
is ``joins.py``'s 1M files; 100K is the first 100K rows of those position-sorted files
(chr1 and part of chr2). See benchmarks/README.md ("Band joins") for the contenders, the
timing and the memory measurement.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.data import DATA_DIR, REPORTS_DIR, ROW_GROUP, data_paths, parquet_rows, scratch_dir, warmup_paths, \
    write_parquet
from harness.machine import machine_facts, peers_versions
from harness.queries import PAIR_COLUMNS
from harness.report import command_line, one_line, spread, write_report
from harness.report import fmt_s as _fmt_s
from harness.rounds import Budget, rotated, select_contenders
from harness.rss import TreePeak, run_measured
from harness.snapshot import freeze, release
from harness.spark import RunTimeout, collect_garbage, local_spark, spark_action

HERE = Path(__file__).resolve().parent
BASE_SIZE = 1_000_000
PROFILES = ("uniform", "heavy")


# --------------------------------------------------------------------------- queries
def conditions(window: int, distance: int) -> dict[str, str]:
    return {
        "window": f"a.chrom = b.chrom AND b.start BETWEEN a.start - {window} AND a.start + {window}",
        "distance": f"a.chrom = b.chrom AND DISTANCE(a.interval, b.interval) <= {distance}",
    }


INTERSECTS = "a.interval INTERSECTS b.interval"


def sql(op: str, cond: str) -> str:
    return f"SELECT {'COUNT(*)' if op == 'count' else 'a.*, b.*'} FROM l a JOIN r b ON {cond}"


def duckdb_sql(op: str, cond: str) -> str:
    """giql's own DuckDB SQL for the query, over tables ``l`` and ``r``."""
    import giql

    tables = [giql.Table(n, strand_col=None) for n in ("l", "r")]
    text = giql.transpile(sql(op, cond), tables=tables, dialect="duckdb")
    if op == "pairs":  # a.*, b.* repeats names; Parquet needs unique ones (the Spark contenders' names)
        text = f"SELECT * FROM ({text}) AS t({', '.join(f'{chr(34)}{c}{chr(34)}' for c in PAIR_COLUMNS)})"
    return text


# --------------------------------------------------------------------------- data
def _write(table, path: Path, row_group: int) -> Path:
    return path if path.exists() else write_parquet(table, path, row_group)


def data_files(profile: str, size: int, window: int, distance: int) -> dict[str, Path]:
    """The two sides at ``size`` (the 1M files, or their first ``size`` rows), and the
    pre-expanded sides whose INTERSECTS join gives the same pairs as each band query:

    * window: left ``[max(0, start - W), start + W + 1)``, right ``[start, start + 1)``;
    * distance: left ``[max(0, start - D), end + D)``, right as it is.

    (Clipping at 0 changes nothing: every right row lies at or after 0.)
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    lpath, rpath = data_paths(profile, BASE_SIZE)
    stem = f"{profile}_{BASE_SIZE}" if size == BASE_SIZE else f"{profile}_{BASE_SIZE}_head{size}"
    row_group = ROW_GROUP if size >= 4 * ROW_GROUP else max(8_192, size // 4)
    out = {}
    for side, src in (("left", lpath), ("right", rpath)):
        if size == BASE_SIZE:
            out[side] = src
        else:
            head = DATA_DIR / f"{stem}_{side}.parquet"
            if not head.exists():
                t = pq.read_table(src)
                assert t.num_rows >= size, f"{src} has {t.num_rows} rows"
                _write(t.slice(0, size), head, row_group)
            out[side] = head
    left, right = pq.read_table(out["left"]), pq.read_table(out["right"])

    def with_ends(t, start, end):
        return t.set_column(t.schema.get_field_index("start"), "start", start) \
                .set_column(t.schema.get_field_index("end"), "end", end)

    zero = pa.scalar(0, pa.int64())
    out["window_left"] = _write(with_ends(left, pc.max_element_wise(pc.subtract(left["start"], window), zero),
                                          pc.add(left["start"], window + 1)),
                                DATA_DIR / f"{stem}_window{window}_left.parquet", row_group)
    out["window_right"] = _write(with_ends(right, right["start"], pc.add(right["start"], 1)),
                                 DATA_DIR / f"{stem}_points_right.parquet", row_group)
    out["distance_left"] = _write(with_ends(left, pc.max_element_wise(pc.subtract(left["start"], distance), zero),
                                            pc.add(left["end"], distance)),
                                  DATA_DIR / f"{stem}_pad{distance}_left.parquet", row_group)
    out["distance_right"] = out["right"]
    return out


def describe_data(paths: dict[str, Path]) -> str:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(paths["left"], columns=["chrom", "start", "end"])
    w = pc.subtract(t["end"], t["start"]).to_numpy()
    chroms = pc.unique(t["chrom"]).to_pylist()
    return (f"{t.num_rows:,} rows a side on {len(chroms)} chromosome(s) ({', '.join(chroms[:3])}"
            f"{', ...' if len(chroms) > 3 else ''}); left widths median {int(sorted(w)[len(w) // 2]):,} bp, "
            f"mean {w.mean():,.0f} bp")


# --------------------------------------------------------------------------- contenders
def contenders(strategies: list[str]) -> dict[str, dict]:
    """Name -> how it runs. Spark contenders run in a worker process (one per contender and
    round); the others run once per process (band_peers.py)."""
    out = {"giql auto": {"kind": "spark", "strategy": None,
                         "describe": "giql-spark with nothing forced: the cost model's choice"}}
    for s in strategies:
        if s == "naive":
            continue
        out[f"giql {s}"] = {"kind": "spark", "strategy": s,
                            "describe": f"giql-spark, strategy={s} forced (its parameters chosen by the cost model)"}
    out["giql naive (today's plan)"] = {
        "kind": "spark", "strategy": "naive", "naive": True,
        "describe": "giql-spark, strategy=naive: the condition as Spark plans it, a sort-merge join on the "
                    "chromosome with the range as a filter (what the query ran as before band joins)"}
    out["giql INTERSECTS (pre-expanded)"] = {
        "kind": "spark", "strategy": None, "intersects": True,
        "describe": "giql-spark (cost model's choice) running `a.interval INTERSECTS b.interval` on the "
                    "pre-expanded files that give the same pairs (see Data): the interval join the band "
                    "is compared with"}
    out["duckdb"] = {"kind": "peer", "tool": "duckdb", "local": True,
                     "describe": "DuckDB running giql's DuckDB SQL of the query (`giql.transpile(..., "
                                 "dialect='duckdb')`) over `read_parquet` views, its own process"}
    out["bioframe"] = {"kind": "peer", "tool": "bioframe", "local": True,
                       "describe": "`bioframe.overlap(bioframe.expand(left, pad=...), right, how='inner')` on "
                                   "pandas (window: start points), its own process"}
    out["pyranges"] = {"kind": "peer", "tool": "pyranges",
                       "describe": "pyranges `PyRanges.join(other, slack=...)` (window: start points), "
                                   "its own process"}
    out["polars-bio"] = {"kind": "peer", "tool": "polars-bio",
                         "describe": "`polars_bio.overlap` of the left side padded with polars expressions "
                                     "(window: start points), its own process"}
    return out


# --------------------------------------------------------------------------- Spark worker
def worker(args) -> int:
    """A Spark contender's process: reads one JSON request a line, answers one JSON line."""
    import giql_spark as gs

    cfg = json.loads(args.worker)
    spark = local_spark(args.master, args.driver_memory, args.shuffle_partitions, app_name="giql-spark-bands",
                        ui=False)

    def session(strategy=None):
        return gs.Session(spark, strategy=strategy or cfg.get("strategy"))

    def run(req: dict, strategy=None) -> dict:
        s = session(strategy)
        s.register("l", req["left"])
        s.register("r", req["right"])
        query = sql(req["op"], req["cond"])
        if req["op"] == "count":
            return {"rows": s.sql(query).collect()[0][0]}
        s.sql(query).toDF(*PAIR_COLUMNS).write.mode("overwrite").parquet(req["out"])
        return {}

    # Untimed warm-up: the JVM code paths and the numba kernels in the Python workers. The
    # cost model's choice on the small warm-up files need not be its choice on the timed ones,
    # so with nothing forced every JVM operator runs once too (one a join refuses is skipped):
    # a first timed query then pays no JIT or code generation for whichever it picks.
    wl, wr = warmup_paths()
    extra = [] if cfg.get("strategy") else ["jvm_broadcast", "jvm_merge", "jvm_sweep"]
    for cond in json.loads(args.warmup_conditions):
        for strategy in [None] + extra:
            try:
                spark_action(spark, lambda: run({"left": str(wl), "right": str(wr), "op": "count", "cond": cond},
                                                strategy), 600)
            except gs.QueryError:
                if strategy is None:
                    raise
    print(json.dumps({"ready": True}), flush=True)

    for line in sys.stdin:
        req = json.loads(line)
        collect_garbage(spark, pause=0.3)
        reply: dict = {}
        try:
            t0 = time.perf_counter()
            res = spark_action(spark, lambda: run(req), req["timeout"])
            reply["seconds"] = time.perf_counter() - t0
            reply["rows"] = res.get("rows", None)
            if req["op"] == "pairs":
                reply["rows"] = parquet_rows(Path(req["out"]))
            reply["status"] = "ok"
        except RunTimeout:
            reply["status"] = "timeout"
        except Exception as e:  # noqa: BLE001
            reply["status"] = f"error: {one_line(e)}"
        finally:
            shutil.rmtree(req.get("out", ""), ignore_errors=True)
        if req.get("describe") and reply["status"] == "ok":
            try:  # untimed: the strategy and parameters the planner chose
                plan = session()
                plan.register("l", req["left"])
                plan.register("r", req["right"])
                text = plan.explain(sql("count", req["cond"]))
                reply["choice"] = next((ln.strip().removeprefix("strategy: ").split(" — ")[0]
                                        for ln in text.splitlines() if ln.strip().startswith("strategy:")), None)
            except Exception as e:  # noqa: BLE001
                reply["choice"] = f"explain failed: {str(e)[:100]}"
        print(json.dumps(reply), flush=True)
    spark.stop()
    return 0


class SparkWorker:
    def __init__(self, name: str, cfg: dict, args, warmup_conditions: list[str]):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(cfg),
               "--warmup-conditions", json.dumps(warmup_conditions), "--driver-memory", args.driver_memory,
               "--shuffle-partitions", str(args.shuffle_partitions), "--master", args.master]
        self.name = name
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     stderr=subprocess.DEVNULL if not args.verbose else None)
        line = self.proc.stdout.readline()
        if not line or not json.loads(line).get("ready"):
            self.close()
            raise RuntimeError(f"{name}: the Spark worker did not start")

    def request(self, req: dict) -> tuple[dict, int]:
        """The worker's reply and the peak RSS of its process tree during the run."""
        with TreePeak(self.proc.pid) as rss:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name}: the Spark worker died (exit {self.proc.poll()})")
        return json.loads(line), rss.bytes

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(120)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait()


def run_peer(c: dict, req: dict, args) -> tuple[dict, int]:
    python = sys.executable if c.get("local") else args.peers_python
    cmd = [python, str(HERE / "band_peers.py"), c["tool"], req["op"], req["query"], req["left"], req["right"],
           req["out"], "--pad", str(req["pad"]), "--threads", str(args.duckdb_threads)]
    if c["tool"] == "duckdb":
        cmd += ["--sql", duckdb_sql(req["op"], req["cond"])]
    done = run_measured(cmd, timeout=req["timeout"])
    if done.timed_out:
        return {"status": "timeout"}, done.rss
    shutil.rmtree(req["out"], ignore_errors=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return {"status": f"error: {last[:300]}"}, done.rss
    rec = json.loads(done.stdout.strip().splitlines()[-1])
    return {"status": "ok", "seconds": rec["seconds"], "rows": rec["rows"]}, done.rss


# --------------------------------------------------------------------------- report
def fmt_s(x: float | None) -> str:
    return "—" if x is None else _fmt_s(x)


def cell(times: list, timeouts: int, timeout: float) -> str:
    if not times:
        return f"> {timeout:.0f} s" if timeouts else "—"
    return spread(times, dash="–") + (f" + {timeouts} timeout" if timeouts else "")


def gib(b: int | None) -> str:
    return "—" if not b else f"{b / 2**30:.1f}"


def median_of(runs: list[dict], **where) -> float | None:
    ts = [r["seconds"] for r in runs if r["status"] == "ok" and all(r[k] == v for k, v in where.items())]
    return statistics.median(ts) if ts else None


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "—"
    return f"{a / b:.2f}" if a / b >= 0.1 else f"{a / b:.3g}"


def render(rec: dict) -> str:
    args = rec["args"]
    runs = rec["runs"]
    cmap = rec["contenders"]
    sizes, ops, queries = args["sizes"], args["ops"], list(rec["conditions"])
    facts = rec["machine"]
    code = rec["code"]
    lines = [
        "# Band-join benchmark",
        "",
        f"Date: {rec['started'][:16]} UTC; the run took {rec['minutes']:.0f} min. Made by `benchmarks/bands.py` "
        "(method in benchmarks/README.md, \"Band joins\"); raw runs in the `.json` next to this file.",
        "",
        "```",
        rec["command"],
        "```",
        "",
        f"giql_spark at commit {code.get('commit', '?')}{' + uncommitted src changes' if code.get('src_dirty') else ''}"
        f"{', run from a frozen copy' if code.get('snapshot') else ''}.",
        "",
        "## Queries",
        "",
    ]
    for q, cond in rec["conditions"].items():
        lines.append(f"- **{q}**: `{cond}`")
    lines += [
        "",
        "Each as `SELECT COUNT(*) FROM l a JOIN r b ON ...` (count, collected) and as `SELECT a.*, b.* ...` "
        "written to Parquet (pairs). The INTERSECTS row runs `a.interval INTERSECTS b.interval` on "
        "pre-expanded files that give the same pairs (window: left `[start - W, start + W + 1)`, right "
        "`[start, start + 1)`; distance: left `[start - D, end + D)`).",
        "",
        "## Machine",
        "",
        f"- {facts['cores']} cores ({facts['cpu']}), {facts['memory_gib']} GiB, shared with other jobs: the "
        "1-minute load average at the start of each run is recorded, and shown per row (mean over its runs).",
        f"- Spark {facts['spark']} ({args['master']}, driver memory {args['driver_memory']}, "
        f"spark.sql.shuffle.partitions={args['shuffle_partitions']}), {facts['java']}; Python {facts['python']}, "
        f"bioframe {facts['bioframe']}, pandas {facts['pandas']}, pyarrow {facts['pyarrow']}, "
        f"DuckDB {rec.get('duckdb', '?')} ({args['duckdb_threads']} threads)"
        + (f"; peers: {rec['peers_versions']}" if rec.get("peers_versions") else ""),
        "",
        "## Data",
        "",
    ]
    for key, text in rec["data"].items():
        lines.append(f"- {key}: {text}")
    lines += [""]

    # Targets.
    auto = "giql auto"
    naive = "giql naive (today's plan)"
    inter = "giql INTERSECTS (pre-expanded)"
    lines += ["## Targets", ""]
    tl = ["| target | size | profile | query | op | band (giql auto) s | reference s | ratio | met |",
          "|---|---|---|---|---|---:|---:|---:|---|"]
    checks = [("≥ 100× faster than today's plan", naive, lambda r: r is not None and r <= 0.01, "first")]
    checks += [("within 2× of INTERSECTS, same pairs", inter, lambda r: r is not None and r <= 2.0, "last")]
    checks += [("faster than DuckDB", "duckdb", lambda r: r is not None and r < 1.0, "last")]
    for label, ref, ok, which in checks:
        size = sizes[0] if which == "first" else sizes[-1]
        for p in args["profiles"]:
            for q in queries:
                for op in ops:
                    refs = [r for r in runs if (r["size"], r["profile"], r["query"], r["op"], r["contender"])
                            == (size, p, q, op, ref)]
                    if not refs:
                        continue
                    a = median_of(runs, size=size, profile=p, query=q, op=op, contender=auto)
                    b = median_of(runs, size=size, profile=p, query=q, op=op, contender=ref)
                    timed_out = b is None and any(r["status"] == "timeout" for r in refs)
                    if timed_out:
                        bound = min(r.get("timeout", args["timeout"]) for r in refs if r["status"] == "timeout")
                        rtxt, met = f"< {a / bound:.3g}" if a else "—", "yes" if a and ok(a / bound) else "?"
                        btxt = f"> {bound:.0f}"
                    else:
                        rtxt, met = ratio(a, b), ("yes" if ok(a / b) else "**no**") if a and b else "—"
                        btxt = fmt_s(b)
                    tl.append(f"| {label} | {size:,} | {p} | {q} | {op} | {fmt_s(a)} | {btxt} | {rtxt} | {met} |")
    lines += tl + ["", "ratio = band / reference (below 1: the band join is faster).", ""]

    # Results per size / profile / query.
    lines += ["## Results", "",
              "Cells: median wall seconds (runs, min–max). Time runs from registering (or reading) the Parquet "
              "files to the count collected or the pairs written; process and Spark start-up, imports and the "
              "untimed warm-up are excluded (each Spark contender warms up on 20K x 20K other files: each "
              "query once as it runs it, and `giql auto` once more forced to each JVM operator). `RSS` is the "
              "peak resident memory of the contender's whole process tree while the run lasted (Spark: the driver JVM and its Python workers; the JVM keeps the heap it "
              "grew in earlier runs of the same process, so it is a high-water mark), in GiB, the largest over "
              "its runs. `vs auto`: this row's median / giql auto's.", ""]
    for size in sizes:
        for p in args["profiles"]:
            for q in queries:
                lines += [f"### {size:,} x {size:,}, {p}, {q}", ""]
                head = ["contender"]
                for op in ops:
                    head += [f"{op} s", f"{op} vs auto", f"{op} RSS GiB"]
                head += ["load", "planner's choice"]
                lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                counts = {}
                for cname in cmap:
                    mine = [r for r in runs if (r["size"], r["profile"], r["query"], r["contender"])
                            == (size, p, q, cname)]
                    if not mine:
                        continue
                    row = [cname]
                    for op in ops:
                        rs = [r for r in mine if r["op"] == op]
                        times = [r["seconds"] for r in rs if r["status"] == "ok"]
                        touts = sum(r["status"] == "timeout" for r in rs)
                        errs = [r["status"] for r in rs if r["status"].startswith("error")]
                        limit = min((r.get("timeout", args["timeout"]) for r in rs), default=args["timeout"])
                        txt = cell(times, touts, limit) if rs else "not run"
                        if errs and not times:
                            txt = "failed"
                        row.append(txt)
                        a = median_of(runs, size=size, profile=p, query=q, op=op, contender=auto)
                        row.append(ratio(statistics.median(times), a) if times else "—")
                        row.append(gib(max((r.get("rss") or 0 for r in rs), default=0)))
                        for r in rs:
                            if r["status"] == "ok":
                                counts.setdefault(r["rows"], set()).add(f"{cname}/{op}")
                    loads = [r["load1"] for r in mine]
                    row.append(f"{statistics.mean(loads):.1f}")
                    choices = sorted({r["choice"] for r in mine if r.get("choice")})
                    row.append("; ".join(choices))
                    lines.append("| " + " | ".join(row) + " |")
                lines.append("")
                if len(counts) == 1:
                    lines.append(f"Pairs: {next(iter(counts)):,}, the same for every contender and op.")
                elif counts:
                    lines.append("**Count mismatch**: " + "; ".join(f"{n:,}: {', '.join(sorted(w))}"
                                                                    for n, w in sorted(counts.items())))
                lines.append("")
    lines += ["## Count verification", ""]
    lines += rec["verify"] or ["Every contender returned the same number of pairs, in count and pairs, in every "
                               "(size, profile, query)."]
    lines += ["", "## Not run / caveats", ""]
    lines += rec["caveats"] or ["None."]
    lines += ["", "## Contenders", ""]
    for name, c in cmap.items():
        lines.append(f"- **{name}**: {c['describe']}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--profiles", default="uniform,heavy")
    ap.add_argument("--queries", default="window,distance")
    ap.add_argument("--ops", default="count,pairs")
    ap.add_argument("--window", type=int, default=500)
    ap.add_argument("--distance", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--contenders", default=None, help="comma-separated subset of contender names")
    ap.add_argument("--naive", default="100000:count",
                    help="size:op cells where today's plan (naive) runs, once each; 'none' for none")
    ap.add_argument("--naive-rounds", type=int, default=1,
                    help="rounds in which today's plan runs (it takes minutes a cell)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per-run timeout, seconds")
    ap.add_argument("--timeouts", default="", help="per-contender timeouts, e.g. 'duckdb=300'")
    ap.add_argument("--skip", default="",
                    help="cells not run, 'contender@size/op' comma-separated, e.g. 'duckdb@1000000/pairs'")
    ap.add_argument("--budget-minutes", type=float, default=None, help="start no run after this much wall time")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--duckdb-threads", type=int, default=2)
    ap.add_argument("--peers-python", default=os.environ.get("GIQL_BENCH_PEERS_PYTHON"),
                    help="a Python with polars-bio and pyranges (without it they are not run)")
    ap.add_argument("--out", default=str(REPORTS_DIR / "BANDS.md"))
    ap.add_argument("--no-snapshot", action="store_true")
    ap.add_argument("--render", help="only rewrite --out from this raw .json")
    ap.add_argument("--verbose", action="store_true", help="show the Spark workers' stderr")
    ap.add_argument("--note", action="append", default=[], help="a line added to the caveats")
    # worker mode (internal)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--warmup-conditions", default="[]", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.render:
        rec = json.loads(Path(args.render).read_text())
        Path(args.out).write_text(render(rec))
        return 0

    cmdline = command_line("PYTHONPATH=src python")
    started = _dt.datetime.now(_dt.timezone.utc)
    budget = Budget(args.budget_minutes)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    profiles = [p for p in args.profiles.split(",") if p]
    ops = [o for o in args.ops.split(",") if o]
    conds = {q: c for q, c in conditions(args.window, args.distance).items() if q in args.queries.split(",")}
    pads = {"window": args.window, "distance": args.distance}
    naive_cells = set() if args.naive == "none" else {(int(c.split(":")[0]), c.split(":")[1])
                                                      for c in args.naive.split(",") if c}

    code = freeze(not args.no_snapshot)
    import duckdb
    from giql_spark.planner import registry

    cmap = select_contenders(contenders(sorted(registry.BATCH)), args.contenders, ap.error)
    caveats = [f"- {n}" for n in args.note]
    if not args.peers_python:
        dropped = [k for k, v in cmap.items() if v["kind"] == "peer" and not v.get("local")]
        cmap = {k: v for k, v in cmap.items() if k not in dropped}
        caveats.append(f"- no --peers-python: not run: {', '.join(dropped)}.")

    # Data (not timed).
    data, paths = {}, {}
    for size in sizes:
        for p in profiles:
            paths[(size, p)] = data_files(p, size, args.window, args.distance)
            data[f"{size:,}, {p}"] = describe_data(paths[(size, p)])
            print(f"[data] {size:,} {p}: {data[f'{size:,}, {p}']}", flush=True)

    facts = machine_facts()
    tmp_root = scratch_dir("giql-bands-")
    runs: list[dict] = []
    timed_out: set = set()  # (size, profile, query, op, contender): not run again after a timeout
    rec = {"command": cmdline, "started": started.isoformat(), "code": code, "machine": facts,
           "duckdb": duckdb.__version__,
           "peers_versions": peers_versions(args.peers_python) if args.peers_python else None, "conditions": conds,
           "contenders": cmap, "data": data, "runs": runs,
           "args": {"sizes": sizes, "profiles": profiles, "ops": ops, "timeout": args.timeout,
                    "master": args.master, "driver_memory": args.driver_memory,
                    "shuffle_partitions": args.shuffle_partitions, "duckdb_threads": args.duckdb_threads,
                    "repeats": args.repeats}}

    timeouts = {k: float(v) for k, v in (t.split("=") for t in args.timeouts.split(",") if t)}
    skip = {tuple(x.replace("@", "/").rsplit("/", 2)) for x in args.skip.split(",") if x}
    for cname, size, op in sorted(skip):
        caveats.append(f"- {cname}: not run at {int(size):,} for {op} (--skip).")
    for cname, t in timeouts.items():
        caveats.append(f"- {cname}: per-run timeout {t:.0f} s (others {args.timeout:.0f} s).")

    def cells_for(cname: str, size: int):
        c = cmap[cname]
        for p in profiles:
            for q in conds:
                for op in ops:
                    if c.get("naive") and (size, op) not in naive_cells:
                        continue
                    if (cname, str(size), op) in skip:
                        continue
                    yield p, q, op

    def request(cname: str, size: int, p: str, q: str, op: str, rep: int) -> dict:
        c = cmap[cname]
        files = paths[(size, p)]
        left, right = (files[f"{q}_left"], files[f"{q}_right"]) if c.get("intersects") else \
            (files["left"], files["right"])
        out = tmp_root / f"{cname.replace(' ', '_')}-{size}-{p}-{q}-{op}-{rep}"
        return {"left": str(left), "right": str(right), "op": op, "query": q, "pad": pads[q],
                "cond": INTERSECTS if c.get("intersects") else conds[q], "out": str(out),
                "timeout": timeouts.get(cname, args.timeout), "describe": rep == 1}

    def record(cname, size, p, q, op, rep, reply, rss, load):
        r = {"size": size, "profile": p, "query": q, "op": op, "contender": cname, "rep": rep,
             "seconds": reply.get("seconds"), "rows": reply.get("rows"), "status": reply["status"],
             "rss": rss, "load1": load, "choice": reply.get("choice"), "timeout": timeouts.get(cname, args.timeout)}
        runs.append(r)
        if r["status"] == "timeout":
            timed_out.add((size, p, q, op, cname))
        shown = f"{r['seconds']:8.2f}s rows={r['rows']:,}" if r["status"] == "ok" else r["status"]
        print(f"[run] {size:>9,} {p:8s} {q:9s} {op:6s} {cname:30s} rep {rep}: {shown} rss={rss / 2**30:.1f}G "
              f"load={load:.1f}{' ' + r['choice'] if r.get('choice') else ''}", flush=True)

    def run_contender(cname: str, size: int, rep: int) -> None:
        c = cmap[cname]
        todo = [(p, q, op) for p, q, op in cells_for(cname, size)
                if (size, p, q, op, cname) not in timed_out]
        if not todo:
            return
        if budget.over():
            caveats.append(f"- {cname}: round {rep} at {size:,} not run (time budget).")
            return
        if c["kind"] == "spark":
            cfg = {"strategy": c.get("strategy")}
            warm = [INTERSECTS] if c.get("intersects") else list(conds.values())
            try:
                w = SparkWorker(cname, cfg, args, warm)
            except Exception as e:  # noqa: BLE001
                caveats.append(f"- {cname}: worker failed to start at {size:,}, round {rep}: {e}")
                return
            try:
                for p, q, op in todo:
                    load = os.getloadavg()[0]
                    try:
                        reply, rss = w.request(request(cname, size, p, q, op, rep))
                    except Exception as e:  # noqa: BLE001
                        reply, rss = {"status": f"error: {e}"}, 0
                        record(cname, size, p, q, op, rep, reply, rss, load)
                        break
                    record(cname, size, p, q, op, rep, reply, rss, load)
            finally:
                w.close()
        else:
            for p, q, op in todo:
                load = os.getloadavg()[0]
                reply, rss = run_peer(c, request(cname, size, p, q, op, rep), args)
                record(cname, size, p, q, op, rep, reply, rss, load)

    names = [n for n in cmap if not cmap[n].get("naive")]
    for size in sizes:
        for rep in range(1, args.repeats + 1):
            for cname in rotated(names, rep - 1):
                run_contender(cname, size, rep)
            if rep <= args.naive_rounds:  # today's plan, right after the round
                for cname in [n for n in cmap if cmap[n].get("naive")]:
                    run_contender(cname, size, rep)

    # Verify the counts: one number per (size, profile, query) across contenders and ops.
    verify = []
    for size in sizes:
        for p in profiles:
            for q in conds:
                seen: dict = {}
                for r in runs:
                    if (r["size"], r["profile"], r["query"]) == (size, p, q) and r["status"] == "ok":
                        seen.setdefault(r["rows"], set()).add(f"{r['contender']}/{r['op']}")
                if len(seen) > 1:
                    msg = (f"- **MISMATCH** {size:,} {p} {q}: "
                           + "; ".join(f"{n:,}: {', '.join(sorted(w))}" for n, w in sorted(seen.items())))
                    print("WARNING:", msg, flush=True)
                    verify.append(msg)
    errors: dict = {}
    for r in runs:
        if r["status"].startswith("error"):
            errors.setdefault(r["contender"], r)
    for cname, r in errors.items():
        caveats.append(f"- {cname}: runs failed; first ({r['size']:,} {r['profile']} {r['query']} {r['op']}): "
                       f"{r['status'][:300]}")
    for cname in cmap:
        if cmap[cname].get("naive"):
            caveats.append(f"- {cname}: {args.naive_rounds} run(s) per cell, only at "
                           f"{', '.join(f'{s:,}/{o}' for s, o in sorted(naive_cells))}"
                           f" (timeout {args.timeout:.0f} s).")
    for (size, p, q, op, cname) in sorted(timed_out):
        caveats.append(f"- {cname}, {size:,} {p} {q} {op}: timed out after {timeouts.get(cname, args.timeout):.0f} s;"
                       " not run again.")
    rec.update(verify=verify, caveats=caveats, ended=_dt.datetime.now(_dt.timezone.utc).isoformat(),
               minutes=budget.elapsed_minutes())
    write_report(Path(args.out), render(rec), rec)
    print(render(rec))
    shutil.rmtree(tmp_root, ignore_errors=True)
    release(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
