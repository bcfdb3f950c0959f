package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.paths.SparkPath$;
import org.apache.spark.sql.catalyst.InternalRow$;
import org.apache.spark.sql.execution.datasources.PartitionedFile;

/**
 * The units of a {@link MergePlan}: keys cut into contiguous runs of about equal weight, whole
 * keys or pieces of a busy key within reach of their left rows, and the file ranges each unit
 * reads of its sides' row groups.
 */
final class Units {
  private Units() {}

  /**
   * Key {@code k} of a k-nearest join as up to {@code wanted} units, each with a run of the key's
   * left row groups of about equal rows; null when its left rows are in one row group. Row
   * groups are split whole, so each left row is read by one piece (a group shared with other keys
   * keeps only this key's rows there, as before).
   *
   * <p>A left row's nearest right rows may be anywhere on its key. Where both sides' footers
   * bound the rows' positions, a piece reads the right row groups that reach its left rows'
   * span and, where those do not reach well past an end, {@link #REACH_GROUPS} more beyond it
   * ({@link #withinReach}); the rest is read only if a left row's nearest may lie there (the
   * probe's test, {@code Reach}). Otherwise each
   * piece reads all of the key's right rows. Either way a piece's right rows are read again by
   * the others, so a key is cut into no more pieces than make a piece's left rows a quarter of
   * the right rows it reads ({@link MergePlan#PIECE_LEFT_PER_RIGHT}): past that a piece is mostly the
   * right side read again, and more pieces add work without making the longest task much
   * shorter.
   */
  static List<Unit> leftPieces(Side l, Side r, Object k, int wanted) {
    KeyRuns lk = l.keys.get(k);
    KeyRuns rk = r.keys.get(k);
    int most = Math.min(wanted, lk.groups.size());
    if (most < 2) return null;
    boolean reach = rk != null && rk.rows > 0 && l.bounds != null && r.bounds != null;
    for (int n = most; n >= 2; n--) {
      List<Unit> out = pieces(l, r, k, n, reach);
      double reads = 0;
      for (Unit u : out) reads += u.rightRows;
      // as many pieces as leave each a quarter as many left rows as the right rows it reads
      // (with all of them: a quarter of the key's right rows), but two in any case
      if (n == 2 || reads <= 0 || n <= Math.ceil(lk.rows / (MergePlan.PIECE_LEFT_PER_RIGHT * reads / n))) {
        return out.size() < 2 ? null : out;
      }
    }
    return null;
  }

  /**
   * Right row groups a k-nearest piece reads beyond each end of its left rows' span, unless the
   * groups reaching the span reach past that end by {@link #REACH_ROWS} rows' worth of their
   * positions.
   */
  static final int REACH_GROUPS = 1;
  static final double REACH_ROWS = 64;

  /** Key {@code k}'s left row groups in {@code n} runs of about equal rows, as units. */
  static List<Unit> pieces(Side l, Side r, Object k, int n, boolean reach) {
    KeyRuns lk = l.keys.get(k);
    KeyRuns rk = r.keys.get(k);
    double[] rows = new double[lk.groups.size()];
    double total = 0;
    for (int i = 0; i < rows.length; i++) {
      rows[i] = keyRows(l, lk.groups.get(i));
      total += rows[i];
    }
    List<Integer> rightGroups = rk == null ? new ArrayList<>() : rk.groups;
    PartitionedFile[] right = ranges(r, rightGroups);
    double rightRows = rk == null ? 0 : rk.rows;
    List<Unit> out = new ArrayList<>();
    int from = 0;
    double acc = 0;
    for (int p = 0; p < n; p++) {
      // at least a group, and one left for each piece after; the last takes the rest
      int after = n - p - 1;
      int to = from + 1;
      double got = rows[from];
      double target = total * (p + 1) / n;
      while (to < rows.length && (after == 0
          || to < rows.length - after && acc + got + rows[to] / 2 <= target)) {
        got += rows[to++];
      }
      List<Integer> mine = new ArrayList<>(lk.groups.subList(from, to));
      Unit u = reach ? withinReach(l, r, k, mine, got) : null;
      if (u == null) {
        u = new Unit(new Object[] {k}, ranges(l, mine), right, false, (long) got,
            (long) rightRows);
      }
      u.work = got + u.rightRows;
      u.kept = got + rightRows / n;
      out.add(u);
      acc += got;
      from = to;
    }
    return out;
  }

  /**
   * The piece of key {@code k} with left row groups {@code mine} ({@code got} rows), reading the
   * right row groups whose bounds reach the span of its left rows' bounds and, on a side where
   * they do not reach far past it, {@link #REACH_GROUPS} more (the nearest beyond that end), the
   * others kept as {@link Unit#rightRest} with the bounds its probe tests against; null when a
   * left group's bounds are unknown or no right group is left out.
   */
  static Unit withinReach(Side l, Side r, Object k, List<Integer> mine, double got) {
    long lo = Long.MAX_VALUE;
    long hi = Long.MIN_VALUE;
    for (int g : mine) {
      long[] b = l.bounds(g, k);
      if (b == null) return null;
      if (Bounds.empty(b)) continue;
      lo = Math.min(lo, b[0]);
      hi = Math.max(hi, b[2]);
    }
    List<Integer> in = new ArrayList<>();
    List<Integer> rest = new ArrayList<>();
    List<long[]> before = new ArrayList<>(); // {group, its greatest hi}
    List<long[]> beyond = new ArrayList<>(); // {group, its least lo}
    // the span of the least lo of the groups reaching the span, and their rows
    long inLo = Long.MAX_VALUE;
    long inLoMax = Long.MIN_VALUE;
    double inRows = 0;
    for (int g : r.keys.get(k).groups) {
      long[] b = r.bounds(g, k);
      if (b == null) {
        in.add(g);
      } else if (Bounds.empty(b)) {
        rest.add(g); // no row there can be anyone's nearest
      } else if (b[2] < lo) {
        before.add(new long[] {g, b[2]});
      } else if (b[0] > hi) {
        beyond.add(new long[] {g, b[0]});
      } else {
        in.add(g);
        inLo = Math.min(inLo, b[0]);
        inLoMax = Math.max(inLoMax, b[1]);
        inRows += keyRows(r, g);
      }
    }
    before.sort((x, y) -> Long.compare(y[1], x[1]));
    beyond.sort((x, y) -> Long.compare(x[1], y[1]));
    // the group beyond an end is not read where the rows left out would be REACH_ROWS rows'
    // worth of positions (of the groups read) from that end anyway: a row there is rarely anyone's
    // nearest, and the probe reads it if it may be
    double reach = inRows > 0 && inLoMax > inLo ? REACH_ROWS * ((double) inLoMax - inLo) / inRows
        : Double.POSITIVE_INFINITY;
    int extraBefore = !before.isEmpty() && (double) lo - before.get(0)[1] >= reach ? 0
        : REACH_GROUPS;
    int extraBeyond = !beyond.isEmpty() && (double) beyond.get(0)[1] - hi >= reach ? 0
        : REACH_GROUPS;
    long restHi = spill(before, extraBefore, in, rest, Long.MIN_VALUE, Math::max);
    long restLo = spill(beyond, extraBeyond, in, rest, Long.MAX_VALUE, Math::min);
    if (rest.isEmpty()) return null;
    double read = 0;
    for (int g : new java.util.TreeSet<>(in)) read += keyRows(r, g);
    Unit u = new Unit(new Object[] {k}, ranges(l, mine), ranges(r, in), false, (long) got,
        (long) read);
    u.rightRest = ranges(r, rest);
    u.restHi = restHi;
    u.restLo = restLo;
    return u;
  }

  /**
   * The first {@code extra} of {@code side}'s {group, position} into {@code in}, the others into
   * {@code rest}; returns the others' positions folded by {@code f} from {@code none}.
   */
  static long spill(List<long[]> side, int extra, List<Integer> in, List<Integer> rest,
      long none, java.util.function.LongBinaryOperator f) {
    long bound = none;
    for (int i = 0; i < side.size(); i++) {
      if (i < extra) {
        in.add((int) side.get(i)[0]);
      } else {
        rest.add((int) side.get(i)[0]);
        bound = f.applyAsLong(bound, side.get(i)[1]);
      }
    }
    return bound;
  }

  /** A row group's rows of one of its keys, estimated: its rows shared equally by its keys. */
  static double keyRows(Side s, int g) {
    ParquetLayout.RowGroup rg = s.group(g);
    return (double) rg.nonNullRows() / Math.max(1, rg.keys == null ? 1 : rg.keys.length);
  }

  /** The items cut into n runs of about equal weight, at the boundary nearest each quantile. */
  static List<List<Object>> contiguous(List<Object> keys, List<Double> weight,
      double total, int n) {
    List<List<Object>> ranges = new ArrayList<>();
    List<Object> cur = new ArrayList<>();
    double acc = 0;
    int made = 0;
    for (int i = 0; i < keys.size(); i++) {
      double w = weight.get(i);
      double target = total * (made + 1) / n;
      if (!cur.isEmpty() && made < n - 1 && acc + w / 2 > target) {
        ranges.add(cur);
        cur = new ArrayList<>();
        made++;
      }
      cur.add(keys.get(i));
      acc += w;
    }
    if (!cur.isEmpty() || ranges.isEmpty()) ranges.add(cur);
    return ranges;
  }

  /** One pass over the items (whole keys, and ranges of a key first and last). */
  static Unit unit(Side l, Side r, List<Object> items, Map<Object, Double> keyWork) {
    if (items.size() == 1 && items.get(0) instanceof Unit) return (Unit) items.get(0);
    List<Object> keys = new ArrayList<>();
    List<Integer> lg = new ArrayList<>();
    List<Integer> rg = new ArrayList<>();
    double lr = 0;
    double rr = 0;
    double weight = 0;
    double kept = 0;
    boolean cut = false;
    for (Object item : items) {
      if (item instanceof Unit) {
        Unit u = (Unit) item;
        keys.add(u.keys[0]);
        lg.addAll(u.leftGroupIdx);
        rg.addAll(u.rightGroupIdx);
        lr += u.leftRows;
        rr += u.rightRows;
        weight += u.range.weight;
        kept += u.kept;
        cut = true;
        continue;
      }
      keys.add(item);
      KeyRuns a = l.keys.get(item);
      lg.addAll(a.groups);
      lr += a.rows;
      KeyRuns b = r.keys.get(item);
      if (b != null) {
        rg.addAll(b.groups);
        rr += b.rows;
      }
      weight += keyWork.get(item);
      kept += a.rows + (b == null ? 0 : b.rows);
    }
    if (!cut) {
      Unit u = new Unit(keys.toArray(), ranges(l, lg), ranges(r, rg), false, (long) lr, (long) rr);
      u.work = weight;
      u.kept = kept;
      u.leftGroupIdx = lg;
      u.rightGroupIdx = rg;
      return u;
    }
    // the NULL-bound rows of the first and last key's ranges are this unit's in some row groups
    // only: each file holds groups that agree on both
    List<Integer> groups = new ArrayList<>(new java.util.TreeSet<>(lg));
    Object head = items.get(0);
    Object tail = items.get(items.size() - 1);
    Range first = head instanceof Unit ? ((Unit) head).range : null;
    Range last = tail instanceof Unit ? ((Unit) tail).range : null;
    ByteRanges files = byteRanges(l, groups, owns(head, groups), owns(tail, groups));
    Range range = new Range(first == null ? Long.MIN_VALUE : first.from,
        last == null ? Long.MAX_VALUE : last.to, keys.size() - 1, files.owns, files.ownsLast,
        weight);
    Unit u = new Unit(keys.toArray(), files.files, ranges(r, rg), false, (long) lr, (long) rr,
        range);
    u.kept = kept;
    u.leftGroupIdx = groups;
    u.rightGroupIdx = rg;
    return u;
  }

  /**
   * Per row group of {@code groups}: whether the item's key's NULL-bound rows there are the
   * item's (a whole key's are all its own; a range's as it was cut).
   */
  static boolean[] owns(Object item, List<Integer> groups) {
    boolean[] out = new boolean[groups.size()];
    for (int i = 0; i < out.length; i++) {
      if (!(item instanceof Unit)) {
        out[i] = true;
        continue;
      }
      Unit u = (Unit) item;
      int at = u.leftGroupIdx.indexOf(groups.get(i));
      out[i] = at >= 0 && u.leftGroupOwns[at];
    }
    return out;
  }

  /** The byte ranges that select exactly these row groups (contiguous ones merged). */
  static PartitionedFile[] ranges(Side s, List<Integer> groups) {
    List<Integer> gs = new ArrayList<>(new java.util.TreeSet<>(groups));
    boolean[] none = new boolean[gs.size()];
    return byteRanges(s, gs, none, none).files;
  }

  /**
   * Whether row group {@code b} of {@code f} comes right after {@code a} in one byte range:
   * skipped empty row groups between two chosen ones are harmless to include.
   */
  static boolean follows(ParquetLayout f, int a, int b) {
    if (b <= a) return false;
    for (int q = a + 1; q < b; q++) {
      if (f.groups[q].rows != 0) return false;
    }
    return true;
  }

  /** Byte ranges of files, and per range whether a cut unit's first and last key's NULL-bound rows there are its own. */
  static final class ByteRanges {
    final PartitionedFile[] files;
    final boolean[] owns;
    final boolean[] ownsLast;

    private ByteRanges(PartitionedFile[] files, boolean[] owns, boolean[] ownsLast) {
      this.files = files;
      this.owns = owns;
      this.ownsLast = ownsLast;
    }
  }

  /**
   * The files to read for row groups {@code groups} (in the order read): a byte range per run
   * of contiguous groups of one file that agree on {@code owns} and {@code ownsLast}, per group
   * whether a unit that keeps part of a key owns the key's NULL-bound rows there. A group none
   * of whose rows can have NULL bounds ({@link Side#neverNull}) agrees with any: the flags are
   * asked of NULL-bound rows alone.
   *
   * <p>Why not a file per row group: Spark's reader parses the whole footer for each file it
   * opens and sets up its column vectors anew, so a range over many small row groups paid that
   * per group (the footer alone was 17% of the task samples of 64 tasks over 32,768-row groups).
   * In sorted files a range's groups differ in ownership at its first group only (the one it
   * shares with the range before), so a range reads a file in one or two byte ranges, and in
   * one where the footers count no NULL bound.
   */
  static ByteRanges byteRanges(Side s, List<Integer> groups, boolean[] owns, boolean[] ownsLast) {
    List<PartitionedFile> files = new ArrayList<>();
    List<Boolean> o = new ArrayList<>();
    List<Boolean> ol = new ArrayList<>();
    int i = 0;
    while (i < groups.size()) {
      int[] fg = s.groups.get(groups.get(i));
      ParquetLayout f = s.files.get(fg[0]);
      long start = f.groups[fg[1]].start;
      long end = start + f.groups[fg[1]].length;
      int lastIdx = fg[1];
      // the run's flags: its first group's that can hold NULL-bound rows (null: none yet)
      Boolean runOwns = free(s, groups.get(i)) ? null : owns[i];
      boolean runOwnsLast = ownsLast[i];
      int j = i + 1;
      while (j < groups.size()) {
        boolean freeJ = free(s, groups.get(j));
        if (!freeJ && runOwns != null && (owns[j] != runOwns || ownsLast[j] != runOwnsLast)) break;
        int[] nx = s.groups.get(groups.get(j));
        if (nx[0] != fg[0] || !follows(f, lastIdx, nx[1])) break;
        if (!freeJ && runOwns == null) {
          runOwns = owns[j];
          runOwnsLast = ownsLast[j];
        }
        end = f.groups[nx[1]].start + f.groups[nx[1]].length;
        lastIdx = nx[1];
        j++;
      }
      files.add(file(f, start, end - start));
      o.add(runOwns != null && runOwns);
      ol.add(runOwns != null && runOwnsLast);
      i = j;
    }
    boolean[] ob = new boolean[files.size()];
    boolean[] olb = new boolean[files.size()];
    for (int k = 0; k < ob.length; k++) {
      ob[k] = o.get(k);
      olb[k] = ol.get(k);
    }
    return new ByteRanges(files.toArray(new PartitionedFile[0]), ob, olb);
  }

  static boolean free(Side s, int g) {
    return s.neverNull != null && s.neverNull[g];
  }

  static PartitionedFile file(ParquetLayout f, long start, long length) {
    return PartitionedFile.apply(InternalRow$.MODULE$.empty(),
        SparkPath$.MODULE$.fromPathString(f.path), start, length, new String[0],
        f.modificationTime, f.size, scala.collection.immutable.Map$.MODULE$.empty());
  }

  static Map<Object, Integer> ranks(Object[] keys) {
    Map<Object, Integer> m = new HashMap<>(keys.length * 2);
    for (int i = 0; i < keys.length; i++) m.put(keys[i], i);
    return m;
  }
}
