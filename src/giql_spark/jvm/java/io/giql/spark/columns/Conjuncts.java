package io.giql.spark.columns;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Expression;

/** The conjuncts of a condition: {@code a AND (b AND c)} is [a, b, c]. */
public final class Conjuncts {
  private Conjuncts() {}

  public static List<Expression> of(Expression e) {
    List<Expression> out = new ArrayList<>();
    add(e, out);
    return out;
  }

  private static void add(Expression e, List<Expression> out) {
    if (e instanceof And) {
      add(((And) e).left(), out);
      add(((And) e).right(), out);
    } else {
      out.add(e);
    }
  }
}
