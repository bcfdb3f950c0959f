/**
 * The probe of an interval index by streamed rows, shared by the broadcast join (one index for
 * every task) and the merge join's k-nearest units (one index per unit): pairs, semi, anti, mark,
 * per-row counts and grouped counts, with the residual read on the index's columns where it can.
 */
package io.giql.spark.join.probe;
