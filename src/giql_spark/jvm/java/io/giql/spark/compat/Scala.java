package io.giql.spark.compat;

import java.util.ArrayList;
import java.util.List;

import scala.collection.JavaConverters;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Small bridges between Java collections and the Scala ones Spark's API takes.
 *
 * <p>They compile against Scala 2.12 (Spark 3.5) and 2.13 (Spark 4): {@code JavaConverters}
 * is in both (2.13 deprecates it for {@code scala.jdk.javaapi}, which 2.12 lacks). What Spark
 * hands back is read as {@code scala.collection.Seq}, the common supertype of 2.12's
 * {@code Seq} and 2.13's ({@code immutable.Seq}); what goes to Spark is an immutable list,
 * which is a {@code Seq} on both.
 */
public final class Scala {
  private Scala() {}

  public static <T> Seq<T> seq(List<T> items) {
    return JavaConverters.asScalaBuffer(items).toList();
  }

  /** A Seq Spark handed back, as the immutable Seq Spark 4's API takes. */
  public static <T> Seq<T> imm(scala.collection.Seq<T> items) {
    return items instanceof Seq ? (Seq<T>) items : items.toList();
  }

  public static <K, V> scala.collection.immutable.Map<K, V> map(java.util.Map<K, V> m) {
    scala.collection.immutable.Map<K, V> out = scala.collection.immutable.Map$.MODULE$.empty();
    for (java.util.Map.Entry<K, V> e : m.entrySet()) out = out.updated(e.getKey(), e.getValue());
    return out;
  }

  public static <K, V> java.util.Map<K, V> javaMap(scala.collection.Map<K, V> m) {
    return JavaConverters.mapAsJavaMap(m);
  }

  public static <T> scala.collection.Iterator<T> iterator(java.util.Iterator<T> it) {
    return JavaConverters.asScalaIterator(it);
  }

  @SafeVarargs
  public static <T> Seq<T> seqOf(T... items) {
    return seq(List.of(items));
  }

  static <T> IndexedSeq<T> indexed(List<T> items) {
    return JavaConverters.asScalaBuffer(items).toIndexedSeq();
  }

  public static <T> List<T> list(scala.collection.Seq<T> items) {
    return new ArrayList<>(JavaConverters.seqAsJavaList(items));
  }

  public static <T> Seq<T> concat(scala.collection.Seq<T> a, scala.collection.Seq<T> b) {
    List<T> out = list(a);
    out.addAll(list(b));
    return seq(out);
  }

  @SuppressWarnings("unchecked")
  public static <T> ClassTag<T> tag(Class<?> cls) {
    return (ClassTag<T>) ClassTag$.MODULE$.apply(cls);
  }
}
