package io.giql.spark.compat;

import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Expression;

import scala.collection.JavaConverters;

/**
 * The base of giql-spark's catalyst expressions, for the one override whose signature names a
 * Scala collection type. Scala 2.13 (Spark 4): {@code Seq} is {@code scala.collection.immutable.Seq}, {@code IndexedSeq} is {@code scala.collection.immutable.IndexedSeq}.
 */
public abstract class GiqlExpression extends Expression {
  /** This expression with new children, in the order of {@code children()}. */
  protected abstract Expression withChildren(List<Expression> children);

  @Override
  public final Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> c) {
    return withChildren(JavaConverters.seqAsJavaList(c));
  }
}
