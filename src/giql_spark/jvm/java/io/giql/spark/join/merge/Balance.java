package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the merge join's task boundaries fall in the genome's order (key by key, position by
 * position), so that the longest task is as short as it can be.
 *
 * <p>A task reads whole row groups: the left groups whose bounds reach its positions and the
 * right groups that can meet its left rows. Its cost is the work of the rows it keeps ({@link
 * Work}: rows, and pairs at their weight) plus {@link #DECODED} per row of every row group it
 * decodes, since a range ending inside a row group decodes all of it. Cutting by kept rows alone
 * gave tasks that decode two row groups a side and tasks that decode three: in the event log of
 * 64 tasks on the 10M set (131,072-row groups) a task's CPU time followed the bytes it read
 * (correlation 0.94) and hardly the rows it kept (0.33), the longest task 1.33 times the mean.
 *
 * <p>The boundaries are the greedy partition for a cost bound C (each task reaches as far as its
 * cost stays within C; the cost of a run of the genome only grows as the run does, so the greedy
 * one needs the fewest tasks for C), with the least C that needs at most the tasks wanted, found
 * by bisection. A boundary is a key's start or, in a key whose rows can be cut ({@link Ranges}),
 * a position: the starts and ends of its row groups' bounds and the points its rows are spread
 * over (a key lighter than a task's share from the footers alone, {@link #estimated}).
 */
final class Balance {
  /**
   * A decoded row's weight of a kept row. From the event log of 64 merge tasks on the 10M set:
   * a task's CPU time was 0.103 ms per 1,000 rows of the row groups it read and 0.068 ms per
   * 1,000 rows it kept (both sides), the rows kept being decoded too.
   */
  static final double DECODED = 1.5;

  /**
   * A boundary inside a key lighter than a task's share moves to the key's start or end when
   * neither task beside it then costs more than this share above the least cost bound: a cut
   * adds a range that reads row groups shared with its neighbours, a check of every left row
   * against the range, and the key's own bounds in its shared row groups read on the driver
   * (about 0.2 s in a first plan); a little evenness is worth less.
   */
  static final double KEY_END = 0.05;

  /** Relative precision of the bisection on the cost bound. */
  private static final double PRECISION = 1e-3;

  /** A task boundary: the start of key {@code key}, or its rows from position {@code pos} on. */
  static final class Cut {
    final int key;
    final long pos; // Long.MIN_VALUE: the key's start

    Cut(int key, long pos) {
      this.key = key;
      this.pos = pos;
    }

    boolean atKeyStart() {
      return pos == Long.MIN_VALUE;
    }
  }

  /** A key that can be cut: its row groups' own bounds, its points and its cut positions. */
  private static final class Inside {
    final List<Integer> lg;
    final List<Integer> rg;
    final long[][] lb;
    final long[][] rb;
    final Ranges.Points pts;
    final long[] at; // increasing positions a boundary may take

    Inside(List<Integer> lg, List<Integer> rg, long[][] lb, long[][] rb, Ranges.Points pts,
        long[] at) {
      this.lg = lg;
      this.rg = rg;
      this.lb = lb;
      this.rb = rb;
      this.pts = pts;
      this.at = at;
    }
  }

  private final Side l;
  private final Side r;
  private final List<Object> keys;
  private final List<Double> work;
  private final double c;
  private final double decoded;
  private final Inside[] inside;
  private final boolean[] looked;
  private final int[] lStamp;
  private final int[] rStamp;
  private int stamp;
  /** A task's share of the kept work. */
  private double share = Double.POSITIVE_INFINITY;

  /**
   * {@code keys} in the genome's order with their work ({@link Work#key}); {@code c} as {@link
   * Work#perDensity}; {@code decoded}: a decoded row's weight ({@link #DECODED}; 0 weighs the
   * kept rows alone).
   */
  Balance(Side l, Side r, List<Object> keys, List<Double> work, double c,
      double decoded) {
    this.l = l;
    this.r = r;
    this.keys = keys;
    this.work = work;
    this.c = c;
    this.decoded = decoded;
    this.inside = new Inside[keys.size()];
    this.looked = new boolean[keys.size()];
    this.lStamp = new int[l.groups.size()];
    this.rStamp = new int[r.groups.size()];
  }

  /** At most {@code n} - 1 boundaries in increasing order: the tasks are the runs between them. */
  List<Cut> boundaries(int n) {
    if (n <= 1 || keys.isEmpty()) return List.of();
    Cut start = new Cut(0, Long.MIN_VALUE);
    Cut end = new Cut(keys.size(), Long.MIN_VALUE);
    double all = cost(start, end);
    double kept = 0;
    for (double w : work) kept += w;
    // no task can cost less than its share of the kept work; one task holding all is possible
    double lo = kept / n;
    double hi = all;
    share = lo;
    prefetchCut();
    List<Cut> best = greedy(hi, n);
    while (hi - lo > PRECISION * hi) {
      double mid = (lo + hi) / 2;
      List<Cut> got = greedy(mid, n);
      if (got == null) {
        lo = mid;
      } else {
        hi = mid;
        best = got;
      }
    }
    if (best == null) return List.of();
    List<Cut> out = new ArrayList<>(best);
    for (int j = 0; j < out.size(); j++) {
      Cut b = out.get(j);
      // only in a key lighter than a share: a heavier one is cut anyway, and there the 5%
      // lengthened the longest of 64 tasks on the 10M set by about as much
      if (b.atKeyStart() || work.get(b.key) >= share) continue;
      Cut prev = j == 0 ? start : out.get(j - 1);
      Cut next = j + 1 < out.size() ? out.get(j + 1) : end;
      for (int k = b.key; k <= b.key + 1; k++) {
        Cut c = new Cut(k, Long.MIN_VALUE);
        if (!before(prev, c) || !before(c, next)) continue;
        if (cost(prev, c) <= (1 + KEY_END) * hi && cost(c, next) <= (1 + KEY_END) * hi) {
          out.set(j, c);
          break;
        }
      }
    }
    return out;
  }

  private static boolean before(Cut a, Cut b) {
    return a.key < b.key || a.key == b.key && a.pos < b.pos;
  }

  /** The boundaries of tasks each costing at most {@code bound}, or null when n are too few. */
  private List<Cut> greedy(double bound, int n) {
    List<Cut> out = new ArrayList<>();
    Cut a = new Cut(0, Long.MIN_VALUE);
    int keysN = keys.size();
    while (true) {
      // the furthest key start the task can reach
      int k = a.key + 1;
      if (cost(a, new Cut(k, Long.MIN_VALUE)) <= bound) {
        while (k < keysN && cost(a, new Cut(k + 1, Long.MIN_VALUE)) <= bound) k++;
        if (k == keysN) return out;
      } else {
        k = a.key; // the boundary lies inside the task's own first key
      }
      Cut b = furthestInside(a, k, bound);
      if (b == null) {
        if (k == a.key) return null; // not even the next step fits
        b = new Cut(k, Long.MIN_VALUE);
      }
      out.add(b);
      if (out.size() >= n) return null;
      a = b;
    }
  }

  /** The furthest position in key {@code k} after {@code a} within {@code bound}, or null. */
  private Cut furthestInside(Cut a, int k, double bound) {
    Inside in = inside(k);
    if (in == null) return null;
    long after = a.key == k ? a.pos : Long.MIN_VALUE;
    int i = Arrays.binarySearch(in.at, after);
    int first = i >= 0 ? i + 1 : -i - 1; // the first position after a
    int lo = first - 1;
    int hi = in.at.length - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (cost(a, new Cut(k, in.at[mid])) <= bound) lo = mid;
      else hi = mid - 1;
    }
    return lo < first ? null : new Cut(k, in.at[lo]);
  }

  /**
   * The cost of the task from {@code a} to {@code b}: its kept work plus the decoded weight per
   * row of the row groups it decodes (a row group of several keys counted once).
   */
  double cost(Cut a, Cut b) {
    stamp++;
    double kept = 0;
    double decoded = 0;
    for (int k = a.key; k <= b.key && k < keys.size(); k++) {
      long from = k == a.key ? a.pos : Long.MIN_VALUE;
      long to = k == b.key ? b.pos : Long.MAX_VALUE;
      if (to == Long.MIN_VALUE) break;
      Object key = keys.get(k);
      if (from == Long.MIN_VALUE && to == Long.MAX_VALUE) {
        kept += work.get(k);
        decoded += decode(l, lStamp, l.keys.get(key).groups);
        KeyRuns rk = r.keys.get(key);
        if (rk != null) decoded += decode(r, rStamp, rk.groups);
        continue;
      }
      Inside in = inside(k); // a boundary lies in the key only where it has one
      kept += in.pts.sum(from, to);
      long least = Long.MAX_VALUE;
      long greatest = Long.MIN_VALUE;
      for (int i = 0; i < in.lg.size(); i++) {
        long[] g = in.lb[i];
        if (!Ranges.reads(g, from, to)) continue;
        decoded += decode(l, lStamp, in.lg.get(i));
        if (Bounds.empty(g)) continue;
        least = Math.min(least, Math.max(g[0], from));
        greatest = Math.max(greatest, g[2]);
      }
      for (int i = 0; i < in.rg.size(); i++) {
        if (Ranges.meets(in.rb[i], least, greatest)) decoded += decode(r, rStamp, in.rg.get(i));
      }
    }
    return kept + this.decoded * decoded;
  }

  private double decode(Side s, int[] seen, List<Integer> groups) {
    double rows = 0;
    for (int g : groups) rows += decode(s, seen, g);
    return rows;
  }

  private double decode(Side s, int[] seen, int g) {
    if (seen[g] == stamp) return 0;
    seen[g] = stamp;
    return s.group(g).rows;
  }

  /**
   * A key's bounds in each of its row groups, for the cost alone, for a key lighter than a task's
   * share: a row group shared with other keys is not read for the key's own bounds (that reads
   * its rows on the driver, and the search looks inside many keys it does not cut: reading them
   * all made a first plan at two tasks 0.8 s slower).
   * Its footer bounds span all its keys' rows, so the key's rows there are taken to lie no
   * further than its neighbouring row groups of its own: before the next one's least lo (and
   * ending by its greatest hi) in its first row group, after the previous one's greatest lo in
   * its last. {@link Ranges#cutAt}
   * reads the true bounds of the keys it cuts. Null when a row group has none.
   */
  private static long[][] estimated(Side s, List<Integer> groups) {
    long[][] out = new long[groups.size()][];
    for (int i = 0; i < out.length; i++) {
      long[] b = s.bounds.get(groups.get(i));
      if (b == null || !Bounds.empty(b) && (b[0] > b[1] || b[1] > b[2])) return null;
      out[i] = b;
    }
    for (int i = 0; i < out.length; i++) {
      if (Bounds.empty(out[i]) || !shared(s, groups.get(i))) continue;
      long lo = out[i][0];
      long greatestLo = out[i][1];
      long greatest = out[i][2];
      if (i + 1 < out.length && !Bounds.empty(out[i + 1]) && !shared(s, groups.get(i + 1))) {
        greatestLo = Math.max(lo, Math.min(greatestLo, out[i + 1][0]));
        greatest = Math.min(greatest, out[i + 1][2]);
      }
      if (i > 0 && !Bounds.empty(out[i - 1]) && !shared(s, groups.get(i - 1))) {
        lo = Math.min(greatestLo, Math.max(lo, out[i - 1][1]));
      }
      out[i] = new long[] {lo, greatestLo, Math.max(greatest, greatestLo)};
    }
    return out;
  }

  private static boolean shared(Side s, int g) {
    Object[] keys = s.group(g).keys;
    return keys != null && keys.length > 1;
  }

  /**
   * Reads side by side the shared row groups of every key of a task's share or more: the search
   * and the cut ask for each one's own bounds there ({@link #inside}, {@link Ranges#cutAt}).
   */
  private void prefetchCut() {
    if (l.bounds == null) return;
    List<Runnable> reads = new ArrayList<>();
    Set<Integer> lq = new HashSet<>();
    Set<Integer> rq = new HashSet<>();
    for (int k = 0; k < keys.size(); k++) {
      if (work.get(k) < share) continue;
      Object key = keys.get(k);
      for (Side s : new Side[] {l, r}) {
        KeyRuns runs = s.keys.get(key);
        if (runs != null && s.bounds != null && s.shared instanceof SharedBounds) {
          ((SharedBounds) s.shared).readsOf(runs.groups, key, s == l ? lq : rq, reads);
        }
      }
    }
    SharedBounds.prefetch(reads);
  }

  /** Key {@code k} as it can be cut, or null when it cannot (read once, when first asked). */
  private Inside inside(int k) {
    if (looked[k]) return inside[k];
    looked[k] = true;
    if (l.bounds == null) return null;
    Object key = keys.get(k);
    KeyRuns lk = l.keys.get(key);
    KeyRuns rk = r.keys.get(key);
    if (lk == null || rk != null && r.bounds == null) return null;
    List<Integer> lg = lk.groups;
    List<Integer> rg = rk == null ? List.of() : rk.groups;
    // a key of a task's share or more will be cut anyway (and its own bounds read then)
    boolean exact = work.get(k) >= share;
    long[][] lb = exact ? Ranges.bounds(l, lg, key) : estimated(l, lg);
    long[][] rb = lb == null ? null : exact ? Ranges.bounds(r, rg, key) : estimated(r, rg);
    if (rb == null) return null;
    Ranges.Points pts = Ranges.points(l, r, lg, rg, lb, rb, c, work.get(k));
    // the positions between the key's least and greatest left lo (a boundary elsewhere leaves
    // one side of it without left rows): row groups' starts and ends, and the points
    long least = Long.MAX_VALUE;
    long greatest = Long.MIN_VALUE;
    for (long[] b : lb) {
      if (Bounds.empty(b)) continue;
      least = Math.min(least, b[0]);
      greatest = Math.max(greatest, b[1]);
    }
    TreeSet<Long> at = new TreeSet<>();
    for (long[][] side : new long[][][] {lb, rb}) {
      for (long[] b : side) {
        if (Bounds.empty(b)) continue;
        at.add(b[0]);
        if (b[1] < Long.MAX_VALUE) at.add(b[1] + 1);
      }
    }
    for (long p : pts.at) {
      if (p < Long.MAX_VALUE) at.add(p + 1);
    }
    long[] out = at.subSet(least, false, greatest, true).stream().mapToLong(Long::longValue)
        .toArray();
    if (out.length == 0) return null;
    inside[k] = new Inside(lg, rg, lb, rb, pts, out);
    return inside[k];
  }
}
