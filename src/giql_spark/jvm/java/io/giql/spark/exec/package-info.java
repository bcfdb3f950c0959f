/**
 * The physical operators: broadcast, sweep and merge interval joins, the sweep's tiling and the
 * count sum, over a shared base of plan-node plumbing.
 */
package io.giql.spark.exec;
