"""The cost model's constants: shipped defaults, or a calibration of this machine.

``giql-spark calibrate`` measures the strategies on generated data and writes
a JSON file of constants; the planner reads it from ``$GIQL_SPARK_CALIBRATION``
or, by default, ``~/.config/giql-spark/calibration.json``. Keys missing from
the file keep their defaults, so an old file stays usable.

The defaults are seconds per unit of each term of :mod:`.cost`. The binned
join's ``row_shuffle`` and ``candidate`` and every ``scale_<strategy>`` are
the output of ``giql-spark calibrate --rows 1000000`` on the 2-core machine of
``benchmarks/`` (kept beside this module in ``calibration.json``; a test holds the two
equal); the other unit
constants were set by hand from the same machine's benchmark runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

DEFAULTS = {
    "fixed_jvm": 0.5,            # a Spark job with one shuffle, scheduling and start
    "fixed_python": 1.5,         # the same, plus Python workers and compiled kernels
    "fixed_binned": 0.1,         # the explode and its extra stage, over a plain join
    # the extra fixed cost of a k-nearest merge over the broadcast: the files' layout read when
    # planning, an index per key in its task (measured at 100K a side: 0.8-1.0 s against 0.5 s)
    "fixed_merge_nearest": 0.3,
    "row_scan": 1.5e-7,          # read and expand one row, no shuffle
    "row_shuffle": 1.25e-6,      # one expanded row through a shuffle
    "candidate": 1.32e-8,        # one candidate pair tested in a hash-join bucket
    "output": 5e-8,              # one result pair emitted in the JVM
    "build_row": 2e-6,           # one build row collected, indexed and shipped
    "python_row": 1.5e-6,        # one row to a Python worker and back through Arrow
    "probe_level": 1e-8,         # one level of an index descent
    "python_pair": 3e-7,         # one result pair built in Python and returned
    "sweep_step": 5e-8,          # one step of the compiled sweep
    "nested_pair": 1.2e-8,       # one pair tested by Spark's nested loop
    "row_bytes": 20.0,           # bytes per row when only a size is known
    "index_bytes_per_row": 64.0,  # driver and task memory of one indexed build row
    "broadcast_budget_bytes": 512 * 2**20,
    "broadcast_hash_bytes": 10 * 2**20,  # Spark's autoBroadcastJoinThreshold default
    "jvm_build_row": 6e-7,       # one build row collected, indexed and broadcast by the JVM operator
    # one probe row read and looked up in the JVM index (2 tasks at once): 1,000 x 10M rows,
    # the 10M probed, took 1.13-1.14 s in benchmarks/reports/OPTIMIZER.md, which 3e-7 put at 4 s
    "jvm_probe_row": 5e-8,
    "jvm_index_bytes_per_row": 80.0,  # driver and executor memory of one JVM-indexed row
    "jvm_broadcast_budget_bytes": 2 * 2**30,
    "jvm_merge_row": 2e-7,
    # A join reduced per left row (set by hand, not fitted by calibrate): one pair added to its
    # left row's count inside the JVM join; one pair through Spark's partial aggregate.
    "per_row_pair": 1e-8,
    "aggregate_row": 1e-7,
    # The cluster projection (cost.project): the cores the constants were fitted with (their
    # terms are wall seconds with that many tasks at once), and a task's launch and finish
    # (Spark's scheduler, set by hand).
    "calibration_cores": 2,
    # a file opened on an object store (s3a, gs, abfss ...): a round trip before its first byte
    # (set by hand from the stores' published first-byte latencies, 20-50 ms)
    "object_store_open": 0.03,
    "task_overhead": 0.004,       # one row of sorted Parquet read and swept by the merge join (2 tasks at once)
    # Per-strategy factors fitted by ``giql-spark calibrate`` (1: as the unit constants say).
    "scale_binned": 0.8879,
    "scale_broadcast": 0.7217,
    "scale_sweep": 1.0429,
    "scale_naive": 0.516,
    "scale_jvm_broadcast": 1.0,
    "scale_jvm_sweep": 1.0,
    "scale_jvm_merge": 1.0,
}


def path() -> Path:
    env = os.environ.get("GIQL_SPARK_CALIBRATION")
    return Path(env) if env else Path.home() / ".config" / "giql-spark" / "calibration.json"


def load() -> tuple[dict, str]:
    """(constants, where they came from)."""
    p = path()
    try:
        found = json.loads(p.read_text())
    except (OSError, ValueError):
        return dict(DEFAULTS), "shipped defaults"
    merged = dict(DEFAULTS)
    merged.update({k: float(v) for k, v in found.get("constants", {}).items() if k in DEFAULTS})
    return merged, f"calibrated ({p})"


def save(constants: dict, info: dict) -> Path:
    p = path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"constants": constants, **info}, indent=2, sort_keys=True))
    return p
