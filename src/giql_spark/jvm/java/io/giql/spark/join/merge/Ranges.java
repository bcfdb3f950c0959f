package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Cuts one key (a chromosome) of a merge join into ranges of positions, so that no task holds a
 * whole busy chromosome.
 *
 * <p>The key's left rows are split by their sweep lo: range {@code j} keeps those with lo in
 * [{@code c_j}, {@code c_j+1}) (the first from the least long, the last to the greatest), so each
 * left row is in exactly one range and each pair, found by its left row's range, is returned once:
 * no duplicate to remove and no shuffle. A range reads the key's left row groups whose footer
 * bounds reach its positions, and the right row groups whose bounds can meet the left rows it
 * keeps (a long interval's row group is read by every range it reaches). A left row that can
 * match nothing (NULL bounds) belongs to the first range that reads its row group. The cuts are
 * the plan's task boundaries that fall inside the key ({@link Balance}): a task holds the end of
 * one key, whole keys, and the start of the next. Each row group's rows are taken as spread evenly
 * between its bounds, for the rows and work a range keeps.
 *
 * <p>Bounds are footer min/max put through the lo and hi expressions ({@link Bounds}): they hold
 * whether or not the rows are sorted, so a range never misses a row. A row group shared with other
 * keys has footer bounds as wide as all its keys' (a chromosome's last rows and the next one's
 * first), which would send it, and every right row group up to the end of the chromosome, to
 * every range: the key's own bounds in such a group are read from its rows when the plan is made
 * (at most two row groups a side per key cut; cached).
 */
final class Ranges {
  private Ranges() {}

  /** Points each row group's rows are spread over for the kept work. */
  private static final int POINTS = 8;

  /**
   * Key {@code k} cut at the increasing positions {@code cuts} (the task boundaries {@link
   * Balance} placed inside it), as units: the i-th keeps the left rows with lo in [cuts[i - 1],
   * cuts[i]), null where it keeps none; null when the key cannot be cut. Work is as {@link Work}
   * weighs it: each row weighs {@code 1 + c × the other side's density at its lo / 2} (half of
   * each pair to each of its rows), scaled so that the key's rows weigh {@code keyWork}; {@code c}
   * 0 weighs rows alone.
   */
  static List<Unit> cutAt(Side l, Side r, Object k, long[] cuts,
      double c, double keyWork) {
    KeyRuns lk = l.keys.get(k);
    KeyRuns rk = r.keys.get(k);
    if (cuts.length == 0 || l.bounds == null || lk == null || rk != null && r.bounds == null) {
      return null;
    }
    List<Integer> lg = lk.groups;
    List<Integer> rg = rk == null ? List.of() : rk.groups;
    long[][] lb = bounds(l, lg, k);
    long[][] rb = lb == null ? null : bounds(r, rg, k);
    if (rb == null) return null;
    Points pts = points(l, r, lg, rg, lb, rb, c, keyWork);
    List<Unit> out = new ArrayList<>();
    boolean[] owned = new boolean[lg.size()];
    for (int j = 0; j <= cuts.length; j++) {
      long from = j == 0 ? Long.MIN_VALUE : cuts[j - 1];
      long to = j == cuts.length ? Long.MAX_VALUE : cuts[j];
      List<Integer> left = new ArrayList<>();
      List<Boolean> ownsNull = new ArrayList<>();
      long least = Long.MAX_VALUE;
      long greatest = Long.MIN_VALUE;
      double leftRows = 0;
      for (int i = 0; i < lg.size(); i++) {
        int g = lg.get(i);
        long[] b = lb[i];
        if (!reads(b, from, to)) continue;
        left.add(g);
        ownsNull.add(!owned[i]);
        owned[i] = true;
        if (Bounds.empty(b)) continue;
        least = Math.min(least, Math.max(b[0], from));
        greatest = Math.max(greatest, b[2]);
        leftRows += share(l, g, b, from, to);
      }
      if (left.isEmpty()) {
        out.add(null);
        continue;
      }
      List<Integer> right = new ArrayList<>();
      double rightRows = 0;
      // the right rows whose lo is in the range: the range's share of the rows the cuts divided
      double rightOwn = 0;
      for (int i = 0; i < rg.size(); i++) {
        int g = rg.get(i);
        long[] b = rb[i];
        if (Bounds.empty(b)) continue;
        if (b[0] < to && b[1] >= from) rightOwn += share(r, g, b, from, to);
        if (!meets(b, least, greatest)) continue;
        right.add(g);
        rightRows += rowsOf(r, g);
      }
      boolean[] owns = new boolean[left.size()];
      for (int i = 0; i < owns.length; i++) owns[i] = ownsNull.get(i);
      Units.ByteRanges files = Units.byteRanges(l, left, owns, owns);
      // its weight in the task cut: the rows of both sides whose lo is in the range (with their
      // pairs when weighed), as the cuts counted them
      double work = c > 0 ? pts.sum(from, to) : leftRows + rightOwn;
      Unit u = new Unit(new Object[] {k}, files.files,
          Units.ranges(r, right), false, (long) leftRows, (long) rightRows,
          new Range(from, to, files.owns, work));
      u.kept = leftRows + rightOwn;
      u.leftGroupIdx = left;
      u.leftGroupOwns = owns;
      u.rightGroupIdx = right;
      out.add(u);
    }
    // a group no range reads would lose rows: bounds always reach some range, but be sure
    for (boolean o : owned) {
      if (!o) return null;
    }
    return out;
  }

  /**
   * The key's own bounds in each of {@code groups} ({@link Side#bounds}), or null when
   * one is missing or malformed: every row group must have bounds, or a range could miss rows.
   */
  static long[][] bounds(Side s, List<Integer> groups, Object k) {
    long[][] out = new long[groups.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = s.bounds(groups.get(i), k);
      if (bad(out[i])) return null;
    }
    return out;
  }

  /**
   * Whether a range keeping the left rows with lo in [from, to) reads a left row group of these
   * bounds: only if they reach the range; one whose rows all have NULL bounds is the first
   * range's.
   */
  static boolean reads(long[] b, long from, long to) {
    return Bounds.empty(b) ? from == Long.MIN_VALUE : b[0] < to && b[1] >= from;
  }

  /**
   * Whether a right row group of bounds {@code b} can meet left rows whose least lo is {@code
   * least} and greatest hi {@code greatest}: its lo at most the greatest hi, its hi at least the
   * least lo (one either way for closed or half-open ends).
   */
  static boolean meets(long[] b, long least, long greatest) {
    return !Bounds.empty(b) && b[0] <= sat(greatest, 1) && b[2] >= sat(least, -1);
  }

  private static boolean bad(long[] b) {
    return b == null || !Bounds.empty(b) && (b[0] > b[1] || b[1] > b[2]);
  }

  private static long sat(long x, long d) {
    long y = x + d;
    return ((x ^ y) & (d ^ y)) < 0 ? (d > 0 ? Long.MAX_VALUE : Long.MIN_VALUE) : y;
  }

  private static double rowsOf(Side s, int g) {
    return s.group(g).nonNullRows() / (double) s.group(g).keys.length;
  }

  /** The key's rows of group {@code g} with lo in [from, to), as if spread evenly. */
  private static double share(Side s, int g, long[] b, long from, long to) {
    double rows = s.group(g).nonNullRows() / (double) s.group(g).keys.length;
    if (b[1] == b[0]) return rows;
    double a = Math.max((double) from, b[0]);
    double z = Math.min((double) to, (double) b[1] + 1);
    return rows * Math.max(0, z - a) / ((double) b[1] + 1 - b[0]);
  }

  /** Each row group's rows as {@link #POINTS} weighted points spread over its bounds, sorted. */
  static final class Points {
    final long[] at;
    final double[] w;
    final double total;

    /** {@code before[i]}: the weight of the points before {@code i}. */
    private final double[] before;

    /** {@code at} in increasing order, {@code w} its weights. */
    Points(long[] at, double[] w, double total) {
      this.at = at;
      this.w = w;
      this.total = total;
      this.before = new double[at.length + 1];
      for (int i = 0; i < at.length; i++) before[i + 1] = before[i] + w[i];
    }

    /**
     * The weight of the points in [from, to): two searches, since a key cut into thousands of
     * ranges over thousands of row groups asks this once per range.
     */
    double sum(long from, long to) {
      if (to <= from) return 0;
      return before[first(to)] - before[first(from)];
    }

    /** The index of the first point at or after {@code x} ({@code at.length}: none). */
    private int first(long x) {
      int lo = 0;
      int hi = at.length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (at[mid] < x) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    }
  }

  static Points points(Side l, Side r, List<Integer> lg,
      List<Integer> rg, long[][] lb, long[][] rb, double c, double keyWork) {
    Work.Density dl = c > 0 ? new Work.Density(l, lg, lb) : null;
    Work.Density dr = c > 0 ? new Work.Density(r, rg, rb) : null;
    int n = (lg.size() + rg.size()) * POINTS;
    long[] at = new long[n];
    double[] w = new double[n];
    int p = 0;
    double total = 0;
    for (int side = 0; side < 2; side++) {
      Side s = side == 0 ? l : r;
      List<Integer> gs = side == 0 ? lg : rg;
      Work.Density other = side == 0 ? dr : dl;
      for (int i = 0; i < gs.size(); i++) {
        int g = gs.get(i);
        long[] b = (side == 0 ? lb : rb)[i];
        double rows = s.group(g).nonNullRows() / (double) s.group(g).keys.length;
        if (Bounds.empty(b)) {
          n -= POINTS;
          continue;
        }
        for (int q = 0; q < POINTS; q++) {
          at[p] = b[0] + (long) ((q + 0.5) * ((double) b[1] - b[0]) / POINTS);
          w[p] = rows / POINTS * (other == null ? 1 : 1 + c * other.at(at[p]) / 2);
          total += w[p];
          p++;
        }
      }
    }
    if (c > 0 && total > 0 && keyWork > 0) {
      // the key's work as the plan's task cut counted it
      for (int i = 0; i < n; i++) w[i] *= keyWork / total;
      total = keyWork;
    }
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) order[i] = i;
    Arrays.sort(order, (a, b) -> Long.compare(at[a], at[b]));
    long[] sa = new long[n];
    double[] sw = new double[n];
    for (int i = 0; i < n; i++) {
      sa[i] = at[order[i]];
      sw[i] = w[order[i]];
    }
    return new Points(sa, sw, total);
  }
}
