package io.giql.spark;

import java.io.Serializable;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.plans.physical.AllTuples$;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.SinglePartition$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.LongType$;

import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

/**
 * {@code COUNT(*)} of an interval join counted inside the join operator: sums the operator's
 * per-task counts (one bigint per row) into the one row of the aggregate, as its output
 * attribute. Requires all rows in one partition, so Spark moves the few count rows there.
 */
public final class SumCountsExec extends SparkPlan {
  private static final long serialVersionUID = 1L;

  private final SparkPlan child;
  private final Attribute result;

  public SumCountsExec(SparkPlan child, Attribute result) {
    this.child = child;
    this.result = result;
  }

  public SparkPlan child() {
    return child;
  }

  @Override
  public Seq<Attribute> output() {
    return Scala.seqOf(result);
  }

  @Override
  public Seq<SparkPlan> children() {
    return Scala.seqOf(child);
  }

  @Override
  public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> c) {
    return new SumCountsExec(c.apply(0), result);
  }

  /** Its output is made here, not read from the child (else EXPLAIN marks it missing). */
  @Override
  public org.apache.spark.sql.catalyst.expressions.AttributeSet producedAttributes() {
    return outputSet();
  }

  @Override
  public Seq<Distribution> requiredChildDistribution() {
    return Scala.seqOf(AllTuples$.MODULE$);
  }

  @Override
  public Partitioning outputPartitioning() {
    return SinglePartition$.MODULE$;
  }

  @Override
  public int productArity() {
    return 2;
  }

  @Override
  public Object productElement(int n) {
    switch (n) {
      case 0: return child;
      case 1: return result;
      default: throw new IndexOutOfBoundsException(String.valueOf(n));
    }
  }

  @Override
  public boolean canEqual(Object o) {
    return o instanceof SumCountsExec;
  }

  @Override
  public String nodeName() {
    return "SumIntervalJoinCounts";
  }

  @Override
  public RDD<InternalRow> doExecute() {
    return child.execute().mapPartitionsInternal(new Sum(), false, Scala.tag(InternalRow.class));
  }

  static final class Sum extends AbstractFunction1<Iterator<InternalRow>, Iterator<InternalRow>>
      implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<InternalRow> apply(Iterator<InternalRow> rows) {
      long total = 0;
      while (rows.hasNext()) total += rows.next().getLong(0);
      GenericInternalRow g = new GenericInternalRow(1);
      g.setLong(0, total);
      InternalRow one = UnsafeProjection.create(new DataType[] {LongType$.MODULE$}).apply(g);
      return new AbstractIterator<InternalRow>() {
        boolean done;

        @Override
        public boolean hasNext() {
          return !done;
        }

        @Override
        public InternalRow next() {
          done = true;
          return one;
        }
      };
    }
  }
}
