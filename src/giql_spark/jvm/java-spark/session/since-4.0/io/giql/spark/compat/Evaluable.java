package io.giql.spark.compat;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

import org.apache.spark.sql.catalyst.expressions.CommonExpressionDef;
import org.apache.spark.sql.catalyst.expressions.CommonExpressionId;
import org.apache.spark.sql.catalyst.expressions.CommonExpressionRef;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.With;

import scala.runtime.AbstractPartialFunction;

/**
 * An analysed expression made evaluable on its own, outside a plan: Spark 4 writes BETWEEN and
 * the like as {@code With} (a common subexpression the optimizer turns into a projection);
 * here each reference is replaced by the expression it names.
 */
public final class Evaluable {
  private Evaluable() {}

  public static Expression of(Expression e) {
    return e.transformUp(new Inline());
  }

  private static final class Inline extends AbstractPartialFunction<Expression, Expression>
      implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean isDefinedAt(Expression x) {
      return x instanceof With;
    }

    @Override
    public Expression apply(Expression x) {
      With w = (With) x;
      Map<CommonExpressionId, Expression> defs = new HashMap<>();
      for (CommonExpressionDef d : Scala.list(w.defs())) defs.put(d.id(), d.child());
      return w.child().transformUp(new AbstractPartialFunction<Expression, Expression>() {
        @Override
        public boolean isDefinedAt(Expression y) {
          return y instanceof CommonExpressionRef && defs.containsKey(((CommonExpressionRef) y).id());
        }

        @Override
        public Expression apply(Expression y) {
          return defs.get(((CommonExpressionRef) y).id());
        }
      });
    }
  }
}
