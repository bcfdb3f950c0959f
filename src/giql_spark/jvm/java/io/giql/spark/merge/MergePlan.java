package io.giql.spark.merge;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.paths.SparkPath$;
import org.apache.spark.sql.catalyst.InternalRow$;
import org.apache.spark.sql.execution.datasources.PartitionedFile;

/**
 * Which row groups each task of a merge interval join reads. Built on the driver from the two
 * sides' {@link ParquetLayout}s.
 *
 * <p>Each side's files (in path order) are a sequence of row groups whose keys must come in runs:
 * a key continues into the next row group only as that row group's first key, after being the
 * last key of the one before (a file sorted, or only grouped, by key). The keys that can produce
 * output (both sides' for inner and semi joins, the left side's for left outer and anti joins) in
 * the left side's order are cut into contiguous runs of about equal rows, one per task, a key
 * cut into ranges of its positions where a run ends inside it ({@link Ranges}). Within a
 * task, consecutive keys whose order the right side shares form a unit: one pass over each
 * side's row groups holding the unit's keys (a row group holding keys of two units or tasks is
 * read by both, each keeping its own keys). Rows with a NULL key, which only a left outer or anti
 * join outputs, are read by one more unit.
 */
public final class MergePlan implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One pass over both sides. */
  public static final class Unit implements Serializable {
    private static final long serialVersionUID = 1L;
    /** The keys, in the order both sides hold them; their index is their rank. */
    final Object[] keys;
    final PartitionedFile[] left;
    final PartitionedFile[] right;
    /** The unit of the left side's rows with a NULL key (keys is empty). */
    final boolean nullKeys;
    final long leftRows;
    final long rightRows;
    /**
     * The unit's left rows from a position of its first key to a position of its last (one key
     * or a run of keys, see {@link Range}); null for whole keys.
     */
    final Range range;
    /**
     * A range's row groups (indexes into the side's groups), while the plan is built: a task's
     * ranges and whole keys become one unit reading them all ({@code unit}).
     */
    transient List<Integer> leftGroupIdx;
    transient List<Integer> rightGroupIdx;
    /** Per group of {@link #leftGroupIdx}: whether the range's key's NULL-bound rows there are its own. */
    transient boolean[] leftGroupOwns;
    /** Whole keys' estimated work ({@link Work}) while the plan is built; NaN: their rows. */
    transient double work = Double.NaN;
    /** The estimated rows of both sides the unit keeps (a range's own, not all it reads). */
    transient double kept = Double.NaN;
    /**
     * A k-nearest piece reading only the right rows within reach of its left rows
     * ({@link #leftPieces}): the rest of its key's right row groups, read only when a left row's
     * nearest may lie among them; null when {@link #right} holds all of them. Every right row
     * not in {@link #right} has hi at most {@link #restHi} or lo at least {@link #restLo}.
     */
    PartitionedFile[] rightRest;
    long restHi = Long.MIN_VALUE;
    long restLo = Long.MAX_VALUE;

    Unit(Object[] keys, PartitionedFile[] left, PartitionedFile[] right, boolean nullKeys,
        long leftRows, long rightRows) {
      this(keys, left, right, nullKeys, leftRows, rightRows, null);
    }

    Unit(Object[] keys, PartitionedFile[] left, PartitionedFile[] right, boolean nullKeys,
        long leftRows, long rightRows, Range range) {
      this.keys = keys;
      this.left = left;
      this.right = right;
      this.nullKeys = nullKeys;
      this.leftRows = leftRows;
      this.rightRows = rightRows;
      this.range = range;
    }
  }

  /**
   * Which left rows a unit that starts or ends inside a key keeps ({@link Unit#range}): those of
   * its first key (rank 0) whose lo is at least {@link #from}, of its last key (rank
   * {@link #last}) whose lo is below {@link #to}, and all of the keys between; of the rows that
   * can match nothing (NULL bounds), the first key's in files where {@link #ownsNull}, the last
   * key's where {@link #ownsNullLast}, and all of the keys between. A range of one key has
   * {@code last} 0: its rows with lo in [from, to).
   */
  public static final class Range implements Serializable {
    private static final long serialVersionUID = 1L;
    final long from;
    final long to;
    final int last;
    /** Per file of the unit's left side. */
    final boolean[] ownsNull;
    final boolean[] ownsNullLast;
    /** The rows of both sides the unit keeps, estimated (for cutting the tasks). */
    final double weight;

    Range(long from, long to, boolean[] ownsNull, double weight) {
      this(from, to, 0, ownsNull, ownsNull, weight);
    }

    Range(long from, long to, int last, boolean[] ownsNull, boolean[] ownsNullLast,
        double weight) {
      this.from = from;
      this.to = to;
      this.last = last;
      this.ownsNull = ownsNull;
      this.ownsNullLast = ownsNullLast;
      this.weight = weight;
    }

    /** Whether the unit keeps a left row of key rank {@code rank} read from file {@code file}. */
    boolean keeps(int rank, long lo, boolean nullBound, int file) {
      if (nullBound) return rank == 0 ? ownsNull[file] : rank != last || ownsNullLast[file];
      return (rank > 0 || lo >= from) && (rank < last || lo < to);
    }

    boolean startsKey() {
      return from == Long.MIN_VALUE;
    }

    boolean endsKey() {
      return to == Long.MAX_VALUE;
    }
  }

  public final Unit[][] tasks;
  final long leftRows;
  final long rightRows;
  final int leftGroups;
  final int rightGroups;
  /** A pair's weight of a row in the task cut; 0: the tasks were cut by rows alone. */
  final double pairWeight;
  /** The most left and the most right row groups one task reads; null: not known. */
  int[] mostGroups;
  /** The largest task's share of the cost with the row groups decoded ({@link #decoding}). */
  double largestCostShare = Double.NaN;

  private MergePlan(Unit[][] tasks, long leftRows, long rightRows, int leftGroups,
      int rightGroups, double pairWeight) {
    this.tasks = tasks;
    this.pairWeight = pairWeight;
    this.leftRows = leftRows;
    this.rightRows = rightRows;
    this.leftGroups = leftGroups;
    this.rightGroups = rightGroups;
  }

  int numUnits() {
    int n = 0;
    for (Unit[] t : tasks) n += t.length;
    return n;
  }

  int numRanges() {
    int n = 0;
    for (Unit[] t : tasks) {
      for (Unit u : t) {
        if (u.range != null) n++;
      }
    }
    return n;
  }

  /**
   * The byte ranges of files the tasks read on one side: each is a reader Spark opens, which
   * parses the file's footer.
   */
  int reads(boolean left) {
    int n = 0;
    for (Unit[] t : tasks) {
      for (Unit u : t) n += left ? u.left.length : u.right.length;
    }
    return n;
  }

  /** The k-nearest pieces that read only the right rows within reach of their left rows. */
  int withinReach() {
    int n = 0;
    for (Unit[] t : tasks) {
      for (Unit u : t) n += u.rightRest != null ? 1 : 0;
    }
    return n;
  }

  public String describe() {
    int ranges = numRanges();
    int near = withinReach();
    return tasks.length + " tasks, " + numUnits() + " units"
        + (ranges == 0 ? "" : " (" + ranges + " of them ranges of a key)")
        + (near == 0 ? "" : " (" + near + " of them reading the right rows within reach)")
        + ", row groups "
        + leftGroups + " + " + rightGroups + ", rows " + leftRows + " + " + rightRows
        + ", byte ranges read " + reads(true) + " + " + reads(false)
        + (mostGroups == null ? "" : String.format(java.util.Locale.ROOT,
            ", at most %d + %d row groups read by one task, the largest task %.1f%% of the cost"
                + " with the row groups it decodes", mostGroups[0], mostGroups[1],
            100 * largestCostShare))
        + String.format(java.util.Locale.ROOT, ", the largest task %.1f%% of the work",
            100 * largestShare(true))
        + (pairWeight > 0 ? String.format(java.util.Locale.ROOT,
            " (rows, and pairs at %s of a row) and %.1f%% of the rows",
            new java.math.BigDecimal(pairWeight).round(new java.math.MathContext(3))
                .stripTrailingZeros().toPlainString(), 100 * largestShare(false)) : " (rows)");
  }

  /**
   * The estimated work a unit holds (a range's own rows, not all it reads, with their pairs
   * where the plan weighs them: {@link Work}).
   */
  static double weight(Unit u) {
    if (u.range != null) return u.range.weight;
    return Double.isNaN(u.work) ? u.leftRows + u.rightRows : u.work;
  }

  /**
   * The largest task's share of all tasks' estimated work, or of their rows (1 for one task or
   * none).
   */
  double largestShare(boolean work) {
    double total = 0;
    double most = 0;
    for (Unit[] t : tasks) {
      double w = 0;
      for (Unit u : t) {
        w += work ? weight(u) : Double.isNaN(u.kept) ? u.leftRows + u.rightRows : u.kept;
      }
      total += w;
      most = Math.max(most, w);
    }
    return total > 0 ? most / total : 1;
  }

  /** A side's row groups in reading order, and where each key's rows are. */
  static final class Side {
    final List<ParquetLayout> files = new ArrayList<>();
    final List<int[]> groups = new ArrayList<>(); // {file, group}
    final LinkedHashMap<Object, KeyRuns> keys = new LinkedHashMap<>();
    long rows;
    /** Indexes (into groups) of the row groups that may hold NULL keys. */
    final List<Integer> nullGroups = new ArrayList<>();
    /** Per row group, {@link Bounds#group}; null when not known (no key is cut). */
    List<long[]> bounds;
    /** The mean hi - lo of the plan's sample of the side's rows; NaN when not sampled. */
    double width = Double.NaN;

    /**
     * A key's own bounds in a row group it shares with other keys (whose footer bounds cover
     * every key's rows), read from the rows; null when it cannot be read.
     */
    java.util.function.BiFunction<Integer, Object, long[]> shared;

    /** Per row group, whether no row there can have a NULL lo or hi ({@link Bounds#neverNull}). */
    boolean[] neverNull;

    void bound(Bounds b) {
      bounds = new ArrayList<>();
      neverNull = new boolean[groups.size()];
      for (int g = 0; g < groups.size(); g++) {
        bounds.add(b.group(group(g)));
        neverNull[g] = b.neverNull(group(g));
      }
    }

    /** {@link Bounds#group} of key {@code k}'s rows in row group {@code g}, or null. */
    long[] bounds(int g, Object k) {
      long[] b = bounds.get(g);
      ParquetLayout.RowGroup rg = group(g);
      if (b == null || Bounds.empty(b) || rg.keys == null || rg.keys.length <= 1) return b;
      return shared == null ? b : shared.apply(g, k);
    }

    ParquetLayout.RowGroup group(int g) {
      int[] fg = groups.get(g);
      return files.get(fg[0]).groups[fg[1]];
    }
  }

  static final class KeyRuns {
    final int position;      // order of first appearance on its side
    final List<Integer> groups = new ArrayList<>();
    double rows;
    long posMaxSeen = Long.MIN_VALUE; // last single-key row group's max position

    KeyRuns(int position) {
      this.position = position;
    }
  }

  /**
   * Builds a side from its files' layouts; returns null and sets {@code why[0]} when the footers
   * do not show the keys in runs.
   */
  static Side side(List<ParquetLayout> layouts, String name, String[] why) {
    Side s = new Side();
    List<ParquetLayout> sorted = new ArrayList<>(layouts);
    sorted.sort((a, b) -> a.path.compareTo(b.path));
    int prev = -1;
    Object prevLast = null;
    for (ParquetLayout l : sorted) {
      if (l.problem != null) {
        why[0] = name + ": " + l.problem;
        return null;
      }
      int f = s.files.size();
      s.files.add(l);
      for (int i = 0; i < l.groups.length; i++) {
        ParquetLayout.RowGroup rg = l.groups[i];
        if (rg.rows == 0) continue;
        int g = s.groups.size();
        s.groups.add(new int[] {f, i});
        s.rows += rg.rows;
        if (rg.nullKeys != 0) s.nullGroups.add(g);
        if (rg.keys == null) {
          why[0] = name + ": the footer of " + l.path + " does not tell the keys of row group " + i
              + " (no dictionary and min != max)";
          return null;
        }
        if (rg.keys.length == 0) continue;
        for (int j = 0; j < rg.keys.length; j++) {
          Object k = rg.keys[j];
          KeyRuns kr = s.keys.get(k);
          if (kr == null) {
            kr = new KeyRuns(s.keys.size());
            s.keys.put(k, kr);
          } else if (!(j == 0 && prev >= 0 && k.equals(prevLast)
              && kr.groups.get(kr.groups.size() - 1) == prev)) {
            why[0] = name + ": key " + k + " is not in one run of row groups (" + l.path
                + ", row group " + i + "): the rows are not sorted by key";
            return null;
          }
          if (rg.keys.length == 1 && rg.hasPos && rg.nullKeys == 0) {
            if (rg.posMin < kr.posMaxSeen) {
              why[0] = name + ": positions of key " + k + " go back at row group " + i + " of "
                  + l.path + ": the rows are not sorted by position";
              return null;
            }
            kr.posMaxSeen = rg.posMax;
          } else {
            kr.posMaxSeen = Long.MIN_VALUE;
          }
          kr.groups.add(g);
          kr.rows += (double) rg.nonNullRows() / rg.keys.length;
        }
        prev = g;
        prevLast = rg.keys[rg.keys.length - 1];
      }
    }
    return s;
  }

  /**
   * The tasks. {@code leftKeysOnly}: keys the right side lacks still produce output (left outer
   * and anti joins), as do the left side's NULL keys. {@code keyUnits}: each key is a unit of its
   * own (a k-nearest join indexes one unit of the right side at a time, so a unit must not hold
   * more than a key's rows), or with {@code splitKeys} a piece of one that outweighs two tasks'
   * shares ({@link #leftPieces}). {@code pairWeight}: the tasks carry about equal work, a pair
   * weighing this much of a row ({@link Work}); 0 cuts them by rows alone. {@code decoded}: a
   * row of a row group a task reads weighs this much of a kept row in the cut ({@link Balance}).
   */
  static MergePlan build(Side l, Side r, boolean leftKeysOnly, int numTasks, boolean keyUnits,
      boolean splitKeys, double pairWeight, double decoded) {
    double c = keyUnits ? 0 : Work.perDensity(l, r, pairWeight);
    List<Object> keys = new ArrayList<>();
    List<Double> weight = new ArrayList<>();
    Map<Object, Double> keyWork = new java.util.HashMap<>();
    double total = 0;
    for (Map.Entry<Object, KeyRuns> e : l.keys.entrySet()) {
      KeyRuns rk = r.keys.get(e.getKey());
      if (rk == null && !leftKeysOnly) continue;
      double w = Work.key(l, r, e.getValue(), rk, c);
      keyWork.put(e.getKey(), w);
      keys.add(e.getKey());
      weight.add(w);
      total += w;
    }
    List<List<Object>> ranges = keyUnits ? keyTasks(l, r, keys, weight, total, numTasks, splitKeys)
        : balancedTasks(l, r, keys, weight, c, numTasks, decoded);
    List<List<Unit>> tasks = new ArrayList<>();
    for (List<Object> range : ranges) {
      // consecutive items are one pass while the right side holds their keys in the same order
      // and each but the last ends its key, each but the first starts its key: a task's end of
      // one key, the keys after it and the start of the next read their shared row groups once
      List<Unit> units = new ArrayList<>();
      List<Object> unit = new ArrayList<>();
      int lastR = -1;
      for (Object item : range) {
        Range cut = item instanceof Unit ? ((Unit) item).range : null;
        Object k = item instanceof Unit ? ((Unit) item).keys[0] : item;
        KeyRuns rk = r.keys.get(k);
        int rp = rk == null ? -1 : rk.position;
        if (!unit.isEmpty()) {
          Object prev = unit.get(unit.size() - 1);
          boolean prevEnds = !(prev instanceof Unit) || ((Unit) prev).range == null
              || ((Unit) prev).range.endsKey();
          if (keyUnits || rp >= 0 && rp < lastR || !prevEnds || cut != null && !cut.startsKey()) {
            units.add(unit(l, r, unit, keyWork));
            unit = new ArrayList<>();
            lastR = -1;
          }
        }
        unit.add(item);
        if (rp >= 0) lastR = rp;
      }
      if (!unit.isEmpty()) units.add(unit(l, r, unit, keyWork));
      tasks.add(units);
    }
    if (leftKeysOnly && !l.nullGroups.isEmpty()) {
      // the NULL keys of the left side go to the task with the fewest rows
      int best = 0;
      long bestRows = Long.MAX_VALUE;
      for (int t = 0; t < tasks.size(); t++) {
        long rows = 0;
        for (Unit u : tasks.get(t)) rows += u.leftRows + u.rightRows;
        if (rows < bestRows) {
          bestRows = rows;
          best = t;
        }
      }
      long rows = 0;
      for (int g : l.nullGroups) rows += Math.max(0, l.group(g).nullKeys);
      Unit nulls = new Unit(new Object[0], ranges(l, l.nullGroups), new PartitionedFile[0], true,
          rows, 0);
      nulls.leftGroupIdx = l.nullGroups;
      nulls.rightGroupIdx = List.of();
      tasks.get(best).add(nulls);
    }
    Unit[][] out = new Unit[tasks.size()][];
    for (int t = 0; t < out.length; t++) out[t] = tasks.get(t).toArray(new Unit[0]);
    MergePlan plan = new MergePlan(out, l.rows, r.rows, l.groups.size(), r.groups.size(),
        c > 0 ? pairWeight : 0);
    if (!keyUnits) plan.decoding(l, r, tasks);
    return plan;
  }

  /**
   * What the tasks decode: the most left and right row groups one task reads, and the largest
   * task's share of the tasks' cost with the row groups they decode ({@link Balance#DECODED}
   * per row, whatever weight cut them); not known where a unit's row groups are not.
   */
  private void decoding(Side l, Side r, List<List<Unit>> tasks) {
    int[] most = new int[2];
    double total = 0;
    double largest = 0;
    for (List<Unit> t : tasks) {
      java.util.Set<Integer> left = new java.util.HashSet<>();
      java.util.Set<Integer> right = new java.util.HashSet<>();
      double cost = 0;
      for (Unit u : t) {
        if (u.leftGroupIdx == null || u.rightGroupIdx == null) return;
        left.addAll(u.leftGroupIdx);
        right.addAll(u.rightGroupIdx);
        cost += weight(u);
      }
      for (int g : left) cost += Balance.DECODED * l.group(g).rows;
      for (int g : right) cost += Balance.DECODED * r.group(g).rows;
      most[0] = Math.max(most[0], left.size());
      most[1] = Math.max(most[1], right.size());
      total += cost;
      largest = Math.max(largest, cost);
    }
    mostGroups = most;
    largestCostShare = total > 0 ? largest / total : 1;
  }

  /**
   * The tasks as runs of the genome's order (key by key, position by position) whose boundaries
   * {@link Balance} places: where one falls inside a key, the key is cut into ranges of its
   * positions there, so a task holds the end of one key, whole keys and the start of the next,
   * and no task holds a whole busy chromosome.
   */
  private static List<List<Object>> balancedTasks(Side l, Side r, List<Object> keys,
      List<Double> weight, double c, int numTasks, double decoded) {
    List<Balance.Cut> cuts = new Balance(l, r, keys, weight, c, decoded)
        .boundaries(Math.max(1, numTasks));
    List<List<Object>> tasks = new ArrayList<>();
    tasks.add(new ArrayList<>());
    int next = 0; // the first boundary not passed
    for (int i = 0; i < keys.size(); i++) {
      while (next < cuts.size() && cuts.get(next).key == i && cuts.get(next).atKeyStart()) {
        tasks.add(new ArrayList<>());
        next++;
      }
      int inKey = next;
      while (inKey < cuts.size() && cuts.get(inKey).key == i) inKey++;
      Object k = keys.get(i);
      List<Unit> pieces = null;
      if (inKey > next) {
        long[] at = new long[inKey - next];
        for (int j = 0; j < at.length; j++) at[j] = cuts.get(next + j).pos;
        pieces = Ranges.cutAt(l, r, k, at, c, weight.get(i));
      }
      if (pieces == null) {
        // not cut (or it could not be): the key's boundaries fall at its end
        tasks.get(tasks.size() - 1).add(k);
        for (; next < inKey; next++) tasks.add(new ArrayList<>());
        continue;
      }
      for (int j = 0; j < pieces.size(); j++) {
        if (j > 0) tasks.add(new ArrayList<>());
        if (pieces.get(j) != null) tasks.get(tasks.size() - 1).add(pieces.get(j));
      }
      next = inKey;
    }
    tasks.removeIf(List::isEmpty);
    if (tasks.isEmpty()) tasks.add(new ArrayList<>());
    return tasks;
  }

  /**
   * A k-nearest join's tasks: each key a unit of its own, or pieces of one that outweighs two
   * tasks' shares ({@link #leftPieces}), in runs of about equal weight.
   */
  private static List<List<Object>> keyTasks(Side l, Side r, List<Object> keys,
      List<Double> weight, double total, int numTasks, boolean splitKeys) {
    int tasksWanted = Math.max(1, numTasks);
    double share = total / tasksWanted;
    List<Object> items = new ArrayList<>();
    List<Double> itemWeight = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      Object k = keys.get(i);
      double w = weight.get(i);
      // only a key heavier than two shares: pieces add work (the right rows read again), and a
      // lighter key is no heavier than a task of runs of whole keys may be anyway
      List<Unit> pieces = splitKeys && tasksWanted > 1 && share > 0 && w > 2 * share
          ? leftPieces(l, r, k, (int) Math.ceil(w / share)) : null;
      if (pieces == null) {
        items.add(k);
        itemWeight.add(w);
      } else {
        for (Unit u : pieces) {
          items.add(u);
          itemWeight.add(weight(u));
        }
      }
    }
    double sum = 0;
    for (double w : itemWeight) sum += w;
    int n = Math.max(1, Math.min(numTasks, items.size()));
    return contiguous(items, itemWeight, sum, n);
  }

  /**
   * The fewest left rows a k-nearest piece keeps, as a share of its right rows
   * ({@link #leftPieces}).
   */
  static final double PIECE_LEFT_PER_RIGHT = 0.25;

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
   * the right rows it reads ({@link #PIECE_LEFT_PER_RIGHT}): past that a piece is mostly the
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
      if (n == 2 || reads <= 0 || n <= Math.ceil(lk.rows / (PIECE_LEFT_PER_RIGHT * reads / n))) {
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
  private static List<Unit> pieces(Side l, Side r, Object k, int n, boolean reach) {
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
  private static Unit withinReach(Side l, Side r, Object k, List<Integer> mine, double got) {
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
  private static long spill(List<long[]> side, int extra, List<Integer> in, List<Integer> rest,
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
  private static double keyRows(Side s, int g) {
    ParquetLayout.RowGroup rg = s.group(g);
    return (double) rg.nonNullRows() / Math.max(1, rg.keys == null ? 1 : rg.keys.length);
  }

  /** The items cut into n runs of about equal weight, at the boundary nearest each quantile. */
  private static List<List<Object>> contiguous(List<Object> keys, List<Double> weight,
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
  private static Unit unit(Side l, Side r, List<Object> items, Map<Object, Double> keyWork) {
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
  private static boolean[] owns(Object item, List<Integer> groups) {
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
  private static boolean follows(ParquetLayout f, int a, int b) {
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

  private static boolean free(Side s, int g) {
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

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(describe());
    for (Unit[] t : tasks) {
      sb.append("\n task:");
      for (Unit u : t) {
        sb.append(" [").append(u.nullKeys ? "NULL" : Arrays.toString(u.keys));
        if (u.range != null) sb.append(" from ").append(u.range.from).append(" to ").append(u.range.to);
        sb.append(" L")
            .append(u.left.length).append(" R").append(u.right.length).append(']');
      }
    }
    return sb.toString();
  }
}
