package io.giql.spark.exec;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;

import io.giql.spark.compat.Scala;

import scala.Function1;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;

/**
 * One job over every partition of an RDD, each partition's iterator made into one value, the
 * values back on the driver in partition order: {@code rdd.mapPartitions(f).collect()} without
 * the closure cleaning {@code RDD.collect} does.
 *
 * <p>{@code collect} hands Spark two Scala lambdas of its own, and Spark's closure cleaner reads
 * the class file of each lambda's enclosing class ({@code RDD}, {@code SparkContext}) from its
 * jar and parses it with ASM to look for return statements, on every query. A plain function
 * object is not a closure to the cleaner, which returns at once. On the merge count with 64
 * tasks the driver's time from {@code collect} to the job's start fell from 26.8 and 31.4 ms to
 * 15.7 and 16.0 ms ({@code benchmarks/reports/DRIVER-PHASES-1M.md} at commit a8425f9).
 */
public final class Jobs {
  private Jobs() {}

  /** {@code f} of each partition of {@code rdd}, in partition order. */
  public static <T, U> List<U> each(RDD<T> rdd, Function1<Iterator<T>, U> f, Class<U> type) {
    int n = rdd.getNumPartitions();
    List<Object> parts = new ArrayList<>(n);
    for (int i = 0; i < n; i++) parts.add(i);
    Object out = rdd.sparkContext().runJob(rdd, new OfPartition<>(f), Scala.seq(parts),
        Scala.tag(type));
    List<U> values = new ArrayList<>(n);
    for (Object v : (Object[]) out) values.add(type.cast(v));
    return values;
  }

  /** The one value of a partition that holds one (a partition's marks). */
  public static final class Only<U> extends AbstractFunction1<Iterator<U>, U> implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public U apply(Iterator<U> values) {
      return values.next();
    }
  }

  private static final class OfPartition<T, U> extends AbstractFunction2<TaskContext, Iterator<T>, U>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    private final Function1<Iterator<T>, U> f;

    OfPartition(Function1<Iterator<T>, U> f) {
      this.f = f;
    }

    @Override
    public U apply(TaskContext context, Iterator<T> rows) {
      return f.apply(rows);
    }
  }
}
