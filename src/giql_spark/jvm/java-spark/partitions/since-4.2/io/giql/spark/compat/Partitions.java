package io.giql.spark.compat;

import org.apache.spark.rdd.RDD;

import scala.Function2;
import scala.collection.Iterator;
import scala.reflect.ClassTag;

/**
 * {@code rdd.mapPartitionsWithIndexInternal}: a task per partition, without closure cleaning.
 * Spark 4.2 added a fourth flag (SPARK-55385), left at its default.
 */
public final class Partitions {
  private Partitions() {}

  public static <T, U> RDD<U> mapWithIndex(RDD<T> rdd, Function2<Object, Iterator<T>, Iterator<U>> f,
      boolean preservesPartitioning, boolean isOrderSensitive, ClassTag<U> tag) {
    return rdd.mapPartitionsWithIndexInternal(f, preservesPartitioning, isOrderSensitive,
        rdd.mapPartitionsWithIndexInternal$default$4(), tag);
  }
}
