package io.giql.spark.compat;

import org.apache.spark.sql.ExperimentalMethods;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.types.StringType;

/** What a session and its strings are, on Spark 3.5: one session class, no collations. */
public final class Sessions {
  private Sessions() {}

  public static FunctionRegistry functionRegistry(Object session) {
    return ((SparkSession) session).sessionState().functionRegistry();
  }

  public static ExperimentalMethods experimental(Object session) {
    return ((SparkSession) session).experimental();
  }

  /** Whether equal strings of this type have equal bytes: always, before collations (Spark 4). */
  public static boolean binaryEquality(StringType t) {
    return true;
  }
}
