package io.giql.spark;

import java.util.ArrayList;
import java.util.List;

import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/** Small bridges between Java collections and the Scala ones Spark's API takes. */
final class Scala {
  private Scala() {}

  static <T> Seq<T> seq(List<T> items) {
    return CollectionConverters.asScala(items).toSeq();
  }

  @SafeVarargs
  static <T> Seq<T> seqOf(T... items) {
    return seq(List.of(items));
  }

  static <T> IndexedSeq<T> indexed(List<T> items) {
    return CollectionConverters.asScala(items).toIndexedSeq();
  }

  static <T> List<T> list(scala.collection.Seq<T> items) {
    return new ArrayList<>(CollectionConverters.asJava(items));
  }

  static <T> Seq<T> concat(Seq<T> a, Seq<T> b) {
    List<T> out = list(a);
    out.addAll(list(b));
    return seq(out);
  }

  /**
   * An error the user must act on, thrown in a task. Spark hands an error with a user-facing
   * error condition to the caller as it is, where any other task failure becomes "Job aborted due
   * to stage failure" with the task's Java stack in its message; USER_RAISED_EXCEPTION is the
   * condition of SQL's raise_error(), whose message is the text alone.
   */
  static RuntimeException userError(String message) {
    return new org.apache.spark.SparkRuntimeException(
        "USER_RAISED_EXCEPTION",
        scala.collection.immutable.Map$.MODULE$.from(
            CollectionConverters.asScala(java.util.Map.of("errorMessage", message))),
        null, new org.apache.spark.QueryContext[0], "");
  }

  @SuppressWarnings("unchecked")
  static <T> ClassTag<T> tag(Class<?> cls) {
    return (ClassTag<T>) ClassTag$.MODULE$.apply(cls);
  }
}
