package io.giql.spark.compat;

import org.apache.spark.sql.catalyst.FunctionIdentifier;

/** The identifier a built-in function is registered under: its bare name until Spark 4.1. */
public final class FunctionIds {
  private FunctionIds() {}

  public static FunctionIdentifier builtin(String name) {
    return FunctionIdentifier.apply(name);
  }
}
