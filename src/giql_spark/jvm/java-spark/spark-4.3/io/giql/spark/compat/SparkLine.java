package io.giql.spark.compat;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.physical.ClusteredDistribution;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.types.StringType;

import scala.Function2;
import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.reflect.ClassTag;

/**
 * What differs between the Spark lines giql-spark supports, for Spark 4.3.
 *
 * <p>Each supported line has a copy of this class under {@code java-spark/spark-<line>/}; the
 * build compiles the common sources with the copy (and the Scala-line folder) of the installed
 * Spark. Every copy has the same methods, so the common sources call them without knowing the
 * line. A difference lives here when it is a changed signature (javac must see the right one);
 * the copies are small, so each can be read against its line's Spark sources.
 */
public final class SparkLine {
  private SparkLine() {}

  /** The Spark line these sources were written for. */
  public static final String LINE = "4.3";

  /** {@code rdd.mapPartitionsWithIndexInternal}: a task per partition, without closure cleaning. Spark 4.2 added a fourth flag (SPARK-55385), left at its default. */
  public static <T, U> RDD<U> mapPartitionsWithIndex(RDD<T> rdd,
      Function2<Object, Iterator<T>, Iterator<U>> f, boolean preservesPartitioning,
      boolean isOrderSensitive, ClassTag<U> tag) {
    return rdd.mapPartitionsWithIndexInternal(f, preservesPartitioning, isOrderSensitive,
        rdd.mapPartitionsWithIndexInternal$default$4(), tag);
  }

  /** Rows clustered by {@code clustering} (not necessarily all of it), any partition count. Spark 4.3 added a fourth argument, left at its default. */
  public static Distribution clustered(Seq<Expression> clustering) {
    return new ClusteredDistribution(clustering, false, Option.empty(),
        ClusteredDistribution.$lessinit$greater$default$4());
  }

  /** The Hadoop configuration a file relation's reader uses.  */
  public static Configuration hadoopConf(HadoopFsRelation rel) {
    return rel.getHadoopConf(rel.sparkSession(), rel.options());
  }

  /** Whether equal strings of this type have equal bytes (so a sort by bytes groups them). */
  public static boolean binaryEquality(StringType t) {
    return t.supportsBinaryEquality();
  }

  /** The function registry of a session (the classic one on Spark 4). */
  public static FunctionRegistry functionRegistry(Object session) {
    return ((org.apache.spark.sql.classic.SparkSession) session).sessionState().functionRegistry();
  }

  /** {@code spark.experimental()} of a session (the classic one on Spark 4). */
  public static org.apache.spark.sql.ExperimentalMethods experimental(Object session) {
    return ((org.apache.spark.sql.classic.SparkSession) session).experimental();
  }
}
