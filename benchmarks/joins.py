#!/usr/bin/env python
"""Interval-join benchmark: giql-spark strategies against hand-written Spark SQL and bioframe.

Example::

    python benchmarks/joins.py --size 1000000 --profiles uniform,heavy,middle \
        --ops count,pairs --repeats 3 --out benchmarks/reports/JOINS.md

See benchmarks/README.md for what each contender is and how the timing is done.
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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from harness.data import PROFILES, REPORTS_DIR, data_paths, scratch_dir, parquet_rows, warmup_paths
from harness.machine import load_averages, machine_facts, peers_versions
from harness.queries import BIN10K_PAIRS_SELECT, GIQL_COUNT, GIQL_PAIRS, PAIR_COLUMNS, bin10k
from harness.report import command_line, fmt_ratio, machine_lines, one_line, spread, write_report
from harness.rounds import Budget, rotated, select_contenders
from harness.snapshot import freeze, release
from harness.spark import RunTimeout, local_spark, spark_action

PEERS = Path(__file__).resolve().parent / "harness" / "peers.py"


# --------------------------------------------------------------------------- contenders
@dataclass
class Contender:
    name: str
    kind: str  # "giql", "sql", "bioframe"
    describe: str
    params: dict = field(default_factory=dict)


def contenders(bin_sizes: list[int], tile_size: int) -> dict[str, Contender]:
    cs = [Contender("giql auto", "giql", "giql-spark with nothing forced: the cost model picks the strategy "
                    "and its parameters from the tables' statistics", {"strategy": None}),
          Contender("giql broadcast", "giql", "giql-spark, strategy=broadcast", {"strategy": "broadcast"})]
    for b in bin_sizes:
        cs.append(Contender(f"giql binned {b // 1000}k", "giql", f"giql-spark, strategy=binned, bin_size={b}",
                            {"strategy": "binned", "bin_size": b}))
    cs.append(Contender(f"giql sweep {tile_size // 1_000_000}M", "giql",
                        f"giql-spark, strategy=sweep, tile_size={tile_size}",
                        {"strategy": "sweep", "tile_size": tile_size}))
    cs.append(Contender("spark naive", "giql", "giql-spark, strategy=naive (chrom equality + range condition, "
                        "i.e. plain Spark SQL)", {"strategy": "naive"}))
    cs.append(Contender("spark sql bin10k", "sql", "hand-written Spark SQL, fixed 10 kb bins, canonical-bin filter"))
    cs.append(Contender("bioframe", "peer", "bioframe.overlap(how='inner') on pandas, its own process (peers.py)",
                        {"tool": "bioframe", "python": sys.executable}))
    cs.append(Contender("polars-bio", "peer", "polars_bio.overlap (COITrees on DataFusion, polars in and out), "
                        "its own process (peers.py)", {"tool": "polars-bio"}))
    cs.append(Contender("pyranges", "peer", "pyranges PyRanges.join (NCLS, pandas), its own process (peers.py)",
                        {"tool": "pyranges"}))
    return {c.name: c for c in cs}


class Runner:
    def __init__(self, spark, peers_python: str | None = None):
        self.spark = spark
        self.peers_python = peers_python

    def run(self, c: Contender, op: str, lpath: Path, rpath: Path, outdir: Path, timeout: float | None):
        """Return (seconds, row count). Timing covers reading, planning and the action."""
        import giql_spark as gs

        if c.kind == "peer":
            python = c.params.get("python") or self.peers_python
            if not python:
                raise RuntimeError("no --peers-python given")
            try:
                done = subprocess.run([python, str(PEERS), c.params["tool"], op, str(lpath),
                                       str(rpath), str(outdir)], capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise RunTimeout() from None
            if done.returncode != 0:
                raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
            rec = json.loads(done.stdout.strip().splitlines()[-1])
            return rec["seconds"], rec["rows"]

        def job():
            if c.kind == "giql":
                s = gs.Session(self.spark, strategy=c.params["strategy"], bin_size=c.params.get("bin_size"),
                               tile_size=c.params.get("tile_size"))
                s.register("l", str(lpath))
                s.register("r", str(rpath))
                if op == "count":
                    return s.sql(GIQL_COUNT).collect()[0][0]
                s.sql(GIQL_PAIRS).toDF(*PAIR_COLUMNS).write.mode("overwrite").parquet(str(outdir))
                return None
            # plain Spark SQL
            self.spark.read.parquet(str(lpath)).createOrReplaceTempView("l")
            self.spark.read.parquet(str(rpath)).createOrReplaceTempView("r")
            if op == "count":
                return self.spark.sql(bin10k("COUNT(*)")).collect()[0][0]
            self.spark.sql(bin10k(BIN10K_PAIRS_SELECT)).write.mode("overwrite").parquet(str(outdir))
            return None

        t0 = time.perf_counter()
        n = spark_action(self.spark, job, timeout)
        dt = time.perf_counter() - t0
        if op == "pairs":
            n = parquet_rows(outdir)
        return dt, n


# --------------------------------------------------------------------------- report
def build_report(args, facts, invocations, results, counts, skipped, notes, load_before, load_after, started, ended,
                 contender_map, data_info) -> str:
    ops = args.ops
    lines = [
        "# Interval-join benchmark",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC (this invocation took {(ended - started).total_seconds() / 60:.1f} min)",
        "",
    ]
    for i, inv in enumerate(invocations):
        what = "Command" if i == 0 else f"Merged from `{inv.get('file')}`, command"
        code = inv.get("code") or {}
        src = (f"giql_spark at commit {code.get('commit', '?')}"
               f"{' + uncommitted src changes' if code.get('src_dirty') else ''}, run from a frozen copy"
               if code.get("snapshot") else "giql_spark code version not recorded (run from the live editable tree)")
        lines += [f"{what} (started {str(inv.get('started', '?'))[:16]} UTC; {src}; "
                  f"rows used: {', '.join(inv.get('contenders', []))}):", "", "```", inv["command"], "```", ""]
    lines += [
        "## Machine",
        "",
        *machine_lines(facts, args.driver_memory, args.shuffle_partitions, ["bioframe", "pandas", "pyarrow", "numpy"]),
        f"- load average (1/5/15 min) before: {load_before}, after: {load_after}. The machine is shared, "
        "so times are noisy; cells are medians.",
        "",
        "## Data",
        "",
        f"{args.size:,} x {args.size:,} intervals per profile, hg38 chr1-22, X, Y (real lengths), starts uniform "
        "over each chromosome in proportion to its length, left and right from different seeds. "
        "Parquet, one file per side, columns chrom, start, end (int64), name.",
        "",
    ]
    for p in args.profiles:
        lines.append(f"- `{p}`: {PROFILES[p]}; {data_info.get(p, '')}")
    lines += [
        "",
        "## Results",
        "",
        "Cells: median wall seconds over n runs, from registered/read tables to the result fully computed "
        "(count collected, or pairs written to Parquet); reading Parquet included, Spark start-up excluded. "
        "Ratios are contender time / reference time (below 1 = faster than the reference).",
        "",
    ]
    for p in args.profiles:
        lines += [f"### {p}", ""]
        head = ["contender"]
        for op in ops:
            head += [f"{op} s (n)", f"{op} vs bin10k SQL", f"{op} vs naive"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for cname in contender_map:
            row = [cname]
            any_cell = False
            for op in ops:
                cell = results.get((p, op, cname))
                if not cell:
                    reason = skipped.get((p, op, cname), "not run")
                    row += [reason, "", ""]
                    continue
                any_cell = True
                times = [t for t in cell if t is not None]
                n_timeouts = sum(1 for t in cell if t is None)
                if not times:
                    row += [f"> {args.timeout:.0f} s (timed out, {n_timeouts} run)", "", ""]
                    continue
                med = statistics.median(times)
                txt = spread(times)
                if n_timeouts:
                    txt += f" + {n_timeouts} timeout(s)"
                row.append(txt)
                for ref in ("spark sql bin10k", "spark naive"):
                    rc = results.get((p, op, ref))
                    rtimes = [t for t in (rc or []) if t is not None]
                    if ref == cname:
                        row.append("1")
                    elif rtimes:
                        row.append(fmt_ratio(med / statistics.median(rtimes)))
                    elif rc:  # reference timed out
                        row.append(f"< {med / args.timeout:.3f}")
                    else:
                        row.append("—")
            if any_cell or cname != "spark naive":
                lines.append("| " + " | ".join(row) + " |")
        cnt = {op: counts.get((p, op)) for op in ops}
        lines.append("")
        lines.append("Result rows: " + ", ".join(
            f"{op}: {', '.join(f'{v:,}' for v in sorted(c))}" for op, c in cnt.items() if c))
        lines.append("")
    lines += ["## Count verification", ""]
    lines += notes["verify"] or ["All contenders returned the same number of pairs in every (profile, op)."]
    lines += ["", "## Not run / caveats", ""]
    lines += notes["caveats"] or ["None."]
    lines += ["", "## Contenders", ""]
    for c in contender_map.values():
        lines.append(f"- **{c.name}**: {c.describe}")
    lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--profiles", default="uniform,heavy,middle")
    ap.add_argument("--ops", default="count,pairs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(REPORTS_DIR / "JOINS.md"))
    ap.add_argument("--contenders", default=None,
                    help="comma-separated subset of contender names (default: all)")
    ap.add_argument("--bin-sizes", default="50000", help="binned strategy bin sizes, one row each")
    ap.add_argument("--tile-size", type=int, default=2_000_000)
    ap.add_argument("--timeout", type=float, default=900.0, help="per-run timeout in seconds (Spark contenders)")
    ap.add_argument("--naive", default="uniform:count",
                    help="(profile:op) cells where the naive join runs, comma-separated; 'all' or 'none'")
    ap.add_argument("--naive-repeats", type=int, default=1)
    ap.add_argument("--slow", default="", help="contenders that get --slow-repeats instead of --repeats")
    ap.add_argument("--slow-repeats", type=int, default=2)
    ap.add_argument("--budget-minutes", type=float, default=None,
                    help="do not start a run past this wall time (naive's one run is always attempted)")
    ap.add_argument("--driver-memory", default="12g")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--peers-python", default=os.environ.get("GIQL_BENCH_PEERS_PYTHON"),
                    help="a Python with polars-bio and pyranges installed, for those contenders "
                         "(default $GIQL_BENCH_PEERS_PYTHON; without it they are not run)")
    ap.add_argument("--note", action="append", default=[], help="a line added to the report's caveats")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="import giql_spark from its installed tree instead of a frozen copy")
    ap.add_argument("--merge", action="append", default=[],
                    help="a previous run's .json; its runs of contenders not measured now are "
                         "included in the report (repeatable)")
    args = ap.parse_args(argv)
    args.profiles = [p for p in args.profiles.split(",") if p]
    args.ops = [o for o in args.ops.split(",") if o]
    for p in args.profiles:
        if p not in PROFILES:
            ap.error(f"unknown profile {p!r}")
    for o in args.ops:
        if o not in ("count", "pairs"):
            ap.error(f"unknown op {o!r}")
    cmdline = command_line()
    budget = Budget(args.budget_minutes)
    started = _dt.datetime.now(_dt.timezone.utc)
    load_before = load_averages()

    cmap = select_contenders(contenders([int(b) for b in args.bin_sizes.split(",") if b], args.tile_size),
                             args.contenders, ap.error)
    no_peers = [c for c, v in cmap.items() if v.kind == "peer" and not (v.params.get("python") or args.peers_python)]
    cmap = {k: v for k, v in cmap.items() if k not in no_peers}
    slow = {c.strip() for c in args.slow.split(",") if c.strip()}
    if args.naive == "all":
        naive_cells = {(p, o) for p in args.profiles for o in args.ops}
    elif args.naive == "none":
        naive_cells = set()
    else:
        naive_cells = {tuple(x.split(":")) for x in args.naive.split(",") if x}

    # Data first (not timed).
    paths, data_info = {}, {}
    for p in args.profiles:
        t0 = time.perf_counter()
        paths[p] = data_paths(p, args.size)
        w = pq.read_table(paths[p][0], columns=["start", "end"])
        widths = pa.compute.subtract(w["end"], w["start"]).to_numpy()
        data_info[p] = (f"left widths median {np.median(widths):,.0f} bp, mean {widths.mean():,.0f} bp, "
                        f"max {widths.max():,} bp")
        print(f"[data] {p}: {paths[p][0].name}, {paths[p][1].name} ({time.perf_counter() - t0:.1f}s) "
              f"{data_info[p]}", flush=True)

    code = freeze(not args.no_snapshot)
    print(f"[code] {code}", flush=True)

    spark = local_spark("local[*]", args.driver_memory, args.shuffle_partitions, app_name="giql-spark-bench")
    runner = Runner(spark, args.peers_python)
    facts = machine_facts(spark)
    print(f"[machine] {facts}", flush=True)
    tmp_root = scratch_dir("giql-bench-")

    if not args.no_warmup:
        # JIT (numba kernels in the Python workers), JVM code paths, bioframe imports.
        wl, wr = warmup_paths()
        t0 = time.perf_counter()
        for c in cmap.values():
            # count exercises every strategy's code path; pairs adds only the
            # Parquet writer, warmed once for Spark and once for pyarrow.
            for op in [o for o in args.ops if o == "count" or c.kind != "giql"]:
                out = tmp_root / "warmup"
                runner.run(c, op, wl, wr, out, None if c.name != "spark naive" else 300)
                shutil.rmtree(out, ignore_errors=True)
        print(f"[warmup] done in {time.perf_counter() - t0:.1f}s", flush=True)

    results: dict = {}
    counts: dict = {}
    run_counts: dict = {}  # (p, op) -> {contender: set(counts)}
    skipped: dict = {}
    raw: list = []
    caveats: list = []

    def n_reps(cname):
        if cname == "spark naive":
            return args.naive_repeats
        return args.slow_repeats if cname in slow else args.repeats

    def do_run(p, op, c, rep):
        out = tmp_root / f"{p}-{op}-{c.name.replace(' ', '_')}-{rep}"
        shutil.rmtree(out, ignore_errors=True)
        load = os.getloadavg()[0]
        try:
            dt, n = runner.run(c, op, *paths[p], out, args.timeout)
            status = "ok"
        except RunTimeout:
            dt, n, status = None, None, "timeout"
        except Exception as e:  # noqa: BLE001
            dt, n, status = None, None, f"error: {one_line(e)}"
        finally:
            shutil.rmtree(out, ignore_errors=True)
        raw.append({"profile": p, "op": op, "contender": c.name, "rep": rep, "seconds": dt, "rows": n,
                    "status": status, "load1": load})
        if status == "ok":
            results.setdefault((p, op, c.name), []).append(dt)
            run_counts.setdefault((p, op), {}).setdefault(c.name, set()).add(n)
            counts.setdefault((p, op), set()).add(n)
            print(f"[run] {p:8s} {op:6s} {c.name:20s} rep {rep}: {dt:8.2f}s rows={n:,} load={load:.2f}", flush=True)
        elif status == "timeout":
            results.setdefault((p, op, c.name), []).append(None)
            print(f"[run] {p:8s} {op:6s} {c.name:20s} rep {rep}: TIMEOUT > {args.timeout:.0f}s", flush=True)
        else:
            skipped[(p, op, c.name)] = "failed"
            print(f"[run] {p:8s} {op:6s} {c.name:20s} rep {rep}: {status}", flush=True)

    # Repeat-major order: every cell gets its first run before any cell gets its
    # second; the contender order is rotated each round to spread position effects.
    names = [n for n in cmap if n != "spark naive"]
    max_reps = max([n_reps(n) for n in names] + [0])
    for rep in range(max_reps):
        order = rotated(names, rep)
        for p in args.profiles:
            for op in args.ops:
                for cname in order:
                    if rep >= n_reps(cname):
                        continue
                    if budget.over():
                        skipped.setdefault((p, op, cname), "not run (budget)")
                        continue
                    do_run(p, op, cmap[cname], rep + 1)
        if rep == 0 and "spark naive" in cmap:
            # the baseline, where asked, right after the first round
            for p in args.profiles:
                for op in args.ops:
                    if (p, op) not in naive_cells:
                        skipped[(p, op, "spark naive")] = "not run"
                        continue
                    for nrep in range(args.naive_repeats):
                        do_run(p, op, cmap["spark naive"], nrep + 1)
    if max_reps == 0 and "spark naive" in cmap:
        for p, op in sorted(naive_cells):
            do_run(p, op, cmap["spark naive"], 1)

    first_error: dict = {}
    for r in raw:
        if r["status"].startswith("error"):
            first_error.setdefault(r["contender"], r["status"])
    for c, err in first_error.items():
        caveats.append(f"- {c}: runs failed; first error: {err[:300]}")

    # Runs of other contenders from earlier invocations (--merge).
    expected = {c: n_reps(c) for c in cmap}
    display = dict(cmap)
    invocations = [{"command": cmdline, "started": started.isoformat(), "code": code,
                    "contenders": list(cmap)}]
    full = contenders([int(b) for b in args.bin_sizes.split(",") if b], args.tile_size)
    # Peers run by --peers-python (bioframe runs in this interpreter).
    external_peers = {n for n, c in full.items() if c.kind == "peer" and not c.params.get("python")}
    for mpath in args.merge:
        prior = json.loads(Path(mpath).read_text())
        toks = prior.get("command", "").split()
        prior_size = int(toks[toks.index("--size") + 1]) if "--size" in toks else None
        if prior_size != args.size:
            ap.error(f"{mpath} was run with --size {prior_size}, not {args.size}")
        default_reps = int(toks[toks.index("--repeats") + 1]) if "--repeats" in toks else 3
        prior_reps = prior.get("repeats") or {}
        kept, dropped, errors = set(), set(), {}
        for rec in prior["runs"]:
            c, p, op = rec["contender"], rec["profile"], rec["op"]
            if rec.get("merged_from"):
                continue  # only a run's own records
            if c in cmap:
                dropped.add(c)
                continue
            if p not in args.profiles or op not in args.ops:
                continue
            kept.add(c)
            raw.append(dict(rec, merged_from=os.path.relpath(mpath)))
            if rec["status"] == "ok":
                results.setdefault((p, op, c), []).append(rec["seconds"])
                run_counts.setdefault((p, op), {}).setdefault(c, set()).add(rec["rows"])
                counts.setdefault((p, op), set()).add(rec["rows"])
            elif rec["status"] == "timeout":
                results.setdefault((p, op, c), []).append(None)
            else:
                errors.setdefault((c, p, op), []).append(rec["status"])
                skipped[(p, op, c)] = "failed"
            expected[c] = prior_reps.get(c, 1 if c == "spark naive" else default_reps)
        for (c, p, op), errs in sorted(errors.items()):
            caveats.append(f"- {c}, {p}/{op}: {len(errs)} run(s) failed in {os.path.relpath(mpath)}: {errs[0][:200]}")
        if dropped:
            caveats.append(f"- {os.path.relpath(mpath)}: its runs of {', '.join(sorted(dropped))} are not used; "
                           "this invocation re-measured them.")
        invocations.append({"command": prior.get("command", "?"), "started": prior.get("started"),
                            "code": prior.get("code"), "contenders": sorted(kept), "file": os.path.relpath(mpath)})
        for c in kept:
            display.setdefault(c, Contender(c, "merged", "from a merged run"))
        if kept & external_peers:
            # The peers' versions were recorded by the run that measured them.
            caveats += [f"{line} (from {os.path.relpath(mpath)})" for line in prior.get("caveats", [])
                        if line.startswith("- peers ran with")]
    order = [c for c in full if c in display] + [c for c in display if c not in full]
    display = {c: full.get(c, display[c]) for c in order}

    # Verify counts.
    verify = []
    for p in args.profiles:
        per_profile = set()
        for op in args.ops:
            rc = run_counts.get((p, op), {})
            distinct = set().union(*rc.values()) if rc else set()
            per_profile |= distinct
            if len(distinct) > 1:
                detail = "; ".join(f"{k}: {', '.join(f'{v:,}' for v in sorted(s))}" for k, s in rc.items())
                print(f"WARNING: count mismatch {p}/{op}: {detail}", flush=True)
                verify.append(f"- **MISMATCH** {p}/{op}: {detail}")
        if len(per_profile) > 1 and not any(f" {p}/" in v for v in verify):
            msg = f"- **MISMATCH** {p}: count and pairs disagree: {sorted(per_profile)}"
            print(f"WARNING: {msg}", flush=True)
            verify.append(msg)

    # What was not run, or run fewer times than asked.
    naive_cells_run = sorted(f"{p}/{o}" for (p, o, c) in results if c == "spark naive")
    if "spark naive" in display:
        rest = [f"{p}/{o}" for p in args.profiles for o in args.ops if f"{p}/{o}" not in naive_cells_run]
        caveats.append(f"- spark naive: measured only for {', '.join(naive_cells_run) or 'nothing'} "
                       f"({expected.get('spark naive', 1)} run, per-run timeout {args.timeout:.0f} s); "
                       + (f"not run for {', '.join(rest)}." if rest else "run for every cell."))
    for c in display:
        if c == "spark naive":
            continue
        short = []
        for p in args.profiles:
            for op in args.ops:
                n_ok = sum(1 for t in results.get((p, op, c), []) if t is not None)
                if n_ok < expected.get(c, args.repeats):
                    n_err = sum(1 for r in raw if (r["profile"], r["op"], r["contender"]) == (p, op, c)
                                and r["status"].startswith("error"))
                    why = f"{n_err} failed" if n_err else "not started (time budget)"
                    short.append(f"{p}/{op} {n_ok} of {expected.get(c, args.repeats)} ({why})")
        if short:
            caveats.append(f"- {c}: fewer runs than asked: {'; '.join(short)}.")
    asked = {c: expected.get(c, args.repeats) for c in display if c != "spark naive"}
    if len(set(asked.values())) > 1:
        caveats.append("- repeats asked differ by row: " + ", ".join(f"{c} {n}" for c, n in asked.items()) + ".")
    if len(cmap) < len(full):
        caveats.append(f"- measured in this invocation: {', '.join(cmap)}.")
    peers = [c for c in cmap.values() if c.kind == "peer" and not c.params.get("python")]
    if no_peers:
        caveats.append(f"- no --peers-python, so not compared: {', '.join(no_peers)}.")
    if peers:
        caveats.append(f"- peers ran with {args.peers_python}: "
                       f"{peers_versions(args.peers_python)}; the time is measured "
                       "inside their process (reading, join, write), imports excluded.")
    caveats += [f"- {n}" for n in args.note]

    shutil.rmtree(tmp_root, ignore_errors=True)
    ended = _dt.datetime.now(_dt.timezone.utc)
    load_after = load_averages()
    invocations[0]["ended"] = ended.isoformat()
    report = build_report(args, facts, invocations, results, counts, skipped, {"verify": verify, "caveats": caveats},
                          load_before, load_after, started, ended, display, data_info)
    write_report(Path(args.out), report,
                 {"command": cmdline, "machine": facts, "code": code, "repeats": expected, "runs": raw,
                  "verify": verify, "caveats": caveats,
                  "invocations": invocations, "started": started.isoformat(), "ended": ended.isoformat()})
    print()
    print(report)
    spark.stop()
    release(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
