package io.giql.spark.columns;

import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.CreateNamedStruct;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GetStructField;

/**
 * Expressions carried from a side's output to its scan, without what the carrying leaves in
 * them: aliases, and fields of a struct built in the same expression.
 *
 * <p>Why: giql's sides pack each table's columns into one struct, so a key or a bound arrives as
 * {@code named_struct('chrom', chrom, ...).chrom} or {@code least(named_struct(...).start, ...)}.
 * Spark's optimizer removes such pairs in a plan, but these expressions are past it, and
 * {@link KeyColumn} and {@link LongColumn} read only plain columns: a read of a side kept whole
 * built every row as a struct to read one field back (a first merge plan at 64 tasks read its
 * shared row groups that way, about 1 us a row).
 */
public final class Fields {
  private Fields() {}

  /** {@code e} with every alias removed and each field of a struct built in place replaced by its value. */
  public static Expression plain(Expression e) {
    return e.transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof Alias
            || x instanceof GetStructField && ((GetStructField) x).child() instanceof CreateNamedStruct;
      }

      @Override
      public Expression apply(Expression x) {
        if (x instanceof Alias) return ((Alias) x).child();
        GetStructField g = (GetStructField) x;
        return ((CreateNamedStruct) g.child()).valExprs().apply(g.ordinal());
      }
    });
  }
}
