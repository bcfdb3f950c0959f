"""Where the time of one giql-spark operation goes: a JFR profile of the Spark JVM, by category.

Each operation runs once to warm up and once under the profile, in one local Spark (local[2],
driver memory 12g, as the scale benchmark), reading the scale benchmark's files and writing its
result to Parquet as a user would. Each sample of the JVM's threads is put in the category of
its topmost frame that has one (Parquet writing, Parquet reading, row building, shuffle and
sort, giql-spark's operators), else "other". Run it from the repository's root with nothing else
on the machine; ``PYTHONPATH`` chooses the code (a worktree of an older commit gives "before")::

    PYTHONPATH=src python benchmarks/diagnostics/profile_ops.py --size 10000000 --ops count_overlaps,coverage
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.data import data_paths  # noqa: E402
from scale_spark import PAIRS  # noqa: E402  (the pairs the scale benchmark writes)

CATEGORIES = [
    ("Parquet write", r"ParquetWriteSupport|ColumnWriter|ValuesWriter|CapacityByteArray|FileFormatDataWriter|"
                      r"InternalParquetRecordWriter|ColumnChunkPageWriteStore|RunLengthBitPackingHybridEncoder"),
    ("Parquet read", r"VectorizedParquetRecordReader|VectorizedColumnReader|parquet\.hadoop\.ParquetFileReader|"
                     r"PlainValuesDictionary|ParquetDictionary|LittleEndianDataInputStream|VectorizedRleValuesReader|"
                     r"ParquetVectorUpdater"),
    ("row building", r"UnsafeWriter|UnsafeRowWriter|UnsafeProjection|UTF8String|UnsafeRow\.copy|GeneratedClass"),
    ("shuffle, sort, window", r"[Ss]huffle|UnsafeExternalSorter|UnsafeInMemorySorter|RadixSort|WindowExec|"
                              r"WindowFunctionFrame|ExternalAppendOnly|TimSort"),
    ("giql-spark operators", r"io\.giql\.spark"),
]
OPS = ("count", "pairs", "count_overlaps", "coverage", "nearest")
# Without DebugNonSafepoints a sample is put at the nearest safepoint, often another method than
# the one running (a profile of the merge count put 6% in a list growth that never happened).
JVM_FLAGS = '--driver-java-options "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints" pyspark-shell'


def run_op(op: str, size: int, order: str, out: str) -> None:
    """The child: one warm-up and one profiled run of ``op`` (the profile starts on a signal file)."""
    import giql_spark as gs

    left, right = data_paths("uniform", size, order)
    s = gs.Session()
    spark = s.spark
    spark.sparkContext.setLogLevel("ERROR")
    a, b = spark.read.parquet(str(left)), spark.read.parquet(str(right))
    s.register("l", a)
    s.register("r", b)

    def once():
        if op == "count":
            return s.sql("SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval").collect()
        if op == "pairs":
            df = s.sql(PAIRS)
        else:
            df = getattr(gs, op)(a, b)
        df.write.mode("overwrite").parquet(out)

    once()
    jvm = spark._jvm
    rec = jvm.jdk.jfr.Recording(jvm.jdk.jfr.Configuration.getConfiguration("profile"))
    rec.start()
    t = time.perf_counter()
    once()
    took = time.perf_counter() - t
    rec.stop()
    rec.dump(jvm.java.io.File(out + ".jfr").toPath())
    print(f"SECONDS {took:.2f}")


def categories(jfr: str) -> Counter:
    # the whole stack: `jfr print` shows 5 frames unless told, and a sample's category is often deeper
    text = subprocess.run(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "128", jfr],
                          capture_output=True, text=True, check=True).stdout
    counts = Counter()
    patterns = [(name, re.compile(p)) for name, p in CATEGORIES]
    for event in text.split("jdk.ExecutionSample")[1:]:
        frames = re.findall(r"^\s+([\w.$<>]+)\(", event, re.M)
        if not frames:
            continue
        name = next((n for f in frames for n, p in patterns if p.search(f)), "other")
        counts[name] += 1
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated; 'count@random' reads the unsorted files")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        op, order, out = args.child.split("|")
        run_op(op, args.size, order, out)
        return
    names = [n for n, _ in CATEGORIES] + ["other"]
    print("| op | seconds | samples | " + " | ".join(names) + " |")
    print("|---|---:|---:|" + "---:|" * len(names))
    for spec in args.ops.split(","):
        op, _, order = spec.partition("@")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.parquet")
            child = subprocess.run([sys.executable, __file__, "--size", str(args.size), "--child",
                                    f"{op}|{order or 'sorted'}|{out}"], capture_output=True, text=True,
                                   env={**os.environ, "PYSPARK_SUBMIT_ARGS": JVM_FLAGS})
            took = re.search(r"SECONDS ([\d.]+)", child.stdout)
            if child.returncode or not took:
                print(f"| {spec} | failed: {(child.stderr.strip().splitlines() or ['?'])[-1][:200]} |")
                continue
            counts = categories(out + ".jfr")
            n = sum(counts.values())
            cells = " | ".join(f"{counts[c] / n:.0%}" for c in names)
            print(f"| {spec} | {float(took.group(1)):.2f} | {n} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
