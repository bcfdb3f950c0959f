package io.giql.spark.columns;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.Predicate;

import scala.collection.immutable.Seq;

/**
 * A join's residual condition in one task: the {@link FastResidual} when it applies, else (or
 * when that cannot decide) Spark's generated predicate over the joined row.
 */
public final class Residual {
  private final BasePredicate pred;
  private final FastResidual fast;

  private Residual(BasePredicate pred, FastResidual fast) {
    this.pred = pred;
    this.fast = fast;
  }

  /**
   * The residual over {@code joinedInput} (left's attributes then right's), or null when there is
   * none ({@code residual} null).
   */
  public static Residual of(Expression residual, Seq<Attribute> joinedInput, Seq<Attribute> left,
      Seq<Attribute> right, int partition) {
    if (residual == null) return null;
    BasePredicate p = Predicate.create(residual, joinedInput);
    p.initialize(partition);
    return new Residual(p, FastResidual.compile(residual, left, right));
  }

  /** The fast form, or null. */
  public FastResidual fast() {
    return fast;
  }

  /** Whether it holds for the pair; {@code joined} is set to it when the predicate is asked. */
  public boolean holds(InternalRow left, InternalRow right, JoinedRow joined) {
    if (fast != null) {
      int v = fast.eval(left, right);
      if (v != FastResidual.UNKNOWN) return v == FastResidual.TRUE;
    }
    return pred.eval(joined.apply(left, right));
  }
}
