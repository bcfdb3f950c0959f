"""Property tests for the k-nearest candidate kernels against a brute-force oracle."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from giql_spark.kernels.nearest import first_k_by_position, nearest_by_value, nearest_candidates


# --------------------------------------------------------------------------- oracle


def oracle_distance(qs, qe, ts, te):
    """Distance from one query to every target, rules applied in giql's order."""
    overlap = (qs < te) & (qe > ts)
    right = ~overlap & (qe <= ts)
    return np.where(overlap, 0, np.where(right, ts - qe + 1, qs - te + 1)).astype(np.int64)


def oracle_selection(d, ts, te, k):
    """Indexes of all targets whose key (d, ts, te) is <= the k-th ranked key."""
    if ts.size == 0:
        return np.empty(0, dtype=np.int64)
    order = np.lexsort((te, ts, d))
    if order.size <= k:
        return np.sort(order)
    kth = order[k - 1]
    kd, ks, ke = d[kth], ts[kth], te[kth]
    le = (d < kd) | ((d == kd) & ((ts < ks) | ((ts == ks) & (te <= ke))))
    return np.flatnonzero(le)


def check_nearest(q, t, k, queries_to_check=None):
    q_s, q_e = q
    t_s, t_e = t
    qi, ti, dist = nearest_candidates(q_s, q_e, t_s, t_e, k)
    assert qi.dtype == ti.dtype == dist.dtype == np.int64
    assert qi.shape == ti.shape == dist.shape
    if q_s.size == 0 or t_s.size == 0:
        assert qi.size == 0
        return
    # Rows come grouped by query in input order.
    assert np.all(np.diff(qi) >= 0)
    bounds = np.searchsorted(qi, np.arange(q_s.size + 1))
    check = range(q_s.size) if queries_to_check is None else queries_to_check
    for i in check:
        lo, hi = bounds[i], bounds[i + 1]
        got_t = ti[lo:hi]
        got_d = dist[lo:hi]
        d_all = oracle_distance(q_s[i], q_e[i], t_s, t_e)
        want = oracle_selection(d_all, t_s, t_e, k)
        assert np.unique(got_t).size == got_t.size, f"duplicate targets for query {i}"
        np.testing.assert_array_equal(np.sort(got_t), want, err_msg=f"query {i}")
        np.testing.assert_array_equal(got_d, d_all[got_t], err_msg=f"query {i}")
        # Within a query, rows are in ascending key order.
        keys = list(zip(got_d.tolist(), t_s[got_t].tolist(), t_e[got_t].tolist()))
        assert keys == sorted(keys)


# --------------------------------------------------------------------------- strategies

COORD = st.integers(0, 50)


@st.composite
def interval(draw, allow_invalid=True):
    kind = draw(
        st.sampled_from(
            ["any", "any", "any", "zero", "short", "long", "span"] + (["invalid"] if allow_invalid else [])
        )
    )
    if kind == "zero":
        s = draw(COORD)
        return s, s
    if kind == "short":
        s = draw(COORD)
        return s, s + draw(st.integers(1, 3))
    if kind == "long":
        s = draw(st.integers(0, 10))
        return s, s + draw(st.integers(30, 50))
    if kind == "span":
        return -5, 60
    if kind == "invalid":
        s = draw(st.integers(1, 50))
        return s, draw(st.integers(0, s - 1))
    a, b = draw(COORD), draw(COORD)
    return min(a, b), max(a, b)


@st.composite
def book_ended(draw):
    s = draw(COORD)
    out = []
    for length in draw(st.lists(st.integers(0, 6), min_size=1, max_size=6)):
        out.append((s, s + length))
        s += length
    return out


@st.composite
def interval_set(draw, max_size=25, allow_invalid=True):
    shape = draw(st.sampled_from(["mixed", "mixed", "dups", "book", "empty", "single"]))
    if shape == "empty":
        rows = []
    elif shape == "single":
        rows = [draw(interval(allow_invalid))]
    elif shape == "dups":
        pool = draw(st.lists(interval(allow_invalid), min_size=1, max_size=3))
        rows = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=max_size))
    elif shape == "book":
        rows = draw(book_ended())
        rows += draw(st.lists(interval(allow_invalid), max_size=5))
    else:
        rows = draw(st.lists(interval(allow_invalid), max_size=max_size))
    arr = np.array(rows, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0].copy(), arr[:, 1].copy()


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- tests


@SETTINGS
@given(q=interval_set(allow_invalid=False), t=interval_set(), k=st.integers(1, 12))
def test_nearest_matches_oracle(q, t, k):
    check_nearest(q, t, k)


@SETTINGS
@given(q=interval_set(), t=interval_set(), k=st.integers(1, 40))
def test_nearest_matches_oracle_reversed_queries_and_large_k(q, t, k):
    check_nearest(q, t, k)


@settings(max_examples=100, deadline=None)
@given(q=interval_set(max_size=8), t=interval_set(max_size=200), k=st.integers(1, 6))
def test_nearest_many_targets(q, t, k):
    check_nearest(q, t, k)


def test_nearest_identical_and_nested():
    q = (np.array([10, 10, 12], dtype=np.int64), np.array([20, 20, 13], dtype=np.int64))
    t = (
        np.array([10, 10, 10, 11, 0, 25, 25], dtype=np.int64),
        np.array([20, 20, 20, 19, 50, 26, 26], dtype=np.int64),
    )
    for k in range(1, 9):
        check_nearest(q, t, k)


def test_nearest_tie_on_full_key_is_included():
    # Three copies of (30, 31) share the key at position k = 2 for query (0, 10).
    q = (np.array([0], dtype=np.int64), np.array([10], dtype=np.int64))
    t = (np.array([30, 20, 30, 30, 40], dtype=np.int64), np.array([31, 21, 31, 31, 41], dtype=np.int64))
    qi, ti, d = nearest_candidates(*q, *t, 2)
    assert sorted(ti.tolist()) == [0, 1, 2, 3]
    assert sorted(d.tolist()) == [11, 21, 21, 21]


def test_nearest_classification_order():
    # Zero-length query at 5 against zero-length target at 5: rule 1 fails
    # (5 < 5 is false), rule 2 applies (5 <= 5), so d = 1 on the right side.
    # Reversed target (7, 3) against (0, 5): qs < te but not qe > ts, so rule 2 gives 3.
    qi, ti, d = nearest_candidates(
        np.array([5, 0], dtype=np.int64),
        np.array([5, 5], dtype=np.int64),
        np.array([5, 7], dtype=np.int64),
        np.array([5, 3], dtype=np.int64),
        2,
    )
    assert list(zip(qi.tolist(), ti.tolist(), d.tolist())) == [(0, 0, 1), (0, 1, 3), (1, 0, 1), (1, 1, 3)]


@pytest.mark.parametrize("nq, nt", [(0, 0), (0, 3), (3, 0)])
def test_nearest_empty(nq, nt):
    z = np.zeros
    out = nearest_candidates(z(nq, np.int64), z(nq, np.int64), z(nt, np.int64), z(nt, np.int64), 3)
    assert all(a.size == 0 and a.dtype == np.int64 for a in out)


def test_nearest_large_runs():
    rng = np.random.default_rng(7)
    n = 20_000
    qs = rng.integers(0, 5_000_000, n)
    qe = qs + rng.integers(0, 2_000, n)
    ts = rng.integers(0, 5_000_000, n)
    te = ts + rng.integers(0, 2_000, n)
    # A few long targets make the overlap stream skip through the tree.
    te[:20] = ts[:20] + 3_000_000
    k = 3
    qi, ti, d = nearest_candidates(qs, qe, ts, te, k)
    counts = np.bincount(qi, minlength=n)
    assert counts.min() >= k
    assert counts.max() < 100
    check_nearest((qs, qe), (ts, te), k, queries_to_check=rng.choice(n, 200, replace=False))


def test_nearest_many_rejected_left_candidates():
    # Many reversed targets sit in the left order (te <= qs) but have ts >= qe,
    # so they must be skipped in the left stream and found in the right one.
    n = 5_000
    ts = np.full(n, 100, dtype=np.int64)
    te = np.full(n, 0, dtype=np.int64)
    ts = np.concatenate([ts, np.array([1], dtype=np.int64)])
    te = np.concatenate([te, np.array([2], dtype=np.int64)])
    q = (np.array([10], dtype=np.int64), np.array([20], dtype=np.int64))
    check_nearest(q, (ts, te), 2)


# --------------------------------------------------------------------------- first_k_by_position


def oracle_first_k(t_s, t_e, k):
    if t_s.size == 0:
        return np.empty(0, dtype=np.int64)
    return oracle_selection(np.zeros_like(t_s), t_s, t_e, k)


@SETTINGS
@given(q_count=st.integers(0, 5), t=interval_set(), k=st.integers(1, 30))
def test_first_k_by_position_matches_oracle(q_count, t, k):
    t_s, t_e = t
    qi, ti, d = first_k_by_position(q_count, t_s, t_e, k)
    assert qi.dtype == ti.dtype == d.dtype == np.int64
    assert np.all(d == -1)
    want = oracle_first_k(t_s, t_e, k)
    if q_count == 0:
        assert qi.size == 0
        return
    assert qi.size == q_count * want.size
    for i in range(q_count):
        got = ti[qi == i]
        np.testing.assert_array_equal(np.sort(got), want)
        keys = list(zip(t_s[got].tolist(), t_e[got].tolist()))
        assert keys == sorted(keys)


@SETTINGS
@given(q=st.lists(st.integers(-20, 60), max_size=10), v=st.lists(st.integers(0, 40), max_size=30),
       k=st.integers(1, 8), at_or_above=st.booleans())
def test_nearest_by_value_matches_oracle(q, v, k, at_or_above):
    """Per query: exactly the values whose distance is at most the k-th smallest distance."""
    qa, va = np.array(q, dtype=np.int64), np.array(v, dtype=np.int64)
    qi, ti = nearest_by_value(qa, va, k, at_or_above)
    got = sorted(zip(qi.tolist(), ti.tolist()))
    want = []
    for i, x in enumerate(q):
        d = {j: (y - x if at_or_above else abs(y - x)) for j, y in enumerate(v) if not at_or_above or y >= x}
        if d:
            kth = sorted(d.values())[min(k, len(d)) - 1]
            want += [(i, j) for j, dist in d.items() if dist <= kth]
    assert got == sorted(want)
