/**
 * What differs between Scala and Spark lines (the {@code GiqlExec}, {@code GiqlExpression} and
 * {@code SparkLine} classes have one copy per line, under {@code java-spark/}), and the Scala
 * collection helpers the common sources use.
 */
package io.giql.spark.compat;
