package io.giql.spark.compat;

import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry$;

/**
 * The identifier a built-in function is registered under. From Spark 4.2 the function registry
 * takes only three-part names ({@code system.builtin.name}); an extension's injected functions
 * are qualified so by Spark itself, a function registered into a running session must be so by
 * its caller.
 */
public final class FunctionIds {
  private FunctionIds() {}

  public static FunctionIdentifier builtin(String name) {
    return FunctionRegistry$.MODULE$.builtinFunctionIdentifier(name);
  }
}
