"""The cost model: estimated seconds of each interval-join strategy.

Every estimate is a sum of terms, each an estimated count times a constant
(seconds per unit) from :mod:`.constants`, times the strategy's factor that
``giql-spark calibrate`` fits on the machine (1 with the shipped defaults). The counts come from the
statistics (:mod:`.stats`), under one assumption stated here once: within a
chromosome, interval starts are spread uniformly over its extent.

For sides L and R with rows ``n``, mean widths ``w`` and, per chromosome c,
rows ``n_c`` and extent ``len_c``:

* output pairs ``k = sum_c nL_c nR_c min(1, (wL + wR + 1) / len_c)``;
* binned at bin size B: each row touches ``1 + w/B`` bins on average (exact
  over the width sample), rows meet per bin, so candidate pairs are
  ``sum_c (nL_c rL)(nR_c rR) min(1, B / len_c)``; rows expanded
  ``nL rL + nR rR`` are shuffled, unless the expanded smaller side is under
  Spark's broadcast threshold, when only it moves and the other is scanned;
* broadcast: the build side is collected and indexed on the driver and
  every probe row crosses to Python and back; refused above the memory
  budget;
* sweep at tile T: both sides, replicated ``1 + w/T`` times, are shuffled
  and cross to Python; the sweep itself is linear in rows plus pairs;
* plain SQL: Spark's nested loop per chromosome, ``sum_c nL_c nR_c`` pair
  tests; only ever considered for tiny inputs;
* the JVM operators (where the session has giql-spark's extension): the
  broadcast index costs a JVM build per build row and a JVM lookup per probe
  row, refused above its memory budget; the JVM sweep a shuffle of the tiled
  rows and a linear sweep, for inner joins; the merge of files sorted by
  (chromosome, start) a read of both sides and the same sweep, no shuffle
  (it is costed only where the extension found the files sorted).

A join whose statement reduces it per left row (:attr:`~.nodes.IntervalJoin.per_row`)
returns ``nL`` rows, not ``k`` pairs, from the operators that count inside
the join (the merge, the broadcast with the right side indexed): each pair
costs an addition to its left row's count, each left row one output row.
Every other strategy makes its pairs and Spark aggregates them: a partial
aggregate per pair and a shuffle of at most one row per left row. A statement
that only counts an inner join's rows (:attr:`~.nodes.IntervalJoin.count_only`)
costs those operators an addition per pair and no pair built.

The terms are seconds on the machine the constants were fitted on, with its
``calibration_cores`` tasks at once. :func:`project` turns an estimate into
its time on the cluster the query gets (:class:`Cluster`): the driver's terms
(``fixed``, a broadcast's ``build``) as they are, the rest as work in
task-seconds spread over the strategy's tasks, of which the longest bounds the
stage (a merge task holds a run of the genome, no finer than its ranges of
row groups; a bin or tile of a dense region is one task's), plus a launch
overhead per wave of tasks. The estimate is the makespan
``serial + overhead * waves + max(longest task, work / cores)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .stats.model import Chroms, SideStats

#: Bin sizes the binned strategy may get (clamped to this range).
BIN_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
             1_000_000, 2_000_000, 5_000_000, 10_000_000)
#: Used when a side's widths or chromosomes are unknown.
DEFAULT_WIDTH = 1_000
GENOME = 3_100_000_000
#: Rows per side at or below which plain SQL is allowed at all.
TINY_ROWS = 5_000


@dataclass
class Estimate:
    """One strategy's estimate: seconds, parameters, the terms, or why refused."""

    strategy: str
    seconds: float
    params: dict = field(default_factory=dict)
    terms: dict = field(default_factory=dict)
    refused: str | None = None
    pairs: float | None = None  # estimated output pairs, the same for every strategy
    #: Where projected on a cluster (:func:`project`): its tasks, the longest task's share of
    #: the work, the cores, and the work in task-seconds.
    tasks: int | None = None
    longest: float | None = None
    cores: int | None = None
    work: float | None = None
    #: How its widest stage is cut into tasks (:func:`layout`): ``index`` (the probe side's
    #: splits), ``merge`` (ranges of sorted files), ``shuffle`` (one key's rows together) or
    #: ``cut`` (rows copied to each bin or tile they reach).
    layout: str = "cut"

    def describe(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        head = self.strategy + (f" ({params})" if params else "")
        if self.refused:
            return f"{head}: refused, {self.refused}"
        terms = ", ".join(f"{k} {v:.2f}" for k, v in self.terms.items())
        tail = ""
        if self.tasks is not None:
            tail = (f"; {self.tasks:,} tasks, the longest {self.longest:.0%} of {self.work:.1f} task-s, "
                    f"at {self.cores} cores")
        return f"{head}: ~{self.seconds:.2f} s [{terms}{tail}]"


@dataclass(frozen=True)
class Cluster:
    """What the query runs on: ``cores`` task slots at once (``spark.giql.cores``, else Spark's
    default parallelism) and ``shuffle_partitions`` (``spark.sql.shuffle.partitions``)."""

    cores: int
    shuffle_partitions: int = 200
    #: Whether a k-nearest merge splits a busy chromosome between tasks (``spark.giql.merge.splitKeys``).
    split_keys: bool = True


@dataclass(frozen=True)
class Shape:
    """The counts every estimate reads, derived once from both sides' statistics."""

    n_left: float
    n_right: float
    # Per chromosome, as arrays (thousands of contigs are common): left rows, right rows, extent.
    chrom_left: np.ndarray
    chrom_right: np.ndarray
    chrom_extent: np.ndarray
    left_widths: np.ndarray
    right_widths: np.ndarray
    left_bytes_per_row: float
    right_bytes_per_row: float
    #: The result is reduced per left row (see the module's notes).
    per_row: bool = False
    #: The statement only counts the join's rows (see the module's notes).
    count_only: bool = False
    #: Rows per Parquet row group of each side, where the footers say.
    left_group_rows: float | None = None
    right_group_rows: float | None = None
    #: The right side's rows are known to be in (chrom, start) order: a k-nearest merge's pieces
    #: read only the right rows within reach of their left rows (see :func:`nearest_pieces`).
    right_sorted: bool = False
    #: Files each side reads on an object store (each open a round trip).
    left_store_files: int = 0
    right_store_files: int = 0

    @cached_property
    def _means(self) -> dict:
        return {side: float(w.mean()) if w.size else float(DEFAULT_WIDTH)
                for side, w in (("left", self.left_widths), ("right", self.right_widths))}

    def mean_width(self, side: str) -> float:
        return self._means[side]

    def replication(self, side: str, size: int) -> float:
        """Average number of ``size``-wide bins a row of ``side`` touches."""
        return 1.0 + self._means[side] / size

    @cached_property
    def _per_chrom(self) -> tuple[np.ndarray, np.ndarray]:
        """(left rows x right rows, extent) per chromosome."""
        return self.chrom_left * self.chrom_right, self.chrom_extent

    def output_pairs(self) -> float:
        reach = self.mean_width("left") + self.mean_width("right") + 1
        both, ext = self._per_chrom
        return float((both * np.minimum(1.0, reach / ext)).sum())

    def same_chrom_pairs(self) -> float:
        return float(self._per_chrom[0].sum())

    def binned_candidates(self, size: int) -> float:
        rl, rr = self.replication("left", size), self.replication("right", size)
        both, ext = self._per_chrom
        return float(rl * rr * (both * np.minimum(1.0, size / ext)).sum())


def results(sh: Shape, c: dict, pair: float, inside: bool = False) -> dict:
    """The terms of a strategy's results, ``pair`` seconds a pair made; ``inside``: the
    strategy counts per left row inside the join when the result is reduced so."""
    k = sh.output_pairs()
    if sh.count_only and inside:
        return {"count": c["per_row_pair"] * k}
    if not sh.per_row:
        return {"output": pair * k}
    if inside:
        return {"per row": c["per_row_pair"] * k + c["output"] * sh.n_left}
    return {"output": pair * k, "aggregate": c["aggregate_row"] * k + c["row_shuffle"] * min(k, sh.n_left)}


#: Terms run once on the driver, whatever the cluster.
SERIAL_TERMS = ("fixed", "build")
#: Bytes AQE aims a coalesced shuffle partition at, and Spark's largest file split.
ADVISORY_BYTES = 64 * 2**20
SPLIT_BYTES = 128 * 2**20


def _shuffle_tasks(rows: float, row_bytes: float, cl: Cluster) -> int:
    """Reduce tasks of a shuffle of ``rows``: AQE coalesces to its advisory size, keeping at
    least one per core, at most the shuffle partitions."""
    return int(min(max(cl.shuffle_partitions, 1), max(cl.cores, math.ceil(rows * row_bytes / ADVISORY_BYTES))))


def _split_tasks(rows: float, row_bytes: float, cl: Cluster) -> int:
    """Scan tasks of ``rows``: Spark's splits, at most 128 MB, smaller to give every core one."""
    total = rows * row_bytes
    split = min(SPLIT_BYTES, max(4 * 2**20, total / max(1, cl.cores)))
    return max(1, math.ceil(total / split))


def _densest(sh: Shape, size: float) -> float:
    """The share of both sides' rows in the densest ``size``-wide window of any chromosome."""
    rows = sh.chrom_left + sh.chrom_right
    total = rows.sum()
    if not total:
        return 0.0
    return float((rows / np.maximum(1.0, np.ceil(sh.chrom_extent / max(size, 1.0)))).max() / total)


def layout(est: Estimate, sh: Shape, cl: Cluster, c: dict) -> tuple[int, float, float]:
    """(tasks, the longest task's share of the work, the work the layout adds in seconds, as
    the estimate's terms count them) of a strategy's widest stage."""
    kind, p = est.layout, est.params
    both = sh.n_left + sh.n_right
    bpr = (sh.left_bytes_per_row + sh.right_bytes_per_row) / 2
    if kind == "merge" and "k" in p:
        tasks, longest, reread = nearest_pieces(sh, cl)
        return tasks, longest, c["jvm_merge_row"] * reread
    if kind == "merge":
        # the rows its ranges read again are work of their own
        tasks, longest, reread = merge_ranges(sh, cl, pairs=True)
        return tasks, longest, c["jvm_merge_row"] * reread
    if kind == "index":
        probe = sh.n_left if p.get("build", "right") == "right" else sh.n_right
        tasks = _split_tasks(probe, bpr, cl)
        return tasks, 1.0 / tasks, 0.0
    if kind == "shuffle":
        tasks = _shuffle_tasks(both, bpr, cl)
        pairs = sh.chrom_left * sh.chrom_right
        return tasks, max(1.0 / tasks, float(pairs.max() / max(pairs.sum(), 1.0))), 0.0
    size = p.get("bin_size") or p.get("tile_size") or 1_000_000
    moved = sh.n_left * sh.replication("left", size) + sh.n_right * sh.replication("right", size)
    tasks = _shuffle_tasks(moved, bpr, cl)
    return tasks, max(1.0 / tasks, _densest(sh, size)), 0.0


#: As the merge join's planner (``join/merge/Balance.java``): a row of a row group a task reads
#: weighs this much of a row it keeps, since a range ending inside a row group decodes all of it.
DECODED_ROW = 1.5
#: A row only decoded, as a share of a merge row (decoded and kept).
DECODED_SHARE = DECODED_ROW / (1 + DECODED_ROW)


#: As the merge join's planner (``MergePlanner``'s COUNTED_PAIR and RETURNED_PAIR): a pair's work
#: in kept rows' work, counted inside the join or returned. The counted one is fitted on the
#: tasks' CPU time in ``benchmarks/reports/TASK-COST-10M.md``.
COUNTED_PAIR = 0.15
RETURNED_PAIR = 0.25


def merge_pair_weight(sh: Shape) -> float:
    """A pair's work in kept rows, as the merge's planner weighs it: counted inside the join, or
    returned."""
    return COUNTED_PAIR if sh.count_only or sh.per_row else RETURNED_PAIR


def merge_ranges(sh: Shape, cl: Cluster, pairs: bool = False) -> tuple[int, float, float]:
    """The merge join's tasks on ``cl`` (one per core, ``spark.giql.merge.tasks``), the longest
    one's share of the work, and the work of the rows its ranges decode again (in merge rows,
    :data:`DECODED_SHARE` of one each). As its planner cuts them
    (``join/merge/Balance.java``), the tasks are runs of the genome's order whose cost, the work of the
    rows they keep plus :data:`DECODED_ROW` per row of the row groups they decode, is as even as
    it can be: a chromosome is cut into ranges of positions where a run ends inside it, and each
    range reads whole row groups (about one more a side than its own rows fill), so no task costs
    less than decoding a row group a side. A chromosome's work is its rows and, with ``pairs``,
    its pairs at :func:`merge_pair_weight` (the planner weighs them)."""
    work = sh.chrom_left + sh.chrom_right
    if not len(work):
        return 1, 1.0, 0.0
    if pairs:
        reach = sh.mean_width("left") + sh.mean_width("right")
        both, ext = sh._per_chrom
        work = work + merge_pair_weight(sh) * both * np.minimum(1.0, reach / ext)
    total = max(float(work.sum()), 1.0)
    cores = max(1, cl.cores)
    share = total / cores
    group_l = sh.left_group_rows or sh.right_group_rows or DEFAULT_GROUP_ROWS
    group_r = sh.right_group_rows or group_l
    ends = np.cumsum(work)
    starts = ends - work
    boundaries = share * np.arange(1, cores)
    key = np.searchsorted(ends, boundaries, side="right").clip(0, len(work) - 1)
    inside = (boundaries > starts[key]) & (boundaries < ends[key])
    pieces = 1.0 + np.bincount(key[inside], minlength=len(work))
    tasks = int(max(1, min(cores, pieces.sum())))
    # rows decoded again, in merge rows: a range decodes them but keeps none
    reread = float(pieces[pieces > 1].sum()) * (group_l + group_r) / 2 * DECODED_SHARE
    # a range decodes at least a row group a side, kept rows or not
    floor = DECODED_SHARE * (min(group_l, sh.n_left or group_l) + min(group_r, sh.n_right or group_r))
    longest = min(1.0, max(1.0 / tasks, floor / (total + reread)))
    return tasks, longest, reread


#: As ``MergePlan.PIECE_LEFT_PER_RIGHT``: the fewest left rows a k-nearest piece keeps, as a
#: share of its right rows.
PIECE_LEFT_PER_RIGHT = 0.25


def nearest_pieces(sh: Shape, cl: Cluster) -> tuple[int, float, float]:
    """A k-nearest merge's tasks on ``cl``, the longest one's share of the work and the rows its
    pieces read again, as its planner cuts them (``MergePlan.leftPieces``): a chromosome heavier
    than two cores' shares becomes up to as many pieces as it holds shares (at most one per left
    row group), each with a run of its left rows. A piece reads the chromosome's right rows
    within reach of its left rows where the right side is in position order
    (``sh.right_sorted``: the row groups reaching its span, about its share of them and one
    group more, half past each end), else all of them, since a left row's nearest may be
    anywhere on its chromosome; and no more pieces than leave a piece's left rows a quarter of
    the right rows it reads (:data:`PIECE_LEFT_PER_RIGHT`). Whole chromosomes where
    ``cl.split_keys`` is off."""
    left, right = sh.chrom_left, sh.chrom_right
    work = left + right
    if not len(work):
        return 1, 1.0, 0.0
    cores = max(1, cl.cores)
    share = max(float(work.sum()), 1.0) / cores
    group = sh.left_group_rows or DEFAULT_GROUP_ROWS
    cap = np.maximum(1.0, np.ceil(left / group))
    if sh.right_sorted:
        # n pieces each read right / n + a group: a quarter of that is at most left / n while
        # n <= (left - right / 4) / (group / 4)
        beyond = sh.right_group_rows or DEFAULT_GROUP_ROWS
        quarter = np.maximum(2.0, np.ceil((left - PIECE_LEFT_PER_RIGHT * right)
                                          / (PIECE_LEFT_PER_RIGHT * beyond)))
    else:
        quarter = np.maximum(2.0, np.ceil(left / (PIECE_LEFT_PER_RIGHT * np.maximum(right, 1))))
    cap = np.minimum(cap, np.where(right > 0, quarter, cap))
    # one core: no chromosome outweighs two shares
    pieces = np.where(cl.split_keys & (work > 2 * share), np.minimum(np.ceil(work / share), cap), 1.0)
    if sh.right_sorted:
        reads = np.where(pieces > 1, np.minimum(right, right / pieces + beyond), right)
    else:
        reads = right
    reread = float((pieces * reads - right).sum())
    total = float(work.sum()) + reread
    tasks = int(max(1, min(cores, pieces.sum())))
    longest = max(1.0 / tasks, float((left / pieces + reads).max() / max(total, 1.0)))
    return tasks, longest, reread


#: Rows per row group assumed where the footers were not read (pyarrow's default).
DEFAULT_GROUP_ROWS = 1024 * 1024


def project(est: Estimate, sh: Shape, c: dict, cl: Cluster) -> Estimate:
    """``est`` as its makespan on ``cl`` (see the module's notes); a refused one as it is."""
    if est.refused:
        return est
    raw = sum(est.terms.values())
    scale = est.seconds / raw if raw else 1.0
    serial = scale * sum(v for k, v in est.terms.items() if k in SERIAL_TERMS)
    work = scale * sum(v for k, v in est.terms.items() if k not in SERIAL_TERMS) * c["calibration_cores"]
    tasks, longest, added = layout(est, sh, cl, c)
    work += scale * added * c["calibration_cores"]
    waves = math.ceil(tasks / max(1, cl.cores))
    est.seconds = serial + c["task_overhead"] * waves + max(longest * work, work / max(1, cl.cores))
    est.tasks, est.longest, est.cores, est.work = tasks, longest, cl.cores, work
    return est


def _rows(s: SideStats, row_bytes: float) -> float | None:
    if s.rows is not None:
        return float(s.rows)
    if s.size_bytes is not None:
        return max(1.0, s.size_bytes / row_bytes)
    return None


def shape(left: SideStats, right: SideStats, constants: dict, per_row: bool = False,
          count_only: bool = False) -> Shape | None:
    """The counts for the model, or None when a side's size is wholly unknown;
    ``per_row``: the result is reduced per left row; ``count_only``: only counted."""
    nl, nr = _rows(left, constants["row_bytes"]), _rows(right, constants["row_bytes"])
    if nl is None or nr is None:
        return None
    lc, rc = Chroms.of(left.chroms), Chroms.of(right.chroms)
    if len(lc) or len(rc):
        names = np.union1d(lc.names, rc.names)
        (lrows, lext), (rrows, rext) = lc.aligned(names), rc.aligned(names)
        lrows, rrows = lrows.astype(float), rrows.astype(float)
        # A side without chromosome counts is assumed spread like the other.
        if not len(lc):
            lrows = nl * rrows / (rrows.sum() or 1)
        if not len(rc):
            rrows = nr * lrows / (lrows.sum() or 1)
        per_chrom = (lrows, rrows, np.maximum(np.maximum(lext, rext), 1).astype(float))
    else:
        per_chrom = (np.array([nl]), np.array([nr]), np.array([float(GENOME)]))
    empty = np.empty(0, dtype=np.int64)

    per_row_result = per_row

    def per_row(s: SideStats, n: float) -> float:
        return s.size_bytes / n if s.size_bytes is not None and n else constants["row_bytes"]

    return Shape(nl, nr, *per_chrom,
                 left.widths.sample if left.widths is not None else empty,
                 right.widths.sample if right.widths is not None else empty,
                 per_row(left, nl), per_row(right, nr), per_row=per_row_result, count_only=count_only,
                 left_group_rows=nl / left.row_groups if left.row_groups else None,
                 right_group_rows=nr / right.row_groups if right.row_groups else None,
                 right_sorted=bool(right.sorted),
                 left_store_files=left.store_files, right_store_files=right.store_files)


def binned(sh: Shape, c: dict, size: int) -> Estimate:
    rl, rr = sh.replication("left", size), sh.replication("right", size)
    el, er = sh.n_left * rl, sh.n_right * rr
    small_bytes = min(el * sh.left_bytes_per_row, er * sh.right_bytes_per_row)
    if small_bytes <= c["broadcast_hash_bytes"]:
        # Spark broadcasts the small expanded side: the large one is only scanned.
        moved = {"expand+scan": c["row_scan"] * max(el, er), "broadcast": c["row_shuffle"] * min(el, er)}
    else:
        moved = {"expand+shuffle": c["row_shuffle"] * (el + er)}
    terms = {"fixed": c["fixed_jvm"] + c["fixed_binned"], **moved,
             "candidates": c["candidate"] * sh.binned_candidates(size),
             **results(sh, c, c["output"])}
    return Estimate("binned", c["scale_binned"] * sum(terms.values()), {"bin_size": size}, terms)


def best_binned(sh: Shape, c: dict) -> Estimate:
    return min((binned(sh, c, b) for b in BIN_SIZES), key=lambda e: e.seconds)


def broadcast(sh: Shape, c: dict, how: str) -> Estimate:
    # The build side must be the one the join type does not preserve alone.
    if how in ("left", "semi", "anti"):
        sides = ["right"]
    elif how == "right":
        sides = ["left"]
    else:
        sides = ["right", "left"]

    def estimate(build, nb, npr, levels):
        terms = {"fixed": c["fixed_python"], "build": c["build_row"] * nb,
                 "probe": c["python_row"] * npr + levels, **results(sh, c, c["python_pair"])}
        return Estimate("broadcast", c["scale_broadcast"] * sum(terms.values()), {"build": build}, terms,
                        layout="index")

    return _best_build(sh, c, sides, estimate, "index_bytes_per_row", "broadcast_budget_bytes")


def _best_build(sh: Shape, c: dict, sides, estimate, bytes_key: str, budget_key: str) -> Estimate:
    """The cheapest of indexing each of ``sides`` (a side over the broadcast budget is refused).

    ``estimate(build, build_rows, probe_rows, levels)`` prices one choice; ``levels`` is the
    cost of the probes' descents into the index, a log of the rows per chromosome each.
    """
    best = None
    for build in sides:
        nb, npr = (sh.n_right, sh.n_left) if build == "right" else (sh.n_left, sh.n_right)
        per_chrom = max(1.0, nb / max(1, len(sh.chrom_extent)))
        est = estimate(build, nb, npr, c["probe_level"] * npr * math.log2(2 + per_chrom))
        need = nb * c[bytes_key]
        if need > c[budget_key]:
            est.refused = (f"the {build} side (~{nb:,.0f} rows, ~{need / 2**20:,.0f} MB indexed) exceeds the "
                           f"broadcast budget of {c[budget_key] / 2**20:,.0f} MB")
        if best is None or (est.refused is None, -est.seconds) > (best.refused is None, -best.seconds):
            best = est
    return best


def sweep(sh: Shape, c: dict, tile: int) -> Estimate:
    rows = sh.n_left * sh.replication("left", tile) + sh.n_right * sh.replication("right", tile)
    k = sh.output_pairs()
    terms = {"fixed": c["fixed_python"], "shuffle": c["row_shuffle"] * rows,
             "python": c["python_row"] * rows, "sweep": c["sweep_step"] * (rows + k),
             **results(sh, c, c["python_pair"])}
    return Estimate("sweep", c["scale_sweep"] * sum(terms.values()), {"tile_size": tile}, terms)


def naive(sh: Shape, c: dict) -> Estimate:
    terms = {"fixed": c["fixed_jvm"], "pair tests": c["nested_pair"] * sh.same_chrom_pairs(),
             **results(sh, c, c["output"])}
    est = Estimate("naive", c["scale_naive"] * sum(terms.values()), {}, terms, layout="shuffle")
    if max(sh.n_left, sh.n_right) > TINY_ROWS:
        est.refused = f"plain SQL is only for tiny inputs (at most {TINY_ROWS:,} rows a side)"
    return est


def jvm_broadcast(sh: Shape, c: dict, how: str) -> Estimate:
    """The broadcast interval index in the JVM: the build side collected,
    indexed and broadcast once, every probe row looked up in the JVM; a
    build side the join type preserves (RIGHT/FULL built on the right, say)
    takes a second pass to find its unmatched rows."""
    def estimate(build, nb, npr, levels):
        preserved = (build == "right" and how in ("right", "full")) or \
                    (build == "left" and how in ("left", "full", "semi", "anti"))
        probe = c["jvm_probe_row"] * npr + levels
        # the probe side's rows are counted inside the join when it is the left side
        terms = {"fixed": c["fixed_jvm"], "build": c["jvm_build_row"] * nb,
                 "probe": probe * (2 if preserved else 1),
                 **results(sh, c, c["output"], build == "right" or (sh.count_only and not sh.per_row))}
        return Estimate("jvm_broadcast", c["scale_jvm_broadcast"] * sum(terms.values()), {"build": build}, terms,
                        layout="index")

    return _best_build(sh, c, ("right", "left"), estimate, "jvm_index_bytes_per_row", "jvm_broadcast_budget_bytes")


def jvm_sweep(sh: Shape, c: dict, how: str, tile: int) -> Estimate:
    """The partitioned sort-sweep in the JVM: both sides cut into tiles,
    shuffled and sorted by Spark, swept per tile; inner joins only."""
    rows = sh.n_left * sh.replication("left", tile) + sh.n_right * sh.replication("right", tile)
    k = sh.output_pairs()
    terms = {"fixed": c["fixed_jvm"], "shuffle": c["row_shuffle"] * rows,
             "sweep": c["sweep_step"] * (rows + k), **results(sh, c, c["output"])}
    est = Estimate("jvm_sweep", c["scale_jvm_sweep"] * sum(terms.values()), {"tile_size": tile}, terms)
    if how != "inner":
        est.refused = "the JVM sweep joins inner joins only"
    return est


def jvm_merge(sh: Shape, c: dict, how: str) -> Estimate:
    """The merge of sorted Parquet files: both sides read once, range by
    range, and swept; no shuffle, no broadcast."""
    rows = sh.n_left + sh.n_right
    # A pair costs what the broadcast's does (its residual and its row): charging a sweep
    # step per pair as well priced the merge above the broadcast where pairs dominate
    # (heavy widths), where it measured twice as fast.
    terms = {"fixed": c["fixed_jvm"], "read+sweep": c["jvm_merge_row"] * rows,
             **results(sh, c, c["output"], True)}
    est = Estimate("jvm_merge", c["scale_jvm_merge"] * sum(terms.values()), {}, terms, layout="merge")
    if how not in ("inner", "left", "semi", "anti"):
        est.refused = "the merge join does inner, left, semi and anti joins"
    return est


def jvm_nearest(sh: Shape, c: dict, k: int, algo: str) -> Estimate:
    """A k-nearest join (each left row with its k nearest right rows, a left join) in the JVM:
    ``broadcast`` collects, indexes and broadcasts the right side once; ``merge`` reads both
    sides' sorted files range by range and indexes each key's right rows in its task. Either
    probes every left row and returns about ``k`` rows for each."""
    per_chrom = max(1.0, sh.n_right / max(1, len(sh.chrom_extent)))
    probe = c["jvm_probe_row"] * sh.n_left + c["probe_level"] * sh.n_left * math.log2(2 + per_chrom)
    out = c["output"] * sh.n_left * k
    if algo == "broadcast":
        terms = {"fixed": c["fixed_jvm"], "build": c["jvm_build_row"] * sh.n_right, "probe": probe, "output": out}
        est = Estimate("jvm_broadcast", c["scale_jvm_broadcast"] * sum(terms.values()), {"k": k}, terms,
                       layout="index")
        need = sh.n_right * c["jvm_index_bytes_per_row"]
        if need > c["jvm_broadcast_budget_bytes"]:
            est.refused = (f"the right side (~{sh.n_right:,.0f} rows, ~{need / 2**20:,.0f} MB indexed) exceeds "
                           f"the broadcast budget of {c['jvm_broadcast_budget_bytes'] / 2**20:,.0f} MB")
        return est
    terms = {"fixed": c["fixed_jvm"] + c["fixed_merge_nearest"], "read": c["jvm_merge_row"] * (sh.n_left + sh.n_right),
             "probe": probe, "output": out}
    return Estimate("jvm_merge", c["scale_jvm_merge"] * sum(terms.values()), {"k": k}, terms, layout="merge")


# Each strategy's cost in the registry's form: ``(shape, constants, join type,
# given parameters) -> Estimate``; what is not given is chosen here.


def binned_cost(sh: Shape, c: dict, how: str, given: dict) -> Estimate:
    """At the given bin size, else at the one that minimises the estimate."""
    return binned(sh, c, int(given["bin_size"])) if given.get("bin_size") else best_binned(sh, c)


def broadcast_cost(sh: Shape, c: dict, how: str, given: dict) -> Estimate:
    return broadcast(sh, c, how)


def sweep_cost(sh: Shape, c: dict, how: str, given: dict) -> Estimate:
    return sweep(sh, c, int(given["tile_size"]))


def naive_cost(sh: Shape, c: dict, how: str, given: dict) -> Estimate:
    return naive(sh, c)


def jvm_broadcast_cost(sh: Shape, c: dict, how: str, given: dict) -> Estimate:
    est = jvm_broadcast(sh, c, how)
    if given.get("build") in ("left", "right"):
        est.params["build"] = given["build"]
    return est


def jvm_sweep_cost(sh: Shape, c: dict, how: str, given: dict) -> Estimate:
    return jvm_sweep(sh, c, how, int(given["tile_size"]))


def jvm_merge_cost(sh: Shape, c: dict, how: str, given: dict) -> Estimate:
    return jvm_merge(sh, c, how)


def _object_store_opens(est: Estimate, sh: Shape, c: dict) -> None:
    """Files on an object store cost a round trip each time a task opens one: every strategy
    opens each file once; the merge join's ranges open each side's files once more per range
    (its ``read+sweep`` term's rows, cut into ranges of about a row group)."""
    files = sh.left_store_files + sh.right_store_files
    if not files or est.refused:
        return
    opens = files
    if est.layout == "merge":
        groups = [n / g for n, g in ((sh.n_left, sh.left_group_rows), (sh.n_right, sh.right_group_rows)) if g]
        opens = max(files, round(sum(groups))) if groups else files
    term = c["object_store_open"] * opens
    scale = est.seconds / sum(est.terms.values()) if sum(est.terms.values()) else 1.0
    est.terms["file opens"] = term
    est.seconds += scale * term


def alternatives(sh: Shape, c: dict, how: str, costs: dict, cluster: Cluster | None = None) -> list[Estimate]:
    """Every strategy's estimate, cheapest feasible first; on ``cluster``, as its makespan there.

    ``costs`` maps each strategy's name to ``(cost function, given parameters)``.
    """
    out = [cost(sh, c, how, given) for cost, given in costs.values()]
    for e in out:
        _object_store_opens(e, sh, c)
    if cluster is not None:
        out = [project(e, sh, c, cluster) for e in out]
    k = sh.output_pairs()
    for e in out:
        e.pairs = k
    return sorted(out, key=lambda e: (e.refused is not None, e.seconds))
