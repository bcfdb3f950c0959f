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
 * What differs between the Spark lines giql-spark supports, for Spark 3.5.
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
  public static final String LINE = "3.5";

  /** {@code rdd.mapPartitionsWithIndexInternal}: a task per partition, without closure cleaning. */
  public static <T, U> RDD<U> mapPartitionsWithIndex(RDD<T> rdd,
      Function2<Object, Iterator<T>, Iterator<U>> f, boolean preservesPartitioning,
      boolean isOrderSensitive, ClassTag<U> tag) {
    return rdd.mapPartitionsWithIndexInternal(f, preservesPartitioning, isOrderSensitive, tag);
  }

  /** Rows clustered by {@code clustering} (not necessarily all of it), any partition count. */
  public static Distribution clustered(Seq<Expression> clustering) {
    return new ClusteredDistribution(clustering, false, Option.empty());
  }

  /** The Hadoop configuration a file relation's reader uses. Before 4.1 a relation has no getHadoopConf; this is what 4.1's does. */
  public static Configuration hadoopConf(HadoopFsRelation rel) {
    return rel.sparkSession().sessionState().newHadoopConfWithOptions(rel.options());
  }

  /** Whether equal strings of this type have equal bytes (so a sort by bytes groups them). */
  public static boolean binaryEquality(StringType t) {
    return true; // no collations before Spark 4: every string compares by its bytes
  }

  /** The function registry of a session (the classic one on Spark 4). */
  public static FunctionRegistry functionRegistry(Object session) {
    return ((org.apache.spark.sql.SparkSession) session).sessionState().functionRegistry();
  }

  /** {@code spark.experimental()} of a session (the classic one on Spark 4). */
  public static org.apache.spark.sql.ExperimentalMethods experimental(Object session) {
    return ((org.apache.spark.sql.SparkSession) session).experimental();
  }
}
