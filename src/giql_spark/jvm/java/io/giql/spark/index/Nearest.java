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
 *
 * <p>With a {@link #side}, only the entries wholly on that side of the query count: {@code LEFT},
 * those with {@code hi <= qlo}; {@code RIGHT}, those with {@code lo >= qhi} (for half-open
 * intervals passed as [start, end], the rows ending at or before the query's start, or starting
 * at or after its end: a directed closest's upstream or downstream rows). Their gap is then
 * {@code qlo - hi} or {@code lo - qhi}, and with {@link #ties} every entry at the k-th's gap comes
 * too, whatever its lo and hi (a caller ranking by a column of its own needs them).
 * {@code LEFT_OR_MEETING} and {@code RIGHT_OR_MEETING} count the entries meeting the query (gap
 * 0) too, and leave out only those wholly on the other side ({@code lo > qhi}, or
 * {@code hi < qlo}): a closest that keeps overlaps and looks one way, in hulls where meeting is
 * overlapping.
 *
 * <p>With {@link #filtered}, only the entries an {@link Accept} lets through count: the k nearest
 * among the rows that meet the rest of a join's condition (a row's own entry left out of its
 * search in a self-join, say), where without it the condition would filter the k nearest after
 * the search and leave fewer than k.
 */
public final class Nearest implements Serializable {
  private static final long serialVersionUID = 1L;
  public final int k;
  public final long maxGap; // < 0: no limit
  public final boolean ties;
  public final int side; // BOTH, LEFT, RIGHT, LEFT_OR_MEETING or RIGHT_OR_MEETING
  public final boolean filtered; // the join's residual picks the entries searched, not the found

  /** Whether an entry may be among the nearest (a join's residual, asked during the search). */
  @FunctionalInterface
  public interface Accept {
    boolean test(int entry);
  }

  public static final int BOTH = 0;
  public static final int LEFT = -1;
  public static final int RIGHT = 1;
  public static final int LEFT_OR_MEETING = -2;
  public static final int RIGHT_OR_MEETING = 2;

  /** The sides by name (giql_band's option {@code side}), and their codes in the same order. */
  public static final String[] SIDE_NAMES =
      {"both", "left", "right", "left_or_meeting", "right_or_meeting"};
  private static final int[] SIDE_CODES = {BOTH, LEFT, RIGHT, LEFT_OR_MEETING, RIGHT_OR_MEETING};

  /** The side called {@code name}, one of {@link #SIDE_NAMES}. */
  public static int side(String name) {
    for (int i = 0; i < SIDE_NAMES.length; i++) {
      if (SIDE_NAMES[i].equals(name)) return SIDE_CODES[i];
    }
    throw new IllegalArgumentException("side " + name + " is not one of "
        + String.join(", ", SIDE_NAMES));
  }

  private static String sideName(int side) {
    for (int i = 0; i < SIDE_CODES.length; i++) {
      if (SIDE_CODES[i] == side) return SIDE_NAMES[i];
    }
    throw new IllegalArgumentException("side " + side + " is not one of Nearest's sides");
  }

  public Nearest(int k, long maxGap) {
    this(k, maxGap, false);
  }

  public Nearest(int k, long maxGap, boolean ties) {
    this(k, maxGap, ties, BOTH);
  }

  public Nearest(int k, long maxGap, boolean ties, int side) {
    this(k, maxGap, ties, side, false);
  }

  public Nearest(int k, long maxGap, boolean ties, int side, boolean filtered) {
    sideName(side); // a side Nearest knows, or IllegalArgumentException
    this.filtered = filtered;
    this.k = k;
    this.maxGap = maxGap;
    this.ties = ties;
    this.side = side;
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
    find(idx, g, qlo, qhi, sc, out, null);
  }

  /**
   * Fills {@code out} with the nearest entries of group {@code g} that {@code accept} lets
   * through (all of them when it is null), nearest first.
   */
  public void find(IntervalIndex idx, int g, long qlo, long qhi, Scratch sc,
      IntervalIndex.IntBuffer out, Accept accept) {
    out.clear();
    if (side != BOTH) {
      findSide(idx, g, qlo, qhi, sc, out, accept);
      return;
    }
    IntervalIndex.IntBuffer found = sc.found;
    found.clear();
    idx.query(g, qlo, qhi, -1, found);
    keep(found, accept);
    long limit = limit();
    if (found.n < k && limit > 0) {
      int s = idx.groupStart[g];
      int e = idx.groupStart[g + 1];
      long[] lo = idx.lo;
      int right = IntervalIndex.lowerBound(lo, s, e, qhi == Long.MAX_VALUE ? qhi : qhi + 1);
      // the gap of the k-th entry to the right: the window then holds k entries, unless the
      // accepted are fewer, when it doubles as near a group's end
      long d = right + k - 1 < e ? lo[right + k - 1] - qhi : 1;
      while (true) {
        d = Math.min(d, limit);
        found.clear();
        idx.query(g, minus(qlo, d), plus(qhi, d), -1, found);
        keep(found, accept);
        boolean all = minus(qlo, d) <= lo[s] && plus(qhi, d) >= lo[e - 1];
        if (found.n >= k || all || d == limit) break;
        d = d > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : d * 2;
      }
    }
    select(idx, qlo, qhi, found, sc, out, false);
  }

  /** Leaves in {@code found} only the entries {@code accept} lets through. */
  private static void keep(IntervalIndex.IntBuffer found, Accept accept) {
    if (accept == null) return;
    int kept = 0;
    for (int i = 0; i < found.n; i++) {
      int x = found.a[i];
      if (accept.test(x)) found.a[kept++] = x;
    }
    found.n = kept;
  }

  /**
   * The nearest entries of group {@code g} on {@link #side} of [qlo, qhi]. The entries on a side
   * within gap d are those of the window [qlo - d, qlo] (or [qhi, qhi + d]; with the meeting ones,
   * [qlo - d, qhi] or [qlo, qhi + d]) that lie on the side, so d grows until the window holds k
   * of them, or reaches the limit or the group's end. The first d is a guess from the sorted starts: on the right exact, the k-th start
   * at or after qhi; on the left, the k-th start before qlo (an entry starting there ends later).
   */
  private void findSide(IntervalIndex idx, int g, long qlo, long qhi, Scratch sc,
      IntervalIndex.IntBuffer out, Accept accept) {
    IntervalIndex.IntBuffer found = sc.found;
    int s = idx.groupStart[g];
    int e = idx.groupStart[g + 1];
    long[] lo = idx.lo;
    long limit = limit();
    if (s == e) return;
    boolean toRight = side > 0;
    boolean meeting = side == LEFT_OR_MEETING || side == RIGHT_OR_MEETING;
    long d;
    if (toRight) {
      int right = IntervalIndex.lowerBound(lo, s, e, qhi);
      d = right + k - 1 < e ? lo[right + k - 1] - qhi : (right < e ? lo[e - 1] - qhi : 0);
    } else {
      int before = IntervalIndex.lowerBound(lo, s, e, qlo == Long.MAX_VALUE ? qlo : qlo + 1);
      d = before - k >= s ? qlo - lo[before - k] : (before > s ? qlo - lo[s] : 0);
    }
    d = Math.max(1, Math.min(d, limit));
    while (true) {
      found.clear();
      if (toRight) {
        idx.query(g, meeting ? qlo : qhi, plus(qhi, d), -1, found);
      } else {
        idx.query(g, minus(qlo, d), meeting ? qhi : qlo, -1, found);
      }
      if (!meeting) { // the window's entries that reach into the query are not wholly on the side
        int kept = 0;
        for (int i = 0; i < found.n; i++) {
          int x = found.a[i];
          if (toRight ? lo[x] >= qhi : idx.hi[x] <= qlo) found.a[kept++] = x;
        }
        found.n = kept;
      }
      keep(found, accept);
      int n = found.n;
      // every entry on the side ends at or after qlo (so starts before qhi + d when the window
      // reaches the last start), or starts at or before qhi (so after qlo - d when it reaches the
      // first)
      boolean all = toRight ? plus(qhi, d) >= lo[e - 1] : minus(qlo, d) <= lo[s];
      if (n >= k || all || d >= limit) break;
      d = d > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : d * 2;
    }
    select(idx, qlo, qhi, found, sc, out, true);
  }

  /**
   * The first k of {@code found} by (gap, lo, hi, entry), in that order, into {@code out}; with
   * ties, then the others whose (gap, lo, hi) equals the k-th's, or with {@code gapTies} whose
   * gap alone does. Every such entry is in {@code found}: its gap is the k-th's, within the
   * window searched.
   */
  private void select(IntervalIndex idx, long qlo, long qhi, IntervalIndex.IntBuffer found,
      Scratch sc, IntervalIndex.IntBuffer out, boolean gapTies) {
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
        if (gap(idx, x, qlo, qhi) != g) continue;
        if (gapTies) {
          if (!among(a, k, x)) out.add(x);
        } else if (x > last && idx.lo[x] == idx.lo[last] && idx.hi[x] == idx.hi[last]) {
          // the tied entries already taken are those up to the k-th in entry order
          out.add(x);
        }
      }
    }
  }

  private static boolean among(int[] a, int n, int x) {
    for (int i = 0; i < n; i++) {
      if (a[i] == x) return true;
    }
    return false;
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
        + (ties ? " with ties" : "")
        + (side == BOTH ? "" : " on the " + sideName(side).replace('_', ' '))
        + (filtered ? " among the rows the condition accepts" : "");
  }
}
