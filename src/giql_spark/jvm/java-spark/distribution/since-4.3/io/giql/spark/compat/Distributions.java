package io.giql.spark.compat;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.physical.ClusteredDistribution;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;

import scala.Option;

/**
 * Rows clustered by some expressions (not necessarily all of them), any partition count.
 * Spark 4.3 added a fourth argument, left at its default.
 */
public final class Distributions {
  private Distributions() {}

  public static Distribution clustered(java.util.List<Expression> clustering) {
    return new ClusteredDistribution(Scala.seq(clustering), false, Option.empty(),
        ClusteredDistribution.$lessinit$greater$default$4());
  }
}
