/**
 * The shared base of giql-spark's physical operators: plan-node plumbing ({@code ExecNode},
 * {@code UnaryExec}), the join iterator every join's tasks return, driver-side jobs, and the sum
 * of per-task counts. Every join package uses it; it uses none of them.
 */
package io.giql.spark.exec;
