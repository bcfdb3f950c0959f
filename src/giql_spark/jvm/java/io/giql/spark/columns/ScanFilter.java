package io.giql.spark.columns;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.Predicate;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import io.giql.spark.compat.Scala;

/**
 * A side's scan filter, with its {@code IsNotNull(column)} conjuncts checked on the column vectors.
 *
 * <p>Why: Spark adds {@code isnotnull} of the join columns to every inner join side, and its
 * generated predicate reads each column's value before testing the null bit; for a
 * dictionary-encoded string column that decodes (copies) the string on every row. Checking the
 * null bits directly costs a load each, and only what is left goes through the predicate.
 */
public final class ScanFilter {
  private final int[] notNull;           // scan columns that must not be NULL
  private final BasePredicate rest;      // the other conjuncts, or null
  private final BatchChecks checks;      // rest when it is only checks tested a batch at a time, or null
  private ColumnarBatch batch;

  private ScanFilter(int[] notNull, BasePredicate rest, BatchChecks checks) {
    this.notNull = notNull;
    this.rest = rest;
    this.checks = checks;
  }

  /** The filter of bound {@code e} (over the scan row), or null for no filter. */
  public static ScanFilter of(Expression e) {
    if (e == null) return null;
    List<Expression> conj = Conjuncts.of(e);
    List<Integer> cols = new ArrayList<>();
    List<Expression> others = new ArrayList<>();
    Expression rest = null;
    for (Expression c : conj) {
      if (c instanceof IsNotNull && ((IsNotNull) c).child() instanceof BoundReference) {
        cols.add(((BoundReference) ((IsNotNull) c).child()).ordinal());
      } else {
        others.add(c);
        rest = rest == null ? c : new And(rest, c);
      }
    }
    BasePredicate p = null;
    if (rest != null) {
      p = Predicate.create(rest, Scala.seqOf());
      p.initialize(TaskContext.getPartitionId());
    }
    int[] nn = new int[cols.size()];
    for (int i = 0; i < nn.length; i++) nn[i] = cols.get(i);
    return new ScanFilter(nn, p, others.isEmpty() ? null : BatchChecks.of(others));
  }


  /** The rows that follow come from {@code b} (null: rows not from a batch). */
  public void batch(ColumnarBatch b) {
    batch = b;
    // a batch none of whose checked columns holds a NULL, and whose rows all pass the checks,
    // passes every row (the usual case): no null bit is loaded nor predicate run per row
    passes = false;
    if (b != null && (rest == null || checks != null)) {
      boolean nulls = false;
      for (int c : notNull) nulls |= b.column(c).hasNull();
      passes = !nulls && (rest == null || checks.allPass(b));
    }
  }

  private boolean passes;

  /** Whether {@code scan} passes; {@code row} is its index in the current batch, if any. */
  public boolean eval(InternalRow scan, int row) {
    if (batch != null) {
      if (passes) return true;
      for (int c : notNull) {
        if (batch.column(c).isNullAt(row)) return false;
      }
    } else {
      for (int c : notNull) {
        if (scan.isNullAt(c)) return false;
      }
    }
    return rest == null || rest.eval(scan);
  }
}
