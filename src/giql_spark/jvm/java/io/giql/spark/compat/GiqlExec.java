package io.giql.spark.compat;

import java.util.List;

import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.execution.SparkPlan;

/**
 * The base of giql-spark's physical operators: the overrides whose signatures name a Scala
 * collection type, written once for both Scala lines. The operators implement the Java-typed
 * methods {@link #withChildren} and {@link #childOrdering} instead.
 *
 * <p>Scala 2.12 (Spark 3.5) names {@code scala.collection.IndexedSeq} and {@code Seq}; 2.13
 * (Spark 4) the {@code immutable} ones. An override must match its parameter's erasure, so
 * {@code withNewChildrenInternal} is declared for both (on each line one overrides, the other
 * is a plain overload). A return type may be raw: the raw {@code immutable.Seq} stands for
 * either line's nested {@code Seq} by unchecked conversion.
 */
public abstract class GiqlExec extends SparkPlan {
  private static final long serialVersionUID = 1L;

  /** This operator with new children, in the order of {@code children()}. */
  protected abstract SparkPlan withChildren(List<SparkPlan> children);

  /** The sort order each child must have; null for none (Spark's default). */
  protected List<List<SortOrder>> childOrdering() {
    return null;
  }

  public final SparkPlan withNewChildrenInternal(scala.collection.IndexedSeq<SparkPlan> c) {
    return withChildren(Scala.list(c));
  }

  public final SparkPlan withNewChildrenInternal(scala.collection.immutable.IndexedSeq<SparkPlan> c) {
    return withChildren(Scala.list(c));
  }

  @Override
  @SuppressWarnings({"rawtypes", "unchecked"})
  public final scala.collection.immutable.Seq requiredChildOrdering() {
    List<List<SortOrder>> o = childOrdering();
    if (o == null) return Scala.imm(super.requiredChildOrdering());
    List<scala.collection.immutable.Seq<SortOrder>> out = new java.util.ArrayList<>();
    for (List<SortOrder> l : o) out.add(Scala.seq(l));
    return Scala.seq(out);
  }
}
