#!/usr/bin/env python
"""Interval-join benchmark: giql-spark strategies against hand-written Spark SQL and bioframe.

Example::

    python benchmarks/joins.py --size 1000000 --profiles uniform,heavy,middle \
        --ops count,pairs --repeats 3 --out benchmarks/reports/RESULTS.md

See benchmarks/README.md for what each contender is and how the timing is done.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / "data"

# hg38 primary assembly, chr1..chr22, chrX, chrY (UCSC chrom.sizes).
HG38 = {
    "chr1": 248_956_422, "chr2": 242_193_529, "chr3": 198_295_559, "chr4": 190_214_555,
    "chr5": 181_538_259, "chr6": 170_805_979, "chr7": 159_345_973, "chr8": 145_138_636,
    "chr9": 138_394_717, "chr10": 133_797_422, "chr11": 135_086_622, "chr12": 133_275_309,
    "chr13": 114_364_328, "chr14": 107_043_718, "chr15": 101_991_189, "chr16": 90_338_345,
    "chr17": 83_257_441, "chr18": 80_373_285, "chr19": 58_617_616, "chr20": 64_444_167,
    "chr21": 46_709_983, "chr22": 50_818_468, "chrX": 156_040_895, "chrY": 57_227_415,
}

PROFILES = {
    "uniform": "widths uniform 100-2000 bp",
    "heavy": "gene-like widths: lognormal, median 10 kb (sigma 1.2), clipped to [100 bp, 2.5 Mb]",
    "middle": "widths uniform 100-1000 bp, plus 0.5% of intervals uniform 1-5 Mb wide",
}
PROFILE_SEED = {"uniform": 1000, "heavy": 2000, "middle": 3000}
ROW_GROUP = 131_072  # several row groups per file so Spark reads each table in >1 split

GIQL_PAIRS = "SELECT a.*, b.* FROM l a JOIN r b ON a.interval INTERSECTS b.interval"
GIQL_COUNT = "SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval"
PAIR_COLUMNS = ["chrom", "start", "end", "name", "chrom_", "start_", "end_", "name_"]

# What a competent Spark user writes by hand: fixed 10 kb bins on both sides,
# equi-join on (chrom, bin), the overlap filter, and the canonical-bin
# condition (a pair is kept only in the first bin both intervals touch), so no
# DISTINCT is needed.
BIN10K_SQL = """
WITH lb AS (
  SELECT chrom, start, `end`, name, explode(sequence(start div 10000, (`end` - 1) div 10000)) AS bin
  FROM l
), rb AS (
  SELECT chrom, start, `end`, name, explode(sequence(start div 10000, (`end` - 1) div 10000)) AS bin
  FROM r
)
SELECT {select}
FROM lb a JOIN rb b ON a.chrom = b.chrom AND a.bin = b.bin
WHERE a.start < b.`end` AND a.`end` > b.start
  AND a.bin = greatest(a.start div 10000, b.start div 10000)
"""
BIN10K_PAIRS_SELECT = ("a.chrom, a.start, a.`end`, a.name, "
                       "b.chrom AS chrom_, b.start AS start_, b.`end` AS end_, b.name AS name_")


# --------------------------------------------------------------------------- data
def generate(profile: str, n: int, seed: int, prefix: str, chroms: dict[str, int] | None = None,
             weights=None) -> pa.Table:
    """n intervals of a width profile over ``chroms`` (name -> length; default hg38).

    Rows go to chromosomes multinomially by ``weights`` (default: in proportion
    to length); starts are uniform over the positions where the interval fits.
    """
    rng = np.random.default_rng(seed)
    chroms = HG38 if chroms is None else chroms
    names = list(chroms)
    lengths = np.array([chroms[c] for c in names], dtype=np.int64)
    w = lengths / lengths.sum() if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
    per_chrom = rng.multinomial(n, w)
    if profile == "uniform":
        widths = rng.integers(100, 2001, size=n)
    elif profile == "heavy":
        widths = np.clip(np.round(rng.lognormal(np.log(10_000), 1.2, size=n)), 100, 2_500_000).astype(np.int64)
    elif profile == "middle":
        widths = rng.integers(100, 1001, size=n)
        wide = rng.choice(n, size=max(1, round(n * 0.005)), replace=False)
        widths[wide] = rng.integers(1_000_000, 5_000_001, size=len(wide))
    else:
        raise ValueError(f"unknown profile {profile!r}")
    widths = widths.astype(np.int64)
    chrom_idx = np.repeat(np.arange(len(names)), per_chrom)
    chrom_len = lengths[chrom_idx]
    widths = np.minimum(widths, chrom_len)
    # start uniform over the positions where the whole interval fits
    starts = np.floor(rng.random(n) * (chrom_len - widths + 1)).astype(np.int64)
    ends = starts + widths
    order = np.lexsort((starts, chrom_idx))  # sorted like a BED file
    chrom_idx, starts, ends = chrom_idx[order], starts[order], ends[order]
    chrom = pa.DictionaryArray.from_arrays(pa.array(chrom_idx, pa.int32()), pa.array(names)).cast(pa.string())
    name = pa.array([f"{prefix}{i}" for i in range(n)], pa.string())
    return pa.table({"chrom": chrom, "start": pa.array(starts, pa.int64()),
                     "end": pa.array(ends, pa.int64()), "name": name})


def data_paths(profile: str, size: int) -> tuple[Path, Path]:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    out = []
    for side, offset in (("left", 1), ("right", 2)):
        p = DATA_DIR / f"{profile}_{size}_{side}.parquet"
        if not p.exists():
            t = generate(profile, size, PROFILE_SEED[profile] + offset, "l" if side == "left" else "r")
            tmp = p.with_suffix(".tmp")
            pq.write_table(t, tmp, row_group_size=ROW_GROUP)
            tmp.rename(p)
        out.append(p)
    return out[0], out[1]


def warmup_paths() -> tuple[Path, Path]:
    """20k x 20k intervals (middle profile) for the untimed warm-up runs."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    wl, wr = DATA_DIR / "warmup_left.parquet", DATA_DIR / "warmup_right.parquet"
    if not wl.exists() or not wr.exists():
        pq.write_table(generate("middle", 20_000, 11, "l"), wl, row_group_size=5_000)
        pq.write_table(generate("middle", 20_000, 12, "r"), wr, row_group_size=5_000)
    return wl, wr


def parquet_rows(path: Path) -> int:
    return sum(pq.read_metadata(f).num_rows for f in Path(path).rglob("*.parquet"))


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


class RunTimeout(Exception):
    pass


class Runner:
    def __init__(self, spark, peers_python: str | None = None):
        self.spark = spark
        self.sc = spark.sparkContext
        self.peers_python = peers_python

    def spark_action(self, fn, timeout: float | None):
        """Run fn() (which triggers Spark jobs) with a job-group timeout."""
        from pyspark import InheritableThread

        group = f"bench-{uuid.uuid4().hex[:8]}"
        box: dict = {}

        def target():
            self.sc.setJobGroup(group, group, interruptOnCancel=True)
            try:
                box["value"] = fn()
            except BaseException as e:  # noqa: BLE001
                box["error"] = e
            finally:
                self.sc.setLocalProperty("spark.jobGroup.id", None)

        t = InheritableThread(target=target, daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            self.sc.cancelJobGroup(group)
            t.join(120)
            raise RunTimeout()
        if "error" in box:
            raise box["error"]
        return box["value"]

    def run(self, c: Contender, op: str, lpath: Path, rpath: Path, outdir: Path, timeout: float | None):
        """Return (seconds, row count). Timing covers reading, planning and the action."""
        import giql_spark as gs

        if c.kind == "peer":
            python = c.params.get("python") or self.peers_python
            if not python:
                raise RuntimeError("no --peers-python given")
            try:
                done = subprocess.run([python, str(HERE / "peers.py"), c.params["tool"], op, str(lpath),
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
                # a.*, b.* repeats chrom/start/end/name; Parquet needs unique names.
                s.sql(GIQL_PAIRS).toDF(*PAIR_COLUMNS).write.mode("overwrite").parquet(str(outdir))
                return None
            # plain Spark SQL
            self.spark.read.parquet(str(lpath)).createOrReplaceTempView("l")
            self.spark.read.parquet(str(rpath)).createOrReplaceTempView("r")
            if op == "count":
                return self.spark.sql(BIN10K_SQL.format(select="COUNT(*)")).collect()[0][0]
            self.spark.sql(BIN10K_SQL.format(select=BIN10K_PAIRS_SELECT)).write.mode("overwrite").parquet(str(outdir))
            return None

        t0 = time.perf_counter()
        n = self.spark_action(job, timeout)
        dt = time.perf_counter() - t0
        if op == "pairs":
            n = parquet_rows(outdir)
        return dt, n


# --------------------------------------------------------------------------- report
def fmt_s(x: float) -> str:
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def fmt_ratio(r: float) -> str:
    return f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def machine_facts(spark) -> dict:
    mem = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = int(line.split()[1]) / 2**20
    except OSError:
        pass
    java = ""
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    except Exception:  # noqa: BLE001
        pass
    import bioframe
    import pandas

    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cores": os.cpu_count(), "cpu": cpu, "memory_gib": round(mem, 1) if mem else None,
        "spark": spark.version, "java": java, "python": platform.python_version(),
        "bioframe": bioframe.__version__, "pandas": pandas.__version__, "pyarrow": pa.__version__,
        "numpy": np.__version__, "platform": platform.platform(),
    }


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
        f"- cores: {facts['cores']} ({facts['cpu']})",
        f"- memory: {facts['memory_gib']} GiB",
        f"- Spark {facts['spark']} (local[*], driver memory {args.driver_memory}, "
        f"spark.sql.shuffle.partitions={args.shuffle_partitions}), {facts['java']}",
        f"- Python {facts['python']}, bioframe {facts['bioframe']}, pandas {facts['pandas']}, "
        f"pyarrow {facts['pyarrow']}, numpy {facts['numpy']}",
        f"- {facts['platform']}",
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
                extra = f"{len(times)}"
                if len(times) > 1:
                    extra += f", {fmt_s(min(times))}-{fmt_s(max(times))}"
                txt = f"{fmt_s(med)} ({extra})"
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


# --------------------------------------------------------------------------- isolation
def snapshot_package(dest_root: Path) -> dict:
    """Copy the giql_spark source tree and run it from the copy.

    The package is installed editable and its tree may be edited while a long
    benchmark runs. Spark starts fresh Python workers now and then; if they import
    newer source than the driver pickled its functions from, broadcast and sweep
    fail. Both the driver (sys.path) and the workers (PYTHONPATH, inherited by the
    JVM that launches them) import the frozen copy.
    """
    import importlib.util

    spec = importlib.util.find_spec("giql_spark")
    src = Path(list(spec.submodule_search_locations)[0])
    info = {"source": str(src)}
    try:
        repo = src.parent.parent
        info["commit"] = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True).stdout.strip()
        info["src_dirty"] = bool(dirty)
    except Exception:  # noqa: BLE001
        pass
    dest = dest_root / f"snapshot-{os.getpid()}"
    shutil.copytree(src, dest / "giql_spark", ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(dest))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(dest)] + [x for x in [os.environ.get("PYTHONPATH")] if x])
    info["snapshot"] = str(dest)
    return info


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--profiles", default="uniform,heavy,middle")
    ap.add_argument("--ops", default="count,pairs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "reports" / "RESULTS.md"))
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
    cmdline = "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    t_start = time.monotonic()
    started = _dt.datetime.now(_dt.timezone.utc)
    load_before = " / ".join(f"{x:.2f}" for x in os.getloadavg())

    cmap = contenders([int(b) for b in args.bin_sizes.split(",") if b], args.tile_size)
    if args.contenders:
        wanted = [c.strip() for c in args.contenders.split(",") if c.strip()]
        for w in wanted:
            if w not in cmap:
                ap.error(f"unknown contender {w!r}; known: {', '.join(cmap)}")
        cmap = {k: v for k, v in cmap.items() if k in wanted}
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

    code = {"source": "installed tree"}
    if not args.no_snapshot:
        code = snapshot_package(DATA_DIR)
    import giql_spark as gs

    code["imported_from"] = str(Path(gs.__file__).parent)
    print(f"[code] {code}", flush=True)

    spark = gs.local_spark("local[*]", app_name="giql-spark-bench", config={
        "spark.driver.memory": args.driver_memory,
        "spark.sql.shuffle.partitions": str(args.shuffle_partitions),
    })
    runner = Runner(spark, args.peers_python)
    facts = machine_facts(spark)
    print(f"[machine] {facts}", flush=True)
    tmp_root = Path(tempfile.mkdtemp(prefix="giql-bench-", dir=str(DATA_DIR)))

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

    def over_budget():
        return args.budget_minutes is not None and (time.monotonic() - t_start) > args.budget_minutes * 60

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
            dt, n, status = None, None, f"error: {' '.join(str(e).split())[:300]}"
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
        order = names[rep % len(names):] + names[:rep % len(names)] if names else []
        for p in args.profiles:
            for op in args.ops:
                for cname in order:
                    if rep >= n_reps(cname):
                        continue
                    if over_budget():
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
        versions = subprocess.run([args.peers_python, "-c", "import polars, polars_bio, pyranges, pandas; "
                                   "print(f'polars-bio {polars_bio.__version__} (polars {polars.__version__}), "
                                   "pyranges {pyranges.__version__}, pandas {pandas.__version__}')"],
                                  capture_output=True, text=True)
        caveats.append(f"- peers ran with {args.peers_python}: "
                       f"{versions.stdout.strip() or versions.stderr.strip()[-200:]}; the time is measured "
                       "inside their process (reading, join, write), imports excluded.")
    caveats += [f"- {n}" for n in args.note]

    shutil.rmtree(tmp_root, ignore_errors=True)
    ended = _dt.datetime.now(_dt.timezone.utc)
    load_after = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    invocations[0]["ended"] = ended.isoformat()
    report = build_report(args, facts, invocations, results, counts, skipped, {"verify": verify, "caveats": caveats},
                          load_before, load_after, started, ended, display, data_info)
    out = Path(args.out)
    out.write_text(report)
    out.with_suffix(".json").write_text(json.dumps(
        {"command": cmdline, "machine": facts, "code": code, "repeats": expected, "runs": raw,
         "verify": verify, "caveats": caveats,
         "invocations": invocations, "started": started.isoformat(), "ended": ended.isoformat()}, indent=1))
    print()
    print(report)
    spark.stop()
    if code.get("snapshot"):
        shutil.rmtree(code["snapshot"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
