"""Fit the cost model to this machine: ``giql-spark calibrate``.

Each strategy runs a counting interval join on generated data (hg38-shaped
chromosomes, uniform and heavy-tailed widths) and its measured median time is
set against the model's estimate for the same statistics. The shared unit
constants keep their shipped values; what is fitted is one factor per
strategy, ``scale_<strategy>`` = median(measured / estimated), which carries
how much faster or slower this machine runs that strategy than the machine
the defaults came from. The result goes to :func:`.constants.path`.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import constants as constants_mod
from .choose import choose

#: The chromosomes the generated data lives on (hg38 chr1-22, X; Mb).
_CHROMS = {f"chr{i}": n for i, n in enumerate(
    [248, 242, 198, 190, 181, 171, 159, 145, 138, 134, 135, 133, 114, 107, 102, 90, 83, 80, 59, 64,
     47, 51], start=1)}
_CHROMS["chrX"] = 156
QUERY = "SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval"


def generate(n: int, profile: str, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    names = list(_CHROMS)
    lengths = np.array([_CHROMS[c] * 1_000_000 for c in names])
    per = rng.multinomial(n, lengths / lengths.sum())
    chrom = np.repeat(np.array(names, dtype=object), per)
    start = np.concatenate([rng.integers(0, length, k) for length, k in zip(lengths, per)])
    if profile == "uniform":
        width = rng.integers(100, 2_001, n)
    else:
        width = np.clip(rng.lognormal(np.log(10_000), 1.2, n), 100, 2_500_000).astype(np.int64)
    return pa.table({"chrom": chrom, "start": start, "end": start + width})


def runs(rows: int) -> list[tuple[str, str, int, int, dict]]:
    """(strategy, profile, left rows, right rows, options) measured."""
    out = []
    for profile in ("uniform", "heavy"):
        out.append(("binned", profile, rows, rows, {"strategy": "binned"}))
        out.append(("sweep", profile, rows, rows, {"strategy": "sweep"}))
        out.append(("broadcast", profile, rows, rows // 10, {"strategy": "broadcast"}))
    out.append(("naive", "uniform", 2_000, 2_000, {"strategy": "naive"}))
    return out


def calibrate(session, rows: int = 200_000, repeats: int = 3, log=print) -> dict:
    """Measure, fit and store the factors; return the stored document."""
    base, origin = constants_mod.load()
    for key in list(base):
        if key.startswith("scale_"):
            base[key] = 1.0
    ratios: dict[str, list[float]] = {}
    rows_done = []
    with tempfile.TemporaryDirectory(prefix="giql-spark-calibrate-") as tmp:
        for strategy, profile, nl, nr, options in runs(rows):
            paths = []
            for side, n, seed in (("l", nl, 1), ("r", nr, 2)):
                p = os.path.join(tmp, f"{profile}_{side}_{n}.parquet")
                if not os.path.exists(p):
                    pq.write_table(generate(n, profile, seed), p)
                session.register(side, p)
                paths.append(p)
            session.options.update(options)
            try:
                _, nodes = session._plan(QUERY)
                node = nodes[0]
                ls, rs = node.choice["stats"]
                est = next(e for e in choose(node, {}, ls, rs, (base, origin))["estimates"]
                           if e.strategy == strategy)
                session.sql(QUERY).collect()  # warm-up: Python workers, compiled kernels, JIT
                times = []
                for _ in range(repeats):
                    t0 = time.perf_counter()
                    session.sql(QUERY).collect()
                    times.append(time.perf_counter() - t0)
            finally:
                session.options.update(strategy=None)
            measured = statistics.median(times)
            ratios.setdefault(strategy, []).append(measured / est.seconds)
            rows_done.append({"strategy": strategy, "profile": profile, "left_rows": nl, "right_rows": nr,
                              "measured_s": round(measured, 3), "estimated_s": round(est.seconds, 3)})
            log(f"{strategy:9s} {profile:7s} {nl:>9,} x {nr:<9,} measured {measured:6.2f} s, "
                f"model {est.seconds:6.2f} s")
    fitted = {k: v for k, v in base.items() if not k.startswith("scale_")}
    for strategy, rs in ratios.items():
        fitted[f"scale_{strategy}"] = round(float(statistics.median(rs)), 4)
    doc = {"runs": rows_done, "rows": rows, "repeats": repeats,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path = constants_mod.save(fitted, doc)
    log(f"wrote {path}: " + ", ".join(f"{k}={v}" for k, v in fitted.items() if k.startswith("scale_")))
    return {"constants": fitted, **doc, "path": str(path)}
