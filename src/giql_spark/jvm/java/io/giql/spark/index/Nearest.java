package io.giql.spark.index;

import java.io.Serializable;

/**
 * The k entries of an {@link IntervalIndex} group nearest to a query hull [qlo, qhi]: nearest by
 * the gap between the closed hulls (0 when they share a point, else the distance from one to the
 * other), ties broken by (lo, hi, entry). Only entries within {@link #maxGap} count. With
 * {@link #ties}, every entry whose (gap, lo, hi) equals the k-th's comes too (a caller that
 * ranks the rows itself, by other columns as well, needs them all).
 *
 * <p>The search asks the index itself, so it is as fast as an overlap query for both of its
 * layouts: first the overlap query (gap 0); when that finds fewer than k entries, one window
 * query {@code [qlo - d, qhi + d]}, which returns exactly the entries within gap d, with d the
 * gap of the k-th entry to the right of the query (the entries are sorted by lo, so the k-th is
 * found by index). Only near the end of a group, where fewer than k entries lie to the right, is
 * d found by doubling.
 */
public final class Nearest implements Serializable {
  private static final long serialVersionUID = 1L;
  public final int k;
  public final long maxGap; // < 0: no limit
  public final boolean ties;

  public Nearest(int k, long maxGap) {
    this(k, maxGap, false);
  }

  public Nearest(int k, long maxGap, boolean ties) {
    this.k = k;
    this.maxGap = maxGap;
    this.ties = ties;
  }

  /** Per-task scratch space. */
  public static final class Scratch {
    final IntervalIndex.IntBuffer found = new IntervalIndex.IntBuffer();
    long[] gap = new long[16];
    int[] all = new int[16]; // the found entries before selection, for ties
  }

  /** Fills {@code out} with the nearest entries of group {@code g}, nearest first. */
  public void find(IntervalIndex idx, int g, long qlo, long qhi, Scratch sc,
      IntervalIndex.IntBuffer out) {
    out.clear();
    IntervalIndex.IntBuffer found = sc.found;
    found.clear();
    idx.query(g, qlo, qhi, -1, found);
    long limit = limit();
    if (found.n < k && limit > 0) {
      int s = idx.groupStart[g];
      int e = idx.groupStart[g + 1];
      long[] lo = idx.lo;
      int right = IntervalIndex.lowerBound(lo, s, e, qhi == Long.MAX_VALUE ? qhi : qhi + 1);
      long d;
      if (right + k - 1 < e) {
        d = Math.min(lo[right + k - 1] - qhi, limit);
        found.clear();
        idx.query(g, minus(qlo, d), plus(qhi, d), -1, found);
      } else {
        d = 1;
        while (true) {
          d = Math.min(d, limit);
          found.clear();
          idx.query(g, minus(qlo, d), plus(qhi, d), -1, found);
          boolean all = minus(qlo, d) <= lo[s] && plus(qhi, d) >= lo[e - 1];
          if (found.n >= k || all || d == limit) break;
          d = d > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : d * 2;
        }
      }
    }
    select(idx, qlo, qhi, found, sc, out);
  }

  /**
   * The first k of {@code found} by (gap, lo, hi, entry), in that order, into {@code out}; with
   * ties, then the others whose (gap, lo, hi) equals the k-th's. Every such entry is in
   * {@code found}: its gap is the k-th's, within the window searched.
   */
  private void select(IntervalIndex idx, long qlo, long qhi, IntervalIndex.IntBuffer found,
      Scratch sc, IntervalIndex.IntBuffer out) {
    int n = found.n;
    if (ties) {
      if (sc.all.length < n) sc.all = new int[Math.max(n, sc.all.length * 2)];
      System.arraycopy(found.a, 0, sc.all, 0, n);
    }
    if (sc.gap.length < n) sc.gap = new long[Math.max(n, sc.gap.length * 2)];
    long[] gap = sc.gap;
    int[] a = found.a;
    for (int i = 0; i < n; i++) {
      int x = a[i];
      gap[i] = gap(idx, x, qlo, qhi);
    }
    // insertion of each candidate into the sorted first m (m <= k): k is small in practice
    int m = 0;
    for (int i = 0; i < n; i++) {
      int x = a[i];
      long gx = gap[i];
      if (gx > limit()) continue;
      if (m == k && !before(idx, gx, x, gap[m - 1], a[m - 1])) continue;
      int j = m < k ? m++ : m - 1;
      while (j > 0 && before(idx, gx, x, gap[j - 1], a[j - 1])) {
        gap[j] = gap[j - 1];
        a[j] = a[j - 1];
        j--;
      }
      gap[j] = gx;
      a[j] = x;
    }
    for (int i = 0; i < m; i++) out.add(a[i]);
    if (ties && m == k) {
      int last = a[k - 1];
      long g = gap[k - 1];
      for (int i = 0; i < n; i++) {
        int x = sc.all[i];
        // the tied entries already taken are those up to the k-th in entry order
        if (x > last && idx.lo[x] == idx.lo[last] && idx.hi[x] == idx.hi[last]
            && gap(idx, x, qlo, qhi) == g) {
          out.add(x);
        }
      }
    }
  }

  /** The gap between entry {@code x}'s closed hull and [qlo, qhi] (0 when they share a point). */
  public static long gap(IntervalIndex idx, int x, long qlo, long qhi) {
    return Math.max(0, Math.max(idx.lo[x] - qhi, qlo - idx.hi[x]));
  }

  /** The largest gap that counts. */
  private long limit() {
    return maxGap < 0 ? Long.MAX_VALUE : maxGap;
  }

  private static boolean before(IntervalIndex idx, long g1, int x1, long g2, int x2) {
    if (g1 != g2) return g1 < g2;
    if (idx.lo[x1] != idx.lo[x2]) return idx.lo[x1] < idx.lo[x2];
    if (idx.hi[x1] != idx.hi[x2]) return idx.hi[x1] < idx.hi[x2];
    return x1 < x2;
  }

  private static long minus(long x, long d) {
    long r = x - d;
    return r > x ? Long.MIN_VALUE : r;
  }

  private static long plus(long x, long d) {
    long r = x + d;
    return r < x ? Long.MAX_VALUE : r;
  }

  @Override
  public String toString() {
    return "nearest " + k + (maxGap < 0 ? "" : " within gap " + maxGap)
        + (ties ? " with ties" : "");
  }
}
