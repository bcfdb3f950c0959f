package io.giql.spark.compat;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StringType;

/** The session class with a session state (Spark 3.5 has one session class), and string equality. */
public final class Sessions {
  private Sessions() {}

  public static SparkSession classic(Object session) {
    return (SparkSession) session;
  }

  /** Whether equal strings of this type have equal bytes (so a sort by bytes groups them). */
  public static boolean binaryEquality(StringType t) {
    return true; // no collations before Spark 4
  }
}
