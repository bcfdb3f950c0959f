package io.giql.spark.compat;

import java.io.Serializable;

import scala.collection.Iterator;
import scala.runtime.AbstractFunction2;

/**
 * A task's work on one partition, as a serializable Java lambda: {@link #scala} makes it the
 * Scala function {@link Partitions#mapWithIndex} takes, so an operator needs no class of its own
 * per kind of task.
 */
@FunctionalInterface
public interface PartitionFn<T, U> extends Serializable {
  Iterator<U> apply(int partition, Iterator<T> rows);

  static <T, U> scala.Function2<Object, Iterator<T>, Iterator<U>> scala(PartitionFn<T, U> f) {
    return new Adapter<>(f);
  }

  /** The Scala function of a {@link PartitionFn}. */
  final class Adapter<T, U> extends AbstractFunction2<Object, Iterator<T>, Iterator<U>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    private final PartitionFn<T, U> f;

    Adapter(PartitionFn<T, U> f) {
      this.f = f;
    }

    @Override
    public Iterator<U> apply(Object partition, Iterator<T> rows) {
      return f.apply((Integer) partition, rows);
    }
  }
}
