package io.giql.spark.compat;

import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Expression;

/**
 * The base of giql-spark's catalyst expressions: the one override whose signature names a
 * Scala collection type, declared for both Scala lines (see {@link GiqlExec}).
 */
public abstract class GiqlExpression extends Expression {
  /** This expression with new children, in the order of {@code children()}. */
  protected abstract Expression withChildren(List<Expression> children);

  public final Expression withNewChildrenInternal(scala.collection.IndexedSeq<Expression> c) {
    return withChildren(Scala.list(c));
  }

  public final Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> c) {
    return withChildren(Scala.list(c));
  }
}
