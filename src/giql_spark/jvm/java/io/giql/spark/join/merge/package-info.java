/**
 * The merge interval join of sorted Parquet inputs: the planner that reads footers and splits the
 * keys into units, and the per-task sweep over each unit's row groups.
 */
package io.giql.spark.join.merge;
