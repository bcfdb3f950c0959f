package io.giql.spark.compat;

/** An error the user must act on, thrown in a task. */
public final class UserErrors {
  private UserErrors() {}

  /**
   * What Spark 3.5's raise_error() throws. 3.5 has no USER_RAISED_EXCEPTION condition and
   * wraps every task failure in "Job aborted due to stage failure"; the message is the
   * innermost cause, which giql_spark.errors.spark_message gives as one line.
   */
  public static RuntimeException raised(String message) {
    return new RuntimeException(message);
  }
}
