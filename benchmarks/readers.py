"""Genomic readers' throughput: a bgzipped, indexed VCF and an indexed BAM read whole.

    python benchmarks/readers.py --records 2000000 --reads 2000000 --repeats 3 \\
        --peers-python peers/bin/python --out benchmarks/reports/READERS.md

Each contender reads every record of the file and returns its record count and the sum of its
positions ("sum"), and, separately, decodes every column ("all columns"):

- giql-spark on ``local[2]``: ``Session.read(path)`` then ``agg(sum(start), count(*))``, and the
  DataFrame written to Spark's ``noop`` sink;
- polars-bio with 2 DataFusion partitions, as its documentation runs it: a lazy ``scan_vcf`` /
  ``scan_bam`` then ``select(pl.col("start").sum(), pl.len()).collect()``, and ``collect()`` of
  every column;
- bcftools and samtools on one thread: ``bcftools query -f '%POS\\n' | awk`` (sum) and ``bcftools
  view -O u -o /dev/null`` (every field parsed), ``samtools view -c`` and ``samtools view -u -o
  /dev/null``.

Times are medians of ``--repeats`` runs after one untimed run; Spark's start and the peers'
interpreter start are not timed. The per-core ratio divides giql-spark's time by polars-bio's at
the same number of threads. Peak memory is the whole process tree's (the JVM and Spark's Python
workers included). The split ratio reads the file with Spark's splits set for 1 task and for 10
tasks and projects both to as many cores as tasks from Spark's event log, as ``projected.py``
does: each stage takes the longer of its longest task and its work over the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import eventlog  # noqa: E402
from harness.machine import load_averages, machine_facts  # noqa: E402
from harness.report import header, spread, write_report  # noqa: E402
from harness.rss import TreePeak, run_measured  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "readers"
CHROMS = [(f"chr{i}", 250_000_000 - 9_000_000 * i) for i in range(1, 23)]


# ---------------------------------------------------------------------------- data


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        sys.exit(f"{name} is not installed (apt-get install samtools bcftools tabix)")
    return path


def make_vcf(n: int) -> Path:
    """``n`` variants over 22 chromosomes, one sample, INFO DP/AF/DB, bgzipped and indexed."""
    out = DATA / f"variants-{n}.vcf.gz"
    if out.exists() and Path(str(out) + ".tbi").exists():
        return out
    DATA.mkdir(parents=True, exist_ok=True)
    import random

    rng = random.Random(7)
    total = sum(length for _, length in CHROMS)
    plain = out.with_suffix("")
    with open(plain, "w") as fh:
        fh.write("##fileformat=VCFv4.2\n")
        for c, length in CHROMS:
            fh.write(f"##contig=<ID={c},length={length}>\n")
        fh.write('##INFO=<ID=DP,Number=1,Type=Integer,Description="Depth">\n'
                 '##INFO=<ID=AF,Number=A,Type=Float,Description="Allele frequency">\n'
                 '##INFO=<ID=DB,Number=0,Type=Flag,Description="dbSNP">\n'
                 '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
                 '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Depth">\n'
                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n")
        for c, length in CHROMS:
            k = round(n * length / total) if c != CHROMS[-1][0] else n - sum(
                round(n * ln / total) for _, ln in CHROMS[:-1])
            step = length // (k + 1)
            pos = 1
            for i in range(k):
                pos += rng.randint(1, 2 * step - 1)
                ref, alt = rng.choice("ACGT"), rng.choice("ACGT")
                info = f"DP={rng.randint(1, 99)};AF={rng.randint(1, 99) / 100}" + (";DB" if i % 7 == 0 else "")
                gt = rng.choice(("0/1", "1/1", "0|1", "1|0"))
                fh.write(f"{c}\t{pos}\trs{i}\t{ref}\t{alt}\t{rng.randint(10, 99)}\tPASS\t{info}\tGT:DP\t{gt}:{rng.randint(1, 60)}\n")
    subprocess.run([_tool("bgzip"), "-f", str(plain)], check=True)
    subprocess.run([_tool("tabix"), "-f", "-p", "vcf", str(out)], check=True)
    return out


def make_bam(n: int) -> Path:
    """``n`` 100 bp reads over 22 chromosomes, coordinate-sorted, indexed."""
    out = DATA / f"reads-{n}.bam"
    if out.exists() and Path(str(out) + ".bai").exists():
        return out
    DATA.mkdir(parents=True, exist_ok=True)
    import random

    rng = random.Random(11)
    total = sum(length for _, length in CHROMS)
    sam = out.with_suffix(".sam")
    with open(sam, "w") as fh:
        fh.write("@HD\tVN:1.6\tSO:coordinate\n")
        for c, length in CHROMS:
            fh.write(f"@SQ\tSN:{c}\tLN:{length}\n")
        seq = "".join(rng.choice("ACGT") for _ in range(4000))
        qual = "".join(chr(33 + rng.randint(20, 40)) for _ in range(4000))
        for c, length in CHROMS:
            k = round(n * length / total) if c != CHROMS[-1][0] else n - sum(
                round(n * ln / total) for _, ln in CHROMS[:-1])
            starts = sorted(rng.randint(1, length - 200) for _ in range(k))
            for i, p in enumerate(starts):
                o = rng.randint(0, 3800)
                cigar = "100M" if i % 5 else "50M2D50M"
                fh.write(f"r{c}_{i}\t{rng.choice((0, 16, 99, 147))}\t{c}\t{p}\t{rng.randint(0, 60)}\t{cigar}\t=\t"
                         f"{p + 200}\t300\t{seq[o:o + 100]}\t{qual[o:o + 100]}\tNM:i:{i % 4}\tAS:i:{100 - i % 9}\n")
    subprocess.run([_tool("samtools"), "view", "-b", "-o", str(out), str(sam)], check=True)
    subprocess.run([_tool("samtools"), "index", str(out)], check=True)
    sam.unlink()
    return out


# ---------------------------------------------------------------------------- contenders

POLARS_BIO = r"""
import json, sys, time
import polars as pl, polars_bio as pb
kind, path, mode, parts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
pb.set_option("datafusion.execution.target_partitions", parts)
scan = pb.scan_vcf if kind == "vcf" else pb.scan_bam
def run():
    lf = scan(path)
    if mode == "sum":  # start is 32-bit: summed as 64-bit, as giql-spark's is
        out = lf.select(pl.col("start").cast(pl.Int64).sum().alias("s"), pl.len().alias("n")).collect()
        return int(out["n"][0]), int(out["s"][0])
    df = lf.collect()
    return df.height, None
run()  # untimed, as every contender's first run
t, cpu = time.perf_counter(), time.process_time()
n, s = run()
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - cpu, "rows": n, "sum": s}))
"""


def peer_polars_bio(python: str, kind: str, path: Path, mode: str) -> dict:
    f = run_measured([python, "-c", POLARS_BIO, kind, str(path), mode, "2"], timeout=3600)
    if f.returncode != 0:
        raise RuntimeError(f.stderr.strip().splitlines()[-1] if f.stderr.strip() else f"exit {f.returncode}")
    out = json.loads(f.stdout.strip().splitlines()[-1])
    out["rss"] = f.rss
    return out


def peer_tool(kind: str, path: Path, mode: str) -> dict:
    """bcftools / samtools on one thread; the time of the command itself."""
    if kind == "vcf":
        awk = "awk '{s+=$1} END {printf \"%d %.0f\\n\", NR, s}'"
        cmd = (f"{_tool('bcftools')} query -f '%POS\\n' {path} | {awk}" if mode == "sum"
               else f"{_tool('bcftools')} view -O u -o /dev/null {path}")
        count = f"{_tool('bcftools')} index -n {path}.tbi"
    else:
        cmd = (f"{_tool('samtools')} view -c {path}" if mode == "sum"
               else f"{_tool('samtools')} view -u -o /dev/null {path}")
        count = f"{_tool('samtools')} idxstats {path} | awk '{{n+=$3+$4}} END {{print n}}'"
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    f = run_measured(["bash", "-c", cmd], timeout=3600)
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if f.returncode != 0:
        raise RuntimeError(f.stderr.strip()[-300:])
    words = f.stdout.split() if mode == "sum" else subprocess.run(
        ["bash", "-c", count], capture_output=True, text=True, check=True).stdout.split()  # untimed
    return {"seconds": seconds, "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "rows": int(words[0]), "sum": int(words[1]) if len(words) > 1 and mode == "sum" else None, "rss": f.rss}


def _cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds of ``pids`` so far (/proc/PID/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def giql_run(session, path: Path, mode: str) -> dict:
    """One read; ``cpu``: the JVM's CPU seconds in it (the driver's Python is idle meanwhile)."""
    from pyspark.sql import functions as F

    jvm = [int(session.spark.sparkContext._jvm.ProcessHandle.current().pid())]
    df = session.read(str(path), validate=False)
    t, cpu = time.perf_counter(), _cpu_seconds(jvm)
    if mode == "sum":
        row = df.agg(F.count(F.lit(1)).alias("n"), F.sum("start").alias("s")).collect()[0]
        rows, total = int(row["n"]), int(row["s"])
    else:
        df.write.format("noop").mode("overwrite").save()
        rows, total = None, None
    return {"seconds": time.perf_counter() - t, "cpu": _cpu_seconds(jvm) - cpu, "rows": rows, "sum": total}


# ---------------------------------------------------------------------------- the split projection


def split_projection(session, path: Path, tasks: int, log_dir: Path, fmt: str, rounds: int = 5) -> dict:
    """The file read (sum) in ``tasks`` splits of equal bytes (the reader's ``split_bytes``);
    each measured stage projected to ``tasks`` cores from the event log, after as many untimed
    reads (the JIT compiles a split's code, the first splits would pay for it); the median."""
    from pyspark.sql import functions as F

    from giql_spark.io.jvm_source import CLASS

    spark = session.spark
    size = os.path.getsize(path)
    sc = spark.sparkContext
    reader = spark.read.format(CLASS).option("path", str(path)).option("format", fmt).option(
        "split_bytes", str(-(-size // tasks)))
    measured = []
    for i in range(2 * rounds):
        group = f"split-{tasks}-{i}-{time.time_ns()}"
        sc.setJobGroup(group, group)
        try:
            df = reader.load()
            parts = df.rdd.getNumPartitions()
            df.agg(F.count(F.lit(1)), F.sum("start")).collect()
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)
        if i >= rounds:
            measured.append((group, parts))
    time.sleep(2)  # the event log is written asynchronously
    log = eventlog.read(log_dir)
    runs = []
    for group, parts in measured:
        times = [s for s in log.stages(group) if len(s[1]) == parts][0][1]  # the scan, not the final aggregate
        runs.append({"tasks": parts, "task_seconds": times, "work": sum(times), "longest": max(times),
                     "projected": max(max(times), sum(times) / tasks)})
    runs.sort(key=lambda r: r["projected"])
    return {**runs[len(runs) // 2], "runs": [r["projected"] for r in runs]}


# ---------------------------------------------------------------------------- main


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=2_000_000, help="variants in the VCF")
    p.add_argument("--reads", type=int, default=2_000_000, help="reads in the BAM")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--peers-python", default=os.environ.get("GIQL_BENCH_PEERS_PYTHON"),
                   help="a Python with polars-bio")
    p.add_argument("--driver-memory", default="4g")
    p.add_argument("--only", choices=("vcf", "bam"), help="one file only")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "reports" / "READERS.md")
    args = p.parse_args(argv)

    files = {}
    if args.only in (None, "vcf"):
        files["vcf"] = make_vcf(args.records)
    if args.only in (None, "bam"):
        files["bam"] = make_bam(args.reads)
    load_start = load_averages()

    import giql_spark as gs

    log_dir = Path(tempfile.mkdtemp(prefix="giql-readers-log-"))
    spark = gs.local_spark("local[2]", config={"spark.driver.memory": args.driver_memory, "spark.ui.enabled": "false",
                                              "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(log_dir),
                                              "spark.eventLog.compress": "false"})
    session = gs.Session(spark)
    facts = machine_facts(spark)
    results: dict = {}
    for kind, path in files.items():
        for mode in ("sum", "all columns"):
            cell = results.setdefault(f"{kind} {mode}", {})
            runs = {"giql-spark": [], "polars-bio": [], "bcftools" if kind == "vcf" else "samtools": []}
            giql_run(session, path, "sum" if mode == "sum" else "all")  # untimed
            for _ in range(args.repeats):
                with TreePeak(os.getpid()) as peak:
                    r = giql_run(session, path, "sum" if mode == "sum" else "all")
                r["rss"] = peak.bytes
                runs["giql-spark"].append(r)
                if args.peers_python:
                    runs["polars-bio"].append(peer_polars_bio(args.peers_python, kind, path,
                                                              "sum" if mode == "sum" else "all"))
                tool = "bcftools" if kind == "vcf" else "samtools"
                runs[tool].append(peer_tool(kind, path, "sum" if mode == "sum" else "all"))
            for name, rs in runs.items():
                if rs:
                    cell[name] = {"seconds": [r["seconds"] for r in rs], "cpu": [r["cpu"] for r in rs],
                                  "rows": rs[-1]["rows"], "sum": rs[-1]["sum"], "rss": max(r["rss"] for r in rs)}
            print(kind, mode, {k: (statistics.median(v["seconds"]), v["rows"], v["sum"]) for k, v in cell.items()},
                  flush=True)
        results[f"{kind} splits"] = {n: split_projection(session, path, n, log_dir, kind) for n in (1, 10)}
        print(kind, "splits", {n: (v["tasks"], v["projected"]) for n, v in results[f"{kind} splits"].items()},
              flush=True)
    load_end = load_averages()
    spark.stop()
    write_report(args.out, report(args, files, results, facts, load_start, load_end), {
        "args": {k: str(v) for k, v in vars(args).items()}, "results": results, "facts": facts,
        "load": [load_start, load_end]})
    print(args.out)
    return 0


def report(args, files, results, facts, load_start, load_end) -> str:
    lines = header("Genomic readers: a VCF and a BAM read whole", "`benchmarks/readers.py`")
    lines += [f"Machine: {facts['cores']} cores ({facts['cpu']}), {facts['memory_gib']} GiB; Spark {facts['spark']}, "
              f"{facts['java']}; load average at the start {load_start}, at the end {load_end}.", ""]
    for kind, path in files.items():
        lines += [f"## {kind.upper()}: `{path.name}` ({os.path.getsize(path) / 2**20:.0f} MB)", "",
                  "| work | contender | cores | seconds, median (runs, range) | CPU seconds | records | sum of positions | "
                  "peak memory | time against polars-bio | CPU against polars-bio |", "|---|---|---|---|---|---|---|---|---|---|"]
        for mode in ("sum", "all columns"):
            cell = results[f"{kind} {mode}"]
            pb = statistics.median(cell["polars-bio"]["seconds"]) if "polars-bio" in cell else None
            pbc = statistics.median(cell["polars-bio"]["cpu"]) if "polars-bio" in cell else None
            for name, v in cell.items():
                med, cpu = statistics.median(v["seconds"]), statistics.median(v["cpu"])
                cores = 1 if name in ("bcftools", "samtools") else 2
                ratio = f"{med / pb:.2f}x" if pb else ""
                cratio = f"{cpu / pbc:.2f}x" if pbc else ""
                lines.append(f"| {mode} | {name} | {cores} | {spread(v['seconds'])} | {cpu:.2f} | "
                             f"{v['rows'] if v['rows'] is not None else ''} | {v['sum'] if v['sum'] is not None else ''} | "
                             f"{v['rss'] / 2**30:.2f} GiB | {ratio} | {cratio} |")
        s = results[f"{kind} splits"]
        one, ten = s[1], s[10]
        lines += ["", f"Splits (the median of {len(ten['runs'])} reads after as many untimed ones): one task took "
                  f"{one['projected']:.2f} s; {ten['tasks']} tasks took {ten['work']:.2f} task-s, the longest "
                  f"{ten['longest']:.2f} s, projected to {ten['tasks']} cores {ten['projected']:.2f} s: "
                  f"**{one['projected'] / ten['projected']:.1f}x** the one-task read.", ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
