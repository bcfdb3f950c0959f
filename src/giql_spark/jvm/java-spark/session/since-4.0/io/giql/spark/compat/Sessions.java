package io.giql.spark.compat;

import org.apache.spark.sql.ExperimentalMethods;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.StringType;

/** What a session and its strings are, on Spark 4: the classic session class, collations. */
public final class Sessions {
  private Sessions() {}

  public static FunctionRegistry functionRegistry(Object session) {
    return ((SparkSession) session).sessionState().functionRegistry();
  }

  public static ExperimentalMethods experimental(Object session) {
    return ((SparkSession) session).experimental();
  }

  /** Whether equal strings of this type have equal bytes (so a sort by bytes groups them). */
  public static boolean binaryEquality(StringType t) {
    return t.supportsBinaryEquality();
  }
}
