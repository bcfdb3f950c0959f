/**
 * The broadcast interval index (build, broadcast mode, queries) and per-left-row counts.
 */
package io.giql.spark.index;
