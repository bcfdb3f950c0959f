package io.giql.spark.join.merge;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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

  /**
   * The tasks. {@code leftKeysOnly}: keys the right side lacks still produce output (left outer
   * and anti joins), as do the left side's NULL keys. {@code keyUnits}: each key is a unit of its
   * own (a k-nearest join indexes one unit of the right side at a time, so a unit must not hold
   * more than a key's rows), or with {@code splitKeys} a piece of one that outweighs two tasks'
   * shares ({@link Units#leftPieces}). {@code pairWeight}: the tasks carry about equal work, a pair
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
            units.add(Units.unit(l, r, unit, keyWork));
            unit = new ArrayList<>();
            lastR = -1;
          }
        }
        unit.add(item);
        if (rp >= 0) lastR = rp;
      }
      if (!unit.isEmpty()) units.add(Units.unit(l, r, unit, keyWork));
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
      Unit nulls = new Unit(new Object[0], Units.ranges(l, l.nullGroups), new PartitionedFile[0], true,
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
   * tasks' shares ({@link Units#leftPieces}), in runs of about equal weight.
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
          ? Units.leftPieces(l, r, k, (int) Math.ceil(w / share)) : null;
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
    return Units.contiguous(items, itemWeight, sum, n);
  }

  /**
   * The fewest left rows a k-nearest piece keeps, as a share of its right rows
   * ({@link Units#leftPieces}).
   */
  static final double PIECE_LEFT_PER_RIGHT = 0.25;

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
