"""The per-batch functions of the Python strategies, on Arrow data, without Spark.

Each is checked against brute force on random rows with NULL chromosomes and
coordinates, zero-length and reversed hulls, and several chromosomes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from giql_spark.joins.batch.count import C, E, S, Targets, count_batch
from giql_spark.joins.batch.nearest import CHROM as NC, END as NE, START as NS, STRAND as NST, nearest_group
from giql_spark.joins.batch.probe import BuildSide, build_placeholders, probe
from giql_spark.joins.batch.sweep import FIRST, LROW, RROW, SIDE, TILE, runs, sweep_run
from giql_spark.joins.candidates import FLAG_NAMES, LEFT_KEY, LEFT_ONLY, RIGHT_KEY, RIGHT_ONLY
from giql_spark.joins.hull import CHROM, HI, LO
from giql_spark.kernels import coords

CHROMS = np.array(["chr1", "chr2", "chrX", None], dtype=object)


def random_rows(rng, n: int, span: int = 200):
    chrom = CHROMS[rng.integers(0, 4, n)]
    lo = rng.integers(0, span, n)
    hi = lo + rng.integers(-3, 25, n)  # some reversed, some zero-length
    lo_arr = pa.array([None if rng.random() < 0.05 else int(v) for v in lo], pa.int64())
    return chrom, lo_arr, pa.array(hi, pa.int64())


def hulls(chrom, lo, hi):
    out = []
    for c, a, b in zip(chrom, lo.to_pylist(), hi.to_pylist()):
        out.append(None if c is None or a is None or b is None else (c, min(a, b), max(a, b)))
    return out


def brute_pairs(left, right):
    return Counter((i, j) for i, x in enumerate(left) for j, y in enumerate(right)
                   if x and y and x[0] == y[0] and x[1] <= y[2] and y[1] <= x[2])


def test_coords_marks_rows_with_a_null():
    c = coords.coords(pa.array(["a", None, "b", "a"]), pa.array([1, 2, None, 4]), pa.array([5, 6, 7, None]))
    assert c.valid.tolist() == [0]
    assert [c.names[x] if x >= 0 else None for x in c.codes] == ["a", None, "b", "a"]
    s = coords.coords(pa.array(["b", "a", "b"]), pa.array([1, 2, 3]), pa.array([1, 2, 3]), sorted_names=True)
    assert s.codes.tolist() == [1, 0, 1] and list(s.names) == ["a", "b"]


def hull_columns(lo, hi) -> tuple[pa.Array, pa.Array]:
    """The hull [least, greatest] of each row, as the strategies compute it."""
    pairs = list(zip(lo.to_pylist(), hi.to_pylist()))
    return (pa.array([None if a is None else min(a, b) for a, b in pairs], pa.int64()),
            pa.array([None if a is None else max(a, b) for a, b in pairs], pa.int64()))


@pytest.mark.parametrize("seed", range(5))
def test_probe_finds_exactly_the_pairs_whose_hulls_meet(seed):
    rng = np.random.default_rng(seed)
    lc, llo, lhi = random_rows(rng, 300)
    rc, rlo, rhi = random_rows(rng, 120)
    build_table = pa.table({CHROM: pa.array(rc, pa.string()), LO: hull_columns(rlo, rhi)[0],
                            HI: hull_columns(rlo, rhi)[1], "r": pa.array(np.arange(120))})
    batch = pa.RecordBatch.from_arrays([pa.array(lc, pa.string()), *hull_columns(llo, lhi), pa.array(np.arange(300))],
                                       names=[CHROM, LO, HI, "l"])
    build = BuildSide.of(build_table, ["r"])
    names = ["l", "r", *FLAG_NAMES]
    keys = np.arange(300, dtype=np.int64) + 1000
    out = list(probe(batch, build, ["l"], names, keys, left_placeholders=True))
    pairs = out[0].to_pydict()
    got = Counter(zip(pairs["l"], pairs["r"]))
    want = brute_pairs(hulls(lc, llo, lhi), hulls(rc, rlo, rhi))
    assert got == want and sum(want.values()) > 50
    assert pairs[LEFT_KEY] == [k + 1000 for k in pairs["l"]] and pairs[RIGHT_KEY] == pairs["r"]
    placeholders = out[1].to_pydict()
    assert placeholders["l"] == list(range(300)) and set(placeholders["r"]) == {None}
    assert all(placeholders[LEFT_ONLY]) and not any(placeholders[RIGHT_ONLY])
    right = build_placeholders(build, [pa.int64()], names).to_pydict()
    assert right["r"] == list(range(120)) and set(right["l"]) == {None} and all(right[RIGHT_ONLY])


def _tiled_run(rng, tile_size: int):
    """A sorted tile stream as the sweep strategy builds it, and each side's hulls."""
    sides = {}
    rows = []
    for side, n in ((0, 150), (1, 90)):
        chrom, lo, hi = random_rows(rng, n)
        h = hulls(chrom, lo, hi)
        sides[side] = h
        for i, x in enumerate(h):
            if x is None:
                rows.append((chrom[i], None, None, None, side, i))
                continue
            for t in range(x[1] // tile_size, x[2] // tile_size + 1):
                rows.append((x[0], t, x[1] // tile_size, x, side, i))
    rows.sort(key=lambda r: (r[0] is None, r[0] or "", -1 if r[1] is None else r[1], r[4],
                             -1 if r[3] is None else r[3][1]))
    row_type = pa.struct([("i", pa.int64())])
    table = pa.table({
        CHROM: pa.array([r[0] for r in rows], pa.string()),
        TILE: pa.array([r[1] for r in rows], pa.int64()),
        FIRST: pa.array([r[2] for r in rows], pa.int64()),
        LO: pa.array([r[3][1] if r[3] else None for r in rows], pa.int64()),
        HI: pa.array([r[3][2] if r[3] else None for r in rows], pa.int64()),
        SIDE: pa.array([r[4] for r in rows], pa.int32()),
        LEFT_KEY: pa.array([r[5] if r[4] == 0 else None for r in rows], pa.int64()),
        RIGHT_KEY: pa.array([r[5] if r[4] == 1 else None for r in rows], pa.int64()),
        LROW: pa.array([{"i": r[5]} if r[4] == 0 else None for r in rows], row_type),
        RROW: pa.array([{"i": r[5]} if r[4] == 1 else None for r in rows], row_type),
    })
    return table, sides


@pytest.mark.parametrize("seed, tile_size", [(0, 7), (1, 50), (2, 1000)])
def test_runs_cut_only_at_tile_boundaries(seed, tile_size):
    table, _ = _tiled_run(np.random.default_rng(seed), tile_size)
    batches = table.to_batches(max_chunksize=17)
    got = list(runs(batches))
    assert sum(t.num_rows for t in got) == table.num_rows
    for a, b in zip(got, got[1:]):
        last = (a.column(CHROM)[-1].as_py(), a.column(TILE)[-1].as_py())
        assert last != (b.column(CHROM)[0].as_py(), b.column(TILE)[0].as_py())


@pytest.mark.parametrize("seed, tile_size", [(0, 7), (1, 50), (2, 1000)])
def test_sweep_run_emits_each_pair_once_and_each_placeholder_once(seed, tile_size):
    table, sides = _tiled_run(np.random.default_rng(seed), tile_size)
    names = ["i", "i_r", *FLAG_NAMES]
    out = [b for run in runs(table.to_batches(max_chunksize=23)) for b in sweep_run(run, names, (True, True))]
    rows = pa.Table.from_batches(out).to_pydict()
    pairs = Counter((lk, rk) for lk, rk, lo, ro in zip(rows[LEFT_KEY], rows[RIGHT_KEY], rows[LEFT_ONLY], rows[RIGHT_ONLY])
                    if not lo and not ro)
    want = brute_pairs(sides[0], sides[1])
    assert pairs == want and sum(want.values()) > 30
    left_alone = Counter(k for k, lo in zip(rows[LEFT_KEY], rows[LEFT_ONLY]) if lo)
    right_alone = Counter(k for k, ro in zip(rows[RIGHT_KEY], rows[RIGHT_ONLY]) if ro)
    assert left_alone == Counter(range(len(sides[0]))) and right_alone == Counter(range(len(sides[1])))


@pytest.mark.parametrize("seed", range(4))
def test_count_batch_counts_strict_intersections(seed):
    rng = np.random.default_rng(seed)
    qc, qs, qe = random_rows(rng, 200)
    tc, ts, te = random_rows(rng, 150)
    targets = Targets.of(pa.table({C: pa.array(tc, pa.string()), S: ts, E: te}))
    batch = pa.RecordBatch.from_arrays([pa.array(qc, pa.string()), qs, qe, pa.array(np.arange(200))], names=[C, S, E, "id"])
    got = count_batch(batch, targets, ["id"], "count").to_pydict()
    want = []
    for c, a, b in zip(qc, qs.to_pylist(), qe.to_pylist()):
        want.append(0 if c is None or a is None else sum(
            1 for x, y, z in zip(tc, ts.to_pylist(), te.to_pylist()) if x == c and y is not None and y < b and z > a))
    assert got["id"] == list(range(200)) and got["count"] == want and sum(want) > 20


def _distance(r, t):
    if r[0] < t[1] and t[0] < r[1]:
        return 0
    return max(t[0] - r[1], r[0] - t[1]) + 1


@pytest.mark.parametrize("seed, k", [(0, 1), (1, 3), (2, 5)])
def test_nearest_group_keeps_every_target_that_can_rank_in_the_k_nearest(seed, k):
    rng = np.random.default_rng(seed)
    t_s = rng.integers(0, 500, 60)
    t_e = t_s + rng.integers(0, 30, 60)
    r_s = rng.integers(0, 500, 25)
    r_e = r_s + rng.integers(0, 30, 25)
    row = pa.struct([("i", pa.int64())])
    t = pa.table({"t": pa.array([{"i": i} for i in range(60)], row), NC: ["chr1"] * 60, NST: pa.nulls(60, pa.string()),
                  NS: t_s, NE: t_e})
    r = pa.table({"r": pa.array([{"i": i} for i in range(25)], row), NC: ["chr1"] * 25, NST: pa.nulls(25, pa.string()),
                  NS: r_s, NE: r_e})
    out = nearest_group(t, r, k, False, ["t"], ["r"]).to_pydict()
    got: dict[int, set[int]] = {}
    for tt, rr in zip(out["t"], out["r"]):
        got.setdefault(rr["i"], set()).add(tt["i"])
    for q in range(25):
        key = sorted((_distance((r_s[q], r_e[q]), (t_s[i], t_e[i])), t_s[i], t_e[i]) for i in range(60))
        kth = key[k - 1]
        must = {i for i in range(60) if (_distance((r_s[q], r_e[q]), (t_s[i], t_e[i])), t_s[i], t_e[i]) <= kth}
        assert must <= got[q], q  # every target that ranks within k (ties included) is a candidate
    assert nearest_group(t.slice(0, 0), r, k, False, ["t"], ["r"]).num_rows == 0
