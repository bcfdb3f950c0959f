package io.giql.spark.exec;

import org.apache.spark.sql.execution.SparkPlan;

import io.giql.spark.compat.Scala;

import scala.collection.immutable.Seq;

/** An operator over one child. */
public abstract class UnaryExec extends ExecNode {
  private static final long serialVersionUID = 1L;

  protected final SparkPlan child;

  protected UnaryExec(SparkPlan child) {
    this.child = child;
  }

  public SparkPlan child() {
    return child;
  }

  @Override
  public Seq<SparkPlan> children() {
    return Scala.seqOf(child);
  }
}
