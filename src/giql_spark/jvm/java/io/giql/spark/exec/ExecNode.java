package io.giql.spark.exec;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;

import io.giql.spark.compat.GiqlExec;
import io.giql.spark.compat.Scala;

/**
 * What giql-spark's operators share as plan nodes: the Scala {@code Product} view Spark's tree
 * code copies, compares and prints (the constructor's arguments, in order, from
 * {@link #fields}), and the SQL metrics named by {@link #metricDescriptions}.
 */
public abstract class ExecNode extends GiqlExec {
  private static final long serialVersionUID = 1L;

  private transient scala.collection.immutable.Map<String, SQLMetric> metricMap;

  /** The constructor's arguments, in its order (an absent optional one as {@code None}). */
  protected abstract Object[] fields();

  /** The node's SQL metrics, name to description, in display order; none by default. */
  protected Map<String, String> metricDescriptions() {
    return Map.of();
  }

  /** The metrics of an interval join: its output rows and the hull-overlapping pairs it tried. */
  protected static Map<String, String> joinMetrics() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("numOutputRows", "number of output rows");
    m.put("numCandidates", "number of hull-overlapping pairs");
    return m;
  }

  @Override
  public final int productArity() {
    return fields().length;
  }

  @Override
  public final Object productElement(int n) {
    Object[] f = fields();
    if (n < 0 || n >= f.length) throw new IndexOutOfBoundsException(String.valueOf(n));
    return f[n];
  }

  @Override
  public final boolean canEqual(Object o) {
    return o != null && o.getClass() == getClass();
  }

  @Override
  public final scala.collection.immutable.Map<String, SQLMetric> metrics() {
    if (metricMap == null) {
      Map<String, SQLMetric> m = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : metricDescriptions().entrySet()) {
        m.put(e.getKey(), SQLMetrics.createMetric(sparkContext(), e.getValue()));
      }
      metricMap = Scala.map(m);
    }
    return metricMap;
  }
}
