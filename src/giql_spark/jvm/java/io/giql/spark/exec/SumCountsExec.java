package io.giql.spark.exec;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.SinglePartition$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.LongType$;

import io.giql.spark.compat.Scala;

import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

/**
 * {@code COUNT(*)} of an interval join counted inside the join operator: sums the operator's
 * per-task counts (one bigint per row) into the one row of the aggregate, as its output
 * attribute. The tasks' sums are collected to the driver by one job and added there: no
 * exchange, so a count is one Spark job, not a stage of tasks and then another of one task
 * (which cost a first query on small files about a tenth of its time).
 */
public final class SumCountsExec extends UnaryExec {
  private static final long serialVersionUID = 1L;

  private final Attribute result;

  public SumCountsExec(SparkPlan child, Attribute result) {
    super(child);
    this.result = result;
  }

  @Override
  public Seq<Attribute> output() {
    return Scala.seqOf(result);
  }

  @Override
  protected SparkPlan withChildren(List<SparkPlan> c) {
    return new SumCountsExec(c.get(0), result);
  }

  /** Its output is made here, not read from the child (else EXPLAIN marks it missing). */
  @Override
  public org.apache.spark.sql.catalyst.expressions.AttributeSet producedAttributes() {
    return outputSet();
  }

  @Override
  public Partitioning outputPartitioning() {
    return SinglePartition$.MODULE$;
  }

  @Override
  protected Object[] fields() {
    return new Object[] {child, result};
  }

  @Override
  public String nodeName() {
    return "SumIntervalJoinCounts";
  }

  /** The total of the child's counts, by one job over the child's partitions. */
  private InternalRow total() {
    long total = 0;
    for (long c : Jobs.each(child.execute(), new Sum(), Long.class)) total += c;
    return row(total);
  }

  /** One bigint as an UnsafeRow of its own. */
  static InternalRow row(long value) {
    GenericInternalRow g = new GenericInternalRow(1);
    g.setLong(0, value);
    return UnsafeProjection.create(new DataType[] {LongType$.MODULE$}).apply(g).copy();
  }

  @Override
  public InternalRow[] executeCollect() {
    return new InternalRow[] {total()};
  }

  @Override
  public RDD<InternalRow> doExecute() {
    // the job runs here, when the plan is executed (as a broadcast's build side does)
    return sparkContext().parallelize(Scala.seqOf(total()), 1, Scala.tag(InternalRow.class));
  }

  /** A partition's counts added up. */
  static final class Sum extends AbstractFunction1<Iterator<InternalRow>, Long>
      implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public Long apply(Iterator<InternalRow> rows) {
      long total = 0;
      while (rows.hasNext()) total += rows.next().getLong(0);
      return total;
    }
  }
}
