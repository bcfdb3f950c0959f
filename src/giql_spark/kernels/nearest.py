"""Candidate generation for k-nearest interval queries within one group.

A group is one chromosome (and, in stranded mode, one strand). The kernels
here never decide the final answer on their own: they return, per query, the
exact set of targets that can appear in the top-k, including every target tied
with the k-th one, and the caller ranks that small set exactly in SQL.

Distance semantics (bedtools ``closest -d`` style, as in giql), for a query
``(qs, qe)`` and a target ``(ts, te)``, all 0-based half-open int64, evaluated
in this order:

1. ``qs < te and qe > ts``  -> ``d = 0``            (overlap)
2. ``qe <= ts``             -> ``d = ts - qe + 1``  (target to the right)
3. otherwise                -> ``d = qs - te + 1``  (target to the left)

Targets are ranked by the key ``(d, ts, te)`` ascending.

The three rules partition the targets of a query into three streams, each of
which can be read in key order from one of two sorted copies of the targets,
without assuming ``start <= end`` for either side:

* right:   ``ts >= qe``              -- a suffix of the (ts, te) order; ``d``
  grows with ``ts`` so the suffix is already in key order.
* overlap: ``ts < qe and te > qs``   -- inside the prefix ``ts < qe`` of the
  (ts, te) order, filtered on ``te > qs``; ``d == 0`` so (ts, te) order is key
  order. A max segment tree over ``te`` jumps to the next match in O(log n).
* left:    ``ts < qe and te <= qs``  -- inside the suffix ``te <= qs`` of the
  (te desc, ts asc) order, filtered on ``ts < qe``; ``d = qs - te + 1`` so this
  order is key order. A min segment tree over ``ts`` jumps to the next match.
  For well-formed intervals the filter almost never rejects anything, but
  zero-length or reversed intervals can make it reject many rows in a row.

Merging the three streams and stopping after the k-th key (plus ties) costs
O(log n) per query for the initial searches and O(log n) per emitted row.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_I64_MIN = np.iinfo(np.int64).min
_I64_MAX = np.iinfo(np.int64).max


@njit(cache=True)
def _order_start_end(s, e):
    # Two stable passes give a lexicographic order without np.lexsort,
    # which numba does not support.
    by_end = np.argsort(e, kind="mergesort")
    by_start = np.argsort(s[by_end], kind="mergesort")
    return by_end[by_start]


@njit(cache=True)
def _order_end_desc_start_asc(s, e):
    # Build (end asc, start desc) stably, then reverse the whole order; this
    # avoids negating coordinates, which would overflow at INT64_MIN.
    start_desc = np.argsort(s, kind="mergesort")[::-1].copy()
    by_end = np.argsort(e[start_desc], kind="mergesort")
    return start_desc[by_end][::-1].copy()


@njit(cache=True)
def _tree_size(n):
    size = 1
    while size < n:
        size *= 2
    return size


@njit(cache=True)
def _build_max_tree(vals, size):
    # Padding leaves hold INT64_MIN so that "value > x" is never true there.
    tree = np.full(2 * size, _I64_MIN, dtype=np.int64)
    tree[size : size + vals.shape[0]] = vals
    for i in range(size - 1, 0, -1):
        tree[i] = max(tree[2 * i], tree[2 * i + 1])
    return tree


@njit(cache=True)
def _first_greater(tree, size, lo, x):
    """First leaf index ``j >= lo`` with ``leaf[j] > x``, or ``size`` if none."""
    if lo >= size:
        return size
    node = lo + size
    while True:
        # Climbing while on a left child keeps the covered range starting at
        # `lo`'s position, so the first hit inside it is the answer.
        while node % 2 == 0:
            node >>= 1
        if tree[node] > x:
            while node < size:
                node *= 2
                if tree[node] <= x:
                    node += 1
            return node - size
        node += 1
        # A power of two here means the previous node was the last one on
        # its level: everything to the right has been ruled out.
        if node & (node - 1) == 0:
            return size


@njit(cache=True)
def _first_at_or_below_desc(desc, x):
    """First index ``j`` of a descending array with ``desc[j] <= x``."""
    lo = 0
    hi = desc.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if desc[mid] > x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _key_less(d1, s1, e1, d2, s2, e2):
    if d1 != d2:
        return d1 < d2
    if s1 != s2:
        return s1 < s2
    return e1 < e2


@njit(cache=True)
def _grow(buf, n_used):
    out = np.empty(2 * buf.shape[0] + 16, dtype=np.int64)
    out[:n_used] = buf[:n_used]
    return out


@njit(cache=True)
def _empty_result():
    return (
        np.empty(0, dtype=np.int64),
        np.empty(0, dtype=np.int64),
        np.empty(0, dtype=np.int64),
    )


@njit(cache=True)
def nearest_candidates(q_start, q_end, t_start, t_end, k):
    """Targets that can rank in the top ``k`` for each query of one group.

    For query ``(qs, qe)`` and target ``(ts, te)`` (0-based half-open int64;
    neither side is required to satisfy ``start <= end``) the distance is, in
    this order of evaluation::

        qs < te and qe > ts  ->  0
        qe <= ts             ->  ts - qe + 1
        otherwise            ->  qs - te + 1

    Targets are ranked per query by the key ``(d, ts, te)`` ascending. For
    every query the result holds exactly the targets whose key is ``<=`` the
    key of the ``k``-th ranked target, i.e. the top ``k`` plus every target
    tied with the ``k``-th on the full key; if there are at most ``k``
    targets, all of them. Each (query, target) pair appears at most once.

    Parameters
    ----------
    q_start, q_end : int64 arrays of equal length (queries).
    t_start, t_end : int64 arrays of equal length (targets).
    k : int, ``k >= 1``. ``k <= 0`` yields an empty result.

    Returns
    -------
    (query_index, target_index, distance) : three int64 arrays of equal
    length. Indexes refer to positions in the input arrays. Rows are grouped
    by query in input order and, within a query, in ascending key order.
    Empty inputs give empty arrays.

    Cost: O((n + m) log m) to sort and index the ``m`` targets, plus
    O(log m) per query and O(log m) per emitted row.
    """
    nq = q_start.shape[0]
    nt = t_start.shape[0]
    if nq == 0 or nt == 0 or k <= 0:
        return _empty_result()

    a = _order_start_end(t_start, t_end)
    a_s = t_start[a].astype(np.int64)
    a_e = t_end[a].astype(np.int64)
    b = _order_end_desc_start_asc(t_start, t_end)
    b_s = t_start[b].astype(np.int64)
    b_e = t_end[b].astype(np.int64)

    size = _tree_size(nt)
    end_max = _build_max_tree(a_e, size)
    # "first start < qe" is "first negated start > -qe": one tree kind serves both streams.
    neg_start_max = _build_max_tree(-b_s, size)

    per_query = min(k, nt)
    cap = nq * per_query
    if cap > (1 << 22):
        cap = 1 << 22
    cap += 16
    out_q = np.empty(cap, dtype=np.int64)
    out_t = np.empty(cap, dtype=np.int64)
    out_d = np.empty(cap, dtype=np.int64)
    n_out = 0

    for qi in range(nq):
        qs = np.int64(q_start[qi])
        qe = np.int64(q_end[qi])

        # Right stream: a[right_lo:] (ts >= qe).
        right_lo = np.searchsorted(a_s, qe)
        r = right_lo
        # Overlap stream: a[:right_lo] filtered on te > qs.
        o = _first_greater(end_max, size, 0, qs)
        if o > right_lo:
            o = right_lo
        # Left stream: b[left_lo:] (te <= qs) filtered on ts < qe.
        left_lo = _first_at_or_below_desc(b_e, qs)
        lft = _first_greater(neg_start_max, size, left_lo, -qe)
        if lft > nt:
            lft = nt

        taken = 0
        kd = np.int64(0)
        ks = np.int64(0)
        ke = np.int64(0)
        while True:
            which = -1
            bd = np.int64(0)
            bs = np.int64(0)
            be = np.int64(0)
            if o < right_lo:
                which = 0
                bd = np.int64(0)
                bs = a_s[o]
                be = a_e[o]
            if r < nt:
                cd = a_s[r] - qe + 1
                if which < 0 or _key_less(cd, a_s[r], a_e[r], bd, bs, be):
                    which = 1
                    bd = cd
                    bs = a_s[r]
                    be = a_e[r]
            if lft < nt:
                cd = qs - b_e[lft] + 1
                if which < 0 or _key_less(cd, b_s[lft], b_e[lft], bd, bs, be):
                    which = 2
                    bd = cd
                    bs = b_s[lft]
                    be = b_e[lft]
            if which < 0:
                break
            # Streams are merged in key order, so past the k-th row the next
            # key is either equal to the k-th key (a tie) or larger (done).
            if taken >= k and (bd != kd or bs != ks or be != ke):
                break

            if n_out == out_q.shape[0]:
                out_q = _grow(out_q, n_out)
                out_t = _grow(out_t, n_out)
                out_d = _grow(out_d, n_out)
            out_q[n_out] = qi
            out_d[n_out] = bd
            if which == 0:
                out_t[n_out] = a[o]
                o = _first_greater(end_max, size, o + 1, qs)
                if o > right_lo:
                    o = right_lo
            elif which == 1:
                out_t[n_out] = a[r]
                r += 1
            else:
                out_t[n_out] = b[lft]
                lft = _first_greater(neg_start_max, size, lft + 1, -qe)
                if lft > nt:
                    lft = nt
            n_out += 1

            taken += 1
            if taken == k:
                kd = bd
                ks = bs
                ke = be

    return out_q[:n_out].copy(), out_t[:n_out].copy(), out_d[:n_out].copy()


@njit(cache=True)
def first_k_by_position(q_count, t_start, t_end, k):
    """Candidates when every distance is NULL (strand '.' or '?').

    With all distances NULL the ranking reduces to ``(ts, te)`` ascending and
    is the same for every query. Each of the ``q_count`` queries receives the
    ``k`` targets with the smallest ``(ts, te)`` plus every target tied with
    the ``k``-th on ``(ts, te)``; if there are at most ``k`` targets, all of
    them.

    Returns
    -------
    (query_index, target_index, distance) : three int64 arrays of equal
    length; query indexes are ``0 .. q_count - 1``, target indexes refer to
    positions in the input arrays, and every distance is ``-1`` (standing for
    NULL). Rows are grouped by query, and within a query ordered by
    ``(ts, te)``. ``q_count <= 0``, no targets, or ``k <= 0`` give empty
    arrays.

    Cost: O(m log m) for the sort plus O(rows emitted).
    """
    nt = t_start.shape[0]
    if q_count <= 0 or nt == 0 or k <= 0:
        return _empty_result()

    a = _order_start_end(t_start, t_end)
    m = min(k, nt)
    while m < nt and t_start[a[m]] == t_start[a[m - 1]] and t_end[a[m]] == t_end[a[m - 1]]:
        m += 1

    total = q_count * m
    out_q = np.empty(total, dtype=np.int64)
    out_t = np.empty(total, dtype=np.int64)
    out_d = np.full(total, -1, dtype=np.int64)
    pos = 0
    for qi in range(q_count):
        for j in range(m):
            out_q[pos] = qi
            out_t[pos] = a[j]
            pos += 1
    return out_q, out_t, out_d


@njit(cache=True)
def nearest_by_value(q, v, k, at_or_above):
    """Each query value's ``k`` nearest values, by ``|q - v|`` (or, with
    ``at_or_above``, only among ``v >= q``, by ``v - q``), every value tied
    with the ``k``-th included.

    This is the order of giql's distance for a reference with one NULL
    coordinate: with its end NULL the distance to a target is
    ``start - target_end + 1``; with its start NULL it is
    ``target_start - end + 1`` where ``end <= target_start`` and NULL elsewhere.

    Returns (query_index, value_index), two int64 arrays; value indexes refer
    to positions in ``v``. Cost: O(m log m) for the sort plus
    O(log m + k + rows emitted) per query.
    """
    nq = q.shape[0]
    m = v.shape[0]
    if nq == 0 or m == 0 or k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order = np.argsort(v, kind="mergesort")
    sv = v[order]
    out_q = np.empty(16, dtype=np.int64)
    out_t = np.empty(16, dtype=np.int64)
    n = 0
    for qi in range(nq):
        x = q[qi]
        i = np.searchsorted(sv, x)  # first index with sv >= x
        lo = i - 1 if not at_or_above else -1
        hi = i
        d = -1
        for _ in range(k):  # the k-th smallest distance
            dl = x - sv[lo] if lo >= 0 else -1
            dh = sv[hi] - x if hi < m else -1
            if dl < 0 and dh < 0:
                break
            if dh < 0 or (dl >= 0 and dl <= dh):
                d = dl
                lo -= 1
            else:
                d = dh
                hi += 1
        if d < 0:
            continue
        a = i if at_or_above else np.searchsorted(sv, x - d)
        b = np.searchsorted(sv, x + d, side="right")
        while n + (b - a) > out_q.shape[0]:
            out_q = _grow(out_q, n)
            out_t = _grow(out_t, n)
        for j in range(a, b):
            out_q[n] = qi
            out_t[n] = order[j]
            n += 1
    return out_q[:n].copy(), out_t[:n].copy()
