package io.giql.spark;

import java.util.Map;

import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.QueryStageExec;
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec;
import org.apache.spark.sql.execution.metric.SQLMetric;

import io.giql.spark.compat.Scala;
import io.giql.spark.index.IntervalIndex;
import io.giql.spark.join.merge.MergePlanner;

/** The SQL metrics of an executed plan, one line per operator, for profiling from Python. */
public final class PlanMetrics {
  private PlanMetrics() {}

  /** How the last interval index built in this JVM spent its time. */
  public static String lastBuild() {
    return IntervalIndex.lastBuildReport;
  }

  /** Whether the last marked join planned got the merge join, and why not. */
  public static String lastMergeDecision() {
    return MergePlanner.lastDecision;
  }

  /** The last (up to 20) such decisions, oldest first, one a line. */
  public static String recentMergeDecisions() {
    return MergePlanner.recentDecisions();
  }

  /** Why {@code df}'s marked join does not plan as the merge join ("" when it does). */
  public static String mergeRefusal(org.apache.spark.sql.Dataset<?> df) {
    return MergePlanner.refusal(df);
  }

  public static String describe(SparkPlan plan) {
    StringBuilder sb = new StringBuilder();
    walk(plan, 0, sb);
    return sb.toString();
  }

  private static void walk(SparkPlan p, int depth, StringBuilder sb) {
    if (p instanceof AdaptiveSparkPlanExec) {
      walk(((AdaptiveSparkPlanExec) p).executedPlan(), depth, sb);
      return;
    }
    if (p instanceof QueryStageExec) {
      walk(((QueryStageExec) p).plan(), depth, sb);
      return;
    }
    sb.append("  ".repeat(depth)).append(p.nodeName());
    for (Map.Entry<String, SQLMetric> e :
        Scala.javaMap(p.metrics()).entrySet()) {
      SQLMetric m = e.getValue();
      long v = m.value();
      if (v <= 0) continue;
      String type = m.metricType();
      String shown;
      if ("timing".equals(type)) shown = v + " ms";
      else if ("nsTiming".equals(type)) shown = (v / 1_000_000) + " ms";
      else if ("size".equals(type)) shown = (v >> 20) + " MiB";
      else shown = String.valueOf(v);
      sb.append(" | ").append(e.getKey()).append('=').append(shown);
    }
    sb.append('\n');
    if (p instanceof ReusedExchangeExec) return;
    for (SparkPlan c : Scala.list(p.children())) walk(c, depth + 1, sb);
  }
}
