#!/usr/bin/env python
"""Interval-join optimizer benchmark: the strategy giql-spark picks against every strategy forced.

For each data profile the same count query,

    SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval

runs once per forced strategy (``Session(spark, strategy=...)``, binned at
several bin sizes) and once with no strategy set, so the planner chooses.
Regret is the chosen run's median time over the fastest forced median; the
planning share is the time ``session.sql(query)`` takes to return its lazy
DataFrame (statistics included) over the whole run.

Example::

    python benchmarks/optimizer.py --repeats 3 --budget-minutes 60

See benchmarks/README.md for the profiles and how the timing is done.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from harness.data import (
    DATA_DIR,
    HG38,
    PROFILES as WIDTH_PROFILES,
    REPORTS_DIR,
    data_paths,
    generate,
    warmup_paths,
    write_parquet,
)
from harness.machine import load_averages, machine_facts
from harness.queries import GIQL_COUNT
from harness.report import command_line, fmt_s, machine_lines, one_line, spread, write_report
from harness.rounds import Budget, rotated
from harness.snapshot import freeze, release
from harness.spark import RunTimeout, collect_garbage, local_spark, spark_action

PROFILES = {
    "uniform": f"hg38, {WIDTH_PROFILES['uniform']}",
    "heavy": f"hg38, {WIDTH_PROFILES['heavy']}",
    "middle": f"hg38, {WIDTH_PROFILES['middle']}",
    "small-large": "hg38, widths uniform 100-2000 bp; left 1,000 intervals, right --large-size intervals",
    "one-chrom-skew": "hg38, 90% of each side on chr1, the other 10% over chr2-chrY in proportion to length; "
                      "widths uniform 100-2000 bp",
    "contigs-10k": "10,000 contigs contig_00001..contig_10000, lengths lognormal (median 300 kb, sigma 0.5, "
                   "clipped to [20 kb, 3 Mb]); widths uniform 100-2000 bp",
}
SEED = {"small-large": 4000, "one-chrom-skew": 5000, "contigs-10k": 6000}
SMALL_SIDE = 1_000
TARGET_REGRET = 1.15
TARGET_PLANNING_PCT = 5.0
OPTIMIZER = "optimizer"
#: The optimizer again, with the files' statistics already cached by an untimed planning just before.
OPTIMIZER_CACHED = "optimizer, statistics cached"
CHOOSERS = (OPTIMIZER, OPTIMIZER_CACHED)
#: How the report names each chooser row.
STATISTICS = {OPTIMIZER: "cold", OPTIMIZER_CACHED: "cached"}


# --------------------------------------------------------------------------- data
def contig_sizes() -> dict[str, int]:
    rng = np.random.default_rng(SEED["contigs-10k"])
    lengths = np.clip(np.round(rng.lognormal(np.log(300_000), 0.5, size=10_000)), 20_000, 3_000_000)
    return {f"contig_{i + 1:05d}": int(x) for i, x in enumerate(lengths)}


def profile_paths(profile: str, size: int, large_size: int) -> tuple[Path, Path]:
    """Parquet files of one profile (generated once, then reused)."""
    if profile in ("uniform", "heavy", "middle"):
        return data_paths(profile, size)  # shared with joins.py
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    if profile == "small-large":
        sides = (("left", SMALL_SIDE, f"{SMALL_SIDE}x{large_size}"), ("right", large_size, f"{SMALL_SIDE}x{large_size}"))
    else:
        sides = (("left", size, str(size)), ("right", size, str(size)))
    chroms, weights = None, None
    if profile == "one-chrom-skew":
        chroms = HG38
        rest = np.array([v for c, v in HG38.items() if c != "chr1"], dtype=float)
        weights = [0.9] + list(0.1 * rest / rest.sum())
    elif profile == "contigs-10k":
        chroms = contig_sizes()
    out = []
    for i, (side, n, tag) in enumerate(sides, 1):
        p = DATA_DIR / f"{profile}_{tag}_{side}.parquet"
        if not p.exists():
            write_parquet(generate("uniform", n, SEED[profile] + i, "l" if side == "left" else "r",
                                   chroms=chroms, weights=weights), p)
        out.append(p)
    return out[0], out[1]


def describe_data(lpath: Path, rpath: Path) -> dict:
    """Rows, chromosomes, widths, and the naive join's candidate pairs (same-chromosome pairs)."""
    info = {}
    per_chrom = []
    for side, p in (("left", lpath), ("right", rpath)):
        t = pq.read_table(p, columns=["chrom", "start", "end"])
        w = pc.subtract(t["end"], t["start"]).to_numpy()
        vc = pc.value_counts(t["chrom"]).to_pylist()
        per_chrom.append({d["values"]: d["counts"] for d in vc})
        info[side] = {"rows": t.num_rows, "chroms": len(vc), "width_median": float(np.median(w)),
                      "width_mean": float(w.mean()), "width_max": int(w.max()),
                      "top_chrom_share": max(d["counts"] for d in vc) / t.num_rows,
                      "bytes": p.stat().st_size}
    info["same_chrom_pairs"] = int(sum(n * per_chrom[1].get(c, 0) for c, n in per_chrom[0].items()))
    return info


# --------------------------------------------------------------------------- contenders
@dataclass
class Contender:
    name: str
    options: dict = field(default_factory=dict)  # Session keyword arguments; empty for the optimizer


def human_bp(n: int) -> str:
    for div, unit in ((1_000_000, "M"), (1_000, "k")):
        if n >= div and n % (div // 10) == 0:
            return f"{n / div:g}{unit}"
    return str(n)


# Every strategy a run can force: the Python-worker and Spark-SQL ones, and the JVM operators.
FORCEABLE = ("broadcast", "binned", "sweep", "naive", "jvm_broadcast", "jvm_sweep", "jvm_merge")


def contenders(strategies: list[str], bin_sizes: list[int], tile_sizes: list[int]) -> dict[str, Contender]:
    cs = []
    for s in strategies:
        if s == "binned":
            cs += [Contender(f"binned {human_bp(b)}", {"strategy": "binned", "bin_size": b}) for b in bin_sizes]
        elif s == "sweep":
            cs += [Contender(f"sweep {human_bp(t)}", {"strategy": "sweep", "tile_size": t}) for t in tile_sizes]
        else:
            cs.append(Contender(s, {"strategy": s}))
    cs += [Contender(OPTIMIZER, {}), Contender(OPTIMIZER_CACHED, {})]
    return {c.name: c for c in cs}


def choice_label(choice: dict | None) -> str:
    if not choice:
        return "unknown"
    p = dict(choice.get("params", {}))
    name = choice["strategy"]
    main_param = {"binned": "bin_size", "sweep": "tile_size"}.get(name)
    if main_param and isinstance(p.get(main_param), int):
        name += f" {human_bp(p.pop(main_param))}"
    extra = ", ".join(f"{k}={v}" for k, v in p.items())
    return name + (f" ({extra})" if extra else "")


# `    strategy: binned (bin_size=100000) — reason...`; the reason may itself hold parentheses.
_STRATEGY_LINE = re.compile(r"^\s*strategy:\s*(?P<name>[A-Za-z][\w-]*)\s*(?:\((?P<params>[^()]*)\))?\s*(?:[—-]+\s*(?P<reason>.*))?$")
_JOIN_HEADER = re.compile(r"^\s*\[\d+\]\s*interval join", re.IGNORECASE)


def parse_choice(explain: str) -> dict | None:
    """The strategy of the first interval join in ``Session.explain`` text.

    Looks for the first ``strategy:`` line after an ``[N] interval join``
    header (any ``strategy:`` line if there is no header); other lines, such
    as per-strategy cost estimates, are ignored.
    """
    lines = explain.splitlines()
    start = next((i for i, ln in enumerate(lines) if _JOIN_HEADER.match(ln)), None)
    for ln in lines[(start + 1 if start is not None else 0):]:
        if start is not None and re.match(r"^\s*\[\d+\]", ln):
            break  # the next operator
        m = _STRATEGY_LINE.match(ln)
        if not m:
            continue
        params = {}
        for kv in (m.group("params") or "").split(","):
            if "=" in kv:
                k, v = (x.strip() for x in kv.split("=", 1))
                try:
                    params[k] = int(v.replace("_", ""))
                except ValueError:
                    params[k] = v
        return {"strategy": m.group("name"), "params": params, "reason": (m.group("reason") or "").strip()}
    return None


def join_block(explain: str) -> list[str]:
    """The interval-join part of ``Session.explain`` text: from ``[1] ...`` to the first blank line."""
    lines = explain.splitlines()
    start = next((i for i, ln in enumerate(lines) if _JOIN_HEADER.match(ln)), None)
    if start is None:
        return []
    out = []
    for ln in lines[start:]:
        if not ln.strip():
            break
        out.append(ln.rstrip())
    return out


# --------------------------------------------------------------------------- runs
def timed_count(spark, c: Contender, lpath: Path, rpath: Path, timeout: float | None) -> dict:
    """One run: Session, register both files, plan (session.sql), collect the count.

    Untimed before it: the process's Parquet statistics cache is emptied, so
    every run pays for the statistics it reads, except the cached-statistics
    row, which plans the same query once to fill it; then both the JVM and
    Python collect garbage, so no run pays for an earlier one's.
    """
    import giql_spark as gs
    from giql_spark.planner.stats import filestats

    def session():
        s = gs.Session(spark, **c.options)
        s.register("l", str(lpath))
        s.register("r", str(rpath))
        return s

    filestats.clear()
    if c.name == OPTIMIZER_CACHED:
        session()._execute(GIQL_COUNT)
    collect_garbage(spark)

    def job():
        t0 = time.perf_counter()
        s = session()
        t1 = time.perf_counter()
        df, _, nodes = s._execute(GIQL_COUNT)  # what Session.sql does, keeping the planned nodes
        t2 = time.perf_counter()
        n = df.collect()[0][0]
        # The optimizer's own work: statistics and the cost-based choice.
        opt = sum(b.choice.timing.statistics + b.choice.timing.choice for b in nodes if b.choice.timing)
        return {"register": t1 - t0, "planning": t2 - t1, "optimizer": opt, "rows": n}

    t0 = time.perf_counter()
    out = spark_action(spark, job, timeout)
    out["seconds"] = time.perf_counter() - t0
    return out


def optimizer_explain(spark, lpath: Path, rpath: Path, timeout: float | None) -> str:
    import giql_spark as gs

    def job():
        s = gs.Session(spark)
        s.register("l", str(lpath))
        s.register("r", str(rpath))
        return s.explain(GIQL_COUNT)

    return spark_action(spark, job, timeout)


# --------------------------------------------------------------------------- report
def summarize(times: list) -> dict | None:
    ok = [t for t in times if t is not None]
    if not ok:
        return None
    return {"median": statistics.median(ok), "n": len(ok), "min": min(ok), "max": max(ok)}


def cell(times: list, timeout: float) -> str:
    s = summarize(times)
    n_to = sum(1 for t in times if t is None)
    if s is None:
        return f"> {timeout:.0f} s (timed out, {n_to} run{'s' if n_to > 1 else ''})"
    return spread([t for t in times if t is not None]) + (f" + {n_to} timeout(s)" if n_to else "")


def analyse(profiles, cmap, results, opt_planning, timeout) -> dict:
    """Per profile: the best forced contender, and for each chooser row its regret and planning share."""
    out = {}
    for p in profiles:
        forced = {}
        for c in cmap:
            if c in CHOOSERS:
                continue
            s = summarize(results.get((p, c), []))
            if s:
                forced[c] = s["median"]
        best = min(forced, key=forced.get) if forced else None
        row = {"best_forced": best, "best_forced_s": forced.get(best)}
        for who in CHOOSERS:
            opt = summarize(results.get((p, who), []))
            r = {"chosen_s": opt and opt["median"], "regret": None, "regret_bound": None, "planning_pct": None,
                 "planning_s": None, "optimizer_pct": None, "optimizer_s": None}
            if best and opt:
                r["regret"] = opt["median"] / forced[best]
            elif best and results.get((p, who)):
                r["regret_bound"] = timeout / forced[best]  # the optimizer timed out: regret above this
            pl = opt_planning.get((p, who), [])
            if pl:
                r["planning_pct"] = statistics.median(100 * a / b for a, _, b in pl)
                r["planning_s"] = statistics.median(a for a, _, _ in pl)
                r["optimizer_pct"] = statistics.median(100 * o / b for _, o, b in pl)
                r["optimizer_s"] = statistics.median(o for _, o, _ in pl)
            row[who] = r
        out[p] = row
    return out


def build_report(args, cmdline, facts, code, started, ended, load_before, load_after, data_info, choices, explains,
                 cmap, results, planning, counts, analysis, skipped, caveats) -> str:
    commit = code.get("commit", "?")
    src = (f"giql_spark at commit {commit}{' + uncommitted changes in src/' if code.get('src_dirty') else ''}, "
           "run from a frozen copy of src/giql_spark" if code.get("snapshot")
           else "giql_spark imported from the installed tree (version not recorded)")
    lines = [
        "# Interval-join optimizer benchmark",
        "",
        f"Date: {started:%Y-%m-%d %H:%M} UTC (the run took {(ended - started).total_seconds() / 60:.1f} min). "
        f"Code: {src}.",
        "",
        "Command:",
        "",
        "```",
        cmdline,
        "```",
        "",
        f"Every time below is the median of n runs (n in parentheses, with min-max) on a shared "
        f"{facts['cores']}-core machine; other work ran alongside, so single times are noisy. "
        f"Asked for {args.repeats} run(s) per cell, per-run timeout {args.timeout:.0f} s.",
        "",
        "Query, on every profile and contender: "
        "`SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval`, collected.",
        "",
        "## Summary",
        "",
        f"Regret = the optimizer's median / the fastest forced median on the same data (target <= "
        f"{TARGET_REGRET:.2f}; below 1 means the choice beat every forced contender measured). Planning = time for "
        f"`session.sql(query)` to return the lazy DataFrame (GIQL compilation, Spark's analysis of each side and of "
        f"the final SQL, statistics, the choice and building the join), as a share of the whole optimizer run; "
        f"optimizer = the part of it the optimizer itself adds, statistics plus the cost-based choice, as "
        f"recorded by the planner (medians over runs; target <= {TARGET_PLANNING_PCT:.0f}%). Same choice forced = the "
        "forced contender with the strategy and parameters the optimizer chose, where one was measured: the gap "
        "to it is the optimizer's overhead, the gap from it to the best is the cost of the choice. Forced "
        "binned, sweep and naive contenders read no statistics (broadcast reads them for its build side).",
        "",
        "Each profile has two optimizer rows. **cold**: the query planned with nothing cached, as the first "
        "query over those files is (the statistics are read inside the timed run). **cached**: the same, after an "
        "untimed planning of the same query in another Session, so the files' statistics come from the "
        "process's cache (`giql_spark.planner.stats.filestats`), as for every later query over unchanged files.",
        "",
        "| profile | statistics | chosen | chosen s | best forced s | regret | planning % | optimizer % "
        "| same choice forced s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    met = {who: Counter() for who in CHOOSERS}
    for p in args.profiles:
        a = analysis[p]
        chosen = choice_label(choices.get(p))
        best = f"{a['best_forced']}: {fmt_s(a['best_forced_s'])}" if a["best_forced"] else "—"
        same = choice_label(choices.get(p))
        same_s = fmt_s(summarize(results[(p, same)])["median"]) if summarize(results.get((p, same), [])) else "—"
        for who in CHOOSERS:
            r, m = a[who], met[who]
            chosen_s = cell(results.get((p, who), []), args.timeout) if results.get((p, who)) else \
                skipped.get((p, who), "not run")
            if r["regret"] is not None:
                regret = f"{r['regret']:.2f}"
                m["regret measured"] += 1
                m["regret met"] += r["regret"] <= TARGET_REGRET
            elif r["regret_bound"] is not None:
                regret = f"> {r['regret_bound']:.1f}"
                m["regret measured"] += 1
            else:
                regret = "—"
            if r["planning_pct"] is not None:
                plan = f"{r['planning_pct']:.1f}% ({r['planning_s']:.2f} s)"
                m["planning measured"] += 1
                m["planning met"] += r["planning_pct"] <= TARGET_PLANNING_PCT
                m["optimizer met"] += r["optimizer_pct"] <= TARGET_PLANNING_PCT
                opt = f"{r['optimizer_pct']:.1f}% ({r['optimizer_s']:.3f} s)"
            else:
                plan = opt = "—"
            lines.append(f"| {p} | {STATISTICS[who]} | {chosen} | {chosen_s} | {best} | {regret} | {plan} | {opt} | {same_s} |")
    lines.append("")
    for who in CHOOSERS:
        m = met[who]
        lines.append(f"- {STATISTICS[who]}: regret <= {TARGET_REGRET:.2f} in {m['regret met']} of "
                     f"{m['regret measured']} profiles; planning <= {TARGET_PLANNING_PCT:.0f}% in {m['planning met']} "
                     f"of {m['planning measured']}; optimizer <= {TARGET_PLANNING_PCT:.0f}% in {m['optimizer met']} "
                     f"of {m['planning measured']}.")
    lines += [
        "",
        "## Machine",
        "",
        *machine_lines(facts, args.driver_memory, args.shuffle_partitions, ["pyarrow", "numpy"]),
        f"- load average (1/5/15 min) before: {load_before}, after: {load_after}",
        "",
        "## Data",
        "",
        "Generated with seeded numpy (deterministic), left and right from different seeds, written as Parquet "
        "(one file per side, row groups of 131,072 rows; columns chrom, start, end (int64, 0-based half-open), "
        "name). Starts are uniform over the positions where the interval fits.",
        "",
        "| profile | shape | left rows | right rows | chroms (left) | top chrom share | left widths median / mean / max (bp) "
        "| same-chrom pairs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in args.profiles:
        d = data_info[p]
        lw = d["left"]
        lines.append(
            f"| {p} | {PROFILES[p]} | {lw['rows']:,} | {d['right']['rows']:,} | {lw['chroms']:,} | "
            f"{100 * lw['top_chrom_share']:.0f}% | {lw['width_median']:,.0f} / {lw['width_mean']:,.0f} / "
            f"{lw['width_max']:,} | {d['same_chrom_pairs']:.2e} |")
    lines += [
        "",
        "Same-chrom pairs = sum over chromosomes of left rows x right rows: the candidate pairs the naive "
        f"join compares. The naive strategy runs only where this is <= {args.naive_max_pairs:.0e}.",
        "",
        "## Results per profile",
        "",
        "Cells: wall seconds from creating the Session and registering both Parquet files to the count "
        "collected (reading, statistics, planning and the join included; Spark start-up and data generation "
        "excluded). Ratio = median / fastest forced median. Planning s = median time of `session.sql(query)`.",
        "",
    ]
    for p in args.profiles:
        a = analysis[p]
        ch = choices.get(p)
        lines += [f"### {p}", ""]
        if ch:
            lines += [f"Optimizer's choice: **{choice_label(ch)}**" + (f" — {ch['reason']}" if ch.get("reason") else ""),
                      ""]
        else:
            lines += ["Optimizer's choice: not recognised in `Session.explain` output (see the JSON).", ""]
        block = join_block(explains.get(p, ""))
        if block:
            lines += ["`Session.explain` (interval join part, untimed run):", "", "```", *block, "```", ""]
        lines += ["| contender | s, median (n, min-max) | vs best forced | planning s |", "|---|---|---|---|"]
        for cname in cmap:
            times = results.get((p, cname))
            label = f"**{cname}** (chose {choice_label(ch)})" if cname in CHOOSERS else cname
            if not times:
                lines.append(f"| {label} | {skipped.get((p, cname), 'not run')} | | |")
                continue
            s = summarize(times)
            ratio = f"{s['median'] / a['best_forced_s']:.2f}" if s and a["best_forced_s"] else "—"
            pl = planning.get((p, cname), [])
            pls = f"{statistics.median(pl):.2f}" if pl else "—"
            lines.append(f"| {label} | {cell(times, args.timeout)} | {ratio} | {pls} |")
        cnt = counts.get(p, {})
        vals = sorted(set().union(*cnt.values())) if cnt else []
        lines += ["", "Result count: " + (", ".join(f"{v:,}" for v in vals) or "—"), ""]
    lines += ["## Count verification", ""]
    mism = [p for p in args.profiles if len(set().union(set(), *counts.get(p, {}).values())) > 1]
    if mism:
        for p in mism:
            lines.append(f"- **MISMATCH** {p}: " + "; ".join(
                f"{c}: {', '.join(f'{v:,}' for v in sorted(s))}" for c, s in counts[p].items()))
    else:
        lines.append("Every contender returned the same count in every profile.")
    lines += ["", "## Not run / caveats", ""]
    lines += caveats or ["None."]
    lines += [
        "",
        "## Method",
        "",
        "- One Spark session (`giql_spark.local_spark(\"local[*]\")`) for every run. Forced contenders are "
        "`giql_spark.Session(spark, strategy=S, bin_size=B, tile_size=T)`; the optimizer row is "
        "`giql_spark.Session(spark)` with nothing set. Each run builds a new Session and registers both files.",
        "- Untimed before every run: the process's Parquet statistics cache is emptied (for the cached row, then "
        "filled again by planning the same query once), and the JVM (`System.gc()`) and Python collect garbage.",
        "- The optimizer's choice is read from `Session.explain(query)` (the `strategy:` line of the interval "
        "join), once per profile, untimed, before the timed runs.",
        "- Before timing, one untimed warm-up run per contender on 20k x 20k intervals (JVM code paths, "
        "compiled kernels in the Python workers)." if not args.no_warmup else "- No warm-up runs (--no-warmup).",
        "- Runs go round by round (every cell's first run before any second run), with the contender order "
        "rotated each round. A run that exceeds the timeout has its Spark job group cancelled.",
        "- Regret is bounded by the contenders measured: an optimizer choice with parameters outside the "
        "forced set can score below 1.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profiles", default=",".join(PROFILES), help=f"comma-separated, of: {', '.join(PROFILES)}")
    ap.add_argument("--size", type=int, default=1_000_000, help="rows per side (all profiles but small-large)")
    ap.add_argument("--large-size", type=int, default=10_000_000, help="rows of the large side of small-large")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0, help="per-run timeout in seconds")
    ap.add_argument("--budget-minutes", type=float, default=None, help="do not start a run past this wall time")
    ap.add_argument("--out", default=str(REPORTS_DIR / "OPTIMIZER.md"), help="markdown report; the JSON goes next to it")
    ap.add_argument("--strategies", default=",".join(FORCEABLE),
                    help="forced strategies to run (the optimizer always runs); the jvm_* ones need the "
                         "extension, which giql_spark.local_spark loads")
    ap.add_argument("--bin-sizes", default="2000,10000,50000,200000,1000000", help="binned bin sizes, one row each")
    ap.add_argument("--tile-sizes", default="2000000", help="sweep tile sizes, one row each")
    ap.add_argument("--naive-max-pairs", type=float, default=2e8,
                    help="run the naive strategy only where left x right rows per chromosome, summed, is at most this")
    ap.add_argument("--driver-memory", default="12g")
    ap.add_argument("--shuffle-partitions", type=int, default=8)
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="import giql_spark from its installed tree instead of a frozen copy")
    args = ap.parse_args(argv)
    args.profiles = [p for p in args.profiles.split(",") if p]
    for p in args.profiles:
        if p not in PROFILES:
            ap.error(f"unknown profile {p!r}; known: {', '.join(PROFILES)}")
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    for s in strategies:
        if s not in FORCEABLE:
            ap.error(f"unknown strategy {s!r}; known: {', '.join(FORCEABLE)}")
    cmap = contenders(strategies, [int(b) for b in args.bin_sizes.split(",") if b],
                      [int(t) for t in args.tile_sizes.split(",") if t])
    cmdline = command_line()
    budget = Budget(args.budget_minutes)
    started = _dt.datetime.now(_dt.timezone.utc)
    load_before = load_averages()

    paths, data_info = {}, {}
    for p in args.profiles:
        t0 = time.perf_counter()
        paths[p] = profile_paths(p, args.size, args.large_size)
        data_info[p] = describe_data(*paths[p])
        d = data_info[p]
        print(f"[data] {p}: {paths[p][0].name} ({d['left']['rows']:,}), {paths[p][1].name} ({d['right']['rows']:,}), "
              f"same-chrom pairs {d['same_chrom_pairs']:.2e} ({time.perf_counter() - t0:.1f}s)", flush=True)

    code = freeze(not args.no_snapshot)
    print(f"[code] {code}", flush=True)
    spark = local_spark("local[*]", args.driver_memory, args.shuffle_partitions,
                        app_name="giql-spark-optimizer-bench")
    try:
        return _run(args, cmap, cmdline, budget, started, load_before, paths, data_info, code, spark)
    finally:
        spark.stop()
        release(code)


def _run(args, cmap, cmdline, budget, started, load_before, paths, data_info, code, spark) -> int:
    facts = machine_facts(spark)
    print(f"[machine] {facts}", flush=True)

    caveats: list = []
    skipped: dict = {}
    # Which contenders run on which profile.
    plan = {}
    for p in args.profiles:
        plan[p] = []
        for c in cmap:
            if c == "naive" and data_info[p]["same_chrom_pairs"] > args.naive_max_pairs:
                skipped[(p, c)] = f"not run ({data_info[p]['same_chrom_pairs']:.1e} same-chrom pairs)"
                continue
            plan[p].append(c)

    if not args.no_warmup:
        wl, wr = warmup_paths()
        t0 = time.perf_counter()
        for c in cmap.values():
            try:
                timed_count(spark, c, wl, wr, 300)
            except Exception as e:  # noqa: BLE001
                print(f"[warmup] {c.name}: {type(e).__name__}: {one_line(e, 200)}", flush=True)
        print(f"[warmup] done in {time.perf_counter() - t0:.1f}s", flush=True)

    # The optimizer's choice, from explain (untimed).
    choices, explains = {}, {}
    for p in args.profiles:
        try:
            explains[p] = optimizer_explain(spark, *paths[p], args.timeout)
            choices[p] = parse_choice(explains[p])
        except RunTimeout:
            explains[p] = f"explain timed out after {args.timeout:.0f} s"
            choices[p] = None
        except Exception as e:  # noqa: BLE001
            explains[p] = f"explain failed: {one_line(e)}"
            choices[p] = None
        if choices[p] is None:
            caveats.append(f"- {p}: the optimizer's choice could not be read from `Session.explain`: "
                           f"{explains[p][:200]!r}")
        print(f"[choice] {p}: {choice_label(choices[p])}"
              + (f" — {choices[p]['reason']}" if choices[p] else ""), flush=True)

    results: dict = {}  # (profile, contender) -> [seconds or None]
    planning: dict = {}  # (profile, contender) -> [planning seconds]
    opt_planning: dict = {}  # (profile, chooser) -> [(planning, optimizer, total seconds)] of its runs
    counts: dict = {}  # profile -> {contender: {count}}
    raw: list = []
    errors: dict = {}

    names = list(cmap)
    for rep in range(args.repeats):
        order = rotated(names, rep)
        for p in args.profiles:
            for cname in order:
                if cname not in plan[p]:
                    continue
                if budget.over():
                    skipped.setdefault((p, cname), "not run (budget)")
                    continue
                load = os.getloadavg()[0]
                rec = {"profile": p, "contender": cname, "options": cmap[cname].options, "rep": rep + 1,
                       "load1": load}
                try:
                    r = timed_count(spark, cmap[cname], *paths[p], args.timeout)
                    rec.update(r, status="ok")
                    results.setdefault((p, cname), []).append(r["seconds"])
                    planning.setdefault((p, cname), []).append(r["planning"])
                    if cname in CHOOSERS:
                        opt_planning.setdefault((p, cname), []).append((r["planning"], r["optimizer"], r["seconds"]))
                    counts.setdefault(p, {}).setdefault(cname, set()).add(r["rows"])
                    print(f"[run] {p:15s} {cname:12s} rep {rep + 1}: {r['seconds']:8.2f}s "
                          f"(planning {r['planning']:.2f}s) rows={r['rows']:,} load={load:.2f}", flush=True)
                except RunTimeout:
                    rec.update(seconds=None, status="timeout")
                    results.setdefault((p, cname), []).append(None)
                    print(f"[run] {p:15s} {cname:12s} rep {rep + 1}: TIMEOUT > {args.timeout:.0f}s", flush=True)
                except Exception as e:  # noqa: BLE001
                    msg = f"error: {one_line(e)}"
                    rec.update(seconds=None, status=msg)
                    errors.setdefault((p, cname), []).append(msg)
                    skipped.setdefault((p, cname), "failed")
                    print(f"[run] {p:15s} {cname:12s} rep {rep + 1}: {msg}", flush=True)
                raw.append(rec)

    for (p, c), errs in errors.items():
        caveats.append(f"- {p} / {c}: {len(errs)} run(s) failed; first error: {errs[0][:300]}")
    for p in args.profiles:
        short = [f"{c} {sum(1 for t in results.get((p, c), []) if t is not None)}" for c in plan[p]
                 if sum(1 for t in results.get((p, c), []) if t is not None) < args.repeats
                 and (p, c) not in errors]
        if short:
            caveats.append(f"- {p}: fewer than {args.repeats} completed runs (time budget or timeouts): "
                           f"{', '.join(short)}.")
        if "naive" in cmap and "naive" not in plan[p]:
            caveats.append(f"- {p}: naive not run ({data_info[p]['same_chrom_pairs']:.1e} same-chrom pairs "
                           f"> --naive-max-pairs {args.naive_max_pairs:.0e}).")
    # The choice is read once before the runs; read it again to catch a planner that changes its mind.
    for p in args.profiles:
        if choices.get(p) is None:
            continue
        try:
            again = parse_choice(optimizer_explain(spark, *paths[p], args.timeout))
        except Exception:  # noqa: BLE001
            again = None
        if again is None or choice_label(again) != choice_label(choices[p]):
            caveats.append(f"- {p}: `Session.explain` after the timed runs gave {choice_label(again)!r}, "
                           f"before them {choice_label(choices[p])!r}; the optimizer row may mix choices.")
    for p in args.profiles:
        vals = set().union(*counts.get(p, {}).values()) if counts.get(p) else set()
        if len(vals) > 1:
            print(f"WARNING: count mismatch in {p}: {counts[p]}", flush=True)

    analysis = analyse(args.profiles, cmap, results, opt_planning, args.timeout)
    ended = _dt.datetime.now(_dt.timezone.utc)
    load_after = load_averages()
    report = build_report(args, cmdline, facts, code, started, ended, load_before, load_after, data_info, choices,
                          explains, cmap, results, planning, counts, analysis, skipped, caveats)
    write_report(Path(args.out), report,
                 {"command": cmdline, "started": started.isoformat(), "ended": ended.isoformat(), "machine": facts,
                  "code": code, "repeats": args.repeats, "timeout": args.timeout,
                  "contenders": {c.name: c.options for c in cmap.values()},
                  "data": {p: dict(data_info[p], left_path=str(paths[p][0]), right_path=str(paths[p][1]))
                           for p in args.profiles},
                  "choices": choices, "explain": explains, "summary": analysis, "runs": raw, "caveats": caveats})
    print()
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
