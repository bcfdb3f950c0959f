"""Property tests for the overlap kernels against brute-force numpy oracles."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from giql_spark.kernels.overlap import (
    build_index,
    count_intersects,
    hull_overlaps,
    query_index,
    sweep_overlaps,
    sweep_sorted_groups,
)

# --------------------------------------------------------------------------- oracles


def oracle_hull_pairs(q_lo, q_hi, t_lo, t_hi):
    """(n, 2) array of (qi, ti) with closed hulls sharing a point, sorted."""
    hit = (q_lo[:, None] <= t_hi[None, :]) & (t_lo[None, :] <= q_hi[:, None])
    qi, ti = np.nonzero(hit)  # row-major: already sorted by (qi, ti)
    return np.stack([qi, ti], axis=1).astype(np.int64)


def oracle_intersects_counts(q_s, q_e, t_s, t_e):
    hit = (t_s[None, :] < q_e[:, None]) & (t_e[None, :] > q_s[:, None])
    return hit.sum(axis=1).astype(np.int64).reshape(q_s.shape[0])


def as_sorted_pairs(qi, ti):
    assert qi.dtype == ti.dtype == np.int64
    assert qi.shape == ti.shape
    pairs = np.stack([qi, ti], axis=1).reshape(-1, 2)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


# --------------------------------------------------------------------------- strategies

COORD = st.integers(0, 60)
WIDTH = st.one_of(
    st.just(0),
    st.just(1),
    st.integers(2, 6),
    st.integers(7, 30),
    st.integers(61, 200),  # wider than the whole coordinate range
)


@st.composite
def interval(draw):
    s = draw(COORD)
    return s, s + draw(WIDTH)


@st.composite
def book_ended(draw):
    s = draw(COORD)
    out = []
    for width in draw(st.lists(st.integers(0, 6), min_size=1, max_size=8)):
        out.append((s, s + width))
        s += width
    return out


@st.composite
def interval_set(draw, max_size=30):
    """Rows ``(lo, lo + width)``: valid as closed hulls and as half-open intervals."""
    shape = draw(st.sampled_from(["mixed", "mixed", "mixed", "dups", "book", "empty", "single"]))
    if shape == "empty":
        rows = []
    elif shape == "single":
        rows = [draw(interval())]
    elif shape == "dups":
        pool = draw(st.lists(interval(), min_size=1, max_size=3))
        rows = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=max_size))
    elif shape == "book":
        rows = draw(book_ended()) + draw(st.lists(interval(), max_size=6))
        rows = draw(st.permutations(rows))
    else:
        rows = draw(st.lists(interval(), max_size=max_size))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0].copy(), arr[:, 1].copy()


@st.composite
def random_set(draw, max_size=400):
    """Larger sets from a drawn seed, so the tree has levels above the linear scan."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(0, max_size))
    max_width = draw(st.sampled_from([1, 3, 10, 40, 200]))
    rng = np.random.default_rng(seed)
    lo = rng.integers(0, 61, n).astype(np.int64)
    hi = lo + rng.integers(0, max_width, n)
    return lo, hi


SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- pair kernels


def check_pairs(q, t):
    want = oracle_hull_pairs(*q, *t)
    got_tree = hull_overlaps(*q, *t)
    got_sweep = sweep_overlaps(*q, *t)
    np.testing.assert_array_equal(as_sorted_pairs(*got_tree), want)
    np.testing.assert_array_equal(as_sorted_pairs(*got_sweep), want)
    # The tree emits rows grouped by query, queries by (lo, input index), and
    # within a query by (target lo, target input index).
    qi, ti = got_tree
    key = np.lexsort((ti, t[0][ti], qi, q[0][qi]))
    np.testing.assert_array_equal(key, np.arange(qi.size))


@SETTINGS
@given(q=interval_set(), t=interval_set())
def test_pair_kernels_match_oracle(q, t):
    check_pairs(q, t)


@SETTINGS
@given(q=random_set(max_size=60), t=random_set())
def test_pair_kernels_match_oracle_deep_tree(q, t):
    check_pairs(q, t)


@SETTINGS
@given(t=random_set(max_size=300))
def test_index_layout(t):
    t_lo, t_hi = t
    order, lo_sorted, hi_sorted, max_hi = build_index(t_lo, t_hi)
    n = t_lo.size
    assert all(a.dtype == np.int64 and a.shape == (n,) for a in (order, lo_sorted, hi_sorted, max_hi))
    # Stable sort by lo.
    np.testing.assert_array_equal(order, np.argsort(t_lo, kind="stable"))
    np.testing.assert_array_equal(lo_sorted, t_lo[order])
    np.testing.assert_array_equal(hi_sorted, t_hi[order])
    # Node i at level k (k trailing one bits) covers [i - 2^k + 1, i + 2^k - 1].
    for i in range(n):
        k = 0
        while (i >> k) & 1:
            k += 1
        lo = i - (1 << k) + 1
        hi = min(i + (1 << k) - 1, n - 1)
        assert max_hi[i] == hi_sorted[lo : hi + 1].max(), i


@SETTINGS
@given(t=random_set(max_size=200), batches=st.lists(interval_set(), min_size=1, max_size=3))
def test_index_reused_across_batches_and_pickled(t, batches):
    index = pickle.loads(pickle.dumps(build_index(*t)))
    for q in batches:
        got = as_sorted_pairs(*query_index(*index, *q))
        np.testing.assert_array_equal(got, oracle_hull_pairs(*q, *t))


def test_pair_kernels_identical_book_ended_and_nested():
    t_lo = np.array([10, 10, 10, 20, 0, 20, 30, 5], dtype=np.int64)
    t_hi = np.array([20, 20, 20, 20, 100, 30, 30, 5], dtype=np.int64)
    q_lo = np.array([20, 5, 31, 10, 0, 101], dtype=np.int64)
    q_hi = np.array([20, 5, 40, 10, 0, 200], dtype=np.int64)
    check_pairs((q_lo, q_hi), (t_lo, t_hi))
    qi, ti = hull_overlaps(q_lo, q_hi, t_lo, t_hi)
    # Query 0 is the point 20: every target touching 20 (closed) pairs with it.
    assert sorted(ti[qi == 0].tolist()) == [0, 1, 2, 3, 4, 5]
    assert ti[qi == 5].size == 0


@pytest.mark.parametrize("nq, nt", [(0, 0), (0, 5), (5, 0)])
@pytest.mark.parametrize("kernel", [hull_overlaps, sweep_overlaps])
def test_pair_kernels_empty(kernel, nq, nt):
    z = np.zeros
    qi, ti = kernel(z(nq, np.int64), z(nq, np.int64), z(nt, np.int64), z(nt, np.int64))
    assert qi.size == ti.size == 0 and qi.dtype == ti.dtype == np.int64


def test_empty_index():
    index = build_index(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert all(a.size == 0 and a.dtype == np.int64 for a in index)
    qi, ti = query_index(*index, np.array([1], np.int64), np.array([2], np.int64))
    assert qi.size == ti.size == 0 and qi.dtype == ti.dtype == np.int64


# --------------------------------------------------------------------------- counts


@SETTINGS
@given(q=interval_set(), t=interval_set())
def test_count_intersects_matches_oracle(q, t):
    got = count_intersects(*q, *t)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, oracle_intersects_counts(*q, *t))


@SETTINGS
@given(q=random_set(max_size=60), t=random_set())
def test_count_intersects_matches_oracle_random(q, t):
    np.testing.assert_array_equal(count_intersects(*q, *t), oracle_intersects_counts(*q, *t))


def test_count_intersects_zero_length_edge():
    # Zero-length targets at exactly a zero-length query's position do not
    # intersect it (5 < 5 is false), nor do book-ended neighbours; a target
    # strictly around the point does.
    q_s = np.array([5, 5, 4], dtype=np.int64)
    q_e = np.array([5, 6, 6], dtype=np.int64)
    t_s = np.array([5, 5, 5, 0, 5, 4], dtype=np.int64)
    t_e = np.array([5, 5, 5, 5, 9, 6], dtype=np.int64)
    got = count_intersects(q_s, q_e, t_s, t_e)
    np.testing.assert_array_equal(got, [1, 2, 6])
    np.testing.assert_array_equal(got, oracle_intersects_counts(q_s, q_e, t_s, t_e))


@pytest.mark.parametrize("nq, nt", [(0, 0), (0, 5), (5, 0)])
def test_count_intersects_empty(nq, nt):
    z = np.zeros
    got = count_intersects(z(nq, np.int64), z(nq, np.int64), z(nt, np.int64), z(nt, np.int64))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.zeros(nq, np.int64))


# --------------------------------------------------------------------------- larger run


def test_large_random_kernels_agree():
    rng = np.random.default_rng(11)
    n = 20_000
    span = 10_000_000
    q_s = rng.integers(0, span, n)
    q_e = q_s + rng.integers(100, 2_000, n)
    t_s = rng.integers(0, span, n)
    t_e = t_s + rng.integers(100, 2_000, n)
    # Some zero-length rows on both sides, duplicated positions, long targets.
    q_e[:500] = q_s[:500]
    t_s[500:1000] = q_s[:500]
    t_e[500:1000] = q_s[:500]
    t_e[1000:1010] = t_s[1000:1010] + 1_000_000

    # Closed hulls [start, end] contain every half-open intersecting pair
    # (touching ones too), so filtering them gives the exact INTERSECTS pairs.
    tree = as_sorted_pairs(*hull_overlaps(q_s, q_e, t_s, t_e))
    sweep = as_sorted_pairs(*sweep_overlaps(q_s, q_e, t_s, t_e))
    assert tree.shape[0] == sweep.shape[0] > 0
    np.testing.assert_array_equal(tree, sweep)
    assert np.unique(tree, axis=0).shape[0] == tree.shape[0]

    qi, ti = tree[:, 0], tree[:, 1]
    keep = (t_s[ti] < q_e[qi]) & (t_e[ti] > q_s[qi])
    counts = count_intersects(q_s, q_e, t_s, t_e)
    assert counts.sum() == keep.sum()
    np.testing.assert_array_equal(counts, np.bincount(qi[keep], minlength=n))


# --------------------------------------------------------------------------- grouped sweep


@SETTINGS
@given(n=st.integers(0, 60), groups=st.integers(1, 5), max_width=st.sampled_from([1, 3, 10, 40]),
       seed=st.integers(0, 2**32 - 1))
def test_sweep_sorted_groups_matches_brute_force(n, groups, max_width, seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, groups, n)
    side = rng.integers(0, 2, n)
    lo = rng.integers(0, 61, n)
    hi = lo + rng.integers(0, max_width, n)
    order = np.lexsort((lo, side, group))
    group, side, lo, hi = group[order], side[order], lo[order], hi[order]
    got = as_sorted_pairs(*sweep_sorted_groups(group, side, lo, hi))
    hit = ((side[:, None] == 0) & (side[None, :] == 1) & (group[:, None] == group[None, :])
           & (lo[:, None] <= hi[None, :]) & (lo[None, :] <= hi[:, None]))
    qi, ti = np.nonzero(hit)
    np.testing.assert_array_equal(got, np.stack([qi, ti], axis=1).astype(np.int64).reshape(-1, 2))
