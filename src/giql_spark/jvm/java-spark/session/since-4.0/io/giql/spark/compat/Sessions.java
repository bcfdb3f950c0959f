package io.giql.spark.compat;

import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.StringType;

/** The session class with a session state (Spark 4's classic session, the one with a session state), and string equality. */
public final class Sessions {
  private Sessions() {}

  public static SparkSession classic(Object session) {
    return (SparkSession) session;
  }

  /** Whether equal strings of this type have equal bytes (so a sort by bytes groups them). */
  public static boolean binaryEquality(StringType t) {
    return t.supportsBinaryEquality();
  }
}
