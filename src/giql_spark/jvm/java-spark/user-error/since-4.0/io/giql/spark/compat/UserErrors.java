package io.giql.spark.compat;

import org.apache.spark.QueryContext;
import org.apache.spark.SparkRuntimeException;

/** An error the user must act on, thrown in a task. */
public final class UserErrors {
  private UserErrors() {}

  /**
   * Spark 4 hands an error with a user-facing condition to the caller as it is, where any other
   * task failure becomes "Job aborted due to stage failure" with the task's Java stack;
   * USER_RAISED_EXCEPTION is the condition of SQL's raise_error(), whose message is the text.
   */
  public static RuntimeException raised(String message) {
    return new SparkRuntimeException("USER_RAISED_EXCEPTION",
        Scala.map(java.util.Map.of("errorMessage", message)), null, new QueryContext[0], "");
  }
}
