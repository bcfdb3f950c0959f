/**
 * Planning: the {@code giql_band} marker, the strategy that replaces a marked join (and a count
 * over one) with giql-spark's operators, and the options a marker carries.
 */
package io.giql.spark.plan;
