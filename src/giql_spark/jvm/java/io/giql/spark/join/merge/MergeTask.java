package io.giql.spark.join.merge;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.LongType$;

import io.giql.spark.columns.FastResidual;
import io.giql.spark.columns.Residual;
import io.giql.spark.columns.VectorRow;
import io.giql.spark.compat.Scala;
import io.giql.spark.exec.JoinIterator;
import io.giql.spark.index.PerRow;

/** The rows (or the one count row) of one task: its units one after the other. */
final class MergeTask extends JoinIterator implements SweepOutput {
  private final MergeJob job;
  private final Unit[] units;
  private final Residual residual;
  private final FastResidual fast;
  private final UnsafeProjection result;
  private final UnsafeProjection leftOnly;
  private final InternalRow nullRight;
  private final JoinedRow joined = new JoinedRow();
  private final PerRow.Acc acc;
  private final VectorRow direct;
  private boolean directCovered;  // the direct output's slot is the covered points, not the count
  private int u = -1;
  private Sweep sweep;
  private FileStream curL;
  private FileStream curR;
  private long count;
  private boolean countEmitted;
  private boolean flushed;
  private long failovers;

  MergeTask(MergeJob job, int task) {
    super(job.numOut, job.numCand);
    this.job = job;
    this.units = job.plan.tasks[task];
    this.residual = Residual.of(job.residual, job.joinedAttrs, job.leftAttrs, job.rightAttrs,
        task);
    this.fast = residual == null ? null : residual.fast();
    this.acc = job.perRow == null ? null : job.perRow.acc(job.joinedAttrs);
    if (job.perRow != null) {
      this.result = UnsafeProjection.create(job.output,
          Scala.concat(job.leftAttrs, Scala.seq(job.perRow.outputs())));
    } else {
      this.result = job.count || job.output == null ? null
          : UnsafeProjection.create(job.output, job.joinedAttrs);
    }
    this.leftOnly = UnsafeProjection.create(job.left.sideTypes);
    this.direct = directOutput();
    this.nullRight = new GenericInternalRow(job.right.sideTypes.length);
  }

  @Override
  public void candidate() {
    candRows++;
  }

  @Override
  public void candidates(long n) {
    candRows += n;
  }

  @Override
  public boolean residual(SweepRow l, SweepRow r) {
    if (residual == null) return true;
    if (l.row == null || r.row == null) {
      // lean streams exist only with an exact fast residual
      return fast.evalValues(l.vals, l.nulls, r.vals, r.nulls) == FastResidual.TRUE;
    }
    return residual.holds(l.row, r.row, joined);
  }

  @Override
  public void pair(SweepRow l, SweepRow r) {
    out = result.apply(joined.apply(l.row, r.row));
  }

  @Override
  public void left(SweepRow l, boolean padded) {
    out = padded ? result.apply(joined.apply(l.row, nullRight)) : l.row;
  }

  @Override
  public void sum(SweepRow l, SweepRow r) {
    if (l.sums == null) l.sums = acc.fresh();
    if (l.sums == null) return;
    InternalRow j = acc.readsRows() ? joined.apply(l.row, r == null ? nullRight : r.row) : null;
    if (r == null) acc.add(l.sums, j, l.lo, l.hi, 1, 0);
    else acc.add(l.sums, j, l.lo, l.hi, r.lo, r.hi);
  }

  /** A per-row count's row: the left row's projection, its count and its sums. */
  @Override
  public void countedRow(SweepRow l, long n) {
    out = result.apply(joined.apply(l.row, acc.row(n, l.sums)));
  }

  @Override
  public void countedRow(SweepRow l, long n, long covered) {
    // no side row: the row is the one the left stream returned last, written off its vectors
    if (l.row == null) out = curL.output(directCovered ? covered : n);
    else out = result.apply(joined.apply(l.row, acc.row(n, covered)));
  }

  /**
   * A plain count's output written straight off the left scan's vectors with the count or the
   * covered points, when each output column is a left scan column or one of those two
   * ({@code coalesce(x, c)} is {@code x}: a plain count reports no NULL); else null. Sets
   * {@link #directCovered}.
   */
  private VectorRow directOutput() {
    if (!plainCount()) return null;
    List<Expression> out = Scala.list(job.output);
    List<Attribute> left = Scala.list(job.leftAttrs);
    List<Expression> project = Scala.list(job.left.project);
    List<Expression> cols = new ArrayList<>();
    int slot = -1;
    for (int i = 0; i < out.size(); i++) {
      Expression e = out.get(i);
      while (e instanceof Alias) e = ((Alias) e).child();
      if (e instanceof Coalesce && e.children().size() == 2
          && e.children().apply(1) instanceof Literal) {
        Expression c = e.children().apply(0);
        if (isPerRow(c, job.perRow.count) || isPerRow(c, job.perRow.covered)) e = c;
      }
      if (isPerRow(e, job.perRow.count) || isPerRow(e, job.perRow.covered)) {
        if (slot >= 0) return null;
        slot = i;
        directCovered = isPerRow(e, job.perRow.covered);
        continue;
      }
      int k = -1;
      for (int j = 0; j < left.size() && e instanceof Attribute; j++) {
        if (left.get(j).exprId().equals(((Attribute) e).exprId())) k = j;
      }
      if (k < 0) return null;
      cols.add(project.get(k));
    }
    return slot < 0 ? null : VectorRow.of(Scala.seq(cols), slot);
  }

  private static boolean isPerRow(Expression e, Attribute a) {
    return a != null && e instanceof Attribute && ((Attribute) e).exprId().equals(a.exprId());
  }

  private boolean nextUnit() {
    if (sweep != null) finishUnit();
    while (++u < units.length) {
      Unit unit = units[u];
      Map<Object, Integer> ranks = Units.ranks(unit.keys);
      boolean keepNull = job.kind == JoinKind.LEFT || job.kind == JoinKind.ANTI;
      boolean exact = residual == null || fast != null && fast.exact();
      boolean lean = job.count && job.perRow == null && exact;
      // a per-row count with no sums reports left rows; of the right it needs only bounds
      boolean leanRight = lean || job.perRow != null && job.perRow.sums.isEmpty() && exact;
      curL = new FileStream(job.left, unit.left, ranks, unit.nullKeys, keepNull, true,
          job.slack, lean ? leanCols(0) : null, lean ? leanInt(0) : null);
      boolean plain = plainCount();
      if (plain) {
        curL.inReadingOrder();
        if (direct != null) curL.withOutput(direct);
      } else if (leanRight && !lean) {
        curL.withResidualValues(leanCols(0), leanInt(0));
      }
      if (unit.range != null) curL.withRange(unit.range);
      curR = new FileStream(job.right, unit.nullKeys ? new PartitionedFile[0] : unit.right,
          ranks, false, false, true, job.slack, leanRight ? leanCols(1) : null,
          leanRight ? leanInt(1) : null);
      sweep = plain ? new CountSweep(this, job.perRow, job.kind == JoinKind.LEFT,
          job.perRow.covered != null, job.slack,
          curL, curR)
          : new UnitSweep(this, job.kind, job.count, job.perRow, curL, curR, null);
      return true;
    }
    return false;
  }

  /** A per-row count of the hulls' overlaps alone (and their covered points): no sums, no residual. */
  private boolean plainCount() {
    return job.perRow != null && !job.count && residual == null && job.perRow.sums.isEmpty()
        && (job.kind == JoinKind.INNER || job.kind == JoinKind.LEFT);
  }

  private int[] leanCols(int side) {
    return fast == null ? new int[0] : fast.columns(side);
  }

  private boolean[] leanInt(int side) {
    return fast == null ? new boolean[0] : fast.columnsAreInt(side);
  }

  private void finishUnit() {
    if (curL != null) job.rowsRead.add(curL.rowsRead + curR.rowsRead);
    curL = null;
    curR = null;
    sweep = null;
  }

  /** The first pass over the unit broke: sweep it again from sorted copies. */
  private void failover(Disorder d) {
    failovers++;
    Unit unit = units[u];
    Map<Object, Integer> ranks = Units.ranks(unit.keys);
    boolean keepNull = job.kind == JoinKind.LEFT || job.kind == JoinKind.ANTI;
    Sweep first = sweep;
    job.rowsRead.add(curL.rowsRead + curR.rowsRead);
    try {
      FileStream l = new FileStream(job.left, unit.left, ranks, unit.nullKeys, keepNull, false,
          0);
      if (unit.range != null) l.withRange(unit.range);
      FileStream r = new FileStream(job.right, unit.nullKeys ? new PartitionedFile[0]
          : unit.right, ranks, false, false, false, 0);
      RowStream sl = new SortedStream(l, job.left);
      RowStream sr = new SortedStream(r, job.right);
      job.rowsRead.add(l.rowsRead + r.rowsRead);
      curL = null;
      curR = null;
      sweep = new UnitSweep(this, job.kind, job.count, job.perRow, sl, sr, first.prefix(d.detail));
    } catch (IOException e) {
      throw new RuntimeException(e);
    }
  }

  @Override
  protected boolean advance() {
    while (true) {
      if (sweep == null && !nextUnit()) {
        if (!flushed) flush();
        if (job.count && !countEmitted) {
          countEmitted = true;
          GenericInternalRow g = new GenericInternalRow(1);
          g.setLong(0, count);
          out = UnsafeProjection.create(new DataType[] {LongType$.MODULE$}).apply(g);
          return true;
        }
        return false;
      }
      try {
        if (sweep.advance()) return true;
      } catch (Disorder d) {
        failover(d);
        continue;
      }
      finishUnit();
    }
  }

  @Override
  public void counted() {
    count++;
  }

  @Override
  protected void flush() {
    flushed = true;
    if (job.count) outRows = 1; // a count returns its one row
    super.flush();
    job.numFailover.add(failovers);
    failovers = 0;
  }

}
