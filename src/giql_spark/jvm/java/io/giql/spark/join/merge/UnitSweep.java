package io.giql.spark.join.merge;

import java.util.ArrayList;

import io.giql.spark.compat.UserErrors;
import io.giql.spark.index.PerRow;

/**
 * The sweep of one unit: two streams in (rank, lo) order, one active list per side. Each call of
 * {@link #advance} reports at most one row to its {@link SweepOutput}.
 */
final class UnitSweep implements Sweep {
  static final boolean TRACE = Boolean.getBoolean("giql.merge.trace");

  /** What a first pass already produced (by ordinal, the rows it processed), for the pass over sorted copies. */
  record Prefix(Bits nL, Bits nR, Bits done, Bits doneUnmatched, String why) {}


  private final SweepOutput t;
  private final Lookahead ls;
  private final Lookahead rs;
  private final Prefix prefix;
  private final JoinKind kind;
  private final boolean count;
  private final PerRow perRow;
  private final boolean existence; // semi or anti: a left row is done at its first match
  private final ArrayList<SweepRow> actL = new ArrayList<>();
  private final ArrayList<SweepRow> actR = new ArrayList<>();
  private final ArrayList<SweepRow> retired = new ArrayList<>();
  private int retiredPos;
  private int group = Integer.MIN_VALUE;
  private SweepRow x;
  private boolean xLeft;
  private ArrayList<SweepRow> others;
  private int bi;
  private boolean finished;
  final Bits processedL;
  final Bits processedR;
  // left rows already reported final (semi, anti, padded) and those reported unmatched
  final Bits done;
  final Bits doneUnmatched;

  UnitSweep(SweepOutput t, JoinKind kind, boolean count, PerRow perRow, RowStream ls,
      RowStream rs, Prefix prefix) {
    this.t = t;
    this.ls = new Lookahead(ls);
    this.rs = new Lookahead(rs);
    this.prefix = prefix;
    this.kind = kind;
    this.count = count;
    this.perRow = perRow;
    this.existence = kind == JoinKind.SEMI || kind == JoinKind.ANTI;
    boolean track = prefix == null && (kind != JoinKind.INNER || perRow != null);
    this.processedL = prefix == null ? new Bits() : null;
    this.processedR = prefix == null ? new Bits() : null;
    this.done = track ? new Bits() : null;
    this.doneUnmatched = track ? new Bits() : null;
  }


  /** Reports a left-only row (semi, anti, padded); false if nothing is reported. */
  private boolean reportLeft(SweepRow l, boolean unmatched) {
    if (prefix != null && prefix.done() != null && prefix.done().get(l.ord)) return false;
    if (done != null) {
      done.set(l.ord);
      if (unmatched) doneUnmatched.set(l.ord);
    }
    if (count) {
      t.counted();
      return false;
    }
    t.left(l, kind == JoinKind.LEFT);
    return true;
  }

  /** A hull-overlapping pair: residual, then the join type's action. True if it emitted. */
  private boolean pair(SweepRow l, SweepRow r) {
    t.candidate();
    if (!t.residual(l, r)) return false;
    boolean old = prefix != null && prefix.nL().get(l.ord) && prefix.nR().get(r.ord);
    if (!old && prefix != null && prefix.doneUnmatched() != null
        && prefix.doneUnmatched().get(l.ord)) {
      throw UserErrors.raised(unsortedMessage(prefix.why()));
    }
    boolean first = !l.matched;
    l.matched = true;
    if (perRow != null) {
      // counted now, reported when the row retires; a row the first pass already reported
      // has all its pairs among the first pass's rows, so a new pair means its count was wrong
      if (prefix != null && prefix.done() != null && prefix.done().get(l.ord)) {
        if (!old) throw UserErrors.raised(unsortedMessage(prefix.why()));
        return false;
      }
      l.n++;
      t.sum(l, r);
      return false;
    }
    switch (kind) {
      case INNER:
      case LEFT:
        if (old) return false;
        if (count) {
          t.counted();
          return false;
        }
        t.pair(l, r);
        return true;
      case SEMI:
        return first && reportLeft(l, false);
      default:
        return false;
    }
  }

  private String unsortedMessage(String why) {
    return "giql merge interval join: a left row already returned has a match after all, "
        + "because an input is not sorted by (key, start) (" + why + "); the result would "
        + "be wrong. Sort the input files by (key, start), or turn the merge off (Spark conf "
        + "spark.giql.merge.enabled=false, or a giql-spark strategy such as jvm_broadcast).";
  }

  /** A left row leaves the sweep: no later right row can match it. */
  private boolean retire(SweepRow l) {
    if (perRow != null) {
      if (prefix != null && prefix.done() != null && prefix.done().get(l.ord)) return false;
      if (done != null) done.set(l.ord);
      long v = perRow.value(l.n, kind == JoinKind.LEFT);
      if (v < 0) return false;
      if (l.n == 0) t.sum(l, null); // the padded join row
      t.countedRow(l, v);
      return true;
    }
    if (kind == JoinKind.LEFT || kind == JoinKind.ANTI) {
      if (!l.matched) return reportLeft(l, true);
    }
    return false;
  }

  private void purgeRight(long lo) {
    int n = actR.size();
    int i = 0;
    while (i < n) {
      if (actR.get(i).hi < lo) {
        actR.set(i, actR.get(n - 1));
        actR.remove(--n);
      } else {
        i++;
      }
    }
  }

  private void purgeLeft(long lo) {
    int n = actL.size();
    int i = 0;
    while (i < n) {
      SweepRow e = actL.get(i);
      if (e.hi < lo || existence && e.matched) {
        if (e.hi < lo) retired.add(e);
        actL.set(i, actL.get(n - 1));
        actL.remove(--n);
      } else {
        i++;
      }
    }
  }

  /**
   * Whether a right row can still meet a left row not yet read: the left stream comes in (rank,
   * lo) order, so no later left row has a lower lo than its head. Why: a task reads the right
   * side's row groups whole, rows before its range and past its last left row too; a 64-task
   * 10M count put 18.9M right rows in its active lists (5.5M past the last left row of their
   * key, up to 254K in one list) for 10M right rows in the files.
   */
  private boolean reachable(SweepRow r) {
    SweepRow l = ls.peek();
    return l != null && (l.nullBound || l.rank == r.rank && l.lo <= r.hi);
  }

  private void retireAllLeft() {
    retired.addAll(actL);
    actL.clear();
    actR.clear();
  }

  /** Takes the next row off the heads and prepares its work; false at the end. */
  private boolean step() {
    retired.clear();
    retiredPos = 0;
    SweepRow l = ls.peek();
    SweepRow r = rs.peek();
    if (l == null && r == null) {
      if (finished) return false;
      finished = true;
      retireAllLeft();
      return true;
    }
    // a left row that can match nothing goes first: its key and lo must not order the merge
    boolean takeLeft = r == null || l != null && (l.nullBound || l.rank < r.rank
        || l.rank == r.rank && l.lo <= r.lo);
    final SweepRow e = takeLeft ? l : r;
    if (TRACE) {
      System.err.println("step " + (takeLeft ? "L" : "R") + " rank=" + e.rank + " lo=" + e.lo
          + " hi=" + e.hi + " ord=" + e.ord + " nb=" + e.nullBound + " actL=" + actL.size()
          + " actR=" + actR.size());
    }
    if (takeLeft) {
      ls.take();
      if (processedL != null) processedL.set(e.ord);
    } else {
      rs.take();
      if (processedR != null) processedR.set(e.ord);
    }
    if (e.nullBound) {
      // a left row that can match nothing (the right side keeps none)
      retired.add(e);
      return true;
    }
    if (e.rank != group) {
      retireAllLeft();
      group = e.rank;
    }
    x = e;
    xLeft = takeLeft;
    if (takeLeft) {
      purgeRight(e.lo);
      others = actR;
    } else {
      purgeLeft(e.lo);
      others = actL;
    }
    bi = 0;
    return true;
  }

  @Override
  public Prefix prefix(String why) {
    return new Prefix(processedL, processedR, done, doneUnmatched, why);
  }

  @Override
  public boolean advance() {
    while (true) {
      while (retiredPos < retired.size()) {
        if (retire(retired.get(retiredPos++))) return true;
      }
      if (x != null) {
        if (count && (kind == JoinKind.INNER || kind == JoinKind.LEFT) && prefix == null
            && !xLeft) {
          // the hot loop of a count: no row is built
          for (int n = others.size(); bi < n; bi++) {
            SweepRow l = others.get(bi);
            t.candidate();
            if (t.residual(l, x)) {
              l.matched = true;
              t.counted();
            }
          }
        } else if (count && kind == JoinKind.INNER && prefix == null) {
          for (int n = others.size(); bi < n; bi++) {
            t.candidate();
            if (t.residual(x, others.get(bi))) t.counted();
          }
          x.matched = true;
        }
        while (bi < others.size()) {
          SweepRow o = others.get(bi++);
          boolean emitted = xLeft ? pair(x, o) : pair(o, x);
          if (xLeft && existence && x.matched) bi = others.size();
          if (emitted) return true;
        }
        SweepRow e = x;
        x = null;
        if (xLeft) {
          if (!(existence && e.matched)) actL.add(e);
        } else if (reachable(e)) {
          actR.add(e);
        }
      }
      if (!step()) return false;
    }
  }
}
