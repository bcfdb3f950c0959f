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

  @SuppressWarnings("unchecked")
  static <T> ClassTag<T> tag(Class<?> cls) {
    return (ClassTag<T>) ClassTag$.MODULE$.apply(cls);
  }
}
