"""Fit the cost model to this machine: ``giql-spark calibrate``.

The strategies run a counting interval join on generated data (hg38-shaped
chromosomes, uniform and heavy-tailed widths), and the measured median times
are set against the model's terms for the same statistics.

* The binned join runs at several bin sizes. Its time at bin size B is
  ``a + row_shuffle * rows(B) + candidate * candidates(B)``, with ``a`` (the
  fixed cost, the scan and the output) the same for every B on one data set;
  ``row_shuffle`` and ``candidate`` are fitted by least squares over all data
  sets, each with its own ``a``. Their ratio is what places the bin size the
  optimizer picks, which no single factor could move.
* Every strategy then gets a factor, ``scale_<strategy>`` =
  median(measured / estimated), which carries how much faster or slower this
  machine runs it than the fitted unit constants say.

The generated files are sorted by (chromosome, start), so the merge join of
sorted files is timed too; a strategy that refuses the data keeps its factor.
The result goes to :func:`.constants.path`; the shipped defaults are such a
fit, made on the 2-core machine of ``benchmarks/``.
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
from .stats.spark import cluster_cores
from ..errors import QueryError
from . import registry
from .cost import Shape, binned, shape

#: The chromosomes the generated data lives on (hg38 chr1-22, X; Mb).
_CHROMS = {f"chr{i}": n for i, n in enumerate(
    [248, 242, 198, 190, 181, 171, 159, 145, 138, 134, 135, 133, 114, 107, 102, 90, 83, 80, 59, 64,
     47, 51], start=1)}
_CHROMS["chrX"] = 156
#: Rows per Parquet row group: Spark splits a file's reading between tasks by row group.
ROW_GROUP = 131_072
QUERY = "SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval"


def generate(n: int, profile: str, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    names = list(_CHROMS)
    lengths = np.array([_CHROMS[c] * 1_000_000 for c in names])
    per = rng.multinomial(n, lengths / lengths.sum())
    chrom = np.repeat(np.array(names, dtype=object), per)
    # sorted by (chromosome, start), as most genomic Parquet is: the merge join can run on it
    start = np.concatenate([np.sort(rng.integers(0, length, k)) for length, k in zip(lengths, per)])
    if profile == "uniform":
        width = rng.integers(100, 2_001, n)
    else:
        width = np.clip(rng.lognormal(np.log(10_000), 1.2, n), 100, 2_500_000).astype(np.int64)
    return pa.table({"chrom": chrom, "start": start, "end": start + width})


#: Bin sizes the binned join is timed at, per profile (heavy widths make small bins slow).
BIN_GRID = {"uniform": (2_000, 10_000, 50_000, 200_000, 1_000_000),
            "heavy": (10_000, 50_000, 200_000, 1_000_000)}


def runs(rows: int) -> list[tuple[str, str, int, int, dict]]:
    """(strategy, profile, left rows, right rows, options) measured: the
    binned join at each bin size of :data:`BIN_GRID`, every other strategy
    of the registry at the sizes its entry gives (at full size for most: a
    Python worker's fixed cost would dominate a small run, and the factor
    must describe the sizes where the choice matters), on the profiles its
    entry names."""
    out = []
    for name, strategy in registry.BATCH.items():
        # a strategy that runs only on some inputs (the merge of sorted files) is timed
        # where it accepts the generated data, which is sorted; see calibrate()
        if strategy.calibration_sweep:
            size = strategy.calibration_sweep
            out.extend((name, profile, rows, rows, {"strategy": name, size: b})
                       for profile, sizes in BIN_GRID.items() for b in sizes)
            continue
        nl, nr = strategy.calibration(rows)
        for profile in strategy.calibration_profiles or tuple(BIN_GRID):
            out.append((name, profile, nl, nr, {"strategy": name}))
    return out


def fit_binned(points: list[tuple[str, float, float, float]]) -> tuple[float, float] | None:
    """Least-squares ``(row_shuffle, candidate)`` from ``(data set, rows, candidates, seconds)``.

    Each data set has its own intercept. Both constants are kept positive: a
    negative fit (noise, or too narrow a grid) is refitted with that constant
    pinned near zero. None when the points cannot separate the two.
    """
    sets = sorted({p[0] for p in points})
    if len(points) < len(sets) + 2:
        return None
    a = np.zeros((len(points), len(sets) + 2))
    y = np.array([p[3] for p in points])
    for i, (name, rows, cands, _) in enumerate(points):
        a[i, sets.index(name)] = 1.0
        a[i, -2], a[i, -1] = rows, cands
    # Columns scaled to comparable magnitudes so the solve is well conditioned.
    norm = np.maximum(np.abs(a).max(axis=0), 1e-300)
    coef = np.linalg.lstsq(a / norm, y, rcond=None)[0] / norm
    row, cand = float(coef[-2]), float(coef[-1])
    floor = 1e-12
    if row <= 0 or cand <= 0:
        keep = -1 if row <= 0 else -2  # the column that stays free
        cols = list(range(len(sets))) + [a.shape[1] + keep]
        sub = np.linalg.lstsq(a[:, cols] / norm[cols], y, rcond=None)[0] / norm[cols]
        free = max(float(sub[-1]), floor)
        row, cand = (floor, free) if row <= 0 else (free, floor)
    return row, cand


def _measure(session, query: str, repeats: int) -> float:
    session.sql(query).collect()  # warm-up: Python workers, compiled kernels, JIT
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        session.sql(query).collect()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def calibrate(session, rows: int = 1_000_000, repeats: int = 3, log=print) -> dict:
    """Measure, fit and store the constants; return the stored document."""
    base, origin = constants_mod.load()
    for key in list(base):
        if key.startswith("scale_"):
            base[key] = 1.0
    measured: list[tuple[str, str, int, int, dict, float, Shape]] = []
    missing = registry.unavailable(session.spark)
    for name, why in missing.items():
        log(f"{name:16s} not measured: {why}")
    with tempfile.TemporaryDirectory(prefix="giql-spark-calibrate-") as tmp:
        for strategy, profile, nl, nr, options in runs(rows):
            if strategy in missing:
                continue
            for side, n, seed in (("l", nl, 1), ("r", nr, 2)):
                p = os.path.join(tmp, f"{profile}_{side}_{n}.parquet")
                if not os.path.exists(p):
                    pq.write_table(generate(n, profile, seed), p, row_group_size=ROW_GROUP)
                session.register(side, p)
            session.options.update(options)
            try:
                # As EXPLAIN does: statistics even though the strategy is forced.
                try:
                    _, _, built = session._execute(QUERY, always_stats=True, dry_run=True)
                except QueryError as e:  # the strategy refuses these inputs: its factor stays
                    log(f"{strategy:16s} {profile:7s} not measured: {e}")
                    continue
                ls, rs = built[0].choice.stats
                seconds = _measure(session, QUERY, repeats)
            finally:
                session.options.update(strategy=None, bin_size=None)
            measured.append((strategy, profile, nl, nr, options, seconds, shape(ls, rs, base)))
            label = f"{strategy} {options.get('bin_size', '')}".strip()
            log(f"{label:16s} {profile:7s} {nl:>9,} x {nr:<9,} measured {seconds:6.2f} s")

    fitted = {k: v for k, v in base.items() if not k.startswith("scale_")}
    # the measured seconds are with this session's tasks at once
    fitted["calibration_cores"] = cluster_cores(session.spark)[0] or base["calibration_cores"]
    points = []
    for strategy, profile, _, _, options, seconds, sh in measured:
        swept = registry.get(strategy).calibration_sweep
        if not swept:
            continue
        terms = binned(sh, base, options[swept]).terms
        if "expand+shuffle" not in terms:  # Spark broadcast the expanded side: another cost shape
            continue
        points.append((profile, terms["expand+shuffle"] / base["row_shuffle"],
                       terms["candidates"] / base["candidate"], seconds))
    pair = fit_binned(points)
    if pair is not None:
        fitted["row_shuffle"], fitted["candidate"] = (float(f"{v:.3g}") for v in pair)
        log(f"binned fit over {len(points)} runs: row_shuffle {fitted['row_shuffle']:.3g} s/row, "
            f"candidate {fitted['candidate']:.3g} s/pair")
    else:
        log("binned fit skipped: too few runs on the shuffle path; row_shuffle and candidate kept")

    unscaled = {**fitted, **{k: 1.0 for k in base if k.startswith("scale_")}}
    ratios: dict[str, list[float]] = {}
    rows_done = []
    for strategy, profile, nl, nr, options, seconds, sh in measured:
        entry = registry.get(strategy)
        est = entry.cost(sh, unscaled, "inner", entry.given(options))
        ratios.setdefault(strategy, []).append(seconds / est.seconds)
        rows_done.append({"strategy": strategy, "profile": profile, "left_rows": nl, "right_rows": nr,
                          "params": {k: v for k, v in options.items() if k != "strategy"},
                          "measured_s": round(seconds, 3), "estimated_s": round(est.seconds, 3)})
    for strategy, rs in ratios.items():
        fitted[f"scale_{strategy}"] = round(float(statistics.median(rs)), 4)
    doc = {"runs": rows_done, "rows": rows, "repeats": repeats, "from": origin,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path = constants_mod.save(fitted, doc)
    log(f"wrote {path}: " + ", ".join(f"{k}={fitted[k]}" for k in
                                      ("row_shuffle", "candidate", *sorted(k for k in fitted if k.startswith("scale_")))))
    return {"constants": fitted, **doc, "path": str(path)}
