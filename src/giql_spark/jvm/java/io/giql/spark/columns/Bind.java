package io.giql.spark.columns;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;

import io.giql.spark.compat.Scala;

import scala.collection.Seq;
import scala.runtime.AbstractPartialFunction;

/**
 * Binds attribute references to input ordinals, as Catalyst's BindReferences does (whose
 * AttributeSeq argument lives in a Scala package object that Java source cannot name).
 */
public final class Bind extends AbstractPartialFunction<Expression, Expression> implements Serializable {
  private static final long serialVersionUID = 1L;
  private final List<Attribute> input;

  private Bind(Seq<Attribute> input) {
    this.input = Scala.list(input);
  }

  public static Expression bind(Expression e, Seq<Attribute> input) {
    return e.transformUp(new Bind(input));
  }

  /** The data types of {@code attrs}, in order. */
  public static DataType[] types(Seq<Attribute> attrs) {
    DataType[] t = new DataType[attrs.size()];
    for (int i = 0; i < t.length; i++) t[i] = attrs.apply(i).dataType();
    return t;
  }

  private int ordinal(AttributeReference a) {
    for (int i = 0; i < input.size(); i++) {
      if (input.get(i).exprId().equals(a.exprId())) return i;
    }
    return -1;
  }

  @Override
  public boolean isDefinedAt(Expression x) {
    return x instanceof AttributeReference;
  }

  @Override
  public Expression apply(Expression x) {
    AttributeReference a = (AttributeReference) x;
    int i = ordinal(a);
    if (i < 0) {
      throw new IllegalStateException("giql: cannot bind " + a + " to " + input);
    }
    Attribute in = input.get(i);
    return new BoundReference(i, in.dataType(), in.nullable());
  }
}
