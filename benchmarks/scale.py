#!/usr/bin/env python
"""Scale benchmark: interval joins from 1M to 100M rows a side, giql-spark against the
single-node libraries and hand-written Spark SQL, time and peak memory.

    PYTHONPATH=src python benchmarks/scale.py --peers-python peers/bin/python \\
        --out benchmarks/reports/SCALE.md

Data (``harness/data.py``'s generator, hg38-shaped, 0-based half-open, sorted by chromosome and
start): uniform at 1M, 10M and 100M rows a side, heavy and middle at 10M. The 100M files
are written a chromosome at a time, so generating them needs no more memory than chr1.

Ops: ``count`` (``SELECT COUNT(*) ... INTERSECTS``) and ``pairs`` (every overlapping pair's
chrom, start, end, start_, end_ written to Parquet); and, with ``--ops``, the per-row
operations ``count_overlaps``, ``coverage`` and ``nearest`` (each left row with its count /
covered bases / nearest right row, k = 1, written to Parquet: ``gs.count_overlaps`` /
``gs.coverage`` / ``gs.nearest`` of the registered tables, polars-bio's functions of the same
names, bioframe's and its ``closest``), checked by the rows written and the sum of the count /
coverage / distance column. ``1M unsorted`` and ``10M unsorted`` are the 1M and 10M rows in a
random order.

Contenders, each in its own process per data set (Spark contenders: one local[2] Spark
for all rounds of a data set, warmed up untimed; peers: one interpreter per run):

- ``giql auto``: giql-spark with nothing forced; ``giql jvm_broadcast``, ``giql jvm_sweep``, ``giql jvm_merge``,
  ``giql binned``: one strategy forced (its sizes still chosen by the cost model);
- ``spark sql bin10k``: hand-written binned Spark SQL (10 kb bins, canonical-bin rule);
- ``spark floor``: both sides read and aggregated, the least a Spark join costs; for a per-row
  op, the left table read and written to Parquet with a constant column added, the least a
  Spark operation writing one row per left row costs, written by Spark's Parquet writer; ``giql floor``
  the same written by giql-spark's (``Session.write``'s); ``giql auto spark-writer``: ``giql auto``
  with its results written by Spark's Parquet writer (``spark.giql.parquet.writer=spark``);
- ``polars-bio``: lazy ``scan_parquet`` marked zero-based, ``overlap`` to a LazyFrame (DataFusion
  target partitions ``--polars-bio-partitions``, 2 by default: the cores Spark gets),
  ``select(pl.len())`` / ``sink_parquet`` (as its documentation runs it);
- ``pyranges``: ``PyRanges.join`` on pandas frames read with ``pd.read_parquet``;
- ``bioframe``: ``bioframe.overlap(..., how="inner")`` on pandas frames.

Peak RSS is the whole process tree's (the JVM and Python workers of a Spark contender),
sampled every 0.1 s. A Spark process's peak covers all of its rounds of a data set. A peer
that runs out of memory or time is reported as such. Time runs from registering (reading)
the files to the count collected or the last pair written.
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
import tempfile
import time
from pathlib import Path

from harness.data import DATA_DIR, HG38, PROFILE_SEED, PROFILES, REPORTS_DIR, ROW_GROUP, data_paths, generate, \
    scratch_dir, warmup_paths
from harness.machine import machine_facts, peers_versions
from harness.peers import PER_ROW  # the per-row ops and their columns
from harness.report import command_line, write_report
from harness.rss import TreePeak, run_measured
from harness.snapshot import freeze, release

HERE = Path(__file__).resolve().parent

DATA = {  # name -> (profile, rows a side, row order)
    "1M": ("uniform", 1_000_000, "sorted"), "10M": ("uniform", 10_000_000, "sorted"),
    "100M": ("uniform", 100_000_000, "sorted"),
    "10M heavy": ("heavy", 10_000_000, "sorted"), "10M middle": ("middle", 10_000_000, "sorted"),
    # the same rows as 1M / 10M in a random order: a table nobody sorted
    "1M unsorted": ("uniform", 1_000_000, "random"), "10M unsorted": ("uniform", 10_000_000, "random"),
}
SIZES = {"1M": 1e6, "10M": 1e7, "100M": 1e8}
SPARK = {
    "giql auto": ("giql", {}),
    "giql jvm_broadcast": ("giql", {"strategy": "jvm_broadcast"}),
    "giql jvm_sweep": ("giql", {"strategy": "jvm_sweep"}),
    "giql jvm_merge": ("giql", {"strategy": "jvm_merge"}),
    "giql binned": ("giql", {"strategy": "binned"}),
    "spark sql bin10k": ("sql", {}),
    "spark floor": ("floor", {"writer": "spark"}),
    # the same with giql-spark's Parquet writer (Session.write's), and giql with Spark's
    "giql floor": ("floor", {"writer": "giql"}),
    "giql auto spark-writer": ("giql", {"writer": "spark"}),
}
PEERS = ("polars-bio", "pyranges", "bioframe")
# ops: the join's pair count, its pairs written, and two per-row operations written to Parquet
OP_TITLES = {"count": "count", "pairs": "pairs written", "count_overlaps": "count_overlaps written",
             "coverage": "coverage written", "nearest": "nearest written"}
JOIN_OPS = ("count", "pairs")


# --------------------------------------------------------------------------- data
def chunked_paths(profile: str, size: int, order: str = "sorted") -> tuple[Path, Path]:
    """Like ``harness.data.data_paths`` but written a chromosome at a time (for 100M rows)."""
    import numpy as np
    import pyarrow.parquet as pq

    if size <= 10_000_000:
        return data_paths(profile, size, order)
    if order != "sorted":
        raise ValueError("100M rows are generated sorted only")
    out = []
    for side, offset in (("left", 1), ("right", 2)):
        p = DATA_DIR / f"{profile}_{size}_{side}.parquet"
        if not p.exists():
            rng = np.random.default_rng(PROFILE_SEED[profile] + offset)
            lengths = np.array(list(HG38.values()), dtype=np.int64)
            per_chrom = rng.multinomial(size, lengths / lengths.sum())
            tmp, writer, first = p.with_suffix(".tmp"), None, 0
            try:
                for i, (chrom, n) in enumerate(zip(HG38, per_chrom)):
                    t = generate(profile, int(n), int(rng.integers(2**31)), "l" if side == "left" else "r",
                                 chroms={chrom: HG38[chrom]})
                    if first:  # names stay unique across chromosomes
                        t = t.set_column(3, "name", _renamed(t, side, first))
                    first += int(n)
                    writer = writer or pq.ParquetWriter(tmp, t.schema)
                    writer.write_table(t, row_group_size=ROW_GROUP)
                    print(f"[data] {p.name}: {chrom} {int(n):,} rows", flush=True)
            finally:
                if writer:
                    writer.close()
            tmp.rename(p)
        out.append(p)
    return out[0], out[1]


def _renamed(t, side: str, first: int):
    import pyarrow as pa

    prefix = "l" if side == "left" else "r"
    return pa.array([f"{prefix}{first + i}" for i in range(t.num_rows)], pa.string())


# --------------------------------------------------------------------------- runs
def run_spark(name: str, files: tuple[Path, Path], ops: list[str], args, outdir: Path) -> tuple[list[dict], int]:
    kind, params = SPARK[name]
    cfg = {"kind": kind, "params": params, "ops": ops, "repeats": args.repeats, "timeout": args.timeout,
           "left": str(files[0]), "right": str(files[1]), "warmup": [str(p) for p in warmup_paths()],
           "outdir": str(outdir), "driver_memory": args.driver_memory,
           "shuffle_partitions": args.shuffle_partitions}
    cfg_path = outdir / "config.json"
    outdir.mkdir(parents=True, exist_ok=True)
    cfg_path.write_text(json.dumps(cfg))
    runs = []
    deadline = args.timeout * args.repeats * len(ops) + 600
    proc = subprocess.Popen([sys.executable, str(HERE / "scale_spark.py"), str(cfg_path)],
                            stdout=subprocess.PIPE, stderr=None if args.verbose else subprocess.DEVNULL, text=True)
    with TreePeak(proc.pid) as peak:
        t0 = time.monotonic()
        for line in proc.stdout:
            rec = json.loads(line)
            if "op" in rec:
                runs.append(rec)
                shown = f"{rec['seconds']:.2f}s rows={rec['rows']:,}" if "seconds" in rec else rec["error"]
                print(f"[run] {name:20s} {rec['op']:6s} round {rec['round']}: {shown}", flush=True)
            if time.monotonic() - t0 > deadline:
                proc.kill()
                break
        proc.wait()
    if proc.returncode and not runs:
        runs.append({"op": ops[0], "round": 0, "error": f"process exited {proc.returncode}"})
    return runs, peak.bytes


def run_peer(tool: str, files: tuple[Path, Path], ops: list[str], args, outdir: Path) -> tuple[list[dict], int]:
    python = sys.executable if tool == "bioframe" else args.peers_python
    runs, worst = [], 0
    failed: set = set()
    for r in range(args.repeats):
        for op in ops:
            if op in failed:
                continue
            target = outdir / f"{tool}-{op}-{r}"
            done = run_measured([python, str(HERE / "harness" / "peers.py"), tool, op, str(files[0]),
                                 str(files[1]), str(target)], timeout=args.timeout)
            err = f"timed out after {args.timeout:.0f} s" if done.timed_out else done.stderr
            worst = max(worst, done.rss)
            shutil.rmtree(target, ignore_errors=True)
            rec = {"op": op, "round": r, "rss": done.rss}
            if done.returncode == 0:
                rec.update(json.loads(done.stdout.strip().splitlines()[-1]))
            else:
                oom = done.returncode in (-9, 137) or "MemoryError" in err
                rec["error"] = ("out of memory (killed)" if oom else (err.strip().splitlines() or ["?"])[-1][:300])
                failed.add(op)
            shown = f"{rec['seconds']:.2f}s rows={rec['rows']:,}" if "seconds" in rec else rec["error"]
            print(f"[run] {tool:20s} {op:6s} round {r}: {shown} rss={done.rss / 2**30:.1f}G", flush=True)
            runs.append(rec)
    return runs, worst


# --------------------------------------------------------------------------- report
def median(runs: list[dict], op: str) -> float | None:
    xs = [r["seconds"] for r in runs if r["op"] == op and "seconds" in r]
    return statistics.median(xs) if xs else None


def cell(runs: list[dict], op: str) -> str:
    xs = [r["seconds"] for r in runs if r["op"] == op and "seconds" in r]
    errs = [r["error"] for r in runs if r["op"] == op and "error" in r]
    if not xs:
        return f"— ({errs[0][:80]})" if errs else ""
    s = f"{statistics.median(xs):.2f} ({len(xs)}: {min(xs):.2f}–{max(xs):.2f})"
    return s + (f", {len(errs)} failed" if errs else "")


def render(rec: dict, png: str = "SCALE.png") -> str:
    lines = [
        ("# Per-row operations: " + ", ".join(op for op in PER_ROW) if all(
            op in PER_ROW for d in rec["results"].values() for op in ops_of(d))
         else "# Scale benchmark: interval joins, 1M to 100M rows a side"), "",
        f"Date: {rec['started'][:16]} UTC; the run took {rec['minutes']:.0f} min. Made by `benchmarks/scale.py`; "
        f"raw runs in the `.json` next to this file, plot in `{png}`.", "",
        "```", rec["command"], "```", "",
        f"giql_spark at commit {rec['code'].get('commit', '?')}, run from a frozen copy. Machine: "
        f"{rec['machine']['cores']} cores ({rec['machine']['cpu']}), {rec['machine']['memory_gib']} GiB, shared "
        f"and noisy (1-minute load average {rec['load_before']:.1f} at the start, "
        f"{'%.1f at the end' % rec['load_after'] if 'load_after' in rec else 'not taken at the end: the run was cut short'}"
        f"); Spark {rec['machine']['spark']} local[2], driver memory {rec['args']['driver_memory']}; "
        f"{rec['machine']['java']}; peers: {rec['peers_versions']}; polars-bio with "
        f"{rec['args'].get('polars_bio_partitions', 1)} DataFusion target partition(s).", "",
        "Cells: median wall seconds (runs: min–max). `RSS`: peak resident memory of the contender's whole process "
        "tree in GiB (Spark: the driver, its JVM and Python workers, over all rounds of the data set; a peer: its "
        "largest run). Every peer runs as its own documentation shows (see the module docstring of `scale.py` and "
        "`peers.py`).", "",
    ]
    for data in rec["data_order"]:
        d = rec["results"].get(data)
        if not d:
            continue
        ops = ops_of(d)
        order = "" if d.get("order", "sorted") == "sorted" else f", rows in {d['order']} order"
        lines += [f"## {data} × {data.split()[0]} ({d['profile']}: {PROFILES[d['profile']]}{order})", ""]
        if any(op in JOIN_OPS for op in ops):
            lines += [f"Pairs: {d.get('pairs') or pair_counts(d)}", ""]
        if any(op in PER_ROW for op in ops):
            lines += [f"Per-row results: {per_row_totals(d)}", ""]
        lines += ["| contender | " + " | ".join(f"{OP_TITLES[op]} s" for op in ops) + " | RSS GiB | "
                  + " | ".join(f"{op} vs polars-bio" for op in ops) + " |",
                  "|---|" + "---|" * len(ops) + "---:|" + "---:|" * len(ops)]
        pb = d["contenders"].get("polars-bio", {}).get("runs", [])
        for name, c in d["contenders"].items():
            ratios = []
            for op in ops:
                a, b = median(c["runs"], op), median(pb, op)
                ratios.append(f"{a / b:.2f}" if a and b else "")
            lines.append(f"| {name} | " + " | ".join(cell(c["runs"], op) for op in ops)
                         + f" | {c['rss'] / 2**30:.1f} | " + " | ".join(ratios) + " |")
        lines.append("")
    lines += ["## Targets", ""]
    lines += [f"- {t}" for t in rec["targets"]] or ["- none of the targets applies to the data sets and ops run"]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in rec["notes"]] + [""]
    return "\n".join(lines)


def ops_of(d: dict) -> list[str]:
    """The ops some contender ran on a data set, in OP_TITLES' order."""
    ran = {r["op"] for c in d["contenders"].values() for r in c["runs"]}
    return [op for op in OP_TITLES if op in ran]


def per_row_totals(d: dict) -> str:
    """Whether every contender found the same per-row results: the rows written and the sum of
    the count (coverage) column, per op."""
    out = []
    for op, column in PER_ROW.items():
        got = {(r["rows"], r.get("total")) for n, c in d["contenders"].items() for r in c["runs"]
               if r["op"] == op and r.get("rows") is not None
               and SPARK.get(n, ("",))[0] != "floor"}  # a floor writes a constant, not the op's answer
        if len(got) == 1:
            rows, total = got.pop()
            out.append(f"{op}: {rows:,} rows, `{column}` summing to {total:,}, the same for every contender")
        elif got:
            out.append(f"{op}: **MISMATCH** (rows, sum): {sorted(got, key=str)}")
    return "; ".join(out) or "none finished"


def pair_counts(d: dict) -> str:
    """Whether every contender that finished found the same pairs."""
    counts = {r["rows"] for n, c in d["contenders"].items() for r in c["runs"]
              if r.get("rows") is not None and SPARK.get(n, ("",))[0] != "floor"  # a floor counts rows read, not pairs
              and r["op"] in JOIN_OPS}
    return (f"{counts.pop():,}, the same for every contender and op that finished" if len(counts) == 1
            else f"**MISMATCH**: {sorted(counts)}" if counts else "none finished")


def targets(rec: dict) -> list[str]:
    out = []

    def ratio(data, op, name="giql auto"):
        d = rec["results"].get(data)
        if not d:
            return None
        a = median(d["contenders"].get(name, {}).get("runs", []), op)
        b = median(d["contenders"].get("polars-bio", {}).get("runs", []), op)
        return (a, b, a / b) if a and b else None

    for data, op, limit, what in (("10M", "count", 1.0, "10M × 10M count no slower than polars-bio"),
                                  ("10M", "pairs", 1.5, "10M × 10M pairs written within 1.5× of polars-bio"),
                                  ("1M", "count", 3.0, "1M × 1M count within 3× of polars-bio"),
                                  ("10M", "count_overlaps", 1.5,
                                   "10M × 10M count_overlaps within 1.5× of polars-bio"),
                                  ("10M", "coverage", 1.5, "10M × 10M coverage within 1.5× of polars-bio"),
                                  ("10M", "nearest", 2.0, "10M × 10M nearest within 2× of polars-bio"),
                                  ("10M unsorted", "count", 1.5,
                                   "10M × 10M unsorted count within 1.5× of polars-bio")):
        if op not in ops_of(rec["results"].get(data, {"contenders": {}})):
            continue  # not run here
        r = ratio(data, op)
        out.append(f"{what}: " + (f"giql auto {r[0]:.2f} s, polars-bio {r[1]:.2f} s, ratio {r[2]:.2f} — "
                                  f"{'met' if r[2] <= limit else 'missed'}" if r else "not measured"))
    d = rec["results"].get("100M")
    if d:
        c = d["contenders"].get("giql auto", {}).get("runs", [])
        ran = {r["op"] for r in c}
        done = {op: median(c, op) for op in ("count", "pairs")}
        out.append("100M × 100M completes: " + ", ".join(
            f"{op} {'%.1f s' % v if v else 'did not complete' if op in ran else 'not run'}"
            for op, v in done.items()))
    return out


def plot(rec: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ran = {r["op"] for d in rec["results"].values() for c in d["contenders"].values() for r in c["runs"]}
    ops = [op for op in OP_TITLES if op in ran] or list(JOIN_OPS)
    fig, axes = plt.subplots(1, len(ops), figsize=(5.5 * len(ops), 4.5), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, op in zip(axes, ops):
        names = sorted({n for d in SIZES if d in rec["results"] for n in rec["results"][d]["contenders"]})
        for name in names:
            xs, ys = [], []
            for d, n in SIZES.items():
                c = rec["results"].get(d, {}).get("contenders", {}).get(name)
                m = median(c["runs"], op) if c else None
                if m:
                    xs.append(n)
                    ys.append(m)
            if xs:
                ax.plot(xs, ys, marker="o", label=name, lw=2.5 if name == "giql auto" else 1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows a side (uniform)")
        ax.set_title("count" if op == "count" else f"{OP_TITLES[op]} to Parquet")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("wall seconds (median)")
    axes[-1].legend(fontsize=8)
    fig.suptitle("Interval join time against size, 2 cores (missing points: out of memory or time)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="1M,10M,10M heavy,10M middle,100M", help="data sets, comma-separated")
    ap.add_argument("--contenders", default=",".join(list(SPARK) + list(PEERS)))
    ap.add_argument("--only", action="append", default=[],
                    help="'DATA=contender,contender' limits a data set's contenders (e.g. '100M=giql auto')")
    ap.add_argument("--ops", default="count,pairs")
    ap.add_argument("--ops-for", action="append", default=[],
                    help="'DATA=op,op' limits a data set's ops (e.g. '100M=count')")
    ap.add_argument("--repeats-for", action="append", default=[],
                    help="'DATA=N' sets a data set's rounds (e.g. '100M=1')")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=900.0, help="per run, seconds")
    ap.add_argument("--driver-memory", default="12g")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--polars-bio-partitions", type=int, default=2,
                    help="DataFusion target partitions for polars-bio (its default is 1): the cores Spark gets")
    ap.add_argument("--peers-python", default=os.environ.get("GIQL_BENCH_PEERS_PYTHON", sys.executable))
    ap.add_argument("--out", default=str(REPORTS_DIR / "SCALE.md"))
    ap.add_argument("--render", help="only rewrite --out (and the PNG) from this raw .json")
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.render:
        rec = json.loads(Path(args.render).read_text())
        rec["notes"] = rec.get("notes", []) + list(args.note)
        rec["targets"] = targets(rec)
        Path(args.render).write_text(json.dumps(rec, indent=1, default=str) + "\n")  # the notes stay with the runs
        out.write_text(render(rec, out.with_suffix(".png").name))
        plot(rec, out.with_suffix(".png"))
        return 0

    started = _dt.datetime.now(_dt.timezone.utc)
    t_start = time.monotonic()
    # peers.py reads it; the same 2 cores as Spark's local[2]
    os.environ["GIQL_BENCH_POLARS_BIO_PARTITIONS"] = str(args.polars_bio_partitions)
    code = freeze(root=Path(tempfile.mkdtemp(prefix="giql-scale-")))
    facts = machine_facts()
    only = {k: v.split(",") for k, v in (o.split("=", 1) for o in args.only)}
    ops_for = {k: v.split(",") for k, v in (o.split("=", 1) for o in args.ops_for)}
    repeats_for = {k: int(v) for k, v in (o.split("=", 1) for o in args.repeats_for)}
    wanted = args.contenders.split(",")
    ops = args.ops.split(",")
    rec = {"command": command_line("PYTHONPATH=src python"),
           "started": started.isoformat(), "code": code, "machine": facts,
           "peers_versions": peers_versions(args.peers_python, pandas=False), "load_before": os.getloadavg()[0],
           "args": {"driver_memory": args.driver_memory, "repeats": args.repeats, "timeout": args.timeout,
                    "polars_bio_partitions": args.polars_bio_partitions},
           "data_order": args.data.split(","), "results": {}, "notes": list(args.note)}
    raw = out.with_suffix(".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_root = scratch_dir("giql-scale-")
    for data in rec["data_order"]:
        profile, size, order = DATA[data]
        files = chunked_paths(profile, size, order)
        d = rec["results"][data] = {"profile": profile, "rows": size, "order": order, "contenders": {}}
        run_args = argparse.Namespace(**{**vars(args), "repeats": repeats_for.get(data, args.repeats)})
        for name in only.get(data, wanted):
            run = run_spark if name in SPARK else run_peer
            runs, rss = run(name, files, ops_for.get(data, ops), run_args,
                            tmp_root / f"{data}-{name}".replace(" ", "_"))
            d["contenders"][name] = {"runs": runs, "rss": rss}
            rec["minutes"] = (time.monotonic() - t_start) / 60
            raw.write_text(json.dumps(rec, indent=1, default=str) + "\n")  # partial results survive a kill
        d["pairs"] = pair_counts(d)
    rec["load_after"] = os.getloadavg()[0]
    rec["minutes"] = (time.monotonic() - t_start) / 60
    rec["targets"] = targets(rec)
    write_report(out, render(rec, out.with_suffix(".png").name), rec)
    plot(rec, out.with_suffix(".png"))
    print(render(rec))
    shutil.rmtree(tmp_root, ignore_errors=True)
    release(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
