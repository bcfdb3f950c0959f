/**
 * What differs between Scala and Spark lines, and the Scala collection helpers the common
 * sources use.
 *
 * <p>{@code GiqlExec} and {@code GiqlExpression} are written once for Scala 2.12 and 2.13. The
 * classes {@code Sessions}, {@code HadoopConf}, {@code Partitions}, {@code Distributions} and
 * {@code UserErrors}
 * have one small copy per form of the Spark API they wrap, under {@code java-spark/}; the build
 * compiles the copies the installed Spark line needs
 * ({@code giql_spark.spark_version.JVM_FORMS}).
 */
package io.giql.spark.compat;
