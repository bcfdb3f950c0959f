/**
 * Column-level helpers: reading keys and longs off column vectors, scan filters, residuals
 * evaluated without rows, attribute binding and conjuncts.
 */
package io.giql.spark.columns;
