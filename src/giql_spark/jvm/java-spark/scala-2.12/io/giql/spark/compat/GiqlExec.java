package io.giql.spark.compat;

import java.util.List;

import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.execution.SparkPlan;

import scala.collection.JavaConverters;

/**
 * The base of giql-spark's physical operators: what a {@code SparkPlan} must override with a
 * Scala collection type in its signature, which Java cannot write once for both Scala lines.
 * Scala 2.12 (Spark 3.5): {@code Seq} is {@code scala.collection.Seq}, {@code IndexedSeq} is {@code scala.collection.IndexedSeq}.
 * The operators implement the Java-typed methods below instead.
 */
public abstract class GiqlExec extends SparkPlan {
  private static final long serialVersionUID = 1L;

  /** This operator with new children, in the order of {@code children()}. */
  protected abstract SparkPlan withChildren(List<SparkPlan> children);

  /** The sort order each child must have; null for none (Spark's default). */
  protected List<List<SortOrder>> childOrdering() {
    return null;
  }

  @Override
  public final SparkPlan withNewChildrenInternal(scala.collection.IndexedSeq<SparkPlan> c) {
    return withChildren(JavaConverters.seqAsJavaList(c));
  }

  @Override
  public final scala.collection.Seq<scala.collection.Seq<SortOrder>> requiredChildOrdering() {
    List<List<SortOrder>> o = childOrdering();
    if (o == null) return super.requiredChildOrdering();
    java.util.List<scala.collection.Seq<SortOrder>> out = new java.util.ArrayList<>();
    for (List<SortOrder> l : o) out.add(JavaConverters.asScalaBuffer(l).toList());
    return JavaConverters.asScalaBuffer(out).toList();
  }
}
