package io.giql.spark.compat;

import org.apache.spark.sql.catalyst.expressions.Expression;

/** An analysed expression made evaluable on its own: Spark 3.5's analyser leaves nothing to inline. */
public final class Evaluable {
  private Evaluable() {}

  public static Expression of(Expression e) {
    return e;
  }
}
